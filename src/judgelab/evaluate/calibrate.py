"""Cross-fitted recalibration of the judge's scores onto the human scale.

The corrected estimator subtracts the calibrated judge's error on the labelled units; the better
the calibrated judge predicts the human value, the smaller that error's variance and the
narrower the interval. The map is learned on the labelled units of the *other* folds (pooled over
systems, so a few labels per system still fit it), which keeps each unit's residual independent
of the map that produced it (cross-prediction-powered inference, Zrnic & Candes 2024). For the
unlabelled units the prediction is the mean of the fold maps.

Maps: ``isotonic`` (monotone, scikit-learn), ``linear`` (least squares: the pooled counterpart of
PPI++'s power tuning, since a per-system intercept cancels in the estimator), ``identity`` (the
judge score as is: plain PPI, which only works when the judge already speaks the human scale).
``linear`` and ``identity`` are fitted on every label (one slope costs one degree of freedom,
which the variance accounts for); ``isotonic`` is cross-fitted. ``auto`` (the default): ``linear``
from 20 labelled units on; below that the identity when 90% of the judge's scores lie within the
labels' range (the judge speaks the human scale; always for IR metrics), else ``linear``. Measured (bench/bench_evaluate.py):
with 2-17 labelled units a fitted slope made t intervals too short (QAGS: 0.87-0.90 coverage)
where the identity held 0.92-0.95; from ~20 labels the slope is as safe and narrower when the
judge speaks another scale. (Choosing by the errors on the labels instead made them look smaller
than they are: 0.90 coverage on Topical-Chat with 13 labels.) ``isotonic`` can leave most errors at exactly 0 when a nearly exact
judge meets discrete human scores, which makes t intervals too short (0.87 on simulated data):
use it with many labels.
A unit without a judge value gets the fold's mean human value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.isotonic import IsotonicRegression

from judgelab.errors import ConfigError

CALIBRATIONS = ("isotonic", "linear", "identity")
CHOICES = ("auto", *CALIBRATIONS)
AUTO_LINEAR_FROM = 20  # labelled units from which ``auto`` fits a slope
IN_SAMPLE = ("linear", "identity")  # one slope (or none): fitted on every label, as PPI++ tunes its lambda


@dataclass(frozen=True)
class CrossFit:
    out_of_fold: np.ndarray  # (n_pairs,) prediction for each labelled pair from the map that did not see its unit
    everywhere: np.ndarray  # same shape as the judge matrix: mean of the fold maps
    folds: int
    method: str
    fitted_in_sample: int = 0  # parameters fitted on the same labels the residuals come from

def _fit(method: str, f: np.ndarray, y: np.ndarray, w: np.ndarray):
    """A function judge value -> predicted human value, fitted on finite f.

    The isotonic map's direction follows the sign of the training pairs' covariance (a judge
    whose scores fall as quality rises, such as a distance, is mapped decreasing)."""
    known = np.isfinite(f)
    fallback = float(np.average(y, weights=w)) if len(y) else 0.0
    f, y, w = f[known], y[known], w[known]
    if method == "identity":
        transform = lambda x: x  # noqa: E731
    elif len(np.unique(f)) < 2:
        mean = float(np.average(y, weights=w)) if len(y) else fallback
        transform = lambda x: np.full(np.shape(x), mean)  # noqa: E731
    elif method == "linear":
        slope, intercept = np.polyfit(f, y, 1, w=np.sqrt(w))
        transform = lambda x: intercept + slope * x  # noqa: E731
    else:
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


def cross_fit(method: str, judge: np.ndarray, pair_unit: np.ndarray, pair_judge: np.ndarray,
              pair_human: np.ndarray, pair_weight: np.ndarray, *, folds: int = 5, seed: int = 0,
              same_scale: bool = False) -> CrossFit:
    """Fit ``folds`` maps, each on the labelled pairs of the other folds' units.

    ``pair_*``: one entry per labelled (unit, system) pair; ``pair_unit`` groups pairs into
    folds by unit (an IR query's runs stay together). ``judge``: every judge value to predict.
    ``same_scale``: judge and human values are the same measure (an IR metric under judge and
    human qrels), so ``auto`` needs no scale check.
    """
    if method not in CHOICES:
        raise ConfigError(f"calibration {method!r}: choose {', '.join(CHOICES)}")
    if method == "auto":
        method = _auto(judge, pair_unit, pair_human, same_scale)
    if method in IN_SAMPLE:
        fitted = _fit(method, pair_judge, pair_human, pair_weight)
        return CrossFit(fitted(pair_judge), fitted(judge), 1, method, int(method == "linear"))
    units = np.unique(pair_unit)
    k = max(1, min(folds, len(units)))
    if k < 2:  # one labelled unit: nothing to fit out of fold, the identity keeps the estimator unbiased
        fitted = _fit("identity", pair_judge, pair_human, pair_weight)
        return CrossFit(fitted(pair_judge), fitted(judge), 1, "identity")
    order = np.random.default_rng([seed, 7]).permutation(len(units))
    fold_of_unit = dict(zip(units[order], np.arange(len(units)) % k, strict=True))
    fold = np.array([fold_of_unit[u] for u in pair_unit])
    out_of_fold = np.empty(len(pair_judge))
    everywhere = np.zeros(np.shape(judge))
    for j in range(k):
        train = fold != j
        fitted = _fit(method, pair_judge[train], pair_human[train], pair_weight[train])
        out_of_fold[~train] = fitted(pair_judge[~train])
        everywhere += fitted(judge) / k
    return CrossFit(out_of_fold, everywhere, k, method)


def _auto(judge: np.ndarray, pair_unit: np.ndarray, pair_human: np.ndarray, same_scale: bool) -> str:
    """``linear`` with enough labels; with few, the identity when the judge speaks the labels' scale.

    The choice looks at the labels' range and the judge's scores, never at the judge's errors on
    the labels: choosing by those errors makes them look smaller than they are."""
    if len(np.unique(pair_unit)) >= AUTO_LINEAR_FROM:
        return "linear"
    if same_scale:
        return "identity"
    scores = judge[np.isfinite(judge)]
    inside = (scores >= pair_human.min()) & (scores <= pair_human.max())
    return "identity" if scores.size and inside.mean() >= 0.9 else "linear"
