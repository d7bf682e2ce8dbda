"""An option naming a file of ids given something else (issue 45): ``--human-ids 5``, meant as "label 5",
said only "5: no such file". Each such option now says which forms it takes, and how to draw ids to label.
In process (no process start per case); the Python side: tests/unit/test_human_ids_messages.py."""

from __future__ import annotations

from pathlib import Path

import judgelab as jl
from tests.e2e.cli import run_main_in_process

EXAMPLES = Path(jl.__file__).parent / "examples"
ITEMS, JUDGED = EXAMPLES / "answers.jsonl", EXAMPLES / "answers_judgments.jsonl"
HUMAN_IDS_FORMS = "give 'all' (every item's own human score is a label) or a file of ids (query ids for runs), one per line"


def test_evaluate_human_ids_5_names_all_and_a_file_of_ids(capsys):
    code, err = run_main_in_process(capsys, "evaluate", "--data", ITEMS, "--judgments", JUDGED,
                                    "--aspect", "helpfulness", "--human-ids", "5")
    assert code == 2, err
    assert f"--human-ids 5: no such file; {HUMAN_IDS_FORMS}" in err
    assert f"judgelab sample --data {ITEMS} --budget 5 --out ids.txt draws 5" in err


def test_compare_human_ids_names_the_same_forms(capsys, tmp_path):
    missing = tmp_path / "ids.txt"
    code, err = run_main_in_process(capsys, "compare", "--data", ITEMS, "--judgments", JUDGED, "--baseline", "v1",
                                    "--candidate", "v2", "--human-ids", missing)
    assert code == 2 and f"--human-ids {missing}: no such file; {HUMAN_IDS_FORMS}" in err, err
    assert "--budget 20 --out ids.txt" in err  # not a count: a budget of 20 suggested


def test_sample_exclude_names_a_file_of_ids(capsys, tmp_path):
    code, err = run_main_in_process(capsys, "sample", "--data", ITEMS, "--budget", "5", "--out", tmp_path / "ids.txt",
                                    "--exclude", "5")
    assert code == 2 and "--exclude 5: no such file; give a file of the ids already labelled, one per line" in err, err
    assert not (tmp_path / "ids.txt").exists()


def test_annotate_ids_names_a_file_of_ids_or_sample(capsys, tmp_path):
    code, err = run_main_in_process(capsys, "annotate", "--data", ITEMS, "--aspect", "helpfulness",
                                    "--out", tmp_path / "labels.jsonl", "--ids", "5")
    assert code == 2, err
    assert "--ids 5: no such file; give a file of item ids, one per line (judgelab sample --data" in err
    assert "--sample 5 for that many items at random" in err


def test_a_file_that_exists_is_left_to_its_reader(capsys, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("q01-v1\tq01-v2\tq01-v3\n", encoding="utf-8")
    code, err = run_main_in_process(capsys, "evaluate", "--data", ITEMS, "--judgments", JUDGED,
                                    "--aspect", "helpfulness", "--human-ids", ids)
    assert code == 2 and f"{ids}:1: expected 'id' or 'id<TAB>inclusion probability'" in err, err
