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
    with pytest.raises(ConfigError, match=r"1 resample\(s\) \(--bootstrap, n_resamples\): a 95% percentile interval"):
        gate(items, judgments, baseline="base", candidate="same", n_resamples=1)
