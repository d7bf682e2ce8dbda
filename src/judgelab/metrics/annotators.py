"""Inter-annotator agreement: how far the humans agree with each other, the ceiling a judge can reach.

Krippendorff's alpha over every annotator (the ``krippendorff`` package; it handles missing
labels, so each item counts with however many annotators labelled it) on the items at least two
annotators labelled, with a bootstrap interval over those items; and Cohen's kappa for each pair
of annotators on the items both labelled (scikit-learn; quadratic weights too on an ordered scale).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np

from judgelab.metrics.agreement import AlphaLevel
from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
from judgelab.metrics.results import Estimate, json_number

NO_OVERLAP = "no item was labelled by two annotators"
ONE_VALUE = "every label has the same value"


@dataclass(frozen=True)
class PairAgreement:
    """Cohen's kappa of two annotators on the ``n`` items both labelled (None when undefined)."""

    annotators: tuple[str, str]
    n: int
    kappa: float | None
    kappa_quadratic: float | None  # None on a nominal scale
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"annotators": list(self.annotators), "n": self.n, "kappa": json_number(self.kappa),
               "kappa_quadratic": json_number(self.kappa_quadratic)}
        return out | ({"reason": self.reason} if self.reason else {})


@dataclass(frozen=True)
class AnnotatorAgreement:
    annotators: list[str]
    labels_per_annotator: dict[str, int]
    n_items: int  # items anyone labelled
    n_overlap: int  # items two or more annotators labelled
    level: AlphaLevel
    alpha: Estimate
    pairs: list[PairAgreement]

    def to_dict(self) -> dict[str, Any]:
        return {"annotators": self.annotators, "labels_per_annotator": self.labels_per_annotator,
                "n_items": self.n_items, "n_overlap": self.n_overlap, "level": self.level,
                "alpha": self.alpha.to_dict(), "pairs": [pair.to_dict() for pair in self.pairs]}


def annotator_agreement(values, annotators: Sequence[str], *, level: AlphaLevel = "ordinal",
                        n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> AnnotatorAgreement:
    """Agreement of the rows of ``values`` (annotators x items, NaN where an annotator gave no label)."""
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != len(annotators):
        raise ValueError("values must be an (annotators x items) array with one row per annotator")
    labelled = np.isfinite(matrix)
    overlap = matrix[:, labelled.sum(axis=0) >= 2]
    alpha = _alpha_estimate(overlap, level, n_resamples, seed, confidence)
    scale = np.unique(matrix[labelled])
    pairs = [_pair(matrix, annotators, i, j, scale, level) for i, j in itertools.combinations(range(len(annotators)), 2)]
    return AnnotatorAgreement(annotators=list(annotators),
                              labels_per_annotator={name: int(n) for name, n in zip(annotators, labelled.sum(axis=1),
                                                                                   strict=True)},
                              n_items=int(labelled.any(axis=0).sum()), n_overlap=overlap.shape[1], level=level,
                              alpha=alpha, pairs=pairs)


def _alpha(matrix: np.ndarray, level: AlphaLevel) -> float:
    values = matrix[np.isfinite(matrix)]
    if matrix.shape[1] == 0 or len(np.unique(values)) < 2:
        return float("nan")  # krippendorff raises on a single value
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def _alpha_estimate(overlap: np.ndarray, level: AlphaLevel, n_resamples: int, seed: int,
                    confidence: float) -> Estimate:
    n = overlap.shape[1]
    value = _alpha(overlap, level)
    reason = NO_OVERLAP if n == 0 else ONE_VALUE if not np.isfinite(value) else None
    resamples = None
    if reason is None and n_resamples > 0:
        # Resample items: each replicate is alpha on the items drawn (with repeats).
        def replicate(counts: np.ndarray) -> np.ndarray:
            return np.array([_alpha(np.repeat(overlap, row.astype(int), axis=1), level) for row in counts])

        resamples = GroupBootstrap(n, n_resamples, seed).replicate(replicate)
    return Estimate(statistic="alpha", level="item", value=value, n=n,
                    ci=percentile_ci(resamples, confidence) if resamples is not None else None,
                    reason=reason, resamples=resamples)


def _pair(matrix: np.ndarray, annotators: Sequence[str], i: int, j: int, scale: np.ndarray,
          level: AlphaLevel) -> PairAgreement:
    from sklearn.metrics import cohen_kappa_score  # slow import: only when used

    both = np.isfinite(matrix[i]) & np.isfinite(matrix[j])
    names = (annotators[i], annotators[j])
    if both.sum() < 2:
        return PairAgreement(names, int(both.sum()), None, None, "fewer than 2 shared items")
    # Codes 0..k-1 in value order: sklearn takes classes, and quadratic weights use their order.
    first, second = np.searchsorted(scale, matrix[i, both]), np.searchsorted(scale, matrix[j, both])
    if len(np.union1d(first, second)) < 2:
        return PairAgreement(names, int(both.sum()), None, None, ONE_VALUE)  # kappa would be 0/0
    codes = list(range(len(scale)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # chance agreement of 1 (e.g. one class each): kappa undefined
        kappa = float(cohen_kappa_score(first, second, labels=codes))
        weighted = None if level == "nominal" else float(cohen_kappa_score(first, second, labels=codes,
                                                                           weights="quadratic"))
    reason = None if np.isfinite(kappa) else "chance agreement is total"
    return PairAgreement(names, int(both.sum()), kappa if reason is None else None,
                         weighted if weighted is not None and np.isfinite(weighted) else None, reason)


def relabelled_by_file(items: Sequence[Any], human: Any, aspect: str | None,
                       seed: int = 0) -> tuple[list[Any], str | None, dict[str, Any]]:
    """``meta --human LABELS``: the items with the file's labels as their human values (for ``aspect``, else the
    one the file names), that aspect, and what the file holds: its annotators and, with two or more, how far
    they agree (the ceiling for the judge; ``human_labels`` in meta's result)."""
    from judgelab.data.labels import label_matrix, labels_aspect, load_labels, with_human_labels

    labels = load_labels(human)
    aspect = labels_aspect(labels, aspect)
    relabelled = with_human_labels(items, labels, aspect)
    annotators, item_ids, matrix = label_matrix(labels, aspect)  # type: ignore[arg-type]
    section: dict[str, Any] = {"file": str(human), "annotators": len(annotators), "labelled_items": len(item_ids)}
    if len(annotators) >= 2:
        pairwise = any(item.kind == "pairwise" for item in relabelled)
        agreement = annotator_agreement(matrix, annotators, level="nominal" if pairwise else "ordinal", seed=seed)
        section["inter_annotator"] = {"n_overlap": agreement.n_overlap, "alpha": agreement.alpha.to_dict()}
    return relabelled, aspect, section
