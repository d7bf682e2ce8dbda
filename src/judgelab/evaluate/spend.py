"""Many judges, one budget: which judges to run and how many items to label for the narrowest intervals
at a given spend (issue 46; the allocation question of MultiPPI, Cowen-Breen et al. 2026, for judges
that run on every unit or not at all).

Each plan runs a set of judges on every unit (``cost_j`` per call, one call a unit) and has people label
``n`` units, drawn stratified by system as ``judgelab sample`` draws them (``label_cost`` each), within
``budget``. Its width is predicted from a pilot (the labels so far): the corrected estimate with those
judges has, for system s with ``n_s`` labels, the variance ``per_label_s / n_s + judge_term_s`` (the
pilot's, evaluate/design_variance.py's ``per_label_variance`` and ``judge_term_variance``; no judge: the
human-only estimate's; each system's pulled toward the variance pooled over systems, :data:`POOLED_WEIGHT`),
and the interval the guarded t branch gives (evaluate/intervals.py) from 10 labels a system:
``2 t sqrt(variance)``, t at the system's labels less one. A system that would get fewer than 10 labels would get a
betting interval, whose width no variance predicts: such a plan is left out, and said to be.

Every set of judges is tried (up to :data:`MAX_EXHAUSTIVE` judges; above, judges are added greedily
while they narrow the plan), each with the labels its judges leave the budget. The answer: the
narrowest (of plans within 1% of it, the one with the fewest judges, then the cheapest), the others
beside it (humans alone, each judge alone), and what the next unit of money buys: more labels, or one
more judge in place of the labels it would cost.

TREC runs (:func:`plan_spend` on a problem of queries): the units are queries, and a labelled query serves
every run, so ``n`` labelled queries give each run ``n`` labels; a judge is paid per query-document pair and
a labelled query costs its pairs' labels. :func:`plan_draw` gives what to label to carry a plan out.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term
from judgelab.evaluate.comparisons import NO_VERDICT, Comparisons
from judgelab.evaluate.design import Design
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.intervals import T_GUARD, T_MIN_LABELS, rule
from judgelab.evaluate.preferences import estimate, stacked_preference
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.sampling import MIN_PER_STRATUM, allocate
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
    per_unit: float = 1.0  # human labels a labelled unit takes (runs: a query's judged documents, on average)

    @property
    def cost(self) -> float:
        return self.judge_cost + self.label_cost

    @property
    def human_labels(self) -> int:
        """The human labels bought: one a unit, or for runs each labelled query's documents (expected)."""
        return round(self.labels * self.per_unit)

    def to_dict(self) -> dict[str, Any]:
        return {"judges": list(self.judges), "labels": self.labels, "human_labels": self.human_labels,
                "judge_cost": self.judge_cost, "label_cost": self.label_cost, "cost": self.cost,
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
    unit: str = "items"  # what a label is bought for: items, comparisons, or queries (runs)
    least_spend: float = math.nan  # the labels alone of the smallest plan (10 labels a system; runs: 10 queries)
    pilot: tuple[str, ...] = ()  # the units the pilot labelled (items, comparisons or queries): the draw keeps them

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "unit": self.unit, "best": None if self.best is None else self.best.to_dict(),
                "options": [o.to_dict() for o in self.options], "next_money": self.next_money,
                "left_out": self.left_out}


@dataclass(frozen=True)
class _Pilot:
    """A judge set's per-label variance and fixed judge term per system, from the pilot."""

    per_label: np.ndarray
    fixed: np.ndarray


def plan_spend(problem: Problem, design: Design, *, budget: float, judge_costs: dict[str, float],
               label_cost: float, confidence: float = 0.95, seed: int = 0,
               pairs: np.ndarray | None = None) -> SpendPlan:
    """The narrowest plan within ``budget`` (see the module docstring). ``problem``: a pilot with every
    judge (``Problem.judges``, or one judge) and the labels so far (``design``); ``judge_costs``: a cost per
    call for every judge (0 for one already run); ``label_cost``: a cost per human label.

    Runs (``problem.kind == "queries"``): ``pairs`` gives each query's judged documents (the pool a judge
    and a person label, in ``problem.units``' order). A judge then runs once per query-document pair
    (``pairs.sum()`` calls), labelling a query costs its documents' labels (a random query: the mean), and a
    labelled query serves every run: with ``n`` queries labelled, each run's estimate has ``n`` labels. A
    plan needs 10 labelled queries (the t interval's floor, as for a system's items); a run's interval is
    the narrower of the corrected one and the labels' own, as ``evaluate`` takes it, and where every query is
    labelled, the labels' own."""
    names = problem.judge_names or ("judge",)
    _check_costs(names, judge_costs, label_cost, budget)
    sizes = problem.sizes
    labels_of = [problem.human[design.labelled & problem.present[:, s], s] for s in range(len(sizes))]
    if problem.kind == "queries":
        if pairs is None or len(pairs) != problem.n_units:
            raise ValueError("runs: give pairs, the judged documents of each of the problem's queries")
        n_queries = problem.n_units
        units = _Units(problem.systems, int(np.sum(pairs)), n_queries, lambda n: np.full(len(sizes), n),
                       problem.scale, labels_of, unit="queries", label_size=float(np.mean(pairs)),
                       min_units=T_MIN_LABELS, sizes=sizes, labels_own=True)
    else:
        units = _Units(problem.systems, problem.n_units, int(sizes.sum()), lambda n: allocate(sizes, n),
                       problem.scale, labels_of, min_units=T_MIN_LABELS * len(sizes), sizes=sizes)
    independent = int(design.labelled.sum()) if problem.kind == "queries" else None
    return _plan(units, names, lambda judges: _pilot(problem, design, judges, names, seed), budget=budget,
                 judge_costs=judge_costs, label_cost=label_cost, confidence=confidence, seed=seed,
                 spread=_relative_error(labels_of, independent))


@dataclass(frozen=True)
class _Units:
    """What a plan is made of: the systems, the calls a judge makes to run on every unit (``calls``: one a
    unit, runs: one a query-document pair), how many units can be labelled, how a number of labelled units
    falls to the systems, and each system's pilot labels (its betting widths are resampled from them).
    ``label_size``: human labels a labelled unit takes (runs: a query's documents); ``min_units``: the
    fewest labelled units a plan may have (10 a system; runs share their queries: 10); ``sizes``: each
    system's units (a system whose every unit is labelled gets the labels' own interval); ``labels_own``:
    each system's interval is the narrower of the judges' and the labels' own (``evaluate`` runs)."""

    systems: tuple[str, ...]
    calls: int
    most_labels: int
    per_system: Any  # labels -> labels per system (an array)
    scale: tuple[float, float] | None
    pilot_labels: list[np.ndarray]
    unit: str = "items"
    label_size: float = 1.0
    min_units: int = 0
    sizes: np.ndarray | None = None
    labels_own: bool = False


def _plan(units: _Units, names: tuple[str, ...], pilot_of, *, budget: float, judge_costs: dict[str, float],
          label_cost: float, confidence: float, seed: int, spread: float) -> SpendPlan:
    """Every set of judges priced and its width predicted (the module docstring); the narrowest chosen."""
    pilots: dict[tuple[str, ...], _Pilot] = {}

    def option(judges: tuple[str, ...], spend: float = budget) -> SpendOption | None:
        for wanted in {judges, ()}:  # the labels' own too: a system may take them (census, labels_own)
            if wanted not in pilots:
                pilots[wanted] = pilot_of(wanted)
        cost = sum(judge_costs[j] for j in judges) * units.calls
        # a hair over the quotient: money for exactly k labels (a sum of float prices) buys k, not k - 1
        labels = min(math.floor((spend - cost) / (label_cost * units.label_size) + 1e-9), units.most_labels)
        if labels < max(units.min_units, 1):
            return None
        per_system = units.per_system(labels)
        if per_system.min() < T_MIN_LABELS:  # a betting interval's width at so few labels: no pilot predicts it
            return None
        bets = _betting_widths(units, per_system, confidence, seed)
        pilot, own = pilots[judges], pilots[()]
        quantile = stats.t.isf(T_GUARD * (1 - confidence) / 2, per_system - 1)  # the t branch's, per system
        census = units.sizes is not None and bool(judges)
        every = per_system >= units.sizes if census else np.zeros(len(per_system), dtype=bool)

        def widths(factor: float) -> np.ndarray:
            def t_width(p: _Pilot) -> np.ndarray:
                return 2 * quantile * np.sqrt(np.maximum(factor * p.per_label / per_system + p.fixed, 0.0))

            mine = t_width(pilot)
            if judges:  # evaluate takes the labels' own where every unit is labelled (and, for runs, where narrower)
                labels_width = t_width(own)
                mine = np.where(every | (units.labels_own & (labels_width < mine)), labels_width, mine)
            return np.where(np.isfinite(bets), bets, mine)

        low, high = (max(1 + z * spread, 0.05) for z in (-RANGE_Z, RANGE_Z))
        width = widths(1.0)
        return SpendOption(judges, labels, cost, labels * units.label_size * label_cost, float(np.mean(width)),
                           tuple(width.tolist()), (float(np.mean(widths(low))), float(np.mean(widths(high)))),
                           units.label_size)

    candidates = _candidates(names, option)
    tried = {judges: option(judges) for judges in candidates}
    found = sorted((o for o in tried.values() if o is not None), key=lambda o: o.width)
    left_out = [_name(judges) for judges, o in tried.items() if o is None]
    best = _simplest_near(found)
    next_money = (_next_money(best, names, judge_costs, label_cost * units.label_size, units.calls, option)
                  if best else [])
    least = max(units.min_units, 1) * units.label_size * label_cost
    return SpendPlan(budget, units.systems, best, found, next_money, left_out, units.unit, least)


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
        if known.judges is None:  # the problem's judges (with_human keeps them)
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


def _betting_widths(units: _Units, per_system: np.ndarray, confidence: float, seed: int) -> np.ndarray:
    """Per system: the median width of betting intervals on ``per_system`` labels resampled from its pilot
    labels, where :func:`judgelab.evaluate.intervals.rule` would give it one; NaN where it gives t. A betting
    interval's width follows no variance (a corrected estimate there is the labels' own, whatever judges)."""
    out = np.full(len(per_system), np.nan)
    if units.scale is None:
        return out
    rng = np.random.default_rng([seed, 23])
    for s, n in enumerate(per_system):
        labels = units.pilot_labels[s]
        labels = labels[np.isfinite(labels)]
        if len(labels) < 2 or rule(np.full(int(n), labels.mean()), units.scale, True) != "betting":
            continue
        bets = [betting_interval(rng.choice(labels, int(n)), units.scale, confidence=confidence)
                for _ in range(BET_RESAMPLES)]
        out[s] = float(np.median([bet.high - bet.low for bet in bets]))
    return out


#: The predicted width's range: the pilot's variance at +-1.28 of its relative standard error (80%).
RANGE_Z = 1.2816


def _relative_error(pilot_labels: list[np.ndarray], independent: int | None = None) -> float:
    """The relative standard error of a variance pooled from the pilot's labels, centred within systems:
    sqrt((kurtosis - (n - 3) / (n - 1)) / n), the kurtosis measured (a rating with a long tail has a noisy
    variance), not taken as a normal's 3. ``independent``: how many of the labels are independent when fewer
    than there are (runs: every run's value on a query moves with the query, so n is the labelled queries)."""
    kept = [labels[np.isfinite(labels)] for labels in pilot_labels]
    centred = np.concatenate([labels - labels.mean() for labels in kept if len(labels)] or [np.zeros(0)])
    n = len(centred) if independent is None else min(independent, len(centred))
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
    more labels), and for each judge it leaves out, the plan with that judge paid for out of the labels.
    ``label_cost``: of one labelled unit (runs: a query's documents); ``n_units``: a judge's calls."""
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


def plan_spend_comparisons(data: Comparisons, *, budget: float, judge_costs: dict[str, float], label_cost: float,
                           confidence: float = 0.95, seed: int = 0) -> SpendPlan:
    """:func:`plan_spend` for comparisons between systems (the win probability, ties half): each judge runs on
    every comparison, people label comparisons drawn stratified by pair (``judgelab sample``), and a system
    takes part in its share of them. With ``lambda`` and the judges' combination the pilot's corrected
    estimate uses, system s with ``n_s`` labels of ``N_s`` comparisons has the variance
    ``s2_residual / n_s + (s2_human - s2_residual) / N_s`` (its side scores' variances over its labelled
    comparisons: preferences.py's population variance ``(1 - f) s2_residual / n_s + f s2_human / n_s``, f the
    share labelled), each pulled toward the value pooled over systems as for items."""
    names = data.judge_names or ("judge",)
    _check_costs(names, judge_costs, label_cost, budget)
    columns = data.judges if data.judges is not None else data.judge[:, None]
    sizes = (np.bincount(data.a, minlength=len(data.systems))
             + np.bincount(data.b, minlength=len(data.systems))).astype(float)
    labelled = data.labelled
    human_sides = [_side_scores(data, data.human, s, labelled) for s in range(len(data.systems))]

    def pilot_of(judges: tuple[str, ...]) -> _Pilot:
        residual = human_sides
        if judges:
            chosen = columns[:, [names.index(j) for j in judges]]
            judge = (stacked_preference(replace(data, judges=chosen, judge_names=judges), seed) if len(judges) > 1
                     else chosen[:, 0])
            judge = np.where(np.isfinite(judge), judge, NO_VERDICT)  # as the corrected estimate reads a missing one
            lam = float(estimate(replace(data, judge=judge, judges=None, judge_names=()), "corrected",
                                 system_intervals="t", seed=seed).info["judge_weight"])
            residual = [h - lam * _side_scores(data, judge, s, labelled) for s, h in enumerate(human_sides)]
        counts = np.array([len(h) for h in human_sides], dtype=float)
        per_label = _toward_pooled(np.array([_variance(r) for r in residual]), counts)
        human = _toward_pooled(np.array([_variance(h) for h in human_sides]), counts)
        return _Pilot(per_label, (human - per_label) / np.maximum(sizes, 1.0))

    units = _Units(data.systems, data.n, data.n, lambda n: n * sizes / data.n, (0.0, 1.0), human_sides,
                   unit="comparisons", min_units=T_MIN_LABELS * len(data.systems))
    return _plan(units, names, pilot_of, budget=budget, judge_costs=judge_costs, label_cost=label_cost,
                 confidence=confidence, seed=seed, spread=_relative_error(human_sides))


def _side_scores(data: Comparisons, preference: np.ndarray, system: int, rows: np.ndarray) -> np.ndarray:
    """System ``system``'s score on each of ``rows`` it takes part in: the preference for it (a's preference
    on its a-side, 1 - it on its b-side), the side score preferences.py averages into a win probability."""
    on_a, on_b = rows & (data.a == system), rows & (data.b == system)
    return np.concatenate([preference[on_a], 1 - preference[on_b]])


def _variance(values: np.ndarray) -> float:
    return float(np.var(values, ddof=1)) if len(values) > 1 else math.nan


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
                   scale: tuple[float, float] | None = None, confidence: float = 0.95, seed: int = 0,
                   runs=None, measure: str = "nDCG@10", unjudged: str = "condense") -> SpendPlan:
    """:func:`plan_spend` from items, one or several judges' verdicts and the pilot's labels, read as
    :func:`judgelab.evaluate.evaluate` reads them (pointwise items; relevance items with ``runs``, a folder of
    TREC run files, scored with ``measure``; comparisons). ``judge_costs``: by judge name, or a prefix naming
    one judge; for runs, per query-document pair judged, as ``label_cost`` is per pair a person labels."""
    from judgelab.evaluate.systems import _design, built_problem
    from judgelab.metrics.align import items_of_one_kind

    items, kind = items_of_one_kind(items)
    if kind == "pairwise":
        return _plan_comparisons_for(items, judgments, budget=budget, judge_costs=judge_costs, label_cost=label_cost,
                                     judge=judge, human=human, human_ids=human_ids, sample=sample,
                                     confidence=confidence, seed=seed)
    if kind not in ("relevance", "pointwise"):
        raise ConfigError(f"a spend plan is for items with system_id, relevance items with runs, or comparisons "
                          f"between systems; these are {kind} items")
    built = built_problem(items, judgments, kind, aspect=aspect, judge=judge, human=human, human_ids=human_ids,
                          runs=runs, measure=measure, unjudged=unjudged, scale=scale,
                          without_runs="a spend plan over relevance items is for the runs they rank")
    if built.labelled is None or not built.labelled.any():
        raise ConfigError(_no_pilot(kind == "relevance"))
    problem = built.problem
    if problem.judges is None:
        problem = problem.with_judges(problem.judge[..., None], [_single_name(judgments, judge)])
    design = _design(problem, built.labelled, sample, built.notes.get("order"))
    costs = resolve_costs(problem.judge_names, judge_costs)
    pairs = None
    if kind == "relevance":  # each query's judged documents: a judge's calls and a labelled query's labels
        per_query = Counter(str(item.qid) for item in items)
        pairs = np.array([per_query[q] for q in problem.units])
    plan = plan_spend(problem, design, budget=budget, judge_costs=costs, label_cost=label_cost,
                      confidence=confidence, seed=seed, pairs=pairs)
    return replace(plan, pilot=tuple(np.asarray(problem.units)[design.labelled].tolist()))


def _plan_comparisons_for(items, judgments, *, budget, judge_costs, label_cost, judge, human, human_ids, sample,
                          confidence, seed) -> SpendPlan:
    from judgelab.evaluate.comparison_items import comparison_data

    data, _, _, _ = comparison_data(items, judgments, judge=judge, human=human, human_ids=human_ids, sample=sample)
    if not data.labelled.any():
        raise ConfigError(_no_pilot())
    if data.judges is None:
        data = replace(data, judges=data.judge[:, None], judge_names=(_single_name(judgments, judge),))
    costs = resolve_costs(data.judge_names, judge_costs)
    plan = plan_spend_comparisons(data, budget=budget, judge_costs=costs, label_cost=label_cost,
                                  confidence=confidence, seed=seed)
    return replace(plan, pilot=tuple(item.id for item, labelled in zip(items, data.labelled, strict=True) if labelled))


@dataclass(frozen=True)
class PlanDraw:
    """What to label to carry a plan out: ``ids`` (items or comparisons; runs: the query-document pairs of the
    queries drawn), each with ``probability``, its unit's inclusion probability in the whole sample (pilot and
    new), ``strata`` (each id's system, pair of systems, or query), ``sizes`` (new units per stratum), ``units``
    (what was drawn: items, comparisons, queries), ``drawn`` (the new units), ``kept`` (the pilot's units
    counted toward the plan)."""

    ids: tuple[str, ...]
    probability: tuple[float, ...]
    strata: tuple[str, ...]
    sizes: dict[str, int]
    units: str
    drawn: tuple[str, ...]
    kept: int


def plan_draw(items, plan: SpendPlan, *, seed: int = 0) -> PlanDraw:
    """The units to label to carry ``plan.best`` out, stratified as ``judgelab sample`` draws them (by system;
    comparisons: by pair of systems; runs: the queries). The pilot's labelled units count toward their stratum's
    share (they are labelled already); the rest of each share is drawn at random from the stratum's unlabelled
    units, so pilot and new units together are a stratified random sample of the plan's size (the pilot drawn
    at random within strata, as ``judgelab sample`` draws it). Runs: the ids are the query-document pairs of the
    queries drawn, what people label (``judgelab annotate --ids``)."""
    from judgelab.evaluate.sampling import comparison_problem, item_units, query_units

    if plan.best is None:
        raise ConfigError(f"{term('budget', '--spend')} {plan.budget:g} buys no plan: nothing to draw")
    items = list(items)
    if plan.unit == "queries":
        units = query_units(sorted({str(item.qid) for item in items}))
    else:
        units = comparison_problem(items) if plan.unit == "comparisons" else item_units(items)
    pilot = np.zeros(units.n_units, dtype=bool)
    pilot[units.index(list(plan.pilot))] = True
    counts = np.bincount(units.strata, minlength=len(units.systems))
    # comparisons plan a uniform share: a pair of systems may get none (a floor of two a pair would exceed small
    # budgets)
    share = allocate(counts, plan.best.labels, minimum=0 if plan.unit == "comparisons" else MIN_PER_STRATUM)
    rng = np.random.default_rng(seed)
    chosen = np.zeros(units.n_units, dtype=bool)
    probability = np.zeros(units.n_units)
    sizes = {}
    for code, name in enumerate(units.systems):
        members = np.flatnonzero(units.strata == code)
        free = members[~pilot[members]]
        new = int(min(max(share[code] - pilot[members].sum(), 0), len(free)))
        chosen[rng.choice(free, new, replace=False)] = True
        probability[members] = (pilot[members].sum() + new) / len(members)
        if new:
            sizes[name] = new
    drawn = [k for k in range(units.n_units) if chosen[k]]
    if plan.unit != "queries":
        ids = tuple(units.units[k] for k in drawn)
        return PlanDraw(ids, tuple(float(probability[k]) for k in drawn),
                        tuple(units.systems[units.strata[k]] for k in drawn), sizes, plan.unit, ids,
                        int(pilot.sum()))
    place = {units.units[k]: k for k in drawn}
    pairs = [item for item in items if str(item.qid) in place]  # what people label: each query's judged documents
    of_query = tuple(str(item.qid) for item in pairs)
    return PlanDraw(tuple(item.id for item in pairs), tuple(float(probability[place[q]]) for q in of_query), of_query,
                    dict(Counter(of_query)), "queries", tuple(place), int(pilot.sum()))


def _no_pilot(runs: bool = False) -> str:  # built when raised: term() reads the caller's naming
    if runs:
        return (f"a spend plan reads a pilot: no query of the runs has a human label; give the labels so far "
                f"({term('human')}: query-document labels, or {term('human_ids')}: query ids whose items' labels "
                "count; a few random queries, judgelab sample --budget 5)")
    return (f"a spend plan reads a pilot: give the labels so far ({term('human')} or {term('human_ids')}; a small "
            "random sample, judgelab sample --budget 0.1)")


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
