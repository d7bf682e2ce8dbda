"""``plan_labels``'s and ``plan_spend``'s results (judgelab.api.results): how many labels an interval needs,
and what a budget buys (``judgelab sample --plan`` / ``--spend``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from judgelab.api.results.shared import frame
from judgelab.api.results.systems import Sample
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


@dataclass(frozen=True)
class SpendPlan(_SpendPlan):
    """:func:`judgelab.api.verbs.plan_spend`'s result: ``options`` (each set of judges the budget allows,
    narrowest first), ``best`` (the one chosen), ``next_money`` (what more money buys), ``left_out``;
    ``draw(seed=...)``: what to label to carry the best plan out, as ``jl.sample``'s result."""

    items: tuple[Any, ...] = field(default=(), repr=False, compare=False)  # the data the plan is for: draw() reads it

    def draw(self, *, seed: int = 0) -> Sample:
        """The ids to send to people for the best plan (``judgelab annotate --ids``), as :func:`jl.sample`'s
        result (``ids``, ``probabilities``, ``strata``, ``sizes``, ``write(path)``): its labelled units drawn
        stratified as ``judgelab sample`` draws them, less the pilot's, which count toward their system's share
        (they are labelled already). Runs: the query-document pairs of the queries drawn. Once labelled, give
        every label, the pilot's and these, to ``jl.evaluate(..., human=labels)``."""
        from judgelab.evaluate.spend import plan_draw
        from judgelab.limits import checked_arguments

        checked_arguments(seed=("Seed", seed))
        drawn = plan_draw(self.items, self, seed=seed)
        best = self.best
        header = {"method": "stratified", "units": "pairs" if drawn.units == "queries" else drawn.units,
                  "budget": len(drawn.ids), "seed": seed, "plan": "spend",
                  "labelled": best.labels if best is not None else 0, "pilot": drawn.kept,
                  **({"queries": len(drawn.drawn)} if drawn.units == "queries" else {})}
        return Sample(drawn.ids, drawn.probability, "stratified", header, drawn.strata, drawn.sizes)

    def to_pandas(self):
        """One row per option: the judges run on every unit, labels, cost, predicted width, ``best``."""
        return frame([{**option.to_dict(), "judges": ", ".join(option.judges) or "humans alone",
                       "best": option is self.best} for option in self.options])


__all__ = ["LabelPlan", "SpendPlan"]
