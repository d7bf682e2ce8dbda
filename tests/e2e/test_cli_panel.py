"""Several judges on the command line (issue 46): evaluate and compare with --judgments given more than once,
a file of several judges with --judge given more than once, sample --spend; and what bad input gets."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.cli import run_cli as run
from tests.e2e.cli import write_jsonl

RATERS = ("Mistral-7B/eval_prompt_1", "OrcaPlatypus/eval_prompt_1", "ChatGPT/eval_prompt_1")


@pytest.fixture(scope="module")
def hanna(benchmarks_dir):
    return benchmarks_dir / "hanna.jsonl"


@pytest.fixture(scope="module")
def raters(benchmarks_dir, tmp_path_factory):
    """Three published raters' coherence ratings, one file each, and all three in one file."""
    folder = tmp_path_factory.mktemp("raters")
    rows = [json.loads(line) for line in (benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl").open()]
    chosen = [{"item_id": r["item_id"], "judge": r["judge"], "score": r["prediction"]["coherence"]}
              for r in rows if r["judge"] in RATERS]
    files = [write_jsonl(folder / f"{name.split('/')[0]}.jsonl", [r for r in chosen if r["judge"] == name])
             for name in RATERS]
    return files, write_jsonl(folder / "all.jsonl", chosen)


@pytest.fixture(scope="module")
def pilot(hanna, tmp_path_factory):
    ids = tmp_path_factory.mktemp("ids") / "ids.txt"
    assert run("sample", "--data", hanna, "--budget", "0.3", "--out", ids).returncode == 0
    return ids


def test_evaluate_combines_every_judge_given_and_says_what_each_was_worth(hanna, raters, pilot, tmp_path):
    files, _ = raters
    args = ["evaluate", "--data", hanna, "--aspect", "coherence", "--human-ids", pilot]
    for path in files:
        args += ["--judgments", path]
    done = run(*args, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out["judges"]) == list(RATERS)
    for one in out["judges"].values():
        assert one["weight"] is not None and one["alone"] > 0 and "added" in one
    assert out["estimators"]["corrected"]["info"]["calibration"] == "stack"
    assert all(out["coverage"]["judges"][name]["judged"] == 737 for name in RATERS)
    board = run(*args, "--out", tmp_path / "rep", env={"COLUMNS": "120"})
    assert board.returncode == 0, board.stderr
    assert "3 judges combined (stack); worth in labels, alone / added to the others" in board.stdout
    assert "Judges combined in the corrected estimate" in (tmp_path / "rep" / "report.html").read_text()


def test_one_file_of_several_judges_takes_judge_more_than_once(hanna, raters, pilot):
    _, both = raters
    base = ["evaluate", "--data", hanna, "--aspect", "coherence", "--human-ids", pilot, "--judgments", both]
    done = run(*base, "--judge", "Mistral", "--judge", "ChatGPT", "--json")
    assert done.returncode == 0, done.stderr
    assert list(json.loads(done.stdout)["judges"]) == ["Mistral-7B/eval_prompt_1", "ChatGPT/eval_prompt_1"]
    refused = run(*base)  # three judges, none chosen
    assert refused.returncode == 2 and "choose one with --judge" in refused.stderr


def test_one_judge_given_twice_is_refused_naming_both_files(hanna, raters, pilot, tmp_path):
    files, _ = raters
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(files[0].read_bytes())
    done = run("evaluate", "--data", hanna, "--aspect", "coherence", "--human-ids", pilot, "--judgments", files[0],
               "--judgments", copy, "--out", tmp_path / "never")
    assert done.returncode == 2
    assert f"two sets of verdicts for judge 'Mistral-7B/eval_prompt_1' ({files[0]} and {copy})" in done.stderr
    assert not (tmp_path / "never").exists()


def test_compare_takes_several_judges(hanna, raters, pilot):
    files, _ = raters
    done = run("compare", "--data", hanna, "--aspect", "coherence", "--human-ids", pilot, "--baseline", "CTRL",
               "--candidate", "XLNet", "--judgments", files[0], "--judgments", files[1], "--json")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["estimator"] == "corrected"


def test_sample_spend_plans_judges_and_labels_for_a_budget(hanna, raters, pilot):
    files, _ = raters
    base = ["sample", "--data", hanna, "--aspect", "coherence", "--human-ids", pilot, "--label-cost", "0.5"]
    for path in files:
        base += ["--judgments", path]
    args = [*base, "--spend", "100"]
    done = run(*args, "--judge-cost", "Mistral=0.0002", "--judge-cost", "Orca=0.0004", "--judge-cost",
               "ChatGPT=0.002", env={"COLUMNS": "160"})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "What 100 buys" in text and "humans alone" in text and "* the plan:" in text
    assert re.search(r"more money: [\d.]+ more buys \d+ labels, width", text)
    missing = run(*args, "--judge-cost", "Mistral=0.0002")
    assert missing.returncode == 2 and "no cost for judge" in missing.stderr
    short = run(*base, "--spend", "40", "--judge-cost", "Mistral=0", "--judge-cost", "Orca=0", "--judge-cost",
                "ChatGPT=0")
    assert short.returncode == 2 and "buys no plan with 10 labels a system" in short.stderr
