"""Which ranking of systems to recommend: the shrunk one, or the labels' own, checked on the labels.

``shrunk`` (Fay-Herriot, :func:`judgelab.evaluate.shrinkage.shrunk`) pulls each system toward a
smooth curve in the judge's system means. That ranks better than the labels alone when the judge
orders systems well, and worse when it does not; with six systems and a handful of labels each the
model cannot always tell (docs/evaluate.md). So the choice is checked on the labels themselves, by sample
splitting: each system's labels are halved at random; three rankings are fitted on one half and
scored against the other half's means, both ways round: shrunk, the labels' own means (human-only)
and corrected (the judge's mean over all the system's items times lambda, plus the half's mean of
human - lambda x judge, lambda refitted on the half). The halves are independent, so this compares
the rankings on labels none was fitted on. Averaged over ``splits`` random halvings, shrunk is kept
unless the labels' own means score higher; then corrected if it scores above them, else human-only
(PPI++'s lambda fitted on a dozen labels can rank worse than the labels alone: Topical-Chat
understandability, 0.52 against 0.62 at 5% labels).

The score of a half's ranking ``e`` against the other half's means ``h`` is a weighted concordance,
``sum over pairs sign(e_s - e_t) (h_s - h_t) / sum |h_s - h_t|``: a pair counts by how far apart the
held-out half puts it, so two systems the held-out half can barely tell apart (one or two labels
each) move the score little, where Kendall tau counted their coin-flip order in full. Its
expectation is the same weighted concordance with the true means. Chosen over Kendall tau on HANNA
coherence and engagement (bench/ablation_choose.py; docs/benchmarks.md). A squared error of the
values was tried before that: shrinkage lowers each value's error while it can scramble the order
inside groups, so it kept shrunk where its ranking was worse.

Comparisons (evaluate/preferences.py) share :func:`choose_by_halves`: the rule before this one,
Kendall tau on the halves, shrunk or corrected; the items' rule was not measured on them.

**Provisional below MIN_LABELS_PER_SYSTEM labels per system.** With fewer, no rule we measured kept
the recommended ranking within 0.03 Kendall tau of the better of the judge's own and the labels'
own in every cell: the per-judge benchmark missed that goal in 10 of its 24 cells below 8 labels per system
(HANNA 3.4 and 6.7, Topical-Chat 2.2 and 4.3; by up to 0.10) and in none of the 24 above (8.5-26.8).
The reason is in the labels, not the rule: on Topical-Chat at 2 labels per system the judge's
agreement with the labels is alike where it orders close systems right (coherence, judge tau 0.73)
and where it reverses them (engagingness, 0.20), yet the first needs the judge's ranking and the
second the labels'. A chooser learned from every statistic the check and a parametric bootstrap
compute (bench/ablation_evidence.py, the scored aspect left out) still missed 6 of the 24 cells
under 8 labels per system, coherence at 5% by 0.10; the check misses 7. So the choice stands,
flagged ``provisional``, with how many more labels the minimum needs.

Why a split and not the model's own fit: the model's tau^2 cannot see a judge whose errors follow
the line (a good fit of the wrong shape); a held-out half can. Hand-written because it is a few
lines over the estimators here; no library splits a stratified design.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from judgelab.evaluate.calibrate import within_slope
from judgelab.evaluate.design import Design
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.shrinkage import SHRINK_RULE, fay_herriot

SPLITS = 30
MIN_LABELS_PER_SYSTEM = 8  # below it the recommended ranking is provisional (see the docstring)


@dataclass(frozen=True)
class Choice:
    """The recommended estimator (``"shrunk"``, ``"corrected"`` or ``"human"``) and why."""

    estimator: str
    # mean score against the held-out halves, per ranking (None: not checked or not scored)
    score_shrunk: float | None
    score_labels: float | None
    splits: int
    reason: str
    score_corrected: float | None = None
    score: str = "Kendall tau"  # comparisons (choose_by_halves); items: "weighted concordance"
    labels_per_system: float | None = None  # mean over the systems with a judge mean (items)
    provisional: str | None = None  # why the ranking is not to be relied on yet (too few labels per system)

    def to_dict(self) -> dict:
        return {"estimator": self.estimator, "score": self.score, "score_shrunk": self.score_shrunk,
                "score_labels": self.score_labels, "score_corrected": self.score_corrected, "splits": self.splits,
                "reason": self.reason, "labels_per_system": self.labels_per_system, "provisional": self.provisional}

    def flagged(self, per_system: float, n_systems: int) -> Choice:
        """This choice with its labels per system, provisional below :data:`MIN_LABELS_PER_SYSTEM`."""
        return replace(self, labels_per_system=float(per_system),
                       provisional=provisional_reason(per_system, n_systems))


def provisional_reason(per_system: float, n_systems: int) -> str | None:
    """Why a ranking from ``per_system`` labels per system (mean over ``n_systems``) is provisional;
    None from the minimum on."""
    if per_system >= MIN_LABELS_PER_SYSTEM:
        return None
    more = math.ceil(MIN_LABELS_PER_SYSTEM - per_system - 1e-9)
    return (f"{per_system:.1f} labels per system: below {MIN_LABELS_PER_SYSTEM}, the recommended ranking trailed "
            "the better of the judge's own and the labels' own by up to 0.10 Kendall tau on HANNA and Topical-Chat, "
            "and the labels cannot tell whether the judge orders close systems right; label about "
            f"{more} more per system ({more * n_systems} in all) before relying on it")


def choose_ranking(problem: Problem, design: Design, judge_means: np.ndarray, *, calibration: str = "identity",
                   rule: str = SHRINK_RULE, splits: int = SPLITS, seed: int = 0) -> Choice:
    """Shrunk, human-only or corrected, by the split-half check of the module's docstring.

    ``calibration``: the map the corrected estimate used (its ``info["calibration"]``): ``identity``
    keeps lambda = 1 on the halves; any other is refitted on each half as the within-system slope
    (the pooled PPI++ lambda; a stand-in for an isotonic map, which a half's labels cannot fit).
    ``rule``: shrunk's trend in the judge's means (:func:`judgelab.evaluate.shrinkage.shrunk`)."""
    labelled = design.labelled[:, None] & problem.present & np.isfinite(problem.human)
    units, systems = np.nonzero(labelled)
    counts = np.bincount(systems, minlength=len(problem.systems))
    ranked = np.isfinite(judge_means)
    per_system = counts[ranked].mean() if ranked.any() else 0.0
    return _checked(problem, design, judge_means, units, systems, counts, calibration, rule, splits,
                    seed).flagged(per_system, int(ranked.sum()))


def _checked(problem, design, judge_means, units, systems, counts, calibration, rule, splits, seed) -> Choice:
    if design.method != "stratified":
        return _unchecked(f"not checked: the labels were drawn by a {design.method} design")
    values = problem.human[units, systems]
    usable = (counts >= 2) & np.isfinite(judge_means)
    if usable.sum() < 3:
        return _unchecked("not checked: fewer than three systems have two labels")
    means = np.bincount(systems, values, minlength=len(counts)) / np.maximum(counts, 1)
    residual = values - means[systems]
    df = int(counts[usable].sum() - usable.sum())
    pooled = float(residual[usable[systems]] @ residual[usable[systems]]) / max(df, 1)
    if not pooled > 0:
        return _unchecked("not checked: the labels show no spread within systems")
    # a labelled item without a verdict: the system's judge mean (its error term then has no judge part)
    judged = np.where(np.isfinite(problem.judge[units, systems]), problem.judge[units, systems],
                      judge_means[systems])
    pairs = _Pairs(values, systems, judged, 1.0 / design.probability[units], usable, judge_means, pooled,
                   calibration != "identity", rule)
    rng = np.random.default_rng(seed)
    scores = np.array([pairs.split_scores(rng) for _ in range(splits)])
    scores = scores[np.isfinite(scores[:, :2]).all(axis=1)]
    if len(scores) == 0:
        return _unchecked("not checked: no split ranked three systems")
    shrink, labels, fixed = np.nanmean(scores, axis=0)
    estimator = "shrunk" if shrink >= labels else "corrected" if fixed > labels else "human"
    reason = _reason(estimator, len(scores), shrink, labels, fixed)
    return Choice(estimator, float(shrink), float(labels), len(scores), reason, float(fixed), "weighted concordance")


def _unchecked(reason: str, score: str = "weighted concordance") -> Choice:
    return Choice("shrunk", None, None, 0, reason, score=score)


def _reason(estimator: str, splits: int, shrink: float, labels: float, fixed: float) -> str:
    head = f"on {splits} random halvings of each system's labels, "
    scores = (f"(weighted concordance {shrink:.3f} shrunk, {labels:.3f} labels' means, "
              f"{'nan' if np.isnan(fixed) else f'{fixed:.3f}'} corrected)")
    if estimator == "shrunk":
        return head + f"the shrunk ranking of one half agreed better with the other half's than the labels' own {scores}"
    better = "corrected's agreed better still" if estimator == "corrected" else "corrected's did not"
    return (head + "the labels' own ranking of one half agreed better with the other half's than shrunk's, and "
            f"{better} {scores}")


@dataclass(frozen=True)
class _Pairs:
    """The labelled (item, system) pairs the check halves."""

    values: np.ndarray  # human value of each pair
    systems: np.ndarray  # its system
    judged: np.ndarray  # its judge value
    weights: np.ndarray  # 1 / inclusion probability (the within-system slope's weights)
    usable: np.ndarray  # (S,) systems with two labels and a judge mean
    judge_means: np.ndarray  # (S,) the judge's mean over all the system's items
    pooled: float  # within-system variance of the labels, pooled over systems
    slope: bool  # refit lambda on each half (else lambda = 1)
    rule: str  # shrunk's trend (shrinkage.fay_herriot): the one the full fit used

    def split_scores(self, rng: np.random.Generator) -> list[float]:
        """(shrunk's, the labels', corrected's) score against the other half, both ways round, averaged:
        each system's labels halved at random (one each way with two labels); the within-system variance
        is the pooled one of all labels (a half may hold one label per system)."""
        first = np.zeros(len(self.values), dtype=bool)
        for system in np.flatnonzero(self.usable):
            rows = np.flatnonzero(self.systems == system)
            first[rng.choice(rows, len(rows) // 2, replace=False)] = True
        return mean_scores([self._half(first), self._half(~first)])

    def _half(self, fit: np.ndarray) -> list[float]:
        usable, systems, values = self.usable, self.systems, self.values
        rows, held = fit & usable[systems], ~fit & usable[systems]
        n = np.bincount(systems[rows], minlength=len(usable)).astype(float)[usable]
        means = np.bincount(systems[rows], values[rows], minlength=len(usable))[usable] / n
        other = (np.bincount(systems[held], values[held], minlength=len(usable))[usable]
                 / np.bincount(systems[held], minlength=len(usable))[usable])
        pulled = fay_herriot(means, self.pooled / n, self.judge_means[usable], rule=self.rule, interval=False).value
        lam = (within_slope(self.judged[rows], values[rows], self.weights[rows], systems[rows])
               if self.slope else 1.0)
        error = np.bincount(systems[rows], values[rows] - lam * self.judged[rows], minlength=len(usable))[usable] / n
        fixed = lam * self.judge_means[usable] + error
        return [_concordance(pulled, other), _concordance(means, other), _concordance(fixed, other)]


def _concordance(estimate: np.ndarray, held: np.ndarray) -> float:
    """sum over pairs of sign(estimate_s - estimate_t) (held_s - held_t), over sum |held_s - held_t|."""
    upper = np.triu_indices(len(estimate), 1)
    signs = np.sign(estimate[:, None] - estimate[None, :])[upper]
    gaps = (held[:, None] - held[None, :])[upper]
    total = float(np.abs(gaps).sum())
    return float(signs @ gaps) / total if total > 0 else float("nan")


def choose_by_halves(split_scores: Callable[[], Sequence[float]], splits: int = SPLITS,
                     halved: str = "the labels") -> Choice:
    """Shrunk or corrected from ``splits`` calls of ``split_scores``, each a fresh random halving that
    returns (shrunk's, the labels') Kendall tau against the held-out half (NaN: not rankable). The
    comparisons' check (evaluate/preferences.py); items use :func:`choose_ranking`'s three-way rule."""
    scores = np.array([split_scores() for _ in range(splits)], dtype=float)
    scores = scores[np.isfinite(scores).all(axis=1)]
    if len(scores) == 0:
        return _unchecked("not checked: no split ranked three systems", "Kendall tau")
    shrink, labels = scores.mean(axis=0)
    keep = shrink >= labels
    if np.isclose(shrink, labels):  # a tie keeps shrunk; "agreed better" would read backwards
        reason = (f"on {len(scores)} random halvings of {halved}, the shrunk and labels-only rankings of one half "
                  f"agreed equally with the other half's (Kendall tau {shrink:.3f}): shrunk is kept on a tie")
    else:
        reason = (f"on {len(scores)} random halvings of {halved}, the {'shrunk' if keep else 'labels-only'} "
                  f"ranking of one half agreed better with the other half's (Kendall tau {max(shrink, labels):.3f} "
                  f"vs {min(shrink, labels):.3f})")
    return Choice("shrunk" if keep else "corrected", float(shrink), float(labels), len(scores), reason)


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
