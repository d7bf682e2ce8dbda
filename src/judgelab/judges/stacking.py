"""The stacker: how ``EnsembleJudge(aggregate="stack")`` (and so ``judgelab train --stack``) and
``judgelab.train.stack_cv`` combine member scores into one score.

A ridge regression on the standardised member scores with **non-negative** weights. Which
penalty, or whether to keep the best member alone, is decided by **group-wise cross-validation**
on the items it is fitted on (nested inside whatever split fitted the members): the best member
alone is kept unless the best ridge over all members beats it by more than one standard error
(Spearman of the out-of-fold predictions, folds of whole sources; the error from a paired
bootstrap over the sources). Why: fitted on a few dozen
validation items, a ridge with a fixed penalty and weights of any sign (the previous stacker), or
one chosen by its cross-validated score alone, scored sources it never saw worse than its best
member (Topical-Chat coherence, one fold: 0.505 against the similarity scorer's 0.663); the stack
now departs from its best member only when combining paid clearly on sources it was not fitted
on (docs/training.md, "Stacking out of sample").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: Ridge penalties tried (on standardised inputs), strongest first: among equals the simpler wins.
ALPHAS = tuple(float(a) for a in np.logspace(3, -2, 11))
#: Fewer groups than this: no cross-validation, the middle penalty is used.
MIN_GROUPS = 3
#: Resamples of the paired bootstrap that says whether the ridge's gain over the best member is real.
BOOTSTRAP = 200


@dataclass(frozen=True)
class Candidate:
    """A member alone (``member`` its column) or the ridge over every member (``member`` None)."""

    alpha: float
    member: int | None = None

    def weights(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        """(coefficients over all columns, intercept) fitted on standardised ``x``."""
        from sklearn.linear_model import Ridge

        columns = [self.member] if self.member is not None else list(range(x.shape[1]))
        model = Ridge(alpha=self.alpha, positive=True).fit(x[:, columns], y)
        coef = np.zeros(x.shape[1])
        coef[columns] = model.coef_
        return coef, float(model.intercept_)


def fit_stacker(values: np.ndarray, target: np.ndarray, groups: Sequence[str] | None = None, *,
                folds: int = 5) -> dict[str, list[float]]:
    """Learn the stacker from member ``values`` (items x members, NaN where a member gave nothing)
    and the human ``target``; ``groups`` (one per item) keep each source in one fold.

    Returns what ``EnsembleJudge.learned`` stores: ``impute`` (column means for missing values),
    ``mean`` / ``scale`` (standardisation), ``coef`` (non-negative), ``intercept``, ``classes``
    (empty), and the choice: ``alpha`` (the penalty), ``member`` (the column used alone, or -1 for
    the ridge over all), ``cv_spearman`` (the Spearman of its out-of-fold predictions; empty
    without cross-validation).
    """
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import StandardScaler

    values, target = np.asarray(values, dtype=float), np.asarray(target, dtype=float)
    imputer = SimpleImputer(strategy="mean", keep_empty_features=True).fit(values)
    scaler = StandardScaler().fit(imputer.transform(values))
    x = scaler.transform(imputer.transform(values))
    chosen, score = _choose(x, target, groups, folds)
    coef, intercept = chosen.weights(x, target)
    return {"impute": imputer.statistics_.tolist(), "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist(),
            "coef": coef.tolist(), "intercept": [intercept], "classes": [], "alpha": [chosen.alpha],
            "member": [-1.0 if chosen.member is None else float(chosen.member)],
            "cv_spearman": [score] if np.isfinite(score) else []}


def predict_stacked(learned: dict[str, list[float]], values: np.ndarray) -> np.ndarray:
    """The stacked score of each row of member ``values`` (NaN imputed as at fit time)."""
    arrays = {key: np.asarray(learned[key], dtype=float) for key in ("impute", "mean", "scale", "coef", "intercept")}
    values = np.atleast_2d(np.asarray(values, dtype=float))
    x = (np.where(np.isnan(values), arrays["impute"], values) - arrays["mean"]) / arrays["scale"]
    return x @ arrays["coef"] + arrays["intercept"][0]


def _choose(x: np.ndarray, y: np.ndarray, groups: Sequence[str] | None, folds: int) -> tuple[Candidate, float]:
    """The best member alone, unless the best ridge over all members beats it by more than one
    standard error (the "one standard error" rule: a combination must earn its place on sources it
    was not fitted on). Scores: Spearman of the out-of-fold predictions under group-wise folds;
    the standard error of the ridge's gain from a paired bootstrap over the same groups."""
    from judgelab.metrics.correlation import dataset_level

    labels = np.asarray(groups if groups is not None else np.arange(len(y)), dtype=object).astype(str)
    n_groups = len(set(labels))
    if n_groups < MIN_GROUPS or len(y) < 2 * MIN_GROUPS:
        return Candidate(ALPHAS[len(ALPHAS) // 2]), float("nan")
    from sklearn.model_selection import GroupKFold

    splits = list(GroupKFold(n_splits=min(folds, n_groups)).split(x, y, labels))

    def out_of_fold(candidate: Candidate) -> np.ndarray:
        predicted = np.empty(len(y))
        for train, test in splits:
            coef, intercept = candidate.weights(x[train], y[train])
            predicted[test] = x[test] @ coef + intercept
        return predicted

    def best(candidates) -> tuple[Candidate, np.ndarray, float]:  # the first listed among equals
        scored = [(c, p, _spearman(y, p)) for c in candidates for p in [out_of_fold(c)]]
        return max(scored, key=lambda entry: entry[2])

    member, alone, member_score = best(Candidate(1.0, k) for k in range(x.shape[1]))
    ridge, combined, ridge_score = best(Candidate(alpha) for alpha in ALPHAS)
    if ridge_score <= member_score:
        return (member, member_score) if np.isfinite(member_score) else (Candidate(ALPHAS[len(ALPHAS) // 2]), float("nan"))
    if not np.isfinite(member_score):
        return ridge, ridge_score
    paired = [dataset_level(y, p, labels, methods=("spearman",), n_resamples=BOOTSTRAP)["spearman"].resamples
              for p in (alone, combined)]
    gain = paired[1] - paired[0]
    error = float(np.nanstd(gain)) if np.isfinite(gain).any() else np.inf
    return (ridge, ridge_score) if ridge_score - member_score > error else (member, member_score)


def _spearman(y: np.ndarray, predicted: np.ndarray) -> float:
    """A constant prediction ranks nothing: -inf, below every candidate that ranks something."""
    if np.ptp(predicted) == 0 or np.ptp(y) == 0:
        return -np.inf
    return float(stats.spearmanr(y, predicted).statistic)
