"""Hand-edited files judgelab reads back (issue 40, items 13 and 15): a report folder's systems.json and a
sample (design) file. Each bad value is refused in one line naming the file, the line and the field
(exit 2), and nothing is written; what a correct file holds reads as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import run_main_in_process, write_jsonl


@pytest.fixture(scope="module")
def report_folder(tmp_path_factory) -> Path:
    """A report folder as ``evaluate --out`` writes it: two systems with labels (judge, human, corrected)."""
    import contextlib
    import io

    from judgelab.cli import main

    folder = tmp_path_factory.mktemp("report")
    rows = [{"id": f"i{k}", "output": "x", "system_id": f"s{k % 2}", "group_id": f"g{k // 2}",
             "scores": {"quality": 1 + (k * 3) % 5}} for k in range(24)]
    items = write_jsonl(folder / "items.jsonl", rows)
    judgments = write_jsonl(folder / "judgments.jsonl", [{"item_id": r["id"], "score": 1 + (k * 7) % 5}
                                                         for k, r in enumerate(rows)])
    import sys
    from unittest import mock

    argv = ["judgelab", "evaluate", "--data", str(items), "--judgments", str(judgments), "--human-ids", "all",
            "--bootstrap", "50", "--out", str(folder / "out")]
    with mock.patch.object(sys, "argv", argv), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.suppress(SystemExit):
        main()
    assert (folder / "out" / "systems.json").is_file()
    return folder / "out"


def _edited(folder: Path, tmp_path: Path, edit) -> Path:
    """A copy of ``folder`` whose systems.json ``edit`` changed (it takes the parsed file; or returns text)."""
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(folder, copy)
    data = json.loads((copy / "systems.json").read_text())
    edited = edit(data)
    (copy / "systems.json").write_text(edited if isinstance(edited, str) else json.dumps(edited, indent=2))
    (copy / "report.html").unlink()
    return copy


def _set(path: tuple, value):
    def edit(data):
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return data
    return edit


def _rename_estimator(data):
    data["estimators"]["judgee"] = data["estimators"].pop("judge")
    return data


EDITS = {  # what a hand edit did -> (the edit, the field the error must name)
    "unknown estimator": (_rename_estimator, "estimators.judgee"),
    "a string value": (_set(("estimators", "judge", "s0", "value"), "abc"), "estimators.judge.s0.value"),
    "systems a string": (_set(("systems",), "abc"), "systems"),
    "an interval of three": (_set(("estimators", "human", "s1", "ci"), [1, 2, 3]), "estimators.human.s1.ci"),
    "a system without figures": (_set(("systems",), ["s0", "s1", "s2"]), "estimators.judge"),
    "a pair of unknown systems": (_set(("pairs", "judge", 0, "a"), "nobody"), "pairs.judge.0.a"),
    "confidence a string": (_set(("options", "confidence"), "high"), "options.confidence"),
    "estimators a list": (_set(("estimators",), []), "estimators"),
}


@pytest.mark.parametrize("case", EDITS)
def test_report_names_the_field_of_a_hand_edited_systems_json(case, report_folder, tmp_path, capsys):
    """Unknown estimators, string values, ``"systems": "abc"``: internal errors (exit 1). Now systems.json is
    validated as it is read: one line with the file, the line and the field, and no report.html."""
    edit, field = EDITS[case]
    folder = _edited(report_folder, tmp_path, edit)
    code, err = run_main_in_process(capsys, "report", folder)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {folder / 'systems.json'}:") and f"field '{field}'" in lines[0], lines[0]
    assert not (folder / "report.html").exists()


def test_deep_nesting_in_systems_json_is_one_located_line(report_folder, tmp_path, capsys):
    folder = _edited(report_folder, tmp_path, lambda data: '{"systems": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, err = run_main_in_process(capsys, "report", folder)
    assert code == 2 and err.startswith(f"error: {folder / 'systems.json'}") and "nested" in err, err


def test_the_report_of_an_unedited_folder_is_written(report_folder, tmp_path, capsys):
    folder = _edited(report_folder, tmp_path, lambda data: data)
    code, err = run_main_in_process(capsys, "report", folder)
    assert code == 0, err
    assert "s0" in (folder / "report.html").read_text()


# ---- 15. a hand-edited sample (design) file ------------------------------------------------------------------------
BAD_PROBABILITIES = {  # the probability written on line 4 -> what the error says
    "arabic-indic digits": ("\u0660.\u0665", "not a number written in ASCII digits"),
    "underscores": ("0.000_1", "not a number written in ASCII digits"),
    "nan": ("nan", "not a number written in ASCII digits"),
    "inverse overflows": ("5e-324", "below 1e-06"),
    "win probabilities past 1": ("1e-300", "below 1e-06"),
    "one in ten million": ("1e-7", "below 1e-06"),
    "past 1": ("1.5", "not in (0, 1]"),
}


def _sample_file(folder: Path, probability: str) -> tuple[Path, Path, Path]:
    """Items of two systems with human scores, a judge's verdicts, and a sample of four whose last
    inclusion probability is ``probability``."""
    rows = [{"id": f"i{k}", "output": "x", "system_id": f"s{k % 2}", "scores": {"quality": 1 + (k * 3) % 5}}
            for k in range(16)]
    items = write_jsonl(folder / "items.jsonl", rows)
    judgments = write_jsonl(folder / "judgments.jsonl", [{"item_id": r["id"], "score": 1 + k % 5}
                                                         for k, r in enumerate(rows)])
    sample = folder / "ids.txt"
    sample.write_text("# judgelab sample: method=stratified units=items budget=4 seed=0\n"
                      "i0\t0.25\ni1\t0.25\ni2\t0.25\n" + f"i3\t{probability}\n", encoding="utf-8")
    return items, judgments, sample


@pytest.mark.parametrize("case", BAD_PROBABILITIES)
def test_a_sample_file_s_probability_is_an_ascii_number_judgelab_can_weight(case, tmp_path, capsys):
    """``٠.٥`` (Arabic-Indic digits) and ``0.000_1`` were read as numbers (Python's float() takes both);
    5e-324 (its inverse overflows) blanked systems and 1e-300 gave win probabilities of 1.011: each is
    refused with the file, the line and the field; nothing is estimated."""
    written, message = BAD_PROBABILITIES[case]
    items, judgments, sample = _sample_file(tmp_path, written)
    code, err = run_main_in_process(capsys, "evaluate", "--data", items, "--judgments", judgments,
                                    "--human-ids", sample, "--bootstrap", "0")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {sample}:5: field 'probability': ") and message in lines[0], lines[0]


def test_a_sample_file_with_plain_probabilities_reads_as_before(tmp_path, capsys):
    items, judgments, sample = _sample_file(tmp_path, "2.5e-1")
    code, err = run_main_in_process(capsys, "evaluate", "--data", items, "--judgments", judgments,
                                    "--human-ids", sample, "--bootstrap", "0")
    assert code == 0, err


def test_sample_never_writes_a_probability_evaluate_would_refuse(tmp_path, capsys):
    """The bound holds for what ``sample`` draws too: an active draw whose uniform share (--mix) is so
    small that a unit's probability falls below it is refused before any file is written."""
    items, judgments, _ = _sample_file(tmp_path, "0.25")
    # half of system s0's items are very uncertain, the rest not at all: with a uniform share of 1e-9 the
    # sure ones would get about 1e-10 each
    rows = [{"item_id": f"i{k}", "score": 1 + k % 5, "extra": {"score_sd": 1.0 if k % 8 < 3 else 0.0}}
            for k in range(16)]
    uncertain = write_jsonl(tmp_path / "uncertain.jsonl", rows)
    code, err = run_main_in_process(capsys, "sample", "--data", items, "--judgments", uncertain, "--active",
                                    "--mix", "1e-9", "--budget", "4", "--out", tmp_path / "drawn.txt")
    assert code == 2 and "below 1e-06" in err and "--mix" in err, err
    assert not (tmp_path / "drawn.txt").exists()
