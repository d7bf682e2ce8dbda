"""The faithfulness judge's logic with a scripted model: reading claims and verdicts (malformed replies
are unparsable, never scored), the score and explanation, which text is the evidence, the claims cap.

The judge runs end to end with the real embedded model in tests/integration/test_faithfulness_judge.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import judgelab
from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.faithfulness import FaithfulnessJudge, evidence_of, parse_claims, parse_verdicts
from judgelab.llm.types import Request
from tests.doubles import ScriptedBackend, scripted_client

EXAMPLES = Path(judgelab.__file__).parent / "examples"
CLAIMS = "1. The shop is closed on Mondays.\n2. The shop opens at 7:00 on Tuesday.\n3. Bread costs 2 euros."


def prompt_of(request: Request) -> str:
    return request.messages[-1].content


def is_extraction(request: Request) -> bool:
    return prompt_of(request).endswith("Claims:")


def model(claims: str = CLAIMS, verdicts: str | Callable[[Request], str] = "1. supported\n2. supported\n3. not found"
          ) -> ScriptedBackend:
    def reply(request: Request, _: int) -> str:
        if is_extraction(request):
            return claims
        return verdicts(request) if callable(verdicts) else verdicts

    return ScriptedBackend(reply)


def judge(items: list[Item], backend: ScriptedBackend, **options) -> list:
    with scripted_client(backend) as client:
        return FaithfulnessJudge(**options).run(items, client)


def rag_item(**fields) -> Item:
    texts = {"id": "rag-1", "source": "When is the shop open?", "output": "It is closed on Mondays and opens at 7:00 "
             "on Tuesday. Bread costs 2 euros.", "contexts": [{"id": "hours", "text": "Open Tuesday to Saturday, "
                                                               "7:00-18:00; closed on Mondays."}]}
    return Item.model_validate(texts | fields)


# -- reading the replies ------------------------------------------------------------------------------


def test_claims_are_read_from_a_numbered_or_bulleted_list():
    assert parse_claims(CLAIMS) == ["The shop is closed on Mondays.", "The shop opens at 7:00 on Tuesday.",
                                    "Bread costs 2 euros."]
    assert parse_claims("Here are the claims:\n**1.** Paris is in France.\n2) It rains.\n- It rains.\n* Oslo is cold.") \
        == ["Paris is in France.", "It rains.", "Oslo is cold."]  # list marks and bold stripped, the repeat dropped


@pytest.mark.parametrize("reply", ["No claims.", "1. No claims", "The answer is a greeting and makes no claim.", ""])
def test_a_reply_without_a_listed_claim_gives_none(reply):
    assert parse_claims(reply) == []


def test_verdicts_are_read_by_claim_number():
    assert parse_verdicts("2. contradicted\n1. Supported\n3. not found", 3) == ["supported", "contradicted", "not found"]
    assert parse_verdicts("Claim 1: supported\nClaim 2: NOT_FOUND", 2) == ["supported", "not found"]
    # "not supported" is never read as supported; a number past the claims is ignored; the first line for a number wins
    assert parse_verdicts("1. not supported\n4. supported\n1. supported", 2) == ["not found", None]


def test_verdicts_without_numbers_count_only_when_there_is_one_per_claim():
    assert parse_verdicts("supported\ncontradicted", 2) == ["supported", "contradicted"]
    assert parse_verdicts("supported\ncontradicted", 3) == [None, None, None]
    assert parse_verdicts("I cannot tell.", 2) == [None, None]


# -- the score, the explanation, what is recorded ----------------------------------------------------


def test_the_score_is_the_share_of_claims_supported_and_the_unsupported_ones_explain_it():
    backend = model()
    [judgment] = judge([rag_item()], backend)
    assert judgment.status == "ok" and judgment.score == pytest.approx(2 / 3)
    assert judgment.explanation == "1 of 3 claims not supported:\n- Bread costs 2 euros. (not found)"
    assert judgment.extra["unsupported"] == ["Bread costs 2 euros."]
    assert [c["verdict"] for c in judgment.extra["claims"]] == ["supported", "supported", "not found"]
    assert judgment.extra["evidence"] == "contexts" and judgment.aspect == "faithfulness"
    assert judgment.raw.startswith("[claims] 1. The shop") and "[verification] 1. supported" in judgment.raw
    assert backend.calls == 2 and judgment.usage.calls == 2  # one extraction, one batched verification
    verification = prompt_of(backend.requests[1])
    assert "1. The shop is closed on Mondays.\n2. The shop opens" in verification


def test_all_supported_and_a_scale_mapping():
    [judgment] = judge([rag_item()], model(verdicts="1. supported\n2. supported\n3. supported"), scale=(1, 5))
    assert judgment.score == 5 and judgment.explanation == "All 3 claims are supported."
    [contradicted] = judge([rag_item()], model(verdicts="1. contradicted\n2. contradicted\n3. contradicted"), scale=(1, 5))
    assert contradicted.score == 1 and contradicted.extra["supported_share"] == 0


def test_an_answer_without_claims_is_unparsable_with_the_reason_and_nothing_is_verified():
    backend = model(claims="No claims.")
    [judgment] = judge([rag_item()], backend)
    assert judgment.status == "unparsable" and judgment.score is None
    assert "no claims extracted" in judgment.reason and judgment.raw == "[claims] No claims."
    assert backend.calls == 1


def test_a_verification_reply_missing_a_verdict_is_unparsable_never_scored():
    [judgment] = judge([rag_item()], model(verdicts="1. supported\n2. supported\nI am not sure about the rest."))
    assert judgment.status == "unparsable" and judgment.score is None and judgment.explanation is None
    assert judgment.reason == "no verdict (supported / contradicted / not found) for claim 3 of 3"
    assert [c["verdict"] for c in judgment.extra["claims"]] == ["supported", "supported", None]
    assert "supported_share" not in judgment.extra


def test_one_call_per_claim_when_asked():
    def verdict(request: Request) -> str:
        assert request.messages[-1].content.endswith("Verdict:")
        return "Contradicted." if "Bread" in prompt_of(request) else "supported"

    backend = model(verdicts=verdict)
    [judgment] = judge([rag_item()], backend, verify="each")
    assert backend.calls == 4 and judgment.score == pytest.approx(2 / 3)
    assert judgment.extra["unsupported"] == ["Bread costs 2 euros."]
    assert "- Bread costs 2 euros. (contradicted)" in judgment.explanation


def test_the_claims_are_capped_and_the_prompt_says_so():
    listed = "\n".join(f"{k}. Claim number {k}." for k in range(1, 6))
    backend = model(claims=listed, verdicts="1. supported\n2. not found")
    [judgment] = judge([rag_item()], backend, max_claims=2)
    assert "at most 2 claims" in prompt_of(backend.requests[0])
    assert backend.requests[0].stop == ("\n3.",) and backend.requests[1].stop == ("\n3.",)  # no numbering on and on
    assert [c["claim"] for c in judgment.extra["claims"]] == ["Claim number 1.", "Claim number 2."]
    assert judgment.extra["claims_dropped"] == 3 and judgment.score == 0.5
    assert "Claim number 3." not in prompt_of(backend.requests[1])


# -- the evidence -------------------------------------------------------------------------------------


def test_the_evidence_is_the_contexts_else_the_context_else_the_source():
    with_contexts = rag_item(context="A context the item also gives.")
    with_context = rag_item(contexts=None, context="Closed on Mondays.", output="Closed on Mondays, open at 7.")
    with_source = Item(id="sum", source="The article: the council met on Monday.", output="The council met.")
    assert evidence_of(with_contexts).text == "[hours] Open Tuesday to Saturday, 7:00-18:00; closed on Mondays."
    assert evidence_of(with_context).text == "Closed on Mondays."
    assert evidence_of(with_source).field == "source" and evidence_of(with_source).question is None

    backend = model(verdicts="1. supported\n2. supported\n3. supported")
    judgments = judge([with_contexts, with_context, with_source], backend)
    assert [j.extra["evidence"] for j in judgments] == ["contexts", "context", "source"]
    extraction = [prompt_of(r) for r in backend.requests if is_extraction(r)]
    verification = [prompt_of(r) for r in backend.requests if not is_extraction(r)]
    # the question is shown to write self-contained claims, except where it is itself the evidence
    assert "Question: When is the shop open?" in extraction[0] and "Question:" not in extraction[2]
    assert verification[0].startswith("Passages:\n[hours] Open Tuesday") and "also gives" not in verification[0]
    assert verification[1].startswith("Context:\nClosed on Mondays.")
    assert verification[2].startswith("Source:\nThe article: the council met")


def test_items_it_cannot_check_are_errors_without_a_call():
    pairwise = Item(id="p", instruction="Say hi.", output_a="Hi", output_b="Hello")
    bare = Item(id="b", output="It is closed on Mondays.")
    backend = model()
    judgments = judge([pairwise, bare], backend)
    assert [j.status for j in judgments] == ["error", "error"] and backend.calls == 0
    assert "no contexts, context or source" in judgments[1].reason


# -- the config ---------------------------------------------------------------------------------------


def test_the_shipped_config_loads_and_bad_options_are_refused():
    config = load_judge(EXAMPLES / "faithfulness.yaml")
    assert isinstance(config, FaithfulnessJudge) and config.max_claims == 10 and config.verify == "batch"
    with pytest.raises(ConfigError, match="max_claims"):
        judge_from_dict({"kind": "faithfulness", "max_claims": 0})
    with pytest.raises(ConfigError, match="verify"):
        judge_from_dict({"kind": "faithfulness", "verify": "sometimes"})
    with pytest.raises(ConfigError, match="low < high"):
        judge_from_dict({"kind": "faithfulness", "scale": [5, 1]})
