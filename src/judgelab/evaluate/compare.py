"""Which systems are separable: every pairwise difference with its interval and p-value, Holm's
correction over all pairs, and the rank interval each system's wins and losses allow."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from judgelab.evaluate.intervals import T_GUARD, difference_interval, difference_pvalue, is_betting
from judgelab.evaluate.system_estimates import SystemEstimates


@dataclass(frozen=True)
class Pairs:
    """Differences ``value[s] - value[t]`` for s < t, as matrices over systems (NaN on the diagonal)."""

    estimator: str
    systems: tuple[str, ...]
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray
    p_holm: np.ndarray
    alpha: float

    @property
    def significant(self) -> np.ndarray:
        return self.p_holm < self.alpha

    def rank_intervals(self, order_value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rank, best possible rank, worst possible rank), 1 = highest value.

        A system can be placed anywhere between 1 + the number of systems significantly above it
        and S - the number significantly below it, S counting every system: one without a value (no
        labels) may be above or below any other. Systems without a value get NaN ranks; the point rank
        is among the systems with a value.
        """
        valid = np.isfinite(order_value)
        above = self.significant & (self.difference < 0)  # row s significantly below column t
        below = self.significant & (self.difference > 0)
        rank = ranks_of(order_value)
        best = np.where(valid, 1 + above.sum(axis=1), np.nan)
        worst = np.where(valid, len(valid) - below.sum(axis=1), np.nan)
        return rank, best, worst


def ranks_of(order_value: np.ndarray) -> np.ndarray:
    """1 for the highest value, 2 for the next...; NaN for systems without a value."""
    valid = np.isfinite(order_value)
    rank = np.full(len(order_value), np.nan)
    ordering = np.argsort(-np.where(valid, order_value, -np.inf), kind="stable")
    rank[ordering[: valid.sum()]] = np.arange(1, valid.sum() + 1)
    return rank


def pairwise(estimates: SystemEstimates, alpha: float | None = None) -> Pairs:
    """All pairwise differences: t intervals from the covariance, or bootstrap ones from replicates.

    Estimates whose intervals were chosen per system (:mod:`judgelab.evaluate.intervals`): a pair of
    t systems keeps the t test, guarded as their intervals are; a pair with a betting system is tested
    from the two systems' p-value curves."""
    alpha = 1 - estimates.confidence if alpha is None else alpha
    value = estimates.value
    difference = value[:, None] - value[None, :]
    size = len(value)
    methods = estimates.info.get("per_system")
    if estimates.replicates is not None:
        low, high, p = _bootstrap_pairs(estimates.replicates, difference, estimates.confidence)
    elif methods is not None:
        low, high, p = _per_system_pairs(estimates, difference)
    elif estimates.cov is not None and not estimates.info.get("intervals_declined"):
        cov, df = _analytic(estimates)
        p, se = t_tests(difference, cov, df)
        half = stats.t.ppf(0.5 + estimates.confidence / 2, df) * se
        low, high = difference - half, difference + half
    else:  # no spread to test with, or too few labelled queries for tests to hold their level
        low = high = p = np.full((size, size), np.nan)
    p = np.where(np.isfinite(difference), p, np.nan)
    np.fill_diagonal(p, np.nan)
    return Pairs(estimates.estimator, estimates.systems, difference, low, high, p, holm(p), alpha)


def _per_system_pairs(estimates: SystemEstimates, difference: np.ndarray):
    """(low, high, p) of every difference when each system's interval is a t or a betting one."""
    size = len(difference)
    methods = estimates.info["per_system"]
    curves = estimates.info.get("curves")
    confidence = estimates.confidence
    with np.errstate(invalid="ignore"):
        cov, df = _analytic(estimates)
        p, se = t_tests(difference, cov, df)
        p = np.minimum(1.0, p / T_GUARD)
        half = stats.t.ppf(1 - T_GUARD * (1 - confidence) / 2, np.maximum(df, 1.0)) * se
    low, high = difference - half, difference + half
    for s in range(size):
        for t in range(s + 1, size):
            if methods[s] is None or methods[t] is None:
                low[s, t] = high[s, t] = p[s, t] = np.nan
            elif is_betting(methods[s]) or is_betting(methods[t]):
                if curves is None:  # a betting system comes with its curves: the AttributeError None.pvalue raises
                    raise AttributeError("a system with a betting interval needs its p-value curves")
                p[s, t] = difference_pvalue(curves.pvalue[s], curves.pvalue[t])
                low[s, t], high[s, t] = difference_interval(curves.pvalue[s], curves.pvalue[t], curves.grid,
                                                            1 - confidence)
            else:
                continue
            p[t, s], low[t, s], high[t, s] = p[s, t], -high[s, t], -low[s, t]
    if curves is not None:  # two values on a scale differ by at most its length
        length = curves.grid[-1] - curves.grid[0]
        low, high = np.clip(low, -length, length), np.clip(high, -length, length)
    return low, high, p


def _analytic(estimates: SystemEstimates) -> tuple[np.ndarray, np.ndarray]:
    """The covariance and degrees of freedom :func:`t_tests` reads; the error it would raise without them
    (np.diag of None: a ValueError; Student's t at None degrees of freedom: a TypeError)."""
    if estimates.cov is None:
        raise ValueError("t tests need the estimates' covariance")
    if estimates.df is None:
        raise TypeError("t tests need the differences' degrees of freedom")
    return estimates.cov, estimates.df


def t_tests(difference: np.ndarray, cov: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided t-test p-values of every difference (matrix) and their standard errors, from the
    estimates' covariance and the differences' degrees of freedom."""
    d = np.diag(cov)
    se = np.sqrt(np.clip(d[:, None] + d[None, :] - 2 * cov, 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(difference) / se, df), np.where(difference == 0, 1.0, 0.0))
    return p, se


def _bootstrap_pairs(replicates: np.ndarray, difference: np.ndarray, confidence: float):
    """Percentile intervals, and p-values from the bootstrap standard error (normal approximation):
    a p-value counted from 1000 replicates cannot fall below 1/1000, which no Holm correction over
    dozens of pairs would ever call significant."""
    size = replicates.shape[1]
    low, high, p = (np.full((size, size), np.nan) for _ in range(3))
    tail = (1 - confidence) / 2 * 100
    for s in range(size):
        diffs = replicates[:, [s]] - replicates  # (B, S): s minus every t
        masked = np.where(np.isfinite(diffs), diffs, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            low[s], high[s] = np.nanpercentile(masked, [tail, 100 - tail], axis=0)
            se = np.nanstd(masked, axis=0, ddof=1)
            p[s] = np.where(se > 0, 2 * stats.norm.sf(np.abs(difference[s]) / se), 1.0)
    return low, high, p


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment over the upper triangle of a symmetric p-value matrix.

    Five lines; statsmodels' ``multipletests`` does the same but would be a large dependency for it.
    """
    upper = np.triu_indices_from(p, k=1)
    values = p[upper]
    finite = np.isfinite(values)
    adjusted = np.full(values.shape, np.nan)
    order = np.argsort(values[finite])
    m = int(finite.sum())
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * values[finite][order]))
    adjusted_finite = np.empty(m)
    adjusted_finite[order] = stepped
    adjusted[finite] = adjusted_finite
    out = np.full(p.shape, np.nan)
    out[upper] = adjusted
    out.T[upper] = adjusted
    return out

