"""The whole loop with a real model: judge the demo data with the embedded test model, draw 8 items
to label, label them (here: from the items' own human scores), and `judgelab evaluate --human`."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli, write_jsonl


def test_judge_sample_label_evaluate_with_the_embedded_model(test_model_path, tmp_path):
    examples = Path(str(files("judgelab") / "examples"))
    data = examples / "demo_summaries.jsonl"
    judged = run_cli("judge", "--config", examples / "demo_judge.yaml", "--data", data, "--model", TEST_MODEL,
                     "--cache-path", tmp_path / "cache.sqlite", "--out", tmp_path / "run", timeout=900)
    assert judged.returncode == 0, judged.stderr
    drawn = run_cli("sample", "--data", data, "--budget", "8", "--seed", "1", "--out", tmp_path / "ids.txt")
    assert drawn.returncode == 0, drawn.stderr
    ids = [line.split("\t")[0] for line in (tmp_path / "ids.txt").read_text().splitlines() if not line.startswith("#")]
    scores = {row["id"]: row["scores"]["coherence"] for row in map(json.loads, data.read_text().splitlines())}
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": i, "score": scores[i]} for i in ids])
    done = run_cli("evaluate", "--data", data, "--judgments", tmp_path / "run", "--human", labels,
                   "--human-ids", tmp_path / "ids.txt", "--bootstrap", "200", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"judge", "human", "corrected"} <= set(out["estimators"]) and out["labels"]["n_labelled"] == 8
    for name in ("judge", "human", "corrected"):
        for system in out["systems"]:
            estimate = out["estimators"][name][system]
            assert estimate["value"] is not None and estimate["ci"][0] <= estimate["value"] <= estimate["ci"][1]
    table = run_cli("evaluate", "--data", data, "--judgments", tmp_path / "run", "--human", labels,
                    "--human-ids", tmp_path / "ids.txt", "--bootstrap", "200")
    assert table.returncode == 0, table.stderr
    for column in ("judge", "human", "corrected"):
        assert column in table.stdout
