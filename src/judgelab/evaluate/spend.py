"""Many judges, one budget: which judges to run and how many items to label for the narrowest intervals
at a given spend (issue 46; the allocation question of MultiPPI, Cowen-Breen et al. 2026, for judges
that run on every unit or not at all).

Each plan runs a set of judges on every unit (``cost_j`` per call, one call a unit) and has people label
``n`` units, drawn stratified by system as ``judgelab sample`` draws them (``label_cost`` each), within
``budget``. Its width is predicted from a pilot (the labels so far): the corrected estimate with those
judges has, for system s with ``n_s`` labels, the variance ``per_label_s / n_s + judge_term_s`` (the
pilot's, evaluate/estimators.py's ``per_label_variance`` and ``judge_term_variance``; no judge: the
human-only estimate's; each system's pulled toward the variance pooled over systems, :data:`POOLED_WEIGHT`),
and the interval the guarded t branch gives (evaluate/intervals.py) from 10 labels a system:
``2 t sqrt(variance)``, t at the system's labels less one. A system that would get fewer than 10 labels would get a
betting interval, whose width no variance predicts: such a plan is left out, and said to be.

Every set of judges is tried (up to :data:`MAX_EXHAUSTIVE` judges; above, judges are added greedily
while they narrow the plan), each with the labels its judges leave the budget. The answer: the
narrowest (of plans within 1% of it, the one with the fewest judges, then the cheapest), the others
beside it (humans alone, each judge alone), and what the next unit of money buys: more labels, or one
more judge in place of the labels it would cost.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term
from judgelab.evaluate.design import Design
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.intervals import T_GUARD, T_MIN_LABELS, rule
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.sampling import allocate
from judgelab.metrics.betting import betting_interval

#: Every subset of at most this many judges is tried (2^8 = 256 corrected fits on the pilot).
MAX_EXHAUSTIVE = 8


@dataclass(frozen=True)
class SpendOption:
    """One plan: the judges run on every unit, the labels, what they cost, the predicted widths."""

    judges: tuple[str, ...]
    labels: int
    judge_cost: float
    label_cost: float
    width: float  # the mean over systems of the predicted interval widths (inf: not reachable)
    per_system: tuple[float, ...]
    range: tuple[float, float] = (math.nan, math.nan)  # 80% of the widths a pilot like this one could predict

    @property
    def cost(self) -> float:
        return self.judge_cost + self.label_cost

    def to_dict(self) -> dict[str, Any]:
        return {"judges": list(self.judges), "labels": self.labels, "judge_cost": self.judge_cost,
                "label_cost": self.label_cost, "cost": self.cost,
                "width": None if not math.isfinite(self.width) else self.width,
                "width_range": [None if not math.isfinite(v) else v for v in self.range]}


@dataclass(frozen=True)
class SpendPlan:
    budget: float
    systems: tuple[str, ...]
    best: SpendOption | None
    options: list[SpendOption]  # every set tried that the budget allows, narrowest first
    next_money: list[dict[str, Any]]  # what the next unit of money buys at the best plan
    left_out: list[str]  # sets the budget leaves under 10 labels a system, or cannot pay for

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "best": None if self.best is None else self.best.to_dict(),
                "options": [o.to_dict() for o in self.options], "next_money": self.next_money,
                "left_out": self.left_out}


@dataclass(frozen=True)
class _Pilot:
    """A judge set's per-label variance and fixed judge term per system, from the pilot."""

    per_label: np.ndarray
    fixed: np.ndarray


def plan_spend(problem: Problem, design: Design, *, budget: float, judge_costs: dict[str, float],
               label_cost: float, confidence: float = 0.95, seed: int = 0) -> SpendPlan:
    """The narrowest plan within ``budget`` (see the module docstring). ``problem``: a pilot with every
    judge (``Problem.judges``, or one judge) and the labels so far (``design``); ``judge_costs``: a cost per
    call for every judge (0 for one already run); ``label_cost``: a cost per human label."""
    names = problem.judge_names or ("judge",)
    _check_costs(names, judge_costs, label_cost, budget)
    sizes = problem.sizes
    pilots: dict[tuple[str, ...], _Pilot] = {}

    def option(judges: tuple[str, ...], spend: float = budget) -> SpendOption | None:
        if judges not in pilots:
            pilots[judges] = _pilot(problem, design, judges, names, seed)
        cost = sum(judge_costs[j] for j in judges) * problem.n_units
        labels = int((spend - cost) // label_cost) if label_cost > 0 else int(sizes.sum())
        labels = min(labels, int(sizes.sum()))
        if labels < T_MIN_LABELS * len(sizes):
            return None
        per_system = allocate(sizes, labels)
        if per_system.min() < T_MIN_LABELS:
            return None
        pilot = pilots[judges]
        quantile = stats.t.isf(T_GUARD * (1 - confidence) / 2, per_system - 1)  # the t branch's, per system

        def mean_width(factor: float) -> float:
            t_width = 2 * quantile * np.sqrt(factor * pilot.per_label / per_system + pilot.fixed)
            return float(np.mean(np.where(np.isfinite(bets), bets, t_width)))

        bets = _betting_widths(problem, design, per_system, confidence, seed)
        low, high = (max(1 + z * spread, 0.05) for z in (-RANGE_Z, RANGE_Z))
        width = np.where(np.isfinite(bets), bets, 2 * quantile * np.sqrt(pilot.per_label / per_system + pilot.fixed))
        return SpendOption(judges, labels, cost, labels * label_cost, float(np.mean(width)), tuple(width.tolist()),
                           (mean_width(low), mean_width(high)))

    spread = _relative_error(problem, design)

    candidates = _candidates(names, option)
    tried = {judges: option(judges) for judges in candidates}
    found = sorted((o for o in tried.values() if o is not None), key=lambda o: o.width)
    left_out = [_name(judges) for judges, o in tried.items() if o is None]
    best = _simplest_near(found)
    next_money = _next_money(best, names, judge_costs, label_cost, problem.n_units, option) if best else []
    return SpendPlan(budget, problem.systems, best, found, next_money, left_out)


#: Plans whose predicted width is within this share of the narrowest count as tied: the fewest judges, then
#: the cheapest, is chosen (a pilot cannot tell widths this close apart, and every judge is one more to run).
TIED = 0.01


def _simplest_near(found: list[SpendOption]) -> SpendOption | None:
    if not found:
        return None
    near = [o for o in found if o.width <= found[0].width * (1 + TIED)]
    return min(near, key=lambda o: (len(o.judges), o.cost, o.width))


def _candidates(names: tuple[str, ...], option) -> list[tuple[str, ...]]:
    """Every set of judges (the empty one: humans alone), or, past MAX_EXHAUSTIVE judges, the sets a greedy
    forward search passes through (each step adds the judge that narrows the plan most)."""
    if len(names) <= MAX_EXHAUSTIVE:
        return [tuple(c) for k in range(len(names) + 1) for c in itertools.combinations(names, k)]
    chosen: tuple[str, ...] = ()
    path = [chosen] + [(n,) for n in names]
    while True:
        steps = [(option(tuple(sorted(chosen + (n,), key=names.index))), n) for n in names if n not in chosen]
        steps = [(o, n) for o, n in steps if o is not None]
        now = option(chosen)
        if not steps or (now is not None and min(o.width for o, _ in steps) >= now.width):
            return list(dict.fromkeys(path))
        chosen = tuple(sorted(chosen + (min(steps, key=lambda s: s[0].width)[1],), key=names.index))
        path.append(chosen)


def _pilot(problem: Problem, design: Design, judges: tuple[str, ...], names: tuple[str, ...], seed: int) -> _Pilot:
    """The pilot's per-label variance and fixed judge term, per system, of the corrected estimate with
    ``judges`` (none: human-only, whose fixed term is 0)."""
    known = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
    if not judges:
        est = human_only(known, design, intervals="t", skewness_correction=False)
    else:
        keep = [names.index(j) for j in judges]
        if problem.judges is None:
            chosen = known
        elif len(keep) == 1:
            chosen = replace(known, judge=known.judges[..., keep[0]], judges=None, judge_names=())
        else:
            chosen = known.with_judges(known.judges[..., keep], list(judges))
        est = corrected(chosen, design, intervals="t", skewness_correction=False, seed=seed)
    per_label = np.asarray(est.info["per_label_variance"], dtype=float)
    return _Pilot(_toward_pooled(per_label, est.n_labelled), np.asarray(est.info["judge_term_variance"], dtype=float))


#: Resamples of a system's pilot labels whose betting intervals give its predicted width, where the rule
#: sends it to a betting interval (its pilot mean near an end of the scale for the labels planned).
BET_RESAMPLES = 20


def _betting_widths(problem: Problem, design: Design, per_system: np.ndarray, confidence: float,
                    seed: int) -> np.ndarray:
    """Per system: the median width of betting intervals on ``per_system`` labels resampled from its pilot
    labels, where :func:`judgelab.evaluate.intervals.rule` would give it one; NaN where it gives t. A betting
    interval's width follows no variance (a corrected estimate there is the labels' own, whatever judges)."""
    out = np.full(len(per_system), np.nan)
    if problem.scale is None:
        return out
    rng = np.random.default_rng([seed, 23])
    for s, n in enumerate(per_system):
        labels = problem.human[design.labelled & problem.present[:, s], s]
        labels = labels[np.isfinite(labels)]
        if len(labels) < 2 or rule(np.full(int(n), labels.mean()), problem.scale, True) != "betting":
            continue
        bets = [betting_interval(rng.choice(labels, int(n)), problem.scale, confidence=confidence)
                for _ in range(BET_RESAMPLES)]
        widths = [bet.high - bet.low for bet in bets]
        out[s] = float(np.median(widths))
    return out


#: The predicted width's range: the pilot's variance at +-1.28 of its relative standard error (80%).
RANGE_Z = 1.2816


def _relative_error(problem: Problem, design: Design) -> float:
    """The relative standard error of a variance pooled from the pilot's labels, centred within systems:
    sqrt((kurtosis - (n - 3) / (n - 1)) / n), the kurtosis measured (a rating with a long tail has a noisy
    variance), not taken as a normal's 3."""
    labelled = design.labelled[:, None] & problem.present & np.isfinite(problem.human)
    values = np.where(labelled, problem.human, np.nan)
    centred = (values - np.nanmean(values, axis=0))[labelled]
    n = len(centred)
    if n < 4 or not np.any(centred):
        return 1.0
    kurtosis = float(np.mean(centred ** 4) / np.mean(centred ** 2) ** 2)
    return math.sqrt(max(kurtosis - (n - 3) / (n - 1), 0.0) / n)


#: A pilot's per-system variance is pulled toward the variance pooled over systems, as if the pooled one
#: were worth this many labels' degrees of freedom: from the 7 labels a system of a 10% HANNA pilot, a
#: system's own variance came out 0.09-2.2 times its value over every story (median 0.7: the few labels of
#: a skewed rating rarely show its tail), and the widths it predicted fell short by 10-50%.
POOLED_WEIGHT = 10.0


def _toward_pooled(per_label: np.ndarray, n_labelled: np.ndarray) -> np.ndarray:
    df = np.maximum(n_labelled - 1.0, 0.0)
    known = np.isfinite(per_label) & (df > 0)
    if not known.any():
        return np.full(per_label.shape, np.inf)
    pooled = float(np.sum(df[known] * per_label[known]) / np.sum(df[known]))
    own = np.where(known, per_label, pooled)
    return (df * own + POOLED_WEIGHT * pooled) / (df + POOLED_WEIGHT)


def _next_money(best: SpendOption, names: tuple[str, ...], judge_costs: dict[str, float], label_cost: float,
                n_units: int, option) -> list[dict[str, Any]]:
    """At the best plan: how much narrower more money makes it with labels (per unit of money, over a tenth
    more labels), and for each judge it leaves out, the plan with that judge paid for out of the labels."""
    out = []
    step = label_cost * max(1, best.labels // 10)
    more = option(best.judges, best.cost + step)
    if more is not None:
        out.append({"what": "more labels", "money": step, "labels": more.labels, "width": more.width,
                    "width_per_money": (more.width - best.width) / step})
    for name in names:
        if name not in best.judges:
            swapped = option(tuple(sorted(best.judges + (name,), key=names.index)), best.cost)
            out.append({"what": f"add {name}", "money": judge_costs[name] * n_units,
                        "labels": None if swapped is None else swapped.labels,
                        "width": None if swapped is None else swapped.width})
    return out


def _check_costs(names: tuple[str, ...], judge_costs: dict[str, float], label_cost: float, budget: float) -> None:
    unknown = sorted(set(judge_costs) - set(names))
    if unknown:
        raise ConfigError(f"{term('judge_costs')} for {', '.join(unknown)}: no such judge here (judges: "
                          f"{', '.join(names)})")
    missing = [n for n in names if n not in judge_costs]
    if missing:
        raise ConfigError(f"no cost for judge {', '.join(missing)}: give {term('judge_costs')} NAME=PRICE for every "
                          "judge (0 for one already run)")
    for name, cost in (*judge_costs.items(), (term("label_cost"), label_cost), (term("budget", "--spend"), budget)):
        if not (isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0):
            raise ConfigError(f"{name}: a cost is a number, 0 or more (got {cost!r})")
    if not budget > 0:
        raise ConfigError(f"{term('budget', '--spend')} {budget:g}: give the money to spend, above 0")
    if not label_cost > 0:
        raise ConfigError(f"{term('label_cost')}: the cost of one human label, above 0 (the plan trades labels for "
                          "judges)")


def _name(judges: tuple[str, ...]) -> str:
    return " + ".join(judges) if judges else "humans alone"


def plan_spend_for(items, judgments, *, budget: float, judge_costs: dict[str, float], label_cost: float,
                   aspect: str | None = None, judge=None, human=None, human_ids=None, sample=None,
                   scale: tuple[float, float] | None = None, confidence: float = 0.95, seed: int = 0) -> SpendPlan:
    """:func:`plan_spend` from items, one or several judges' verdicts and the pilot's labels, read as
    :func:`judgelab.evaluate.evaluate` reads them (pointwise items). ``judge_costs``: by judge name, or a
    prefix naming one judge."""
    from judgelab.evaluate.systems import _design, _item_problem
    from judgelab.metrics.align import items_of_one_kind

    items, kind = items_of_one_kind(items)
    if kind != "pointwise":
        raise ConfigError(f"a spend plan is for pointwise items with system_id; these are {kind} items")
    built = _item_problem(items, judgments, aspect, judge, human, human_ids, scale)
    if built.labelled is None or not built.labelled.any():
        raise ConfigError(f"a spend plan reads a pilot: give the labels so far ({term('human')} or "
                          f"{term('human_ids')}; a small "
                          "random sample, judgelab sample --budget 0.1)")
    problem = built.problem
    if problem.judges is None:
        problem = problem.with_judges(problem.judge[..., None], [_single_name(judgments, judge)])
    design = _design(problem, built.labelled, sample, built.notes.get("order"))
    costs = resolve_costs(problem.judge_names, judge_costs)
    return plan_spend(problem, design, budget=budget, judge_costs=costs, label_cost=label_cost,
                      confidence=confidence, seed=seed)


def _single_name(judgments, judge) -> str:
    if isinstance(judge, str):
        return judge
    names = {j.judge for j in judgments if getattr(j, "judge", None)} if isinstance(judgments, list) else set()
    return names.pop() if len(names) == 1 else "judge"


def resolve_costs(names: tuple[str, ...], given: dict[str, float]) -> dict[str, float]:
    """``given`` keyed by the judges' names: each key is a name, or the start of exactly one."""
    out: dict[str, float] = {}
    for key, cost in given.items():
        found = [n for n in names if n == key] or [n for n in names if n.startswith(key)]
        if len(found) != 1:
            what = "matches no judge" if not found else f"matches {len(found)} judges ({', '.join(found)})"
            raise ConfigError(f"{term('judge_costs')} {key}={cost:g}: {what}; judges: {', '.join(names)}")
        if found[0] in out:
            raise ConfigError(f"{term('judge_costs')}: two costs for judge {found[0]!r}")
        out[found[0]] = cost
    return out
