"""`judgelab judge --method trema` then `judgelab qrels` as a user runs them."""

from __future__ import annotations

import json

import ir_measures

from judgelab.data import load_items, save_items
from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli


def test_trema_judge_then_qrels(tmp_path, benchmarks_dir, test_model_path):
    items = list(load_items(benchmarks_dir / "trec_dl2019.jsonl"))[:2]
    data = save_items(items, tmp_path / "pairs.jsonl")
    config = tmp_path / "trema.yaml"
    config.write_text("kind: trema\nmode: four-prompts\naggregator: {method: sum, thresholds: [6, 7, 10]}\n"
                      "on_invalid: zero\n")
    judged = run_cli("judge", "--data", data, "--config", config, "--model", TEST_MODEL, "--out", tmp_path / "run",
                     "--cache-path", tmp_path / "cache.sqlite")
    assert judged.returncode == 0, judged.stderr
    lines = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert [line["item_id"] for line in lines] == [item.id for item in items]
    assert all(set(line["criteria"]) == {"exactness", "coverage", "topicality", "contextual_fit"} for line in lines)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["usage"]["calls"] == 8

    out = tmp_path / "qrels.txt"
    written = run_cli("qrels", tmp_path / "run", "--out", out)  # --data defaults to the run's data file
    assert written.returncode == 0, written.stderr
    qrels = list(ir_measures.read_trec_qrels(str(out)))
    assert [(q.query_id, q.doc_id, q.relevance) for q in qrels] == [
        (item.qid, item.docid, line["label"]) for item, line in zip(items, lines, strict=True)]

    by_method = run_cli("judge", "--data", data, "--method", "trema", "--model", TEST_MODEL, "--limit", "1",
                        "--out", tmp_path / "run2", "--cache-path", tmp_path / "cache.sqlite")
    assert by_method.returncode == 0, by_method.stderr
    record = json.loads((tmp_path / "run2" / "run.json").read_text())
    assert record["judge"]["kind"] == "trema" and record["judge"]["aggregator"]["method"] == "prompt"

    missing = run_cli("qrels", tmp_path / "run" / "judgments.jsonl", "--out", out)
    assert missing.returncode == 2 and "--data" in missing.stderr
