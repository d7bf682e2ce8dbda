"""Which units to label: a stratified random sample, or an active one that favours the units the
judge is least sure of, with the inclusion probabilities the estimators need.

Active sampling (Zrnic & Candes, "Active Statistical Inference", 2024): unit u is drawn with
probability pi_u proportional to the judge's uncertainty, mixed with the uniform probability so
that no unit is nearly impossible to draw (a tiny pi_u makes one unlucky label dominate the
estimate), and capped at 1. The corrected estimator weights each label by 1 / pi_u, so it stays
unbiased; it gains when the judge's uncertainty tracks the size of its errors.

Within a stratum the sample has exactly the allotted size: uniform draws use numpy's choice
without replacement; unequal-probability draws use randomised systematic sampling (units in
random order, one random start, a fixed step along the cumulated probabilities), the textbook
fixed-size design that realises any probabilities summing to n exactly (hand-written: scipy and
scikit-learn offer no unequal-probability sampling without replacement with given inclusion
probabilities).

Comparisons between systems are units too: one stratum per unordered pair of systems, and the
judge's doubt about a comparison (its two orders, or several judges, disagreeing; a tie) as the
uncertainty of an active draw.

A draw needs the units and their strata only (:class:`Units`), never the (units x systems) tables
of a :class:`Problem`: 150 systems compared once per pair made one of 11,175 x 11,175 cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judgelab.data.labels import PREFERENCES
from judgelab.errors import ConfigError, term
from judgelab.evaluate.design import Design
from judgelab.evaluate.problem import Problem, UnitRules
from judgelab.evaluate.sample_file import MIN_PROBABILITY, SampleFile
from judgelab.metrics.bootstrap import group_codes

MIN_PER_STRATUM = 2  # the estimators need two labels per system for a variance
DEFAULT_MIX = 0.5  # share of each probability that is uniform in an active design


def budget_size(budget: float, n_units: int, units: str = "units") -> int:
    """A budget given as a count (>= 1) or as a fraction of the units (< 1)."""
    if budget <= 0:
        raise ConfigError(f"{term('budget')} {budget}: give a number of units (e.g. 50) or a fraction (e.g. 0.1)")
    size = math.ceil(budget * n_units) if budget < 1 else int(round(budget))
    if size > n_units:
        raise ConfigError(f"{term('budget')} {size} is more than the {n_units} {units} there are")
    return size


def allocate(strata_sizes: np.ndarray, total: int, strata_name: str = "systems",
             minimum: int = MIN_PER_STRATUM) -> np.ndarray:
    """Labels per stratum, proportional to its size (largest remainder), at least ``minimum`` where possible
    (0: plain proportional, a stratum may get none)."""
    strata_sizes = np.asarray(strata_sizes, dtype=int)
    if total < minimum * len(strata_sizes):
        raise ConfigError(f"a budget of {total} leaves some of the {len(strata_sizes)} {strata_name} fewer than "
                          f"{minimum} labels; give at least {minimum * len(strata_sizes)}")
    share = strata_sizes / strata_sizes.sum() * total
    counts = np.minimum(strata_sizes, minimum)
    counts = np.maximum(counts, np.minimum(np.floor(share).astype(int), strata_sizes))
    while counts.sum() > total:  # the floor pushed some over: take back from the largest surplus
        counts[int(np.argmax(np.where(counts > minimum, counts - share, -np.inf)))] -= 1
    while counts.sum() < total:  # largest remainder first, never more than a stratum holds
        counts[int(np.argmax(np.where(counts < strata_sizes, share - counts, -np.inf)))] += 1
    return counts


@dataclass(frozen=True)
class Units(UnitRules):  # n_units and index: a Problem's rules, which read ``units`` and ``kind`` only
    """What a draw chooses among: the units and their strata (a :class:`Problem` serves as well)."""

    kind: str  # "items", "queries" or "comparisons"
    units: tuple[str, ...]
    systems: tuple[str, ...]  # the strata's names: systems, or pairs of systems ("a vs b")
    strata: np.ndarray  # (U,) codes into ``systems``


def item_units(items) -> Units:
    """Pointwise items, stratified by system (``"all"`` for items that name none), as ``from_items`` does."""
    codes, systems = group_codes(["all" if item.system_id is None else item.system_id for item in items])
    return Units("items", tuple(item.id for item in items), tuple(systems), codes)


def query_units(queries) -> Units:
    """Queries: one stratum."""
    return Units("queries", tuple(map(str, queries)), ("all",), np.zeros(len(queries), dtype=int))


@dataclass(frozen=True)
class Drawn:
    design: Design
    sizes: np.ndarray  # labels per stratum


def draw(problem: Units | Problem, budget: float, *, uncertainty: np.ndarray | None = None,
         mix: float = DEFAULT_MIX, exclude: np.ndarray | None = None, seed: int = 0,
         strata_name: str = "systems") -> Drawn:
    """A stratified sample of ``budget`` units; active when ``uncertainty`` (one value per unit) is given.

    ``exclude``: units that may not be drawn (already labelled); they are not part of the design.
    ``strata_name``: what the strata are, for the message when the budget cannot cover them.
    """
    rng = np.random.default_rng(seed)
    eligible = np.ones(problem.n_units, dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    strata, stratum = np.unique(problem.strata, return_inverse=True)
    counts = np.bincount(stratum[eligible], minlength=len(strata))
    # the budget is checked before any unit is placed: a budget short of the strata is refused at once
    sizes = allocate(counts, budget_size(budget, int(eligible.sum()), problem.kind), strata_name)
    members = np.split(np.flatnonzero(eligible)[np.argsort(stratum[eligible], kind="stable")], np.cumsum(counts)[:-1])
    labelled = np.zeros(problem.n_units, dtype=bool)
    probability = np.zeros(problem.n_units)
    for units, n_h in zip(members, sizes, strict=True):
        if uncertainty is None:
            pi = np.full(len(units), n_h / len(units))
            chosen = rng.choice(units, size=n_h, replace=False)
        else:
            pi = inclusion_probabilities(uncertainty[units], n_h, mix)
            chosen = units[systematic(pi, rng)]
        probability[units] = pi
        labelled[chosen] = True
    smallest = probability[eligible].min(initial=1.0)
    if smallest < MIN_PROBABILITY:  # evaluate would refuse the file: weights past a million swamp every label
        raise ConfigError(f"this draw gives some {problem.kind} an inclusion probability of {smallest:.3g}, below "
                          f"{MIN_PROBABILITY:g} (one label would stand for more than a million units): raise "
                          f"{term('mix')}, the uniform share of each probability, or {term('budget')}")
    method = "stratified" if uncertainty is None else "active"
    return Drawn(Design(labelled, probability, method), sizes)


def inclusion_probabilities(uncertainty: np.ndarray, n: int, mix: float = DEFAULT_MIX) -> np.ndarray:
    """pi proportional to ``mix`` * uniform + (1 - mix) * uncertainty, summing to ``n``, each <= 1."""
    u = np.asarray(uncertainty, dtype=float)
    if not np.all(np.isfinite(u)) or np.any(u < 0):
        raise ConfigError("uncertainties must be finite and non-negative")
    if not 0 < mix <= 1:
        raise ConfigError(f"{term('mix')} {mix}: the uniform share must be in (0, 1]")
    size = len(u)
    weight = mix / size + (1 - mix) * (u / u.sum() if u.sum() > 0 else np.full(size, 1 / size))
    pi = np.zeros(size)
    capped = np.zeros(size, dtype=bool)
    while True:  # cap at 1 and spread the excess over the others, until none exceeds 1
        left = n - capped.sum()
        pi[~capped] = left * weight[~capped] / weight[~capped].sum()
        pi[capped] = 1.0
        over = (pi > 1) & ~capped
        if not over.any():
            return pi
        capped |= over


def systematic(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn by randomised systematic sampling: P(i drawn) = pi[i], exactly round(sum pi) draws."""
    order = rng.permutation(len(pi))
    edges = np.concatenate([[0.0], np.cumsum(pi[order])])
    n = int(round(edges[-1]))
    points = rng.uniform(0, 1) + np.arange(n)
    hits = np.searchsorted(edges, points, side="right") - 1
    return np.sort(order[np.clip(hits, 0, len(pi) - 1)])


def judge_uncertainty(judgments, unit_of_item: dict[str, str], units: tuple[str, ...]) -> np.ndarray:
    """One uncertainty per unit, from the judgments: the spread the judge recorded for its score
    (``extra["score_sd"]``: logprob scores, several samples), else the disagreement between the
    judges of a file that holds several. Units without one get the median of the others (an
    item's query when units are queries: the mean over its documents)."""
    recorded: dict[str, list[float]] = {}
    scores: dict[str, dict[str, float]] = {}
    for judgment in judgments:
        unit = unit_of_item.get(judgment.item_id)
        if unit is None or not judgment.ok:
            continue
        spread = judgment.extra.get("score_sd")
        if isinstance(spread, (int, float)) and math.isfinite(spread):
            recorded.setdefault(unit, []).append(float(spread))
        if judgment.score is not None:
            scores.setdefault(judgment.item_id, {})[judgment.judge or ""] = judgment.score
    if not recorded:
        judges = {name for by_judge in scores.values() for name in by_judge}
        if len(judges) < 2:
            raise ConfigError(f"{term('active')} needs the judge's uncertainty: judge with {term('score')} logprob or "
                              f"{term('samples')} N (both record extra.score_sd), or give a judgments file with "
                              "several judges (their disagreement is the uncertainty)")
        for item_id, by_judge in scores.items():
            if len(by_judge) > 1:
                recorded.setdefault(unit_of_item[item_id], []).append(float(np.std(list(by_judge.values()))))
    values = np.array([np.mean(recorded[u]) if u in recorded else np.nan for u in units])
    known = np.isfinite(values)
    if not known.any():
        raise ConfigError("no judgment of these units records an uncertainty")
    return np.where(known, values, np.median(values[known]))


# -- comparisons between systems ------------------------------------------------------------------
def comparison_problem(items) -> Units:
    """Comparisons as sampling units, one stratum per unordered pair of systems ("a vs b")."""
    unnamed = next((item for item in items if item.system_a is None or item.system_b is None), None)
    if unnamed is not None:
        raise ConfigError(f"comparison {unnamed.id!r} names no systems (system_a, system_b): sampling comparisons "
                          "stratifies them by the pair of systems compared")
    codes, pairs = group_codes([pair_stratum(item.system_a, item.system_b) for item in items])
    return Units("comparisons", tuple(item.id for item in items), tuple(pairs), codes)


def pair_stratum(system_a: str, system_b: str) -> str:
    """The stratum of a comparison: its unordered pair of systems."""
    return " vs ".join(sorted((system_a, system_b)))


def comparison_uncertainty(judgments, ids: tuple[str, ...]) -> np.ndarray:
    """How unsure the judge is of each comparison: 1 - |2 p - 1|, p the mean preference for a over
    every verdict at hand (both orders of a judge with ``swap``, several judges of one file): 1 when
    the two orders or the judges disagree evenly or say tie, 0 when all say the same a or b.
    Comparisons without a verdict get the median of the others."""
    position = {unit: k for k, unit in enumerate(ids)}
    sums, counts = np.zeros(len(ids)), np.zeros(len(ids))
    for judgment in judgments:
        k = position.get(judgment.item_id)
        if k is None or not judgment.ok:
            continue
        for verdict in _verdicts(judgment):
            sums[k] += PREFERENCES[verdict]
            counts[k] += 1
    known = counts > 0
    if not known.any():
        raise ConfigError("no judgment gives a verdict (a, b or tie) on these comparisons")
    doubt = np.full(len(ids), np.nan)
    doubt[known] = 1 - np.abs(2 * sums[known] / counts[known] - 1)
    if np.ptp(doubt[known]) == 0:
        raise ConfigError(f"{term('active')} needs the judge to be unsure of some comparisons more than others: judge "
                          "them in both orders (a pairwise judge with swap: true) or give a judgments file with "
                          "several judges; these verdicts are all equally sure")
    return np.where(known, doubt, np.median(doubt[known]))


def _verdicts(judgment) -> list[str]:
    both = judgment.extra.get("verdicts")
    if isinstance(both, dict) and both and all(v in PREFERENCES for v in both.values()):
        return list(both.values())
    return [judgment.label] if judgment.label in PREFERENCES else []


# -- the draw `judgelab sample` and the front door's sample() make ------------------------------------
def draw_sample(items, budget: float, judgments=None, *, aspect: str | None = None, judge: str | None = None,
                active: bool = False, mix: float = DEFAULT_MIX, exclude=None, seed: int = 0
                ) -> tuple[SampleFile, Drawn, Units]:
    """Which of ``items``' units to label: ``budget`` of them (a count, or a fraction), stratified by system
    (comparisons: by pair of systems; relevance items: their queries, one stratum), or ``active`` where the
    judge's ``judgments`` are least sure. ``exclude``: unit ids already labelled, never drawn. Returns the
    sample as the file ``judgelab sample`` writes, the draw (sizes per stratum) and the units."""
    items = list(items)
    if active and judgments is None:
        raise ConfigError(f"{term('active')} needs the judge's verdicts ({term('judgments')})")
    kind = items[0].kind if items else None
    if kind == "pairwise":
        units = comparison_problem(items)
        strata_name = "pairs of systems"
    elif kind == "relevance":
        units = query_units(sorted({str(item.qid) for item in items}))
        strata_name = "systems"
    else:
        units = item_units(items)
        strata_name = "systems"
    uncertainty = None
    if active:
        uncertainty = _uncertainty(items, units, list(judgments), aspect, judge)
    excluded = None
    if exclude is not None:
        excluded = np.zeros(units.n_units, dtype=bool)
        excluded[units.index(list(exclude))] = True
    drawn = draw(units, budget, uncertainty=uncertainty, mix=mix, exclude=excluded, seed=seed, strata_name=strata_name)
    chosen = [k for k in range(units.n_units) if drawn.design.labelled[k]]
    method = "active" if active else "stratified"
    header = {"method": method, "units": units.kind, **({"strata": "pair"} if kind == "pairwise" else {}),
              "budget": len(chosen), "seed": seed, **({"mix": mix} if active else {})}
    sample = SampleFile(tuple(units.units[k] for k in chosen), tuple(float(drawn.design.probability[k]) for k in chosen),
                        method, header)
    return sample, drawn, units


def _uncertainty(items, units: Units, judgments, aspect: str | None, judge: str | None) -> np.ndarray:
    from judgelab.data.io import select_judge
    from judgelab.metrics.align import select_judgments

    if units.kind == "comparisons":
        return comparison_uncertainty(select_judge(judgments, judge) if judge else judgments, units.units)
    if judge is not None or len({j.judge for j in judgments}) <= 1:
        judgments = select_judgments(judgments, aspect, judge)
    unit_of_item = {item.id: str(item.qid) if units.kind == "queries" else item.id for item in items}
    return judge_uncertainty(judgments, unit_of_item, units.units)
