"""The faithfulness judge's ``citations`` option with a scripted model: each claim verified against the passages
it cites, unknown ids, uncited claims under ``check`` and ``required``, ALCE's citation recall and precision, and
the option off sending and writing exactly what the judge did before the option existed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError
from judgelab.judges.base import judge_from_dict
from judgelab.judges.faithfulness import FaithfulnessJudge
from judgelab.llm.types import Request
from tests.doubles import ScriptedBackend, scripted_client

BEFORE = Path(__file__).parents[1] / "data" / "faithfulness" / "before_citations.json"
PASSAGES = [{"id": "1", "text": "The Eiffel Tower was finished in 1889."},
            {"id": "2", "text": "The Eiffel Tower is 330 metres tall."},
            {"id": "3", "text": "Gustave Eiffel's company built the tower, which is 330 metres tall."}]
OUTPUT = ("It was finished in 1889 [1]. It is 330 metres tall [2][3], stands in Paris [9] and was built by "
          "Eiffel's company.")
CLAIMS = ("1. The Eiffel Tower was finished in 1889 [1].\n2. The Eiffel Tower is 330 metres tall [2][3].\n"
          "3. The Eiffel Tower is in Paris [9].\n4. Gustave Eiffel's company built the tower.")
#: what makes each claim true: a passage shown to the model holds the word
FACTS = ("1889", "330", "company", "Paris")


def prompt_of(request: Request) -> str:
    return request.messages[-1].content


def verdict(claim: str, evidence: str) -> str:
    fact = next(word for word in FACTS if word in claim)
    return "supported" if fact in evidence else "not found"


def reader(claims: str = CLAIMS):
    """A model that lists ``claims`` and judges each claim by whether the passages shown hold its fact."""
    def reply(request: Request, _: int) -> str:
        text = prompt_of(request)
        if text.endswith("Claims:"):
            return claims
        evidence, _, asked = text.partition("\n\nClaim")
        if text.endswith("Verdict:"):
            return verdict(asked, evidence)
        return "\n".join(f"{n}. {verdict(claim, evidence)}" for n, claim in re.findall(r"^(\d+)\. (.*)$", asked, re.M))
    return reply


def run(items: list[Item], reply=None, **options) -> tuple[list, ScriptedBackend]:
    backend = ScriptedBackend(reply or reader())
    with scripted_client(backend) as client:
        return FaithfulnessJudge(**options).run(items, client), backend


def eiffel(**fields) -> Item:
    return Item.model_validate({"id": "eiffel", "source": "Tell me about the Eiffel Tower.", "output": OUTPUT,
                                "contexts": PASSAGES} | fields)


def verifications(backend: ScriptedBackend) -> list[str]:
    """The verification prompts sent: the passages shown, then the claims ("Claims:" or "Claim:")."""
    return [prompt_of(r) for r in backend.requests if not prompt_of(r).endswith("Claims:")]


# -- check --------------------------------------------------------------------------------------------


def test_each_claim_is_verified_against_the_passages_it_cites():
    [judgment], backend = run([eiffel()], citations="check")
    claims = judgment.extra["claims"]
    assert [c["claim"] for c in claims] == ["The Eiffel Tower was finished in 1889.",  # markers taken out
                                            "The Eiffel Tower is 330 metres tall.", "The Eiffel Tower is in Paris.",
                                            "Gustave Eiffel's company built the tower."]
    assert [(c["cited"], c["unknown"], c["checked_against"], c["verdict"]) for c in claims] == [
        (["1"], [], "cited", "supported"), (["2", "3"], [], "cited", "supported"),
        ([], ["9"], "none", "unknown citation"), ([], [], "all", "supported")]
    # the claims prompt asks to keep the markers; each verification shows only the passages cited
    assert "end each claim with the markers the answer gives" in prompt_of(backend.requests[0])
    batches = [p for p in verifications(backend) if p.endswith("Verdicts:")]
    assert sorted(p.split("\n\nClaims:")[0] for p in batches) == [
        "Passages:\n[1] The Eiffel Tower was finished in 1889.",
        "Passages:\n" + "\n\n".join(f"[{p['id']}] {p['text']}" for p in PASSAGES),  # the uncited claim: all of them
        "Passages:\n[2] The Eiffel Tower is 330 metres tall.\n\n[3] Gustave Eiffel's company built the tower, which "
        "is 330 metres tall."]
    assert not any("Paris" in p for p in verifications(backend))  # citing only an unknown id: no call
    # the score: 3 of 4 claims supported, the one citing a passage the item lacks is not
    assert judgment.status == "ok" and judgment.score == 0.75
    assert "- The Eiffel Tower is in Paris. (unknown citation)" in judgment.explanation


def test_alce_recall_and_precision():
    [judgment], backend = run([eiffel()], citations="check")
    info = judgment.extra["citations"]
    assert info["output"] == {"markers": ["[1]", "[2]", "[3]", "[9]"], "cited": ["1", "2", "3"], "unknown": ["9"],
                              "count": 4, "valid": 3}
    assert info["unknown"] == ["9"] and info["not_in_claims"] == [] and info["mode"] == "check"
    # recall: claims 1 and 2 are backed by their citations, claim 3 cites an unknown id, claim 4 cites nothing
    assert (info["claims_cited"], info["claims_supported_by_citations"]) == (3, 2)
    assert info["recall"] == 2 / 4 and info["cited_recall"] == 2 / 3
    # precision: claim 2 cites [2][3]; each supports it alone (both say 330 m): both relevant; [9] is not
    assert judgment.extra["claims"][1]["relevant"] == {"2": True, "3": True}
    assert info["precision"] == 3 / 4 and "precision_undecided" not in info
    alone = [p for p in verifications(backend) if p.endswith("Verdict:")]
    assert len(alone) == 2 and all(p.count("\n[") == 1 for p in alone)  # one passage each


def test_a_citation_the_others_make_unneeded_is_not_relevant():
    passages = [PASSAGES[0], PASSAGES[1], {"id": "3", "text": "Gustave Eiffel's company built the tower."}]
    [judgment], backend = run([eiffel(contexts=passages)], citations="check")
    # [3] alone does not support "330 metres" and [2] without it does: [3] is not needed (ALCE's condition B),
    # read from the verdict [2] got alone, with no further call
    assert judgment.extra["claims"][1]["relevant"] == {"2": True, "3": False}
    assert judgment.extra["citations"]["precision"] == 2 / 4
    assert len([p for p in verifications(backend) if p.endswith("Verdict:")]) == 2


def test_three_cited_passages_ask_the_others_together():
    claims = "1. The Eiffel Tower is 330 metres tall [1, 2, 3]."
    passages = [PASSAGES[0], PASSAGES[1], {"id": "3", "text": "The tower is in Paris."}]
    [judgment], backend = run([eiffel(contexts=passages, output="It is 330 m tall [1, 2, 3].")],
                              reader(claims), citations="check")
    assert judgment.extra["claims"][0]["relevant"] == {"1": False, "2": True, "3": False}
    assert judgment.extra["citations"]["precision"] == 1 / 3 and judgment.score == 1
    pairs = [p for p in verifications(backend) if p.endswith("Verdict:") and p.count("\n[") == 2]
    assert len(pairs) == 2  # [1] and [3] alone fail: the two others asked together, for each


def test_a_precision_reply_without_a_verdict_leaves_precision_undecided_not_the_score():
    def reply(request: Request, index: int) -> str:
        return "I cannot say." if prompt_of(request).endswith("Verdict:") else reader()(request, index)

    [judgment], _ = run([eiffel()], reply, citations="check")
    info = judgment.extra["citations"]
    assert judgment.status == "ok" and judgment.score == 0.75
    assert info["precision"] is None and info["precision_undecided"] == ["claim 2: 2", "claim 2: 3"]
    assert info["recall"] == 0.5


def test_a_failed_precision_call_leaves_precision_undecided_and_costs_nothing():
    """A precision call the backend cannot serve: the judgment keeps its score (the claims were verified), the
    citations it asked about are undecided, and only the calls answered are counted."""
    from judgelab.errors import RequestError

    def reply(request: Request, index: int) -> str:
        if prompt_of(request).endswith("Verdict:"):
            raise RequestError("prompt too long for the context window")
        return reader()(request, index)

    [judgment], backend = run([eiffel()], reply, citations="check")
    info = judgment.extra["citations"]
    assert judgment.status == "ok" and judgment.score == 0.75
    assert info["precision"] is None and info["precision_undecided"] == ["claim 2: 2", "claim 2: 3"]
    answered = [r for r in backend.requests if not prompt_of(r).endswith("Verdict:")]
    assert judgment.usage.calls == len(answered) == backend.calls - 2  # the two failed calls are not counted


# -- required -----------------------------------------------------------------------------------------


def test_under_required_an_uncited_claim_is_unsupported_without_a_call():
    [judgment], backend = run([eiffel()], citations="required")
    claims = judgment.extra["claims"]
    assert claims[3]["verdict"] == "uncited" and claims[3]["checked_against"] == "none"
    assert judgment.score == 0.5 and "- Gustave Eiffel's company built the tower. (uncited)" in judgment.explanation
    assert not any("company built" in p.split("Claim")[-1] for p in verifications(backend))
    assert judgment.extra["citations"]["recall"] == 0.5  # recall is the same under both modes


def test_verify_each_asks_one_call_per_claim_with_its_cited_passages():
    [judgment], backend = run([eiffel()], citations="check", verify="each")
    assert judgment.score == 0.75
    asked = verifications(backend)
    assert len(asked) == 5 and all(p.endswith("Verdict:") for p in asked)  # claims 1, 2, 4; then [2] and [3] alone
    starts = {p.split("\n\nDecide")[0] for p in asked}
    assert "Passages:\n[1] The Eiffel Tower was finished in 1889.\n\nClaim: The Eiffel Tower was finished in 1889." \
        in starts
    assert "Passages:\n[2] The Eiffel Tower is 330 metres tall.\n\n[3] Gustave Eiffel's company built the tower, " \
        "which is 330 metres tall.\n\nClaim: The Eiffel Tower is 330 metres tall." in starts


# -- unparsable stays unparsable ----------------------------------------------------------------------


def test_a_verification_reply_missing_a_verdict_is_unparsable_with_the_citations_read():
    def reply(request: Request, index: int) -> str:
        text = prompt_of(request)
        return "Hard to tell." if "[1] The Eiffel" in text and text.endswith("Verdicts:") and "[2]" not in text \
            else reader()(request, index)

    [judgment], _ = run([eiffel()], reply, citations="check")
    assert judgment.status == "unparsable" and judgment.score is None
    assert judgment.reason == "no verdict (supported / contradicted / not found) for claim 1 of 4"
    assert judgment.extra["claims"][0]["cited"] == ["1"] and "recall" not in judgment.extra["citations"]
    assert "[verification against 1] Hard to tell." in judgment.raw


# -- hostile items ------------------------------------------------------------------------------------


def test_an_answer_citing_when_the_item_has_no_passages():
    item = Item(id="ctx", source="Is the shop open on Monday?", output="No, it is closed [1]. Bread is cheap.",
                context="Closed on Mondays. Bread costs 1 euro.")
    claims = "1. The shop is closed on Monday [1].\n2. Bread is cheap."

    def reply(request: Request, _: int) -> str:
        text = prompt_of(request)
        return claims if text.endswith("Claims:") else "1. supported"

    [judgment], backend = run([item], reply, citations="check")
    assert [c["verdict"] for c in judgment.extra["claims"]] == ["unknown citation", "supported"]
    assert judgment.extra["citations"]["unknown"] == ["1"] and judgment.extra["evidence"] == "context"
    assert verifications(backend)[0].startswith("Context:\nClosed on Mondays.")  # the uncited claim: the context
    assert judgment.extra["citations"]["recall"] == 0 and judgment.extra["citations"]["precision"] == 0


def test_claims_that_lost_the_answers_markers_take_those_of_the_part_of_the_answer_they_match():
    claims = ("1. The Eiffel Tower was finished in 1889.\n2. The Eiffel Tower is 330 metres tall [3].\n"
              "3. Gustave Eiffel's company built the tower.")
    [judgment], _ = run([eiffel()], reader(claims), citations="required")
    entries = judgment.extra["claims"]
    assert [(c["cited"], c["cited_from"], c["verdict"]) for c in entries] == [
        (["1"], "answer", "supported"),  # "It was finished in 1889 [1]": its marker
        (["3"], "claim", "supported"),  # the claim's own marker wins over the answer's [2][3]
        ([], None, "uncited")]  # "... and was built by Eiffel's company." ends with no marker
    info = judgment.extra["citations"]
    assert info["not_in_claims"] == ["2", "9"] and info["claims_cited"] == 2 and info["recall"] == 2 / 3


def test_with_no_marker_anywhere_every_claim_is_uncited():
    claims = "1. The Eiffel Tower was finished in 1889.\n2. The Eiffel Tower is 330 metres tall."
    [judgment], _ = run([eiffel(output="It was finished in 1889 and is 330 metres tall.")], reader(claims),
                        citations="check")
    info = judgment.extra["citations"]
    assert [c["checked_against"] for c in judgment.extra["claims"]] == ["all", "all"]
    assert info["claims_cited"] == 0 and info["recall"] == 0 and info["cited_recall"] is None
    assert info["precision"] is None and judgment.score == 1  # both claims checked against all the passages


def test_passages_need_ids_or_are_numbered(tmp_path):
    from judgelab.data import load_items

    path = tmp_path / "rag.jsonl"
    path.write_text(json.dumps({"id": "a", "output": "x [1]", "contexts": ["one", "two"]}) + "\n"
                    + json.dumps({"id": "b", "output": "x [1]", "contexts": [{"text": "no id"}]}) + "\n")
    with pytest.raises(DataError, match=r"rag\.jsonl:2.*contexts\.0\.id"):
        load_items(path)
    path.write_text(json.dumps({"id": "a", "output": "x [2]", "contexts": ["one", "two"]}) + "\n")
    [item] = load_items(path)
    assert [p.id for p in item.contexts] == ["1", "2"]  # a plain list of texts: numbered from 1, as answers cite


# -- the option off, and the config -------------------------------------------------------------------


def test_the_option_off_sends_and_writes_what_the_judge_did_before_it():
    before = json.loads(BEFORE.read_text())

    def reply(request: Request, _: int) -> str:  # the scripted model the file was written with
        text = prompt_of(request)
        if text.endswith("Claims:"):
            return "1. The tower was finished in 1889 [1].\n2. Eiffel's company built the tower [2][3]."
        return "1. supported\n2. not found" if text.endswith("Verdicts:") else "supported"

    items = [Item.model_validate(item) for item in before["items"]]
    for verify, expected in before["runs"].items():
        judgments, backend = run(items, reply, verify=verify)
        sent = sorted([[m.content for m in r.messages], list(r.stop), r.max_tokens] for r in backend.requests)
        assert sent == expected["requests"]
        assert [j.model_dump(mode="json", exclude={"usage"}) for j in judgments] == expected["judgments"]
        assert all("citation" not in prompt for prompt, *_ in sent)


def test_the_option_keeps_the_digest_of_configs_without_it_and_refuses_other_values():
    assert FaithfulnessJudge().digest() == FaithfulnessJudge(citations=None).digest() == "e68db5b99f24"
    assert "citations" not in FaithfulnessJudge().model_dump()
    checked = judge_from_dict({"kind": "faithfulness", "citations": "check"})
    assert checked.citations == "check" and checked.digest() != FaithfulnessJudge().digest()
    with pytest.raises(ConfigError, match="citations"):
        judge_from_dict({"kind": "faithfulness", "citations": "always"})
