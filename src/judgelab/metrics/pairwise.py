"""Pairwise views (specs/metrics.md; seed 002 "Pairwise Agreement", AEOLLM accuracy, LLMBar).

* ``pairwise_agreement``: a pointwise judge's scores turned into win / tie / lose for every pair
  of outputs to the same source, compared with the humans' outcome for the same pair.
* ``pairwise_accuracy``: a pairwise judge's verdicts against the preferred output, and, with
  position swapping, how often the two presentation orders agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypedDict

import numpy as np

from judgelab.metrics.bootstrap import GroupBootstrap, group_codes, percentile_ci
from judgelab.metrics.results import FEWER_THAN_2, Estimate, Skipped

Average = Literal["pairs", "groups"]
Ties = Literal["half", "wrong"]
TIES = ("half", "wrong")
#: How each ``ties`` rule is stated next to the accuracy it produced (tables, JSON ``rule``).
TIE_RULES = {"half": "ties count half", "wrong": "ties count wrong"}


class _Agreement(TypedDict):
    """The fields pairwise agreement's estimate has, whether its value is defined or not."""

    statistic: str
    level: str
    n: int
    n_groups: int
    skipped: tuple[Skipped, ...]


def _group_agreement(human: np.ndarray, judge: np.ndarray) -> tuple[int, int]:
    """(pairs whose outcome matches, pairs) among the items of one group."""
    upper = np.triu_indices(len(human), k=1)
    human_outcome = np.sign(human[:, None] - human[None, :])[upper]
    judge_outcome = np.sign(judge[:, None] - judge[None, :])[upper]
    return int(np.sum(human_outcome == judge_outcome)), len(human_outcome)


def pairwise_agreement(human, judge, groups, *, average: Average = "pairs", n_resamples: int = 1000,
                       seed: int = 0, confidence: float = 0.95) -> Estimate:
    """Share of same-group pairs on whose outcome (win / tie / lose) judge and humans agree.

    ``average="pairs"`` pools all pairs (HPSS's Pairwise Agreement); ``average="groups"`` takes
    the share within each group, then the mean over groups (per-question accuracy). ``n`` is the
    number of pairs; groups with fewer than 2 items have no pair and are skipped.
    """
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    codes, labels = group_codes(groups)
    matches, pairs = np.zeros(len(labels)), np.zeros(len(labels))
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=len(labels))
    starts = np.cumsum(sizes) - sizes
    for g in np.flatnonzero(sizes >= 2):
        members = order[starts[g]:starts[g] + sizes[g]]
        matches[g], pairs[g] = _group_agreement(human[members], judge[members])
    used = pairs > 0
    skipped = tuple(Skipped(str(labels[g]), FEWER_THAN_2) for g in np.flatnonzero(~used))
    common: _Agreement = {"statistic": "pairwise_agreement", "level": "group", "n": int(pairs.sum()),
                          "n_groups": int(used.sum()), "skipped": skipped}
    if not used.any():
        return Estimate(value=float("nan"), reason="no group with 2 or more items", **common)
    if average == "pairs":
        numerator, denominator = matches, pairs
    else:
        numerator, denominator = np.where(used, matches / np.maximum(pairs, 1), 0.0), used.astype(float)

    def resampled(counts):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts @ numerator) / (counts @ denominator)

    resamples = GroupBootstrap(len(labels), n_resamples, seed).replicate(resampled)
    return Estimate(value=float(numerator.sum() / denominator.sum()), resamples=resamples,
                    ci=percentile_ci(resamples, confidence), **common)


def _share(matches: np.ndarray, statistic: str, groups, n_resamples, seed, confidence, rule=None) -> Estimate:
    """Mean of a per-item credit (0, 1, or 0.5 for a half-credited tie), with a (cluster) bootstrap interval."""
    codes, labels = (np.arange(len(matches)), np.arange(len(matches))) if groups is None else group_codes(groups)
    hits = np.bincount(codes, weights=matches.astype(float), minlength=len(labels))
    sizes = np.bincount(codes, minlength=len(labels)).astype(float)
    resamples = GroupBootstrap(len(labels), n_resamples, seed).replicate(
        lambda counts: (counts @ hits) / (counts @ sizes))
    return Estimate(statistic=statistic, level="dataset", value=float(matches.mean()), n=len(matches),
                    n_groups=len(labels), ci=percentile_ci(resamples, confidence), resamples=resamples, rule=rule)


def accuracy_credit(preferred, verdict, ties: Ties = "half") -> np.ndarray:
    """Per item: 1 for the preferred output, 0 for the other; a ``tie`` verdict on an item with a
    preference gets 0.5 (``ties="half"``, LLMBar's averaging over the two orders) or 0 (``"wrong"``)."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    preferred, verdict = np.asarray(preferred, dtype=object), np.asarray(verdict, dtype=object)
    credit = (verdict == preferred).astype(float)
    if ties == "half":
        credit[(verdict == "tie") & (preferred != "tie")] = 0.5
    return credit


def pairwise_accuracy(preferred: Sequence[str] | np.ndarray, verdict: Sequence[str] | np.ndarray,
                      verdict_swapped: Sequence[str] | np.ndarray | None = None, groups=None, *,
                      ties: Ties = "half", n_resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict[str, Estimate]:
    """Accuracy of pairwise verdicts ("a" / "b" / "tie") against the preferred output.

    ``ties``: what a ``tie`` verdict (e.g. the two presentation orders disagreed) earns on an item
    with a preference: ``half`` a point (LLMBar, which averages the two orders) or nothing
    (``wrong``); the estimate's ``rule`` says which. With ``verdict_swapped`` (the verdict when the
    two outputs were shown in the other order, already mapped back to the original names, so "a"
    still means ``output_a``), also ``positional_consistency``: the share of items where both
    orders give the same verdict.
    """
    preferred, verdict = np.asarray(preferred, dtype=object), np.asarray(verdict, dtype=object)
    if len(preferred) == 0:
        raise ValueError("no verdicts to score")
    options = {"groups": groups, "n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    out = {"accuracy": _share(accuracy_credit(preferred, verdict, ties), "accuracy", rule=TIE_RULES[ties], **options)}
    if verdict_swapped is not None:
        consistent = verdict == np.asarray(verdict_swapped, dtype=object)
        out["positional_consistency"] = _share(consistent, "positional_consistency", **options)
    return out
