"""Simultaneous rank sets from system estimates (docs/pairwise.md): with probability at least the
confidence level every system's true rank is in its set, all at once.

``max-t`` takes the critical value of the largest studentised
pairwise difference under the estimates' joint normal distribution (Hothorn et al. 2008's
single-step method), so every pairwise interval holds at once; ``bonferroni`` divides alpha by the
number of pairs; ``holm`` uses Holm's step-down tests (evaluate/compare.py); ``auto`` (default)
is max-t, or Bonferroni for a label-based estimate with a median of fewer than 25 labelled
comparisons per system, where max-t's normal approximation fell short on Arena. System i is above j
when the whole interval of ``theta_i - theta_j`` is positive; i's set is [1 + systems surely above
it, K - systems surely below it].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError
from judgelab.evaluate.compare import Pairs, pairwise, ranks_of
from judgelab.evaluate.intervals import T_GUARD, is_betting
from judgelab.evaluate.system_estimates import SystemEstimates

RANK_METHODS = ("auto", "max-t", "bonferroni", "holm")
# auto: max-t's normal approximation is short with few labels (Arena, 200 labelled comparisons, about 20
# per system: simultaneous coverage 0.917-0.930) where Bonferroni's larger multiplier still covers
# (0.937-0.940); from 500 (about 50 per system) both cover 0.99+ and max-t's sets are smaller
AUTO_MAX_T_LABELS = 25
# auto, many systems: max-t simulates the largest of k(k-1)/2 differences 4,000 times (at 500 systems, 125,000
# pairs: 8 s per estimator); Bonferroni's multiplier is one quantile and holds the same level, a little wider
AUTO_MAX_T_SYSTEMS = 200


@dataclass(frozen=True)
class RankSets:
    """Point rank and the simultaneous rank set [best, worst] per system (NaN without an estimate)."""

    method: str
    rank: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    critical: float | None  # the multiplier of each pair's standard error (None for holm)

    @property
    def size(self) -> np.ndarray:
        return self.worst - self.best + 1

    def covers(self, true_rank: np.ndarray) -> bool:
        return bool(np.all((self.best <= true_rank) & (true_rank <= self.worst)))


def rank_sets(estimates: SystemEstimates, method: str = "auto", *, pairs: Pairs | None = None, seed: int = 0,
              n_draws: int = 4000) -> RankSets:
    """Rank sets holding simultaneously at ``estimates.confidence`` (see the module's docstring)."""
    if method not in RANK_METHODS:
        raise ConfigError(f"rank method {method!r}: choose {', '.join(RANK_METHODS)}")
    method = resolved_method(estimates, method)
    value = estimates.value
    alpha = 1 - estimates.confidence
    if estimates.info.get("per_system") is not None:
        return _rank_sets_per_system(estimates, method, pairs or pairwise(estimates), seed, n_draws)
    if method == "holm":
        rank, best, worst = (pairs or pairwise(estimates)).rank_intervals(value)
        return RankSets(method, rank, best, worst, None)
    if estimates.cov is None:  # bootstrap estimates (judge only): the ValueError np.diag(None) raises
        raise ValueError(f"{method} rank sets need the estimates' covariance")
    valid = np.isfinite(value) & np.isfinite(np.diag(estimates.cov))
    cov = estimates.cov[np.ix_(valid, valid)]
    k = int(valid.sum())
    critical = simultaneous_critical(cov, alpha, method, seed=seed, n_draws=n_draws) if k > 1 else 0.0
    rank, best, worst = (np.full(len(value), np.nan) for _ in range(3))
    rank[valid], best[valid], worst[valid] = sets_from(value[valid], cov, critical)
    worst[valid] += len(value) - k  # a system without an estimate may rank below any other
    return RankSets(method, rank, best, worst, critical)


def _rank_sets_per_system(estimates: SystemEstimates, method: str, pairs: Pairs, seed: int,
                          n_draws: int) -> RankSets:
    """Rank sets from the intervals each system actually has (:mod:`judgelab.evaluate.intervals`).

    A system without an interval (too few labels, or none with spread) takes the whole range of ranks
    and places no other system: it is known to be somewhere. Among the others, ``max-t`` (every system
    with a t interval) turns the largest studentised difference's critical value into each pair's own t
    critical value at the pair's degrees of freedom, at the guarded level of the t branch; with a
    betting system, or ``bonferroni``, a pair is ordered when its p-value (t, guarded, or from the two
    systems' betting curves) is below alpha over the number of pairs; ``holm`` steps down over them."""
    value = estimates.value
    alpha = 1 - estimates.confidence
    has = np.array([m is not None for m in estimates.info["per_system"]]) & np.isfinite(value)
    ranked = np.isfinite(value)
    rank = ranks_of(value)
    difference = value[:, None] - value[None, :]
    mask = has[:, None] & has[None, :] & ~np.eye(len(value), dtype=bool)
    if method == "max-t" and any(is_betting(kind) for kind in estimates.info["per_system"]):
        method = "bonferroni"  # a betting interval has no joint normal law to take the maximum over
    critical = None
    if method == "holm":
        surely = pairs.significant & mask
    elif method == "bonferroni":
        n_pairs = max(int(mask.sum()) // 2, 1)
        with np.errstate(invalid="ignore"):
            surely = mask & (pairs.p_value < alpha / n_pairs)
    else:
        sub = np.ix_(has, has)
        if estimates.cov is None:  # t estimates carry it: below, indexing None raises a TypeError (one system
            # with an interval: np.diag(None), a ValueError)
            raise (TypeError if has.sum() > 1 else ValueError)("max-t rank sets need the estimates' covariance")
        if estimates.df is None:  # and these: np.maximum(None, 1.0) raises a TypeError
            raise TypeError("max-t rank sets need the differences' degrees of freedom")
        critical = simultaneous_critical(estimates.cov[sub], T_GUARD * alpha, "max-t", seed=seed, n_draws=n_draws) \
            if has.sum() > 1 else 0.0
        tail = 2 * stats.norm.sf(critical)
        d = np.diag(estimates.cov)
        se = np.sqrt(np.clip(d[:, None] + d[None, :] - 2 * estimates.cov, 0, None))
        per_pair = stats.t.isf(tail / 2, np.maximum(estimates.df, 1.0))
        with np.errstate(invalid="ignore"):
            surely = mask & (np.abs(difference) > per_pair * se)
    above = surely & (difference < 0)  # [i, j]: j surely above i
    best = np.where(ranked, 1 + above.sum(axis=1), np.nan)
    worst = np.where(ranked, len(value) - above.sum(axis=0), np.nan)  # every system: one without a value may rank anywhere
    return RankSets(method, rank, best, worst, critical)


def resolved_method(estimates: SystemEstimates, method: str) -> str:
    """``auto``: max-t, or Bonferroni for a label-based estimate whose systems have a median below
    :data:`AUTO_MAX_T_LABELS` labelled comparisons, or for more than :data:`AUTO_MAX_T_SYSTEMS` systems
    (see there); other methods unchanged."""
    if method != "auto":
        return method
    if np.isfinite(estimates.value).sum() > AUTO_MAX_T_SYSTEMS:
        return "bonferroni"
    labelled = estimates.n_labelled[np.isfinite(estimates.value)]
    if estimates.estimator == "judge" or labelled.size == 0 or np.median(labelled) >= AUTO_MAX_T_LABELS:
        return "max-t"
    return "bonferroni"


def sets_from(value: np.ndarray, cov: np.ndarray, critical: float | np.ndarray):
    """(rank, best, worst) when a difference counts once it exceeds ``critical`` standard errors."""
    d = np.diag(cov)
    se = np.sqrt(np.clip(d[:, None] + d[None, :] - 2 * cov, 0, None))
    above = value[None, :] - value[:, None] > critical * se  # [i, j]: j surely above i
    np.fill_diagonal(above, False)
    k = len(value)
    rank = np.empty(k)
    rank[np.argsort(-value, kind="stable")] = np.arange(1, k + 1)
    return rank, 1 + above.sum(axis=1), k - above.sum(axis=0)


def simultaneous_critical(cov: np.ndarray, alpha: float, method: str = "max-t", *, seed: int = 0,
                          n_draws: int = 4000) -> float:
    """The multiplier c with P(every |difference error| <= c se) = 1 - alpha."""
    k = len(cov)
    n_pairs = k * (k - 1) // 2
    if method == "bonferroni":
        return float(stats.norm.ppf(1 - alpha / (2 * n_pairs)))
    # max-t: the (1 - alpha) quantile of max |Z_i - Z_j| / se_ij, Z ~ N(0, cov), by simulation
    # (scipy's multivariate normal CDF cannot take the singular covariance of centred strengths)
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.clip(values, 0, None))
    i, j = np.triu_indices(k, 1)
    d = np.diag(cov)
    se = np.sqrt(np.clip(d[i] + d[j] - 2 * cov[i, j], 0, None))
    keep = se > 0
    if not keep.any():
        return 0.0
    rng = np.random.default_rng(seed)
    largest = np.empty(n_draws)
    chunk = max(1, 2_000_000 // max(int(keep.sum()), 1))
    for start in range(0, n_draws, chunk):
        z = rng.standard_normal((min(chunk, n_draws - start), k)) @ root.T
        largest[start:start + len(z)] = np.max(np.abs(z[:, i[keep]] - z[:, j[keep]]) / se[keep], axis=1)
    return float(np.quantile(largest, 1 - alpha))


__all__ = ["AUTO_MAX_T_LABELS", "AUTO_MAX_T_SYSTEMS", "RANK_METHODS", "RankSets", "rank_sets", "resolved_method",
           "sets_from", "simultaneous_critical"]
