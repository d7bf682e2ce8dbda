"""Style-controlled Bradley-Terry and a tie model for leaderboards from pairwise comparisons (docs/evaluate.md,
"Style control and ties").

Style control, as Chatbot Arena's ("Does style matter?", LMSYS 2024) and Arena-Hard-Auto's
``show_result.py --style-control`` do it: each comparison gets covariates from the two responses' texts
(:mod:`judgelab.evaluate.style_features`: length and markdown counts, normalised differences, standardised). The
Bradley-Terry logistic regression then has the systems' indicators (+1 for the system shown first, -1 for the
second) and these covariates: ``P(a wins) = sigmoid(beta_a - beta_b + gamma . z)``. ``beta`` is the
style-controlled strength (centred: the strengths sum to 0), ``gamma`` the log-odds a one-standard-deviation
difference in a feature is worth.

The fits, their intervals and the bootstrap: :mod:`judgelab.evaluate.style_fits`.

Ties: :func:`davidson` fits Davidson's (1970) model by maximum likelihood, ``P(a) = e^{d/2} / D``,
``P(b) = e^{-d/2} / D``, ``P(tie) = nu / D`` with ``D = e^{d/2} + e^{-d/2} + nu`` and ``d = beta_a - beta_b
(+ gamma . z)``: strengths on the scale of the decisive comparisons and the tie parameter ``nu``, beside the
"ties count half" fit (which shrinks the strengths toward each other when ties are frequent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import optimize, stats

from judgelab.errors import ConfigError
from judgelab.evaluate.comparisons import MIN_LABELS, Comparisons
from judgelab.evaluate.preferences import estimate
from judgelab.evaluate.rank_sets import rank_sets
from judgelab.evaluate.style_features import (
    FEATURES,
    StyleCovariates,
    comparison_groups,
    comparison_texts,
    style_counts,
    style_covariates,
)
from judgelab.evaluate.style_fits import (
    STYLE_INTERVALS,
    StyleFit,
    _coefficients,
    _counts,
    _covariate_matrix,
    _Design,
    _finite,
    _Fitted,
    _group_codes,
    _meat,
    _n_clusters,
    _strengths,
    check_style_intervals,
    style_estimate,
)
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.results import json_number

TIES = ("half", "davidson")


# -- ties: Davidson's model ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class DavidsonFit:
    """Davidson strengths (centred, on the log-odds scale of the decisive comparisons), the tie parameter ``nu``
    with its interval, the share of ties the fit implies at equal strengths (``nu / (2 + nu)``), and the style
    coefficients when covariates were given."""

    strengths: SystemEstimates
    tie: dict[str, float]
    coefficients: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        est = self.strengths
        return {"strengths": {s: {"value": json_number(est.value[k]), "ci": [json_number(c) for c in est.ci[k]]}
                              for k, s in enumerate(est.systems)},
                "tie": {k: json_number(v) for k, v in self.tie.items()},
                "coefficients": {f: {k: json_number(v) for k, v in c.items()} for f, c in self.coefficients.items()}}


def outcome_weights(preference: np.ndarray) -> np.ndarray:
    """(n, 3) weights of (a wins, tie, b wins) for preferences for a: 1, 0.5, 0 are the three outcomes; a soft
    preference between two of them (0.75: a judge that said "a" in one order and "tie" in the other) splits
    between those two, so that its mean stays the preference."""
    p = np.asarray(preference, dtype=float)
    win = np.clip(2 * p - 1, 0, 1)
    loss = np.clip(1 - 2 * p, 0, 1)
    return np.column_stack([win, 1 - win - loss, loss])


def davidson(data: Comparisons, estimator: str = "judge", *, covariates: StyleCovariates | np.ndarray | None = None,
             confidence: float = 0.95, features: Sequence[str] | None = None,
             groups: np.ndarray | None = None) -> DavidsonFit:
    """Davidson's tie model fitted by maximum likelihood on the judge's verdicts (``judge``) or on the labelled
    comparisons' human ones (``human``, weighted as the sample's design weighs them). Sandwich covariance,
    cluster-robust by question with ``groups`` (as :func:`style_estimate`'s)."""
    if estimator not in ("judge", "human"):
        raise ConfigError(f"Davidson estimator {estimator!r}: choose judge, human")
    z, names = (np.zeros((data.n, 0)), ()) if covariates is None else _covariate_matrix(covariates, data.n, features)
    rows = np.flatnonzero(data.judged if estimator == "judge" else data.labelled)
    if len(rows) < MIN_LABELS:
        raise ConfigError(f"{len(rows)} comparison(s) with a {estimator} verdict: Davidson's fit needs more")
    verdict = (data.judge if estimator == "judge" else data.human)[rows]
    weight = np.full(len(rows), 1 / len(rows)) if estimator == "judge" else data.shares()[rows]
    design = _Design.of(data, rows, z)
    x = design.matrix(rows)
    outcome = outcome_weights(verdict) * weight[:, None]
    if outcome[:, 1].sum() <= 0:
        raise ConfigError(f"no {estimator} verdict is a tie: Davidson's tie parameter has nothing to fit (use ties "
                          "half)")
    fit = optimize.minimize(_davidson_loss, np.zeros(x.shape[1] + 1), args=(x, outcome), jac=True, method="BFGS",
                            options={"gtol": 1e-9})
    # BFGS reports a precision loss near an optimum it has reached: the gradient says whether it did
    converged = bool(np.max(np.abs(fit.jac)) < 1e-6)
    hessian = optimize.approx_fprime(fit.x, lambda t: _davidson_loss(t, x, outcome)[1], 1e-6)
    hessian = (hessian + hessian.T) / 2
    scores = _davidson_scores(fit.x, x, outcome)
    bread = np.linalg.pinv(hessian)
    codes = _group_codes(groups, data.n)
    cov = bread @ _meat(scores, None if codes is None else codes[rows]) @ bread
    counts = _counts(data, rows)
    reason = [None if c > 0 else f"no comparison with a {estimator} verdict" for c in counts]
    theta, cov_theta = fit.x[:-1], cov[:-1, :-1]
    fitted = _Fitted(fit.x, converged, fit.nit)  # nu too: a tie parameter running off is no finite optimum either
    strengths = _strengths(f"davidson-{estimator}", data, design, _Fitted(theta, _finite(fitted), fit.nit), cov_theta,
                           _counts(data, np.arange(data.n)), counts if estimator == "human" else np.zeros_like(counts),
                           reason, confidence, None, _n_clusters(None if codes is None else codes[rows]))
    log_nu, se = fit.x[-1], float(np.sqrt(max(cov[-1, -1], 0.0)))
    q = stats.norm.ppf(0.5 + confidence / 2)
    nu = float(np.exp(log_nu))
    tie = {"nu": nu, "low": float(np.exp(log_nu - q * se)), "high": float(np.exp(log_nu + q * se)),
           "tie_share_at_equal_strength": nu / (2 + nu), "observed_tie_share": float(outcome[:, 1].sum() / weight.sum())}
    if not _finite(fitted):
        tie = tie | {"nu": np.nan, "low": np.nan, "high": np.nan, "tie_share_at_equal_strength": np.nan}
    return DavidsonFit(strengths, tie, _coefficients(theta, cov_theta, names, np.inf, confidence, _finite(fitted)))



def _davidson_parts(params: np.ndarray, x: np.ndarray):
    d = x @ params[:-1]
    log_nu = params[-1]
    # log D with D = e^{d/2} + e^{-d/2} + nu, computed stably
    log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
    return d, log_nu, log_d


def _davidson_loss(params: np.ndarray, x: np.ndarray, outcome: np.ndarray) -> tuple[float, np.ndarray]:
    """Minus the weighted log-likelihood and its gradient."""
    d, log_nu, log_d = _davidson_parts(params, x)
    total = outcome.sum(axis=1)
    loglik = outcome[:, 0] * d / 2 + outcome[:, 1] * log_nu - outcome[:, 2] * d / 2 - total * log_d
    g_d, g_nu = _davidson_row_grad(d, log_nu, log_d, outcome)
    return -float(loglik.sum()), -np.concatenate([x.T @ g_d, [g_nu.sum()]])


def _davidson_row_grad(d, log_nu, log_d, outcome):
    total = outcome.sum(axis=1)
    tanh_part = (np.exp(d / 2 - log_d) - np.exp(-d / 2 - log_d)) / 2  # d log D / d d
    g_d = (outcome[:, 0] - outcome[:, 2]) / 2 - total * tanh_part
    g_nu = outcome[:, 1] - total * np.exp(log_nu - log_d)
    return g_d, g_nu


def _davidson_scores(params: np.ndarray, x: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Each comparison's score (gradient of its log-likelihood term): the sandwich's meat."""
    d, log_nu, log_d = _davidson_parts(params, x)
    g_d, g_nu = _davidson_row_grad(d, log_nu, log_d, outcome)
    return np.column_stack([x * g_d[:, None], g_nu])


# -- the board ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StyleBoard:
    """What ``evaluate --style-control`` / ``--ties davidson`` adds to a pairwise leaderboard: the covariates
    used, per estimator the style-controlled fit (with its rank sets) and the plain Bradley-Terry strengths with
    the Kendall tau between the two rankings, Davidson's fits, and the questions the intervals are clustered by
    (``{"questions": G, "from": "group_id"}``; None: comparisons taken as independent)."""

    covariates: StyleCovariates | None
    fits: dict[str, StyleFit]
    plain: dict[str, np.ndarray]
    tau: dict[str, float]
    davidson: dict[str, DavidsonFit]
    systems: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what was not fitted, and why
    clusters: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"covariates": None if self.covariates is None else self.covariates.to_dict(), "clusters": self.clusters,
                "style_controlled": {n: f.to_dict() for n, f in self.fits.items()},
                "plain_bradley_terry": {n: dict(zip(self.systems, map(json_number, v), strict=True))
                                        for n, v in self.plain.items()},
                "kendall_tau_plain_vs_style": {n: json_number(t) for n, t in self.tau.items()},
                "davidson": {n: f.to_dict() for n, f in self.davidson.items()}, "notes": list(self.notes)}


def style_board(data: Comparisons, texts: tuple[Sequence[str], Sequence[str]] | None = None, *,
                style_control: bool = True, ties: str = "half", target: str = "population",
                confidence: float = 0.95, features: Sequence[str] = FEATURES, groups: np.ndarray | None = None,
                groups_from: str = "group_id", intervals: str = "sandwich", n_resamples: int = 1000,
                rank_method: str = "auto", seed: int = 0) -> StyleBoard:
    """The style-controlled fits (``judge``, and ``human`` and ``corrected`` with two or more labels) on
    comparisons whose responses are ``texts`` (first, second), each with its simultaneous rank sets
    (``rank_method``, :func:`~judgelab.evaluate.rank_sets.rank_sets`), the plain Bradley-Terry strengths and
    the Kendall tau between the two rankings; with ``ties="davidson"`` Davidson's fits too (with the
    covariates when ``style_control``). ``groups``: each comparison's question (``groups_from`` says what it was
    read from), which the intervals are clustered by; ``intervals``, ``n_resamples``: as :func:`style_estimate`."""
    if ties not in TIES:
        raise ConfigError(f"ties {ties!r}: choose {', '.join(TIES)}")
    check_style_intervals(data, intervals, n_resamples, target)
    codes = _group_codes(groups, data.n)
    clusters = None if codes is None else {"questions": int(codes.max()) + 1, "from": groups_from}
    covariates = None
    if style_control:
        if texts is None:
            raise ConfigError("style control needs the two responses' texts of every comparison")
        covariates = style_covariates(texts[0], texts[1], features)
    names = ("judge", *(("human", "corrected") if int(data.labelled.sum()) >= MIN_LABELS else ()))
    fits: dict[str, StyleFit] = {}
    plain: dict[str, np.ndarray] = {}
    plain_fits: dict[str, SystemEstimates] = {}  # the corrected fit reads the human-only one
    tau: dict[str, float] = {}
    if covariates is not None:
        for name in names:
            own = fits["human"].strengths if name == "corrected" else None  # names: human before corrected
            fit = style_estimate(data, covariates, name, target=target, confidence=confidence, groups=codes,
                                 intervals=intervals, n_resamples=n_resamples, seed=seed, labels_own=own)
            fits[name] = replace(fit, ranks=rank_sets(fit.strengths, rank_method, seed=seed))
            plain_fits[name] = estimate(data, name, estimand="bradley-terry", target=target, confidence=confidence,
                                        system_intervals="t", labels_own=plain_fits.get("human"))
            plain[name] = plain_fits[name].value
            tau[name] = _tau(plain[name], fits[name].strengths.value)
    tie_fits, notes = {}, []
    if ties == "davidson":
        tie_fits["judge"] = davidson(data, "judge", covariates=covariates, confidence=confidence, groups=codes)
        if "human" in names and (data.human[data.labelled] == 0.5).any():
            tie_fits["human"] = davidson(data, "human", covariates=covariates, confidence=confidence, groups=codes)
        elif "human" in names:  # people asked for a or b only: a tie parameter of 0, nothing to estimate
            notes.append("Davidson (human): no human verdict is a tie, no tie parameter to fit")
    if intervals == "bootstrap" and tie_fits:
        notes.append("Davidson's intervals are sandwich ones (the bootstrap resamples the style fits only)")
    notes += [f"{name}: {fit.strengths.info['intervals_reason']}" for name, fit in fits.items()
              if fit.strengths.info.get("intervals_reason")]
    return StyleBoard(covariates, fits, plain, tau, tie_fits, data.systems, tuple(notes), clusters)


def style_for_items(items: Sequence[Any], judgments: Any, *, judge: Any = None, human: Any = None,
                    human_ids: Any = None, sample: Any = None, style_control: bool = True, ties: str = "half",
                    target: str = "population", confidence: float = 0.95, where: str | None = None,
                    cluster: bool = True, intervals: str = "sandwich", n_resamples: int = 1000,
                    rank_method: str = "auto", seed: int = 0) -> StyleBoard:
    """:func:`style_board` on comparison items (``system_a``, ``system_b``, ``output_a``, ``output_b``) and a
    judge's verdicts, read as ``judgelab evaluate`` reads them (:func:`~judgelab.evaluate.comparison_items.
    comparison_data`); ``where``: the data file, named in the error for a comparison without its texts.
    ``cluster``: when comparisons share a question (:func:`comparison_groups`), intervals clustered by it."""
    from judgelab.evaluate.comparison_items import comparison_data

    rows = list(items)
    if ties not in TIES:
        raise ConfigError(f"ties {ties!r}: choose {', '.join(TIES)}")
    if not rows or any(getattr(item, "system_a", None) is None for item in rows):
        raise ConfigError("style control and the Davidson tie model are for comparisons between systems (items with "
                          "system_a and system_b)")
    texts = comparison_texts(rows, where) if style_control else None
    data = comparison_data(rows, judgments, judge=judge, human=human, human_ids=human_ids, sample=sample)[0]
    grouped = comparison_groups(rows) if cluster else None
    return style_board(data, texts, style_control=style_control, ties=ties, target=target, confidence=confidence,
                       groups=None if grouped is None else grouped[0], groups_from="id" if grouped is None else grouped[1],
                       intervals=intervals, n_resamples=n_resamples, rank_method=rank_method, seed=seed)


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    return float(stats.kendalltau(a[ok], b[ok]).statistic) if ok.sum() >= 2 else float("nan")


__all__ = ["FEATURES", "STYLE_INTERVALS", "TIES", "DavidsonFit", "StyleBoard", "StyleCovariates", "StyleFit",
           "check_style_intervals", "comparison_groups", "comparison_texts", "davidson", "outcome_weights",
           "style_board", "style_counts", "style_for_items", "style_covariates", "style_estimate"]
