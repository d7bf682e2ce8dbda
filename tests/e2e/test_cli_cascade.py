"""`judgelab cascade` on the command line (issue 46): stages cheapest first, what each answers, the files it
writes, and the refusals."""

from __future__ import annotations

import json

import numpy as np

from tests.e2e.cli import run_cli as run
from tests.e2e.cli import write_jsonl


def comparisons(tmp_path, n=600, seed=0):
    """Comparisons labelled a or b; a cheap judge right 95% of the time where it says it is sure (confidence
    0.9) and 60% where not (0.6); a strong judge right 90% of the time."""
    rng = np.random.default_rng(seed)
    labels = rng.choice(["a", "b"], n)
    sure = rng.random(n) < 0.6
    other = {"a": "b", "b": "a"}
    cheap = [lab if rng.random() < (0.95 if s else 0.6) else other[lab] for lab, s in zip(labels, sure, strict=True)]
    strong = [lab if rng.random() < 0.9 else other[lab] for lab in labels]
    items = write_jsonl(tmp_path / "items.jsonl", [{"id": f"c{k}", "system_a": "x", "system_b": "y",
                                                    "label": str(labels[k])} for k in range(n)])
    cheap_file = write_jsonl(tmp_path / "cheap.jsonl", [
        {"item_id": f"c{k}", "label": str(v), "judge": "cheap", "extra": {"confidence": 0.9 if sure[k] else 0.6}}
        for k, v in enumerate(cheap)])
    strong_file = write_jsonl(tmp_path / "strong.jsonl", [
        {"item_id": f"c{k}", "label": str(v), "judge": "strong", "extra": {"confidence": 1.0}}
        for k, v in enumerate(strong)])
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"c{k}\n" for k in rng.choice(n, n // 2, replace=False)))
    return items, cheap_file, strong_file, ids


def test_the_cheap_judge_answers_where_sure_the_strong_one_the_rest(tmp_path):
    items, cheap, strong, ids = comparisons(tmp_path)
    done = run("cascade", "--data", items, "-j", cheap, "-j", strong, "--human-ids", ids, "--agreement", "0.8",
               "--confidence", "extra.confidence", "--out", tmp_path / "out", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "cheap: answers" in done.stdout and "at confidence >= 0.9" in done.stdout
    assert "on the items the judges answer, agreement with people >= 0.8 with probability >= 0.9" in done.stdout
    summary = json.loads((tmp_path / "out" / "cascade.json").read_text())
    cheap_stage, strong_stage = summary["stages"]
    assert cheap_stage["threshold"] == 0.9 and cheap_stage["calibration_agreement"] > 0.85
    assert cheap_stage["answered"] + strong_stage["answered"] + summary["to_people"] == 600
    verdicts = [json.loads(line) for line in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
    assert len(verdicts) == 600 - summary["to_people"] and {v["label"] for v in verdicts} <= {"a", "b"}
    left = (tmp_path / "out" / "to_label.txt").read_text().split()
    assert len(left) == summary["to_people"]
    meta = run("meta", "--data", items, "--judgments", tmp_path / "out" / "judgments.jsonl")
    assert meta.returncode == 0, meta.stderr  # the cascade's verdicts are a judge's


def test_refusals_name_the_problem_and_write_nothing(tmp_path):
    items, cheap, strong, ids = comparisons(tmp_path, n=100)
    base = ["cascade", "--data", items, "-j", cheap, "-j", strong]
    low = run(*base, "--human-ids", ids, "--agreement", "0.4", "--out", tmp_path / "never")
    assert low.returncode == 2 and "--agreement 0.4: input should be greater than 0.5" in low.stderr
    assert not (tmp_path / "never").exists()
    unlabelled = run(*base)
    assert unlabelled.returncode == 2 and "calibrated on human labels" in unlabelled.stderr
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    taken = run(*base, "--human-ids", ids, "--out", a_file)
    assert taken.returncode == 2 and "is a file; give a folder" in taken.stderr
