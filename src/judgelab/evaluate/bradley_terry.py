"""Bradley-Terry strengths from comparisons between systems (docs/pairwise.md): the judge-only,
human-only and corrected (prediction-powered) fits with their sandwich covariances, each system's t
interval, and percentile intervals by bootstrap (:func:`bootstrap_bt`).
:func:`judgelab.evaluate.preferences.estimate` chooses between them; the fits themselves are
:mod:`judgelab.metrics.bradley_terry`'s.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from judgelab.evaluate.comparisons import (
    MIN_LABELS,
    NO_VERDICT,
    Comparisons,
    _estimates,
    _own_df,
    _tuned,
    components,
)
from judgelab.evaluate.intervals import T_MIN_LABELS, guarded_t
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.bradley_terry import (
    fit_bradley_terry,
    fit_many,
    laplacian,
    laplacian_inverse,
    side_gram,
)

BOOTSTRAP_CHUNK = 100  # resamples refitted together: (chunk, K, K) Hessians, 8 MB at K = 100


# -- estimators of Bradley-Terry strengths ----------------------------------------------------------
def _bt_judge(data: Comparisons, confidence: float) -> SystemEstimates:
    rows = data.judged
    m = int(rows.sum())
    a, b, judge = data.a[rows], data.b[rows], data.judge[rows]
    fit = fit_bradley_terry(len(data.systems), a, b, np.full(m, 1 / m), judge / m)
    p = fit.win_probability(a, b)
    bread = laplacian_inverse(laplacian(len(data.systems), a, b, p * (1 - p) / m))
    e = (p - judge) / m
    cov = bread @ (m / max(m - 1, 1) * side_gram(len(data.systems), a, b, e, -e)) @ bread
    counts = np.bincount(a, minlength=len(data.systems)) + np.bincount(b, minlength=len(data.systems))
    return _bt_estimates("judge", data, fit, cov, counts, np.zeros(len(counts), dtype=int), confidence, None)


def _bt_labelled(data: Comparisons, lam: float | None, target: str, confidence: float,
                 start: np.ndarray | None, name: str) -> SystemEstimates:
    """Human only (``lam`` 0) or corrected (``lam`` None: power-tuned at the judge-only strengths ``start``)."""
    k = len(data.systems)
    rows = data.labelled
    n, total = int(rows.sum()), data.n
    counts = np.bincount(data.a[rows], minlength=k) + np.bincount(data.b[rows], minlength=k)
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    la, lb, human, judge_l = data.a[rows], data.b[rows], data.human[rows], judge[rows]
    share = data.shares()[rows]  # 1/n each for a uniform sample, else weighted by 1 / inclusion probability
    if lam is None:
        if start is None:  # power tuning needs the judge-only strengths: the TypeError indexing None raises
            raise TypeError("a corrected Bradley-Terry fit needs the judge-only strengths to tune lambda at")
        p0 = 1 / (1 + np.exp(-(start[la] - start[lb])))
        bread = laplacian_inverse(laplacian(k, data.a, data.b, _logistic_weight(start, data) / total))
        e_h, e_j = (p0 - human) * share, (p0 - judge_l) * share
        g_h, g_j = side_gram(k, la, lb, e_h, -e_h), side_gram(k, la, lb, e_j, -e_j)
        cross = (side_gram(k, la, lb, e_h + e_j, -(e_h + e_j)) - g_h - g_j) / 2
        lam = _tuned(bread @ cross @ bread, bread @ g_j @ bread)
    parts = components(data, rows) if lam == 0 else [list(data.systems)]  # lambda 0: the labels alone
    if len(parts) > 1:
        reason = f"the labelled comparisons split the systems into {len(parts)} unconnected groups"
        return _estimates(name, data, np.full(k, np.nan), np.full((k, k), np.nan), counts, counts, [reason] * k,
                          confidence)
    # loss weights and masses: lambda x (judge, every comparison) + (human - lambda judge) on the labelled
    weight = np.concatenate([np.full(total, lam / total), (1 - lam) * share])
    mass = np.concatenate([lam * judge / total, (human - lam * judge_l) * share])
    a, b = np.concatenate([data.a, la]), np.concatenate([data.b, lb])
    fit = fit_bradley_terry(k, a, b, weight, mass)
    p_all, p_lab = fit.win_probability(data.a, data.b), fit.win_probability(la, lb)
    hessian = laplacian(k, a, b, weight * np.concatenate([p_all * (1 - p_all), p_lab * (1 - p_lab)]))
    bread = laplacian_inverse(hessian)
    fraction, scale = n / total, n / max(n - 1, 1)
    e_r = ((p_lab - human) - lam * (p_lab - judge_l)) * share
    meat = (1 - fraction) * side_gram(k, la, lb, e_r, -e_r)
    if target == "population":
        e_h = (p_lab - human) * share
        meat = meat + fraction * side_gram(k, la, lb, e_h, -e_h)
    cov = bread @ (scale * meat) @ bread
    all_counts = np.bincount(data.a, minlength=k) + np.bincount(data.b, minlength=k)
    estimates = _bt_estimates(name, data, fit, cov, all_counts, counts, confidence, counts)
    estimates.info.update(judge_weight=float(lam), target=target)
    return estimates


def _bt_per_system(estimates: SystemEstimates) -> SystemEstimates:
    """A label-based Bradley-Terry strength is no mean of bounded values, so it has no betting interval:
    its sandwich t interval, guarded as :mod:`judgelab.evaluate.intervals`'s t branch, from
    :data:`T_MIN_LABELS` labelled comparisons of the system on; fewer, no interval, and why."""
    ci, reason = estimates.ci.copy(), list(estimates.reason)
    methods: list[str | None] = []
    df = _own_df(estimates)
    for s, n in enumerate(estimates.n_labelled):
        if reason[s] is not None or not np.isfinite(estimates.value[s]):
            methods.append(None)
        elif n < T_MIN_LABELS:
            ci[s] = np.nan
            reason[s] = (f"{n} labelled comparison(s): a Bradley-Terry interval needs {T_MIN_LABELS} of the system's "
                         f"(label {T_MIN_LABELS - n} more), or read its win rate (--estimand win-prob)")
            methods.append(None)
        else:
            ci[s] = guarded_t(estimates.value[s], estimates.se[s], df[s], estimates.confidence)
            methods.append("t")
    info = estimates.info | {"per_system": tuple(methods), "interval_rule": "auto", "curves": None}
    return replace(estimates, ci=ci, reason=tuple(reason), info=info)


def _logistic_weight(strength: np.ndarray, data: Comparisons) -> np.ndarray:
    p = 1 / (1 + np.exp(-(strength[data.a] - strength[data.b])))
    return p * (1 - p)


def _bt_estimates(name: str, data: Comparisons, fit, cov: np.ndarray, n_units: np.ndarray, n_labelled: np.ndarray,
                  confidence: float, labelled_counts: np.ndarray | None) -> SystemEstimates:
    k = len(data.systems)
    reason: list[str | None] = [None] * k
    if labelled_counts is not None:
        reason = [None if c >= MIN_LABELS else f"{c} labelled comparison(s): an interval needs {MIN_LABELS}"
                  for c in labelled_counts]
    if not fit.converged:
        reason = [r or "no finite strength: a system wins or loses all its comparisons" for r in reason]
    estimates = _estimates(name, data, fit.strength, cov, n_units, n_labelled, reason, confidence)
    estimates.info["iterations"] = fit.iterations
    return estimates


# -- Bradley-Terry intervals by bootstrap ---------------------------------------------------------------
def bootstrap_bt(data: Comparisons, estimates: SystemEstimates, *, n_resamples: int = 1000, seed: int = 0
                 ) -> SystemEstimates:
    """``estimates`` (a Bradley-Terry estimator's) with percentile intervals from ``n_resamples``
    resamples of the comparisons, each refitted, as Arena-Hard-Auto does; the covariance of the
    resampled strengths replaces the sandwich one (pairwise tests and rank sets use it).

    Judge-only resamples the judged comparisons. Human-only and corrected resample all comparisons
    with their labels (a labelled comparison stays labelled): both the comparisons and which of them
    carry a label are drawn again, which is what a uniform random sample of labels from a population
    of comparisons means; the corrected fit keeps the full data's judge weight lambda (any fixed
    lambda gives a consistent estimate; re-tuning it per resample changes the width by its own
    noise only). Each resample's fit depends on it only through per-pair totals, so resamples are
    drawn as multinomial counts over (pair, verdicts) cells, not over a million rows."""
    lam = estimates.info.get("judge_weight")
    cells, value_of, n = _bt_cells(data, judge_only=lam is None)
    pair_i, pair_j = value_of["i"], value_of["j"]
    rng = np.random.default_rng(seed)
    boot, failed = np.empty((n_resamples, len(data.systems))), 0
    start = np.nan_to_num(estimates.value)
    for first in range(0, n_resamples, BOOTSTRAP_CHUNK):
        counts = rng.multinomial(n, cells / n, size=min(BOOTSTRAP_CHUNK, n_resamples - first)).astype(float)
        weight, mass = _bt_totals(counts, value_of, lam, n)
        strength, converged = fit_many(len(data.systems), pair_i, pair_j, weight, mass, start)
        boot[first:first + len(counts)] = strength
        failed += int((~converged).sum())
    alpha = 1 - estimates.confidence
    ci = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0).T
    ci[~np.isfinite(estimates.value)] = np.nan
    cov = np.cov(boot, rowvar=False)
    info = dict(estimates.info, intervals="bootstrap", n_resamples=n_resamples, resamples_not_converged=failed)
    return SystemEstimates(estimates.estimator, estimates.systems, estimates.value, ci, estimates.n_units,
                           estimates.n_labelled, estimates.reason, estimates.confidence, cov=cov, df=estimates.df,
                           info=info)


def _bt_cells(data: Comparisons, judge_only: bool):
    """(count of each distinct cell, the cells' pair and values, the number of rows resampled).

    A cell is a pair ``i < j`` with the verdicts oriented for ``i`` (the preference for ``i``):
    the judge's (judge-only: judged rows only), and for the label-based fits whether the row is
    labelled and its human verdict."""
    rows = data.judged if judge_only else np.ones(data.n, dtype=bool)
    a, b = data.a[rows], data.b[rows]
    flip = a > b
    judge = np.where(data.judged, data.judge, NO_VERDICT)[rows]
    human = np.nan_to_num(data.human[rows], nan=-1.0)
    judge_i = np.where(flip, 1 - judge, judge)
    human_i = np.where(human < 0, -1.0, np.where(flip, 1 - human, human))
    k = len(data.systems)
    pair = np.where(flip, b, a).astype(np.int64) * k + np.where(flip, a, b)
    judge_values, judge_code = np.unique(judge_i, return_inverse=True)  # a few distinct verdicts: 1-d uniques
    human_values, human_code = np.unique(human_i, return_inverse=True)
    key = (pair * len(judge_values) + judge_code.ravel()) * len(human_values) + human_code.ravel()
    distinct, counts = np.unique(key, return_counts=True)
    human_of, rest = human_values[distinct % len(human_values)], distinct // len(human_values)
    judge_of, pair_key = judge_values[rest % len(judge_values)], rest // len(judge_values)
    pairs, pair_of = np.unique(pair_key, return_inverse=True)
    value_of = {"i": pairs // k, "j": pairs % k, "pair": pair_of.ravel(), "judge": judge_of, "human": human_of,
                "labelled": human_of >= 0, "n_pairs": len(pairs)}
    return counts.astype(float), value_of, int(rows.sum())


def _bt_totals(counts: np.ndarray, cell: dict, lam: float | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair (weight, mass) of each resample (rows of ``counts``), as ``_bt_judge`` and
    ``_bt_labelled`` weigh comparisons: judge-only 1/m each; label-based lambda/N on every
    comparison's judge verdict plus (1 - lambda)/n_b on each labelled one's human - lambda judge,
    n_b the resample's own number of labelled comparisons."""
    from scipy.sparse import csr_matrix

    to_pair = csr_matrix((np.ones(len(cell["pair"])), (np.arange(len(cell["pair"])), cell["pair"])),
                         shape=(len(cell["pair"]), cell["n_pairs"]))

    def total(values):
        return np.asarray(to_pair.T @ (counts * values).T).T

    if lam is None:
        return total(np.full(len(cell["pair"]), 1.0 / n)), total(cell["judge"] / n)
    labelled = cell["labelled"].astype(float)
    n_b = np.maximum(counts @ labelled, 1.0)[:, None]
    weight = total(np.full(len(labelled), lam / n)) + total((1 - lam) * labelled) / n_b
    residual = np.where(cell["labelled"], cell["human"] - lam * cell["judge"], 0.0)
    mass = total(lam * cell["judge"] / n) + total(residual) / n_b
    return weight, mass
