"""The commands a user meets, run as subprocesses with the real embedded test model."""

from __future__ import annotations

import json
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

from judgelab.data import load_items, save_items
from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_cli

DEMO_TIMEOUT = 2400


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("judgelab ")


def test_models_list_names_every_preset():
    result = run_cli("models", "list")
    assert result.returncode == 0
    for name in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"):
        assert name in result.stdout


def test_generate_prints_completion_and_logprobs_as_json(test_model_path):
    result = run_cli("generate", "Say hello.", "--model", TEST_MODEL, "--max-tokens", "4",
                     "--top-logprobs", "3", "--no-cache", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    [completion] = payload["completions"]
    assert completion["completion_tokens"] >= 1 and len(completion["logprobs"][0]["top"]) == 3
    assert payload["usage"]["calls"] == 1


@pytest.mark.parametrize("args, message", [
    (("generate", "hi", "--model", "gpt-nonsense"), "unknown model 'gpt-nonsense'"),
    (("generate", "hi", "--model", "/nowhere/model.gguf"), "GGUF file not found"),
    (("judge", "--data", "/nowhere/items.jsonl", "--aspect", "x"), "/nowhere/items.jsonl"),
    (("report", "/nowhere/run"), "not a run folder"),
    # click usage errors (typer 0.29 raises its vendored click's, which were "internal error", exit 1)
    (("meta",), "Missing option '--data'"),
    # without --judgments meta reads --data as another tool's output (docs/sources.md): a missing file is named
    (("meta", "--data", "/nowhere/items.jsonl"), "/nowhere/items.jsonl: no such file or folder"),
    (("judge", "--no-such-option"), "No such option: --no-such-option"),
])
def test_user_errors_exit_2_with_one_line(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.stderr


def test_bad_strategy_and_missing_aspect_exit_2(tmp_path, benchmarks_dir):
    data = save_items(list(load_items(benchmarks_dir / "sfres.jsonl"))[:2], tmp_path / "items.jsonl")
    result = run_cli("judge", "--data", data, "--aspect", "naturalness", "--strategy", "scale=7")
    assert result.returncode == 2 and "scale" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("judge", "--data", data)
    assert result.returncode == 2 and "--aspect" in result.stderr


def test_judge_writes_a_run_folder_and_resumes(tmp_path, benchmarks_dir, test_model_path):
    items = list(load_items(benchmarks_dir / "sfres.jsonl"))[:4]
    data = save_items(items, tmp_path / "items.jsonl")
    args = ("judge", "--data", data, "--aspect", "naturalness", "--model", TEST_MODEL,
            "--strategy", "cot=none", "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    run = tmp_path / "run"
    for name in ("run.json", "judgments.jsonl", "metrics.json", "report.html"):
        assert (run / name).is_file(), name
    lines = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert [line["item_id"] for line in lines] == [item.id for item in items]
    record = json.loads((run / "run.json").read_text())
    assert record["usage"]["calls"] == 4 and record["model"] == TEST_MODEL
    assert record["judge"]["strategy"]["cot"] == "none" and record["versions"]["judgelab"]

    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    record = json.loads((run / "run.json").read_text())
    assert record["usage"]["resumed_items"] == 4 and record["usage"]["calls"] == 0

    other = run_cli(*args[:-4], "--strategy", "cot=none,scale=10", "--out", run, "--cache-path", tmp_path / "c.sqlite")
    assert other.returncode == 2 and "another judge" in " ".join(other.stderr.split())


def test_judge_on_the_embedded_default(tmp_path, benchmarks_dir, test_model_path):
    """Issue 41, item 8: with an embedded model and nothing chosen, the judge rates first and scores the expected
    rating under its probabilities, and says so (bench/bench_default_strategy.py measured the choice)."""
    data = save_items(list(load_items(benchmarks_dir / "sfres.jsonl"))[:2], tmp_path / "items.jsonl")
    result = run_cli("judge", "--data", data, "--aspect", "naturalness", "--model", TEST_MODEL,
                     "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    assert result.returncode == 0, result.stderr
    assert "embedded model: the judge rates first" in " ".join(result.stderr.split())
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["judge"]["strategy"]["cot"] == "none" and record["judge"]["score"] == "logprob"
    assert record["usage"]["completion_tokens"] <= 2 * 16  # a rating, not an explanation


def test_saved_config_is_reused(tmp_path, benchmarks_dir, test_model_path):
    data = save_items(list(load_items(benchmarks_dir / "sfres.jsonl"))[:2], tmp_path / "items.jsonl")
    saved = tmp_path / "judge.yaml"
    first = run_cli("judge", "--data", data, "--aspect", "naturalness", "--model", TEST_MODEL,
                    "--strategy", "cot=none,scale=10", "--save-config", saved, "--out", tmp_path / "a",
                    "--cache-path", tmp_path / "cache.sqlite")
    assert first.returncode == 0, first.stderr
    second = run_cli("judge", "--data", data, "--config", saved, "--model", TEST_MODEL, "--out", tmp_path / "b",
                     "--cache-path", tmp_path / "cache.sqlite")
    assert second.returncode == 0, second.stderr
    a, b = (json.loads((tmp_path / d / "run.json").read_text()) for d in ("a", "b"))
    assert a["judge_digest"] == b["judge_digest"] and b["usage"]["calls"] == 0


@pytest.mark.timeout(DEMO_TIMEOUT + 60)
def test_demo_runs_the_whole_loop(tmp_path, test_model_path):
    # 20 s on a quiet 2-core machine, ~10 min under a load of 6-9: the limit is for a stuck run, not a slow one
    try:
        result = run_cli("demo", "--model", TEST_MODEL, "--out", tmp_path / "demo", "--no-cache", timeout=DEMO_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"timed out: the demo did not finish in {DEMO_TIMEOUT} s (a stuck model run, or a machine "
                    "far busier than a load of 9), not a wrong result")
    assert result.returncode == 0, result.stderr
    assert "agreement with humans" in result.stdout and "36 judgments" in result.stdout
    # `make demo` ends on what to open next, not on the run folder
    assert result.stdout.splitlines()[-1] == f"report: {tmp_path / 'demo' / 'report.html'} (open it in a browser)"
    record = json.loads((tmp_path / "demo" / "run.json").read_text())
    assert record["items"] == 36 and sum(record["counts"].values()) == 36
    report = (tmp_path / "demo" / "report.html").read_text()
    assert "demo-d1-s0" in report and "spearman" in report

    regenerated = run_cli("report", tmp_path / "demo")
    assert regenerated.returncode == 0 and "report.html" in regenerated.stdout


def test_the_demo_header_is_not_folded_inside_a_word_off_a_terminal(tmp_path):
    """`make demo 2>&1 | cat` printed "...,metrics=of" / "f,order=..." (rich folds at 80 columns off a
    TTY). The header is printed before the model loads, so a model that cannot load is enough."""
    from judgelab.judges.base import load_judge

    result = run_cli("demo", "--model", tmp_path / "missing.gguf", "--out", tmp_path / "demo", timeout=120)
    assert result.returncode != 0
    key = load_judge(Path(str(files("judgelab") / "examples" / "demo_judge.yaml"))).strategy.key()
    first, second = result.stdout.splitlines()[:2]
    assert first == "judgelab demo: 36 summaries of 9 articles, aspect 'coherence', score=logprob"
    assert second == f"strategy: {key}"
