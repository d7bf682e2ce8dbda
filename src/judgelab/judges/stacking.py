"""The stacker: how ``EnsembleJudge(aggregate="stack")`` (and so ``judgelab train --stack``) and
``judgelab.train.stack_cv`` combine member scores into one score.

A ridge regression on the standardised member scores with **non-negative** weights (a member that
runs against the humans on the fit items gets weight 0, never a flipped sign), whose penalty is
chosen by **group-wise cross-validation** on the items it is fitted on (nested inside whatever
split fitted the members): the penalty of ``ALPHAS`` whose out-of-fold predictions rank the items
best (Spearman; folds of whole sources) is refitted on all of them.

Why (docs/training.md, "Stacking out of sample"): the previous stacker, a ridge with penalty 1 and
weights of any sign, was measured only by 5-fold stacking over out-of-fold member scores; fitted
the way ``train --stack`` fits it, on a few dozen validation items, it could flip a member's sign
and fall below its best member on sources it never saw. Choosing between the best member alone
and the ridge by the same cross-validation was tried and lost the gains of combining (HANNA,
SF Hotel, SF Restaurant informativeness) for one fold won back on Topical-Chat.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from judgelab.metrics.bootstrap import group_codes

#: Ridge penalties tried (on standardised inputs), strongest first: among equal scores the simpler wins.
ALPHAS = tuple(float(a) for a in np.logspace(3, -2, 11))
#: The penalty used when there are too few groups to cross-validate.
DEFAULT_ALPHA = 1.0
#: Fewer groups than this: no cross-validation.
MIN_GROUPS = 3


def fit_stacker(values: np.ndarray, target: np.ndarray, groups: Sequence[str] | None = None, *,
                folds: int = 5) -> dict[str, list[float]]:
    """Learn the stacker from member ``values`` (items x members, NaN where a member gave nothing)
    and the human ``target``; ``groups`` (one per item) keep each source in one fold.

    Returns what ``EnsembleJudge.learned`` stores: ``impute`` (column means for missing values),
    ``mean`` / ``scale`` (standardisation), ``coef`` (non-negative), ``intercept``, ``classes``
    (empty), ``alpha`` (the penalty chosen) and ``cv_spearman`` (the Spearman of its out-of-fold
    predictions; empty when there were too few groups to cross-validate).
    """
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import StandardScaler

    values, target = np.asarray(values, dtype=float), np.asarray(target, dtype=float)
    imputer = SimpleImputer(strategy="mean", keep_empty_features=True).fit(values)
    scaler = StandardScaler().fit(imputer.transform(values))
    x = scaler.transform(imputer.transform(values))
    alpha, score = _choose_alpha(x, target, groups, folds)
    model = _ridge(alpha).fit(x, target)
    return {"impute": imputer.statistics_.tolist(), "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist(),
            "coef": model.coef_.tolist(), "intercept": [float(model.intercept_)], "classes": [], "alpha": [alpha],
            "cv_spearman": [score] if np.isfinite(score) else []}


def predict_stacked(learned: dict[str, list[float]], values: np.ndarray) -> np.ndarray:
    """The stacked score of each row of member ``values`` (NaN imputed as at fit time)."""
    arrays = {key: np.asarray(learned[key], dtype=float) for key in ("impute", "mean", "scale", "coef", "intercept")}
    values = np.atleast_2d(np.asarray(values, dtype=float))
    x = (np.where(np.isnan(values), arrays["impute"], values) - arrays["mean"]) / arrays["scale"]
    return x @ arrays["coef"] + arrays["intercept"][0]


def _ridge(alpha: float):
    from sklearn.linear_model import Ridge

    return Ridge(alpha=alpha, positive=True)


def _choose_alpha(x: np.ndarray, y: np.ndarray, groups: Sequence[str] | None, folds: int) -> tuple[float, float]:
    """(penalty, its out-of-fold Spearman) under group-wise folds; the default without enough groups."""
    labels = group_codes(groups if groups is not None else np.arange(len(y)))[0]  # codes in the order of the names
    n_groups = len(set(labels))
    if n_groups < MIN_GROUPS or len(y) < 2 * MIN_GROUPS:
        return DEFAULT_ALPHA, float("nan")
    from sklearn.model_selection import GroupKFold

    splits = list(GroupKFold(n_splits=min(folds, n_groups)).split(x, y, labels))
    best, best_score = DEFAULT_ALPHA, -np.inf
    for alpha in ALPHAS:
        predicted = np.empty(len(y))
        for train, test in splits:
            predicted[test] = _ridge(alpha).fit(x[train], y[train]).predict(x[test])
        score = _spearman(y, predicted)
        if score > best_score:  # strict: among equals the stronger penalty, tried first, stays
            best, best_score = alpha, score
    return best, float(best_score) if np.isfinite(best_score) else float("nan")


def _spearman(y: np.ndarray, predicted: np.ndarray) -> float:
    """A constant prediction ranks nothing: -inf, below every penalty that ranks something."""
    if np.ptp(predicted) == 0 or np.ptp(y) == 0:
        return -np.inf
    return float(stats.spearmanr(y, predicted).statistic)
