"""Agreement on labels (specs/metrics.md, seed 003): accuracy, Cohen's kappa raw and binarised at
each cut of an ordinal scale, Krippendorff's alpha, and the confusion matrix.

Point estimates come from scikit-learn (``accuracy_score``, ``cohen_kappa_score``) and the
``krippendorff`` package. Bootstrap replicates are computed from resampled confusion matrices
(``counts @ per-group confusion matrices``): a resample with repeated items has exactly the
confusion matrix of its expanded item list, and kappa and alpha are functions of that matrix
alone (the tests check them against sklearn and krippendorff on expanded resamples).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import krippendorff
import numpy as np

from judgelab.metrics.bootstrap import GroupBootstrap, group_codes, percentile_ci
from judgelab.metrics.results import Estimate

AlphaLevel = Literal["nominal", "ordinal", "interval"]
MAX_LABELS = 64


@dataclass(frozen=True)
class LabelAgreement:
    """``estimates``: accuracy, kappa, kappa_cut_<c> for each cut, alpha. ``labels`` index the
    rows (human) and columns (judge) of ``confusion``."""

    estimates: dict[str, Estimate]
    labels: tuple
    confusion: np.ndarray

    def __getitem__(self, key: str) -> Estimate:
        return self.estimates[key]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: e.to_dict() for name, e in self.estimates.items()}
        out["confusion_matrix"] = {"labels": [_plain(v) for v in self.labels],
                                   "rows": "human", "columns": "judge",
                                   "matrix": self.confusion.astype(int).tolist()}
        return out


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    return int(value) if isinstance(value, float) and value.is_integer() else value


def cut_points(labels) -> list:
    """Thresholds of an ordinal scale: every label but the lowest (binarise at label >= cut)."""
    return list(sorted(labels))[1:]


# -- statistics of a confusion matrix, vectorised over a leading resample axis -------------------
def _kappa(tables: np.ndarray) -> np.ndarray:
    total = tables.sum(axis=(1, 2))
    observed = np.trace(tables, axis1=1, axis2=2) / total
    expected = np.einsum("bi,bi->b", tables.sum(axis=2), tables.sum(axis=1)) / total**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)


def _binarised(tables: np.ndarray, labels: np.ndarray, cut) -> np.ndarray:
    high = labels >= cut
    rows = np.stack([tables[:, ~high].sum(axis=1), tables[:, high].sum(axis=1)], axis=1)
    return np.stack([rows[:, :, ~high].sum(axis=2), rows[:, :, high].sum(axis=2)], axis=2)


def _squared_distances(level: AlphaLevel, labels: np.ndarray, pairable: np.ndarray) -> np.ndarray:
    """Krippendorff's metric delta^2 between every two labels, per resample: ``(b, k, k)``."""
    k = len(labels)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(k), (len(pairable), k, k))
    if level == "interval":
        diff = labels.astype(float)[:, None] - labels.astype(float)[None, :]
        return np.broadcast_to(diff**2, (len(pairable), k, k))
    # ordinal: (sum of n_g for g between c and k inclusive - (n_c + n_k) / 2) ** 2
    cum = np.concatenate([np.zeros((len(pairable), 1)), np.cumsum(pairable, axis=1)], axis=1)
    lo, hi = np.minimum.outer(np.arange(k), np.arange(k)), np.maximum.outer(np.arange(k), np.arange(k))
    between = cum[:, hi + 1] - cum[:, lo]
    return (between - (pairable[:, :, None] + pairable[:, None, :]) / 2) ** 2


def _alpha(tables: np.ndarray, labels: np.ndarray, level: AlphaLevel) -> np.ndarray:
    # Two coders per unit: the coincidence matrix is the confusion matrix plus its transpose.
    coincidences = tables + tables.transpose(0, 2, 1)
    pairable = coincidences.sum(axis=2)
    distance = _squared_distances(level, labels, pairable)
    observed = np.einsum("bij,bij->b", coincidences, distance)
    expected = np.einsum("bi,bj,bij->b", pairable, pairable, distance)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 - (pairable.sum(axis=1) - 1) * observed / expected


def _statistics(tables: np.ndarray, labels: np.ndarray, level: AlphaLevel, cuts: list) -> np.ndarray:
    """Columns: accuracy, kappa, one kappa per cut, alpha."""
    accuracy = np.trace(tables, axis1=1, axis2=2) / tables.sum(axis=(1, 2))
    cut_kappas = [_kappa(_binarised(tables, labels, cut)) for cut in cuts]
    return np.stack([accuracy, _kappa(tables), *cut_kappas, _alpha(tables, labels, level)], axis=1)


# -- point estimates with the reference libraries ----------------------------------------------
def _reference_values(human, judge, level: AlphaLevel, cuts: list) -> list[float]:
    from sklearn.metrics import accuracy_score, cohen_kappa_score  # slow import: only when used

    def kappa(first, second) -> float:  # one label in both: undefined (NaN), which scikit-learn warns of
        return cohen_kappa_score(first, second) if len(np.unique(np.concatenate([first, second]))) > 1 else np.nan

    values = [accuracy_score(human, judge), kappa(human, judge)]
    values += [kappa(human >= cut, judge >= cut) for cut in cuts]
    if len(np.unique(np.concatenate([human, judge]))) < 2:
        values.append(float("nan"))  # krippendorff raises on a single value
    else:
        values.append(krippendorff.alpha(reliability_data=np.vstack([human, judge]),
                                         level_of_measurement=level))
    return [float(v) for v in values]


def label_agreement(human, judge, groups=None, *, level_of_measurement: AlphaLevel = "ordinal",
                    n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> LabelAgreement:
    """Accuracy, kappa (raw and at each cut), alpha and the confusion matrix of two label arrays.

    Labels must be numeric (an ordinal scale such as TREC's 0-3). Cuts are every label but the
    lowest present in either array: ``kappa_cut_2`` is kappa on (label >= 2) vs (label >= 2).
    The bootstrap resamples groups (e.g. queries) when given.
    """
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if len(human) == 0:
        raise ValueError("no labels to compare")
    labels = np.unique(np.concatenate([human, judge]))
    if len(labels) > MAX_LABELS:
        raise ValueError(f"label agreement needs a small label scale; got {len(labels)} distinct values")
    cuts = cut_points(labels)
    names = ["accuracy", "kappa", *[f"kappa_cut_{_plain(c)}" for c in cuts], "alpha"]
    values = _reference_values(human, judge, level_of_measurement, cuts)

    codes, group_labels = (np.arange(len(human)), None) if groups is None else group_codes(groups)
    n_groups = len(human) if group_labels is None else len(group_labels)
    cell = np.searchsorted(labels, human) * len(labels) + np.searchsorted(labels, judge)
    per_group = np.zeros((n_groups, len(labels) ** 2))
    np.add.at(per_group, (codes, cell), 1.0)

    def resampled(counts):
        tables = (counts @ per_group).reshape(len(counts), len(labels), len(labels))
        return _statistics(tables, labels, level_of_measurement, cuts)

    resamples = GroupBootstrap(n_groups, n_resamples, seed).replicate(resampled)
    estimates = {
        name: Estimate(statistic=name, level="dataset", value=values[k], n=len(human), n_groups=n_groups,
                       ci=percentile_ci(resamples[:, k], confidence) if resamples is not None else None,
                       resamples=resamples[:, k] if resamples is not None else None)
        for k, name in enumerate(names)
    }
    # the cells counted above (scikit-learn's confusion_matrix warns when both sides hold one label)
    matrix = per_group.sum(axis=0).reshape(len(labels), len(labels)).astype(np.int64)
    return LabelAgreement(estimates, tuple(labels.tolist()), matrix)

