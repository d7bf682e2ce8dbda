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
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.e2e.cli import run_main_in_process, write_jsonl


def _two_systems(folder: Path, baseline: str = "base", candidate: str = "cand", better: int = 1) -> tuple[Path, Path]:
    """Two systems answering the same 12 inputs, the candidate rated ``better`` higher by the judge (mod 5)."""
    rows, verdicts = [], []
    for k in range(12):
        for name, shift in ((baseline, 0), (candidate, better)):
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


# ---- 6. too few bootstrap resamples for the level ------------------------------------------------------------------
@pytest.mark.parametrize("resamples", ["1", "2", "5", "38"])
def test_compare_refuses_too_few_resamples_for_the_level(resamples, tmp_path, capsys):
    """``--bootstrap 1`` failed a candidate equal to the baseline (``+0 [-0.1, -0.1]``, exit 1) and 2-5
    resamples gave intervals 5 times too narrow. A 95% percentile interval needs a resample beyond each
    bound, (B + 1) x 2.5% >= 1: at least 39; the judge-only gate refuses fewer in one line."""
    items, judgments = _two_systems(tmp_path, candidate="same", better=0)
    code, err = run_main_in_process(capsys, "compare", "--data", items, "--judgments", judgments, "--baseline", "base",
                                    "--candidate", "same", "--bootstrap", resamples)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{resamples} resample(s) (--bootstrap, n_resamples): a 95% percentile interval needs at least 39" in err


def test_the_level_sets_the_fewest_resamples(tmp_path, capsys):
    """--alpha 0.01 (99%) needs 199; 39 pass at 95%; evaluate's --bootstrap follows the same rule (0: none)."""
    items, judgments = _two_systems(tmp_path)
    compare = ["compare", "--data", items, "--judgments", judgments, "--baseline", "base", "--candidate", "cand"]
    code, err = run_main_in_process(capsys, *compare, "--bootstrap", "100", "--alpha", "0.01")
    assert code == 2 and "a 99% percentile interval needs at least 199" in err, err
    assert run_main_in_process(capsys, *compare, "--bootstrap", "39")[0] == 0
    evaluate = ["evaluate", "--data", items, "--judgments", judgments]
    code, err = run_main_in_process(capsys, *evaluate, "--bootstrap", "5")
    assert code == 2 and "5 resample(s) (--bootstrap): a 95% percentile interval needs at least 39" in err, err
    assert run_main_in_process(capsys, *evaluate, "--bootstrap", "0")[0] == 0


@pytest.mark.parametrize("entry", ["compare_systems", "assert_not_worse"])
def test_the_python_gate_refuses_too_few_resamples_alike(entry, tmp_path):
    from judgelab.errors import ConfigError
    from judgelab.evaluate.two_systems import compare_systems
    from judgelab.testing import assert_not_worse

    items, judgments = _two_systems(tmp_path, candidate="same", better=0)
    gate = {"compare_systems": compare_systems, "assert_not_worse": assert_not_worse}[entry]
    if entry == "compare_systems":
        from judgelab.data.io import load_items, load_judgments

        items, judgments = load_items(items), load_judgments(judgments)
    with pytest.raises(ConfigError, match=r"1 resample\(s\) \(bootstrap, n_resamples\): a 95% percentile interval"):
        gate(items, judgments, baseline="base", candidate="same", n_resamples=1)


# ---- 7. system names that inject Markdown or HTML into the job summary ---------------------------------------------
INJECTING = {  # what a pull request could name its system, and what it tried
    "cr": "evil\r# All quality gates passed\r![ok](http://evil.example/pixel.png)",
    "pipe": "a | b | c",
    "link": "[click here](http://evil.example/)",
    "image": "![](http://evil.example/pixel.png)",
    "html": "<details><summary>fine</summary><img src=x onerror=alert(1)></details>",
    "backtick": "x` <b>bold</b> `y",
    "newline": "one\n\n# Two",
}
ALLOWED_TAGS = {"h3", "p", "table", "thead", "tbody", "tr", "th", "td", "blockquote"}


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def _summary_shape(html: str) -> tuple[list[str], list[list[str]]]:
    """The headings' texts and the table's body rows (cell texts) of a rendered summary; every tag checked."""
    from html.parser import HTMLParser

    class Shape(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.headings, self.rows, self.tags, self._text, self._in = [], [], set(), [], None

        def handle_starttag(self, tag, attrs):
            self.tags.add(tag)
            if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "td"):
                self._in, self._text = tag, []
            if tag == "tr":
                self.rows.append([])

        def handle_endtag(self, tag):
            if tag == self._in == "td":
                self.rows[-1].append("".join(self._text))
            elif tag == self._in:
                self.headings.append("".join(self._text))
            self._in = None if tag == self._in else self._in

        def handle_data(self, data):
            self._text.append(data)

    shape = Shape()
    shape.feed(html)
    assert shape.tags <= ALLOWED_TAGS, shape.tags - ALLOWED_TAGS
    return shape.headings, [row for row in shape.rows if row]


@pytest.mark.parametrize("case", INJECTING)
def test_a_system_name_renders_as_text_in_the_job_summary(case, tmp_path, capsys):
    """A carriage return in a name ended the heading and the table row (a CommonMark renderer showed an
    ``<h1>`` "All quality gates passed" and an ``<img>`` to another host); links, images and ``<details>``
    in cells; a backtick ended the heading's code span. Names are escaped (every ASCII punctuation mark
    behind a backslash, control characters as visible escapes): one heading, one table, text only."""
    from judgelab.printable import printable

    name = INJECTING[case]
    items, judgments = _two_systems(tmp_path, candidate=name)
    summary = tmp_path / "summary.md"
    code, err = run_main_in_process(capsys, "compare", "--data", items, "--judgments", judgments, "--baseline", "base",
                                    "--candidate", name, "--markdown", summary)
    assert code in (0, 1), err
    headings, rows = _summary_shape(_render(summary.read_text()))
    assert headings == [f"judgelab compare: {printable(name)} vs base"], headings
    assert len(rows) == 6 and all(len(row) == 2 for row in rows), rows


def _a_comparison():
    import tempfile

    from judgelab.data.io import load_items, load_judgments
    from judgelab.evaluate.two_systems import compare_systems

    with tempfile.TemporaryDirectory() as folder:
        items, judgments = _two_systems(Path(folder))
        return compare_systems(load_items(items), load_judgments(judgments), baseline="base", candidate="cand",
                               n_resamples=200)


COMPARISON = _a_comparison()
NAMES = st.text(st.sampled_from("ab \t\r\n\x00\x1b\x7f\x85|`*_~[]()<>!&#;:\\-+=.'\"/{}@$%^?,\u2028\uffff\U0001f600é"),
                min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(candidate=NAMES, baseline=NAMES)
def test_any_names_give_one_heading_and_one_table_of_text(candidate, baseline):
    from dataclasses import replace

    from judgelab.printable import printable

    shown = replace(COMPARISON, candidate=candidate, baseline=baseline, aspect=candidate,
                    pairing_reason=f"{candidate} and {baseline} answer the same inputs",
                    warnings=(f"{baseline}: a warning",))
    html = _render(shown.markdown())
    headings, rows = _summary_shape(html)
    expected = f"judgelab compare: {printable(candidate)} vs {printable(baseline)} ({printable(candidate)})"
    assert [" ".join(h.split()) for h in headings] == [" ".join(expected.split())], (headings, expected)
    assert len(rows) == 6 and all(len(row) == 2 for row in rows), rows


# ---- 10. JUnit XML from names with control characters ---------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(candidate=st.text(st.characters(exclude_categories=()), min_size=1, max_size=10))
def test_junit_xml_is_well_formed_whatever_the_names(candidate):
    """A control character or U+FFFF in a system name made JUnit XML that is not well formed (CI readers
    dropped it). Characters XML cannot hold are written as visible escapes; the file parses, as UTF-8."""
    from dataclasses import replace
    from xml.etree import ElementTree

    from judgelab.printable import printable

    xml = replace(COMPARISON, candidate=candidate).junit_xml()
    root = ElementTree.fromstring(xml.encode("utf-8"))
    case = root.find("testsuite/testcase")
    assert case.get("name") == f"{printable(candidate, keep=chr(9) + chr(10))} not worse than base (margin 0)"


# ---- 12. what the consoles print from data -------------------------------------------------------------------------
CLEAR = "\x1b[2J\x1b[HCLEARED"  # clears the screen and homes the cursor


def _cli(*args: object) -> tuple[int, str]:
    """The CLI in a separate process (rich decides its colours there); stdout and stderr together."""
    from tests.e2e.cli import run_cli

    done = run_cli(*args, env={"COLUMNS": "200"})
    return done.returncode, done.stdout + done.stderr


def test_a_path_is_printed_as_given_not_as_an_emoji(tmp_path):
    """``:thumbs_up:.jsonl: no such file`` was printed as "👍.jsonl: no such file"."""
    missing = tmp_path / ":thumbs_up:.jsonl"
    code, output = _cli("meta", "--data", missing, "--judgments", missing)
    assert code == 2 and f"{missing}: no such file" in output and "\N{THUMBS UP SIGN}" not in output, output


@pytest.mark.parametrize("name", [CLEAR, ":white_check_mark: PASS"], ids=["escape-sequence", "emoji"])
def test_system_names_print_as_text_in_evaluate_and_compare(name, tmp_path):
    """A system named ``\\x1b[2J\\x1b[HCLEARED`` cleared the screen from evaluate's table and compare's
    lines, and ``:white_check_mark: PASS`` printed as a check mark: names print as written, control
    characters as visible escapes (``\\x1b``)."""
    from judgelab.printable import printable

    items, judgments = _two_systems(tmp_path, candidate=name)
    for command in (["evaluate", "--data", items, "--judgments", judgments, "--bootstrap", "50"],
                    ["compare", "--data", items, "--judgments", judgments, "--baseline", "base", "--candidate", name,
                     "--bootstrap", "50"]):
        code, output = _cli(*command)
        assert code in (0, 1), output
        assert "\x1b" not in output and printable(name) in output, output  # no colours: not a terminal
        assert "\N{WHITE HEAVY CHECK MARK}" not in output


def _audited(folder: Path) -> tuple[Path, Path]:
    """Eight comparisons and a judge, named to clear the screen, that always says "a"."""
    items = write_jsonl(folder / "items.jsonl", [{"id": f"c{i}", "system_a": "x", "system_b": "y", "label": "ab"[i % 2],
                                                  "output_a": "a", "output_b": "b"} for i in range(8)])
    judgments = write_jsonl(folder / "judgments.jsonl", [{"item_id": f"c{i}", "label": "a", "judge": CLEAR}
                                                         for i in range(8)])
    return items, judgments


def test_a_judge_name_prints_as_text_in_audit(tmp_path):
    items, judgments = _audited(tmp_path)
    code, output = _cli("audit", "--data", items, "--judgments", judgments, "--bootstrap", "50")
    assert code == 0, output
    assert "\x1b" not in output and "\\x1b[2J\\x1b[HCLEARED" in output, output


def test_audit_refuses_too_few_resamples_too(tmp_path, capsys):
    items, judgments = _audited(tmp_path)
    code, err = run_main_in_process(capsys, "audit", "--data", items, "--judgments", judgments, "--bootstrap", "5")
    assert code == 2 and "5 resample(s) (--bootstrap): a 95% percentile interval needs at least 39" in err, err
