"""PromptedJudge logic with a scripted model: statuses, stages, ordering, self-consistency, logprobs.

The same judge runs against the real embedded model in tests/integration/test_prompted_judge.py.
"""

from __future__ import annotations

import pytest

from judgelab.data import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.types import Completion
from judgelab.strategy import Strategy
from tests.doubles import ScriptedBackend, digit_logprobs, scripted_client

CRITERIA = "Coherence: the summary is well organised."


def items(n_groups: int = 2, per_group: int = 3) -> list[Item]:
    return [
        Item(id=f"g{g}-{k}", group_id=f"g{g}", source=f"Article {g} text.", output=f"Summary {g}.{k}",
             scores={"coherence": float(1 + (g + k) % 5)}, scale=(1, 5))
        for g in range(n_groups) for k in range(per_group)
    ]


def judge(**changes) -> PromptedJudge:
    return PromptedJudge(aspect="coherence", family="summarisation", criteria=CRITERIA, **changes)


def reply_rating(rating: str):
    return lambda request, i: rating


def test_ratings_become_scores_and_keep_the_raw_reply():
    backend = ScriptedBackend(reply_rating("The summary flows well.\nRating: [[4]]"))
    with scripted_client(backend) as client:
        judgments = judge().run(items(), client)
    assert [j.score for j in judgments] == [4.0] * 6
    assert all(j.status == "ok" and "Rating: [[4]]" in j.raw for j in judgments)
    assert judgments[0].explanation == "The summary flows well."
    assert judgments[0].usage.calls == 1 and judgments[0].aspect == "coherence"


def test_unparsable_replies_are_recorded_never_scored():
    backend = ScriptedBackend(reply_rating("I cannot decide."))
    with scripted_client(backend) as client:
        judgments = judge().run(items(), client)
    assert all(j.status == "unparsable" and j.score is None for j in judgments)
    assert all(j.raw == "I cannot decide." and j.reason for j in judgments)


def test_out_of_scale_ratings_are_unparsable_not_clipped():
    backend = ScriptedBackend(reply_rating("Rating: [[9]]"))
    with scripted_client(backend) as client:
        [first, *_] = judge().run(items(1, 1), client)
    assert first.status == "unparsable" and first.score is None


def test_items_are_sent_grouped_by_source_but_returned_in_input_order():
    mixed = [items()[i] for i in (0, 3, 1, 4, 2, 5)]
    backend = ScriptedBackend(reply_rating("Rating: [[3]]"))
    with scripted_client(backend, max_concurrency=1) as client:
        judgments = judge().run(mixed, client)
    assert [j.item_id for j in judgments] == [item.id for item in mixed]
    sent = [next(i.id for i in mixed if i.output in r.messages[-1].content) for r in backend.requests]
    assert sent == sorted(sent)
    backend = ScriptedBackend(reply_rating("Rating: [[3]]"))
    with scripted_client(backend, max_concurrency=1) as client:
        judge().run(mixed, client, order_by_source=False)
    sent = [next(i.id for i in mixed if i.output in r.messages[-1].content) for r in backend.requests]
    assert sent == [item.id for item in mixed]


def test_rating_first_strategies_use_the_assistant_prefix():
    backend = ScriptedBackend(reply_rating("2]]"))
    with scripted_client(backend) as client:
        judgments = judge(strategy=Strategy(cot="none")).run(items(1, 2), client)
    assert backend.requests[0].assistant_prefix == "Rating: [["
    assert backend.requests[0].max_tokens == 16
    assert [j.score for j in judgments] == [2.0, 2.0] and judgments[0].raw == "Rating: [[2]]"


def test_the_token_budget_is_what_each_request_asks_for():
    for strategy, expected in ((Strategy(cot="none"), 16), (Strategy(cot="prefix"), 512),
                               (Strategy(cot="prefix", reference="dialectic"), 768)):
        backend = ScriptedBackend(reply_rating("Rating: [[3]]"))
        made = judge(strategy=strategy)
        with scripted_client(backend) as client:
            made.run(items(1), client)
        assert made.token_budget == expected == backend.requests[-1].max_tokens
    assert judge(strategy=Strategy(cot="none"), max_tokens=40).token_budget == 40


def test_logprob_score_is_the_expected_rating():
    probabilities = {"1": 0.1, "2": 0.1, "3": 0.2, "4": 0.4, "5": 0.1, "The": 0.1}

    def reply(request, i):
        return Completion(text="4]]", logprobs=digit_logprobs(probabilities, "4"), prompt_tokens=5, completion_tokens=2)

    with scripted_client(ScriptedBackend(reply)) as client:
        [judgment] = judge(strategy=Strategy(cot="none"), score="logprob").run(items(1, 1), client)
    expected = (0.1 * 1 + 0.1 * 2 + 0.2 * 3 + 0.4 * 4 + 0.1 * 5) / 0.9
    assert judgment.score == pytest.approx(expected)
    assert judgment.extra["logprob_mass"] == [pytest.approx(0.9)]
    assert judgment.extra["parsed_scores"] == [4.0]


def test_self_consistency_averages_samples_that_parsed():
    ratings = {0: "Rating: [[2]]", 1: "Rating: [[4]]", 2: "no idea"}
    backend = ScriptedBackend(lambda request, i: ratings[i])
    with scripted_client(backend) as client:
        [judgment] = judge(samples=3, temperature=1.0).run(items(1, 1), client)
    assert judgment.score == 3.0 and judgment.extra["sample_scores_ok"] == 2
    assert backend.calls == 3 and len(judgment.extra["samples"]) == 3
    with pytest.raises(ConfigError, match="temperature"):
        judge(samples=3)


def test_auxiliary_texts_are_generated_once_per_aspect_and_per_item():
    def reply(request, i):
        prompt = request.messages[-1].content
        if "Rating" in prompt or "rating" in prompt:
            return "Rating: [[3]]"
        return "1. Is it clear?\n2. Is it ordered?" if "?" in prompt or "question" in prompt.lower() else "Some text."

    backend = ScriptedBackend(reply)
    strategy = Strategy(criteria="self", autocot=True, reference="self", metrics=True)
    pool = items(2, 2)
    with scripted_client(backend) as client:
        judgments = judge(strategy=strategy).run(pool, client)
    assert all(j.status == "ok" for j in judgments)
    prompts = [r.messages[-1].content for r in backend.requests]
    judged = [p for p in prompts if any(item.output in p for item in pool)]
    per_source = [p for p in prompts if p not in judged and ("Article 0" in p or "Article 1" in p)]
    shared = [p for p in prompts if "Article" not in p]
    assert len(judged) == 4
    # criteria and auto-CoT steps once for the aspect and scale
    assert len(shared) == 2
    # a reference and a checklist per item; their prompts depend only on the source, so the two
    # items of each source share one paid call per stage
    assert len(per_source) == 4 and len(set(per_source)) == 4
    assert all(j.usage.calls + j.usage.cache_hits == 3 for j in judgments)


def test_examples_never_include_the_judged_item():
    pool = items(3, 4)
    backend = ScriptedBackend(reply_rating("Rating: [[3]]"))
    with scripted_client(backend, max_concurrency=1) as client:
        judge(strategy=Strategy(examples=3)).run(pool, client)
    for item, request in zip(sorted(pool, key=lambda i: (i.group, i.id)), backend.requests, strict=True):
        prompt = request.messages[-1].content
        assert prompt.count(item.output) == 1  # only where it is judged, never as an example


def test_a_missing_field_is_an_error_judgment_not_a_crash():
    broken = Item(id="x", source=None, output="text", scores={"coherence": 3.0})
    backend = ScriptedBackend(reply_rating("Rating: [[3]]"))
    with scripted_client(backend) as client:
        [judgment] = judge().run([broken], client)
    assert judgment.status == "error" and "source" in judgment.reason and backend.calls == 0


def test_configs_round_trip_through_files(tmp_path):
    original = judge(strategy=Strategy(scale=10, cot="none", order="IC-TD-ER"), score="logprob")
    for name in ("judge.yaml", "judge.json"):
        loaded = load_judge(original.save(tmp_path / name))
        assert loaded == original and loaded.digest() == original.digest()
    with pytest.raises(ConfigError, match="field 'strategy.scale'"):
        judge_from_dict({"kind": "prompted", "aspect": "x", "strategy": {"scale": 7}})
    with pytest.raises(ConfigError, match="'kind' must be one of"):
        judge_from_dict({"kind": "oracle"})


def test_a_rejected_request_is_that_items_error_and_the_rest_go_on():
    from judgelab.errors import RequestError

    def reply(request, i):
        if "Summary 0.1" in request.messages[-1].content:
            raise RequestError("prompt has 5000 tokens; the context window is 4096")
        return "Rating: [[3]]"

    with scripted_client(ScriptedBackend(reply)) as client:
        judgments = judge().run(items(1, 3), client)
    assert [j.status for j in judgments] == ["ok", "error", "ok"]
    assert "context window" in judgments[1].reason and judgments[1].score is None
