"""What ``judgelab compare`` tells CI, and what the consoles show (issue 40, items 6, 7, 10, 12 and 17): too
few bootstrap resamples for the level, system names that inject Markdown or HTML into a job summary,
JUnit XML that is not well formed, emoji shortcodes and escape sequences from data on the terminal, and
a JUnit verdict written when the summary beside it could not be.

The real CLI runs in this process (``run_main_in_process``) or, where the terminal matters, in a
separate one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import run_main_in_process, write_jsonl


def _two_systems(folder: Path, baseline: str = "base", candidate: str = "cand") -> tuple[Path, Path]:
    """Two systems answering the same 12 inputs, the candidate rated a little higher by the judge."""
    rows, verdicts = [], []
    for k in range(12):
        for name, shift in ((baseline, 0), (candidate, 1)):
            item_id = f"{'b' if name == baseline else 'c'}{k}"
            rows.append({"id": item_id, "output": "x", "system_id": name, "group_id": f"g{k}"})
            verdicts.append({"item_id": item_id, "score": 1 + (k + shift) % 5})
    return write_jsonl(folder / "items.jsonl", rows), write_jsonl(folder / "judgments.jsonl", verdicts)


# ---- 17. the JUnit verdict and the summary: both or neither ---------------------------------------------------------
@pytest.mark.parametrize("unwritable", ["markdown", "junit", "markdown-late"])
def test_compare_writes_both_reports_or_neither(unwritable, tmp_path, capsys):
    """``--junit ok.xml --markdown UNWRITABLE`` wrote the JUnit verdict, then exited 2: the CI status and
    the job's summary disagreed. Now both outputs are checked before the work, and published together
    (the JUnit file staged, the summary appended, then the JUnit file moved in), so a failure on either,
    even one no check could foresee (``/proc``), leaves both as they were."""
    items, judgments = _two_systems(tmp_path)
    (tmp_path / "a-file").write_text("not a folder")
    bad = Path("/proc/self/summary.md") if unwritable == "markdown-late" else tmp_path / "a-file" / "report"
    junit, markdown = tmp_path / "ok.xml", tmp_path / "summary.md"
    markdown.write_text("earlier step\n")
    options = {"junit": ["--junit", bad if unwritable == "junit" else junit],
               "markdown": ["--markdown", bad if unwritable.startswith("markdown") else markdown]}
    code, err = run_main_in_process(capsys, "compare", "--data", items, "--judgments", judgments, "--baseline", "base",
                                    "--candidate", "cand", "--bootstrap", "200", *options["junit"],
                                    *options["markdown"])
    assert code == 2 and str(bad) in err and "cannot write" in err and len(err.strip().splitlines()) == 1, err
    assert not junit.exists() and markdown.read_text() == "earlier step\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "items.jsonl", "judgments.jsonl", "summary.md"]


def test_compare_writes_both_reports_when_it_can(tmp_path, capsys):
    items, judgments = _two_systems(tmp_path)
    junit, markdown = tmp_path / "ok.xml", tmp_path / "summary.md"
    markdown.write_text("earlier step\n")
    code, err = run_main_in_process(capsys, "compare", "--data", items, "--judgments", judgments, "--baseline", "base",
                                    "--candidate", "cand", "--bootstrap", "200", "--junit", junit,
                                    "--markdown", markdown)
    assert code == 0, err
    assert junit.read_text().startswith("<?xml") and "cand not worse than base" in junit.read_text()
    assert markdown.read_text().startswith("earlier step\n### judgelab compare")
    assert oct(junit.stat().st_mode & 0o777) == "0o600"
