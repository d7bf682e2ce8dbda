"""Faithfulness (groundedness): does each claim of the answer follow from the evidence it should rest on?

Two LLM stages per item, over the one client (cache, resume and accounting come from it):

1. **claims**: the answer decomposed into short, self-contained factual statements, a numbered list of at
   most ``max_claims`` (``prompts/faithfulness/claims.j2``);
2. **verification**: each claim checked against the evidence, one verdict per claim: supported,
   contradicted or not found; all claims of an item in one call (``verify: batch``) or one call per claim
   (``verify: each``) (``prompts/faithfulness/verify.j2``).

The evidence is the item's retrieved passages (``contexts``), else its ``context``, else its ``source``
(for summarisation data such as QAGS the article is what the summary must rest on). The score is the
share of claims supported (0-1, or mapped linearly onto ``scale``); the unsupported claims are the
explanation. An answer with no claim, or a reply that gives no verdict for some claim, makes the
judgment ``unparsable`` with the reason and the replies: it is never turned into a score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from judgelab.data.conversation import render_contexts
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import OnJudgment
from judgelab.judges.checklist import ChecklistJudge, ItemState, parse_numbered, replies_to
from judgelab.llm.client import Client
from judgelab.llm.types import Request
from judgelab.prompts.render import environment

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Verdict = Literal["supported", "contradicted", "not found"]
Message = dict[str, str]


@dataclass(frozen=True)
class Evidence:
    """What the claims are checked against, and under which name the prompts show it."""

    field: str  # the item's field it came from: contexts, context or source
    name: str  # its heading in the prompts
    text: str
    question: str | None  # the text the answer responds to, shown at extraction; None when it is the evidence


def evidence_of(item: Item) -> Evidence | None:
    """The item's passages, else its context, else its source (the article a summary rests on)."""
    if item.contexts:
        return Evidence("contexts", "Passages", render_contexts(item.contexts), item.prompt)
    if item.context:
        return Evidence("context", "Context", item.context, item.prompt)
    if item.source:
        return Evidence("source", "Source", item.source, None)
    return None


@dataclass
class _Checked(ItemState):
    """One item's way through the two stages: its evidence, the claims listed, how many past ``max_claims``."""

    evidence: Evidence | None = None
    claims: list[str] = field(default_factory=list)
    dropped: int = 0


class FaithfulnessJudge(ChecklistJudge):
    """Claim-level faithfulness: the share of the answer's claims its evidence supports."""

    registry_name: ClassVar[str] = "faithfulness"
    kind: Literal["faithfulness"] = "faithfulness"

    #: The human score the judgments are compared with (``consistency`` on QAGS).
    aspect: str = "faithfulness"
    #: At most this many claims are checked per answer (the first ones listed); the prompt asks for no more.
    #: ``verify``, ``scale`` (the share supported mapped onto it), the sampling: ChecklistJudge's.
    max_claims: int = Field(default=10, ge=1, le=100)

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        states = [self._start(item) for item in items]
        self._extract_claims(states, client)
        verify = self._verify_each if self.verify == "each" else self._verify_batch
        verify([state for state in states if state.failure is None], client)
        return [self.emit(self._judgment(state), on_judgment) for state in states]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, quality_in, user_text

        def reply(request: Request, _: int) -> str:
            """Two claims per answer, carrying its quality; quality q gets q - 1 of them supported."""
            text = user_text(request)
            quality = quality_in(text)
            if "Verdicts:" not in text:
                return f"1. The summary is of quality {quality}.\n2. The council voted."
            return "\n".join(f"{k}. {'supported' if k < quality else 'not found'}" for k in (1, 2))

        return ContractExample(cls(), pointwise_items("faithfulness"), reply)

    # -- stages ----------------------------------------------------------------------------------
    def _start(self, item: Item) -> _Checked:
        state = _Checked(item, evidence=evidence_of(item))
        if item.kind != "pointwise" or not (item.output or "").strip():
            state.fail("error", "the faithfulness judge checks the claims of an item's output, and this item has none")
        elif state.evidence is None:
            state.fail("error", "the item has no contexts, context or source to check the answer's claims against")
        return state

    def _extract_claims(self, states: list[_Checked], client: Client) -> None:
        pending = [state for state in states if state.failure is None]
        requests = [self._request(_template("claims").prompt(s.evidence.question, s.item.output, self.max_claims),
                                  self.max_claims) for s in pending]
        for state, text in zip(pending, replies_to(client, pending, requests, "claim extraction"), strict=True):
            if text is None:
                continue
            state.replies["claims"] = text
            claims = parse_claims(text)
            state.claims, state.dropped = claims[: self.max_claims], max(0, len(claims) - self.max_claims)
            if not claims:
                state.fail("unparsable", "no claims extracted: the claims reply lists no claim")

    def _verify_batch(self, states: list[_Checked], client: Client) -> None:
        verify = _template("verify")
        requests = [self._request(verify.batch(s.evidence.name, s.evidence.text, s.claims), len(s.claims))
                    for s in states]
        for state, text in zip(states, replies_to(client, states, requests, "verification"), strict=True):
            if text is None:
                continue
            state.replies["verification"] = text
            state.verdicts = parse_verdicts(text, len(state.claims))
            _fail_without_verdicts(state)

    def _verify_each(self, states: list[_Checked], client: Client) -> None:
        verify = _template("verify")
        asks = [(state, k) for state in states for k in range(len(state.claims))]
        requests = [self._request(verify.one(s.evidence.name, s.evidence.text, s.claims[k])) for s, k in asks]
        for state in states:
            state.verdicts = [None] * len(state.claims)
        for (state, k), text in zip(asks, replies_to(client, [s for s, _ in asks], requests, "verification"),
                                    strict=True):
            if text is not None:
                state.replies[f"claim {k + 1}"] = text
                state.verdicts[k] = verdict_in(text)
        for state in states:
            _fail_without_verdicts(state)

    # -- judgments ---------------------------------------------------------------------------------
    def _judgment(self, state: _Checked) -> Judgment:
        if state.failure and state.failure[0] == "error":
            return self.error(state.item, state.failure[1], state.usage)
        common = dict(item_id=state.item.id, aspect=self.aspect, judge=self.name, usage=state.usage,
                      raw="\n".join(f"[{stage}] {text}" for stage, text in state.replies.items()), extra=self._extra(state))
        if state.failure:
            return Judgment(status="unparsable", reason=state.failure[1], **common)
        return Judgment(score=self._scaled(_supported_share(state)),
                        explanation=explanation_of(state.claims, state.verdicts), **common)

    def _extra(self, state: _Checked) -> dict[str, Any]:
        verdicts = state.verdicts or [None] * len(state.claims)
        extra: dict[str, Any] = {"evidence": state.evidence.field if state.evidence else None,
                                 "claims": [{"claim": c, "verdict": v} for c, v in zip(state.claims, verdicts, strict=True)]}
        if state.claims and None not in verdicts:
            extra["supported_share"] = _supported_share(state)
            extra["unsupported"] = [c for c, v in zip(state.claims, verdicts, strict=True) if v != "supported"]
        if state.dropped:
            extra["claims_dropped"] = state.dropped  # listed past max_claims, not checked
        return extra


def _supported_share(state: _Checked) -> float:
    return state.verdicts.count("supported") / len(state.claims)


def _fail_without_verdicts(state: _Checked) -> None:
    missing = [str(k + 1) for k, verdict in enumerate(state.verdicts) if verdict is None]
    if missing:
        state.fail("unparsable", f"no verdict (supported / contradicted / not found) for claim {', '.join(missing)} "
                                 f"of {len(state.claims)}")


# -- reading the replies ----------------------------------------------------------------------------
_NUMBERED = re.compile(r"^\s*[*_]*\s*(?:claim\s*)?\(?(\d{1,3})\s*[.):]\s*(.*)$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[-*•]\s+(.*)$")
_NO_CLAIM = re.compile(r"^\W*no(?: factual)? claims?\W*$", re.IGNORECASE)
# "not supported" and "unsupported" are read as not found (either way the claim is unsupported), never as supported.
_VERDICT = re.compile(r"\b(not[\s_-]*(?:found|supported|mentioned)|unsupported|contradict\w*|supported)\b", re.IGNORECASE)


def parse_claims(text: str) -> list[str]:
    """The claims of a numbered (or bulleted) list, in order, without list marks, bold or repeats; [] when
    the reply lists none (prose, or "No claims")."""
    claims: list[str] = []
    for line in (text or "").splitlines():
        match = _NUMBERED.match(line) or _BULLET.match(line)
        claim = match.group(match.lastindex or 0).strip().strip("*_").strip() if match else ""
        if claim and not _NO_CLAIM.match(claim) and claim not in claims:
            claims.append(claim)
    return claims


def verdict_in(text: str) -> Verdict | None:
    """The first verdict a text gives, or None."""
    match = _VERDICT.search(text or "")
    if match is None:
        return None
    word = match.group(1).lower()
    if word.startswith("contradict"):
        return "contradicted"
    return "supported" if word == "supported" else "not found"


def parse_verdicts(text: str, count: int) -> list[Verdict | None]:
    """Claim k's verdict from the line numbered k (the first such line); a reply without numbers gives
    its verdicts in order only when it gives exactly ``count``. None where a claim has no verdict."""
    return parse_numbered(text, count, verdict_in, _NUMBERED)


def explanation_of(claims: Sequence[str], verdicts: Sequence[Verdict | None]) -> str:
    """The unsupported claims with their verdicts, or that every claim is supported."""
    unsupported = [f"- {claim} ({verdict})" for claim, verdict in zip(claims, verdicts, strict=True)
                   if verdict != "supported"]
    if not unsupported:
        return f"All {len(claims)} claim{'s are' if len(claims) > 1 else ' is'} supported."
    return "\n".join([f"{len(unsupported)} of {len(claims)} claims not supported:", *unsupported])


def _template(name: str) -> Any:
    return environment().get_template(f"faithfulness/{name}.j2").module
