"""The pairwise judge's ``score: logprob``: the probability of its verdict from the letter's logprobs.

A scripted model answers each order with a letter and the letters' probabilities, as a backend with
logprobs returns them; the tests check the mapping back to the item's names in both orders, the
bound on the letters' mass, the refusal of ``cot: prefix`` and that the label is what it was. The
real embedded model runs the same path in tests/integration/test_pairwise_logprob.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import judge_from_dict
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.llm import Request
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import Completion, TokenLogprob, TopLogprob
from judgelab.parse import ParsedPreference, parse_preference, preference_probability
from tests.doubles import ScriptedBackend, scripted_client

ITEMS = [Item(id="p0", instruction="Answer question 0.", output_a="GOOD answer 0", output_b="weak answer 0",
              label="a"),
         Item(id="p1", instruction="Answer question 1.", output_a="weak answer 1", output_b="GOOD answer 1",
              label="b")]


def good_first(request: Request) -> bool:
    return "GOOD" in request.messages[-1].content.split("# Output (a):\n", 1)[1].split("\n", 1)[0]


def letter(probabilities: dict[str, float], *, before: tuple[str, ...] = (), after: str = ")") -> Completion:
    """A reply whose verdict token has these alternatives (the likeliest is written), after ``before`` tokens."""
    top = tuple(TopLogprob(token=t, logprob=math.log(p)) for t, p in sorted(probabilities.items(), key=lambda kv: -kv[1]))
    chosen = top[0]
    tokens = [TokenLogprob(token=t, logprob=-0.01) for t in before]
    tokens += [TokenLogprob(token=chosen.token, logprob=chosen.logprob, top=top), TokenLogprob(token=after, logprob=-0.01)]
    return Completion(text="".join(t.token for t in tokens), logprobs=tuple(tokens), prompt_tokens=10,
                      completion_tokens=len(tokens))


def position_biased(request: Request, _: int) -> Completion:
    """Prefers GOOD, but leans to the output shown first: P(GOOD) 0.8 shown first, 2/3 shown second."""
    if good_first(request):
        return letter({"a": 0.72, "b": 0.18, "c": 0.1})
    return letter({"b": 0.6, "a": 0.3, "c": 0.1})


def run(reply: Callable[[Request, int], Completion], judge: PairwiseJudge, items=ITEMS, **backend):
    scripted = ScriptedBackend(reply, **backend)
    with scripted_client(scripted) as client:
        return judge.run(items, client), scripted


def test_p_a_is_mapped_to_the_items_names_in_both_orders():
    judgments, backend = run(position_biased, PairwiseJudge(score="logprob"))
    first, second = judgments
    # item p0: GOOD is output_a; the swapped order shows it second, where the shown "b" is output_a
    assert first.extra["p_a"] == {"original": pytest.approx(0.8), "swapped": pytest.approx(2 / 3)}
    assert first.extra["letter_mass"] == {"original": pytest.approx(0.9), "swapped": pytest.approx(0.9)}
    assert first.extra["preference"] == pytest.approx((0.8 + 2 / 3) / 2)
    assert first.extra["confidence"] == pytest.approx((0.8 + 2 / 3) / 2)
    # item p1: GOOD is output_b, so the preference for output_a is low and the confidence its complement
    assert second.extra["p_a"] == {"original": pytest.approx(1 / 3), "swapped": pytest.approx(0.2)}
    assert second.extra["preference"] == pytest.approx((1 / 3 + 0.2) / 2)
    assert second.extra["confidence"] == pytest.approx(1 - (1 / 3 + 0.2) / 2)
    assert [j.label for j in judgments] == ["a", "b"] and all(j.status == "ok" for j in judgments)
    assert "p_a_unparsable" not in first.extra
    # each order's reply is forced to open at the letter and asks for the top alternatives
    request = backend.requests[0]
    assert (request.assistant_prefix, request.logprobs, request.top_logprobs, request.max_tokens) == (
        "Output (", True, 20, 2)
    assert first.raw == "Output (a)" and first.extra["raw_swapped"] == "Output (b)"


def test_without_swap_the_preference_is_the_one_orders_p_a():
    judgments, backend = run(position_biased, PairwiseJudge(score="logprob", swap=False))
    assert len(backend.requests) == 2
    assert judgments[0].extra["p_a"] == {"original": pytest.approx(0.8)}
    assert judgments[0].extra["preference"] == pytest.approx(0.8)


def test_letters_with_little_mass_leave_that_order_without_a_probability():
    def hesitant_when_swapped(request: Request, _: int) -> Completion:
        if good_first(request):
            return letter({"a": 0.72, "b": 0.18, "c": 0.1})
        # writes "b", but most of the probability is on letters that name no output
        return letter({"b": 0.25, "a": 0.2, "c": 0.2, "d": 0.2, "e": 0.15})

    judgments, _ = run(hesitant_when_swapped, PairwiseJudge(score="logprob"), items=ITEMS[:1])
    [judgment] = judgments
    assert judgment.extra["p_a"] == {"original": pytest.approx(0.8), "swapped": None}
    assert judgment.extra["letter_mass"]["swapped"] == pytest.approx(0.45)
    assert "0.45" in judgment.extra["p_a_unparsable"]["swapped"]
    assert "below 0.5" in judgment.extra["p_a_unparsable"]["swapped"]
    # not a one-order soft verdict: it would keep the position bias the swap is there to cancel
    assert judgment.extra["preference"] is None and judgment.extra["confidence"] is None
    # the written letters still give the label as before
    assert judgment.status == "ok" and judgment.label == "a"


def test_cot_prefix_is_refused_with_logprob_scores():
    with pytest.raises(ConfigError, match="needs cot 'none'"):
        PairwiseJudge(score="logprob", cot="prefix")
    with pytest.raises(ConfigError, match="needs cot 'none'"):
        judge_from_dict({"kind": "pairwise", "cot": "prefix", "score": "logprob"})


def test_the_label_and_the_default_requests_are_unchanged():
    def text_only(request: Request, index: int) -> Completion:
        return position_biased(request, index).model_copy(update={"logprobs": None})

    labelled, backend = run(text_only, PairwiseJudge())
    scored, _ = run(position_biased, PairwiseJudge(score="logprob"))
    assert [(j.status, j.label, j.extra["verdicts"], j.extra["consistent"]) for j in labelled] == [
        (j.status, j.label, j.extra["verdicts"], j.extra["consistent"]) for j in scored]
    assert "preference" not in labelled[0].extra and "p_a" not in labelled[0].extra
    # the default request is what it was before the option existed (same cache keys), as is the digest
    request = backend.requests[0]
    assert (request.assistant_prefix, request.logprobs, request.top_logprobs, request.max_tokens) == ("", False, 0, 16)
    assert "score" not in PairwiseJudge().model_dump() and PairwiseJudge().digest() == "a232cf2f4bdd"
    assert PairwiseJudge(score="logprob").digest() != PairwiseJudge().digest()


def test_a_backend_without_prefixes_reads_the_letter_where_the_parser_finds_it():
    def unforced(request: Request, _: int) -> Completion:
        probabilities = {"a": 0.72, "b": 0.18} if good_first(request) else {"b": 0.6, "a": 0.3}
        return letter(probabilities, before=("Output", " ("))

    caps = Capabilities(logprobs=True, max_top_logprobs=20, assistant_prefix=False)
    judgments, backend = run(unforced, PairwiseJudge(score="logprob"), items=ITEMS[:1], capabilities=caps)
    assert backend.requests[0].assistant_prefix == "" and backend.requests[0].max_tokens == 16
    assert judgments[0].extra["p_a"] == {"original": pytest.approx(0.8), "swapped": pytest.approx(2 / 3)}
    assert judgments[0].raw == "Output (a)"


def test_a_reply_without_logprobs_has_no_probability_and_says_why():
    judgments, _ = run(lambda request, i: Completion(text="a)"), PairwiseJudge(score="logprob"), items=ITEMS[:1])
    assert judgments[0].extra["p_a"] == {"original": None, "swapped": None}
    assert judgments[0].extra["p_a_unparsable"]["original"] == "the backend returned no logprobs"
    assert judgments[0].status == "ok" and judgments[0].extra["preference"] is None


@pytest.mark.parametrize("variants, expected", [
    ({" A": 0.6, "(b": 0.3, "the": 0.1}, 0.6 / 0.9),   # case, spaces and brackets do not matter
    ({"1": 0.5, "2": 0.25, "b": 0.25}, 0.5),            # the parser reads 1 and 2 as a and b: so does this
])
def test_letter_variants_count_as_the_letter(variants, expected):
    completion = letter(variants)
    parsed = ParsedPreference(label="a", status="ok", span=(8, 9))
    found = preference_probability(parsed, completion.logprobs, assistant_prefix="Output (")
    assert found.p_a == pytest.approx(expected)


def test_the_chosen_token_is_counted_once_and_a_letter_outside_the_top_counts_as_nothing():
    completion = letter({"a": 0.9, "Output": 0.05})
    parsed = parse_preference("Output (" + completion.text)
    found = preference_probability(parsed, completion.logprobs, assistant_prefix="Output (", swapped=True)
    assert found.p_a == pytest.approx(0.0) and found.mass == pytest.approx(0.9)


def test_an_unparsed_reply_has_no_verdict_position():
    parsed = parse_preference("I cannot tell.")
    found = preference_probability(parsed, letter({"I": 0.9}).logprobs)
    assert found.p_a is None and found.reason == "no verdict position in the reply"
