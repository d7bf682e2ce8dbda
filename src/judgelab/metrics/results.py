"""Result objects every metric returns: a value, its interval, and what it was computed on."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.metrics.bootstrap import percentile_ci

# Why a group (or the whole sample) gives no correlation. Stable strings: they are JSON keys.
FEWER_THAN_2 = "fewer than 2 items"
CONSTANT_HUMAN = "constant human"
CONSTANT_JUDGE = "constant judge"


def json_number(value: float | None) -> float | None:
    """JSON has no NaN: an undefined statistic is written as null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


@dataclass(frozen=True)
class Skipped:
    group: str
    reason: str


@dataclass(frozen=True)
class Estimate:
    """One statistic with its bootstrap interval.

    ``n`` is the sample size the statistic was computed on (items; systems at system level;
    item pairs for pairwise agreement), ``n_groups`` the groups used, ``skipped`` the groups left
    out and why (``n_groups_skipped`` in JSON). ``reason`` says why ``value`` is NaN when it is. ``resamples`` keeps the bootstrap
    replicates so that sums (Active-Critic's Q) and paired differences reuse them; it is not
    serialised.
    """

    statistic: str
    level: str
    value: float
    ci: tuple[float, float] | None = None
    n: int = 0
    n_groups: int | None = None
    skipped: tuple[Skipped, ...] = ()
    reason: str | None = None
    resamples: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: How the statistic counts an edge case, stated wherever it is shown (pairwise accuracy: "ties count half").
    rule: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": json_number(self.value),
            "ci": [json_number(self.ci[0]), json_number(self.ci[1])] if self.ci else None,
            "n": self.n,
        }
        if self.n_groups is not None:
            out["n_groups"] = self.n_groups
        if self.skipped:
            out["skipped"] = skipped_by_reason(self.skipped)
            out["n_groups_skipped"] = len(self.skipped)
        if self.reason:
            out["reason"] = self.reason
        if self.rule:
            out["rule"] = self.rule
        return out


def skipped_by_reason(skipped: tuple[Skipped, ...]) -> dict[str, list[str]]:
    by_reason: dict[str, list[str]] = {}
    for entry in skipped:
        by_reason.setdefault(entry.reason, []).append(entry.group)
    return by_reason


def undefined_reason(human: np.ndarray, judge: np.ndarray) -> str | None:
    """Why a correlation of these two samples is undefined, or None when it is defined."""
    if len(human) < 2:
        return FEWER_THAN_2
    if np.all(human == human[0]):
        return CONSTANT_HUMAN
    if np.all(judge == judge[0]):
        return CONSTANT_JUDGE
    return None


def combine(estimates: list[Estimate], statistic: str, reduce, confidence: float = 0.95, *,
            same_sample: bool = False) -> Estimate:
    """An estimate derived from others (a sum, a mean), with its interval from the combined
    replicates: replicate ``r`` of the result is ``reduce`` of replicate ``r`` of each input.

    ``same_sample``: the inputs were computed on the same items (Active-Critic's Q), so ``n`` is
    theirs rather than their total (AEOLLM's mean over subtasks)."""
    values = np.array([e.value for e in estimates])
    resamples = None
    replicates = [e.resamples for e in estimates if e.resamples is not None]
    if len(replicates) == len(estimates):
        resamples = reduce(np.stack(replicates), axis=0)
    n_groups = [e.n_groups for e in estimates]
    if same_sample:
        n, groups = estimates[0].n, n_groups[0]
    else:
        counted = [g for g in n_groups if g is not None]
        n, groups = sum(e.n for e in estimates), sum(counted) if len(counted) == len(n_groups) else None
    return Estimate(statistic=statistic, level=estimates[0].level, value=float(reduce(values)),
                    ci=percentile_ci(resamples, confidence), n=n, n_groups=groups, resamples=resamples)
