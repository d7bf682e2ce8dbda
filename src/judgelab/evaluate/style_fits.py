"""Style-controlled Bradley-Terry fits (docs/evaluate.md, "Style control and ties"): the logistic regression
``P(a wins) = sigmoid(beta_a - beta_b + gamma . z)`` on the systems' indicators and the style covariates of
:mod:`judgelab.evaluate.style_features`, its intervals (sandwich, cluster-robust by question, or bootstrap).
:mod:`judgelab.evaluate.style` adds Davidson's tie model and the leaderboard's board.

Three estimators, as :mod:`judgelab.evaluate.preferences` makes them for plain Bradley-Terry: ``judge`` (the
judge's verdicts on every comparison), ``human`` (the labelled comparisons only) and ``corrected``
(prediction-powered): the logistic score equation of the judge's verdicts on every comparison times lambda,
plus the labelled comparisons' score on the human verdicts minus lambda times theirs on the judge's; lambda
minimises the trace of the strengths' sandwich covariance (power tuning, clipped to [0, 1]). The loss
``sum w [log(1 + e^eta) - y eta]`` stays convex for any real pseudo-outcome ``y``, so one convex fit
(:func:`scipy.optimize.minimize`) serves all three. Intervals: sandwich, Student's t with a system's labelled
comparisons minus one degrees of freedom, guarded as :mod:`judgelab.evaluate.intervals`'s t branch, from
:data:`~judgelab.evaluate.intervals.T_MIN_LABELS` labelled comparisons of the system on. Comparisons that share a
question (``groups``) are not independent: the sandwich's meat then sums each question's score contributions
before their outer product (cluster-robust, CR1), and lambda is tuned on that covariance. Or ``intervals=
"bootstrap"``: percentile intervals from resampled questions (comparisons without groups), each refitted. Rank
sets on top, from the strengths and their covariance (:mod:`judgelab.evaluate.rank_sets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import optimize, stats
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from judgelab.errors import ConfigError
from judgelab.evaluate.comparisons import MIN_LABELS, NO_VERDICT, Comparisons
from judgelab.evaluate.intervals import T_MIN_LABELS, guarded_t
from judgelab.evaluate.preferences import MIN_BOOTSTRAP_LABELS, stacked_preference
from judgelab.evaluate.rank_sets import RankSets
from judgelab.evaluate.style_features import StyleCovariates
from judgelab.evaluate.system_estimates import SystemEstimates, never_wider
from judgelab.metrics.results import json_number

STYLE_ESTIMATORS = ("judge", "human", "corrected")
STYLE_INTERVALS = ("sandwich", "bootstrap")
# a strength this far from the others is a system that wins or loses (nearly) everything: no finite MLE
MAX_STRENGTH = 25.0


@dataclass(frozen=True)
class _Design:
    """The regression's columns: the systems that take part (the first one's strength fixed at 0 while fitting,
    the strengths centred afterwards) and the covariates."""

    k: int
    present: np.ndarray  # indices of the systems with comparisons in the fit
    a: np.ndarray
    b: np.ndarray
    z: np.ndarray  # (n, p) covariates, possibly (n, 0)

    @classmethod
    def of(cls, data: Comparisons, rows: np.ndarray, z: np.ndarray) -> _Design:
        present = np.flatnonzero(np.bincount(np.concatenate([data.a[rows], data.b[rows]]), minlength=len(data.systems)))
        return cls(len(data.systems), present, data.a, data.b, z)

    @property
    def n_params(self) -> int:
        return len(self.present) - 1 + self.z.shape[1]

    def matrix(self, rows: np.ndarray) -> np.ndarray:
        """The design rows of comparisons ``rows`` (indices): +1 in a's column, -1 in b's, then the covariates."""
        column = np.full(self.k, -1)
        column[self.present[1:]] = np.arange(len(self.present) - 1)
        x = np.zeros((len(rows), len(self.present) - 1))
        ca, cb = column[self.a[rows]], column[self.b[rows]]
        there = np.arange(len(rows))
        x[there[ca >= 0], ca[ca >= 0]] = 1.0
        x[there[cb >= 0], cb[cb >= 0]] = -1.0
        return np.column_stack([x, self.z[rows]])

    def centring(self) -> np.ndarray:
        """(k, n_params) map from the fitted parameters to all systems' centred strengths (zero rows: absent)."""
        m = len(self.present)
        full = np.zeros((m, m - 1))
        full[1:] = np.eye(m - 1)
        centred = full - full.mean(axis=0)
        out = np.zeros((self.k, self.n_params))
        out[self.present, : m - 1] = centred
        return out


def _fit_logistic(x: np.ndarray, weight: np.ndarray, mass: np.ndarray, start: np.ndarray | None = None):
    """Minimise ``sum w [log(1 + e^eta) - (mass / w) eta]``, ``eta = x theta``: the logistic score equation
    ``x^T (w p - mass) = 0``. Convex for any real mass (the corrected fit's pseudo-outcomes leave [0, 1])."""

    def loss(theta):
        eta = x @ theta
        return float(weight @ np.logaddexp(0.0, eta) - mass @ eta)

    def grad(theta):
        return x.T @ (weight * expit(x @ theta) - mass)

    def hess(theta):
        p = expit(x @ theta)
        return (x * (weight * p * (1 - p))[:, None]).T @ x

    theta0 = np.zeros(x.shape[1]) if start is None else start
    fit = optimize.minimize(loss, theta0, jac=grad, hess=hess, method="trust-exact", options={"gtol": 1e-10})
    # trust-exact may stop on a step it cannot improve at the optimum's rounding: the gradient says whether it is one
    return _Fitted(fit.x, bool(np.max(np.abs(grad(fit.x)), initial=0.0) < 1e-7), int(fit.nit))


@dataclass(frozen=True)
class StyleFit:
    """One estimator's style-controlled strengths (a :class:`SystemEstimates`) and style coefficients: per
    feature its value, standard error and interval (the log-odds of a one-standard-deviation difference)."""

    strengths: SystemEstimates
    coefficients: dict[str, dict[str, float]]
    judge_weight: float | None = None
    #: simultaneous rank sets from the strengths and their covariance (:func:`style_board` adds them)
    ranks: RankSets | None = None

    def to_dict(self) -> dict[str, Any]:
        est, sets = self.strengths, self.ranks
        out = {"strengths": {s: {"value": json_number(est.value[k]), "ci": [json_number(c) for c in est.ci[k]],
                                 "n_labelled": int(est.n_labelled[k]), "reason": est.reason[k]}
                             | ({} if sets is None else {"rank": json_number(sets.rank[k]),
                                                         "rank_set": [json_number(sets.best[k]),
                                                                      json_number(sets.worst[k])]})
                             for k, s in enumerate(est.systems)},
               "coefficients": {f: {k: json_number(v) for k, v in c.items()} for f, c in self.coefficients.items()},
               "judge_weight": None if self.judge_weight is None else json_number(self.judge_weight),
               "intervals": est.info.get("intervals", "sandwich"), "clusters": est.info.get("clusters")}
        if est.info.get("intervals_reason"):
            out["intervals_reason"] = est.info["intervals_reason"]
        if est.info.get("intervals") == "bootstrap":
            out |= {"n_resamples": est.info["n_resamples"], "resamples_not_converged": est.info["not_converged"]}
        if sets is not None:
            out["rank_sets"] = {"method": sets.method, "critical": None if sets.critical is None
                                else json_number(sets.critical)}
        return out


def style_estimate(data: Comparisons, covariates: StyleCovariates | np.ndarray, estimator: str = "judge", *,
                   target: str = "population", confidence: float = 0.95, judge_weight: float | None = None,
                   features: Sequence[str] | None = None, groups: np.ndarray | None = None,
                   intervals: str = "sandwich", n_resamples: int = 1000, seed: int = 0,
                   labels_own: SystemEstimates | None = None) -> StyleFit:
    """One estimator (``judge``, ``human``, ``corrected``) of the style-controlled Bradley-Terry strengths and
    style coefficients. ``covariates``: :func:`style_covariates`' result, or an ``(n, p)`` array (``features``
    names its columns). ``judge_weight``: a fixed lambda for ``corrected`` instead of the tuned one. ``groups``:
    each comparison's question (any labels; :func:`comparison_groups`): cluster-robust intervals, since
    comparisons of one question are not independent. ``intervals``: ``sandwich`` or ``bootstrap``
    (``n_resamples`` resamples of the questions, or of the comparisons without ``groups``, drawn with ``seed``).
    With several judges (``data.judges``) the corrected fit corrects their cross-fitted combination
    (:func:`~judgelab.evaluate.preferences.stacked_preference`, as the plain corrected estimate does) and the
    judge-only fit reads the first judge's verdicts. The corrected strengths take the human-only ones for a system whose corrected interval came out wider
    (:func:`~judgelab.evaluate.system_estimates.never_wider`; the style coefficients stay the corrected fit's):
    ``labels_own`` is the human-only strengths with the same settings when the caller has them."""
    z, names = _covariate_matrix(covariates, data.n, features)
    if estimator not in STYLE_ESTIMATORS:
        raise ConfigError(f"estimator {estimator!r}: choose {', '.join(STYLE_ESTIMATORS)}")
    if target not in ("population", "items"):
        raise ConfigError(f"target {target!r}: choose population, items")
    check_style_intervals(data, intervals, n_resamples, target)
    codes = _group_codes(groups, data.n)
    if estimator == "judge":
        fit = _judge_fit(data, z, names, confidence, codes)
    else:
        if int(data.labelled.sum()) < MIN_LABELS:
            raise ConfigError(f"{int(data.labelled.sum())} labelled comparison(s): the {estimator} estimate needs "
                              f"{MIN_LABELS} or more")
        lam = 0.0 if estimator == "human" else judge_weight
        if estimator == "corrected" and data.judges is not None:  # several judges: their cross-fitted combination
            data = replace(data, judge=stacked_preference(data, seed))
        fit = _labelled_fit(data, z, names, lam, target, confidence, estimator, codes)
    fit = fit if intervals == "sandwich" else _bootstrap(data, z, fit, codes, n_resamples, seed)
    if estimator != "corrected":
        return fit
    if labels_own is None:
        labels_own = style_estimate(data, z, "human", target=target, confidence=confidence, features=names,
                                    groups=groups, intervals=intervals, n_resamples=n_resamples, seed=seed).strengths
    return replace(fit, strengths=never_wider(fit.strengths, labels_own))


def check_style_intervals(data: Comparisons, intervals: str, n_resamples: int, target: str = "population") -> None:
    """The style fits' interval choice, checked before anything is fitted (as the plain Bradley-Terry's)."""
    if intervals not in STYLE_INTERVALS:
        raise ConfigError(f"style intervals {intervals!r}: choose {', '.join(STYLE_INTERVALS)}")
    if intervals == "sandwich":
        return
    if n_resamples < 2:
        raise ConfigError(f"--style-intervals bootstrap with {n_resamples} bootstrap resample(s) (--bootstrap): give "
                          "2 or more (1000 for 95% intervals)")
    if int(data.labelled.sum()) >= MIN_LABELS and (target != "population" or data.probability is not None):
        raise ConfigError("bootstrap style intervals resample the questions and their labels as draws from a "
                          "population: they need --target population and a uniform sample of labels (use "
                          "--style-intervals sandwich)")


def _group_codes(groups: np.ndarray | None, n: int) -> np.ndarray | None:
    """Questions as codes 0..G-1; None without groups, or when every comparison is its own question."""
    if groups is None:
        return None
    labels = np.asarray(groups)
    if labels.shape != (n,):
        raise ConfigError(f"{labels.size} group labels for {n} comparisons")
    codes = np.unique(labels, return_inverse=True)[1].ravel()
    return None if codes.max(initial=-1) + 1 == n else codes


def _covariate_matrix(covariates, n: int, features) -> tuple[np.ndarray, tuple[str, ...]]:
    if isinstance(covariates, StyleCovariates):
        z, names = covariates.values, covariates.features
    else:
        z = np.asarray(covariates, dtype=float)
        z = z[:, None] if z.ndim == 1 else z
        names = tuple(features) if features is not None else tuple(f"x{j}" for j in range(z.shape[1]))
    if z.ndim != 2 or z.shape[0] != n or len(names) != z.shape[1]:
        raise ConfigError(f"covariates of shape {z.shape} (features {list(names)}) for {n} comparisons")
    bad = np.argwhere(~np.isfinite(z))
    if len(bad):
        raise ConfigError(f"covariate {names[bad[0][1]]!r} of comparison {bad[0][0]} is not a finite number")
    return z, names


def _judge_fit(data: Comparisons, z: np.ndarray, names: tuple[str, ...], confidence: float,
               groups: np.ndarray | None = None) -> StyleFit:
    rows = np.flatnonzero(data.judged)
    m = len(rows)
    if m == 0:
        raise ConfigError("no comparison has a judge verdict")
    design = _Design.of(data, rows, z)
    x = design.matrix(rows)
    judge = data.judge[rows]
    fit = _fit_logistic(x, np.full(m, 1 / m), judge / m)
    p = expit(x @ fit.x)
    bread = np.linalg.pinv(_gram(x, p * (1 - p) / m))
    cluster = None if groups is None else groups[rows]
    cov = bread @ _meat(x * ((p - judge) / m)[:, None], cluster) @ bread
    counts = _counts(data, rows)
    reason = [None if c > 0 else "no comparison with a verdict" for c in counts]
    clusters = _n_clusters(cluster)
    strengths = _strengths("judge", data, design, fit, cov, counts, np.zeros(len(counts), dtype=int), reason,
                           confidence, None, clusters)
    df = np.inf if clusters is None else clusters - 1
    return StyleFit(strengths, _coefficients(fit.x, cov, names, df, confidence, _finite(fit)))


def _meat(scores: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
    """The sandwich's meat from each comparison's score contribution (rows of ``scores``): ``n / (n - 1) sum s
    s^T``; with ``groups`` each question's contributions are summed first (cluster-robust, CR1: ``G / (G - 1)``),
    since comparisons of one question share its difficulty and move together."""
    if groups is None:
        n = len(scores)
        return n / max(n - 1, 1) * scores.T @ scores
    sums = _cluster_sums(scores, groups)
    g = len(sums)
    return g / max(g - 1, 1) * sums.T @ sums


def _cluster_sums(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(G, p): each question's rows of ``scores`` summed (the questions present in ``groups`` only)."""
    codes = np.unique(groups, return_inverse=True)[1].ravel()
    indicator = coo_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))),
                           shape=(int(codes.max(initial=-1)) + 1, len(codes))).tocsr()
    return np.asarray(indicator @ scores)


def _n_clusters(groups: np.ndarray | None) -> int | None:
    return None if groups is None else len(np.unique(groups))


def _labelled_fit(data: Comparisons, z: np.ndarray, names: tuple[str, ...], lam: float | None, target: str,
                  confidence: float, name: str, groups: np.ndarray | None = None) -> StyleFit:
    """The analogue of preferences' corrected Bradley-Terry with covariates: loss weights and masses lambda x
    (judge, every comparison) + (human - lambda judge) on the labelled ones; lambda 0 is human-only. ``groups``
    cluster the population target's covariance; the items target draws only the labels, one comparison at a
    time, so its comparisons' questions do not tie their errors together."""
    groups = groups if target == "population" else None
    lab, every = np.flatnonzero(data.labelled), np.arange(data.n)
    n, total = len(lab), data.n
    share = data.shares()[lab]  # 1/n each for a uniform sample, else 1 / inclusion probability, normalised
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    human, judge_l = data.human[lab], judge[lab]
    labelled_counts = _counts(data, lab)
    if lam is None:
        lam = _tuned_lambda(data, z, lab, share, human, judge_l, groups)
    rows_for_design = lab if lam == 0 else every
    parts = _parts(data, lab) if lam == 0 else 1
    if parts > 1:
        raise ConfigError(f"the labelled comparisons split the systems into {parts} unconnected groups: the "
                          f"{name} style-controlled fit cannot rank them together")
    design = _Design.of(data, rows_for_design, z)
    x_all, x_lab = design.matrix(every), design.matrix(lab)
    x = np.vstack([x_all, x_lab])
    weight = np.concatenate([np.full(total, lam / total), (1 - lam) * share])
    mass = np.concatenate([lam * judge / total, (human - lam * judge_l) * share])
    fit = _fit_logistic(x, weight, mass)
    p = expit(x @ fit.x)
    bread = np.linalg.pinv(_gram(x, weight * p * (1 - p)))
    p_lab = p[total:]
    fraction, scale = n / total, n / max(n - 1, 1)
    e_r = ((p_lab - human) - lam * (p_lab - judge_l)) * share
    meat = (1 - fraction) * _gram(x_lab, e_r * e_r)
    if target == "population":  # the comparisons themselves are a draw too: the human-only term, as preferences
        e_h = (p_lab - human) * share
        meat = meat + fraction * _gram(x_lab, e_h * e_h)
    cov = bread @ (scale * meat) @ bread
    if groups is not None:  # each comparison's whole contribution (judge term and label term), summed by question
        psi = x_all * (lam / total * (p[:total] - judge))[:, None]
        psi[lab] += x_lab * e_r[:, None]
        cov = bread @ _meat(psi, groups) @ bread
    reason = [None if c >= MIN_LABELS else f"{c} labelled comparison(s): an interval needs {MIN_LABELS}"
              for c in labelled_counts]
    clusters = _n_clusters(groups)
    strengths = _strengths(name, data, design, fit, cov, _counts(data, every), labelled_counts, reason, confidence,
                           labelled_counts, clusters)
    strengths.info.update(judge_weight=float(lam), target=target)
    df = max(n - 1, 1) if clusters is None else max(min(n, clusters) - 1, 1)
    return StyleFit(strengths, _coefficients(fit.x, cov, names, df, confidence, _finite(fit)), float(lam))


def _tuned_lambda(data: Comparisons, z: np.ndarray, lab: np.ndarray, share: np.ndarray, human: np.ndarray,
                  judge_l: np.ndarray, groups: np.ndarray | None = None) -> float:
    """Power tuning at the judge-only fit: the lambda minimising the trace of the centred strengths' covariance
    (the leaderboard's numbers; the coefficients are on another scale), clipped to [0, 1]; with ``groups`` the
    cluster-robust covariance's."""
    every = np.arange(data.n)
    judged = np.flatnonzero(data.judged)
    design = _Design.of(data, every, z)
    x_all, x_lab, x_j = design.matrix(every), design.matrix(lab), design.matrix(judged)
    start = _fit_logistic(x_j, np.full(len(judged), 1 / len(judged)), data.judge[judged] / len(judged)).x
    p_all, p_lab = expit(x_all @ start), expit(x_lab @ start)
    bread = np.linalg.pinv(_gram(x_all, p_all * (1 - p_all) / data.n))
    e_h, e_j = (p_lab - human) * share, (p_lab - judge_l) * share
    centre = design.centring()
    if groups is not None:  # each question's contribution is A_g + lambda B_g: minimise sum |M (A_g + lambda B_g)|^2
        judge = np.where(data.judged, data.judge, NO_VERDICT)
        first, second = np.zeros((data.n, x_all.shape[1])), x_all * ((p_all - judge) / data.n)[:, None]
        first[lab], second[lab] = x_lab * e_h[:, None], second[lab] - x_lab * e_j[:, None]
        m = centre @ bread
        a, b = _cluster_sums(first, groups) @ m.T, _cluster_sums(second, groups) @ m.T
        denominator = float(np.sum(b * b))
        return float(np.clip(-np.sum(a * b) / denominator, 0, 1)) if denominator > 0 else 0.0
    g_j = centre @ bread @ _gram(x_lab, e_j * e_j) @ bread @ centre.T
    cross = centre @ bread @ _gram(x_lab, e_h * e_j) @ bread @ centre.T
    denominator = float(np.trace(g_j))
    return float(np.clip(np.trace(cross) / denominator, 0, 1)) if denominator > 0 else 0.0


def _parts(data: Comparisons, rows: np.ndarray) -> int:
    """How many unconnected groups the comparisons ``rows`` make of the systems they involve."""
    k = len(data.systems)
    graph = coo_matrix((np.ones(len(rows)), (data.a[rows], data.b[rows])), shape=(k, k))
    label = connected_components(graph, directed=False)[1]
    return len(np.unique(label[np.concatenate([data.a[rows], data.b[rows]])]))


def _gram(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_c w_c x_c x_c^T``."""
    return (x * w[:, None]).T @ x


def _counts(data: Comparisons, rows: np.ndarray) -> np.ndarray:
    k = len(data.systems)
    return np.bincount(data.a[rows], minlength=k) + np.bincount(data.b[rows], minlength=k)


def _strengths(name: str, data: Comparisons, design: _Design, fit, cov_theta: np.ndarray, n_units, n_labelled,
               reason: list[str | None], confidence: float, labelled_counts: np.ndarray | None,
               clusters: int | None = None) -> SystemEstimates:
    """Centred strengths with per-system intervals: normal for the judge's fit; for a label-based one the guarded
    t interval with the system's labelled comparisons minus one degrees of freedom, from T_MIN_LABELS on. With
    ``clusters`` questions the degrees of freedom are at most their number minus one (the judge's fit: t too)."""
    centre = design.centring()
    value, cov = centre @ fit.x, centre @ cov_theta @ centre.T
    if not _finite(fit):
        reason = [r or "no finite strength: a system wins or loses all its comparisons, or a covariate "
                  "decides them" for r in reason]
    value = np.where([r is None for r in reason], value, np.nan)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    ci = np.full((len(value), 2), np.nan)
    labels = np.asarray(n_labelled, dtype=int)
    cap = np.inf if clusters is None else max(clusters - 1, 1)
    for s in np.flatnonzero(np.isfinite(value) & (se > 0)):
        if labelled_counts is None:
            half = (stats.norm.ppf(0.5 + confidence / 2) if clusters is None
                    else stats.t.ppf(0.5 + confidence / 2, cap)) * se[s]
            ci[s] = value[s] - half, value[s] + half
        elif labels[s] >= T_MIN_LABELS:
            ci[s] = guarded_t(value[s], se[s], min(labels[s] - 1, cap), confidence)
        else:
            reason[s] = (f"{labels[s]} labelled comparison(s): a Bradley-Terry interval needs {T_MIN_LABELS} of the "
                         f"system's (label {T_MIN_LABELS - labels[s]} more)")
    own = np.minimum(np.where(labels > 0, np.maximum(labels - 1, 1), np.inf), cap)
    df = np.minimum(own[:, None], own[None, :])
    # the strengths are centred over the systems in the fit: a human-only fit whose labelled comparisons leave a
    # system out is centred over the others, and its values are not the corrected fit's (never_wider reads it)
    info: dict[str, Any] = {"iterations": int(fit.nit), "clusters": clusters,
                            "centred_over": tuple(data.systems[k] for k in design.present)}
    if labelled_counts is not None:  # rank sets and pairwise tests read each system's t interval, as plain BT's
        info["per_system"] = tuple("t" if np.isfinite(c).all() else None for c in ci)
    return SystemEstimates(name, data.systems, value, ci, np.asarray(n_units, dtype=int), labels, tuple(reason),
                           confidence, cov=cov, df=df, info=info)


def _finite(fit) -> bool:
    """Whether the fit reached a finite optimum: converged, and no parameter running off (a system that wins
    everything, or a covariate that tells the outcome, has no finite maximum likelihood)."""
    return bool(fit.success and np.max(np.abs(fit.x), initial=0.0) < 2 * MAX_STRENGTH)


def _coefficients(theta: np.ndarray, cov: np.ndarray, names: tuple[str, ...], df: float,
                  confidence: float, finite: bool = True) -> dict[str, dict[str, float]]:
    """Each style coefficient with its standard error and interval; NaN where the fit found no finite optimum."""
    p = len(names)
    if p == 0:
        return {}
    value, se = theta[-p:], np.sqrt(np.clip(np.diag(cov)[-p:], 0, None))
    if not finite:
        value, se = np.full(p, np.nan), np.full(p, np.nan)
    q = stats.t.ppf(0.5 + confidence / 2, df) if np.isfinite(df) else stats.norm.ppf(0.5 + confidence / 2)
    return {f: {"value": float(v), "se": float(s), "low": float(v - q * s), "high": float(v + q * s)}
            for f, v, s in zip(names, value, se, strict=True)}


# -- bootstrap intervals ------------------------------------------------------------------------------------
def _bootstrap(data: Comparisons, z: np.ndarray, fit: StyleFit, groups: np.ndarray | None, n_resamples: int,
               seed: int) -> StyleFit:
    """``fit`` with percentile intervals from ``n_resamples`` resamples of the questions (``groups``; else of the
    comparisons), each refitted, as :func:`~judgelab.evaluate.bradley_terry.bootstrap_bt` does for plain
    Bradley-Terry: a labelled comparison stays labelled, the corrected fit keeps the full data's lambda (any fixed
    lambda is consistent), and the covariance of the resampled strengths replaces the sandwich one (rank sets
    read it). A label-based fit with a system under MIN_BOOTSTRAP_LABELS labelled comparisons keeps its sandwich
    intervals (the percentile bootstrap of few labels covers far less than it says)."""
    est = fit.strengths
    counted = est.n_labelled[np.isfinite(est.value)]
    fewest = int(counted.min()) if counted.size else 0
    if fit.judge_weight is not None and fewest < MIN_BOOTSTRAP_LABELS:
        reason = (f"a system has {fewest} labelled comparison(s): percentile bootstrap intervals of the label-based "
                  f"estimates need {MIN_BOOTSTRAP_LABELS} per system; sandwich t intervals kept")
        est.info.update(intervals="sandwich", intervals_reason=reason)
        return fit
    x, blocks, design = _resampling_problem(data, z, fit.judge_weight)
    codes = np.arange(data.n) if groups is None else groups
    n_groups = int(codes.max()) + 1
    rng = np.random.default_rng(seed)
    centre, p = design.centring(), z.shape[1]
    theta = _refit(x, blocks, np.ones(data.n), None).x
    boot = np.empty((n_resamples, len(est.value) + p))
    failed = 0
    for r in range(n_resamples):
        drawn = np.bincount(rng.integers(0, n_groups, n_groups), minlength=n_groups)[codes].astype(float)
        one = _refit(x, blocks, drawn, theta)
        failed += not one.success
        boot[r] = np.concatenate([centre @ one.x, one.x[len(one.x) - p:]])
    alpha = 1 - est.confidence
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
    ci = np.column_stack([low, high])[: len(est.value)]
    ci[~np.isfinite(est.ci).all(axis=1)] = np.nan  # a system without a sandwich interval (too few labels): none
    cov = np.cov(boot[:, : len(est.value)], rowvar=False)
    info = dict(est.info, intervals="bootstrap", n_resamples=n_resamples, not_converged=failed)
    strengths = replace(est, ci=ci, cov=cov, info=info)
    spread = boot.std(axis=0, ddof=1)
    coefficients = {f: c | {"se": float(spread[len(est.value) + j]), "low": float(low[len(est.value) + j]),
                            "high": float(high[len(est.value) + j])} if np.isfinite(c["value"]) else c
                    for j, (f, c) in enumerate(fit.coefficients.items())}
    return StyleFit(strengths, coefficients, fit.judge_weight)


def _resampling_problem(data: Comparisons, z: np.ndarray, lam: float | None):
    """(the stacked design rows, blocks (row origins, weight coefficient, mass per row), the design) of the fit a
    resample refits: each block's rows weigh ``coefficient x multiplicity / the block's total multiplicity``."""
    every, lab = np.arange(data.n), np.flatnonzero(data.labelled)
    if lam is None:
        rows = np.flatnonzero(data.judged)
        design = _Design.of(data, rows, z)
        return design.matrix(rows), [(rows, 1.0, data.judge[rows])], design
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    design = _Design.of(data, lab if lam == 0 else every, z)
    x = np.vstack([design.matrix(every), design.matrix(lab)])
    return x, [(every, lam, lam * judge), (lab, 1 - lam, data.human[lab] - lam * judge[lab])], design


def _refit(x: np.ndarray, blocks, multiplicity: np.ndarray, start: np.ndarray | None):
    weight, mass = [], []
    for rows, coefficient, values in blocks:
        share = multiplicity[rows] / max(float(multiplicity[rows].sum()), 1e-300)
        weight.append(coefficient * share)
        mass.append(values * share)
    w, m = np.concatenate(weight), np.concatenate(mass)
    drawn = (w != 0) | (m != 0)  # a question not drawn adds nothing: about a third of the rows, left out
    return _fit_logistic(x[drawn], w[drawn], m[drawn], start)


@dataclass(frozen=True)
class _Fitted:
    x: np.ndarray
    success: bool
    nit: int
