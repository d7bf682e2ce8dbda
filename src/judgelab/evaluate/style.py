"""Style-controlled Bradley-Terry and a tie model for leaderboards from pairwise comparisons (docs/evaluate.md,
"Style control and ties").

Style control, as Chatbot Arena's ("Does style matter?", LMSYS 2024) and Arena-Hard-Auto's
``show_result.py --style-control`` do it: each comparison gets covariates from the two responses' texts, the
normalised differences ``(a - b) / (a + b + 1)`` of four counts (the response's length in tokens; markdown
headers, list items and bold spans, counted with code blocks removed), each standardised over the comparisons
(mean 0, standard deviation 1). The Bradley-Terry logistic regression then has the systems' indicators (+1 for
the system shown first, -1 for the second) and these covariates: ``P(a wins) = sigmoid(beta_a - beta_b +
gamma . z)``. ``beta`` is the style-controlled strength (centred: the strengths sum to 0), ``gamma`` the log-odds
a one-standard-deviation difference in a feature is worth. Arena-Hard-Auto counts tokens with tiktoken's gpt-4o
encoding; here a token is a word or a punctuation mark (no tokenizer download), which moves the normalised
length difference little, since it is a ratio.

Three estimators, as :mod:`judgelab.evaluate.preferences` makes them for plain Bradley-Terry: ``judge`` (the
judge's verdicts on every comparison), ``human`` (the labelled comparisons only) and ``corrected``
(prediction-powered): the logistic score equation of the judge's verdicts on every comparison times lambda,
plus the labelled comparisons' score on the human verdicts minus lambda times theirs on the judge's; lambda
minimises the trace of the strengths' sandwich covariance (power tuning, clipped to [0, 1]). The loss
``sum w [log(1 + e^eta) - y eta]`` stays convex for any real pseudo-outcome ``y``, so one convex fit
(:func:`scipy.optimize.minimize`) serves all three. Intervals: sandwich, Student's t with a system's labelled
comparisons minus one degrees of freedom, guarded as :mod:`judgelab.evaluate.intervals`'s t branch, from
:data:`~judgelab.evaluate.intervals.T_MIN_LABELS` labelled comparisons of the system on.

Ties: :func:`davidson` fits Davidson's (1970) model by maximum likelihood, ``P(a) = e^{d/2} / D``,
``P(b) = e^{-d/2} / D``, ``P(tie) = nu / D`` with ``D = e^{d/2} + e^{-d/2} + nu`` and ``d = beta_a - beta_b
(+ gamma . z)``: strengths on the scale of the decisive comparisons and the tie parameter ``nu``, beside the
"ties count half" fit (which shrinks the strengths toward each other when ties are frequent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from judgelab.errors import ConfigError, DataError
from judgelab.evaluate.comparisons import MIN_LABELS, NO_VERDICT, Comparisons
from judgelab.evaluate.estimators import SystemEstimates
from judgelab.evaluate.intervals import T_MIN_LABELS, guarded_t
from judgelab.evaluate.preferences import estimate
from judgelab.metrics.results import json_number

FEATURES = ("length", "headers", "lists", "bold")
TIES = ("half", "davidson")
STYLE_ESTIMATORS = ("judge", "human", "corrected")
# a strength this far from the others is a system that wins or loses (nearly) everything: no finite MLE
MAX_STRENGTH = 25.0

_CODE = re.compile(r"```[^`]*```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_TOKEN = re.compile(r"\w+|[^\w\s]")


# -- covariates -------------------------------------------------------------------------------------------
def style_counts(text: str) -> np.ndarray:
    """(tokens, markdown headers, list items, bold spans) of one response. The markdown counts skip fenced code
    blocks (a ``#`` comment in code is no header), as Arena-Hard-Auto's add_markdown_info does."""
    prose = _CODE.sub("", text)
    return np.array([len(_TOKEN.findall(text)), len(_HEADER.findall(prose)), len(_LIST.findall(prose)),
                     len(_BOLD.findall(prose))], dtype=float)


@dataclass(frozen=True)
class StyleCovariates:
    """Standardised covariates per comparison (``values``, one column per kept feature), the mean and standard
    deviation each raw normalised difference was standardised with, and the features left out because they do
    not vary over the comparisons (e.g. no response has a header) or only repeat the features before them."""

    values: np.ndarray
    features: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    dropped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "dropped": list(self.dropped),
                "mean": dict(zip(self.features, map(json_number, self.mean), strict=True)),
                "std": dict(zip(self.features, map(json_number, self.std), strict=True))}


def style_covariates(texts_a: Sequence[str], texts_b: Sequence[str],
                     features: Sequence[str] = FEATURES) -> StyleCovariates:
    """The covariates of comparisons whose responses are ``texts_a`` (shown first) and ``texts_b``: for each
    feature ``(a - b) / (a + b + 1)`` (the +1 keeps two responses without markdown at 0), standardised."""
    unknown = [f for f in features if f not in FEATURES]
    if unknown or not features:
        raise ConfigError(f"style features {list(features)!r}: choose among {', '.join(FEATURES)}")
    if len(texts_a) != len(texts_b):
        raise ConfigError(f"{len(texts_a)} first responses for {len(texts_b)} second ones")
    columns = [FEATURES.index(f) for f in features]
    a = np.array([style_counts(t) for t in texts_a]).reshape(-1, len(FEATURES))[:, columns]
    b = np.array([style_counts(t) for t in texts_b]).reshape(-1, len(FEATURES))[:, columns]
    diff = (a - b) / (a + b + 1)
    mean, std = diff.mean(axis=0), diff.std(axis=0)
    varies = std > 1e-12
    for j in np.flatnonzero(varies):  # a feature that repeats others (every list item in bold) has no own effect
        earlier = np.flatnonzero(varies[:j])
        if len(earlier) and np.linalg.matrix_rank(diff[:, [*earlier, j]] - mean[[*earlier, j]]) <= len(earlier):
            varies[j] = False
    kept = tuple(f for f, v in zip(features, varies, strict=True) if v)
    dropped = tuple(f for f, v in zip(features, varies, strict=True) if not v)
    values = (diff[:, varies] - mean[varies]) / std[varies]
    return StyleCovariates(values, kept, mean[varies], std[varies], dropped)


def comparison_texts(items: Sequence[Any], where: str | None = None) -> tuple[list[str], list[str]]:
    """The two responses of each comparison item (``output_a``, ``output_b``); a clear error naming the file and
    the field when some comparisons lack them (style control reads the texts)."""
    missing = [k for k, item in enumerate(items)
               if getattr(item, "output_a", None) is None or getattr(item, "output_b", None) is None]
    if missing:
        first = items[missing[0]]
        fld = "output_a" if getattr(first, "output_a", None) is None else "output_b"
        raise DataError(f"{len(missing)} of {len(items)} comparison(s) have no response text (e.g. item "
                        f"{getattr(first, 'id', missing[0])!r}): style control reads output_a and output_b of every "
                        "comparison", where, None, fld)
    return [item.output_a for item in items], [item.output_b for item in items]


# -- the fit ---------------------------------------------------------------------------------------------
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
        return x.T @ (weight * _sigmoid(x @ theta) - mass)

    def hess(theta):
        p = _sigmoid(x @ theta)
        return (x * (weight * p * (1 - p))[:, None]).T @ x

    theta0 = np.zeros(x.shape[1]) if start is None else start
    fit = optimize.minimize(loss, theta0, jac=grad, hess=hess, method="trust-exact", options={"gtol": 1e-10})
    # trust-exact may stop on a step it cannot improve at the optimum's rounding: the gradient says whether it is one
    return _Fitted(fit.x, bool(np.max(np.abs(grad(fit.x)), initial=0.0) < 1e-7), int(fit.nit))


def _sigmoid(eta: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -eta))


@dataclass(frozen=True)
class StyleFit:
    """One estimator's style-controlled strengths (a :class:`SystemEstimates`) and style coefficients: per
    feature its value, standard error and interval (the log-odds of a one-standard-deviation difference)."""

    strengths: SystemEstimates
    coefficients: dict[str, dict[str, float]]
    judge_weight: float | None = None

    def to_dict(self) -> dict[str, Any]:
        est = self.strengths
        return {"strengths": {s: {"value": json_number(est.value[k]), "ci": [json_number(c) for c in est.ci[k]],
                                  "n_labelled": int(est.n_labelled[k]), "reason": est.reason[k]}
                              for k, s in enumerate(est.systems)},
                "coefficients": {f: {k: json_number(v) for k, v in c.items()} for f, c in self.coefficients.items()},
                "judge_weight": None if self.judge_weight is None else json_number(self.judge_weight)}


def style_estimate(data: Comparisons, covariates: StyleCovariates | np.ndarray, estimator: str = "judge", *,
                   target: str = "population", confidence: float = 0.95, judge_weight: float | None = None,
                   features: Sequence[str] | None = None) -> StyleFit:
    """One estimator (``judge``, ``human``, ``corrected``) of the style-controlled Bradley-Terry strengths and
    style coefficients. ``covariates``: :func:`style_covariates`' result, or an ``(n, p)`` array (``features``
    names its columns). ``judge_weight``: a fixed lambda for ``corrected`` instead of the tuned one."""
    z, names = _covariate_matrix(covariates, data.n, features)
    if estimator not in STYLE_ESTIMATORS:
        raise ConfigError(f"estimator {estimator!r}: choose {', '.join(STYLE_ESTIMATORS)}")
    if target not in ("population", "items"):
        raise ConfigError(f"target {target!r}: choose population, items")
    if estimator == "judge":
        return _judge_fit(data, z, names, confidence)
    if int(data.labelled.sum()) < MIN_LABELS:
        raise ConfigError(f"{int(data.labelled.sum())} labelled comparison(s): the {estimator} estimate needs "
                          f"{MIN_LABELS} or more")
    lam = 0.0 if estimator == "human" else judge_weight
    return _labelled_fit(data, z, names, lam, target, confidence, estimator)


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


def _judge_fit(data: Comparisons, z: np.ndarray, names: tuple[str, ...], confidence: float) -> StyleFit:
    rows = np.flatnonzero(data.judged)
    m = len(rows)
    if m == 0:
        raise ConfigError("no comparison has a judge verdict")
    design = _Design.of(data, rows, z)
    x = design.matrix(rows)
    judge = data.judge[rows]
    fit = _fit_logistic(x, np.full(m, 1 / m), judge / m)
    p = _sigmoid(x @ fit.x)
    bread = np.linalg.pinv(_gram(x, p * (1 - p) / m))
    e = (p - judge) / m
    cov = bread @ (m / max(m - 1, 1) * _gram(x, e * e)) @ bread
    counts = _counts(data, rows)
    reason = [None if c > 0 else "no comparison with a verdict" for c in counts]
    strengths = _strengths("judge", data, design, fit, cov, counts, np.zeros(len(counts), dtype=int), reason,
                           confidence, None)
    return StyleFit(strengths, _coefficients(fit.x, cov, names, np.inf, confidence, _finite(fit)))


def _labelled_fit(data: Comparisons, z: np.ndarray, names: tuple[str, ...], lam: float | None, target: str,
                  confidence: float, name: str) -> StyleFit:
    """The analogue of preferences' corrected Bradley-Terry with covariates: loss weights and masses lambda x
    (judge, every comparison) + (human - lambda judge) on the labelled ones; lambda 0 is human-only."""
    lab, every = np.flatnonzero(data.labelled), np.arange(data.n)
    n, total = len(lab), data.n
    share = data.shares()[lab]  # 1/n each for a uniform sample, else 1 / inclusion probability, normalised
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    human, judge_l = data.human[lab], judge[lab]
    labelled_counts = _counts(data, lab)
    if lam is None:
        lam = _tuned_lambda(data, z, lab, share, human, judge_l)
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
    p = _sigmoid(x @ fit.x)
    bread = np.linalg.pinv(_gram(x, weight * p * (1 - p)))
    p_lab = p[total:]
    fraction, scale = n / total, n / max(n - 1, 1)
    e_r = ((p_lab - human) - lam * (p_lab - judge_l)) * share
    meat = (1 - fraction) * _gram(x_lab, e_r * e_r)
    if target == "population":  # the comparisons themselves are a draw too: the human-only term, as preferences
        e_h = (p_lab - human) * share
        meat = meat + fraction * _gram(x_lab, e_h * e_h)
    cov = bread @ (scale * meat) @ bread
    reason = [None if c >= MIN_LABELS else f"{c} labelled comparison(s): an interval needs {MIN_LABELS}"
              for c in labelled_counts]
    strengths = _strengths(name, data, design, fit, cov, _counts(data, every), labelled_counts, reason, confidence,
                           labelled_counts)
    strengths.info.update(judge_weight=float(lam), target=target)
    return StyleFit(strengths, _coefficients(fit.x, cov, names, max(n - 1, 1), confidence, _finite(fit)),
                    float(lam))


def _tuned_lambda(data: Comparisons, z: np.ndarray, lab: np.ndarray, share: np.ndarray, human: np.ndarray,
                  judge_l: np.ndarray) -> float:
    """Power tuning at the judge-only fit: the lambda minimising the trace of the centred strengths' covariance
    (the leaderboard's numbers; the coefficients are on another scale), clipped to [0, 1]."""
    every = np.arange(data.n)
    judged = np.flatnonzero(data.judged)
    design = _Design.of(data, every, z)
    x_all, x_lab, x_j = design.matrix(every), design.matrix(lab), design.matrix(judged)
    start = _fit_logistic(x_j, np.full(len(judged), 1 / len(judged)), data.judge[judged] / len(judged)).x
    p_all, p_lab = _sigmoid(x_all @ start), _sigmoid(x_lab @ start)
    bread = np.linalg.pinv(_gram(x_all, p_all * (1 - p_all) / data.n))
    e_h, e_j = (p_lab - human) * share, (p_lab - judge_l) * share
    centre = design.centring()
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
               reason: list[str | None], confidence: float, labelled_counts: np.ndarray | None) -> SystemEstimates:
    """Centred strengths with per-system intervals: normal for the judge's fit; for a label-based one the guarded
    t interval with the system's labelled comparisons minus one degrees of freedom, from T_MIN_LABELS on."""
    centre = design.centring()
    value, cov = centre @ fit.x, centre @ cov_theta @ centre.T
    if not _finite(fit):
        reason = [r or "no finite strength: a system wins or loses all its comparisons, or a covariate "
                  "decides them" for r in reason]
    value = np.where([r is None for r in reason], value, np.nan)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    ci = np.full((len(value), 2), np.nan)
    labels = np.asarray(n_labelled, dtype=int)
    for s in np.flatnonzero(np.isfinite(value) & (se > 0)):
        if labelled_counts is None:
            half = stats.norm.ppf(0.5 + confidence / 2) * se[s]
            ci[s] = value[s] - half, value[s] + half
        elif labels[s] >= T_MIN_LABELS:
            ci[s] = guarded_t(value[s], se[s], labels[s] - 1, confidence)
        else:
            reason[s] = (f"{labels[s]} labelled comparison(s): a Bradley-Terry interval needs {T_MIN_LABELS} of the "
                         f"system's (label {T_MIN_LABELS - labels[s]} more)")
    own = np.where(labels > 0, np.maximum(labels - 1, 1), np.inf)
    df = np.minimum(own[:, None], own[None, :])
    return SystemEstimates(name, data.systems, value, ci, np.asarray(n_units, dtype=int), labels, tuple(reason),
                           confidence, cov=cov, df=df, info={"iterations": int(fit.nit)})


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
             confidence: float = 0.95, features: Sequence[str] | None = None) -> DavidsonFit:
    """Davidson's tie model fitted by maximum likelihood on the judge's verdicts (``judge``) or on the labelled
    comparisons' human ones (``human``, weighted as the sample's design weighs them). Sandwich covariance."""
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
    m = len(rows)
    cov = bread @ (m / max(m - 1, 1) * scores.T @ scores) @ bread
    counts = _counts(data, rows)
    reason = [None if c > 0 else f"no comparison with a {estimator} verdict" for c in counts]
    theta, cov_theta = fit.x[:-1], cov[:-1, :-1]
    fitted = _Fitted(fit.x, converged, fit.nit)  # nu too: a tie parameter running off is no finite optimum either
    strengths = _strengths(f"davidson-{estimator}", data, design, _Fitted(theta, _finite(fitted), fit.nit), cov_theta,
                           _counts(data, np.arange(data.n)), counts if estimator == "human" else np.zeros_like(counts),
                           reason, confidence, None)
    log_nu, se = fit.x[-1], float(np.sqrt(max(cov[-1, -1], 0.0)))
    q = stats.norm.ppf(0.5 + confidence / 2)
    nu = float(np.exp(log_nu))
    tie = {"nu": nu, "low": float(np.exp(log_nu - q * se)), "high": float(np.exp(log_nu + q * se)),
           "tie_share_at_equal_strength": nu / (2 + nu), "observed_tie_share": float(outcome[:, 1].sum() / weight.sum())}
    if not _finite(fitted):
        tie = tie | {"nu": np.nan, "low": np.nan, "high": np.nan, "tie_share_at_equal_strength": np.nan}
    return DavidsonFit(strengths, tie, _coefficients(theta, cov_theta, names, np.inf, confidence, _finite(fitted)))


@dataclass(frozen=True)
class _Fitted:
    x: np.ndarray
    success: bool
    nit: int


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
    used, per estimator the style-controlled fit and the plain Bradley-Terry strengths with the Kendall tau
    between the two rankings, and Davidson's fits."""

    covariates: StyleCovariates | None
    fits: dict[str, StyleFit]
    plain: dict[str, np.ndarray]
    tau: dict[str, float]
    davidson: dict[str, DavidsonFit]
    systems: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what was not fitted, and why

    def to_dict(self) -> dict[str, Any]:
        return {"covariates": None if self.covariates is None else self.covariates.to_dict(),
                "style_controlled": {n: f.to_dict() for n, f in self.fits.items()},
                "plain_bradley_terry": {n: dict(zip(self.systems, map(json_number, v), strict=True))
                                        for n, v in self.plain.items()},
                "kendall_tau_plain_vs_style": {n: json_number(t) for n, t in self.tau.items()},
                "davidson": {n: f.to_dict() for n, f in self.davidson.items()}, "notes": list(self.notes)}


def style_board(data: Comparisons, texts: tuple[Sequence[str], Sequence[str]] | None = None, *,
                style_control: bool = True, ties: str = "half", target: str = "population",
                confidence: float = 0.95, features: Sequence[str] = FEATURES) -> StyleBoard:
    """The style-controlled fits (``judge``, and ``human`` and ``corrected`` with two or more labels) on
    comparisons whose responses are ``texts`` (first, second), each with the plain Bradley-Terry strengths and
    the Kendall tau between the two rankings; with ``ties="davidson"`` Davidson's fits too (with the
    covariates when ``style_control``)."""
    if ties not in TIES:
        raise ConfigError(f"ties {ties!r}: choose {', '.join(TIES)}")
    covariates = None
    if style_control:
        if texts is None:
            raise ConfigError("style control needs the two responses' texts of every comparison")
        covariates = style_covariates(texts[0], texts[1], features)
    names = ("judge", *(("human", "corrected") if int(data.labelled.sum()) >= MIN_LABELS else ()))
    fits, plain, tau = {}, {}, {}
    if covariates is not None:
        for name in names:
            fits[name] = style_estimate(data, covariates, name, target=target, confidence=confidence)
            plain[name] = estimate(data, name, estimand="bradley-terry", target=target, confidence=confidence,
                                   system_intervals="t").value
            tau[name] = _tau(plain[name], fits[name].strengths.value)
    tie_fits, notes = {}, []
    if ties == "davidson":
        tie_fits["judge"] = davidson(data, "judge", covariates=covariates, confidence=confidence)
        if "human" in names and (data.human[data.labelled] == 0.5).any():
            tie_fits["human"] = davidson(data, "human", covariates=covariates, confidence=confidence)
        elif "human" in names:  # people asked for a or b only: a tie parameter of 0, nothing to estimate
            notes.append("Davidson (human): no human verdict is a tie, no tie parameter to fit")
    return StyleBoard(covariates, fits, plain, tau, tie_fits, data.systems, tuple(notes))


def style_for_items(items: Sequence[Any], judgments: Any, *, judge: Any = None, human: Any = None,
                    human_ids: Any = None, sample: Any = None, style_control: bool = True, ties: str = "half",
                    target: str = "population", confidence: float = 0.95, where: str | None = None) -> StyleBoard:
    """:func:`style_board` on comparison items (``system_a``, ``system_b``, ``output_a``, ``output_b``) and a
    judge's verdicts, read as ``judgelab evaluate`` reads them (:func:`~judgelab.evaluate.comparison_items.
    comparison_data`); ``where``: the data file, named in the error for a comparison without its texts."""
    from judgelab.evaluate.comparison_items import comparison_data

    rows = list(items)
    if ties not in TIES:
        raise ConfigError(f"ties {ties!r}: choose {', '.join(TIES)}")
    if not rows or any(getattr(item, "system_a", None) is None for item in rows):
        raise ConfigError("style control and the Davidson tie model are for comparisons between systems (items with "
                          "system_a and system_b)")
    texts = comparison_texts(rows, where) if style_control else None
    data = comparison_data(rows, judgments, judge=judge, human=human, human_ids=human_ids, sample=sample)[0]
    return style_board(data, texts, style_control=style_control, ties=ties, target=target, confidence=confidence)


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    return float(stats.kendalltau(a[ok], b[ok]).statistic) if ok.sum() >= 2 else float("nan")


__all__ = ["FEATURES", "TIES", "DavidsonFit", "StyleBoard", "StyleCovariates", "StyleFit", "comparison_texts",
           "davidson", "outcome_weights", "style_board", "style_counts", "style_for_items", "style_covariates", "style_estimate"]
