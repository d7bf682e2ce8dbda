"""``shrunk``: each system's corrected estimate shrunk toward what the judge's system means predict
(Fay-Herriot, hierarchical Bayes), for leaderboards of items (:mod:`judgelab.evaluate.systems`) and of
comparisons (:mod:`judgelab.evaluate.preferences`); :func:`shrunk_values` the point values alone, for the
ranking checks of :mod:`judgelab.evaluate.choose`. The Fay-Herriot fits themselves (:func:`fay_herriot`: a
straight line or a smooth curve in the judge's means, the between-system variance tau^2 averaged over its
posterior, or plugged in) follow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import special, stats

from judgelab.errors import ConfigError
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.results import json_number

MIN_SYSTEMS_TO_SHRINK = 3
SHRINK_RULE = "smooth"  # shrunk's trend in the judge's means for items (see shrunk; comparisons keep the line)


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
