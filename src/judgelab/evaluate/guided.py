"""A ranking of runs that keeps the judge's order wherever the labelled queries cannot contradict it.

With a few labelled queries the corrected estimate of each run is unbiased but noisy: on TREC DL
2019 its ranking of 37 runs (mean Kendall tau 0.66-0.80 over nine TREMA judges with 3-9 labelled
queries) stays below the judge's own ranking (0.81), because the judge sees every query and the
labels only a few. The *guided* ranking orders runs by the judge's mean, but every pair of runs
whose corrected difference is significant (two-sided paired t-test from the corrected covariance,
not adjusted for multiplicity and without the guard of the printed intervals: the level below was
tuned on this test, and a ranking makes no coverage claim) keeps the labels' order: it is the topological order of those
differences, with ties broken by the judge's mean (largest first). No significant difference: the
judge's ranking. A contradiction the labels show clearly: followed.

The level (chosen on five of the nine TREMA judges, bench/bench_evaluate.py --trec; the other four
held out): 0.05 while the intervals are declined for too few labelled queries (a t-test with 2-7
degrees of freedom on a handful of queries is not to be trusted much: 0.2 lost 0.02 tau at 3
queries), 0.2 from the minimum on, where the labels start to rank better than a weak judge (a
judge at tau 0.71: guided 0.78 at 9 queries with 0.2, 0.75 with 0.05). Unadjusted, because a
ranking makes no coverage claim: Holm's correction over the 666 pairs of 37 runs left almost
nothing significant with 9 queries, and the ranking stayed the judge's.

Runs share the labelled queries, so their corrections are correlated; the paired t-test of each
difference uses the corrected estimate's covariance, which models exactly that (the query-level
shared part cancels in the difference).
"""

from __future__ import annotations

import heapq
from graphlib import TopologicalSorter

import numpy as np

from judgelab.evaluate.compare import t_tests
from judgelab.evaluate.system_estimates import SystemEstimates

LEVEL = 0.2  # with enough labelled queries for intervals
LEVEL_FEW = 0.05  # below estimators.MIN_LABELLED_QUERIES labelled queries


def guided_ranking(corrected: SystemEstimates, judge: SystemEstimates, *, level: float | None = None) -> SystemEstimates:
    """The judge's order, changed only where a corrected difference is significant at ``level``
    (default: :data:`LEVEL_FEW` below ``MIN_LABELLED_QUERIES`` labelled queries, else :data:`LEVEL`).

    Returns estimator ``"guided"``: ``value[s]`` is the number of runs ranked below it (the highest
    value ranks first); no interval (a ranking, not an estimate); a run without a judge value is unranked.
    ``info``: the significant differences it respects and how many pairs it orders unlike the judge.
    """
    if level is None:
        few = corrected.info.get("intervals_declined") or corrected.info.get("few_labelled_queries")
        level = LEVEL_FEW if few else LEVEL
    above = _significant_above(corrected, level)
    order = _topological(above, judge.value)
    value = np.full(len(judge.value), np.nan)
    ranked = [s for s in order if np.isfinite(judge.value[s])]
    value[ranked] = len(ranked) - 1 - np.arange(len(ranked))
    judge_says = judge.value[:, None] > judge.value[None, :]
    info = {"level": level, "based_on": corrected.estimator, "significant_pairs": int(above.sum()),
            "overruled_judge_pairs": int((above & ~judge_says & np.isfinite(judge.value)[None, :]).sum())}
    size = len(value)
    return SystemEstimates("guided", judge.systems, value, np.full((size, 2), np.nan), judge.n_units,
                           corrected.n_labelled, tuple(None if np.isfinite(v) else "no judge verdict" for v in value),
                           corrected.confidence, info=info)


def _significant_above(corrected: SystemEstimates, level: float) -> np.ndarray:
    """above[s, t]: the labels put run s significantly above run t."""
    value = corrected.value
    size = len(value)
    if corrected.cov is None or corrected.df is None or not np.isfinite(value).any():
        return np.zeros((size, size), dtype=bool)
    difference = value[:, None] - value[None, :]
    p, _ = t_tests(difference, corrected.cov, corrected.df)
    with np.errstate(invalid="ignore"):
        return np.isfinite(difference) & (difference > 0) & (p < level)


def _topological(above: np.ndarray, judge: np.ndarray) -> list[int]:
    """Kahn's order of the ``above`` graph, taking the ready run with the largest judge mean first."""
    sorter = TopologicalSorter({t: set(np.flatnonzero(above[:, t]).tolist()) for t in range(len(judge))})
    sorter.prepare()  # the graph comes from one vector of values, so it has no cycle
    key = np.where(np.isfinite(judge), judge, -np.inf)
    ready: list[tuple[float, int]] = []
    order = []
    while sorter.is_active():
        for run in sorter.get_ready():
            heapq.heappush(ready, (-key[run], run))
        run = heapq.heappop(ready)[1]
        order.append(run)
        sorter.done(run)
    return order
