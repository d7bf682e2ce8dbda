"""What every optimiser shares: the objective, the budget, the run folder and resuming.

An optimiser proposes judge configs; ``Search.evaluate(config)`` runs each on the dev items
through the judge and ``meta_evaluate`` (so every LLM call goes through the one ``Client``:
cached and accounted), spends one unit of the budget, appends one line to
``RUN_DIR/trajectory.jsonl`` and keeps the running best. ``optimize(...)`` drives an optimiser
to the end of its budget, writes ``best.yaml`` (a file ``judgelab judge --config`` reuses) and,
given test items, scores the best and the start config on them.

Resuming is a replay: rerunning the same search into the same folder runs the (seeded,
deterministic) optimiser from the start, and every evaluation it asks for that the folder
already records, in the same order, is taken from the record instead of being judged again.
LLM proposals (APE, OPRO, rewriting) are replayed through the completion cache.
"""

from __future__ import annotations

import inspect
import json
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from judgelab.data.io import JsonlAppender, iter_jsonl, load_judgments, save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, term
from judgelab.files import private_dir, write_atomic
from judgelab.judges.base import JudgeConfig, judge_from_dict
from judgelab.llm.client import Client
from judgelab.llm.types import Usage
from judgelab.optimize.names import DEFAULT_MIN_COVERAGE, OBJECTIVES

Objective = Literal["spearman", "q", "kappa", "pairwise"]  # optimize.names.OBJECTIVES
#: The objective a search sees for a judge whose statistic is undefined (constant or no usable
#: ratings): such a judge ranks nothing, so it counts as "no correlation". It is recorded as null.
UNDEFINED_OBJECTIVE = 0.0

TRAJECTORY = "trajectory.jsonl"
STATE = "optimizer.json"
BEST = "best.yaml"
TEST = "test.json"
JUDGMENTS = "judgments"


class BudgetSpent(Exception):  # noqa: N818 - a signal that ends the search, not an error
    """Raised by ``Search.evaluate`` when no budget is left; ``optimize`` ends the search there."""


@dataclass(frozen=True)
class Budget:
    """How much a search may spend: evaluations (always), and optionally paid LLM calls or USD.

    Calls and cost are checked before each new evaluation: the evaluation that crosses the
    limit finishes, the next one does not start.
    """

    evaluations: int
    calls: int | None = None
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.evaluations < 1:
            raise ConfigError(f"the budget must allow at least 1 evaluation, got {self.evaluations}")


# -- evaluating one config ------------------------------------------------------------------------

#: Identity values of run folders written before the key existed.
LEGACY: dict[str, Any] = {"min_coverage": 0.0}


@dataclass
class Evaluation:
    """One config's agreement with the humans on some items, and what it cost.

    ``objective`` is 100 x the chosen statistic (the HPSS paper's f), None when undefined
    (``reason`` says why); ``pairwise_agreement`` is recorded alongside whatever the objective.
    """

    objective: float | None
    statistic: str
    level: str
    value: float | None = None
    ci: tuple[float | None, float | None] | None = None
    pairwise_agreement: float | None = None
    n_items: int = 0
    n_used: int = 0
    unparsable: int = 0
    errors: int = 0
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    wall_s: float = 0.0
    judgments: list[Judgment] = field(default_factory=list, repr=False)

    @property
    def search_objective(self) -> float:
        return UNDEFINED_OBJECTIVE if self.objective is None else self.objective

    def to_record(self) -> dict[str, Any]:
        return {
            "objective": self.objective, "statistic": self.statistic, "level": self.level, "value": self.value,
            "ci": list(self.ci) if self.ci else None, "pairwise_agreement": self.pairwise_agreement,
            "n_items": self.n_items, "n_used": self.n_used, "unparsable": self.unparsable, "errors": self.errors,
            "reason": self.reason, "calls": self.usage.calls, "cache_hits": self.usage.cache_hits,
            "prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens,
            "cost_usd": self.usage.cost_usd, "wall_s": round(self.wall_s, 3),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any], judgments: list[Judgment] | None = None) -> Evaluation:
        usage = Usage(calls=record.get("calls", 0), cache_hits=record.get("cache_hits", 0),
                      prompt_tokens=record.get("prompt_tokens", 0),
                      completion_tokens=record.get("completion_tokens", 0), cost_usd=record.get("cost_usd"))
        ci = tuple(record["ci"]) if record.get("ci") else None
        return cls(objective=record["objective"], statistic=record["statistic"], level=record["level"],
                   value=record.get("value"), ci=ci, pairwise_agreement=record.get("pairwise_agreement"),
                   n_items=record.get("n_items", 0), n_used=record.get("n_used", 0),
                   unparsable=record.get("unparsable", 0), errors=record.get("errors", 0),
                   reason=record.get("reason"), usage=usage, wall_s=record.get("wall_s", 0.0),
                   judgments=judgments or [])


class Evaluator(Protocol):
    """Scores a config on the dev items (or on ``items`` when given, e.g. the test items)."""

    objective: str

    def evaluate(self, config: JudgeConfig, items: Sequence[Item] | None = None) -> Evaluation: ...


class JudgeEvaluator:
    """The real objective: run the judge through ``client``, then ``meta_evaluate`` its judgments.

    Levels follow the benchmark as the ``hpss`` preset does (dataset level; per source for
    SummEval). ``spearman``: that Spearman; ``q``: Pearson + Spearman + Kendall at the dataset
    level (``active-critic`` preset); ``kappa``: Cohen's kappa on the labels as given (meaningful
    when the judge's scale is the humans' scale, e.g. relevance 0-3); ``pairwise``: the share of
    same-source output pairs ordered as the humans order them. In-context examples come from
    ``examples_pool`` (default: the dev items; never the judged item itself).

    ``min_coverage``: the objective is undefined when fewer than this share of the items get a
    usable rating. A statistic over the few items a config happens to rate is not that config's
    agreement (3 of 40 in the right order is a Spearman of 1.0), and a search would pick it.
    """

    def __init__(self, items: Sequence[Item], client: Client, *, objective: Objective = "spearman",
                 examples_pool: Sequence[Item] | None = None, n_resamples: int = 200, seed: int = 0,
                 min_coverage: float = DEFAULT_MIN_COVERAGE):
        if objective not in OBJECTIVES:
            raise ConfigError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
        if not 0.0 <= min_coverage <= 1.0:
            raise ConfigError(f"min_coverage is a share of the items, from 0 to 1; got {min_coverage:g}")
        if not items:
            raise ConfigError("the search needs dev items with human labels")
        self.items = list(items)
        self.client = client
        self.objective = objective
        self.examples_pool = list(examples_pool) if examples_pool is not None else self.items
        self.n_resamples = n_resamples
        self.seed = seed
        self.min_coverage = min_coverage

    def evaluate(self, config: JudgeConfig, items: Sequence[Item] | None = None) -> Evaluation:
        items = list(items) if items is not None else self.items
        before = self.client.usage.model_copy()
        started = time.perf_counter()
        options = {"examples_pool": self.examples_pool} if _accepts(config.run, "examples_pool") else {}
        judgments = config.run(items, self.client, **options)
        usage = _usage_delta(before, self.client.usage)
        evaluation = self._meta(config, items, judgments)
        evaluation.usage, evaluation.wall_s, evaluation.judgments = usage, time.perf_counter() - started, judgments
        return evaluation

    def _meta(self, config: JudgeConfig, items: list[Item], judgments: list[Judgment]) -> Evaluation:
        from judgelab.metrics import meta_evaluate

        counts = {"n_items": len(items), "unparsable": sum(j.status == "unparsable" for j in judgments),
                  "errors": sum(j.status == "error" for j in judgments)}
        aspect = getattr(config, "aspect", None)
        options = {"aspect": aspect, "n_resamples": self.n_resamples, "seed": self.seed}
        try:
            hpss = meta_evaluate(items, judgments, preset="hpss", **options)
            estimate, level = self._estimate(hpss, items, judgments, options)
        except JudgelabError as exc:  # nothing usable (every judgment failed, no human labels)
            return Evaluation(objective=None, statistic=self.objective, level="dataset", reason=str(exc), **counts)
        pairwise = hpss.sections.get("pairwise_agreement")
        value = _finite(estimate.value) if estimate is not None else None
        ci = (_finite(estimate.ci[0]), _finite(estimate.ci[1])) if estimate is not None and estimate.ci else None
        reason = None
        if value is None:
            reason = (estimate.reason if estimate is not None else None) or f"{self.objective} is undefined here"
        elif hpss.coverage.n_used < self.min_coverage * len(items):
            reason = (f"only {hpss.coverage.n_used} of {len(items)} items have a usable rating, under min_coverage "
                      f"{self.min_coverage:g}: {self.objective} on them ({value:.3f}) is not the judge's agreement")
        return Evaluation(objective=None if reason else 100.0 * value, statistic=self.objective,
                          level=level, value=value, ci=ci,
                          pairwise_agreement=_finite(pairwise.value) if pairwise is not None else None,
                          n_used=hpss.coverage.n_used, reason=reason, **counts)

    def _estimate(self, hpss, items, judgments, options):
        from judgelab.metrics import meta_evaluate

        if self.objective == "spearman":
            level = "group" if "group" in hpss.sections else "dataset"
            return hpss[level]["spearman"], level
        if self.objective == "pairwise":
            return hpss.sections.get("pairwise_agreement"), "group"
        if self.objective == "q":
            return meta_evaluate(items, judgments, preset="active-critic", **options)["q"], "dataset"
        agreement = meta_evaluate(items, judgments, **options).sections.get("agreement")
        return (agreement["kappa"] if agreement is not None else None), "dataset"


def _accepts(function: Callable, name: str) -> bool:
    return name in inspect.signature(function).parameters


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _usage_delta(before: Usage, after: Usage) -> Usage:
    cost = None
    if after.cost_usd is not None:
        cost = after.cost_usd - (before.cost_usd or 0.0)
    return Usage(calls=after.calls - before.calls, cache_hits=after.cache_hits - before.cache_hits,
                 prompt_tokens=after.prompt_tokens - before.prompt_tokens,
                 completion_tokens=after.completion_tokens - before.completion_tokens, cost_usd=cost,
                 latency_s=after.latency_s - before.latency_s)


# -- the optimiser interface ---------------------------------------------------------------------


@dataclass(frozen=True)
class OptimizerExample:
    """What the contract test (tests/unit/test_contract.py) needs to run one optimiser's search."""

    #: The start config; None: the prompted judge's contract example (whose items are the dev items).
    base: JudgeConfig | None = None
    #: The scripted LLM's reply to this optimiser's proposal prompts, None for any other prompt (the
    #: judge's own example answers those); None for optimisers that ask the LLM nothing.
    proposal: Callable[[Any, int], str | None] | None = None
    #: Settings for ``make_optimizer`` that keep the search small (e.g. a confined strategy space).
    options: dict[str, Any] = field(default_factory=dict)


class Optimizer(ABC):
    """Proposes configs and calls ``search.evaluate`` until ``BudgetSpent`` (or it has nothing left).

    Subclasses must be deterministic for a seed given the objective values they see (that is
    what makes a resumed run replay the same trajectory). ``settings()`` identifies a search:
    resuming into a folder of another search is refused.
    """

    method: ClassVar[str] = ""

    def __init__(self, *, seed: int = 0):
        self.seed = seed

    @abstractmethod
    def run(self, search: Search) -> None: ...

    @classmethod
    def contract_example(cls) -> OptimizerExample:
        """A small search of this optimiser for the contract test, tests/unit/test_contract.py."""
        raise NotImplementedError(
            f"optimiser {cls.method!r} ({cls.__name__}) gives the contract test nothing to run: define the classmethod "
            f"{cls.__name__}.contract_example() -> judgelab.optimize.base.OptimizerExample (its proposal replies and "
            "settings; see the other optimisers)")

    def check(self, base: JudgeConfig) -> None:
        """Raise ``ConfigError`` if the search cannot start from ``base`` (before any folder is written)."""
        return None  # most searches find out only when they start

    def settings(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def state(self) -> dict[str, Any]:
        """The optimiser's internal state worth inspecting (written to ``optimizer.json``)."""
        return {}


#: Called with each trajectory record as it is written (progress displays).
OnRecord = Callable[[dict[str, Any]], None]


class Search:
    """The ledger of one search: budget, trajectory, best so far, run folder, replay on resume."""

    def __init__(self, optimizer: Optimizer, base: JudgeConfig, evaluator: Evaluator, budget: Budget,
                 out: Path | None = None, on_record: OnRecord | None = None, info: dict[str, Any] | None = None):
        self.optimizer = optimizer
        self.base = base
        self.evaluator = evaluator
        self.budget = budget
        self.out = out
        self.on_record = on_record
        self.info = info or {}
        self.records: list[dict[str, Any]] = []
        self.evaluations = 0
        self.usage = Usage(cost_usd=None)
        self.best: dict[str, Any] | None = None
        self.best_config: JudgeConfig | None = None
        self.status = "running"
        self._scores: dict[str, float] = {}
        self._recorded: list[dict[str, Any]] = []
        self._appender: JsonlAppender | None = None
        self._started = time.perf_counter()
        if out is not None:
            self._open_folder(out)

    # -- what optimisers call ----------------------------------------------------------------
    @property
    def remaining(self) -> int:
        return max(0, self.budget.evaluations - self.evaluations)

    @property
    def exhausted(self) -> bool:
        if self.evaluations >= self.budget.evaluations:
            return True
        if self.budget.calls is not None and self.usage.calls >= self.budget.calls:
            return True
        return self.budget.cost_usd is not None and (self.usage.cost_usd or 0.0) >= self.budget.cost_usd

    def seen(self, config: JudgeConfig) -> bool:
        return config.digest() in self._scores

    def evaluate(self, config: JudgeConfig, phase: str = "", proposal_usage: Usage | None = None,
                 **notes: Any) -> Evaluation:
        """Score ``config`` on the dev items (one unit of budget); raises ``BudgetSpent`` when none is left.

        ``proposal_usage``: what the LLM call that proposed ``config`` cost (APE, OPRO, rewriting).
        """
        if self.exhausted:
            raise BudgetSpent
        digest = config.digest()
        replayed = self._replay("evaluation", digest)
        if replayed is not None:
            evaluation = Evaluation.from_record(replayed, self._load_judgments(replayed))
            proposal_usage = Usage(calls=replayed.get("proposal_calls", 0),
                                   cache_hits=replayed.get("proposal_cache_hits", 0),
                                   cost_usd=replayed.get("proposal_cost_usd"))
        else:
            evaluation = self.evaluator.evaluate(config)
        proposal_usage = proposal_usage or Usage()
        self.evaluations += 1
        self.usage = self.usage + evaluation.usage + proposal_usage
        notes |= {"proposal_calls": proposal_usage.calls, "proposal_cache_hits": proposal_usage.cache_hits,
                  "proposal_cost_usd": proposal_usage.cost_usd}
        self._scores[digest] = evaluation.search_objective
        record = {"kind": "evaluation", "step": self.evaluations, "method": self.optimizer.method, "phase": phase,
                  "digest": digest, "config": config.model_dump(mode="json"), **_strategy_key(config),
                  **evaluation.to_record(), "score": evaluation.objective, **notes}
        if self._improves(evaluation):
            self.best = {"step": self.evaluations, "digest": digest, "objective": evaluation.objective,
                         "pairwise_agreement": evaluation.pairwise_agreement}
            self.best_config = config
        record |= self._running_totals()
        if replayed is None and self.out is not None and evaluation.judgments:
            save_judgments(evaluation.judgments, self._judgments_path(self.evaluations, digest))
        self._write(record, replayed)
        return evaluation

    def record_proposal(self, *, ok: bool, raw: str | None, reason: str | None, usage: Usage,
                        phase: str = "proposal", **notes: Any) -> None:
        """Record an LLM proposal that led to no evaluation (unparsable, invalid or already tried)."""
        replayed = self._replay("proposal", None)
        if replayed is None:
            self.usage = self.usage + usage
        else:
            usage = Usage(calls=replayed.get("calls", 0), cache_hits=replayed.get("cache_hits", 0),
                          cost_usd=replayed.get("cost_usd"))
            self.usage = self.usage + usage
        record = {"kind": "proposal", "step": self.evaluations, "method": self.optimizer.method, "phase": phase,
                  "status": "ok" if ok else "unparsable", "reason": reason, "raw": raw, "score": None,
                  "calls": usage.calls,
                  "cache_hits": usage.cache_hits, "cost_usd": usage.cost_usd, **notes}
        self._write(record | self._running_totals(), replayed)

    def add_usage(self, usage: Usage) -> None:
        """Count LLM calls made outside the search proper (scoring on the test items)."""
        self.usage = self.usage + usage

    # -- internals ---------------------------------------------------------------------------
    def _improves(self, evaluation: Evaluation) -> bool:
        """A defined objective beats an undefined one; an undefined one is best only until then."""
        if self.best is None:
            return True
        if evaluation.objective is None:
            return False
        return self.best["objective"] is None or evaluation.objective > self.best["objective"]

    def _running_totals(self) -> dict[str, Any]:
        best = self.best["objective"] if self.best else None
        # "best" repeats best_objective under the name report.html plots as the running best.
        return {"best_objective": best, "best": best,
                "best_step": self.best["step"] if self.best else None,
                "total_calls": self.usage.calls, "total_cache_hits": self.usage.cache_hits,
                "total_cost_usd": self.usage.cost_usd,
                "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}

    def _replay(self, kind: str, digest: str | None) -> dict[str, Any] | None:
        """The recorded line for this position, if it is the same event; else the rest is dropped."""
        position = len(self.records)
        if position >= len(self._recorded):
            return None
        recorded = self._recorded[position]
        if recorded.get("kind") == kind and (digest is None or recorded.get("digest") == digest):
            return recorded
        self._truncate(position)  # the search went another way: what follows no longer applies
        return None

    def _write(self, record: dict[str, Any], replayed: dict[str, Any] | None) -> None:
        if replayed is not None:
            record["time"] = replayed.get("time", record["time"])
        self.records.append(record)
        if replayed is None and self._appender is not None:
            self._appender.append(record)
        if self.out is not None:
            self.save_state()
        if self.on_record:
            self.on_record(record)

    def _open_folder(self, out: Path) -> None:
        private_dir(out)
        state_path = out / STATE
        if state_path.exists():
            earlier = json.loads(state_path.read_text(encoding="utf-8"))
            mine = self.identity()
            # Folders written before min_coverage existed scored every config whatever its coverage.
            theirs = {key: earlier.get(key, LEGACY.get(key)) for key in mine}
            if theirs != mine:
                # A key older folders may lack is named with its value there: it may be the legacy one.
                changed = ", ".join(f"{key}: {theirs.get(key)!r} there" if key in LEGACY else key
                                    for key in mine if theirs.get(key) != mine[key])
                raise ConfigError(f"{out} holds another search (different {changed}); choose a new {term('out')} "
                                  "folder or rerun with the same options to resume")
        trajectory = out / TRAJECTORY
        if trajectory.exists():
            JsonlAppender(trajectory).close()  # drops a line cut short by a crash
            self._recorded = [record for _, record in iter_jsonl(trajectory)]
        self._appender = JsonlAppender(trajectory)

    def _truncate(self, position: int) -> None:
        self._recorded = self._recorded[:position]
        if self.out is None:
            return
        if self._appender is not None:
            self._appender.close()
        path = self.out / TRAJECTORY
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in self._recorded))
        self._appender = JsonlAppender(path)

    def _judgments_path(self, step: int, digest: str) -> Path:
        assert self.out is not None
        return self.out / JUDGMENTS / f"{step:04d}-{digest}.jsonl"

    def _load_judgments(self, record: dict[str, Any]) -> list[Judgment]:
        if self.out is None:
            return []
        path = self._judgments_path(record["step"], record["digest"])
        return load_judgments(path) if path.exists() else []

    def identity(self) -> dict[str, Any]:
        """What must match for a folder to be resumed (the budget may grow)."""
        return {"method": self.optimizer.method, "settings": self.optimizer.settings(),
                "objective": self.evaluator.objective,
                "min_coverage": getattr(self.evaluator, "min_coverage", None), "base_digest": self.base.digest(),
                **{key: self.info.get(key) for key in ("data", "backend")}}

    def save_state(self, test: dict[str, Any] | None = None) -> None:
        if self.out is None:
            return
        optimizer_state = self.optimizer.state()
        state = {**self.identity(), **self.info, "base": self.base.model_dump(mode="json"),
                 "budget": {"evaluations": self.budget.evaluations, "calls": self.budget.calls,
                            "cost_usd": self.budget.cost_usd},
                 "status": self.status, "evaluations": self.evaluations,
                 "proposals": sum(r["kind"] == "proposal" for r in self.records),
                 "usage": self.usage.model_dump(), "best": self.best, "state": optimizer_state,
                 "wall_s": round(time.perf_counter() - self._started, 3)}
        if "advantage" in optimizer_state:  # HPSS: per-value advantages, where report.html looks for them
            state["advantages"] = optimizer_state["advantage"]
        if test is not None:
            state["test"] = test
        _write_json(self.out / STATE, state)

    def close(self) -> None:
        if self._appender is not None:
            self._appender.close()
            self._appender = None


def _strategy_key(config: JudgeConfig) -> dict[str, Any]:
    strategy = getattr(config, "strategy", None)
    return {"strategy": strategy.key()} if strategy is not None else {}


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, default=str))  # owner-only, never half written


# -- driving a search -----------------------------------------------------------------------------


@dataclass
class OptimizeResult:
    """The best config on dev, its record, the whole trajectory and (given test items) test scores."""

    best_config: JudgeConfig | None
    best: dict[str, Any] | None
    records: list[dict[str, Any]]
    evaluations: int
    usage: Usage
    status: str
    test: dict[str, Any] | None = None
    folder: Path | None = None

    @property
    def trajectory(self) -> list[dict[str, Any]]:
        """Only the evaluations (proposals that led to none are in ``records``)."""
        return [r for r in self.records if r["kind"] == "evaluation"]


def optimize(optimizer: Optimizer, base: JudgeConfig, evaluator: Evaluator, budget: Budget | int,
             out: str | Path | None = None, *, test_items: Sequence[Item] | None = None,
             on_record: OnRecord | None = None, info: dict[str, Any] | None = None) -> OptimizeResult:
    """Run ``optimizer`` from ``base`` until ``budget`` is spent; resume from ``out`` if it holds this search.

    ``base`` is the start config (for strategy searches its ``strategy`` is the start point).
    ``info`` is recorded in ``optimizer.json`` (``data`` and ``backend`` also guard resuming).
    With ``test_items``, the best and the start config are scored on them (``test.json``).
    """
    budget = Budget(budget) if isinstance(budget, int) else budget
    optimizer.check(base)
    folder = Path(out) if out is not None else None
    search = Search(optimizer, base, evaluator, budget, folder, on_record, info)
    try:
        try:
            optimizer.run(search)
            search.status = "finished" if not search.exhausted else "budget spent"
        except BudgetSpent:
            search.status = "budget spent"
        except SearchStopped as stop:
            search.status = f"stopped: {stop}"
        test = _test(search, evaluator, test_items) if test_items is not None and search.best_config else None
        if folder is not None and search.best_config is not None:
            search.best_config.save(folder / BEST)
        search.save_state(test)
    finally:
        search.close()
    return OptimizeResult(search.best_config, search.best, search.records, search.evaluations, search.usage,
                          search.status, test, folder)


def _test(search: Search, evaluator: Evaluator, items: Sequence[Item]) -> dict[str, Any]:
    """Held-out scores of the best and the start config (cached in ``test.json`` for a rerun; their
    judgments in ``test_best.jsonl`` / ``test_start.jsonl``)."""
    assert search.best_config is not None
    configs = {"best": search.best_config, "start": search.base}
    path = search.out / TEST if search.out is not None else None
    if path is not None and path.exists():
        earlier = json.loads(path.read_text(encoding="utf-8"))
        if {name: earlier.get(name, {}).get("digest") for name in configs} == \
                {name: c.digest() for name, c in configs.items()} and earlier.get("n_items") == len(items):
            return earlier
    result: dict[str, Any] = {"n_items": len(items)}
    scored: dict[str, Evaluation] = {}
    for name, config in configs.items():
        if name == "start" and config.digest() == search.best_config.digest():
            scored[name] = scored["best"]
        else:
            scored[name] = evaluator.evaluate(config, items)
            search.add_usage(scored[name].usage)
        result[name] = {"digest": config.digest(), **scored[name].to_record()}
        if path is not None and scored[name].judgments:  # for a paired test: judgelab meta --baseline
            save_judgments(scored[name].judgments, search.out / f"test_{name}.jsonl")
    best, start = scored["best"].objective, scored["start"].objective
    known = best is not None and start is not None
    result["change"] = best - start if known else None
    # A ratio to a start at or below zero (no agreement, or the wrong sign) is not a gain.
    result["relative_gain"] = (best - start) / start if known and start > 0 else None
    if path is not None:
        _write_json(path, result)
    return result


def load_trajectory(folder: str | Path) -> list[dict[str, Any]]:
    """Every record of a run folder's ``trajectory.jsonl`` (evaluations and proposals), in order."""
    path = Path(folder) / TRAJECTORY
    if not path.exists():
        raise ConfigError(f"{folder}: no {TRAJECTORY} here (not an optimiser run folder?)")
    return [record for _, record in iter_jsonl(path)]


def config_of(record: dict[str, Any]) -> JudgeConfig:
    """The judge config a trajectory record evaluated."""
    return judge_from_dict(record["config"], f"trajectory step {record.get('step')}")


class SearchStopped(Exception):  # noqa: N818 - a signal that ends the search early, with why
    """Raised by an optimiser that has nothing more to try (``optimize`` records the reason)."""
