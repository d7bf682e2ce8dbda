"""A CI gate from end to end: `judgelab judge` with the embedded test model on two versions of a
system that answer the same dialogues, then `judgelab compare` on its run folder."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli, write_jsonl

N_INPUTS = 10  # the per-system rule gives 10+ labelled inputs a (guarded) t interval; 4 get betting, too wide to decide


@pytest.fixture(scope="module")
def judged(benchmarks_dir, test_model_path, tmp_path_factory):
    """v1: Topical-Chat's original responses to 4 dialogues; v2-bad: the same responses cut to their
    first three words, labelled 1.2-1.8 lower (the planted regression); v2-same: v1's responses again,
    labelled +-0.2 around v1's. Items carry their human naturalness (the labels, with --human-ids all)."""
    folder = tmp_path_factory.mktemp("gate")
    with open(benchmarks_dir / "topical_chat.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    originals = [r for r in rows if r["system_id"] == "Original Ground Truth"][:N_INPUTS]
    items = []
    for k, row in enumerate(originals):
        human = row["scores"]["naturalness"]
        common = {"dataset": row["dataset"], "group_id": row["group_id"], "source": row["source"][-200:], "scale": [0, 5]}
        items.append({**common, "id": f"v1-{k}", "system_id": "v1", "output": row["output"],
                      "scores": {"naturalness": human}})
        items.append({**common, "id": f"bad-{k}", "system_id": "v2-bad", "output": " ".join(row["output"].split()[:3]),
                      "scores": {"naturalness": max(human - (1.2 if k % 2 else 1.8), 0.0)}})
        items.append({**common, "id": f"same-{k}", "system_id": "v2-same", "output": row["output"],
                      "scores": {"naturalness": min(max(human + (0.2 if k % 2 else -0.2), 0.0), 5.0)}})
    data = write_jsonl(folder / "items.jsonl", items)
    run = run_cli("judge", "--data", data, "--aspect", "naturalness", "--model", TEST_MODEL, "--strategy", "cot=none",
                  "--score", "logprob", "--out", folder / "run", "--cache-path", folder / "cache.sqlite", timeout=300)
    assert run.returncode == 0, run.stderr
    return data, folder / "run"


def gate(data, run, candidate, *args):
    return run_cli("compare", "--data", data, "--judgments", run, "--baseline", "v1", "--candidate", candidate,
                   "--json", *args, timeout=120)


def test_judge_only_compares_the_models_verdicts(judged):
    data, run = judged
    done = gate(data, run, "v2-bad", "--bootstrap", "300")
    assert done.returncode in (0, 1), done.stderr
    out = json.loads(done.stdout)
    with open(run / "judgments.jsonl", encoding="utf-8") as handle:
        score = {row["item_id"]: row["score"] for row in map(json.loads, handle)}
    expected = sum(score[f"bad-{k}"] - score[f"v1-{k}"] for k in range(N_INPUTS)) / N_INPUTS
    assert out["estimator"] == "judge" and out["paired"] and out["n"] == N_INPUTS
    assert out["difference"] == pytest.approx(expected)
    assert done.returncode == (0 if out["passed"] else 1)
    assert "no bias correction" in out["warnings"][0]


def test_labels_catch_the_planted_regression_and_pass_the_unchanged_version(judged, tmp_path):
    data, run = judged
    bad = gate(data, run, "v2-bad", "--human-ids", "all", "--margin", "0.5", "--junit", tmp_path / "bad.xml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    out = json.loads(bad.stdout)
    assert out["estimator"] == "corrected" and out["ci"][1] < -0.5 and out["n_labelled"] == N_INPUTS
    assert 'failures="1"' in (tmp_path / "bad.xml").read_text()
    same = gate(data, run, "v2-same", "--human-ids", "all", "--margin", "0.5")
    assert same.returncode == 0, same.stdout + same.stderr
    assert json.loads(same.stdout)["decision"] == "not worse"
