"""The design-based variance of the label-based estimators (:func:`judgelab.evaluate.estimators.human_only`
and :func:`~judgelab.evaluate.estimators.corrected`), and their t intervals.

Both estimators are linear in the labelled units' values, ``theta_s = offset_s + sum_u z[u, s]``, so one
stratified (with-replacement) covariance estimator serves both and every difference between systems (IR
queries are shared by all runs, so differences are paired; items of different systems are separate
strata): :func:`_linear`. Intervals use Student's t with the design's degrees of freedom
(Welch-Satterthwaite across strata), because systems often have only a few labels and a normal interval
would be too short there. Each system's interval is centred with Johnson's (1978) skewness correction,
``+ kappa3 / (6 var)`` from the labelled values' third cumulant (pooled like the variance): a skewed label
distribution (most summaries consistent, a few not) makes the plain t interval miss more on one side; the
point estimate itself is not moved, and ``skewness_correction=False`` gives the plain interval. A system
whose labelled values (or errors) are all equal gets no interval and says why, rather than a zero-width
one that looks exact.

* ``variance="pooled"`` (default for items): one within-system variance of the errors, pooled over
  systems (n - S degrees of freedom). With 2-5 labels per system a per-system variance is too
  noisy (two equal human labels give a zero-width interval); pooling assumes the judge's errors
  are about as variable for every system. ``"system"``: each system's own variance.
* ``target="population"`` (default): the mean over the distribution the sources were drawn from;
  adds the judge term's variance over sources. ``"items"``: the mean over exactly these items (a
  finite-population correction, 1 - n/N); the value the simulation in bench/ checks coverage of.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError
from judgelab.evaluate.design import Design
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.system_estimates import SystemEstimates

TARGETS = ("population", "items")
VARIANCES = ("pooled", "system")
MIN_LABELS = 2  # a variance needs two labelled units of the system


def _labelled_pairs(problem: Problem, design: Design) -> np.ndarray:
    """(U, S) mask of the labelled (unit, system) pairs with a human value."""
    if design.labelled.shape != (problem.n_units,) or design.probability.shape != (problem.n_units,):
        raise ConfigError(f"the design does not describe the {problem.n_units} units of the data")
    return design.labelled[:, None] & problem.present & np.isfinite(problem.human)


def _linear(name: str, problem: Problem, design: Design, labelled: np.ndarray, offset: np.ndarray,
            values: np.ndarray, target: str, variance: str, confidence: float,
            judge_term: np.ndarray | None, fitted: int = 0, slope_term: np.ndarray | None = None,
            skewness_correction: bool = True) -> SystemEstimates:
    """``offset_s + sum_u w[u, s] * values[u, s]`` over labelled pairs, with w = 1 / (N_s * pi_u)."""
    if target not in TARGETS:
        raise ConfigError(f"target {target!r}: choose {', '.join(TARGETS)}")
    if variance not in VARIANCES:
        raise ConfigError(f"variance {variance!r}: choose {', '.join(VARIANCES)}")
    sizes = problem.sizes.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(labelled, values / (sizes[None, :] * design.probability[:, None]), 0.0)
    value = offset + z.sum(axis=0)
    n_labelled = labelled.sum(axis=0)
    contributions, dfs = _stratum_contributions(problem, design, labelled, z, target, variance, fitted)
    n_systems = len(problem.systems)
    if slope_term is not None and contributions:
        contributions.append(slope_term)
        dfs.append(min(dfs))
    residual = np.diag(sum(contributions)) if contributions else np.zeros(n_systems)
    judge_variance = np.zeros(n_systems)
    if target == "population" and judge_term is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            weights = np.where(labelled, 1.0 / (sizes[None, :] * design.probability[:, None]), 0.0)
        contributions.append(_cluster_covariance(problem, judge_term, z, weights))
        judge_variance = np.diag(contributions[-1]).copy()
        dfs.append(_cluster_df(problem))
    # sum of a non-empty list of arrays: an array (typeshed's sum also allows its start, 0)
    cov = cast(np.ndarray, sum(contributions)) if contributions else np.zeros((n_systems, n_systems))
    df = _satterthwaite(contributions, dfs) if contributions else np.full((n_systems, n_systems), np.nan)
    reason = tuple(None if k >= MIN_LABELS else f"{k} labelled unit{'s' if k != 1 else ''} (an interval needs "
                   f"{MIN_LABELS})" for k in n_labelled)
    unusable = n_labelled < MIN_LABELS
    value = np.where(unusable, np.nan, value)
    half = stats.t.ppf(0.5 + confidence / 2, np.diag(df)) * np.sqrt(np.clip(np.diag(cov), 0, None))
    centre = value
    if skewness_correction:
        centre = value + _skewness_shift(problem, design, labelled, z, target, np.diag(cov), variance == "pooled")
    ci = np.column_stack([centre - half, centre + half])
    fpc = 1 - n_labelled / sizes if target == "items" else np.ones(n_systems)
    # every labelled value equal (one system, or per-system variance): a zero-width interval would look
    # exact; it only says the sample showed no spread. fpc 0: every unit labelled, the value is exact
    degenerate = ~unusable & ~(np.diag(cov) > 0) & (fpc > 0)
    ci[degenerate] = np.nan
    reason = tuple(r or (f"its {k} labelled values are all equal: no spread to build an interval from"
                         if bad else None) for r, k, bad in zip(reason, n_labelled, degenerate, strict=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_label = np.where(fpc > 0, residual * n_labelled / fpc, np.nan)
    info = {"target": target, "variance": variance, "per_label_variance": per_label,
            "judge_term_variance": judge_variance}
    return SystemEstimates(name, problem.systems, value, ci, problem.sizes.astype(int), n_labelled.astype(int),
                           reason, confidence, cov=cov, df=df, info=info)


def _stratum_contributions(problem: Problem, design: Design, labelled: np.ndarray, z: np.ndarray, target: str,
                           variance: str, fitted: int) -> tuple[list[np.ndarray], list[float]]:
    """Each stratum's covariance contribution to ``sum_u z[u]`` and its degrees of freedom.

    With-replacement estimator within a stratum: n_h / (n_h - 1) * sum (z_u - mean)(z_u - mean)^T,
    times 1 - n_h / N_h for the finite target. ``pooled``: every stratum's variance (of the
    per-draw values n_h z_u) replaced by their pooled value, for strata that hold one system each.
    ``fitted``: parameters the calibration fitted on these same labels (a slope): their degrees of
    freedom are taken from the strata in proportion to their labels, as a regression's residual
    variance divides by n - p.
    """
    contributions, dfs, per_draw = [], [], []
    n_total = int((design.labelled & labelled.any(axis=1)).sum())
    for rows, n_h, size in _labelled_strata(problem, design, labelled, MIN_LABELS):
        centred = z[rows] - z[rows].mean(axis=0)
        fpc = 1 - n_h / size if target == "items" else 1.0
        df = max(n_h - 1 - fitted * n_h / n_total, 0.5)
        contributions.append(fpc * n_h / df * centred.T @ centred)
        dfs.append(df)
        per_draw.append((n_h, fpc, n_h * centred, labelled[rows].any(axis=0)))
    if variance == "pooled" and problem.kind == "items" and len(per_draw) > 1:
        pooled_df = max(sum(n_h - 1 for n_h, _, _, _ in per_draw) - fitted, 1)
        pooled = sum(float((draws ** 2).sum()) for _, _, draws, _ in per_draw) / pooled_df
        contributions = [np.diag(np.where(system, fpc * pooled / n_h, 0.0)) for n_h, fpc, _, system in per_draw]
        dfs = [pooled_df] * len(contributions)
    return contributions, dfs


def _labelled_strata(problem: Problem, design: Design, labelled: np.ndarray, at_least: int):
    """(labelled rows, their number n_h, the stratum's size N_h) of each stratum with ``at_least`` labels."""
    for stratum in np.unique(problem.strata):
        members = problem.strata == stratum
        rows = members & design.labelled & labelled.any(axis=1)
        if rows.sum() >= at_least:
            yield rows, int(rows.sum()), int(members.sum())


def _skewness_shift(problem: Problem, design: Design, labelled: np.ndarray, z: np.ndarray, target: str,
                    variance: np.ndarray, pooled: bool) -> np.ndarray:
    """Johnson's (1978) skewness correction of the t interval's centre: kappa3 / (6 var) per system."""
    strata = []  # (rows, n_h, finite-population factor of a third cumulant, per-label values centred)
    for rows, n_h, size in _labelled_strata(problem, design, labelled, 3):  # a third cumulant needs 3
        f = n_h / size if target == "items" else 0.0
        strata.append((rows, n_h, (1 - f) * (1 - 2 * f), n_h * (z[rows] - z[rows].mean(axis=0))))
    third = np.zeros(z.shape[1])
    if pooled and problem.kind == "items" and len(strata) > 1:
        # one third moment of the per-label values for all systems, as the pooled variance
        k3 = sum(float((c ** 3).sum()) for *_, c in strata) / sum((n - 1) * (n - 2) / n for _, n, _, _ in strata)
        for rows, n_h, factor, _ in strata:
            third += np.where(labelled[rows].any(axis=0), factor * k3 / n_h ** 2, 0.0)
    else:
        for _, n_h, factor, centred in strata:
            third += factor * (centred ** 3).sum(axis=0) / (n_h * (n_h - 1) * (n_h - 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0, third / (6 * variance), 0.0)


def _cluster_covariance(problem: Problem, per_unit: np.ndarray, expanded: np.ndarray | None = None,
                        weights: np.ndarray | None = None) -> np.ndarray:
    """Covariance of each system's mean of ``per_unit`` over its units when the clusters (sources) are a
    sample: the ratio estimator's linearisation (clusters' totals less the mean times their units of the
    system), scaled by k/(k-1) for the k clusters the system (or both systems of a pair) appears in.
    Centred on the mean per unit, a cluster where a system has no unit adds nothing. (Centred on the mean
    cluster total, as before, the 16 clusters of two other systems read as zeros drawn for the third: with
    3 systems on 8 sources and no group_id, the judge term's variance was the square of the mean, not its
    spread, and corrected intervals were seven times human-only's.)

    ``expanded`` (the labelled residuals' terms of each system's mean, ``z``) and ``weights`` (what each
    labelled unit counts for in that mean, 1 / (N_s pi_u)) add the covariance of the judge's mean with the
    residuals' over the same clusters: the labelled units are among the units the judge's mean is taken
    over, and the mean of the human values over all units is the sum of both. Without it, when the
    residuals move against the calibrated judge (a weak judge, cross-fitted), the corrected interval came
    out narrower than the labels allow (every item labelled: 0.50 where the labels' own t gave 0.73)."""
    n_clusters = int(problem.clusters.max()) + 1
    n_systems = per_unit.shape[1]
    totals, counts = np.zeros((n_clusters, n_systems)), np.zeros((n_clusters, n_systems))
    np.add.at(totals, problem.clusters, np.where(problem.present, per_unit, 0.0))
    np.add.at(counts, problem.clusters, problem.present.astype(float))
    sizes = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(sizes > 0, totals.sum(axis=0) / sizes, 0.0)
        residual = np.where(sizes > 0, (totals - mean * counts) / sizes, 0.0)
    appears = (counts > 0).astype(float)
    shared = appears.T @ appears  # clusters each system (diagonal) or both systems of a pair appear in
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(shared >= 2, shared / (shared - 1), 0.0)
    cov = residual.T @ residual
    if expanded is not None and weights is not None:
        rectifier_mean = expanded.sum(axis=0)
        by_cluster = np.zeros((n_clusters, n_systems))
        np.add.at(by_cluster, problem.clusters, expanded - rectifier_mean * weights)
        cross = residual.T @ by_cluster
        cov = cov + cross + cross.T
    return factor * cov


def _cluster_df(problem: Problem) -> float:
    """Degrees of freedom of the judge term: it is estimated from the clusters each system appears in,
    one less than the fewest of them (a system on 8 sources is not known as if it had infinitely many)."""
    units, systems = np.nonzero(problem.present)
    appears = np.zeros((int(problem.clusters.max()) + 1, problem.present.shape[1]), dtype=bool)
    appears[problem.clusters[units], systems] = True
    counts = appears.sum(axis=0)
    counts = counts[counts >= 2]
    return float(counts.min() - 1) if len(counts) else np.inf


def _satterthwaite(contributions: list[np.ndarray], dfs: list[float]) -> np.ndarray:
    """Degrees of freedom of every system (diagonal) and every difference s - t (off-diagonal),
    from the strata's contributions to its variance (Welch-Satterthwaite)."""
    def contrast_variances(c: np.ndarray) -> np.ndarray:
        d = np.diag(c)
        out = d[:, None] + d[None, :] - 2 * c
        np.fill_diagonal(out, d)
        return out

    parts = [contrast_variances(c) for c in contributions]
    total = sum(parts)
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = sum(p ** 2 / df for p, df in zip(parts, dfs, strict=True) if np.isfinite(df))
        df = np.where(denominator > 0, total ** 2 / denominator, np.inf)
    return np.maximum(df, min(dfs))
