"""The pairwise judge's logic against a scripted backend: both orders, consistency, ties, statuses.

The scripted backend reads which output the prompt shows first and answers by a rule, so each
test states the judge's behaviour (consistent, position-biased, unparsable in one order, refusing
a request) and checks what the judgments say. The real embedded model runs the same path in
tests/integration/test_pairwise_judge.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgelab.commands.judge import judge_config_from_options
from judgelab.data.item import Item
from judgelab.errors import BackendError, ConfigError, RequestError
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.llm import Client, CompletionCache, Request
from judgelab.llm.backends.base import TransientBackendError
from judgelab.llm.backends.embedded import PromptTooLongError
from judgelab.metrics import meta_evaluate
from judgelab.runner.run import run_judge
from tests.doubles import ScriptedBackend, scripted_client


def judge_backend(reply: Callable[[Request], str]) -> ScriptedBackend:
    """A scripted model answering each request with ``reply(request)`` (an exception it raises propagates)."""
    return ScriptedBackend(lambda request, sample_index: reply(request), max_concurrency=4)


def shown_first(request: Request) -> str:
    """The text shown as "Output (a)" in a judge prompt."""
    return request.messages[-1].content.split("# Output (a):\n", 1)[1].split("\n", 1)[0]


def is_judge_prompt(request: Request) -> bool:
    return "# Output (a):" in request.messages[-1].content


def prefers_good(request: Request) -> str:
    """A consistent judge: picks whichever output says GOOD, wherever it is shown."""
    return "Output (a)" if "GOOD" in shown_first(request) else "Output (b)"


def always_first(request: Request) -> str:
    """A position-biased judge: always the first output shown."""
    return "Output (a)"


def pair(n: int, good: str = "a", **fields) -> Item:
    outputs = {"output_a": f"GOOD answer {n}", "output_b": f"weak answer {n}"}
    if good == "b":
        outputs = {"output_a": f"weak answer {n}", "output_b": f"GOOD answer {n}"}
    return Item(id=f"p{n}", dataset="llmbar", instruction=f"Answer question {n}.", label=good,
                **{**outputs, **fields})


ITEMS = [pair(0, "a"), pair(1, "b"), pair(2, "a"), pair(3, "b")]


@pytest.fixture
def make_client():
    clients: list[Client] = []

    def make(reply: Callable[[Request], str], **kwargs) -> tuple[Client, ScriptedBackend]:
        backend = judge_backend(reply)
        client = scripted_client(backend, **kwargs)
        clients.append(client)
        return client, backend

    yield make
    for client in clients:
        client.close()


# -- verdicts ---------------------------------------------------------------------------------


def test_a_consistent_judge_gets_its_verdict_in_both_orders(make_client):
    client, backend = make_client(prefers_good)
    judgments = PairwiseJudge().run(ITEMS, client)
    assert [j.label for j in judgments] == ["a", "b", "a", "b"]
    assert all(j.status == "ok" and j.extra["consistent"] is True for j in judgments)
    assert judgments[1].extra["verdicts"] == {"original": "b", "swapped": "b"}
    # two separate requests per item, one per order, with the outputs swapped in the second
    assert len(backend.requests) == 8
    shown = sorted(shown_first(r) for r in backend.requests if "answer 0" in shown_first(r))
    assert shown == ["GOOD answer 0", "weak answer 0"]
    assert all(j.usage.calls == 2 and j.usage.prompt_tokens == 20 for j in judgments)


def test_a_verdict_that_flips_with_the_order_is_a_tie_by_default(make_client):
    client, _ = make_client(always_first)
    judgments = PairwiseJudge().run(ITEMS, client)
    assert [j.label for j in judgments] == ["tie"] * 4
    assert all(j.status == "ok" and j.extra["consistent"] is False for j in judgments)
    assert judgments[0].extra["verdicts"] == {"original": "a", "swapped": "b"}


def test_inconsistent_first_keeps_the_original_orders_verdict(make_client):
    client, _ = make_client(always_first)
    judgments = PairwiseJudge(inconsistent="first").run(ITEMS, client)
    assert [j.label for j in judgments] == ["a"] * 4
    assert all(j.extra["consistent"] is False for j in judgments)


def test_without_swap_one_request_per_item_and_no_consistency(make_client):
    client, backend = make_client(always_first)
    judgments = PairwiseJudge(swap=False).run(ITEMS, client)
    assert [j.label for j in judgments] == ["a"] * 4
    assert len(backend.requests) == 4
    assert sorted(shown_first(r) for r in backend.requests) == sorted(item.output_a for item in ITEMS)
    assert judgments[0].extra == {"verdicts": {"original": "a"}}


def test_chain_of_thought_reads_the_closing_verdict_and_keeps_the_explanation(make_client):
    def reasoned(request: Request) -> str:
        better = "a" if "GOOD" in shown_first(request) else "b"
        return f"Output (a) looks long, Output (b) looks short. Therefore, Output ({better}) is better."

    client, backend = make_client(reasoned)
    judgments = PairwiseJudge(cot="prefix").run(ITEMS[:2], client)
    assert [j.label for j in judgments] == ["a", "b"]
    assert judgments[0].explanation.startswith("Output (a) looks long")
    assert "brief explanation" in backend.requests[0].messages[-1].content
    assert backend.requests[0].max_tokens == 512


def test_options_reach_the_prompt_and_the_request(make_client):
    client, backend = make_client(prefers_good)
    PairwiseJudge(rules=False, system=None, temperature=0.7, seed=3, max_tokens=9).run(ITEMS[:1], client)
    request = backend.requests[0]
    assert [m.role for m in request.messages] == ["user"]
    assert "rules of the evaluation" not in request.messages[-1].content
    assert (request.temperature, request.seed, request.max_tokens) == (0.7, 3, 9)
    client2, backend2 = make_client(prefers_good)
    PairwiseJudge().run(ITEMS[:1], client2)
    assert backend2.requests[0].messages[0].role == "system"
    assert "rules of the evaluation" in backend2.requests[0].messages[-1].content


# -- reference and metrics stages -------------------------------------------------------------


def staged(request: Request) -> str:
    prompt = request.messages[-1].content
    if is_judge_prompt(request):
        return prefers_good(request)
    if "propose at most three" in prompt:
        return "1. Does it answer the question?\n2. Is it concise?\n3. Is it correct?\n4. Extra?"
    return "A reference answer."


def test_reference_and_metrics_stages_feed_the_comparison_prompt(make_client):
    client, backend = make_client(staged)
    judgments = PairwiseJudge(reference="self", metrics=True).run(ITEMS[:2], client)
    assert [j.label for j in judgments] == ["a", "b"]
    judge_prompts = [r.messages[-1].content for r in backend.requests if is_judge_prompt(r)]
    assert len(judge_prompts) == 4 and len(backend.requests) == 8
    assert all("A reference answer." in p and "2. Is it concise?" in p and "Extra?" not in p for p in judge_prompts)
    assert judgments[0].extra["checklist"] == ["Does it answer the question?", "Is it concise?", "Is it correct?"]
    assert judgments[0].extra["reference"] == "A reference answer."
    assert judgments[0].usage.calls == 4  # reference + checklist + two orders


def test_an_empty_auxiliary_stage_is_an_error_for_that_item_only(make_client):
    def empty_reference_for_p1(request: Request) -> str:
        if not is_judge_prompt(request) and "question 1" in request.messages[-1].content:
            return "   "
        return staged(request)

    client, _ = make_client(empty_reference_for_p1)
    judgments = PairwiseJudge(reference="self").run(ITEMS[:3], client)
    assert [j.status for j in judgments] == ["ok", "error", "ok"]
    assert "reference stage returned nothing usable" in judgments[1].reason
    assert judgments[1].label is None and judgments[1].usage.calls == 1


# -- unparsable and errors ----------------------------------------------------------------------


def test_no_order_parsed_is_unparsable_with_both_replies_kept(make_client):
    client, _ = make_client(lambda request: "Both are fine, I cannot choose.")
    [judgment] = PairwiseJudge().run(ITEMS[:1], client)
    assert judgment.status == "unparsable" and judgment.label is None and judgment.score is None
    assert judgment.reason.startswith("original order: no output named; swapped order: no output named")
    assert judgment.raw == judgment.extra["raw_swapped"] == "Both are fine, I cannot choose."
    assert judgment.extra["verdicts"] == {"original": None, "swapped": None}
    assert judgment.extra["consistent"] is None


def test_one_unparsable_order_makes_the_judgment_unparsable_and_keeps_the_other_verdict(make_client):
    def mute_when_swapped(request: Request) -> str:
        return "Output (a)" if "GOOD" in shown_first(request) else "Hmm."

    client, _ = make_client(mute_when_swapped)
    [judgment] = PairwiseJudge().run(ITEMS[:1], client)
    assert judgment.status == "unparsable" and judgment.label is None
    assert judgment.extra["verdicts"] == {"original": "a", "swapped": None}
    assert judgment.reason.startswith("swapped order: no output named")
    assert "other order's verdict is in extra.verdicts" in judgment.reason
    assert judgment.raw == "Output (a)" and judgment.extra["raw_swapped"] == "Hmm."


def test_an_item_without_an_instruction_is_an_error_and_the_rest_are_judged(make_client):
    client, backend = make_client(prefers_good)
    broken = Item(id="x", output_a="GOOD", output_b="weak", label="a")
    judgments = PairwiseJudge().run([ITEMS[0], broken, ITEMS[1]], client)
    assert [j.status for j in judgments] == ["ok", "error", "ok"]
    assert "item 'x' has no 'instruction' text" in judgments[1].reason  # the field to fill, not an internal name
    assert len(backend.requests) == 4


def test_a_prompt_too_long_for_the_context_fails_that_item_only(make_client):
    def too_long_for_p2(request: Request) -> str:
        if "question 2" in request.messages[-1].content:
            raise PromptTooLongError("prompt has 5000 tokens; the context window is 2048")
        return prefers_good(request)

    client, backend = make_client(too_long_for_p2)
    seen: list[str] = []
    judgments = PairwiseJudge().run(ITEMS, client, on_judgment=lambda j: seen.append(j.item_id))
    assert [j.status for j in judgments] == ["ok", "ok", "error", "ok"]
    assert "request failed: prompt has 5000 tokens" in judgments[2].reason
    assert sorted(seen) == ["p0", "p1", "p2", "p3"]  # every item reported exactly once
    assert client.usage.calls == 6


def test_a_request_rejected_as_invalid_fails_its_item(make_client):
    def reject_p1_when_swapped(request: Request) -> str:
        if is_judge_prompt(request) and shown_first(request) == "GOOD answer 1":
            raise RequestError("server rejected the request: HTTP 400: bad input")
        return prefers_good(request)

    client, _ = make_client(reject_p1_when_swapped)
    judgments = PairwiseJudge().run(ITEMS, client)
    assert [j.status for j in judgments] == ["ok", "error", "ok", "ok"]
    assert judgments[1].reason == "the swapped-order request failed: server rejected the request: HTTP 400: bad input"
    assert judgments[1].extra["verdicts"] == {"original": "b"}  # what the order that ran said
    assert judgments[1].usage.calls == 1


def test_a_rejected_auxiliary_request_fails_its_item(make_client):
    def reject_reference_of_p0(request: Request) -> str:
        if not is_judge_prompt(request) and "question 0" in request.messages[-1].content:
            raise RequestError("prompt too long")
        return staged(request)

    client, _ = make_client(reject_reference_of_p0)
    judgments = PairwiseJudge(reference="self").run(ITEMS[:2], client)
    assert [j.status for j in judgments] == ["error", "ok"]
    assert judgments[0].reason == "the reference stage failed: prompt too long"


def test_a_backend_that_refuses_every_request_ends_the_run(make_client):
    def unauthorised(request: Request) -> str:
        raise BackendError("server: HTTP 401: invalid key")

    client, _ = make_client(unauthorised)
    with pytest.raises(BackendError, match="HTTP 401"):
        PairwiseJudge().run(ITEMS, client)


def test_a_backend_that_stays_down_ends_the_run(make_client):
    def down(request: Request) -> str:
        raise TransientBackendError("overloaded")

    client, _ = make_client(down, max_attempts=2)
    with pytest.raises(BackendError, match="gave up after 2 attempts"):
        PairwiseJudge().run(ITEMS, client)


def test_pointwise_items_and_pointwise_options_are_refused_up_front(make_client):
    client, backend = make_client(prefers_good)
    with pytest.raises(ConfigError, match="item 's' is a pointwise item"):
        PairwiseJudge().run([ITEMS[0], Item(id="s", output="a summary")], client)
    with pytest.raises(ConfigError, match="takes no examples_pool"):
        PairwiseJudge().run(ITEMS, client, examples_pool=ITEMS)
    assert not backend.requests


# -- cache, metrics, config -------------------------------------------------------------------


def test_each_order_is_cached_separately_and_a_rerun_pays_nothing(make_client, tmp_path: Path):
    cache = tmp_path / "cache.sqlite"
    client, backend = make_client(prefers_good, cache=CompletionCache(cache))
    first = PairwiseJudge().run(ITEMS, client)
    assert client.usage.calls == 8
    client2, backend2 = make_client(prefers_good, cache=CompletionCache(cache))
    again = PairwiseJudge().run(ITEMS, client2)
    assert [j.label for j in again] == [j.label for j in first]
    assert client2.usage.calls == 0 and client2.usage.cache_hits == 8 and not backend2.requests
    assert all(j.usage.cache_hits == 2 and j.usage.calls == 0 for j in again)
    # the original order alone is the same request: swap=False is served from the same cache
    client3, backend3 = make_client(prefers_good, cache=CompletionCache(cache))
    PairwiseJudge(swap=False).run(ITEMS, client3)
    assert client3.usage.calls == 0 and client3.usage.cache_hits == 4


def test_meta_evaluation_reads_accuracy_and_positional_consistency(make_client):
    def biased_on_odd_items(request: Request) -> str:
        prompt = request.messages[-1].content
        return always_first(request) if "question 1" in prompt or "question 3" in prompt else prefers_good(request)

    client, _ = make_client(biased_on_odd_items)
    for inconsistent in ("tie", "first"):
        judgments = PairwiseJudge(inconsistent=inconsistent).run(ITEMS, client)
        report = meta_evaluate(ITEMS, judgments, n_resamples=0)["pairwise"]
        consistent = [j.extra["consistent"] for j in judgments]
        assert consistent == [True, False, True, False]
        assert report["positional_consistency"].value == pytest.approx(0.5)
        # tie: the flipped items count half (LLMBar; the default) or wrong; first: the original order
        # said "a" for both ("b" is right), so they are wrong whatever the rule
        assert report["accuracy"].value == pytest.approx(0.75 if inconsistent == "tie" else 0.5)
        wrong = meta_evaluate(ITEMS, judgments, n_resamples=0, ties="wrong")["pairwise"]
        assert wrong["accuracy"].value == pytest.approx(0.5)


def test_unparsable_judgments_are_counted_not_scored(make_client):
    def mute_on_p0(request: Request) -> str:
        return "??" if "question 0" in request.messages[-1].content else prefers_good(request)

    client, _ = make_client(mute_on_p0)
    judgments = PairwiseJudge().run(ITEMS, client)
    report = meta_evaluate(ITEMS, judgments, n_resamples=0)
    assert report.coverage.n_unparsable == 1 and report.coverage.n_used == 3
    assert report["pairwise"]["accuracy"].value == 1.0
    assert report["pairwise"]["positional_consistency"].n == 3


def test_run_judge_writes_a_line_per_item(make_client, tmp_path: Path):
    client, _ = make_client(always_first)
    result = run_judge(PairwiseJudge(), ITEMS, client, tmp_path / "run")
    lines = (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()
    assert len(lines) == 4 and '"label":"tie"' in lines[0].replace(" ", "")
    assert result.counts == {"ok": 4, "unparsable": 0, "error": 0}


def test_config_is_data(tmp_path: Path):
    judge = PairwiseJudge(cot="prefix", metrics=True, inconsistent="first")
    loaded = load_judge(judge.save(tmp_path / "pairwise.yaml"))
    assert isinstance(loaded, PairwiseJudge) and loaded == judge and loaded.digest() == judge.digest()
    assert judge_from_dict({"kind": "pairwise"}) == PairwiseJudge()
    assert PairwiseJudge().digest() != PairwiseJudge(swap=False).digest()
    with pytest.raises(ConfigError, match="field 'inconsistent'"):
        judge_from_dict({"kind": "pairwise", "inconsistent": "average"})
    with pytest.raises(ConfigError, match="field 'reference'"):
        judge_from_dict({"kind": "pairwise", "reference": "dialectic"})


def test_the_cli_builds_a_pairwise_judge_without_an_aspect(tmp_path: Path):
    path = PairwiseJudge(cot="prefix").save(tmp_path / "pairwise.yaml")
    overrides = dict(family=None, task=None, criteria=None, strategy=None, score=None, samples=None)
    judge = judge_config_from_options(path, None, None, temperature=0.5, **overrides)
    assert judge == PairwiseJudge(cot="prefix", temperature=0.5)
    with pytest.raises(ConfigError, match="aspect"):
        judge_config_from_options(None, None, None, temperature=None, **overrides)  # prompted judges still need one
