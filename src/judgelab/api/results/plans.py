"""``plan_labels``'s and ``plan_spend``'s results (judgelab.api.results): how many labels an interval needs,
and what a budget buys (``judgelab sample --plan`` / ``--spend``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab.api.results.shared import frame
from judgelab.evaluate.plan import Plan
from judgelab.evaluate.spend import SpendPlan as _SpendPlan


@dataclass(frozen=True)
class LabelPlan(Plan):
    """:func:`judgelab.api.verbs.plan_labels`'s result: ``needed`` ({estimator: labels per system}, inf where
    the ``width`` cannot be reached), ``sizes`` (units per system), ``totals()``, ``to_dict()``; and what it was
    measured on: ``n_labelled`` labels so far, of units of ``kind`` (``items``, ``runs``)."""

    n_labelled: int = 0
    kind: str = "items"

    def to_pandas(self):
        """One row per system: ``system``, ``units``, and the labels each estimator needs (None: unreachable)."""
        def count(value: float) -> int | None:
            return int(value) if math.isfinite(value) else None

        return frame([{"system": name, "units": size, **{estimator: count(values[k])
                                                         for estimator, values in self.needed.items()}}
                      for k, (name, size) in enumerate(zip(self.systems, self.sizes, strict=True))])


class SpendPlan(_SpendPlan):
    """:func:`judgelab.api.verbs.plan_spend`'s result: ``options`` (each set of judges the budget allows,
    narrowest first), ``best`` (the one chosen), ``next_money`` (what more money buys), ``left_out``."""

    def to_pandas(self):
        """One row per option: the judges run on every unit, labels, cost, predicted width, ``best``."""
        return frame([{**option.to_dict(), "judges": ", ".join(option.judges) or "humans alone",
                       "best": option is self.best} for option in self.options])


__all__ = ["LabelPlan", "SpendPlan"]
