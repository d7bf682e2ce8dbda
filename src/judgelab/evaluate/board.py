"""The result of ``evaluate``: every estimator's estimate per system, the pairwise comparisons and rank
intervals, and what was found on the way (:class:`SystemsReport`). Its own module so that both kinds of
leaderboard (:mod:`judgelab.evaluate.systems` for items and runs, :mod:`judgelab.evaluate.preferences` for
comparisons) import it without importing each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.evaluate.compare import Pairs, ranks_of
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.results import json_number


@dataclass(frozen=True)
class SystemsReport:
    """Per-system estimates for each estimator, their pairwise comparisons and rank intervals.

    ``table()`` and ``pairs_table()`` give tidy pandas frames; ``to_dict()`` the JSON the CLI prints.
    """

    kind: str  # "items" or "queries"
    aspect: str | None
    measure: str | None
    estimates: dict[str, SystemEstimates]
    pairs: dict[str, Pairs]
    labels: dict[str, Any]
    coverage: dict[str, Any]
    skipped: dict[str, str] = field(default_factory=dict)
    unjudged_share: dict[str, float] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    pairs_omitted: str | None = None  # why ``pairs`` is empty (too many systems)
    #: the estimator whose ranking is recommended and why ({"estimator", "reason", ...}); None: judge only
    recommended: dict[str, Any] | None = None
    #: ``until_decided``'s answer from confidence sequences (evaluate/sequential.py); None: not asked
    decision: dict[str, Any] | None = None
    #: several judges: per judge, its weight and what it was worth in labels (evaluate/panel.worth); None: one
    judges: dict[str, dict[str, Any]] | None = None

    @property
    def systems(self) -> tuple[str, ...]:
        return self.estimates["judge"].systems

    def ranks(self, estimator: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rank, best, worst); without pairwise differences (``pairs_omitted``) the interval is NaN."""
        value = self.estimates[estimator].value
        if estimator not in self.pairs:
            unknown = np.full(len(value), np.nan)
            return ranks_of(value), unknown, unknown
        return self.pairs[estimator].rank_intervals(value)

    @property
    def label_share(self) -> float:
        """What one label is on the effective-labels scale (PreferenceReport: a comparison labels two systems)."""
        return 1.0

    def effective_labels(self) -> dict[str, float | None] | None:
        """Per system: how many human labels alone would give the corrected interval's width
        (n x var(human-only) / var(corrected)); None for a system whose intervals are not both t (a
        betting interval's width is set by the scale, not by the variance); None without labels."""
        counts = self._effective_counts()
        return None if counts is None else {s: effective for s, (effective, _) in counts.items()}

    def effective_labels_total(self) -> tuple[float, float, int] | None:
        """(labels human-only would need, labels given, systems counted), both sums over the same systems:
        those with t intervals on both sides. None when there are none. The CLI line and the report read this."""
        counts = self._effective_counts()
        used = [(effective, n) for effective, n in (counts or {}).values() if effective is not None]
        if not used:
            return None
        return sum(e for e, _ in used), sum(n for _, n in used), len(used)

    def _effective_counts(self) -> dict[str, tuple[float | None, float]] | None:
        if "corrected" not in self.estimates or self.estimates["corrected"].info.get("intervals_declined"):
            return None
        human, fixed = self.estimates["human"], self.estimates["corrected"]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (human.se / fixed.se) ** 2
        plain = ("t",) * len(ratio)  # estimates made with --intervals t
        t_both = [a == "t" and b == "t" for a, b in zip(human.info.get("per_system", plain),
                                                        fixed.info.get("per_system", plain), strict=True)]
        share = self.label_share
        return {s: (json_number(n * r * share) if ok else None, float(n) * share)
                for s, n, r, ok in zip(self.systems, human.n_labelled, ratio, t_both, strict=True)}

    def table(self):
        """One row per (system, estimator): estimate, interval, sizes, rank and rank interval."""
        import pandas as pd

        rows = []
        effective = self.effective_labels() or {}
        for name, estimates in self.estimates.items():
            rank, best, worst = self.ranks(name)
            for k, system in enumerate(self.systems):
                rows.append({
                    "system": system, "estimator": name, "estimate": estimates.value[k],
                    "ci_low": estimates.ci[k, 0], "ci_high": estimates.ci[k, 1], "se": estimates.se[k],
                    "n_units": int(estimates.n_units[k]), "n_labelled": int(estimates.n_labelled[k]),
                    "rank": rank[k], "rank_best": best[k], "rank_worst": worst[k],
                    "effective_labels": effective.get(system) if name == "corrected" else None,
                    "reason": estimates.reason[k],
                })
        return pd.DataFrame(rows)

    def pairs_table(self):
        """One row per (estimator, system pair): difference, interval, p-value and Holm-adjusted p-value."""
        import pandas as pd

        rows = []
        for name, pairs in self.pairs.items():
            size = len(pairs.systems)
            for s in range(size):
                for t in range(s + 1, size):
                    rows.append({
                        "estimator": name, "system_a": pairs.systems[s], "system_b": pairs.systems[t],
                        "difference": pairs.difference[s, t], "ci_low": pairs.low[s, t], "ci_high": pairs.high[s, t],
                        "p_value": pairs.p_value[s, t], "p_holm": pairs.p_holm[s, t],
                        "significant": bool(pairs.significant[s, t]),
                    })
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        effective = self.effective_labels()
        out: dict[str, Any] = {
            "kind": self.kind, "aspect": self.aspect, "measure": self.measure, "systems": list(self.systems),
            "labels": self.labels, "coverage": self.coverage, "skipped": self.skipped,
            "estimators": {name: _estimates_dict(est, self.ranks(name)) for name, est in self.estimates.items()},
            "pairs": {name: _pairs_dict(p) for name, p in self.pairs.items()},
            "options": self.options,
        }
        if self.pairs_omitted:
            out["pairs_omitted"] = self.pairs_omitted
        if self.recommended:
            out["recommended"] = self.recommended
        if self.decision:
            out["decision"] = self.decision
        if self.judges:
            out["judges"] = self.judges
        if effective is not None:
            total, labelled, counted = self.effective_labels_total() or (None, None, 0)
            out["effective_labels"] = {"per_system": effective, "total": json_number(total), "labelled": labelled,
                                       "systems_counted": counted}
        if self.unjudged_share is not None:
            out["unjudged_share"] = {k: json_number(v) for k, v in self.unjudged_share.items()}
        return out


def _estimates_dict(est: SystemEstimates, ranks) -> dict[str, Any]:
    rank, best, worst = ranks
    return {s: {"value": json_number(est.value[k]), "ci": [json_number(est.ci[k, 0]), json_number(est.ci[k, 1])],
                "n_units": int(est.n_units[k]), "n_labelled": int(est.n_labelled[k]),
                "rank": json_number(rank[k]), "rank_interval": [json_number(best[k]), json_number(worst[k])],
                **({"reason": est.reason[k]} if est.reason[k] else {})}
            for k, s in enumerate(est.systems)} | {"info": _plain_info(est.info)}


def _plain_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """What of an estimator's info JSON can hold (arrays and the p-value curves stay in Python)."""
    plain = (str, int, float, bool, type(None), list, tuple, dict)
    return {k: v for k, v in info.items() if isinstance(v, plain)}


def _pairs_dict(pairs: Pairs) -> list[dict[str, Any]]:
    size = len(pairs.systems)
    return [{"a": pairs.systems[s], "b": pairs.systems[t], "difference": json_number(pairs.difference[s, t]),
             "ci": [json_number(pairs.low[s, t]), json_number(pairs.high[s, t])],
             "p_value": json_number(pairs.p_value[s, t]), "p_holm": json_number(pairs.p_holm[s, t]),
             "significant": bool(pairs.significant[s, t])}
            for s in range(size) for t in range(s + 1, size)]


# -- the public entry point --------------------------------------------------------------------------


__all__ = ["SystemsReport"]
