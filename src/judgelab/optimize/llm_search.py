"""Optimisers in which the LLM proposes: APE (instructions) and OPRO (strategies).

Both follow seed 002 Appendix F.2. Every proposal is one LLM call through the search's client
(cached, so a resumed search replays it for free), sampled at ``temperature`` with a seed that
changes per proposal. A reply that cannot be used (no instruction, no valid strategy) or that
names something already evaluated is recorded in the trajectory as a ``proposal`` line with
the raw text and the reason, and costs no evaluation; ``max_failures`` such replies in a row
stop the search (a model too weak to propose would otherwise loop for ever).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from judgelab.errors import ConfigError, RequestError
from judgelab.judges.base import JudgeConfig
from judgelab.llm.client import Client
from judgelab.llm.types import Request, Usage
from judgelab.optimize.base import BudgetSpent, Optimizer, Search, SearchStopped
from judgelab.optimize.space import StrategyOptimizer, one_factor_variants, outside
from judgelab.parse import parse_json
from judgelab.strategy import FACTORS, Strategy

# APE's resampling template (Zhou et al., 2023, "iterative Monte Carlo search").
APE_TEMPLATE = """Generate a variation of the following instruction while keeping the semantic meaning.

Input: {instruction}

Output:"""

OPRO_TEMPLATE = """You are optimising the prompting strategy of an LLM evaluator that rates the {aspect} of texts.
A strategy picks one value for each factor:
{ranges}

Below are previous strategies with their scores (100 x Spearman correlation with human ratings), \
in ascending order of score; higher is better.
{history}

Write a new strategy, different from all of the above, that you expect to score higher than all of them. \
Answer with one JSON object mapping each of the factors {names} to one of its values, and nothing else."""

_MAX_INSTRUCTION_CHARS = 4000


def _propose(client: Client, prompt: str, *, seed: int, temperature: float, max_tokens: int) -> tuple[str, Usage]:
    """One proposal call; what it returned and what it cost (a call or a cache hit)."""
    request = Request.of(prompt, temperature=temperature, max_tokens=max_tokens, seed=seed)
    [completion] = client.complete(request)
    usage = Usage(cache_hits=1) if completion.cached else Usage(
        calls=1, prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
        cost_usd=client.price.cost(completion.prompt_tokens, completion.completion_tokens) if client.price else None)
    return completion.text, usage


class _Proposer:
    """Mixin: the LLM call, the per-proposal seed and the failure streak."""

    client: Client
    seed: int
    temperature: float
    max_failures: int

    def _setup_proposals(self) -> None:
        self.proposals = 0
        self.failures_in_a_row = 0

    def _ask(self, search: Search, prompt: str, max_tokens: int) -> tuple[str | None, Usage, str | None]:
        """The reply text (None when the request was rejected), its usage, and the rejection reason.

        No proposal is asked for once the budget is spent (it could not be evaluated).
        """
        if search.exhausted:
            raise BudgetSpent
        self.proposals += 1
        try:
            text, usage = _propose(self.client, prompt, seed=self.seed * 100_003 + self.proposals,
                                   temperature=self.temperature, max_tokens=max_tokens)
        except RequestError as exc:
            return None, Usage(), f"proposal request rejected: {exc}"
        return text, usage, None

    def _failed(self, search: Search, raw: str | None, reason: str, usage: Usage, ok: bool = False) -> None:
        search.record_proposal(ok=ok, raw=raw, reason=reason, usage=usage)
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= self.max_failures:
            raise SearchStopped(f"{self.max_failures} proposals in a row gave nothing new to evaluate")


# -- APE --------------------------------------------------------------------------------------------


def instruction_field_text(search: Search) -> str:
    """The instruction APE and rewriting optimise: the judge's human-written criteria text."""
    from judgelab.prompts import criteria_text

    base = search.base
    strategy = getattr(base, "strategy", None)
    if strategy is None or not hasattr(base, "criteria"):
        raise ConfigError(f"instruction search needs a prompted judge, not kind {base.kind!r}")
    if strategy.criteria != "human":
        raise ConfigError("instruction search rewrites the human-written criteria text, which this strategy "
                          f"does not show (criteria={strategy.criteria!r}); use criteria=human")
    items = getattr(search.evaluator, "items", None) or []
    dataset = base.criteria_dataset or (items[0].dataset if items else None)
    return criteria_text(base.aspect, strategy.scale, text=base.criteria, dataset=dataset)


def with_instruction(base: JudgeConfig, text: str) -> JudgeConfig:
    return base.model_copy(update={"criteria": text})


def clean_instruction(reply: str) -> str | None:
    """The instruction in a reply: the text after an ``Output:``/``Instruction:`` label, unquoted."""
    text = (reply or "").strip()
    for label in ("Output:", "Improved instruction:", "New instruction:", "Instruction:"):
        if text.lower().startswith(label.lower()):
            text = text[len(label):].strip()
    text = text.strip().strip('"').strip("'").strip()
    if not text or len(text) > _MAX_INSTRUCTION_CHARS:
        return None
    return text


class APE(_Proposer, Optimizer):
    """Keep a queue of the ``queue_size`` best instructions; resample ``per_prompt`` variants of each."""

    method = "ape"

    def __init__(self, client: Client, *, seed: int = 0, queue_size: int = 5, per_prompt: int = 2,
                 temperature: float = 1.0, max_tokens: int = 384, max_failures: int = 10):
        super().__init__(seed=seed)
        self.client, self.queue_size, self.per_prompt = client, queue_size, per_prompt
        self.temperature, self.max_tokens, self.max_failures = temperature, max_tokens, max_failures
        self.scores: dict[str, float] = {}
        self._setup_proposals()

    def settings(self) -> dict[str, Any]:
        return {"seed": self.seed, "queue_size": self.queue_size, "per_prompt": self.per_prompt,
                "temperature": self.temperature, "max_tokens": self.max_tokens}

    def run(self, search: Search) -> None:
        start = instruction_field_text(search)
        self.scores[start] = search.evaluate(with_instruction(search.base, start), "start").search_objective
        while True:
            for parent in self.queue():
                for _ in range(self.per_prompt):
                    self._resample(search, parent)

    def queue(self) -> list[str]:
        ranked = sorted(self.scores, key=lambda text: -self.scores[text])  # stable: ties keep age order
        return ranked[: self.queue_size]

    def _resample(self, search: Search, parent: str) -> None:
        raw, usage, rejected = self._ask(search, APE_TEMPLATE.format(instruction=parent), self.max_tokens)
        if raw is None:
            return self._failed(search, None, rejected or "no reply", usage)
        text = clean_instruction(raw)
        if text is None:
            return self._failed(search, raw, "no instruction in the reply (empty or too long)", usage)
        if text in self.scores:
            return self._failed(search, raw, "the same instruction was already evaluated", usage, ok=True)
        self.failures_in_a_row = 0
        evaluation = search.evaluate(with_instruction(search.base, text), "resample", proposal_usage=usage)
        self.scores[text] = evaluation.search_objective

    def state(self) -> dict[str, Any]:
        return {"queue": [{"objective": self.scores[t], "instruction": t} for t in self.queue()],
                "proposals": self.proposals}


# -- OPRO -------------------------------------------------------------------------------------------


def parse_strategy(reply: str) -> tuple[Strategy | None, str | None]:
    """A strategy from a JSON object in the reply (or ``factor=value,...``); else None and why."""
    parsed = parse_json(reply)
    data = parsed.data
    if isinstance(data, list) and data and isinstance(data[-1], dict):
        data = data[-1]
    if not isinstance(data, dict):
        if "=" in (reply or ""):
            try:
                return Strategy.from_key(reply.strip().splitlines()[-1].strip()), None
            except (ValueError, ValidationError) as exc:
                return None, f"not a strategy: {_first_error(exc)}"
        return None, parsed.reason or "no JSON object in the reply"
    cleaned = {str(k).strip().lower(): _coerce(v) for k, v in data.items()}
    missing = [name for name in FACTORS if name not in cleaned]
    if missing:
        return None, f"the strategy leaves out {', '.join(missing)}"
    try:
        return Strategy.model_validate(cleaned), None
    except ValidationError as exc:
        return None, f"not a strategy: {_first_error(exc)}"


def _coerce(value: Any) -> Any:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, str):
        return value.strip().lower() if value.strip().lower() in ("on", "off", "human", "none", "self", "dialectic",
                                                                    "prefix", "suffix") else value.strip()
    return value


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)


class OPRO(_Proposer, StrategyOptimizer):
    """Show the LLM the factor ranges and the ``history`` best strategies; evaluate what it proposes."""

    method = "opro"

    def __init__(self, client: Client, *, seed: int = 0, history: int = 20, temperature: float = 1.0,
                 max_tokens: int = 256, max_failures: int = 10, space: Mapping[str, Any] | None = None):
        super().__init__(seed=seed, space=space)
        self.client, self.history, self.temperature = client, history, temperature
        self.max_tokens, self.max_failures = max_tokens, max_failures
        self.scores: dict[str, float] = {}
        self._setup_proposals()

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "history": self.history, "temperature": self.temperature,
                "max_tokens": self.max_tokens}

    def run(self, search: Search) -> None:
        start = self.start(search)
        # The strategies explored in HPSS's initialisation are OPRO's initial history (F.2).
        for strategy in [start, *one_factor_variants(start, self.space)]:
            self.scores[strategy.key()] = self.evaluate(search, strategy, "init")
        while True:
            self._step(search)

    def prompt(self, aspect: str) -> str:
        ranges = "\n".join(f"- {name}: {', '.join(json.dumps(_plain(v)) for v in values)}"
                           for name, values in self.space.items())
        best = sorted(self.scores.items(), key=lambda kv: -kv[1])[: self.history]
        history = "\n".join(f"{json.dumps(_as_json(key))} score: {score:.1f}" for key, score in reversed(best))
        return OPRO_TEMPLATE.format(aspect=aspect, ranges=ranges, history=history, names=", ".join(FACTORS))

    def _step(self, search: Search) -> None:
        raw, usage, rejected = self._ask(search, self.prompt(getattr(search.base, "aspect", "quality")), self.max_tokens)
        if raw is None:
            return self._failed(search, None, rejected or "no reply", usage)
        strategy, reason = parse_strategy(raw)
        if strategy is None:
            return self._failed(search, raw, reason or "unparsable", usage)
        if left_out := outside(strategy, self.space):
            return self._failed(search, raw, f"outside the search space: {', '.join(left_out)}", usage)
        if strategy.key() in self.scores:
            return self._failed(search, raw, f"already evaluated: {strategy.key()}", usage, ok=True)
        self.failures_in_a_row = 0
        self.scores[strategy.key()] = search.evaluate(self.config(search, strategy), "propose",
                                                      proposal_usage=usage).search_objective

    def state(self) -> dict[str, Any]:
        return {"proposals": self.proposals, "evaluated": len(self.scores)}


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


def _as_json(key: str) -> dict[str, Any]:
    return {name: _plain(getattr(Strategy.from_key(key), name)) for name in FACTORS}
