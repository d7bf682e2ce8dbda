"""The bias table: every bias the inputs allow measuring, each with its interval.

What is measured depends on what is at hand: both orders give the flip rate and first-position
rate; human verdicts give the judge-minus-human first-position and tie rates and the accuracy
of one order against the position-corrected (both-order) verdict; texts give the verbosity
coefficient; systems and ``family`` give self-preference; texts, systems and ``baseline`` give
each system's raw and length-controlled win rate against the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.audit.inputs import Pair, Verdicts
from judgelab.errors import ConfigError, DataError, term
from judgelab.metrics import bias
from judgelab.metrics.compare import Comparison as Difference
from judgelab.metrics.pairwise import pairwise_accuracy
from judgelab.metrics.results import Estimate, json_number


@dataclass(frozen=True)
class Row:
    """One line of the table: a statistic, its value and interval, and what it says."""

    section: str
    name: str
    value: float
    ci: tuple[float, float] | None
    n: int
    reading: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "name": self.name, "value": json_number(self.value),
                "ci": [json_number(v) for v in self.ci] if self.ci else None, "n": self.n, "reading": self.reading}


@dataclass
class AuditReport:
    judge: str | None
    n_items: int
    both_orders: bool
    confidence: float
    rows: list[Row] = field(default_factory=list)
    #: What could not be measured and why (e.g. no texts: no verbosity).
    not_measured: list[str] = field(default_factory=list)

    def add(self, section: str, name: str, result: Estimate | Difference, reading: str = "") -> None:
        if isinstance(result, Difference):
            self.rows.append(Row(section, name, result.difference, result.ci, result.b.n, reading))
        else:
            # why there is no value beats what the value would have meant
            self.rows.append(Row(section, name, result.value, result.ci, result.n, result.reason or reading))

    def row(self, name: str) -> Row:
        return next(row for row in self.rows if row.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "items": self.n_items, "both_orders": self.both_orders,
                "confidence": self.confidence, "rows": [row.to_dict() for row in self.rows],
                "not_measured": self.not_measured}


def audit(verdicts: Verdicts, comparisons: dict[str, Pair], *, family: str | None = None,
          baseline: str | None = None, n_resamples: int = 1000, seed: int = 0,
          confidence: float = 0.95) -> AuditReport:
    """Audit one judge's verdicts on ``comparisons`` (every judged id must be one of them)."""
    unknown = [item_id for item_id in verdicts.original if item_id not in comparisons]
    if unknown:
        raise DataError(f"{len(unknown)} judged items are not in the data, e.g. {unknown[0]!r}")
    ids = list(verdicts.original)
    rows = [comparisons[item_id] for item_id in ids]
    first = np.array([verdicts.original[i] for i in ids], dtype=object)
    second = np.array([verdicts.swapped.get(i) for i in ids], dtype=object) if verdicts.both_orders else None
    human = np.array([c.human for c in rows], dtype=object)
    has_human = any(h is not None for h in human)
    groups = np.array([c.group for c in rows], dtype=object)
    repeated = len(set(groups)) < len(groups)
    cluster = groups if repeated else None  # a cluster bootstrap only where questions repeat
    options = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    report = AuditReport(judge=verdicts.judge, n_items=len(ids), both_orders=second is not None,
                         confidence=confidence)

    if second is not None:
        position = bias.position_bias_both_orders(first, second, cluster, **options)
        report.add("position", "flip rate", position["flip_rate"], "share of items whose verdict changes with the order")
        report.add("position", "first-position rate (both orders)", position["first_position_rate"],
                   "0.5 = no preference for the first-shown output")
    else:
        report.not_measured.append("flip rate: one order only (judge with swap, or give --swapped-field)")
    if has_human:
        one_order = bias.position_bias_one_order(first, human, cluster, **options)
        report.add("position", "first-position rate, judge", one_order["judge_first_position_rate"])
        report.add("position", "first-position rate, humans", one_order["human_first_position_rate"])
        report.add("position", "first-position rate, judge - humans", one_order["difference"],
                   "> 0: the judge picks the first-shown output more than the humans do")
        ties = bias.tie_rates(first, human, cluster, **options)
        report.add("ties", "tie rate, judge", ties["judge_tie_rate"], "of the original order's verdicts")
        report.add("ties", "tie rate, humans", ties["human_tie_rate"])
        report.add("ties", "tie rate, judge - humans", ties["difference"])
        _accuracy_rows(report, first, second, human, cluster, options)
    else:
        report.add("ties", "tie rate, judge", bias.tie_rates(first, None, cluster, **options)["judge_tie_rate"],
                   "of the original order's verdicts")
        report.not_measured.append("judge-minus-human rates and accuracy: no human labels")
    _verbosity_row(report, rows, first, second, human if has_human else None, cluster, confidence)
    _self_preference_row(report, rows, first, human, family, cluster, options)
    _length_controlled_rows(report, rows, first, second, baseline, cluster, options)
    return report


def _accuracy_rows(report: AuditReport, first, second, human, cluster, options) -> None:
    keep = np.isin(human, ("a", "b")) & bias.has_verdict(first)
    if not keep.any():
        return
    groups = None if cluster is None else cluster[keep]
    report.add("accuracy", "accuracy, original order",
               pairwise_accuracy(human[keep], first[keep], groups=groups, **options)["accuracy"],
               "on the comparisons with a decisive human label; a judge tie counts half")
    if second is not None:
        corrected = bias.both_order_verdict(first, second)
        keep &= bias.has_verdict(corrected)
        report.add("accuracy", "accuracy, both orders (position-corrected)",
                   pairwise_accuracy(human[keep], corrected[keep], groups=None if cluster is None else cluster[keep],
                                     **options)["accuracy"], "a verdict that flips with the order is a tie")


def _lengths(rows: list[Pair]) -> tuple[np.ndarray, np.ndarray] | None:
    if not all(c.output_a is not None and c.output_b is not None for c in rows):
        return None
    return (np.array([len(c.output_a) for c in rows], dtype=float),  # type: ignore[arg-type]
            np.array([len(c.output_b) for c in rows], dtype=float))  # type: ignore[arg-type]


def _verbosity_row(report, rows, first, second, human, cluster, confidence) -> None:
    lengths = _lengths(rows)
    if lengths is None:
        report.not_measured.append("verbosity: the items have no output_a/output_b texts")
        return
    coefficient = bias.verbosity_pairwise(first, *lengths, human, cluster, judge_swapped=second,
                                          confidence=confidence)
    report.add("verbosity", "length coefficient", coefficient,
               f"{coefficient.rule} (characters); > 0: prefers the longer")


def _self_preference_row(report, rows, first, human, family, cluster, options) -> None:
    if family is None:
        return
    if any(c.system_a is None or c.system_b is None for c in rows):
        raise ConfigError(f"{term('family')} needs system_a and system_b in every item")
    if all(h is None for h in human):
        raise ConfigError(f"{term('family')} compares the judge with the humans: the items need human labels")
    try:
        result = bias.self_preference(first, human, [c.system_a for c in rows], [c.system_b for c in rows],
                                      family, cluster, **options)
    except ValueError as exc:
        raise ConfigError(f"{term('family')}: {exc}") from None
    report.add("self-preference", f"{family} win share, judge", result["judge_own_win_share"])
    report.add("self-preference", f"{family} win share, humans", result["human_own_win_share"])
    report.add("self-preference", f"{family} win share, judge - humans", result["difference"],
               "> 0: the judge favours its own family beyond the humans")


def _length_controlled_rows(report, rows, first, second, baseline, cluster, options) -> None:
    if baseline is None:
        return
    systems = {s for c in rows for s in (c.system_a, c.system_b)}
    if baseline not in systems:
        raise ConfigError(f"{term('baseline')} {baseline!r} is not a system in the data")
    lengths = _lengths(rows)
    if lengths is None:
        raise ConfigError(f"{term('baseline')}'s length-controlled win rate needs output_a and output_b texts")
    verdicts = bias.both_order_verdict(first, second) if second is not None else first
    preference_a = bias.preference_for_a(verdicts)
    side_a = np.array([c.system_a == baseline for c in rows])
    side_b = np.array([c.system_b == baseline for c in rows])
    for system in sorted(s for s in systems - {baseline} if s is not None):
        with_a = np.array([c.system_a == system for c in rows]) & side_b
        with_b = np.array([c.system_b == system for c in rows]) & side_a
        involved = with_a | with_b
        if not involved.any():
            continue
        preference = np.where(with_a, preference_a, 1 - preference_a)[involved]
        length_system = np.where(with_a, lengths[0], lengths[1])[involved]
        length_baseline = np.where(with_a, lengths[1], lengths[0])[involved]
        groups = None if cluster is None else cluster[involved]
        result = bias.length_controlled_win_rate(preference, length_system, length_baseline, groups, **options)
        report.add("length control", f"{system} vs {baseline}: win rate", result["win_rate"])
        report.add("length control", f"{system} vs {baseline}: length-controlled", result["length_controlled_win_rate"],
                   "AlpacaEval 2's GLM at equal length")
