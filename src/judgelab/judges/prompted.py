"""The prompted pointwise judge: an HPSS strategy turned into LLM stages.

Stages, each a batch through the one client (so each call is cached and accounted):
1. per aspect and scale, once: self-generated criteria, auto-CoT steps (if the strategy asks);
2. per item: self-generated reference, checklist questions (if asked);
3. per item: the judge prompt, parsed into a rating (or the logprob-weighted expected rating).

Items are sent grouped by source, so consecutive prompts share the longest prefix (the
embedded backend then reuses its KV cache); judgments come back in input order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.judges.base import ConfigPath, ItemTexts, JudgeConfig, OnJudgment, usage_of
from judgelab.judges.examples import ExampleSelector
from judgelab.judges.retrieval import ExampleSource, make_selector
from judgelab.limits import Fraction, MaxTokens, Samples, Seed, Temperature
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request, Usage
from judgelab.parse import explanation_of, judged_texts_of, logprob_score_for, parse_rating
from judgelab.prompts.criteria import criteria_text
from judgelab.prompts.render import (
    AuxiliaryTexts,
    RenderedPrompt,
    family_for,
    render_autocot_prompt,
    render_checklist_prompt,
    render_criteria_prompt,
    render_judge_prompt,
    render_reference_prompt,
)
from judgelab.strategy import Strategy

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

ScoreMode = Literal["parsed", "logprob"]
# Room for what each CoT mode makes the judge write (a dialectic reference needs the most).
_MAX_TOKENS = {"none": 16, "suffix": 256, "prefix": 512}
_DIALECTIC_MAX_TOKENS = 768


class PromptedJudge(JudgeConfig):
    """A pointwise judge whose prompt is an HPSS ``Strategy``. Defaults: the MT-Bench strategy."""

    registry_name: ClassVar[str] = "prompted"
    # The example-source fields came after the first saved configs.
    omitted_at_default: ClassVar[dict[str, Any]] = {
        "example_source": "stratified", "example_retriever": None, "example_embedder": "minilm",
        "example_high_band": 0.75}
    kind: Literal["prompted"] = "prompted"
    aspect: str
    #: Task family (wording): summarisation, dialogue, data2text, story, qa, relevance, generic, conversation.
    #: None: from the items' ``dataset`` (benchmarks), else ``generic``.
    family: str | None = None
    strategy: Strategy = Strategy()
    #: The task in your own words (required by the ``generic`` family).
    task: str | None = None
    #: Your human-written criteria; else the benchmark's (``criteria_dataset`` or the items' dataset).
    criteria: str | None = None
    criteria_dataset: str | None = None
    system: str | None = None
    #: ``parsed``: the rating the judge wrote (HPSS, greedy). ``logprob``: the expected rating
    #: under the judge's distribution at the rating token (G-Eval style; needs logprobs).
    score: ScoreMode = "parsed"
    #: Self-consistency: the mean over this many samples (needs temperature > 0).
    samples: Samples = 1
    temperature: Temperature = 0.0
    max_tokens: MaxTokens | None = None
    seed: Seed = 0
    #: In-context examples (when the strategy shows any): ``stratified`` one fixed set spread over
    #: the ratings; ``random`` per item; ``semantic`` most similar by embedding; ``trained`` ranked
    #: by the retriever in ``example_retriever``; ``diverse`` high- and low-band picks of each.
    example_source: ExampleSource = "stratified"
    #: A retriever folder written by ``judgelab icl-train`` (sources ``trained`` and ``diverse``).
    example_retriever: ConfigPath | None = None
    #: The embedding model of the semantic retriever (``minilm``, ``static`` or a folder).
    example_embedder: str = "minilm"
    #: Band split of ``diverse``: the high band starts this far up the scale (0.75: {4,5} of 1..5).
    example_high_band: Fraction = 0.75

    def model_post_init(self, __context: object) -> None:
        if self.samples > 1 and self.temperature == 0:
            raise ConfigError("samples > 1 (self-consistency) needs temperature > 0")
        if self.example_source == "trained" and self.example_retriever is None:
            raise ConfigError("example_source 'trained' needs example_retriever (a folder from `judgelab icl-train`)")

    def run(
        self,
        items: Sequence[Item],
        client: Client,
        on_judgment: OnJudgment | None = None,
        examples_pool: Sequence[Item] | None = None,
        order_by_source: bool = True,
        example_selector: Any | None = None,
    ) -> list[Judgment]:
        """Judge ``items``. In-context examples come from ``examples_pool`` (default: ``items``),
        never the judged item itself. ``order_by_source`` sends items that share a source one
        after another, so consecutive prompts share their longest prefix (False: input order).
        ``example_selector`` (anything with ``select(k, scale, exclude=item)``) replaces the
        config's example source: optimisers use it to judge with examples of their choosing."""
        if not items:
            return []
        family = self.resolve_family(items)
        shared = self._shared_texts(family, items, client)
        per_item = self._item_texts(family, items, client, shared.criteria)
        selector = example_selector or self._selector(examples_pool or items)
        if hasattr(selector, "prepare"):
            selector.prepare(items)  # retrievers embed the judged items in one batch
        prefix_ok = client.backend.capabilities.assistant_prefix
        order = list(range(len(items)))
        if order_by_source:
            order.sort(key=lambda i: (items[i].group, items[i].id))
        judgments: list[Judgment | None] = [None] * len(items)
        pending: list[tuple[int, RenderedPrompt, Usage]] = []
        for index in order:
            item = items[index]
            prepared = per_item[index]
            if isinstance(prepared, Judgment):
                judgments[index] = self.emit(prepared, on_judgment)
                continue
            try:
                aux = AuxiliaryTexts(
                    criteria=shared.criteria, autocot=shared.autocot, reference=prepared.reference,
                    checklist=prepared.checklist, examples=tuple(self._examples(selector, item)),
                )
                rendered = render_judge_prompt(self.strategy, family, self.aspect, item, aux, task=self.task,
                                               system=self.system, use_prefix=prefix_ok)
            except JudgelabError as exc:
                judgments[index] = self.emit(self.error(item, str(exc), prepared.usage), on_judgment)
                continue
            pending.append((index, rendered, prepared.usage))

        def finish(position: int, completions: list[Completion] | RequestError) -> None:
            index, rendered, aux_usage = pending[position]
            if isinstance(completions, RequestError):
                judgment = self.error(items[index], str(completions), aux_usage)
            else:
                judgment = self._judgment(items[index], rendered, completions, aux_usage)
            judgments[index] = self.emit(judgment, on_judgment)

        client.complete_all([self._request(rendered) for _, rendered, _ in pending], on_done=finish, errors="return")
        return judgments  # type: ignore[return-value]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, rating_reply

        judge = cls(aspect="coherence", criteria="Coherence: the summary is well organised.")
        return ContractExample(judge, pointwise_items("coherence"), rating_reply)

    # -- stages -------------------------------------------------------------------------------
    def resolve_family(self, items: Sequence[Item]) -> str:
        return family_for(items, self.family)

    def _shared_texts(self, family: str, items: Sequence[Item], client: Client) -> _SharedTexts:
        strategy, scale = self.strategy, self.strategy.scale
        criteria = None
        if strategy.criteria == "human":
            criteria = criteria_text(self.aspect, scale, text=self.criteria,
                                     dataset=self.criteria_dataset or items[0].dataset)
        elif strategy.criteria == "self":
            criteria = self._generate(client, render_criteria_prompt(family, self.aspect, scale, task=self.task),
                                      "self-generated criteria")
        autocot = None
        if strategy.autocot:
            messages = render_autocot_prompt(family, self.aspect, scale, criteria=criteria, task=self.task)
            autocot = self._generate(client, messages, "auto-CoT evaluation steps")
        return _SharedTexts(criteria=criteria, autocot=autocot)

    def _generate(self, client: Client, messages: list, what: str) -> str:
        [completion] = client.complete(self.aux_request(messages))
        text = completion.text.strip()
        if not text:
            raise JudgelabError(f"the judge model returned empty {what}; try another model or strategy")
        return text

    def _item_texts(self, family: str, items: Sequence[Item], client: Client,
                    criteria: str | None) -> list[ItemTexts | Judgment]:
        stages = [stage for stage, wanted in (("reference", self.strategy.reference == "self"),
                                              ("checklist", self.strategy.metrics)) if wanted]

        def render(item: Item, stage: str) -> list:
            if stage == "reference":
                return render_reference_prompt(family, item, task=self.task)
            return render_checklist_prompt(family, self.aspect, item, criteria=criteria, task=self.task)

        return self.item_stages(items, client, stages, render)

    def _selector(self, pool: Sequence[Item]) -> Any | None:
        if not self.strategy.examples:
            return None
        if self.example_source == "stratified":
            return ExampleSelector(pool, self.aspect, seed=self.seed)
        return make_selector(self.example_source, pool, self.aspect, seed=self.seed,
                             retriever=self.example_retriever, embedder=self.example_embedder,
                             high_from=self.example_high_band)

    def _examples(self, selector: Any | None, item: Item) -> list:
        if selector is None:
            return []
        return selector.select(self.strategy.examples, self.strategy.scale, exclude=item)

    # -- requests and parsing -----------------------------------------------------------------
    @property
    def token_budget(self) -> int:
        """The most tokens one reply may take: ``max_tokens``, or the default for the strategy (a reply that
        reasons first needs room; a dialectic reference argues both sides before it: 768)."""
        if self.max_tokens:
            return self.max_tokens
        return _DIALECTIC_MAX_TOKENS if self.strategy.reference == "dialectic" else _MAX_TOKENS[self.strategy.cot]

    def _request(self, rendered: RenderedPrompt) -> Request:
        return Request(
            messages=rendered.messages, assistant_prefix=rendered.assistant_prefix,
            temperature=self.temperature, max_tokens=self.token_budget, seed=self.seed, n=self.samples,
            logprobs=self.score == "logprob", top_logprobs=20 if self.score == "logprob" else 0,
        )

    def _judgment(self, item: Item, rendered: RenderedPrompt, completions: list[Completion],
                  aux_usage: Usage) -> Judgment:
        usage = aux_usage + usage_of(completions)
        scores, reasons, extra = [], [], {}
        judged = judged_texts_of(item)
        parses = [parse_rating(c.text, rendered.bounds, pick=rendered.pick, assistant_prefix=rendered.assistant_prefix,
                               judged_texts=judged) for c in completions]
        spreads = []
        for completion, parsed in zip(completions, parses, strict=True):
            if self.score == "logprob":
                weighted = logprob_score_for(parsed, completion.logprobs, rendered.bounds, rendered.assistant_prefix)
                extra.setdefault("parsed_scores", []).append(parsed.score)
                extra.setdefault("logprob_mass", []).append(weighted.mass)
                value, reason = weighted.score, weighted.reason or parsed.reason
                if weighted.sd is not None:
                    spreads.append(weighted.sd)
            else:
                value, reason = parsed.score, parsed.reason
            if value is None:
                reasons.append(reason or "no rating")
            else:
                scores.append(value)
        if (spread := score_spread(scores, spreads)) is not None:
            extra["score_sd"] = spread
        first = completions[0]
        raw = rendered.assistant_prefix + first.text
        if len(completions) > 1:
            extra["samples"] = [rendered.assistant_prefix + c.text for c in completions]
            extra["sample_scores_ok"] = len(scores)
        common = dict(item_id=item.id, aspect=self.aspect, judge=self.name, raw=raw,
                      usage=usage, extra=extra)
        if not scores:
            return Judgment(status="unparsable", reason=reasons[0], **common)
        explanation = explanation_of(first.text, parses[0], rendered.assistant_prefix)
        return Judgment(score=fmean(scores), explanation=explanation, **common)


def score_spread(scores: list[float], spreads: list[float]) -> float | None:
    """How unsure the judge was of its score (``extra["score_sd"]``, read by ``judgelab sample
    --active``): the spread of its rating distribution (logprob scores) and of its samples' scores,
    combined by the law of total variance."""
    within = float(np.mean(np.square(spreads))) if spreads and len(spreads) == len(scores) else None
    between = float(np.var(scores)) if len(scores) > 1 else None
    if within is None and between is None:
        return None
    return math.sqrt((within or 0.0) + (between or 0.0))


@dataclass
class _SharedTexts:
    criteria: str | None
    autocot: str | None
