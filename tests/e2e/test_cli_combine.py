"""`judgelab combine` as a user runs it: its output is a judge `meta` and `evaluate` read; bad input exits 2
with one line and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import judgelab as jl
from tests.e2e.cli import read_jsonl, run_cli, run_main_captured, write_jsonl

EXAMPLES = Path(jl.__file__).parent / "examples"


@pytest.fixture(scope="module")
def raters(tmp_path_factory) -> list[Path]:
    """Three made-up raters of the shipped answers (1-5): right with chance 0.8, 0.7, 0.6, else one off."""
    folder = tmp_path_factory.mktemp("raters")
    rng = np.random.default_rng(0)
    items = read_jsonl(EXAMPLES / "answers.jsonl")
    files = []
    for name, accuracy in (("r1", 0.8), ("r2", 0.7), ("r3", 0.6)):
        rows = []
        for item in items:
            human = int(item["scores"]["helpfulness"])
            off = int(np.clip(human + rng.choice([-1, 1]), 1, 5))
            rows.append({"item_id": item["id"], "judge": name, "score": human if rng.random() < accuracy else off})
        files.append(write_jsonl(folder / f"{name}.jsonl", rows))
    return files


def _args(files: list[Path]) -> list[str]:
    return [arg for path in files for arg in ("--judgments", str(path))]


def test_combined_ratings_are_a_judge_meta_and_evaluate_read(raters, tmp_path):
    out = tmp_path / "combined.jsonl"
    done = run_cli("combine", *_args(raters), "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["coverage"] == {"r1": 30, "r2": 30, "r3": 30} and summary["converged"]
    rows = read_jsonl(out)
    assert len(rows) == 30 and rows[0]["judge"] == "dawid-skene(r1,r2,r3)"
    assert isinstance(rows[0]["label"], int) and set(rows[0]["extra"]["probabilities"]) <= {"1", "2", "3", "4", "5"}
    meta = run_cli("meta", "--data", EXAMPLES / "answers.jsonl", "--judgments", out, "--json", "--bootstrap", "0")
    assert meta.returncode == 0, meta.stderr
    assert json.loads(meta.stdout)["dataset"]["spearman"]["value"] > 0.7
    graded = run_cli("meta", "--data", EXAMPLES / "answers.jsonl", "--judgments", out, "--field", "label", "--json",
                     "--bootstrap", "0")  # the most probable rating, as a label: agreement too
    assert graded.returncode == 0, graded.stderr
    assert json.loads(graded.stdout)["agreement"]["accuracy"]["value"] > 0.5
    leaderboard = run_cli("evaluate", "--data", EXAMPLES / "answers.jsonl", "--judgments", out, "--json")
    assert leaderboard.returncode == 0, leaderboard.stderr
    assert json.loads(leaderboard.stdout)["systems"] == ["v1", "v2", "v3"]


@pytest.mark.parametrize("method", ["dawid-skene", "majority"])
def test_the_shipped_comparison_judges_combined_are_read_by_meta_and_evaluate(method, tmp_path):
    """docs/combine.md's example: the three shipped judges of comparisons.jsonl, named on the command line."""
    judges = {"qwen": "comparisons_judgments.jsonl", "qwen-norules": "comparisons_judgments_norules.jsonl",
              "smollm2": "comparisons_judgments_smollm2.jsonl"}
    out = tmp_path / "combined.jsonl"
    named = [arg for name, file in judges.items() for arg in ("--judgments", f"{name}={EXAMPLES / file}")]
    done = run_cli("combine", *named, "--method", method, "--out", out)
    assert done.returncode == 0, done.stderr
    assert f"30 items ({method}" in done.stdout and "qwen-norules" in done.stdout
    combined = read_jsonl(out)
    assert combined[0]["judge"] == f"{method}(qwen,qwen-norules,smollm2)"
    assert {r["label"] for r in combined} <= {"a", "b", "tie"} and all(0 <= r["score"] <= 1 for r in combined)
    meta = run_cli("meta", "--data", EXAMPLES / "comparisons.jsonl", "--judgments", out, "--json", "--bootstrap", "0")
    assert meta.returncode == 0, meta.stderr
    assert json.loads(meta.stdout)["pairwise"]["accuracy"]["value"] > 0.75
    leaderboard = run_cli("evaluate", "--data", EXAMPLES / "comparisons.jsonl", "--judgments", out, "--json")
    assert leaderboard.returncode == 0, leaderboard.stderr


def test_one_file_of_several_judges_picked_with_judge_and_rounded(tmp_path, capsys):
    rows = [{"item_id": f"i{i}", "judge": f"model/prompt_{p}", "prediction": {"coherence": (i % 5) + 1 + 0.34 * p}}
            for p in (1, 2) for i in range(25)]
    rows += [{"item_id": f"i{i}", "judge": "other", "prediction": {"coherence": (i % 4) + 1.0}} for i in range(20)]
    published = write_jsonl(tmp_path / "published.jsonl", rows)
    out = tmp_path / "combined.jsonl"
    code, stdout, err = run_main_captured(capsys, "combine", "--judgments", published, "--judge", "model/prompt_1",
                                          "--judge", "other", "--field", "prediction.coherence", "--round",
                                          "--method", "mean", "--out", out)
    assert code == 0, err
    assert "items" in stdout and "model/prompt_1" in stdout
    combined = {r["item_id"]: r for r in read_jsonl(out)}
    assert len(combined) == 25 and combined["i24"]["extra"]["verdicts"] == {"model/prompt_1": 5}  # 'other' covers 20


@pytest.mark.parametrize("case", ["mixed label sets", "one judge", "not a class", "unknown judge", "named file of two"])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(case, raters, tmp_path, capsys):
    verdicts = write_jsonl(tmp_path / "verdicts.jsonl", [{"item_id": "q01-v1", "label": "a"}])
    halves = write_jsonl(tmp_path / "halves.jsonl", [{"item_id": "q01-v1", "score": 3}, {"item_id": "q01-v2", "score": 3.5}])
    two = write_jsonl(tmp_path / "two.jsonl", [{"item_id": "q01-v1", "judge": j, "score": 1} for j in ("x", "y")])
    args, message = {
        "mixed label sets": ([*_args(raters[:1]), "--judgments", verdicts],
                             "verdicts.jsonl: judge 'verdicts' gives a/b/tie verdicts while judge 'r1'"),
        "one judge": (_args(raters[:1]), "combining needs at least 2 judges; got 1 (r1 from"),
        "not a class": ([*_args(raters[:1]), "--judgments", halves],
                        "halves.jsonl:2: field 'score': 3.5 is not a class"),
        "unknown judge": (["--judgments", raters[0], "--judge", "r9"], "no judgment from judge 'r9'"),
        "named file of two": ([*_args(raters[:1]), "--judgments", f"both={two}"], "the file holds 2 judges (x, y)"),
    }[case]
    out = tmp_path / "combined.jsonl"
    code, _, err = run_main_captured(capsys, "combine", *args, "--out", out)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
