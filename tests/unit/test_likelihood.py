"""Likelihood judge logic with a scripted backend (the real model: tests/integration/test_likelihood_judge.py)."""

from __future__ import annotations

import pytest

from judgelab.data.item import Item
from judgelab.errors import CapabilityError
from judgelab.judges import judge_from_dict
from judgelab.judges.likelihood import LikelihoodJudge
from judgelab.llm import Request
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import Completion, TokenLogprob
from tests.doubles import ScriptedBackend, scripted_client

SCORING = Capabilities(assistant_prefix=True, prefix_scoring=True)


def scored(request: Request, _: int) -> Completion:
    """Each word of the reply is one token, with logprob -(its length)."""
    words = request.assistant_prefix.split(" ")
    return Completion(text="", prefix_logprobs=tuple(TokenLogprob(token=w, logprob=-float(len(w))) for w in words),
                      prompt_tokens=20)


def items() -> list[Item]:
    return [Item(id="long", source="an MR", output="a much longer sentence", dataset="sfres", group_id="g1"),
            Item(id="short", source="an MR", output="ok yes", dataset="sfres", group_id="g1"),
            Item(id="empty", source="an MR", output="  ", dataset="sfres", group_id="g2")]


@pytest.mark.parametrize(("reduce", "expected"), [("mean", -19 / 4), ("sum", -19.0), ("min", -8.0)])
def test_reductions_of_the_token_logprobs(reduce, expected):
    backend = ScriptedBackend(scored, capabilities=SCORING)
    judgments = LikelihoodJudge(aspect="naturalness", reduce=reduce).run(items(), scripted_client(backend))
    long = judgments[0]
    assert long.status == "ok" and long.score == pytest.approx(expected)
    assert long.extra == {"tokens": 4, "logprob_mean": -4.75, "logprob_sum": -19.0, "logprob_min": -8.0}


def test_prompt_names_the_quality_and_the_source_and_the_output_is_the_scored_reply():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    LikelihoodJudge(aspect="naturalness").run(items()[:1], scripted_client(backend))
    request = backend.requests[0]
    assert request.score_prefix and request.assistant_prefix == "a much longer sentence"
    prompt = request.messages[-1].content
    assert prompt.startswith("Write a natural sentence that expresses the structured data expression below.")
    assert "an MR" in prompt and "a much longer sentence" not in prompt


def test_own_instruction_replaces_the_family_wording():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    LikelihoodJudge(aspect="politeness", instruction="Reply politely to the customer below.").run(
        items()[:1], scripted_client(backend))
    assert backend.requests[0].messages[-1].content.startswith("Reply politely to the customer below.")


def test_empty_output_and_empty_logprobs_are_errors_not_scores():
    backend = ScriptedBackend(lambda r, i: Completion(text="", prefix_logprobs=()), capabilities=SCORING)
    judgments = LikelihoodJudge(aspect="naturalness").run(items(), scripted_client(backend))
    assert [j.status for j in judgments] == ["error", "error", "error"]
    assert all(j.score is None for j in judgments)
    assert "no output to score" in judgments[2].reason and "no token logprobs" in judgments[0].reason


def test_backend_without_prefix_scoring_is_refused_before_any_call():
    backend = ScriptedBackend(scored, capabilities=Capabilities(assistant_prefix=True))
    with pytest.raises(CapabilityError, match="cannot score a given reply"):
        LikelihoodJudge(aspect="naturalness").run(items(), scripted_client(backend))
    assert backend.calls == 0


def test_pairwise_family_is_an_error_judgment():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    judgments = LikelihoodJudge(aspect="quality", family="pairwise").run(items()[:1], scripted_client(backend))
    assert judgments[0].status == "error" and "pairwise" in judgments[0].reason


def test_scoring_requests_get_their_own_cache_keys_and_others_keep_theirs():
    plain = Request.of("hi", assistant_prefix="Rating: [[")
    assert "score_prefix" not in plain.canonical_json()  # keys written before the field existed still match
    scoring = plain.model_copy(update={"score_prefix": True})
    assert plain.cache_key("b", 0) != scoring.cache_key("b", 0)


def test_config_round_trip():
    judge = judge_from_dict({"kind": "likelihood", "aspect": "coherence", "reduce": "sum"})
    assert isinstance(judge, LikelihoodJudge) and judge_from_dict(judge.model_dump()) == judge
    assert len(judge.digest()) == 12


def relevance_pair() -> Item:
    return Item(id="p1", qid="q1", docid="d1", query="what do cats eat",
                passage="Cats are carnivores and eat mostly meat.", label=2)


def test_relevance_pairs_score_the_passage_given_the_query_by_default():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    judgments = LikelihoodJudge(aspect="relevance").run([relevance_pair()], scripted_client(backend))
    request = backend.requests[0]
    assert judgments[0].status == "ok" and request.assistant_prefix == "Cats are carnivores and eat mostly meat."
    prompt = request.messages[-1].content
    assert prompt.startswith("Write a passage that answers the query below.") and "what do cats eat" in prompt


def test_likelihood_of_input_scores_the_query_given_the_passage():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    judgments = LikelihoodJudge(aspect="relevance", likelihood_of="input").run([relevance_pair()],
                                                                               scripted_client(backend))
    request = backend.requests[0]
    assert request.score_prefix and request.assistant_prefix == "what do cats eat"
    prompt = request.messages[-1].content
    assert "Cats are carnivores" in prompt and "what do cats eat" not in prompt
    assert prompt.endswith("Please write a question based on this passage.")  # UPR's wording, next to the reply
    assert judgments[0].score == pytest.approx(-(4 + 2 + 4 + 3) / 4)


def test_likelihood_of_input_on_data_to_text_scores_the_meaning_representation():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    LikelihoodJudge(aspect="naturalness", likelihood_of="input").run(items()[:1], scripted_client(backend))
    request = backend.requests[0]
    assert request.assistant_prefix == "an MR" and "a much longer sentence" in request.messages[-1].content


def test_likelihood_of_input_without_an_input_is_an_error_judgment_not_a_score():
    backend = ScriptedBackend(scored, capabilities=SCORING)
    no_source = Item(id="x", output="Cats purr.", dataset="demo")
    judgments = LikelihoodJudge(aspect="fluency", likelihood_of="input").run([no_source], scripted_client(backend))
    assert judgments[0].status == "error" and judgments[0].score is None and "no source" in judgments[0].reason
    assert backend.calls == 0


def test_unknown_direction_is_refused_by_the_config():
    from judgelab.errors import ConfigError

    with pytest.raises(ConfigError, match="likelihood_of"):
        judge_from_dict({"kind": "likelihood", "aspect": "relevance", "likelihood_of": "query"})
