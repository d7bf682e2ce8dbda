"""How many human labels a target interval width needs, from the labels there are so far.

Each label-based estimator's variance is ``per_label / n`` (times ``1 - n/N`` for the finite
target) plus, for the corrected one under the population target, a judge term that labels do
not shrink. Solving ``z * sqrt(variance) <= width / 2`` for ``n`` per system gives the labels
each estimator needs; the variances come from the pilot labels, so the plan is as good as they are.
The quantile is the guarded t branch's (evaluate/intervals.py), which a system gets from 10 labels
with a mean away from the scale's ends: the plan never asks for fewer. A system whose mean sits near
an end keeps a betting interval, wider than planned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.choose import MIN_LABELS_PER_SYSTEM
from judgelab.evaluate.estimators import MIN_LABELLED_QUERIES
from judgelab.evaluate.intervals import T_GUARD, T_MIN_LABELS


@dataclass(frozen=True)
class Plan:
    width: float
    systems: tuple[str, ...]
    needed: dict[str, list[float]]  # estimator -> labels per system (inf: this width cannot be reached)
    sizes: list[int]

    def totals(self) -> dict[str, float]:
        return {name: float(np.sum(values)) for name, values in self.needed.items()}

    def to_dict(self) -> dict:
        def number(v: float):
            return None if not math.isfinite(v) else int(v)

        return {"width": self.width, "per_system": {name: dict(zip(self.systems, map(number, values), strict=True))
                                                     for name, values in self.needed.items()},
                "total": {name: number(v) for name, v in self.totals().items()}}


def plan_labels(report: SystemsReport, width: float) -> Plan:
    """Labels per system for a ``width``-wide interval (full width) with each label-based estimator."""
    if not width > 0:
        raise ConfigError(f"{term('width', '--plan')} {width}: give the interval width you want (e.g. 0.3 on a 1-5 "
                          "scale)")
    if "corrected" not in report.estimates:
        raise ConfigError("a plan needs some human labels to measure how well the judge predicts them: "
                          "label a small random pilot first (judgelab sample --budget 20), then plan with "
                          f"{term('human')}")
    if report.kind == "comparisons":
        raise ConfigError(f"{term('plan_labels()', '--plan')} is for pointwise items and runs; for comparisons "
                          "between systems, read the "
                          "corrected intervals' widths against the labels so far (judgelab evaluate)")
    # the interval a system gets with the labels planned: the guarded t branch (evaluate/intervals.py),
    # from T_MIN_LABELS on; --intervals t plans for the plain interval
    guarded = report.options.get("intervals", "auto") != "t"
    z = stats.norm.isf((T_GUARD if guarded else 1) * (1 - report.options["confidence"]) / 2)
    finite_target = report.options["target"] == "items"
    # what an interval for runs needs; for items, what a ranking to rely on needs (evaluate/choose.py)
    least = MIN_LABELLED_QUERIES if report.kind == "queries" else MIN_LABELS_PER_SYSTEM
    least = max(least, T_MIN_LABELS) if guarded else least
    needed = {}
    for name in ("human", "corrected"):
        est = report.estimates[name]
        per_label, fixed = est.info["per_label_variance"], est.info["judge_term_variance"]
        room = (width / 2 / z) ** 2 - fixed
        with np.errstate(divide="ignore", invalid="ignore"):
            if finite_target:
                n = per_label / (room + per_label / est.n_units)
            else:
                n = np.where(room > 0, per_label / room, np.inf)
        n = np.where(np.isfinite(n), np.minimum(np.ceil(np.maximum(n, least)), est.n_units), n)
        needed[name] = [float(v) for v in n]
    return Plan(width, report.systems, needed, [int(v) for v in report.estimates["judge"].n_units])
