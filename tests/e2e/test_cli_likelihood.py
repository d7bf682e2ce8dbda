"""`judgelab judge --method likelihood` as a user runs it: real model, run folder, agreement table,
and --reduce refused by a judge that has no such field."""

from __future__ import annotations

import json

from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli


def test_likelihood_judge_run_and_sum_reduction(tmp_path, benchmarks_dir, test_model_path):
    data = benchmarks_dir / "sfres.jsonl"
    judged = run_cli("judge", "--data", data, "--method", "likelihood", "--aspect", "naturalness", "--reduce", "sum",
                     "--model", TEST_MODEL, "--limit", "8", "--out", tmp_path / "run")
    assert judged.returncode == 0, judged.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and all(r["status"] == "ok" for r in rows)
    assert all(r["score"] == r["extra"]["logprob_sum"] < 0 for r in rows)
    assert "spearman" in judged.stdout

    wrong = run_cli("judge", "--data", data, "--method", "prompted", "--aspect", "naturalness", "--reduce", "sum",
                    "--model", TEST_MODEL, "--limit", "1")
    assert wrong.returncode == 2 and "reduce" in wrong.stderr


def test_query_likelihood_on_relevance_pairs_and_a_wrong_direction(tmp_path, benchmarks_dir, test_model_path):
    data = benchmarks_dir / "trec_dl2019.jsonl"
    judged = run_cli("judge", "--data", data, "--method", "likelihood", "--aspect", "relevance",
                     "--likelihood-of", "input", "--model", TEST_MODEL, "--limit", "4", "--out", tmp_path / "run")
    assert judged.returncode == 0, judged.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["status"] == "ok" and r["score"] < 0 for r in rows)

    wrong = run_cli("judge", "--data", data, "--method", "likelihood", "--aspect", "relevance",
                    "--likelihood-of", "query", "--model", TEST_MODEL, "--limit", "1")
    assert wrong.returncode == 2 and "likelihood_of" in wrong.stderr
