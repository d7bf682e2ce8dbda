"""`judgelab fit --method active-critic` / `--config`, then `judgelab judge --config fitted.yaml`, as a user runs them."""

from __future__ import annotations

import json

import pytest
import yaml

from judgelab.data import load_items, save_items
from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli

SMALL = {"kind": "active-critic", "aspect": "overall", "variant": "coarse", "batch_size": 3, "max_rounds": 1,
         "draws": 1, "demos": [2, 2], "tuning_fraction": 1.0, "max_text_chars": 150, "fit_max_tokens": 128}


def test_fit_then_judge_with_the_fitted_protocol(tmp_path, benchmarks_dir, test_model_path):
    items = list(load_items(benchmarks_dir / "topical_chat.jsonl"))[:6]
    data = save_items(items, tmp_path / "train.jsonl")
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(SMALL))
    cache = tmp_path / "cache.sqlite"
    fitted_path = tmp_path / "fitted" / "critic.yaml"
    fit = run_cli("fit", "--config", base, "--data", data, "--out", fitted_path, "--model", TEST_MODEL,
                  "--cache-path", cache)
    if fit.returncode == 2 and "criteria" in fit.stderr:
        # a 135M model may write no usable criteria JSON: reported as a one-line error, never invented
        assert "Traceback" not in fit.stderr
        pytest.skip(f"the test model wrote no usable criteria this time: {fit.stderr.strip()[-300:]}")
    assert fit.returncode == 0, fit.stderr
    protocol = yaml.safe_load(fitted_path.read_text())
    assert protocol["task"] and len(protocol["criteria"]) >= 4 and len(protocol["demonstrations"]) == 2
    assert {d["item_id"] for d in protocol["demonstrations"]} <= {item.id for item in items}

    run = run_cli("judge", "--config", fitted_path, "--data", data, "--model", TEST_MODEL, "--out", tmp_path / "run",
                  "--cache-path", cache)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert [line["item_id"] for line in lines] == [item.id for item in items]
    assert all((line["score"] is None) == (line["status"] != "ok") for line in lines)
    # the protocol was reused as fitted: the run's record holds the same task, criteria and demonstrations
    judge = json.loads((tmp_path / "run" / "run.json").read_text())["judge"]
    assert {key: judge[key] for key in ("task", "criteria", "demonstrations")} == \
        {key: protocol[key] for key in ("task", "criteria", "demonstrations")}


def test_fit_with_too_few_items_exits_2_with_the_reason(tmp_path, benchmarks_dir, test_model_path):
    data = save_items(list(load_items(benchmarks_dir / "topical_chat.jsonl"))[:3], tmp_path / "few.jsonl")
    result = run_cli("fit", "--method", "active-critic", "--aspect", "overall", "--data", data,
                     "--out", tmp_path / "f.yaml", "--model", TEST_MODEL)
    assert result.returncode == 2 and "at least 6 pointwise items" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
