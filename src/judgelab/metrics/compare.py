"""Is judge B really better than judge A? A paired bootstrap on the same items.

Both judges are scored on the items both of them scored, and every bootstrap replicate draws the
same groups for both (same seed, same groups: :class:`GroupBootstrap` is deterministic), so the
interval of the difference accounts for the items' shared difficulty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.metrics.bootstrap import Resampling, percentile_ci, two_sided_p_value
from judgelab.metrics.correlation import METHODS, correlations, groups_both_score
from judgelab.metrics.pairwise import Ties, pairwise_accuracy
from judgelab.metrics.results import Estimate, json_number


@dataclass(frozen=True)
class Comparison:
    """``difference`` = B - A, with its paired-bootstrap interval and two-sided p-value.

    A is the baseline, B the judge compared with it: ``to_dict`` names them ``baseline`` and
    ``judge`` (metrics.json files written before that say ``a`` and ``b``; ``sides`` reads both)."""

    statistic: str
    level: str
    a: Estimate
    b: Estimate
    difference: float
    ci: tuple[float, float] | None
    p_value: float
    #: Why there is no interval (a judge with an undefined statistic, e.g. constant, or no bootstrap).
    reason: str | None = None
    #: What the two were compared on, when it is not simply every item both scored (the group level).
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic, "level": self.level,
            "judge": self.b.to_dict(), "baseline": self.a.to_dict(),
            "difference": json_number(self.difference),
            "ci": [json_number(v) for v in self.ci] if self.ci else None,
            "p_value": json_number(self.p_value),
            **({"reason": self.reason} if self.reason else {}),
            **({"note": self.note} if self.note else {}),
        }


def sides(comparison: Mapping[str, Any]) -> tuple[Any, Any]:
    """(judge, baseline) of a comparison as JSON: ``judge``/``baseline``, or the older ``b``/``a``."""
    return comparison.get("judge", comparison.get("b")), comparison.get("baseline", comparison.get("a"))


def paired_difference(a: Estimate, b: Estimate, confidence: float = 0.95, note: str | None = None) -> Comparison:
    """Compare two estimates whose replicates came from the same resamples.

    An estimate without replicates (its statistic is undefined, e.g. a constant judge, or no
    bootstrap was asked for) gives the plain difference with no interval and the reason, not an error.
    """
    if a.resamples is None or b.resamples is None:
        reason = a.reason or b.reason or "no bootstrap replicates"
        return Comparison(a.statistic, a.level, a, b, b.value - a.value, None, float("nan"), reason, note)
    if len(a.resamples) != len(b.resamples):
        raise ValueError("paired comparison needs both estimates bootstrapped on the same resamples")
    differences = b.resamples - a.resamples
    return Comparison(a.statistic, a.level, a, b, b.value - a.value,
                      percentile_ci(differences, confidence), two_sided_p_value(differences), note=note)


def compare_judges(human, judge_a, judge_b, groups=None, systems=None, *, level: str = "dataset",
                   method: str = "spearman", n_resamples: int = 1000, seed: int = 0,
                   confidence: float = 0.95) -> Comparison:
    """Difference in correlation with humans between two judges' scores of the same items
    (B, the judge, minus A, the baseline): ``compare_scores`` for one level and method."""
    return compare_scores(human, judge_b, judge_a, groups, systems, levels=(level,), methods=(method,),
                          n_resamples=n_resamples, seed=seed, confidence=confidence)[level][method]


def compare_scores(human, judge, baseline, groups=None, systems=None, *, levels: Sequence[str] = ("dataset",),
                   methods: Sequence[str] = METHODS, n_resamples: int = 1000, seed: int = 0,
                   confidence: float = 0.95) -> dict[str, dict[str, Comparison]]:
    """``judge`` minus ``baseline`` in correlation with the humans, ``{level: {method: Comparison}}``.

    Both are scored on the same items (an item either has no score for, NaN, is left out for
    both) and, at the group level, on the same groups: a group where either judge gives every
    output the same score has no correlation for that judge, so it is left out for both (the
    comparison's ``note`` says how many and because of whom) rather than comparing one judge on 9
    groups with the other on 87.
    """
    human, judge, baseline = (np.asarray(v, dtype=float) for v in (human, judge, baseline))
    both = np.isfinite(human) & np.isfinite(judge) & np.isfinite(baseline)
    out: dict[str, dict[str, Comparison]] = {}
    for level in levels:
        keep, note = both, None
        if level == "group":
            if groups is None:
                raise ValueError("the group level needs groups")
            usable, dropped = groups_both_score(human[both], judge[both], baseline[both],
                                                np.asarray(groups, dtype=object)[both])
            keep = both.copy()
            keep[both] = usable
            note = _groups_note(np.asarray(groups, dtype=object)[keep], dropped)
        options: Resampling = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
        subset = [None if ids is None else np.asarray(ids, dtype=object)[keep] for ids in (groups, systems)]
        before = correlations(human[keep], baseline[keep], *subset, levels=[level], methods=methods,
                              **options)[level]
        after = correlations(human[keep], judge[keep], *subset, levels=[level], methods=methods,
                             **options)[level]
        out[level] = {method: paired_difference(before[method], after[method], confidence, note) for method in methods}
    return out


def _groups_note(kept_groups: np.ndarray, dropped: dict[str, int]) -> str | None:
    if not dropped["one_side"]:
        return None  # both judges are defined on the same groups: nothing to say
    return (f"on the {len(set(kept_groups))} groups both judges can score; left out: {dropped['judge']} where the "
            f"judge gives one score to every output, {dropped['other']} where the baseline does"
            + (f" (and {dropped['data']} with fewer than 2 items or constant human scores)" if dropped["data"] else ""))


def compare_pairwise(preferred, verdict, baseline, verdict_swapped=None, baseline_swapped=None, groups=None, *,
                     ties: Ties = "half", n_resamples: int = 1000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, Comparison]:
    """Pairwise judges: accuracy of ``verdict`` minus that of ``baseline`` (``a``/``b``/``tie`` on
    the same items, ``ties`` counted as ``pairwise_accuracy`` does), and of positional consistency
    when both judged the items in both orders; a paired bootstrap over the same resampled groups."""
    options = {"groups": groups, "ties": ties, "n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    both_orders = verdict_swapped is not None and baseline_swapped is not None
    mine = pairwise_accuracy(preferred, verdict, verdict_swapped if both_orders else None, **options)
    theirs = pairwise_accuracy(preferred, baseline, baseline_swapped if both_orders else None, **options)
    return {name: paired_difference(theirs[name], mine[name], confidence) for name in mine}
