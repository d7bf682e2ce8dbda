"""Label efficiency: group-wise cross-validation, learning curves and a stacked variant.

``cross_validate`` splits the items into ``folds`` by group (judgelab.data.split: no source in
two folds), and for each requested training size trains on that many items of the other folds
(whole groups, drawn in a seeded order) and scores the held-out fold. Every item thus gets one
out-of-fold prediction per size; ``agreement`` correlates them with the targets (and with the
human scores, for a distilled scorer) at dataset and group level.

The frozen bottom of the encoder is run once for all items and reused by every fold and size.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from judgelab.data.dataset import Dataset
from judgelab.data.split import kfold_by_group
from judgelab.errors import DataError
from judgelab.metrics import correlations
from judgelab.train.labels import MIN_LABELLED, Targets

if TYPE_CHECKING:
    from judgelab.judges.trained import TrainedJudge

#: Called after each trained model: (fold, size, seconds it took).
OnFold = Callable[[int, int, float], None]


@dataclass
class CurvePoint:
    """Out-of-fold predictions of scorers trained on ``size`` items per fold (NaN: not predicted)."""

    size: int
    predictions: np.ndarray
    train_sizes: list[int] = field(default_factory=list)
    train_seconds: list[float] = field(default_factory=list)


def fold_of(targets: Targets, folds: int, seed: int) -> np.ndarray:
    """Fold number per item, as ``kfold_by_group`` assigns it."""
    position = {item.id: i for i, item in enumerate(targets.items)}
    assignment = np.full(len(targets.items), -1)
    for fold, (_, test) in enumerate(kfold_by_group(Dataset(targets.items), folds, seed=seed)):
        assignment[[position[item.id] for item in test]] = fold
    return assignment


def groups_first(indices: Sequence[int], targets: Targets, size: int, seed: int) -> list[int]:
    """``size`` or a few more items made of whole groups, in a seeded order of groups."""
    by_group: dict[str, list[int]] = {}
    for i in indices:
        by_group.setdefault(targets.items[i].group, []).append(i)
    names = sorted(by_group)
    chosen: list[int] = []
    for g in np.random.default_rng(seed).permutation(len(names)):
        if len(chosen) >= size:
            break
        chosen.extend(by_group[names[g]])
    return chosen


def cross_validate(spec: TrainedJudge, targets: Targets, *, folds: int = 5, sizes: Sequence[int | None] = (None,),
                   seed: int = 0, on_fold: OnFold | None = None) -> list[CurvePoint]:
    """One ``CurvePoint`` per size (None: all training items of each fold)."""
    from judgelab.train.trainer import (
        frozen_layers,
        hidden_below,
        new_scorer,
        predict_from_below,
        train_scorer,
    )

    assignment = fold_of(targets, folds, seed)
    base, tokenizer = new_scorer(spec.base_model, spec.head, [0.0, 1.0], (0.0, 1.0))
    n_frozen = frozen_layers(spec, base)
    below = hidden_below(base, tokenizer, targets.items, spec, n_frozen)
    points = [CurvePoint(size or 0, np.full(len(targets.items), np.nan)) for size in sizes]
    for fold in range(folds):
        train_all = np.flatnonzero(assignment != fold).tolist()
        test = np.flatnonzero(assignment == fold).tolist()
        for point, size in zip(points, sizes, strict=True):
            chosen = train_all if size is None else groups_first(train_all, targets, size, seed + fold)
            subset = _subset(targets, chosen)
            if len(chosen) < MIN_LABELLED or np.ptp(subset.labels) == 0:
                continue  # too few or constant labels in this fold at this size: no prediction
            started = time.perf_counter()
            trained = train_scorer(spec, subset, below=[below[i] for i in chosen])
            point.predictions[test] = predict_from_below(trained.scorer, [below[i] for i in test], n_frozen,
                                                         spec.batch_size)
            point.train_sizes.append(len(chosen))
            point.train_seconds.append(time.perf_counter() - started)
            if on_fold:
                on_fold(fold, len(chosen), point.train_seconds[-1])
    for point, size in zip(points, sizes, strict=True):
        point.size = size if size is not None else int(np.mean(point.train_sizes or [0]))
    return points


def _subset(targets: Targets, indices: Sequence[int]) -> Targets:
    return Targets(tuple(targets.items[i] for i in indices), targets.labels[list(indices)],
                   targets.humans[list(indices)], targets.origin)


def agreement(predictions: np.ndarray, reference: np.ndarray, targets: Targets, *,
              n_resamples: int = 1000) -> dict[str, Any]:
    """Spearman/Kendall/Pearson at dataset and group level, over items with both values, as JSON-ready dicts."""
    keep = np.isfinite(predictions) & np.isfinite(reference)
    if keep.sum() < 3:
        return {"unavailable": f"only {int(keep.sum())} items with both a prediction and a reference score"}
    groups = [item.group for item, k in zip(targets.items, keep, strict=True) if k]
    result = correlations(reference[keep], predictions[keep], groups, levels=("dataset", "group"),
                          n_resamples=n_resamples)
    return {level: {method: estimate.to_dict() for method, estimate in by_method.items()}
            for level, by_method in result.items()}


def stack_cv(base: np.ndarray, features: np.ndarray, targets: Targets, *, folds: int = 5,
             seed: int = 0) -> np.ndarray:
    """Out-of-fold predictions of the stacker ``--stack`` uses (``judges.stacking.fit_stacker``:
    non-negative ridge, penalty or a single member chosen by group-wise cross-validation inside
    the training folds) over [the cross-encoder's out-of-fold score, extra features] (similarity
    features, LLM judge scores), with the same group folds as ``cross_validate``.

    Standard stacking: the base scores of the training folds are themselves out-of-fold, so the
    stacker learns how far to trust the cross-encoder on items it did not train on.
    """
    from judgelab.judges.stacking import fit_stacker, predict_stacked

    inputs = np.column_stack([base, features])
    if not np.isfinite(inputs).all():
        raise DataError("stacking needs every input for every item; some are missing (NaN)")
    assignment = fold_of(targets, folds, seed)
    groups = np.array([item.group for item in targets.items], dtype=object)
    stacked = np.full(len(targets.items), np.nan)
    for fold in range(folds):
        train, test = assignment != fold, assignment == fold
        learned = fit_stacker(inputs[train], targets.labels[train], groups[train], folds=folds)
        stacked[test] = predict_stacked(learned, inputs[test])
    return stacked
