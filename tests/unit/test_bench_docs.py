"""bench.common.write_doc_section: rewriting a benchmark's section replaces it, whatever its heading level."""

from __future__ import annotations

import pytest
from bench.common import write_doc_section


@pytest.mark.parametrize("heading", ["## Speed (`bench/x.py`)", "### TREC runs (`--trec`)"])
def test_rewriting_a_section_keeps_one_heading_and_the_other_sections(tmp_path, heading):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Other\n<!-- other:start -->\nkept\n<!-- other:end -->\n", encoding="utf-8")
    write_doc_section("x", "first figures", doc, heading=heading)
    write_doc_section("x", "second figures", doc, heading=heading)
    text = doc.read_text(encoding="utf-8")
    assert text.count(heading) == 1 and "second figures" in text and "first figures" not in text
    assert "<!-- other:start -->\nkept\n<!-- other:end -->" in text


def test_make_bench_lists_each_benchmark_in_one_whole_sentence_without_issue_numbers():
    """`make bench` prints each benchmark's first docstring line: it must be the whole summary (the
    docstring's first paragraph, ending in a full stop), and a reader does not know the issue tracker."""
    import ast
    import re

    from bench.run_all import HERE, benchmarks

    listed = benchmarks()
    assert len(listed) > 20
    for name, line in listed.items():
        doc = ast.get_docstring(ast.parse((HERE / f"{name}.py").read_text(encoding="utf-8"))) or ""
        assert doc.split("\n\n")[0] == line, f"{name}: the summary runs past its first line"
        assert line.endswith("."), name
        assert not re.search(r"\bissue \d+", line, re.IGNORECASE), name
