"""The likelihood judge (GPTScore, Fu et al. 2024): how probable the model finds the output.

No rating is written and none is parsed. The model is asked to write the kind of text being
judged ("Write a fluent sentence that expresses the structured data expression below."), and
the judged output is scored as its reply: the log-probability of each of its tokens given the
prompt, reduced to one number per item (``reduce``: the ``mean`` per token, GPTScore's choice,
or the ``sum``, which also rewards saying it in fewer tokens). Higher is better; the score is in
nats, not on the aspect's rating scale, so it is for ranking (Spearman, Kendall, pairwise
agreement) or as an input of a learned judge (``judgelab train --stack --stack-with``).

One forward pass per item and nothing generated: about the cost of reading the prompt. Needs a
backend that returns the logprobs of a given reply (``prefix_scoring``: the embedded model);
others are refused before any call. Every judgment keeps the token count and all three
reductions in ``extra``, so a run can be re-reduced without new calls.

``likelihood_of="input"`` turns the direction round: the model reads the judged text and the
*input* is scored as its reply (for relevance: the query's log-probability given the passage, the
unsupervised re-ranker of Sachan et al. 2022, "UPR"; for data-to-text: the meaning representation
given the sentence). A passage that answers a query makes that query likely, whatever the
passage's own fluency, which the output direction mostly measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, ClassVar, Literal

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.judges.base import JudgeConfig, OnJudgment, usage_of
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request
from judgelab.prompts.render import family_for, render_likelihood_prompt

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Reduce = Literal["mean", "sum", "min"]
Direction = Literal["output", "input"]


class LikelihoodJudge(JudgeConfig):
    """Scores an output by its log-probability under the model, given an instruction and the source."""

    registry_name: ClassVar[str] = "likelihood"
    kind: Literal["likelihood"] = "likelihood"
    #: Named in the instruction ("Write a fluent summary ..."), as GPTScore's aspect-specific prompts do.
    aspect: str
    #: Task family (wording of the instruction and of the source); None: from the items' dataset.
    family: str | None = None
    #: The task in your own words (the ``generic`` family).
    task: str | None = None
    #: Your own instruction, replacing the family's ("Write a polite reply to the customer below.").
    instruction: str | None = None
    #: How token logprobs become the score: ``mean`` (per token), ``sum`` (whole output), ``min`` (worst token).
    reduce: Reduce = "mean"
    #: Which text's log-probability is the score: the judged ``output`` given the input (GPTScore), or
    #: the ``input`` (a relevance item's query, else its source) given the judged text (UPR).
    likelihood_of: Direction = "output"

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        if not items:
            return []
        family = family_for(items, self.family)
        # Outputs of one source one after another: the embedded model reuses the prompt's KV state.
        order = sorted(range(len(items)), key=lambda i: (items[i].group, items[i].id))
        judgments: list[Judgment | None] = [None] * len(items)
        pending: list[tuple[int, Request]] = []
        for index in order:
            try:
                pending.append((index, self._request(family, items[index])))
            except JudgelabError as exc:
                judgments[index] = self.emit(self.error(items[index], str(exc)), on_judgment)
        if pending:
            client.check(pending[0][1])  # a backend that cannot score a reply: one clear error, no calls

        def finish(position: int, outcome: list[Completion] | RequestError) -> None:
            index, _ = pending[position]
            judgment = (self.error(items[index], str(outcome)) if isinstance(outcome, RequestError)
                        else self._judgment(items[index], outcome[0], usage_of(outcome)))
            judgments[index] = self.emit(judgment, on_judgment)

        client.complete_all([request for _, request in pending], on_done=finish, errors="return")
        return judgments  # type: ignore[return-value]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, quality_in
        from judgelab.llm.backends.base import Capabilities
        from judgelab.llm.types import TokenLogprob

        def scored(request: Request, _: int) -> Completion:
            """Each word of the scored reply is a token, more probable the higher the stated quality."""
            logprob = -1.0 / quality_in(request.assistant_prefix)
            return Completion(text="", prompt_tokens=20, prefix_logprobs=tuple(
                TokenLogprob(token=word, logprob=logprob) for word in request.assistant_prefix.split()))

        return ContractExample(cls(aspect="coherence"), pointwise_items("coherence"), scored,
                               capabilities=Capabilities(assistant_prefix=True, prefix_scoring=True))

    def _request(self, family: str, item: Item) -> Request:
        judged, given = (item.judged or "").strip(), (item.prompt or "").strip()
        if not judged:
            raise ConfigError(f"the item has no {'passage' if item.kind == 'relevance' else 'output'} to score")
        if self.likelihood_of == "input" and not given:
            raise ConfigError(f"likelihood_of: input, but the item has no {'query' if item.kind == 'relevance' else 'source'}")
        messages = render_likelihood_prompt(family, self.aspect, item, task=self.task, instruction=self.instruction,
                                            likelihood_of=self.likelihood_of)
        return Request(messages=tuple(messages), assistant_prefix=judged if self.likelihood_of == "output" else given,
                       score_prefix=True, max_tokens=1, temperature=0.0)

    def _judgment(self, item: Item, completion: Completion, usage) -> Judgment:
        logprobs = [t.logprob for t in completion.prefix_logprobs or ()]
        if not logprobs:
            return self.error(item, "the backend returned no token logprobs for the output", usage)
        reductions = {"mean": fmean(logprobs), "sum": sum(logprobs), "min": min(logprobs)}
        return Judgment(item_id=item.id, score=reductions[self.reduce], aspect=self.aspect, judge=self.name,
                        usage=usage, extra={"tokens": len(logprobs), **{f"logprob_{k}": v for k, v in reductions.items()}})
