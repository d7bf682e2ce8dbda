"""The pairwise judge: which of two outputs better follows the instruction (LLMBar, seed Appendix G).

Stages, each a batch through the one client (so each call is cached and accounted):
1. per item, if asked: a self-generated reference output and checklist questions ("metrics");
2. per item: the comparison prompt in the original order (output_a shown first) and, with
   ``swap`` (the default), again with the outputs swapped. The two orders are two separate
   requests, cached separately; both verdicts are mapped back to the item's names.

A verdict that flips with the order is inconsistent: it becomes ``"tie"`` (default) or the
original order's verdict (``inconsistent="first"``); ``extra["consistent"]`` records which
happened, so positional consistency can be computed from the judgments alone.

A judgment is ``ok`` only when every order it asked for parsed. If one order's reply is
unparsable the judgment is ``unparsable`` (label None); the verdict the other order gave is
still in ``extra["verdicts"]`` and both replies are kept (``raw``, ``extra["raw_swapped"]``).
A one-order verdict carries exactly the position bias the second order exists to cancel, so it
is not passed off as a two-order verdict.

With ``score="logprob"`` each order's reply is forced to start "Output (" (where the backend can
continue a prefix) and the probability of the letter written next is read from the token
log-probabilities: ``extra["p_a"]`` per order (the softmax over a and b, in the item's names),
``extra["letter_mass"]``, and their mean over the orders, ``extra["preference"]``, a soft verdict
for output_a with its ``extra["confidence"]``. The label is still the letter the judge wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.judges.base import ItemTexts, JudgeConfig, OnJudgment, usage_of
from judgelab.limits import MaxTokens, Seed, Temperature
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request
from judgelab.parse import LetterProbability, ParsedPreference, parse_preference, preference_probability
from judgelab.prompts.render import (
    RenderedPairwise,
    render_checklist_prompt,
    render_pairwise_prompt,
    render_reference_prompt,
)

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Order = Literal["original", "swapped"]
# Room for what each CoT mode makes the judge write: a label, or an explanation then the verdict.
_MAX_TOKENS = {"none": 16, "prefix": 512}
# With score="logprob" the reply is forced to open at the verdict letter: the letter and ")" is all
# the label needs (the raw reply then reads "Output (a)").
_VERDICT_PREFIX = "Output ("
_PREFIXED_MAX_TOKENS = 2
_TOP_LOGPROBS = 20


class PairwiseJudge(JudgeConfig):
    """Prefers output_a or output_b for each pairwise item. Defaults: LLMBar's Vanilla+Rules prompt
    (no explanation, rules on), run in both orders, an order-dependent verdict counted as a tie."""

    registry_name: ClassVar[str] = "pairwise"
    # score came after the first saved configs
    omitted_at_default: ClassVar[dict[str, Any]] = {"score": "label"}
    kind: Literal["pairwise"] = "pairwise"
    #: ``none``: answer "Output (a)"/"Output (b)" only. ``prefix``: a brief explanation first,
    #: ending "Therefore, Output (x) is better." (LLMBar's CoT).
    cot: Literal["none", "prefix"] = "none"
    #: LLMBar's evaluation rules (follow the instruction first; no more/less than asked; order
    #: must not matter) in the prompt.
    rules: bool = True
    #: ``self``: the judge model first answers the instruction itself and that answer is shown as
    #: a reference (LLMBar's Reference stage). ``none``: no reference.
    reference: Literal["none", "self"] = "none"
    #: The judge model first writes at most 3 questions about the instruction, shown as a checklist
    #: (LLMBar's Metrics stage).
    metrics: bool = False
    #: Judge each item in both orders (two requests) and report positional consistency.
    swap: bool = True
    #: What an order-dependent verdict becomes: ``tie``, or ``first`` (the original order's verdict).
    inconsistent: Literal["tie", "first"] = "tie"
    #: ``default``: LLMBar's system message; None: no system message; else your own text.
    system: str | None = "default"
    temperature: Temperature = 0.0
    max_tokens: MaxTokens | None = None
    seed: Seed = 0
    #: ``label``: the verdict the judge wrote. ``logprob``: also the probability of that verdict from
    #: the verdict letter's token log-probabilities (``extra.p_a``, ``extra.preference``); needs
    #: ``cot: none`` and a backend that returns logprobs. The label is the same either way.
    score: Literal["label", "logprob"] = "label"

    def model_post_init(self, __context: object) -> None:
        if self.score == "logprob" and self.cot != "none":
            # The closing verdict of an explanation can be located, but its probability is
            # conditioned on the judge's own reasoning, which has mostly settled it already.
            raise ConfigError("score 'logprob' needs cot 'none': it reads the verdict letter the reply opens "
                              "with; after an explanation the letter's probability mostly repeats that "
                              "explanation rather than the judge's uncertainty")

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None,
            **options: Any) -> list[Judgment]:
        """Judge ``items`` (pairwise: ``instruction``, ``output_a``, ``output_b``); judgments in input order."""
        if options:  # e.g. examples_pool, which the CLI passes on --examples-from
            raise ConfigError(f"the pairwise judge takes no {', '.join(sorted(options))} (no in-context examples)")
        if not items:
            return []
        wrong = next((item for item in items if item.kind != "pairwise"), None)
        if wrong is not None:
            raise ConfigError(f"the pairwise judge compares output_a with output_b; item {wrong.id!r} is a "
                              f"{wrong.kind} item")
        prepared = self._aux_texts(items, client)
        prefix = self._prefix(client)
        judgments: list[Judgment | None] = [None] * len(items)
        pending: dict[int, _Pending] = {}
        requests: list[Request] = []
        slots: list[tuple[int, Order]] = []
        for index, item in enumerate(items):
            aux = prepared[index]
            if isinstance(aux, Judgment):
                judgments[index] = self.emit(aux, on_judgment)
                continue
            try:
                rendered = {order: self._render(item, order, aux) for order in self.orders}
            except JudgelabError as exc:
                judgments[index] = self.emit(self.error(item, str(exc), aux.usage), on_judgment)
                continue
            pending[index] = _Pending(aux=aux, rendered=rendered)
            for order in self.orders:  # both orders of an item adjacent: they share the prompt prefix
                requests.append(self._request(rendered[order], prefix))
                slots.append((index, order))

        def settle(position: int, outcome: list[Completion] | RequestError) -> None:
            index, order = slots[position]
            state = pending[index]
            state.outcomes[order] = outcome
            if len(state.outcomes) == len(self.orders):
                judgments[index] = self.emit(self._judgment(items[index], state, prefix), on_judgment)

        # A request the backend rejects (too long for the context, invalid) fails its item only.
        client.complete_all(requests, on_done=settle, errors="return")
        return judgments  # type: ignore[return-value]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, quality_in

        def prefers_quality(request: Request, _: int) -> str:
            shown = request.messages[-1].content.split("# Output (a):\n", 1)[1].split("# Output (b):\n", 1)
            return "Output (a)" if quality_in(shown[0]) >= quality_in(shown[1]) else "Output (b)"

        items = [Item(id=f"p{k}", instruction=f"Answer question {k}.", output_a=f"Answer {k} of quality {a}.",
                      output_b=f"Answer {k} of quality {b}.", label="a" if a > b else "b")
                 for k, (a, b) in enumerate([(3, 1), (1, 2), (2, 1), (1, 3)])]
        return ContractExample(cls(), items, prefers_quality)

    @property
    def orders(self) -> tuple[Order, ...]:
        return ("original", "swapped") if self.swap else ("original",)

    # -- stages -------------------------------------------------------------------------------
    def _aux_texts(self, items: Sequence[Item], client: Client) -> list[ItemTexts | Judgment]:
        stages = [stage for stage, wanted in (("reference", self.reference == "self"), ("checklist", self.metrics))
                  if wanted]

        def render(item: Item, stage: str) -> list:
            if stage == "reference":
                return render_reference_prompt("pairwise", item)
            return render_checklist_prompt("pairwise", "", item)

        return self.item_stages(items, client, stages, render)

    # -- requests and parsing -----------------------------------------------------------------
    def _render(self, item: Item, order: Order, aux: ItemTexts) -> RenderedPairwise:
        return render_pairwise_prompt(item, swap=order == "swapped", cot=self.cot, rules=self.rules,
                                      checklist=aux.checklist, reference=aux.reference, system=self.system)

    def _prefix(self, client: Client) -> str:
        """The forced start of each reply: "Output (" for logprob scoring, where the backend can continue it
        (elsewhere the letter is found where the parser finds the verdict)."""
        wanted = self.score == "logprob" and client.backend.capabilities.assistant_prefix
        return _VERDICT_PREFIX if wanted else ""

    def _request(self, rendered: RenderedPairwise, prefix: str) -> Request:
        logprob = self.score == "logprob"
        budget = self.max_tokens or (_PREFIXED_MAX_TOKENS if prefix else _MAX_TOKENS[rendered.cot])
        return Request(messages=rendered.messages, assistant_prefix=prefix, temperature=self.temperature,
                       max_tokens=budget, seed=self.seed, logprobs=logprob, top_logprobs=_TOP_LOGPROBS if logprob else 0)

    def _judgment(self, item: Item, state: _Pending, prefix: str) -> Judgment:
        usage = state.aux.usage
        parsed: dict[Order, ParsedPreference] = {}
        probabilities: dict[Order, LetterProbability] = {}
        texts: dict[Order, str] = {}
        failures: list[str] = []
        for order in self.orders:
            outcome = state.outcomes[order]
            if isinstance(outcome, RequestError):
                failures.append(f"the {order}-order request failed: {outcome}")
                continue
            usage = usage + usage_of(outcome)
            texts[order] = prefix + outcome[0].text
            parsed[order] = parse_preference(texts[order], cot=self.cot, swapped=state.rendered[order].swapped)
            if self.score == "logprob":
                probabilities[order] = preference_probability(parsed[order], outcome[0].logprobs, assistant_prefix=prefix,
                                                              swapped=state.rendered[order].swapped)
        extra: dict[str, Any] = {"verdicts": {order: p.label for order, p in parsed.items()}}
        if self.score == "logprob":
            extra |= self._soft_verdict(probabilities)
        if "swapped" in texts:
            extra["raw_swapped"] = texts["swapped"]
        if state.aux.reference:
            extra["reference"] = state.aux.reference
        if state.aux.checklist:
            extra["checklist"] = list(state.aux.checklist)
        common: dict[str, Any] = dict(item_id=item.id, judge=self.name,
                                      raw=texts.get("original"), usage=usage)
        if failures:
            return Judgment(status="error", reason="; ".join(failures), extra=extra, **common)
        unparsed = [f"{order} order: {p.reason}" for order, p in parsed.items() if p.label is None]
        if self.swap:
            original, swapped = parsed["original"].label, parsed["swapped"].label
            consistent = None if unparsed else original == swapped
            extra["consistent"] = consistent
            # What judgelab.metrics reads for positional consistency (the swapped order's verdict).
            extra["label_swapped"] = swapped
        if unparsed:
            parsed_any = len(unparsed) < len(self.orders)
            reason = "; ".join(unparsed) + (" (the other order's verdict is in extra.verdicts)" if parsed_any else "")
            return Judgment(status="unparsable", reason=reason, extra=extra, **common)
        label = parsed["original"].label
        if self.swap and not extra["consistent"] and self.inconsistent == "tie":
            label = "tie"
        explanation = (texts["original"].strip() or None) if self.cot == "prefix" else None
        return Judgment(label=label, explanation=explanation, extra=extra, **common)

    def _soft_verdict(self, found: dict[Order, LetterProbability]) -> dict[str, Any]:
        """Per order P(a) and the letters' mass; their mean over the orders as the soft verdict.

        Like the label, the preference needs every order: one order's P(a) keeps its position bias."""
        missing = {order: p.reason for order, p in found.items() if p.p_a is None}
        complete = len(found) == len(self.orders) and not missing
        preference = fmean(p.p_a for p in found.values() if p.p_a is not None) if complete else None
        extra: dict[str, Any] = {"p_a": {order: p.p_a for order, p in found.items()},
                                 "letter_mass": {order: p.mass for order, p in found.items()}}
        if missing:
            extra["p_a_unparsable"] = missing
        extra["preference"] = preference
        extra["confidence"] = None if preference is None else max(preference, 1.0 - preference)
        return extra


@dataclass
class _Pending:
    aux: ItemTexts
    rendered: dict[Order, RenderedPairwise]
    #: Per order: the completions, or the error of a request the backend rejected.
    outcomes: dict[Order, list[Completion] | RequestError] = field(default_factory=dict)
