"""Is judge B really better than judge A? A paired bootstrap on the same items.

Both judges are scored on the items both of them scored, and every bootstrap replicate draws the
same groups for both (same seed, same groups: :class:`GroupBootstrap` is deterministic), so the
interval of the difference accounts for the items' shared difficulty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.metrics.bootstrap import percentile_ci, two_sided_p_value
from judgelab.metrics.correlation import correlations
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic, "level": self.level,
            "judge": self.b.to_dict(), "baseline": self.a.to_dict(),
            "difference": json_number(self.difference),
            "ci": [json_number(v) for v in self.ci] if self.ci else None,
            "p_value": json_number(self.p_value),
            **({"reason": self.reason} if self.reason else {}),
        }


def sides(comparison: Mapping[str, Any]) -> tuple[Any, Any]:
    """(judge, baseline) of a comparison as JSON: ``judge``/``baseline``, or the older ``b``/``a``."""
    return comparison.get("judge", comparison.get("b")), comparison.get("baseline", comparison.get("a"))


def paired_difference(a: Estimate, b: Estimate, confidence: float = 0.95) -> Comparison:
    """Compare two estimates whose replicates came from the same resamples.

    An estimate without replicates (its statistic is undefined, e.g. a constant judge, or no
    bootstrap was asked for) gives the plain difference with no interval and the reason, not an error.
    """
    if a.resamples is None or b.resamples is None:
        reason = a.reason or b.reason or "no bootstrap replicates"
        return Comparison(a.statistic, a.level, a, b, b.value - a.value, None, float("nan"), reason)
    if len(a.resamples) != len(b.resamples):
        raise ValueError("paired comparison needs both estimates bootstrapped on the same resamples")
    differences = b.resamples - a.resamples
    return Comparison(a.statistic, a.level, a, b, b.value - a.value,
                      percentile_ci(differences, confidence), two_sided_p_value(differences))


def compare_judges(human, judge_a, judge_b, groups=None, systems=None, *, level: str = "dataset",
                   method: str = "spearman", n_resamples: int = 1000, seed: int = 0,
                   confidence: float = 0.95) -> Comparison:
    """Difference in correlation with humans between two judges' scores of the same items.

    Items where either judge has no score (NaN) are left out for both, so they are compared on
    exactly the same items.
    """
    human, judge_a, judge_b = (np.asarray(v, dtype=float) for v in (human, judge_a, judge_b))
    both = np.isfinite(human) & np.isfinite(judge_a) & np.isfinite(judge_b)
    def keep(ids):
        return None if ids is None else np.asarray(ids, dtype=object)[both]

    options = {"levels": [level], "methods": [method], "n_resamples": n_resamples, "seed": seed,
               "confidence": confidence}
    a = correlations(human[both], judge_a[both], keep(groups), keep(systems), **options)[level][method]
    b = correlations(human[both], judge_b[both], keep(groups), keep(systems), **options)[level][method]
    return paired_difference(a, b, confidence)
