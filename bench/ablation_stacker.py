"""Stacker ablation without training again: refit other stackers on the validation data that
``bench_trained --by-source`` stored for each fold, and score the held-out predictions it stored.

    .venv/bin/python -m bench.ablation_stacker

Compared: the shipped stacker (non-negative ridge shrunk toward zero, penalty by group-wise CV;
this reproduces the "stack (this release)" column exactly) and a variant shrunk toward the best
member alone (the member with the highest validation Spearman, at its least-squares weight; an
infinite penalty, i.e. that member alone, is among the choices). The variant is not shipped
(docs/training.md, "Stacking out of sample"): this script is how that was decided.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from bench.bench_trained import NOT_MEMBERS, load_results, stored_predictions
from judgelab.judges.stacking import ALPHAS, fit_stacker, predict_stacked


def _nan_array(values) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)


def _fit_toward(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Non-negative least squares with a penalty alpha * |w - w_best|^2 (scipy's bounded lsq on
    the augmented system: scikit-learn's Ridge only shrinks toward zero)."""
    xc, yc = x - x.mean(0), y - y.mean()
    rho = [stats.spearmanr(x[:, j], y).statistic if np.ptp(x[:, j]) > 0 else -1.0 for j in range(x.shape[1])]
    best = int(np.nanargmax(rho))
    prior = np.zeros(x.shape[1])
    prior[best] = max(0.0, xc[:, best] @ yc / max(xc[:, best] @ xc[:, best], 1e-12))
    if np.isinf(alpha):
        weights = prior
    else:
        system = np.vstack([xc, np.sqrt(alpha) * np.eye(x.shape[1])])
        weights = optimize.lsq_linear(system, np.concatenate([yc, np.sqrt(alpha) * prior]), bounds=(0, np.inf)).x
    return weights, float(y.mean() - x.mean(0) @ weights)


def shrunk_to_best(values: np.ndarray, y: np.ndarray, groups: list[str], folds: int = 5):
    """The variant stacker, fitted like the shipped one (standardise, penalty by group-wise CV)."""
    from sklearn.model_selection import GroupKFold

    mean, scale = np.nanmean(values, 0), np.nanstd(values, 0)
    scale[scale == 0] = 1.0

    def standard(v: np.ndarray) -> np.ndarray:
        return (np.where(np.isnan(v), mean, v) - mean) / scale

    x = standard(values)
    splits = list(GroupKFold(n_splits=min(folds, len(set(groups)))).split(x, y, groups))
    chosen, chosen_score = np.inf, -np.inf
    for alpha in (np.inf, *ALPHAS):
        predicted = np.empty(len(y))
        for train, test in splits:
            weights, intercept = _fit_toward(x[train], y[train], alpha)
            predicted[test] = x[test] @ weights + intercept
        score = stats.spearmanr(y, predicted).statistic if np.ptp(predicted) > 0 else -np.inf
        if score > chosen_score:
            chosen, chosen_score = alpha, score
    weights, intercept = _fit_toward(x, y, chosen)
    return lambda v: standard(v) @ weights + intercept


def _pooled_and_fold_mean(human: np.ndarray, column: np.ndarray, fold: np.ndarray) -> str:
    per_fold = [stats.spearmanr(human[fold == k], column[fold == k]).statistic for k in np.unique(fold)]
    return f"{stats.spearmanr(human, column).statistic:.3f} / {np.mean(per_fold):.3f}"


def main() -> int:
    print("| dataset / aspect | shipped stacker, pooled / fold mean | shrunk to best member | members alone |")
    print("|---|---|---|---|")
    for entry in load_results()["entries"]:
        if entry.get("kind") != "by_source":
            continue
        items, held, columns = stored_predictions(entry)
        human, fold = held.human_scores(entry["aspect"]), np.array(entry["predictions"]["fold"])
        members = [label for label in columns if label not in NOT_MEMBERS]
        held_values = np.column_stack([columns[m] for m in members])
        shipped, variant = np.full(len(human), np.nan), np.full(len(human), np.nan)
        for k, stacker in enumerate(entry["stackers"]):
            validation = stacker["validation"]
            values, y = _nan_array(validation["values"]), np.array(validation["human"], dtype=float)
            groups = [items[i].group for i in validation["ids"]]
            shipped[fold == k] = predict_stacked(fit_stacker(values, y, groups), held_values[fold == k])
            variant[fold == k] = shrunk_to_best(values, y, groups)(held_values[fold == k])
        alone = ", ".join(f"{m} {_pooled_and_fold_mean(human, held_values[:, j], fold)}" for j, m in enumerate(members))
        print(f"| {entry['dataset']} / {entry['aspect']} | {_pooled_and_fold_mean(human, shipped, fold)} | "
              f"{_pooled_and_fold_mean(human, variant, fold)} | {alone} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
