"""Recalibration of the judge's scores onto the human scale, inside the corrected estimator.

The corrected estimator subtracts the calibrated judge's error on the labelled units; the better
the calibrated judge predicts the human value *within a system*, the smaller that error's
variance and the narrower the interval. Maps, pooled over systems so that a few labels per
system still fit them:

* ``identity``: the judge score as is (plain PPI). Any offset cancels; fits nothing.
* ``linear``: one slope, fitted on every label *within systems* (a system's own offset cancels,
  so that is the slope that minimises the variance: the pooled counterpart of PPI++'s power
  tuning). It costs a degree of freedom and its own sampling error, both counted in the interval.
* ``isotonic``: monotone (scikit-learn), cross-fitted: each label's error comes from a map fitted
  on the other folds' units (cross-prediction-powered inference, Zrnic & Candes 2024); every other
  unit gets the mean of the fold maps. With a nearly exact judge and discrete human scores it can
  leave most errors at exactly 0, which makes t intervals too short with few labels (0.87
  coverage on simulated data): use it with many.
* ``auto`` (default): ``linear`` from 20 labelled units on; below that the identity, unless the
  judge's scores spread more than 1.5 times as wide as the labels within a system (then
  ``linear``); always the identity for IR metrics (the same measure on both sides). Measured
  (bench/bench_evaluate.py): with 9-17 labels a fitted slope made intervals too short (QAGS:
  0.89-0.91 coverage) where the identity held 0.92-0.94. Choosing by the judge's errors on the
  labels instead would make them look smaller than they are (0.90 coverage on Topical-Chat with
  13 labels when tried), so the choice never looks at them.

A unit without a judge value gets the (fold's) mean human value.

Several judges (``judge`` with a last axis of judges): ``stack``, the human value's least-squares
regression on every judge's score *within systems*, with a small ridge penalty: the multi-prediction
counterpart of the ``linear`` map (PPI++'s power tuning with one weight per judge; MultiPPI,
Cowen-Breen et al. 2026), fitted and counted as it is (see :func:`_fit_stack`). A judge that predicts
nothing the others do not gets a weight near 0 and costs little; one on another scale is rescaled by
its weight (``CrossFit.weights``). A judge's missing scores are filled with its mean over the unit's
system before the fit (its deviation is then 0: it says nothing there), so a judge that covers some
items is used where it exists.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from judgelab.errors import ConfigError

CALIBRATIONS = ("isotonic", "linear", "identity")
CHOICES = ("auto", *CALIBRATIONS, "stack")
#: Ridge penalty of the stacked weights, as a share of each judge's within-system spread (the diagonal of
#: the normal equations): it keeps the weights of judges that agree with each other from trading off wildly
#: on a few labels; at 0.1 a weight is shrunk by about a tenth of its size when the judges are uncorrelated.
STACK_RIDGE = 0.1
AUTO_STACK_PER_JUDGE = 10  # labelled units per judge from which ``auto`` fits the judges' weights
AUTO_LINEAR_FROM = 20  # labelled units from which ``auto`` fits a slope
IN_SAMPLE = ("linear", "identity")  # one slope (or none): fitted on every label, as PPI++ tunes its lambda


@dataclass(frozen=True)
class CrossFit:
    out_of_fold: np.ndarray  # (n_pairs,) prediction for each labelled pair from the map that did not see its unit
    everywhere: np.ndarray  # same shape as the judge matrix: mean of the fold maps
    folds: int
    method: str
    fitted_in_sample: int = 0  # parameters fitted on the same labels the residuals come from
    slope_variance: float = 0.0  # sampling variance of an in-sample slope (linear)
    weights: np.ndarray | None = None  # stack: each judge's weight (the folds' mean)
    weights_covariance: np.ndarray | None = None  # stack fitted in sample: the weights' sampling covariance

def _fit(method: str, f: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray):
    """A function judge value -> predicted human value, fitted on finite f.

    The isotonic map's direction follows the sign of the training pairs' covariance (a judge
    whose scores fall as quality rises, such as a distance, is mapped decreasing)."""
    known = np.isfinite(f)
    fallback = float(np.average(y, weights=w)) if len(y) else 0.0
    f, y, w, groups = f[known], y[known], w[known], groups[known]
    if method == "identity":
        transform = lambda x: x  # noqa: E731
    elif len(np.unique(f)) < 2:
        mean = float(np.average(y, weights=w)) if len(y) else fallback
        transform = lambda x: np.full(np.shape(x), mean)  # noqa: E731
    elif method == "linear":
        slope = within_slope(f, y, w, groups)
        intercept = np.average(y, weights=w) - slope * np.average(f, weights=w)
        transform = lambda x: intercept + slope * x  # noqa: E731
    else:
        from sklearn.isotonic import IsotonicRegression  # scikit-learn (and pandas) only for an isotonic fit

        increasing = bool(np.cov(f, y, aweights=w)[0, 1] >= 0)
        model = IsotonicRegression(out_of_bounds="clip", increasing=increasing).fit(f, y, sample_weight=w)
        transform = model.predict

    def predict(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = np.full(x.shape, fallback)
        finite = np.isfinite(x)
        if finite.any():
            out[finite] = transform(x[finite])
        return out

    return predict


def within_slope(f: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray) -> float:
    """Least-squares slope of y on f within systems (a system's own offset cancels in the estimator,
    so the slope that minimises its variance is the within-system one; a slope fitted across systems
    can follow between-system differences and leave errors that spread wider than the labels:
    Topical-Chat overall, width 1.15 of human-only with 13 labels)."""
    fc, yc = f.astype(float).copy(), y.astype(float).copy()
    for group in np.unique(groups):
        members = groups == group
        fc[members] -= np.average(f[members], weights=w[members])
        yc[members] -= np.average(y[members], weights=w[members])
    spread = float(np.sum(w * fc * fc))
    return float(np.sum(w * fc * yc)) / spread if spread > 0 else 0.0


def _slope_variance(f: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray) -> float:
    """Sampling variance of the within-system slope: residual variance / within spread of the judge."""
    known = np.isfinite(f)
    f, y, w, groups = f[known], y[known], w[known] / w[known].mean(), groups[known]
    slope = within_slope(f, y, w, groups)
    fc, yc = f.astype(float).copy(), y.astype(float).copy()
    for group in np.unique(groups):
        members = groups == group
        fc[members] -= np.average(f[members], weights=w[members])
        yc[members] -= np.average(y[members], weights=w[members])
    df = len(f) - len(np.unique(groups)) - 1
    spread = float(np.sum(w * fc * fc))
    if df < 1 or spread <= 0:
        return 0.0
    return float(np.sum(w * (yc - slope * fc) ** 2)) / df / spread


def cross_fit(method: str, judge: np.ndarray, pair_unit: np.ndarray, pair_judge: np.ndarray,
              pair_human: np.ndarray, pair_weight: np.ndarray, pair_system: np.ndarray, *, folds: int = 5,
              seed: int = 0, same_scale: bool = False) -> CrossFit:
    """Fit ``folds`` maps, each on the labelled pairs of the other folds' units.

    ``pair_*``: one entry per labelled (unit, system) pair; ``pair_unit`` groups pairs into
    folds by unit (an IR query's runs stay together), ``pair_system`` names their system. ``judge``: every judge value to predict.
    ``same_scale``: judge and human values are the same measure (an IR metric under judge and
    human qrels), so ``auto`` needs no scale check.
    """
    if method not in CHOICES:
        raise ConfigError(f"calibration {method!r}: choose {', '.join(CHOICES)}")
    if np.ndim(judge) == 3:
        return _fit_stack(method, judge, pair_unit, pair_judge, pair_human, pair_weight, pair_system,
                          folds=folds, seed=seed, same_scale=same_scale)
    if method == "stack":
        raise ConfigError("calibration 'stack' combines several judges: give more than one")
    if method == "auto":
        method = _auto(judge, pair_unit, pair_human, pair_system, same_scale)
    if method in IN_SAMPLE:
        fitted = _fit(method, pair_judge, pair_human, pair_weight, pair_system)
        variance = _slope_variance(pair_judge, pair_human, pair_weight, pair_system) if method == "linear" else 0.0
        return CrossFit(fitted(pair_judge), fitted(judge), 1, method, int(method == "linear"), variance)
    k, fold = _folds(pair_unit, folds, seed)
    if k < 2:  # one labelled unit: nothing to fit out of fold, the identity keeps the estimator unbiased
        fitted = _fit("identity", pair_judge, pair_human, pair_weight, pair_system)
        return CrossFit(fitted(pair_judge), fitted(judge), 1, "identity")
    out_of_fold = np.empty(len(pair_judge))
    everywhere = np.zeros(np.shape(judge))
    for j in range(k):
        train = fold != j
        fitted = _fit(method, pair_judge[train], pair_human[train], pair_weight[train], pair_system[train])
        out_of_fold[~train] = fitted(pair_judge[~train])
        everywhere += fitted(judge) / k
    return CrossFit(out_of_fold, everywhere, k, method)


def _folds(pair_unit: np.ndarray, folds: int, seed: int) -> tuple[int, np.ndarray]:
    """(number of folds, each labelled pair's fold): units at random into ``folds`` folds, a unit's pairs
    (an IR query's runs) together."""
    units = np.unique(pair_unit)
    k = max(1, min(folds, len(units)))
    order = np.random.default_rng([seed, 7]).permutation(len(units))
    fold_of_unit = dict(zip(units[order], np.arange(len(units)) % k, strict=True))
    return k, np.array([fold_of_unit[u] for u in pair_unit], dtype=int)


def _fit_stack(method: str, judges: np.ndarray, pair_unit: np.ndarray, pair_judges: np.ndarray,
               pair_human: np.ndarray, pair_weight: np.ndarray, pair_system: np.ndarray, **single) -> CrossFit:
    """Several judges (``judges`` (U, S, J), ``pair_judges`` (n, J), no NaN: filled beforehand).

    ``stack`` (and ``auto`` from :func:`stack_from` labelled units): the within-system ridge regression of
    the human value on every judge, fitted on every label as the one judge's ``linear`` map is, its error
    counted (J degrees of freedom, and the weights' sampling covariance in the estimator). Cross-fitted
    weights were measured wider (HANNA surprise, five raters, 20% labelled: 0.820 against 0.810 in sample;
    human-only 0.806): with a fifth of the labels left out of each fit, the weights were noisier.
    ``auto`` with fewer labelled units: the judges' plain mean, each rescaled to the first judge's spread
    within systems (no label is used to weigh them), then calibrated as one judge is (``auto``). Measured on
    TREC DL 2019 with 20 labelled queries (TREMA-4prompts 8B, 70B, Flan-T5): the stack's three weights
    cost 2% of width over the best judge alone, the mean was 1% narrower than it."""
    if method not in ("auto", "stack"):
        raise ConfigError(f"calibration {method!r} maps one judge; several judges are combined by 'stack' "
                          "(or 'auto')")
    n_judges = judges.shape[-1]
    if method == "auto" and len(np.unique(pair_unit)) < stack_from(n_judges):
        scale = _within_spread(judges[..., :1]) / np.maximum(_within_spread(judges), 1e-12)
        fit = cross_fit("auto", np.mean(judges * scale, axis=-1), pair_unit, np.mean(pair_judges * scale, axis=-1),
                        pair_human, pair_weight, pair_system, **single)
        return replace(fit, method=f"mean, {fit.method}", weights=scale / n_judges)
    intercept, beta, cov = stack_weights(pair_judges, pair_human, pair_weight, pair_system, covariance=True)
    return CrossFit(intercept + pair_judges @ beta, intercept + judges @ beta, 1, "stack",
                    fitted_in_sample=len(beta), weights=beta, weights_covariance=cov)


def stack_from(n_judges: int) -> int:
    """Labelled units from which ``auto`` fits one weight per judge: 20 (as one judge's slope), and 10 per judge."""
    return max(AUTO_LINEAR_FROM, AUTO_STACK_PER_JUDGE * n_judges)


def _within_spread(judges: np.ndarray) -> np.ndarray:
    """Each judge's standard deviation within systems (``judges`` (U, S, J), NaN off a system's units)."""
    centred = judges - np.nanmean(judges, axis=0, keepdims=True)
    return np.sqrt(np.nanmean(centred.reshape(-1, judges.shape[-1]) ** 2, axis=0))


def stack_weights(f: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray,
                  ridge: float = STACK_RIDGE, covariance: bool = False):
    """(intercept, one weight per judge): weighted least squares of y on the columns of ``f`` within
    groups (systems), each weight's normal equation penalised by ``ridge`` times its own diagonal.
    Hand-written: scikit-learn's Ridge has no within-group centring, and this is six lines of numpy."""
    fc, yc = f.astype(float).copy(), y.astype(float).copy()
    for group in np.unique(groups):
        members = groups == group
        fc[members] -= np.average(f[members], axis=0, weights=w[members])
        yc[members] -= np.average(y[members], weights=w[members])
    gram = fc.T @ (w[:, None] * fc)
    penalised = gram + ridge * np.diag(np.diag(gram))
    beta = np.linalg.lstsq(penalised, fc.T @ (w * yc), rcond=None)[0]
    intercept = float(np.average(y, weights=w) - np.average(f, axis=0, weights=w) @ beta)
    if not covariance:
        return intercept, beta
    w_n = w / w.mean()
    df = len(y) - len(np.unique(groups)) - len(beta)
    if df < 1:
        return intercept, beta, np.zeros((len(beta), len(beta)))
    inverse = np.linalg.pinv(gram + ridge * np.diag(np.diag(gram)))
    sigma2 = float(np.sum(w_n * (yc - fc @ beta) ** 2)) / df * (w.mean())
    return intercept, beta, sigma2 * inverse @ gram @ inverse


def _auto(judge: np.ndarray, pair_unit: np.ndarray, pair_human: np.ndarray, pair_system: np.ndarray,
          same_scale: bool) -> str:
    """``linear`` with enough labels; with few, the identity unless the judge's scores spread much wider
    than the labels (an offset does no harm: it cancels; a wide spread would add to every error).

    The choice looks at the labels and the judge's scores, never at the judge's errors on the
    labels: choosing by those makes them look smaller than they are."""
    if len(np.unique(pair_unit)) >= AUTO_LINEAR_FROM:
        return "linear"
    if same_scale:
        return "identity"
    judge_spread = np.nanmean(np.nanstd(np.where(np.isfinite(judge), judge, np.nan), axis=0))
    label_spread = np.sqrt(np.mean([np.var(pair_human[pair_system == s]) for s in np.unique(pair_system)]))
    return "identity" if judge_spread <= 1.5 * label_spread else "linear"
