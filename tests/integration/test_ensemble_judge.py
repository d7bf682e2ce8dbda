"""Ensembles on real judge outputs: two configs of the embedded SmolLM2 model (plus the similarity
scorer), the real model as the vote aggregator, and the published LLMBar evaluator verdicts."""

from __future__ import annotations

import pytest

from judgelab.data import load_items
from judgelab.judges.ensemble import EnsembleJudge, Member, selection_frame
from judgelab.judges.similarity import SimilarityJudge
from judgelab.llm import Client, CompletionCache
from judgelab.metrics.align import human_value
from judgelab.runner.run import run_judge

ASPECT = "coherence"


@pytest.fixture(scope="module")
def topical(benchmarks_dir):
    items = load_items(benchmarks_dir / "topical_chat.jsonl")
    groups = sorted({item.group for item in items})
    return [item for item in items if item.group == groups[0]]  # one source's 6 outputs


@pytest.fixture
def client(embedded_backend, tmp_path):
    client = Client(embedded_backend, cache=CompletionCache(tmp_path / "cache.sqlite"))
    yield client
    client._loop.call_soon_threadsafe(client._loop.stop)  # the session keeps the model loaded
    client.cache.close()


def _members(similarity: SimilarityJudge) -> list[Member]:
    plain = {"kind": "prompted", "aspect": ASPECT, "strategy": {"cot": "none", "scale": 5}}
    scale10 = {"kind": "prompted", "aspect": ASPECT, "strategy": {"cot": "none", "scale": 10}}
    return [Member(name="smollm-5", judge=plain), Member(name="smollm-10", judge=scale10),
            Member(name="similarity", judge=similarity.model_dump(mode="json"))]


def test_ensembles_of_real_judges(topical, client, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    dev, test = topical[:3], topical[3:]
    similarity = SimilarityJudge(aspect=ASPECT, estimator="ridge").fit(topical, out_dir=tmp_path)
    members = _members(similarity)
    mean = EnsembleJudge(members=members, aggregate="mean", aspect=ASPECT)
    result = run_judge(mean, test, client, tmp_path / "mean")
    by_member = mean.member_judgments(test, client)  # served from the cache now
    for judgment in result.judgments:
        values = [v for v in judgment.extra.get("members", {}).values() if v is not None]
        if judgment.ok:
            assert judgment.score == pytest.approx(sum(values) / len(values))
        else:  # every member failed on it: an error, never a 0
            assert not values and judgment.score is None
    assert all(len(judged) == len(test) for judged in by_member.values())
    assert result.usage["cache_hits"] > 0 or result.usage["calls"] > 0

    best = EnsembleJudge(members=members, aggregate="best", aspect=ASPECT, task_field="group_id").fit(dev, client)
    table = selection_frame(best)
    assert set(table.columns) == {"smollm-5", "smollm-10", "similarity", "selected"}
    for judgment, item in zip(best.run(test, client), test, strict=True):
        chosen = best.selection.get(item.group_id) or best.selection["*"]
        assert judgment.extra["selected"] == chosen
        if judgment.ok:
            assert judgment.score == judgment.extra["members"][chosen]


def test_the_real_model_as_vote_aggregator(topical, client, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    similarity = SimilarityJudge(aspect=ASPECT, estimator="ridge").fit(topical, out_dir=tmp_path)
    vote = EnsembleJudge(members=_members(similarity)[::2], aggregate="llm_vote", aspect=ASPECT, max_tokens=48)
    judgments = vote.run(topical[:3], client)
    assert {j.status for j in judgments} <= {"ok", "unparsable", "error"}
    for judgment in judgments:
        if judgment.status == "ok":
            assert 1 <= judgment.score <= 3 and judgment.raw  # Topical-Chat coherence is 1-3
        elif judgment.status == "unparsable":
            assert judgment.score is None and judgment.raw is not None and judgment.reason
    assert sum(j.usage.calls + j.usage.cache_hits for j in judgments) >= 3  # members + aggregator


def test_best_per_subset_on_published_llmbar_verdicts(benchmarks_dir):
    items = list(load_items(benchmarks_dir / "llmbar.jsonl"))
    reference = benchmarks_dir / "reference" / "llmbar_evaluator_results.jsonl"
    names = ["GPT-4/Vanilla", "GPT-4/CoT", "ChatGPT-0301/Vanilla", "LLaMA2/Vanilla"]
    members = [Member(name=n, judgments=reference, judge_name=n, field="prediction.swap_false") for n in names]
    dev, test = items[::2], items[1::2]
    best = EnsembleJudge(members=members, aggregate="best", metric="accuracy").fit(dev)
    table = selection_frame(best)
    assert "Natural" in table.index and table.loc["*", "GPT-4/CoT"] > table.loc["*", "LLaMA2/Vanilla"]

    def accuracy(judgments):
        pairs = [(j.label, human_value(item, None)) for j, item in zip(judgments, test, strict=True) if j.ok]
        return sum(a == b for a, b in pairs) / len(pairs)

    chosen = accuracy(best.run(test))
    weakest = accuracy(EnsembleJudge(members=members[-1:], aggregate="mean").run(test))
    assert chosen > weakest + 0.15  # GPT-4 verdicts are chosen over LLaMA-2's on every subset
    vote = EnsembleJudge(members=members, aggregate="vote").run(test)
    for j in (j for j in vote if j.ok):  # a tie only where as many members prefer each output (the mean is 0.5)
        counts = j.extra["vote"]["counts"]
        assert j.label in ("a", "b") or (counts.get("a") == counts.get("b") and j.extra["vote"]["tie_break"])


def test_cli_fits_and_runs_an_ensemble_of_published_hanna_raters(benchmarks_dir, tmp_path):
    import json

    import yaml

    from judgelab.data import save_items
    from tests.e2e.cli import run_cli

    items = sorted(load_items(benchmarks_dir / "hanna.jsonl"), key=lambda item: item.group)[:110]
    data = save_items(items, tmp_path / "hanna.jsonl")
    reference = benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl"
    raters = ["Beluga-13B/eval_prompt_1", "Mistral-7B/eval_prompt_1", "ChatGPT/eval_prompt_1"]
    config = {"kind": "ensemble", "aggregate": "weighted", "aspect": "coherence",
              "members": [{"name": r, "judgments": str(reference), "judge_name": r, "field": "prediction.coherence"}
                          for r in raters]}
    (tmp_path / "ensemble.yaml").write_text(yaml.safe_dump(config))
    fitted = tmp_path / "fitted" / "ensemble.yaml"
    result = run_cli("fit", "--config", tmp_path / "ensemble.yaml", "--data", data, "--out", fitted)
    assert result.returncode == 0, result.stderr
    learned = yaml.safe_load(fitted.read_text())["learned"]
    assert len(learned["coef"]) == 3 and min(learned["coef"]) >= 0
    result = run_cli("judge", "--config", fitted, "--data", data, "--out", tmp_path / "run")
    assert result.returncode == 0, result.stderr
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["backend"] == "none" and run["counts"]["ok"] == 110 and run["usage"]["calls"] == 0


def test_llm_vote_over_judgments_files_of_real_members_sees_their_reasons(topical, client, tmp_path, monkeypatch):
    """The bring-your-own-judgments path bench/bench_ensemble_embedded.py takes: members run once into
    judgments files (rating, then a short reason), the vote reads those files and the real model aggregates."""
    from judgelab.data.io import load_judgments, save_judgments
    from judgelab.judges.ensemble import render_vote_prompt
    from judgelab.judges.prompted import PromptedJudge

    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    items = topical[:3]
    prompted = PromptedJudge(aspect=ASPECT, strategy={"cot": "suffix", "scale": 3}, max_tokens=24)
    member_file = run_judge(prompted, items, client, tmp_path / "member", meta=False).folder / "judgments.jsonl"
    similarity = SimilarityJudge(aspect=ASPECT, estimator="ridge").fit(topical, out_dir=tmp_path)
    similarity_file = save_judgments(similarity.run(items), tmp_path / "similarity.jsonl")
    vote = EnsembleJudge(aggregate="llm_vote", aspect=ASPECT, max_tokens=32, members=[
        Member(name="smollm", judgments=member_file), Member(name="similarity", judgments=similarity_file)])

    written = {j.item_id: j for j in load_judgments(member_file)}
    read = vote.member_judgments(items, None)["smollm"]
    explained = [j for j in written.values() if j.ok and j.explanation]
    assert explained, "cot=suffix members should write a reason after the rating"
    for judgment in explained:
        assert read[judgment.item_id].explanation == judgment.explanation
        item = next(i for i in items if i.id == judgment.item_id)
        prompt = render_vote_prompt(item, ASPECT, [("smollm", read[item.id])], (1, 3))[0]["content"]
        assert f"Reason: {judgment.explanation.strip()}" in prompt

    judgments = vote.run(items, client)
    for judgment in judgments:
        # Members are files: the only LLM call behind a vote is the aggregator's (or its cache hit).
        assert judgment.usage.calls + judgment.usage.cache_hits == (0 if judgment.status == "error" else 1)
        if judgment.status == "ok":
            assert 1 <= judgment.score <= 3 and judgment.explanation
        elif judgment.status == "unparsable":
            assert judgment.score is None and judgment.raw is not None
