"""Three estimates of each system's mean human score, each with an interval.

* ``judge``: the mean judge score, with a percentile cluster-bootstrap interval over sources
  (queries for IR). It says how precisely the *judge's* mean is known, nothing about the judge's
  bias: on the human scale its intervals are not valid, and the report says so.
* ``human``: the mean of the human labels (Horvitz-Thompson under the sampling design).
* ``corrected``: prediction-powered. The calibrated judge's mean over every unit, plus the
  design-weighted mean of its errors on the labelled units (a difference estimator). It is
  unbiased whatever the judge's errors, because the labelled units were drawn at random, and its
  interval is narrower than the human-only one as far as the calibrated judge predicts the labels.

Variance. Both label-based estimators are linear in the labelled units' values, ``theta_s =
offset_s + sum_u z[u, s]``, so one stratified (with-replacement) covariance estimator serves both
and every difference between systems (IR queries are shared by all runs, so differences are
paired; items of different systems are separate strata). Intervals use Student's t with the
design's degrees of freedom (Welch-Satterthwaite across strata), because systems often have only a
few labels and a normal interval would be too short there. Each system's interval is centred with
Johnson's (1978) skewness correction, ``+ kappa3 / (6 var)`` from the labelled values' third
cumulant (pooled like the variance): a skewed label distribution (most summaries consistent, a few
not) makes the plain t interval miss more on one side; the point estimate itself is not moved, and
``skewness_correction=False`` gives the plain interval. A system whose labelled values (or errors)
are all equal gets no interval and says why, rather than a zero-width one that looks exact.

* ``variance="pooled"`` (default for items): one within-system variance of the errors, pooled over
  systems (n - S degrees of freedom). With 2-5 labels per system a per-system variance is too
  noisy (two equal human labels give a zero-width interval); pooling assumes the judge's errors
  are about as variable for every system. ``"system"``: each system's own variance.
* ``target="population"`` (default): the mean over the distribution the sources were drawn from;
  adds the judge term's variance over sources. ``"items"``: the mean over exactly these items (a
  finite-population correction, 1 - n/N); the value the simulation in bench/ checks coverage of.

Why not ppi-python: its intervals are normal (z) intervals with no small-sample correction, no
finite-population option, no stratified or paired differences between systems and no shared
calibration across systems; tests/unit/test_evaluate_estimators.py checks that our estimate and
interval equal its ``ppi_mean_ci`` where the two models coincide (one system, z interval, a
fixed linear predictor), so the shared part is verified against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
from scipy import special, stats

from judgelab.errors import ConfigError, term
from judgelab.evaluate.calibrate import cross_fit
from judgelab.evaluate.design import Design
from judgelab.evaluate.intervals import INTERVALS, Sample, is_betting, needs_scale, per_system
from judgelab.evaluate.problem import Problem
from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
from judgelab.metrics.results import json_number

TARGETS = ("population", "items")
VARIANCES = ("pooled", "system")
ESTIMATORS = ("judge", "human", "corrected", "shrunk")
MIN_SYSTEMS_TO_SHRINK = 3
SHRINK_RULE = "smooth"  # shrunk's trend in the judge's means for items (see shrunk; comparisons keep the line)
MIN_LABELS = 2  # a variance needs two labelled units of the system
#: Runs share their labelled queries, and a handful of queries cannot show the tail of the per-query
#: values (a hard query where every run scores near 0, one the judge gets badly wrong): with 3-5 labelled
#: queries t intervals covered 0.87-0.92 on TREC DL 2019 (43 queries, nine TREMA judges; 0.90-0.93 on
#: bench/'s stressed query populations), from 9 on at least 0.93. Below this many labelled queries the
#: human-only and corrected estimates of runs come without an interval (and their differences without a
#: test), with a reason saying how many more queries to label (docs/evaluate.md).
MIN_LABELLED_QUERIES = 9


@dataclass(frozen=True)
class SystemEstimates:
    """One estimator's value and interval per system, and what its differences need.

    ``cov``/``df`` (analytic estimators): the covariance of the system estimates and the degrees
    of freedom of each difference (diagonal: of each system). ``replicates`` (judge-only): the
    bootstrap replicates, ``(resamples, systems)``. ``reason[s]`` says why system ``s`` has no
    estimate (its value is then NaN).
    """

    estimator: str
    systems: tuple[str, ...]
    value: np.ndarray
    ci: np.ndarray  # (S, 2)
    n_units: np.ndarray  # units each estimate averages over
    n_labelled: np.ndarray  # labelled units each estimate used (0 for the judge-only one)
    reason: tuple[str | None, ...]
    confidence: float
    cov: np.ndarray | None = None
    df: np.ndarray | None = None
    replicates: np.ndarray | None = field(default=None, repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def se(self) -> np.ndarray:
        if self.cov is not None:
            return np.sqrt(np.clip(np.diag(self.cov), 0, None))
        if self.replicates is not None:
            return np.nanstd(self.replicates, axis=0, ddof=1)
        return np.full(len(self.systems), np.nan)


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
    the systems that take the labels' own estimate (:func:`_labels_own_where`)."""
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
    wider = _wider_than_labels(estimates, own) & ~census
    if not (census | wider).any():
        return estimates
    chosen = _labels_own_where(estimates, own, census | wider)
    chosen.info["every_unit_labelled"] = [s for s, c in zip(problem.systems, census, strict=True) if c]
    chosen.info["labels_own_narrower"] = [s for s, w in zip(problem.systems, wider, strict=True) if w]
    return chosen


def _wider_than_labels(fixed: SystemEstimates, own: SystemEstimates) -> np.ndarray:
    """Systems whose corrected t interval came out wider than the labels' own t interval: a judge whose errors
    vary more than the labels (a poor TREMA judge on 12 labelled queries: 1.16 times the labels' width for
    the worst judge, 1.45 for its worst run). There the labels' own estimate is taken, so the judge never
    widens a system's interval. A choice between two intervals from the same labels is a selection: on TREC
    DL 2019 at 12 labelled queries (300 draws) the worst run's coverage went from 0.943 to 0.923 for
    ``target="items"`` (none significantly under 0.95) and from 0.983 to 0.973 for the CLI's population
    target; on HANNA and Topical-Chat it moved within Monte Carlo error (bench/bench_per_system.py)."""
    methods = fixed.info.get("per_system") or ("t",) * len(fixed.value)
    own_methods = own.info.get("per_system") or ("t",) * len(own.value)
    both_t = np.array([a == "t" and b == "t" for a, b in zip(methods, own_methods, strict=True)])
    with np.errstate(invalid="ignore"):
        return both_t & ((fixed.ci[:, 1] - fixed.ci[:, 0]) > (own.ci[:, 1] - own.ci[:, 0]))


def _labels_own_where(fixed: SystemEstimates, own: SystemEstimates, census: np.ndarray) -> SystemEstimates:
    """The systems ``census`` marks get the labels' own estimate, interval and test. A system whose every unit
    is labelled: the judge cannot tell anything about those units that their labels do not (the corrected value
    equals the labels' mean there), and its term, counted as if from other units, gave more degrees of freedom
    than the labels have (a narrower interval than the labels allow). A system whose corrected interval came out
    wider than the labels' own: :func:`_wider_than_labels`. ``info["every_unit_labelled"]`` and
    ``info["labels_own_narrower"]`` name them."""
    value, ci = np.where(census, own.value, fixed.value), np.where(census[:, None], own.ci, fixed.ci)
    if fixed.cov is None or fixed.df is None:  # analytic estimates only: the AttributeError None.copy() raises
        raise AttributeError("the corrected estimates have no covariance or degrees of freedom")
    cov, df = fixed.cov.copy(), fixed.df.copy()
    if own.cov is None or own.df is None:  # the same of the labels' own: the TypeError indexing None raises
        raise TypeError("the labels' own estimates have no covariance or degrees of freedom")
    for matrix, source in ((cov, own.cov), (df, own.df)):
        matrix[census, :] = source[census, :]
        matrix[:, census] = source[:, census]
    reason = tuple(o if c else f for f, o, c in zip(fixed.reason, own.reason, census, strict=True))
    info = dict(fixed.info)
    if "per_system" in info:
        info["per_system"] = tuple(o if c else f for f, o, c in zip(fixed.info["per_system"], own.info["per_system"],
                                                                    census, strict=True))
    if info.get("curves") is not None:
        info["curves"] = info["curves"].taking(own.info["curves"], census)
    return replace(fixed, value=value, ci=ci, cov=cov, df=df, reason=reason, info=info)


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


def shrunk(fixed: SystemEstimates, judge_means: np.ndarray, *, rule: str = SHRINK_RULE) -> SystemEstimates:
    """Hierarchical Bayes (Fay-Herriot), with the judge's system means as what the labels shrink toward.

    Across systems, the corrected estimates ``d_s`` (variance ``v_s``) are modelled as ``theta_s =
    b0 + g(x_s) + u_s``, with ``x_s`` the judge's mean, ``g`` a trend in it, and ``u_s`` of variance
    ``tau^2``: how far the judge's system means can be trusted. Given the trend and ``tau^2``, each
    system's estimate is the trend's prediction plus ``tau^2 / (tau^2 + v_s)`` of its own deviation
    from it: a system with few labels leans on what the judge says about it, one with many on its
    labels. Nothing is plugged in: ``tau^2`` and the trend's parameters are averaged over their
    posterior (uniform priors, ``b0`` flat and integrated out: the restricted likelihood), on a grid.

    ``rule`` (see :func:`fay_herriot`): ``smooth`` (the default for items) takes ``g`` to be a smooth
    curve (a Gaussian process whose amplitude and length scale are averaged over too): the judge is
    trusted for differences its means show consistently, such as two groups of systems far apart,
    without a straight line that turns its small differences inside a group into large predicted
    ones. On Topical-Chat, where UniEval separates two groups of systems but orders each wrongly,
    the line made the ranking worse than the labels alone (0.60 against 0.71 Kendall tau at 10%
    labels, engagingness; the curve: 0.67); with the check of evaluate/choose.py the recommended
    ranking stays within 0.03 of the better of judge and labels in 19 of 24 cells there, against 12
    with the line. With good judges and about three labels per system it costs (HANNA at 5% labels:
    0.01-0.04 per aspect; bench/bench_evaluate.py per judge, docs/evaluate.md).
    ``posterior``: the straight line (``g(x) = b1 x``), the rule before; comparisons keep it
    (evaluate/preferences.py: measured on Arena with it, 20 systems).

    Its intervals are the posterior's (a mixture of normals over the grid), so they include the
    uncertainty of ``tau^2`` and the trend, stretched by Student's t over the normal quantile at the
    corrected estimates' degrees of freedom (their variances are estimated from a few labels, not
    known); they hold on average over systems, not for a system whose bias is unlike the others'
    (the worst single system's coverage was 0.64-0.90 on HANNA and Topical-Chat at 5-40% labels,
    while the average was 0.93-0.95). So they are no confidence intervals: ``ci`` is left empty and
    ``info["posterior_interval"]`` holds them, named for what they are.
    For items only: runs sharing a handful of labelled queries have correlated corrections whose
    covariance that handful cannot estimate.
    """
    cov = _covariance(fixed)
    variance = np.diag(cov)
    usable = _shrinkable(fixed, judge_means)
    value = np.full(len(fixed.value), np.nan)
    ci = np.full((len(value), 2), np.nan)
    reason: tuple[str | None, ...]
    if usable.sum() < MIN_SYSTEMS_TO_SHRINK:
        reason = tuple(r or f"shrinkage needs {MIN_SYSTEMS_TO_SHRINK} systems with labels" for r in fixed.reason)
        return replace(fixed, estimator="shrunk", value=value, ci=ci, reason=reason, cov=np.diag(np.full(len(value),
                       np.nan)), df=np.full(cov.shape, np.inf), info={"tau2": None})
    fit = fay_herriot(fixed.value[usable], variance[usable], judge_means[usable], fixed.confidence, rule=rule)
    value[usable] = fit.value
    # the v_s are estimated (with the corrected estimates' degrees of freedom), not known as the model
    # takes them: widen the posterior interval by Student's t over the normal quantile, as the t interval does
    df = np.diag(fixed.df)[usable] if fixed.df is not None else np.full(usable.sum(), np.inf)
    q = 0.5 + fixed.confidence / 2
    stretch = stats.t.ppf(q, np.maximum(df, 1.0)) / stats.norm.ppf(q)
    ci[usable] = fit.value[:, None] + (fit.ci - fit.value[:, None]) * stretch[:, None]
    full_mse = np.full(len(value), np.nan)
    full_mse[usable] = fit.variance
    reason = tuple(r or (None if ok else "no corrected estimate") for r, ok in zip(fixed.reason, usable, strict=True))
    info = {"tau2": fit.tau2, "tau2_rule": fit.rule, "trend": fit.beta.tolist(),
            "weight_on_labels": dict(zip(np.array(fixed.systems)[usable].tolist(), fit.gamma.tolist(), strict=True)),
            # not confidence intervals: they hold on average over systems, not for each (bench/bench_per_system.py)
            "posterior_interval": [[json_number(low), json_number(high)] for low, high in ci]}
    return replace(fixed, estimator="shrunk", value=value, ci=np.full(ci.shape, np.nan), reason=reason,
                   cov=np.diag(full_mse), df=fixed.df if fixed.df is not None else np.full(cov.shape, np.inf),
                   info=info)


def shrunk_values(fixed: SystemEstimates, judge_means: np.ndarray, *, rule: str = SHRINK_RULE) -> np.ndarray:
    """:func:`shrunk`'s point values alone, without its intervals (a quarter of the time): what the
    ranking checks of evaluate/choose.py need, dozens of times per evaluation."""
    usable = _shrinkable(fixed, judge_means)
    value = np.full(len(fixed.value), np.nan)
    if usable.sum() >= MIN_SYSTEMS_TO_SHRINK:
        value[usable] = fay_herriot(fixed.value[usable], np.diag(_covariance(fixed))[usable], judge_means[usable],
                                    rule=rule, interval=False).value
    return value


def _covariance(fixed: SystemEstimates) -> np.ndarray:
    """The covariance shrinkage reads; without one (judge-only estimates) the ValueError np.diag(None) raises."""
    if fixed.cov is None:
        raise ValueError("shrinkage needs the corrected estimates' covariance")
    return fixed.cov


def _shrinkable(fixed: SystemEstimates, judge_means: np.ndarray) -> np.ndarray:
    variance = np.diag(_covariance(fixed))
    # a variance at rounding level (labels with no spread, e.g. 4e-34 among 1e-3s) is no information: left out
    tiny = 1e-12 * np.nanmedian(np.where(variance > 0, variance, np.nan)) if (variance > 0).any() else 0.0
    return np.isfinite(fixed.value) & (variance > tiny) & np.isfinite(judge_means)


# -- Fay-Herriot: the between-system variance tau^2 ----------------------------------------------------
TAU2_RULES = ("posterior", "smooth", "moments", "adjusted")
SMOOTH_LENGTHS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # length scales of the smooth trend, x sd of the judge's means
SMOOTH_GRID = 9  # grid points for tau and for the trend's amplitude
MAX_SMOOTH_SYSTEMS = 60  # above, the linear trend (the smooth one keeps an S x S matrix per grid point)
TAU_GRID = 161  # grid points for tau (0 to TAU_RANGE x the spread of the estimates)
TAU_RANGE = 4.0


@dataclass(frozen=True)
class FayHerriot:
    """One Fay-Herriot fit: per-system estimate, its variance (MSE) and interval, the weight on the
    labels (``gamma``), the trend's fixed part (``beta``: intercept and slope on the judge's mean for the
    line, the intercept for the smooth curve), and ``tau^2`` (posterior mean or estimate)."""

    value: np.ndarray
    variance: np.ndarray
    ci: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    tau2: float
    rule: str


VARIANCE_FLOOR = 1e-12  # the smallest sampling variance a system's estimate is given in shrinkage


def fay_herriot(d: np.ndarray, v: np.ndarray, judge_means: np.ndarray, confidence: float = 0.95,
                rule: str = "posterior", *, interval: bool = True) -> FayHerriot:
    """Shrink estimates ``d`` (sampling variances ``v``) toward their regression on ``judge_means``.

    ``rule``: ``posterior`` (this function's default; what ``shrunk`` uses for comparisons): a
    straight line, tau^2 averaged over its posterior (uniform prior on tau); ``smooth`` (what
    ``shrunk`` uses for items; up to MAX_SMOOTH_SYSTEMS systems, else ``posterior``): the trend in
    the judge's means is a smooth curve (a Gaussian process, its amplitude and length scale averaged
    over their posterior along with tau^2); ``moments`` (Prasad-Rao, truncated at 0: the rule before
    the posterior, kept to compare) or ``adjusted`` (Li & Lahiri 2010: the maximum of tau^2 times the
    restricted likelihood, never 0), both with the straight line. ``interval=False``: the estimates
    only, for the checks of evaluate/choose.py, which fit dozens.
    """
    if rule not in TAU2_RULES:
        raise ConfigError(f"tau^2 rule {rule!r}: choose {', '.join(TAU2_RULES)}")
    # a system whose labels all agree has an estimated sampling variance of 0: known exactly, as far as its
    # labels tell; a floor far under any real variance keeps the covariances invertible (every system's
    # labels constant made the curve's Cholesky factor fail)
    v = np.maximum(np.asarray(v, dtype=float), VARIANCE_FLOOR)
    if rule == "smooth" and len(d) <= MAX_SMOOTH_SYSTEMS:
        return _smooth(d, v, judge_means, confidence, interval=interval)
    rule = "posterior" if rule == "smooth" else rule
    x = np.column_stack([np.ones(len(d)), judge_means])
    if np.ptp(judge_means) == 0:
        x = x[:, :1]
    if rule == "moments":
        return _plugged_in(d, v, x, _moments_tau2(d, v, x), confidence, rule)
    spread = np.sqrt(np.var(d, ddof=1) + np.mean(v))
    tau2 = (np.linspace(0.0, TAU_RANGE * spread, TAU_GRID)) ** 2  # uniform steps in tau: its uniform prior
    grid = _conditional(d, v, x, tau2)
    if rule == "adjusted":
        with np.errstate(divide="ignore"):
            best = int(np.argmax(np.log(tau2) + grid["loglik"]))
        return _plugged_in(d, v, x, float(tau2[best]), confidence, rule)
    weight = np.exp(grid["loglik"] - grid["loglik"].max())
    weight /= weight.sum()
    mean = weight @ grid["mean"]
    second = weight @ (grid["var"] + grid["mean"] ** 2)
    variance = np.maximum(second - mean ** 2, 0.0)
    ci = (_mixture_interval(weight, grid["mean"], np.sqrt(grid["var"]), confidence) if interval
          else np.full((len(d), 2), np.nan))  # interval=False: the estimates only (evaluate/choose.py fits many)
    return FayHerriot(mean, variance, ci, weight @ grid["gamma"], weight @ grid["beta"], float(weight @ tau2), rule)


def _smooth(d: np.ndarray, v: np.ndarray, judge_means: np.ndarray, confidence: float, *,
            interval: bool = True) -> FayHerriot:
    """theta_s = b0 + g(x_s) + u_s with g a Gaussian process (squared-exponential kernel) in the judge's
    means: the judge is trusted for differences its means show consistently (two groups of systems
    far apart) without a straight line turning its small differences into large ones. Amplitude,
    length scale and tau: a grid, weighted by the restricted likelihood (uniform priors; b0 flat)."""
    size = len(d)
    spread = np.sqrt(np.var(d, ddof=1) + np.mean(v))
    steps = np.linspace(0.0, 3 * spread, SMOOTH_GRID)
    lengths = (np.std(judge_means) or 1.0) * np.array(SMOOTH_LENGTHS)
    tau, amplitude, length = (a.ravel() for a in np.meshgrid(steps, steps, lengths, indexing="ij"))
    gap2 = (judge_means[:, None] - judge_means[None, :]) ** 2
    prior = (amplitude ** 2)[:, None, None] * np.exp(-gap2[None] / (2 * length[:, None, None] ** 2))
    prior += (tau ** 2)[:, None, None] * np.eye(size)[None]
    covariance = prior + np.diag(v)[None]
    b0, information, weighted, loglik = _curve_fits(d, covariance)
    mean = b0[:, None] + np.einsum("gij,gj->gi", prior, weighted)  # prior @ inverse @ (d - b0)
    weight = _normalised(loglik)
    value = weight @ mean
    if not interval:  # the checks of evaluate/choose.py, which fit 60 curves, read the estimates alone
        nothing = np.full(size, np.nan)
        return FayHerriot(value, nothing, np.full((size, 2), np.nan), nothing, np.array([weight @ b0]),
                          float(weight @ tau ** 2), "smooth")
    pull = prior @ np.linalg.inv(covariance)  # how each system's estimate moves with every system's labels
    unexplained = 1 - pull.sum(axis=2)  # what of b0's error reaches each system
    var = (np.einsum("gii->gi", prior) - np.einsum("gij,gji->gi", pull, prior)
           + unexplained ** 2 / information[:, None])
    variance = np.maximum(weight @ (var + mean ** 2) - value ** 2, 0.0)
    ci = _mixture_interval(weight, mean, np.sqrt(np.maximum(var, 1e-300)), confidence)
    gamma = weight @ np.einsum("gii->gi", pull)
    return FayHerriot(value, variance, ci, gamma, np.array([weight @ b0]), float(weight @ tau ** 2), "smooth")


def _curve_fits(d: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per grid point: b0 (GLS), 1' inverse 1, inverse @ (d - b0) and the restricted log-likelihood, by one Cholesky
    factor and one solve; no inverse, which only the intervals need (2x faster for the checks'
    estimates alone: bench/bench_smooth_fit.py)."""
    size = len(d)
    logdet = 2 * np.log(np.einsum("gii->gi", np.linalg.cholesky(covariance))).sum(axis=1)
    solved = np.linalg.solve(covariance, np.broadcast_to(np.column_stack([np.ones(size), d]), (len(covariance), size, 2)))
    column, toward_d = solved[..., 0], solved[..., 1]  # inverse @ 1, inverse @ d
    information = column.sum(axis=1)  # 1' inverse 1
    b0 = column @ d / information
    weighted = toward_d - b0[:, None] * column  # inverse @ (d - b0)
    loglik = -0.5 * (logdet + np.log(information) + np.einsum("gi,gi->g", d[None, :] - b0[:, None], weighted))
    return b0, information, weighted, loglik


def _normalised(loglik: np.ndarray) -> np.ndarray:
    weight = np.exp(loglik - loglik.max())
    return weight / weight.sum()


def _conditional(d: np.ndarray, v: np.ndarray, x: np.ndarray, tau2: np.ndarray) -> dict[str, np.ndarray]:
    """For each tau^2 of the grid: the restricted log-likelihood, and each system's posterior mean and
    variance given tau^2 (b flat, integrated out: the variance includes b's)."""
    w = 1.0 / (tau2[:, None] + v[None, :])  # (G, S)
    information = np.einsum("gs,si,sj->gij", w, x, x)
    inverse = np.linalg.pinv(information)  # singular when few systems carry weight: pinv, as the rule before
    beta = np.einsum("gij,gj->gi", inverse, np.einsum("gs,si,s->gi", w, x, d))
    synthetic = beta @ x.T
    residual = d[None, :] - synthetic
    loglik = -0.5 * (np.log(1.0 / w).sum(axis=1) + np.linalg.slogdet(information)[1] + (w * residual ** 2).sum(axis=1))
    gamma = tau2[:, None] * w
    leverage = np.einsum("si,gij,sj->gs", x, inverse, x)
    return {"loglik": loglik, "mean": synthetic + gamma * residual, "var": gamma * v + (1 - gamma) ** 2 * leverage,
            "gamma": gamma, "beta": beta}


def _mixture_interval(weight: np.ndarray, mean: np.ndarray, sd: np.ndarray, confidence: float) -> np.ndarray:
    """Equal-tailed interval of each system's posterior, a mixture of normals (one per grid point)."""
    keep = weight > 1e-9 * weight.max()  # grid points the posterior gives no weight change nothing
    weight, mean, sd = weight[keep] / weight[keep].sum(), mean[keep], sd[keep]
    tails = np.array([(1 - confidence) / 2, (1 + confidence) / 2])[:, None]
    low = np.repeat((mean - 10 * sd).min(axis=0)[None, :], 2, axis=0)
    high = np.repeat((mean + 10 * sd).max(axis=0)[None, :], 2, axis=0)
    for _ in range(36):  # bisection on the mixture's distribution function, both ends of every system at once
        middle = (low + high) / 2
        below = np.tensordot(weight, special.ndtr((middle[None] - mean[:, None]) / sd[:, None]), axes=1) < tails
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return ((low + high) / 2).T


def _moments_tau2(d: np.ndarray, v: np.ndarray, x: np.ndarray) -> float:
    """Prasad-Rao (1990): residual sum of squares of the OLS fit less its expected sampling part; >= 0."""
    size, p = x.shape
    hat = x @ np.linalg.pinv(x.T @ x) @ x.T
    ols = d - hat @ d
    return max(0.0, (float(ols @ ols) - float(np.sum(v * (1 - np.diag(hat))))) / (size - p))


def _plugged_in(d: np.ndarray, v: np.ndarray, x: np.ndarray, tau2: float, confidence: float,
                rule: str) -> FayHerriot:
    """The empirical-Bayes estimate at one tau^2, with the Prasad-Rao MSE and a normal interval."""
    size = len(d)
    w = 1 / (tau2 + v)
    information = np.linalg.pinv(x.T @ (w[:, None] * x))
    beta = information @ (x.T @ (w * d))
    synthetic = x @ beta
    gamma = tau2 / (tau2 + v)
    tau2_variance = 2 / size ** 2 * float(np.sum((tau2 + v) ** 2))
    g2 = (1 - gamma) ** 2 * np.einsum("ij,jk,ik->i", x, information, x)
    mse = gamma * v + g2 + 2 * v ** 2 / (tau2 + v) ** 3 * tau2_variance
    value = synthetic + gamma * (d - synthetic)
    half = stats.norm.ppf(0.5 + confidence / 2) * np.sqrt(mse)
    return FayHerriot(value, mse, np.column_stack([value - half, value + half]), gamma, beta, tau2, rule)


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
