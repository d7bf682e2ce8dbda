"""Prompt auto-optimisation from feedback (PanguIR, seed 000 section 3.2).

From the initial instruction P0, repeat: 1) sample M dev items; 2) take the ratings the judge
gave them under the latest instruction P_l (from that instruction's evaluation on the dev
items, so no extra judge calls); 3) show the LLM P_l, the items, the predicted and the human
ratings, and ask for an improved instruction P_{l+1}; evaluate it on the dev items. The search
keeps the best instruction on dev (``best.yaml``).

The instruction is the judge's human-written criteria text (what the evaluation rules of
every prompt family show; the strategy must use ``criteria=human``). ``from_best=True``
rewrites the best instruction so far instead of the latest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.llm.client import Client
from judgelab.llm.types import Request
from judgelab.optimize.base import Optimizer, OptimizerExample, Search
from judgelab.optimize.llm_search import (
    _Proposer,
    clean_instruction,
    instruction_field_text,
    with_instruction,
)

REWRITE_TEMPLATE = """You improve the instruction an LLM evaluator follows when it rates the {aspect} of \
texts on a scale of 1 to {scale}.

[Current Instruction]
{instruction}

Here are {m} texts rated under the current instruction, each with the evaluator's rating (1 to {scale}) \
and the human rating ({human_scale}):
{examples}

Study where the evaluator's ratings disagree with the human ratings. Then write an improved instruction \
that would make the evaluator's ratings agree better with the human ratings. Answer with the improved \
instruction only."""

_TEXT_CHARS = 600  # each shown text is cut here, so M examples fit a small model's context


def _cut(text: str | None) -> str:
    text = (text or "").strip()
    return text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + " ..."


def _example(index: int, item: Item, judgment: Judgment | None, aspect: str) -> str:
    lines = [f"[Example {index}]"]
    if item.prompt or item.source:
        lines.append(f"Input: {_cut(item.prompt or item.source)}")
    if item.context:
        lines.append(f"Context: {_cut(item.context)}")
    lines.append(f"Text: {_cut(item.output)}")
    if judgment is None:
        predicted = "not recorded"
    elif judgment.status == "ok" and judgment.score is not None:
        predicted = f"{judgment.score:g}"
    else:
        predicted = f"none ({judgment.status}: no rating could be read)"
    lines.append(f"Evaluator rating: {predicted}")
    lines.append(f"Human rating: {item.human_score(aspect):g}")
    return "\n".join(lines)


def _human_scale(items: list[Item], aspect: str) -> str:
    scale = next((s for s in (item.aspect_scale(aspect) for item in items) if s is not None), None)
    return f"{scale[0]:g} to {scale[1]:g}" if scale else "higher is better"


class PromptRewrite(_Proposer, Optimizer):
    method = "rewrite"

    def __init__(self, client: Client, *, seed: int = 0, m: int = 5, from_best: bool = False,
                 temperature: float = 0.7, max_tokens: int = 384, max_failures: int = 10):
        super().__init__(seed=seed)
        self.client, self.m, self.from_best = client, m, from_best
        self.temperature, self.max_tokens, self.max_failures = temperature, max_tokens, max_failures
        self.scores: dict[str, float] = {}
        self.current: str | None = None
        self._setup_proposals()

    @classmethod
    def contract_example(cls) -> OptimizerExample:
        def rewritten(request: Request, _: int) -> str | None:
            if not request.messages[-1].content.startswith("You improve the instruction"):
                return None
            return f"Rate how well organised the summary is, rewrite {request.seed % 4}."

        return OptimizerExample(proposal=rewritten, options={"m": 3})

    def settings(self) -> dict[str, Any]:
        return {"seed": self.seed, "m": self.m, "from_best": self.from_best, "temperature": self.temperature,
                "max_tokens": self.max_tokens}

    def run(self, search: Search) -> None:
        rng = np.random.default_rng(self.seed)
        items = [item for item in getattr(search.evaluator, "items", [])
                 if item.human_score(search.base.aspect) is not None]
        if not items:
            raise ConfigError("prompt rewriting shows the LLM dev items with human ratings; the evaluator has none")
        self.current = instruction_field_text(search)
        evaluation = search.evaluate(with_instruction(search.base, self.current), "start")
        self.scores[self.current] = evaluation.search_objective
        judgments = {j.item_id: j for j in evaluation.judgments}
        best_judgments = judgments
        while True:
            parent, shown = (self.best(), best_judgments) if self.from_best else (self.current, judgments)
            sample = [items[i] for i in rng.choice(len(items), size=min(self.m, len(items)), replace=False)]
            raw, usage, rejected = self._ask(search, self.prompt(search, parent, sample, shown), self.max_tokens)
            text = clean_instruction(raw) if raw is not None else None
            if text is None:
                self._failed(search, raw, rejected or "no instruction in the reply (empty or too long)", usage)
                continue
            if text in self.scores:
                self._failed(search, raw, "the same instruction was already evaluated", usage, ok=True)
                continue
            self.failures_in_a_row = 0
            evaluation = search.evaluate(with_instruction(search.base, text), "rewrite", proposal_usage=usage)
            if evaluation.search_objective > max(self.scores.values()):
                best_judgments = {j.item_id: j for j in evaluation.judgments}
            self.scores[text] = evaluation.search_objective
            self.current, judgments = text, {j.item_id: j for j in evaluation.judgments}

    def best(self) -> str:
        return max(self.scores, key=lambda text: self.scores[text])  # the first of ties

    def prompt(self, search: Search, instruction: str, sample: list[Item], judgments: dict[str, Judgment]) -> str:
        aspect = search.base.aspect
        examples = "\n\n".join(_example(i, item, judgments.get(item.id), aspect)
                               for i, item in enumerate(sample, 1))
        return REWRITE_TEMPLATE.format(aspect=aspect, scale=search.base.strategy.scale, instruction=instruction,
                                       m=len(sample), human_scale=_human_scale(sample, aspect), examples=examples)

    def state(self) -> dict[str, Any]:
        return {"current": self.current, "best": self.best() if self.scores else None, "proposals": self.proposals}
