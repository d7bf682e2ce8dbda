"""Search baselines at the same budget (seed 002 Appendix F.2, ``shared/specs/hpss.md``).

Each searches its ``space`` (the full space unless confined to some factor values):

* ``RandomSearch``: the start point, then strategies drawn uniformly among the unevaluated.
* ``Greedy``: perturb the current best ``width`` (5) times, each time replacing the value of one
  random factor by another random value; keep the best of the current and the perturbations.
* ``StepwiseGreedy``: optimise the factors one at a time in table order, each time trying every
  other value with the rest fixed and keeping the best (21 evaluations per pass; the paper runs
  one pass, its budget being constant).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from judgelab.optimize.base import Search, SearchStopped
from judgelab.optimize.space import (
    FACTOR_NAMES,
    StrategyOptimizer,
    changed,
    neighbour_rows,
    row_of,
    space_rows,
    strategy_at,
)
from judgelab.strategy import Strategy


class RandomSearch(StrategyOptimizer):
    method = "random"

    def run(self, search: Search) -> None:
        rng = np.random.default_rng(self.seed)
        start = self.start(search)
        seen = {row_of(start)}
        self.evaluate(search, start, "start")
        rows = space_rows(self.space)  # every row in the full space, so draw i is row i there
        while True:
            if len(seen) == len(rows):
                raise SearchStopped("every strategy of the search space was evaluated")
            # Rejection sampling is uniform over the unevaluated ones, and cheap while few are known.
            row = int(rows[rng.integers(len(rows))])
            while row in seen:
                row = int(rows[rng.integers(len(rows))])
            seen.add(row)
            self.evaluate(search, strategy_at(row), "random")


class Greedy(StrategyOptimizer):
    method = "greedy"

    def __init__(self, *, seed: int = 0, width: int = 5, space: Mapping[str, Any] | None = None):
        super().__init__(seed=seed, space=space)
        self.width = width
        self.current: Strategy | None = None

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "width": self.width}

    def run(self, search: Search) -> None:
        rng = np.random.default_rng(self.seed)
        self.current = self.start(search)
        scores = {row_of(self.current): self.evaluate(search, self.current, "start")}
        while True:
            candidates = []
            for _ in range(self.width):
                candidate = self._perturb(self.current, scores, rng)
                scores[row_of(candidate)] = self.evaluate(search, candidate, "perturb", parent=self.current.key())
                candidates.append(candidate)
            # Ties keep the current strategy (max returns the first of equals).
            self.current = max([self.current, *candidates], key=lambda s: scores[row_of(s)])

    def _perturb(self, current: Strategy, scores: dict[int, float], rng: np.random.Generator) -> Strategy:
        """One random factor, one random other value; redrawn while it names an evaluated strategy."""
        space = self.space
        if all(row in scores for row in neighbour_rows(current, space)):
            raise SearchStopped(f"every neighbour of the current best ({current.key()}) was evaluated")
        # Factors the space fixes to one value cannot be perturbed (all 8 in the full space).
        free = [name for name in FACTOR_NAMES if len(space[name]) > 1]
        while True:
            name = free[int(rng.integers(len(free)))]
            others = [v for v in space[name] if v != getattr(current, name)]
            candidate = changed(current, name, others[int(rng.integers(len(others)))])
            if row_of(candidate) not in scores:
                return candidate

    def state(self) -> dict[str, Any]:
        return {"current": self.current.key() if self.current else None}


class StepwiseGreedy(StrategyOptimizer):
    method = "stepwise"

    def __init__(self, *, seed: int = 0, passes: int = 1, space: Mapping[str, Any] | None = None):
        super().__init__(seed=seed, space=space)
        self.passes = passes
        self.current: Strategy | None = None
        self.done: list[str] = []

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "passes": self.passes}

    def run(self, search: Search) -> None:
        self.current = self.start(search)
        scores = {row_of(self.current): self.evaluate(search, self.current, "start")}
        for _ in range(self.passes):
            for name in FACTOR_NAMES:
                for value in self.space[name]:
                    candidate = changed(self.current, name, value)
                    if row_of(candidate) not in scores:
                        scores[row_of(candidate)] = self.evaluate(search, candidate, f"factor:{name}")
                best_value = max(self.space[name], key=lambda v: (scores[row_of(changed(self.current, name, v))],
                                                                v == getattr(self.current, name)))
                self.current = changed(self.current, name, best_value)
                self.done.append(name)

    def state(self) -> dict[str, Any]:
        return {"current": self.current.key() if self.current else None, "factors_done": self.done}
