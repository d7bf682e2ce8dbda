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

With ``citations`` (off by default; docs/faithfulness.md, "Citations") the answer's citation markers
(``[2]``, ``[1][3]``, ``[doc2, doc5]``, read by :mod:`judgelab.judges.citations`) are checked against the
item's passage ids: the claims keep their markers, each claim is verified against the passages it cites, and
the judgment records ALCE's citation recall and precision (Gao et al. 2023) and the ids cited that name no
passage. Off, the prompts, the config's digest and the judgments are those of the judge without the option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from judgelab.data.conversation import Passage, render_contexts
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import OnJudgment
from judgelab.judges.checklist import ChecklistJudge, ItemState, parse_numbered, replies_to
from judgelab.judges.citations import (
    Citations,
    attribute,
    citations_of,
    find_citations,
    passage_ids,
    segments,
    without_markers,
)
from judgelab.llm.client import Client
from judgelab.llm.types import Request
from judgelab.prompts.render import environment

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Verdict = Literal["supported", "contradicted", "not found"]
#: Under ``citations``, verdicts given without a call: a claim that cites only ids the item has no passage for,
#: and (``required``) a claim that cites nothing. Neither is supported.
CitationVerdict = Literal["unknown citation", "uncited"]
CitationsMode = Literal["check", "required"]
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


@dataclass(frozen=True)
class _Group:
    """Claims verified together (their positions in the item's list) against one evidence text."""

    stage: str  # the reply's name in the judgment's raw text
    evidence: str
    claims: list[int]


@dataclass
class _Checked(ItemState):
    """One item's way through the two stages: its evidence, the claims listed, how many past ``max_claims``."""

    evidence: Evidence | None = None
    claims: list[str] = field(default_factory=list)
    dropped: int = 0
    #: under ``citations``: each claim's markers (taken out of its text), and the output's own
    cites: list[Citations] = field(default_factory=list)
    output_cites: Citations | None = None
    #: where each claim's markers were read: "claim" (it kept them), "answer" (the part of the answer it matches)
    cited_from: list[str | None] = field(default_factory=list)
    #: under ``citations``, per claim cited several times and supported: ALCE's relevance of each cited id
    relevant: dict[int, dict[str, bool | None]] = field(default_factory=dict)


class FaithfulnessJudge(ChecklistJudge):
    """Claim-level faithfulness: the share of the answer's claims its evidence supports."""

    registry_name: ClassVar[str] = "faithfulness"
    kind: Literal["faithfulness"] = "faithfulness"

    #: The human score the judgments are compared with (``consistency`` on QAGS).
    aspect: str = "faithfulness"
    #: At most this many claims are checked per answer (the first ones listed); the prompt asks for no more.
    #: ``verify``, ``scale`` (the share supported mapped onto it), the sampling: ChecklistJudge's.
    max_claims: int = Field(default=10, ge=1, le=100)
    #: None (off): claims checked against all the evidence, citations ignored. ``check``: the answer's citation
    #: markers read against the item's passage ids, each claim verified against the passages it cites (a claim
    #: citing nothing against all of them). ``required``: as check, but a claim citing nothing is unsupported.
    citations: CitationsMode | None = None

    #: added after the first configs: a config without it keeps its digest (and its cache keys)
    omitted_at_default: ClassVar[dict[str, Any]] = {"citations": None}

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        states = [self._start(item) for item in items]
        self._extract_claims(states, client)
        verify = self._verify_each if self.verify == "each" else self._verify_batch
        verify([state for state in states if state.failure is None], client)
        if self.citations:
            self._check_precision([state for state in states if state.failure is None], client)
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
        if self.citations:
            state.output_cites = citations_of(item)
        if item.kind != "pointwise" or not (item.output or "").strip():
            state.fail("error", "the faithfulness judge checks the claims of an item's output, and this item has none")
        elif state.evidence is None:
            state.fail("error", "the item has no contexts, context or source to check the answer's claims against")
        return state

    def _extract_claims(self, states: list[_Checked], client: Client) -> None:
        pending = [state for state in states if state.failure is None]
        # the citations argument only when the option is on: off, the call (and so the prompt) is the one before it
        extra_args = (True,) if self.citations else ()
        requests = [self._request(_template("claims").prompt(s.evidence.question, s.item.output, self.max_claims,
                                                             *extra_args), self.max_claims) for s in pending]
        for state, text in zip(pending, replies_to(client, pending, requests, "claim extraction"), strict=True):
            if text is None:
                continue
            state.replies["claims"] = text
            claims = parse_claims(text)
            state.claims, state.dropped = claims[: self.max_claims], max(0, len(claims) - self.max_claims)
            if self.citations:
                _read_claim_citations(state)
            if not claims:
                state.fail("unparsable", "no claims extracted: the claims reply lists no claim")

    def _verify_batch(self, states: list[_Checked], client: Client) -> None:
        verify = _template("verify")
        asks = [(state, group) for state in states for group in self._groups(state)]
        requests = [self._request(verify.batch(s.evidence.name, g.evidence, [s.claims[k] for k in g.claims]),
                                  len(g.claims)) for s, g in asks]
        for (state, group), text in zip(asks, replies_to(client, [s for s, _ in asks], requests, "verification"),
                                        strict=True):
            if text is not None:
                state.replies[group.stage] = text
                for k, verdict in zip(group.claims, parse_verdicts(text, len(group.claims)), strict=True):
                    state.verdicts[k] = verdict
        for state in states:
            _fail_without_verdicts(state)

    def _verify_each(self, states: list[_Checked], client: Client) -> None:
        verify = _template("verify")
        asks = [(state, group.evidence, k) for state in states for group in self._groups(state) for k in group.claims]
        requests = [self._request(verify.one(s.evidence.name, evidence, s.claims[k])) for s, evidence, k in asks]
        for (state, _, k), text in zip(asks, replies_to(client, [s for s, _, _ in asks], requests, "verification"),
                                       strict=True):
            if text is not None:
                state.replies[f"claim {k + 1}"] = text
                state.verdicts[k] = verdict_in(text)
        for state in states:
            _fail_without_verdicts(state)

    def _groups(self, state: _Checked) -> list[_Group]:
        """The claims asked about together, each group with its evidence; sets the verdicts given without a call.

        Off: one group, every claim against all the evidence. With ``citations``: one group per set of passages
        cited (in the item's order), the claims citing nothing in one against all the evidence (``check``)."""
        state.verdicts = [None] * len(state.claims)
        if not self.citations:
            return [_Group("verification", state.evidence.text, list(range(len(state.claims))))]
        by_cited: dict[tuple[str, ...], list[int]] = {}
        for k, cites in enumerate(state.cites):
            if cites.cited:
                by_cited.setdefault(_in_item_order(state.item, cites.cited), []).append(k)
            elif cites.unknown:
                state.verdicts[k] = "unknown citation"  # it cites passages the item does not have
            elif self.citations == "required":
                state.verdicts[k] = "uncited"
            else:
                by_cited.setdefault((), []).append(k)
        return [_Group(f"verification against {_cited_name(ids)}", _passages_text(state, ids), claims)
                for ids, claims in by_cited.items()]

    def _check_precision(self, states: list[_Checked], client: Client) -> None:
        """ALCE's citation precision needs, for a claim its several cited passages support together, whether each
        cited passage is needed: (A) it supports the claim alone, else (B) the others without it do not. One
        round of calls per condition, each claim asked alone against one set of passages."""
        multi = [(s, k) for s in states for k, cites in enumerate(s.cites)
                 if s.verdicts[k] == "supported" and len(cites.cited) > 1]
        for state, k in multi:
            state.relevant[k] = dict.fromkeys(state.cites[k].cited)
        alone: dict[tuple[int, int, str], Verdict | None] = {}
        each_alone = [(s, k, i, (i,)) for s, k in multi for i in s.cites[k].cited]
        for state, k, i, verdict in self._ask_sets(each_alone, client):
            alone[id(state), k, i] = verdict
            if verdict == "supported":
                state.relevant[k][i] = True
        not_alone = [(s, k, i, tuple(j for j in s.cites[k].cited if j != i)) for s, k in multi
                     for i in s.cites[k].cited if alone.get((id(s), k, i)) not in (None, "supported")]
        decided, asks = [], []
        for state, k, i, rest in not_alone:
            # "the others" of two cited passages is the other one, already asked about alone: its verdict, no call
            other = alone.get((id(state), k, rest[0])) if len(rest) == 1 else None
            if other is None:
                asks.append((state, k, i, rest))
            else:
                decided.append((state, k, i, other))
        for state, k, i, verdict in decided + self._ask_sets(asks, client):
            if verdict is not None:  # when the others support the claim without it, this citation is not needed
                state.relevant[k][i] = verdict != "supported"

    def _ask_sets(self, asks: Sequence[tuple[_Checked, int, str, tuple[str, ...]]], client: Client
                  ) -> list[tuple[_Checked, int, str, Verdict | None]]:
        """Claim k of each state verified alone against the passages ``ids``; a failed call or a reply without a
        verdict leaves that citation's relevance undecided (None), the judgment keeps its score."""
        verify = _template("verify")
        requests = [self._request(verify.one(s.evidence.name, _passages_text(s, ids), s.claims[k]))
                    for s, k, _, ids in asks]
        texts = replies_to(client, [s for s, _, _, _ in asks], requests, "citation precision", fail=False)
        answered = []
        for (state, k, cited, ids), text in zip(asks, texts, strict=True):
            if text is not None:
                state.replies[f"claim {k + 1} against {_cited_name(ids)}"] = text
                answered.append((state, k, cited, verdict_in(text)))
        return answered

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
        if self.citations and state.output_cites is not None:
            extra["citations"] = self._citations_extra(state, extra["claims"], verdicts)
        return extra

    def _citations_extra(self, state: _Checked, claims: list[dict[str, Any]], verdicts: list[Any]) -> dict[str, Any]:
        """Each claim's citations (added to its entry in ``claims``) and the item's: the output's markers, the ids
        cited that name no passage, and, once every claim has a verdict, ALCE's citation recall and precision."""
        for k, (entry, cites) in enumerate(zip(claims, state.cites, strict=True)):
            against = "cited" if cites.cited else "all" if not cites.unknown and self.citations == "check" else "none"
            entry |= {"cited": cites.cited, "unknown": cites.unknown, "cited_from": state.cited_from[k],
                      "checked_against": against}
            if k in state.relevant:
                entry["relevant"] = state.relevant[k]
        output = state.output_cites
        carried = {i for cites in state.cites for i in cites.cited + cites.unknown}
        info: dict[str, Any] = {
            "mode": self.citations, "output": output.as_dict() if output else None,
            "unknown": list(dict.fromkeys([*(output.unknown if output else []), *(i for c in state.cites for i in c.unknown)])),
            "not_in_claims": [i for i in (output.cited + output.unknown if output else []) if i not in carried]}
        if state.claims and None not in verdicts:
            info |= _alce(state, verdicts)
        return info


def _supported_share(state: _Checked) -> float:
    return state.verdicts.count("supported") / len(state.claims)


def _fail_without_verdicts(state: _Checked) -> None:
    missing = [str(k + 1) for k, verdict in enumerate(state.verdicts) if verdict is None]
    if missing:
        state.fail("unparsable", f"no verdict (supported / contradicted / not found) for claim {', '.join(missing)} "
                                 f"of {len(state.claims)}")


def _read_claim_citations(state: _Checked) -> None:
    """Each claim's markers, taken out of its text. A claim listed without markers, from an answer that has some,
    takes those ending the part of the answer it matches (:func:`judgelab.judges.citations.attribute`): small
    models drop the markers they are asked to keep."""
    ids = passage_ids(state.item)
    pieces = segments(state.item.output or "", ids) if state.output_cites and state.output_cites.count else []
    state.cites, state.cited_from = [], []
    for k, claim in enumerate(state.claims):
        own = find_citations(claim, ids)
        state.claims[k] = without_markers(claim, own)
        matched = attribute(state.claims[k], pieces) if not own.count else None
        if matched is not None and matched[1].count:
            state.cites.append(matched[1])
            state.cited_from.append("answer")
        else:
            state.cites.append(own)
            state.cited_from.append("claim" if own.count else None)


def _alce(state: _Checked, verdicts: list[Any]) -> dict[str, Any]:
    """ALCE's citation recall and precision (Gao et al. 2023) over the claims. Recall: the share of claims that cite
    passages of the item, no other id, and that those passages support (``cited_recall``: the same share of the
    claims that cite anything). Precision: the share of citations that are relevant; a citation of a claim its cited
    passages do not support, or of an id the item lacks, is not; of a claim several passages support, one is when
    it supports the claim alone or the others do not without it. None when no claim cites, or (with the
    undecided ones listed) when a precision reply gave no verdict."""
    cited = [k for k, cites in enumerate(state.cites) if cites.count]
    backed = [k for k in cited if verdicts[k] == "supported" and not state.cites[k].unknown]
    relevant, undecided = 0, []
    for k in cited:
        if verdicts[k] != "supported":
            continue
        decided = state.relevant.get(k, dict.fromkeys(state.cites[k].cited, True))
        relevant += sum(1 for flag in decided.values() if flag)
        undecided += [f"claim {k + 1}: {i}" for i, flag in decided.items() if flag is None]
    total = sum(len(state.cites[k].cited) + len(state.cites[k].unknown) for k in cited)
    info: dict[str, Any] = {"claims_cited": len(cited), "claims_supported_by_citations": len(backed),
                            "recall": len(backed) / len(state.claims),
                            "cited_recall": len(backed) / len(cited) if cited else None,
                            "precision": relevant / total if total and not undecided else None}
    if undecided:
        info["precision_undecided"] = undecided
    return info


def _in_item_order(item: Item, ids: Sequence[str]) -> tuple[str, ...]:
    """Cited ids in the order of the item's passages: ``[3][1]`` and ``[1, 3]`` are one set of evidence."""
    wanted = set(ids)
    return tuple(i for i in passage_ids(item) if i in wanted)


def _cited_name(ids: Sequence[str]) -> str:
    return ", ".join(ids) if ids else "all the evidence"


def _passages_text(state: _Checked, ids: Sequence[str]) -> str:
    """The passages ``ids`` rendered as the evidence is (``[id] text``); all the evidence when ``ids`` is empty."""
    if not ids:
        return state.evidence.text
    wanted = set(ids)
    chosen: list[Passage] = [p for p in state.item.contexts or () if p.id in wanted]
    return render_contexts(chosen)


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


def explanation_of(claims: Sequence[str], verdicts: Sequence[Verdict | CitationVerdict | None]) -> str:
    """The unsupported claims with their verdicts, or that every claim is supported."""
    unsupported = [f"- {claim} ({verdict})" for claim, verdict in zip(claims, verdicts, strict=True)
                   if verdict != "supported"]
    if not unsupported:
        return f"All {len(claims)} claim{'s are' if len(claims) > 1 else ' is'} supported."
    return "\n".join([f"{len(unsupported)} of {len(claims)} claims not supported:", *unsupported])


def _template(name: str) -> Any:
    return environment().get_template(f"faithfulness/{name}.j2").module
