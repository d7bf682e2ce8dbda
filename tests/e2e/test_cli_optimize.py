"""`judgelab optimize` end to end with the real embedded test model on a few SFRES items:
real judge calls, real meta-evaluation, the run folder, resuming, and reusing best.yaml."""

from __future__ import annotations

import json

from judgelab.data import load_items, save_items
from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli

# Two sources with two outputs each (so pairwise agreement is defined), and one more for test.
DEV_IDS = ("sfres-0000", "sfres-0581", "sfres-0001", "sfres-0582")
TEST_IDS = ("sfres-0002", "sfres-0583")


def _write(benchmarks_dir, tmp_path):
    items = load_items(benchmarks_dir / "sfres.jsonl")
    dev, test = tmp_path / "dev.jsonl", tmp_path / "test.jsonl"
    save_items([items[i] for i in DEV_IDS], dev)
    save_items([items[i] for i in TEST_IDS], test)
    return dev, test


def test_optimize_hpss_writes_a_resumable_run_folder(benchmarks_dir, test_model_path, tmp_path):
    dev, test = _write(benchmarks_dir, tmp_path)
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"

    def command(budget: int) -> tuple:
        return ("optimize", "hpss", "--data", dev, "--aspect", "naturalness", "--budget", budget, "--test", test,
                "--strategy", "cot=none", "--model", TEST_MODEL, "--cache-path", cache, "--out", out)

    first = run_cli(*command(2), timeout=1800)
    assert first.returncode == 0, first.stderr
    assert "best on dev" in first.stdout and "test: relative gain" in first.stdout
    lines = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2]
    # HPSS initialisation: the start point, then the first one-factor variant (scale 3).
    assert lines[0]["strategy"].startswith("scale=5,") and ",cot=none," in lines[0]["strategy"]
    assert lines[1]["strategy"].startswith("scale=3,")
    assert lines[0]["calls"] == 4 and lines[0]["n_items"] == 4  # one real judge call per dev item
    for line in lines:
        assert line["statistic"] == "spearman" and line["level"] == "dataset"
        assert (line["objective"] is None) == (line["reason"] is not None)
        assert line["n_used"] + line["unparsable"] + line["errors"] <= 4
    state = json.loads((out / "optimizer.json").read_text())
    assert state["status"] == "budget spent" and state["evaluations"] == 2
    assert state["test"]["n_items"] == 2 and state["usage"]["calls"] >= 8
    assert (out / "best.yaml").exists()
    # The folder is also a run folder of the best config on dev (judge + report through the runner).
    run = json.loads((out / "run.json").read_text())
    assert run["judge_digest"] == state["best"]["digest"] and run["items"] == 4
    assert "<h2>Search</h2>" in (out / "report.html").read_text()  # the trajectory section

    # Rerun into the folder with a larger budget: the 2 recorded evaluations are not redone.
    again = run_cli(*command(3), timeout=1800)
    assert again.returncode == 0, again.stderr
    lines = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2, 3] and lines[2]["strategy"].startswith("scale=10,")
    assert lines[2]["calls"] == 4 and lines[2]["total_calls"] == lines[0]["calls"] + lines[1]["calls"] + 4

    # best.yaml is a judge config `judgelab judge` reuses (its calls come from the cache).
    judged = run_cli("judge", "--data", dev, "--config", out / "best.yaml", "--model", TEST_MODEL,
                     "--cache-path", cache, "--out", tmp_path / "judged", timeout=1800)
    assert judged.returncode == 0, judged.stderr
    assert "0 paid calls, 4 cache hits" in judged.stdout


def test_optimize_refuses_unknown_method_and_objective(tmp_path):
    result = run_cli("optimize", "annealing", "--data", tmp_path / "x.jsonl", "--aspect", "a", "--budget", "2",
                     "--out", tmp_path / "run")
    assert result.returncode == 2 and "unknown method 'annealing'" in result.stderr


def test_optimize_random_within_a_space(benchmarks_dir, test_model_path, tmp_path):
    dev, _ = _write(benchmarks_dir, tmp_path)
    out = tmp_path / "run"
    result = run_cli("optimize", "random", "--data", dev, "--aspect", "naturalness", "--budget", 3,
                     "--strategy", "cot=none", "--space", "cot=none,suffix", "--space", "scale=3,5,10",
                     "--space", "reference=none", "--model", TEST_MODEL, "--cache-path", tmp_path / "cache.sqlite",
                     "--out", out, "--no-report", timeout=1800)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    assert len(lines) == 3
    for line in lines:
        assert ",reference=none," in line["strategy"] and ",cot=prefix," not in line["strategy"]
        assert line["strategy"].split(",")[0] in ("scale=3", "scale=5", "scale=10")
    state = json.loads((out / "optimizer.json").read_text())
    assert state["settings"]["space"] == {"scale": ["5", "3", "10"], "reference": ["none"], "cot": ["none", "suffix"]}


def test_optimize_names_a_bad_space_before_any_call(tmp_path):
    dev = tmp_path / "dev.jsonl"
    dev.write_text('{"id": "a", "output": "x", "scores": {"naturalness": 3}}\n')
    common = ("optimize", "random", "--data", dev, "--aspect", "naturalness", "--budget", "2", "--out", tmp_path / "run",
              "--model", "http://127.0.0.1:9/v1", "--model-name", "judge")  # nothing listens: no call may be made
    bad_value = run_cli(*common, "--space", "cot=before")
    assert bad_value.returncode == 2 and "'before' is not a value of cot; choose from prefix, none, suffix" in bad_value.stderr
    no_value = run_cli(*common, "--space", "cot")
    assert no_value.returncode == 2 and "--space 'cot': write FACTOR=VALUE,VALUE" in no_value.stderr
    start_outside = run_cli(*common, "--space", "cot=none")
    assert start_outside.returncode == 2 and "the start strategy has cot=prefix" in start_outside.stderr
    not_a_strategy_search = run_cli(*common[:1], "ape", *common[2:], "--space", "cot=none")
    assert not_a_strategy_search.returncode == 2 and "ape has no setting 'space'" in not_a_strategy_search.stderr
    assert not (tmp_path / "run").exists()
