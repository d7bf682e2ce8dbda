"""The prompted judge end to end with the real SmolLM2 model on benchmark items."""

from __future__ import annotations

import json

import pytest

from judgelab.data import load_items
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm import Client, CompletionCache
from judgelab.runner.run import run_judge
from judgelab.strategy import Strategy


@pytest.fixture(scope="module")
def topical_items(benchmarks_dir):
    items = load_items(benchmarks_dir / "topical_chat.jsonl")
    groups = list(items.groups())[:2]
    return [item for item in items if item.group_id in groups][:6]


def client_for(backend, tmp_path) -> Client:
    return Client(backend, cache=CompletionCache(tmp_path / "cache.sqlite"))


def close_loop_only(client: Client) -> None:
    """The embedded backend is shared by the session: stop this client's loop, keep the model."""
    client._loop.call_soon_threadsafe(client._loop.stop)
    client.cache.close()


def assert_honest(judgments, bounds):
    for judgment in judgments:
        if judgment.status == "ok":
            assert judgment.score is not None and bounds[0] <= judgment.score <= bounds[1]
        else:
            assert judgment.score is None and judgment.reason
            assert judgment.raw is not None or judgment.status == "error"


def test_run_writes_honest_judgments_and_reruns_from_cache(embedded_backend, topical_items, tmp_path):
    judge = PromptedJudge(aspect="coherence", strategy=Strategy(scale=3, cot="none"))
    client = client_for(embedded_backend, tmp_path)
    try:
        first = run_judge(judge, topical_items, client, tmp_path / "run")
        assert first.usage["calls"] == len(topical_items)
        lines = (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()
        assert [json.loads(line)["item_id"] for line in lines] == [item.id for item in topical_items]
        assert_honest(first.judgments, (1, 3))
        record = json.loads((tmp_path / "run" / "run.json").read_text())
        assert record["status"] == "finished" and record["counts"] == first.counts
        assert (tmp_path / "run" / "report.html").is_file()
        assert first.metrics is not None and first.metrics["coverage"]

        # a fresh folder, the same cache: every call is served from the cache
        client.usage = type(client.usage)()
        again = run_judge(judge, topical_items, client, tmp_path / "run2")
        assert again.usage["calls"] == 0 and again.usage["cache_hits"] == len(topical_items)
        assert [j.score for j in again.judgments] == [j.score for j in first.judgments]
    finally:
        close_loop_only(client)


def test_rerun_into_the_folder_resumes(embedded_backend, topical_items, tmp_path):
    judge = PromptedJudge(aspect="coherence", strategy=Strategy(scale=3, cot="none"), score="logprob")
    client = client_for(embedded_backend, tmp_path)
    try:
        first = run_judge(judge, topical_items, client, tmp_path / "run")
        assert_honest(first.judgments, (1, 3))
        masses = [m for j in first.judgments for m in j.extra.get("logprob_mass", [])]
        assert masses and all(0 < m <= 1 for m in masses)
        # simulate a crash after three items: keep three lines and half of a fourth
        path = tmp_path / "run" / "judgments.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
        resumed = run_judge(judge, topical_items, client, tmp_path / "run")
        assert resumed.usage["resumed_items"] == 3
        assert [j.score for j in resumed.judgments] == [j.score for j in first.judgments]
        assert len(path.read_text().splitlines()) == len(topical_items)
    finally:
        close_loop_only(client)


def test_examples_and_self_generated_texts_with_the_real_model(embedded_backend, benchmarks_dir, tmp_path):
    sfres = list(load_items(benchmarks_dir / "sfres.jsonl"))[:12]
    strategy = Strategy(scale=5, examples=3, criteria="self", reference="self", cot="none")
    judge = PromptedJudge(aspect="naturalness", strategy=strategy, max_tokens=16)
    client = client_for(embedded_backend, tmp_path)
    try:
        result = run_judge(judge, sfres[:3], client, None, examples_pool=sfres)
    finally:
        close_loop_only(client)
    assert_honest(result.judgments, (1, 5))
    assert all(j.status != "error" for j in result.judgments), [j.reason for j in result.judgments]


def test_a_prompt_longer_than_the_context_is_an_error_judgment(embedded_backend, topical_items, tmp_path):
    # ten dialogue examples do not fit SmolLM's 2,048-token window used in these tests
    judge = PromptedJudge(aspect="coherence", strategy=Strategy(scale=3, examples=5, cot="none"))
    client = client_for(embedded_backend, tmp_path)
    try:
        result = run_judge(judge, topical_items[:2], client, None, examples_pool=topical_items)
    finally:
        close_loop_only(client)
    assert [j.status for j in result.judgments] == ["error", "error"]
    assert all("context window" in j.reason for j in result.judgments)
    assert "no item has both" in result.metrics["unavailable"]  # the run is written, saying why
