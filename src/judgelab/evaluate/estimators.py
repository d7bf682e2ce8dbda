"""Three estimates of each system's mean human score, each with an interval.

* ``judge``: the mean judge score, with a percentile cluster-bootstrap interval over sources
  (queries for IR). It says how precisely the *judge's* mean is known, nothing about the judge's
  bias: on the human scale its intervals are not valid, and the report says so.
* ``human``: the mean of the human labels (Horvitz-Thompson under the sampling design).
* ``corrected``: prediction-powered. The calibrated judge's mean over every unit, plus the
  design-weighted mean of its errors on the labelled units (a difference estimator). It is
  unbiased whatever the judge's errors, because the labelled units were drawn at random, and its
  interval is narrower than the human-only one as far as the calibrated judge predicts the labels.

Where the rest lives: the result type, :class:`~judgelab.evaluate.system_estimates.SystemEstimates`, in
system_estimates.py; the label-based estimators' design-based variance and t intervals (stratified,
Welch-Satterthwaite degrees of freedom, Johnson's skewness correction; ``variance`` and ``target``), in
design_variance.py; the fourth estimate, ``shrunk`` (Fay-Herriot toward the judge's means), in shrinkage.py.
Here: the three estimators and how each system's interval is chosen (:mod:`judgelab.evaluate.intervals`'
rule; too few labelled queries for runs; the labels' own estimate where the judge cannot help).

Why not ppi-python: its intervals are normal (z) intervals with no small-sample correction, no
finite-population option, no stratified or paired differences between systems and no shared
calibration across systems; tests/unit/test_evaluate_estimators.py checks that our estimate and
interval equal its ``ppi_mean_ci`` where the two models coincide (one system, z interval, a
fixed linear predictor), so the shared part is verified against it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from judgelab.errors import ConfigError, term
from judgelab.evaluate.calibrate import cross_fit
from judgelab.evaluate.design import Design
from judgelab.evaluate.design_variance import _labelled_pairs, _linear
from judgelab.evaluate.intervals import INTERVALS, Sample, is_betting, needs_scale, per_system
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.system_estimates import SystemEstimates, labels_own_where, wider_than_labels
from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
from judgelab.metrics.results import json_number

ESTIMATORS = ("judge", "human", "corrected", "shrunk")
#: Runs share their labelled queries, and a handful of queries cannot show the tail of the per-query
#: values (a hard query where every run scores near 0, one the judge gets badly wrong): with 3-5 labelled
#: queries t intervals covered 0.87-0.92 on TREC DL 2019 (43 queries, nine TREMA judges; 0.90-0.93 on
#: bench/'s stressed query populations), from 9 on at least 0.93. Below this many labelled queries the
#: human-only and corrected estimates of runs come without an interval (and their differences without a
#: test), with a reason saying how many more queries to label (docs/evaluate.md).
MIN_LABELLED_QUERIES = 9


# -- judge only -------------------------------------------------------------------------------------
def judge_only(problem: Problem, *, n_resamples: int = 1000, seed: int = 0,
               confidence: float = 0.95) -> SystemEstimates:
    """Mean judge value per system over the units it has a verdict for; cluster bootstrap over sources."""
    scored = problem.present & np.isfinite(problem.judge)
    values = np.where(scored, problem.judge, 0.0)
    n_clusters = int(problem.clusters.max()) + 1
    sums = np.zeros((n_clusters, len(problem.systems)))
    counts = np.zeros_like(sums)
    np.add.at(sums, problem.clusters, values)
    np.add.at(counts, problem.clusters, scored.astype(float))
    n = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = sums.sum(axis=0) / n

        def resampled(weights: np.ndarray) -> np.ndarray:
            return (weights @ sums) / (weights @ counts)

        replicates = GroupBootstrap(n_clusters, n_resamples, seed).replicate(resampled)
    ci = np.array([percentile_ci(replicates[:, s], confidence) if replicates is not None else (np.nan, np.nan)
                   for s in range(len(problem.systems))], dtype=float)
    reason = tuple(None if k > 0 else "no judge verdict" for k in n)
    return SystemEstimates("judge", problem.systems, value, ci, n.astype(int), np.zeros(len(n), dtype=int),
                           reason, confidence, replicates=replicates)


# -- label-based estimators ---------------------------------------------------------------------------
def human_only(problem: Problem, design: Design, *, target: str = "population", variance: str = "system",
               confidence: float = 0.95, skewness_correction: bool = True,
               min_queries: int = MIN_LABELLED_QUERIES, intervals: str = "auto", seed: int = 0) -> SystemEstimates:
    """The design-weighted mean of the human labels of each system.

    ``intervals``: ``auto`` (default) picks each system's interval by the rule of
    :mod:`judgelab.evaluate.intervals` (a guarded per-system t interval, or a betting interval);
    ``betting`` always the betting one; ``t`` the design-based t interval of every earlier release
    (with ``variance``, ``skewness_correction`` and, for runs, ``min_queries``: the labelled queries
    below which it is declined; bench/ sets it to 0 to measure the plain t interval).
    """
    _check_intervals(intervals, problem)
    labelled = _labelled_pairs(problem, design)
    offset = np.zeros(len(problem.systems))
    estimates = _linear("human", problem, design, labelled, offset, np.where(labelled, problem.human, 0.0),
                        target, variance, confidence, judge_term=None, skewness_correction=skewness_correction)
    if intervals == "t":
        return _too_few_queries(estimates, problem, design, min_queries)
    return _per_system(estimates, problem, design, labelled, None, target, intervals, seed)


def corrected(problem: Problem, design: Design, *, calibration: str = "auto", target: str = "population",
              variance: str = "system", folds: int = 5, seed: int = 0, confidence: float = 0.95,
              skewness_correction: bool = True, min_queries: int = MIN_LABELLED_QUERIES,
              intervals: str = "auto", labels_own: SystemEstimates | None = None) -> SystemEstimates:
    """Prediction-powered estimate: calibrated judge mean + design-weighted mean of its errors
    (``intervals``, ``min_queries``: as :func:`human_only`). Under ``auto``, a system whose rule gives a
    betting interval gets the labels' own value and interval (the judge cannot narrow a guaranteed
    interval with so few labels); ``intervals="betting"`` uses the rectifier's,
    :func:`judgelab.evaluate.intervals.rectified_bet`, for every system. ``labels_own``: :func:`human_only`
    on the same problem, design and settings when the caller has it (evaluate does), not computed again for
    the systems that take the labels' own estimate (:func:`~judgelab.evaluate.system_estimates.labels_own_where`)."""
    _check_intervals(intervals, problem)
    labelled = _labelled_pairs(problem, design)
    units, systems = np.nonzero(labelled)
    weights = 1.0 / design.probability[units]
    judge = problem.judge if problem.judges is None else problem.filled_judges()
    fit = cross_fit(calibration, judge, units, judge[units, systems], problem.human[units, systems],
                    weights, systems, folds=folds, seed=seed, same_scale=problem.kind == "queries")
    predicted = np.where(problem.present, fit.everywhere, 0.0)
    offset = predicted.sum(axis=0) / problem.sizes
    residual = np.zeros(problem.judge.shape)
    residual[units, systems] = problem.human[units, systems] - fit.out_of_fold
    slope_term = None
    if fit.slope_variance > 0:  # the slope's own error moves each estimate by (judge mean - labelled judge mean) x it
        judged = np.where(problem.present, problem.judge, np.nan)
        everywhere_mean = np.nanmean(judged, axis=0)
        weights_matrix = np.zeros(problem.judge.shape)
        weights_matrix[units, systems] = weights / problem.sizes[systems]
        labelled_mean = np.nansum(np.where(labelled, judged * weights_matrix, 0.0), axis=0) / np.maximum(
            np.where(labelled & np.isfinite(judged), weights_matrix, 0.0).sum(axis=0), 1e-12)
        gap = np.nan_to_num(everywhere_mean - labelled_mean)
        slope_term = np.outer(gap, gap) * fit.slope_variance
    if fit.weights_covariance is not None:  # several judges' weights: the same, one gap per judge
        slope_term = _weights_term(problem, judge, labelled, weights / problem.sizes[systems], fit.weights_covariance)
    estimates = _linear("corrected", problem, design, labelled, offset, residual, target, variance, confidence,
                        judge_term=predicted, fitted=fit.fitted_in_sample, slope_term=slope_term,
                        skewness_correction=skewness_correction)
    judged = np.isfinite(problem.judge) if problem.judges is None else np.isfinite(problem.judges).any(axis=-1)
    missing = int((problem.present & ~judged).sum())
    estimates.info.update(calibration=fit.method, folds=fit.folds, units_without_verdict=missing, offset=offset)
    if fit.weights is not None:
        estimates.info["judge_weights"] = dict(zip(problem.judge_names, map(json_number, fit.weights), strict=True))
    if intervals == "t":
        estimates = _too_few_queries(estimates, problem, design, min_queries)
    else:
        estimates = _per_system(estimates, problem, design, labelled, fit.everywhere, target, intervals, seed)
    own = labels_own if labels_own is not None else human_only(
        problem, design, target=target, variance=variance, confidence=confidence,
        skewness_correction=skewness_correction, min_queries=min_queries, intervals=intervals, seed=seed)
    census = labelled.sum(axis=0) == problem.sizes
    wider = wider_than_labels(estimates, own) & ~census
    if not (census | wider).any():
        return estimates
    chosen = labels_own_where(estimates, own, census | wider)
    chosen.info["every_unit_labelled"] = [s for s, c in zip(problem.systems, census, strict=True) if c]
    chosen.info["labels_own_narrower"] = [s for s, w in zip(problem.systems, wider, strict=True) if w]
    return chosen


def _weights_term(problem: Problem, judges: np.ndarray, labelled: np.ndarray, pair_weight: np.ndarray,
                  covariance: np.ndarray) -> np.ndarray:
    """The fitted weights' own error moves system s's estimate by (its judges' means - their labelled means)
    times it: gap covariance gap', over systems."""
    units, systems = np.nonzero(labelled)
    everywhere = np.array([judges[problem.present[:, s], s].mean(axis=0) for s in range(len(problem.systems))])
    sums = np.zeros(everywhere.shape)
    totals = np.zeros(len(problem.systems))
    np.add.at(sums, systems, judges[units, systems] * pair_weight[:, None])
    np.add.at(totals, systems, pair_weight)
    labelled_mean = np.where(totals[:, None] > 0, sums / np.maximum(totals, 1e-12)[:, None], everywhere)
    gap = everywhere - labelled_mean
    return gap @ covariance @ gap.T


def _check_intervals(intervals: str, problem: Problem) -> None:
    if intervals not in INTERVALS:
        raise ConfigError(f"intervals {intervals!r}: choose {', '.join(INTERVALS)}")
    if needs_scale(intervals) and problem.scale is None:
        raise ConfigError(f"{'confidence sequences' if intervals == 'sequence' else 'betting intervals'} need the "
                          f"labels' scale: give the items a scale ([low, high]) or {term('scale')}")


def _per_system(estimates: SystemEstimates, problem: Problem, design: Design, labelled: np.ndarray,
                predicted: np.ndarray | None, target: str, intervals: str, seed: int) -> SystemEstimates:
    """Each system's interval by the rule of :mod:`judgelab.evaluate.intervals` (``predicted``: the
    calibrated judge on every unit, for the corrected estimator's rectifier; None: human-only)."""
    samples = []
    for s in range(len(problem.systems)):
        rows, units = labelled[:, s], problem.present[:, s]
        if design.order is not None:  # the order the labels were given: what a confidence sequence reads
            rows = np.flatnonzero(rows)
            rows = rows[np.argsort(design.order[rows], kind="stable")]
        samples.append(Sample(problem.human[rows, s],
                              None if predicted is None else predicted[rows, s],
                              None if predicted is None else predicted[units, s],
                              int(units.sum()) if target == "items" else None))
    df = np.diag(estimates.df) if estimates.df is not None else np.full(len(samples), np.inf)
    chosen = per_system(samples, estimates.value, estimates.ci, estimates.se, df, problem.scale,
                        estimates.confidence, intervals, design.method == "stratified", seed)
    reason = tuple(None if is_betting(method) else r for r, method in zip(estimates.reason, chosen.methods, strict=True))
    info = estimates.info | {"per_system": chosen.methods, "interval_rule": intervals, "curves": chosen.curves}
    if problem.kind == "queries":  # the guided ranking tests at a stricter level with few queries
        info["few_labelled_queries"] = int(design.labelled.sum()) < MIN_LABELLED_QUERIES
    return replace(estimates, value=chosen.value, ci=chosen.ci, reason=reason, info=info)


def _too_few_queries(estimates: SystemEstimates, problem: Problem, design: Design, minimum: int) -> SystemEstimates:
    """Runs with fewer than ``minimum`` labelled queries: the value stays, the interval goes, and the
    differences are not tested (``info["intervals_declined"]``; :func:`judgelab.evaluate.compare.pairwise`)."""
    n = int(design.labelled.sum())
    if problem.kind != "queries" or n >= minimum:
        return estimates
    why = (f"{n} labelled quer{'y' if n == 1 else 'ies'}: intervals for runs need {minimum} (label {minimum - n} "
           f"more); with fewer, t intervals covered as little as 0.87 on TREC DL 2019")
    reason = tuple(r or why for r in estimates.reason)
    ci = np.full(estimates.ci.shape, np.nan)
    info = estimates.info | {"intervals_declined": why, "min_labelled_queries": minimum}
    return replace(estimates, ci=ci, reason=reason, info=info)
