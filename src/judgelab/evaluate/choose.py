"""Which ranking of systems to recommend: the shrunk one, or the labels' own, checked on the labels.

``shrunk`` (Fay-Herriot, :func:`judgelab.evaluate.estimators.shrunk`) pulls each system toward a
line through the judge's system means. That ranks better than the labels alone when the judge orders
systems well, and worse when it does not: on Topical-Chat, UniEval separates two groups of systems
but orders them wrongly inside each, a line fits the groups, and with six systems nothing in the
model can tell (docs/evaluate.md). So the choice is checked on the labels themselves, by sample
splitting: each system's labels are halved at random; the shrunk estimate and the labels' own
means are fitted on one half and ranked against the other half's means (Kendall tau, both ways
round). The halves are independent, so this compares the two rankings on labels neither was
fitted on. Averaged over ``splits`` random halvings; the shrunk ranking is kept unless the labels'
own agrees better. (A squared-error score was tried first: shrinkage lowers the error of each
system's value while it scrambles the order inside groups, so it kept shrunk where its ranking was
worse; the ranking is what is chosen, so the ranking is what is scored.)

Why a split and not the model's own fit: the model's tau^2 cannot see a judge whose errors follow
the line (a good fit of the wrong shape); a held-out half can. Hand-written because it is a few
lines over the estimators here; no library splits a stratified design.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from judgelab.evaluate.design import Design
from judgelab.evaluate.estimators import fay_herriot
from judgelab.evaluate.problem import Problem

SPLITS = 30


@dataclass(frozen=True)
class Choice:
    """The recommended estimator (``"shrunk"`` or ``"corrected"``) and why."""

    estimator: str
    tau_shrunk: float | None  # mean Kendall tau against the held-out halves (None: not checked)
    tau_labels: float | None
    splits: int
    reason: str

    def to_dict(self) -> dict:
        return {"estimator": self.estimator, "tau_shrunk": self.tau_shrunk, "tau_labels": self.tau_labels,
                "splits": self.splits, "reason": self.reason}


def choose_ranking(problem: Problem, design: Design, judge_means: np.ndarray, *, splits: int = SPLITS,
                   seed: int = 0) -> Choice:
    """Shrunk or corrected, by the split-half check of the module's docstring."""
    if design.method != "stratified":
        return Choice("shrunk", None, None, 0, f"not checked: the labels were drawn by a {design.method} design")
    labelled = design.labelled[:, None] & problem.present & np.isfinite(problem.human)
    _, systems = np.nonzero(labelled)
    values = problem.human[labelled.nonzero()]
    counts = np.bincount(systems, minlength=len(problem.systems))
    usable = (counts >= 2) & np.isfinite(judge_means)
    if usable.sum() < 3:
        return Choice("shrunk", None, None, 0, "not checked: fewer than three systems have two labels")
    means = np.bincount(systems, values, minlength=len(counts)) / np.maximum(counts, 1)
    residual = values - means[systems]
    df = int(counts[usable].sum() - usable.sum())
    pooled = float(residual[usable[systems]] @ residual[usable[systems]]) / max(df, 1)
    if not pooled > 0:
        return Choice("shrunk", None, None, 0, "not checked: the labels show no spread within systems")
    rng = np.random.default_rng(seed)
    return choose_by_halves(lambda: _split_scores(values, systems, usable, judge_means, pooled, rng), splits,
                            "each system's labels")


def choose_by_halves(split_scores: Callable[[], Sequence[float]], splits: int = SPLITS,
                     halved: str = "the labels") -> Choice:
    """Shrunk or corrected from ``splits`` calls of ``split_scores``, each a fresh random halving that
    returns (shrunk's, the labels') Kendall tau against the held-out half (NaN: not rankable)."""
    scores = np.array([split_scores() for _ in range(splits)], dtype=float)
    scores = scores[np.isfinite(scores).all(axis=1)]
    if len(scores) == 0:
        return Choice("shrunk", None, None, 0, "not checked: no split ranked three systems")
    shrink, labels = scores.mean(axis=0)
    keep = shrink >= labels
    reason = (f"on {len(scores)} random halvings of {halved}, the {'shrunk' if keep else 'labels-only'} "
              f"ranking of one half agreed better with the other half's (Kendall tau {max(shrink, labels):.3f} vs "
              f"{min(shrink, labels):.3f})")
    return Choice("shrunk" if keep else "corrected", float(shrink), float(labels), len(scores), reason)


def _split_scores(values: np.ndarray, systems: np.ndarray, usable: np.ndarray, judge_means: np.ndarray,
                  pooled: float, rng: np.random.Generator) -> np.ndarray:
    """(shrunk's, the labels') Kendall tau against the other half, both ways round, averaged: each
    system's labels halved at random (one each way with two labels); the within-system variance is
    the pooled one of all labels (a half may hold one label per system)."""
    first = np.zeros(len(values), dtype=bool)
    for system in np.flatnonzero(usable):
        rows = np.flatnonzero(systems == system)
        first[rng.choice(rows, len(rows) // 2, replace=False)] = True
    scores = []
    for fit in (first, ~first):
        rows = fit & usable[systems]
        held = ~fit & usable[systems]
        n = np.bincount(systems[rows], minlength=len(usable)).astype(float)[usable]
        means = np.bincount(systems[rows], values[rows], minlength=len(usable))[usable] / n
        other = (np.bincount(systems[held], values[held], minlength=len(usable))[usable]
                 / np.bincount(systems[held], minlength=len(usable))[usable])
        pulled = fay_herriot(means, pooled / n, judge_means[usable], interval=False).value
        scores.append([kendall_tau_b(pulled, other), kendall_tau_b(means, other)])
    return mean_scores(scores)


def mean_scores(scores: Sequence[Sequence[float]]) -> list[float]:
    """Both ways round averaged, per ranking; NaN where neither way ranked three systems."""
    table = np.array(scores, dtype=float)
    return [float(column[np.isfinite(column)].mean()) if np.isfinite(column).any() else float("nan")
            for column in table.T]


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two short vectors (scipy.stats.kendalltau's value): hand-written because
    scipy's costs ~0.5 ms a call in its argument handling, and the check makes 120 calls per evaluate."""
    upper = np.triu_indices(len(a), 1)
    x, y = np.sign(a[:, None] - a[None, :])[upper], np.sign(b[:, None] - b[None, :])[upper]
    denominator = np.sqrt(float(np.count_nonzero(x)) * float(np.count_nonzero(y)))
    return float(x @ y) / denominator if denominator > 0 else float("nan")
