"""HPSS: heuristic prompting-strategy search, exactly as ``shared/specs/hpss.md`` restates it.

State: the advantage A(v) of every value v of every factor (zero mean within a factor), how
often it was updated n(v), how many evaluated strategies contain it N(v) (the UCB count), the
evaluated strategies P and the population B (the k best).

* Initialisation (21 evaluations): the start point s0 and its 20 one-factor variants;
  A(v) = f(variant with v) - mean over the factor's values (s0 stands for its own value);
  n(v) = N(v) = 1; B = the k best.
* Each round, every s in B is mutated g times. t = evaluations so far + 1. Neighbour s' changes
  factor i from u to v and scores d(s') = A(v) - A(u) + lambda * sqrt(ln t / N(v)); one is drawn
  with probability softmax(d / T). An evaluated neighbour spends the mutation for free. Else,
  with probability rho, *exploitation* evaluates the unevaluated strategy of largest total
  advantage (no advantage update); otherwise *exploration* evaluates s' and updates
  A(v) <- (A(v) n(v) + f(s') - f(s) + A(u)) / (n(v) + 1), n(v) += 1, then re-centres factor i.
  N(value) += 1 for each value of the newly evaluated strategy. After the round, B = the k best
  of B and the new strategies.

Defaults are the published settings (k=5, g=2, rho=0.2, T=5, lambda=4; the public code uses
lambda=2). Ablations: ``exploitation=False`` (rho=0), ``ucb=False`` (lambda=0),
``heuristic=False`` (uniform neighbour choice).

A search confined to a sub-space (``space=``, not in the paper) applies every rule above to the
allowed values only: initialisation evaluates the allowed one-factor variants, advantages are
centred over the allowed values, and neither a mutation nor exploitation leaves the sub-space.
A left-out value keeps advantage 0 and is never read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from judgelab.optimize.base import Search, SearchStopped
from judgelab.optimize.space import (
    FACTOR_NAMES,
    StrategyOptimizer,
    changed,
    neighbour_rows,
    one_factor_variants,
    row_mask,
    row_of,
    space_indices,
    strategy_at,
    value_indices,
    value_masks,
)
from judgelab.strategy import FACTORS, Strategy, factor_text

#: Budget of the paper's experiments, including the 21 evaluations of initialisation.
PAPER_BUDGET = 71


class HPSS(StrategyOptimizer):
    method = "hpss"

    def __init__(self, *, seed: int = 0, k: int = 5, g: int = 2, rho: float = 0.2, temperature: float = 5.0,
                 lam: float = 4.0, exploitation: bool = True, ucb: bool = True, heuristic: bool = True,
                 space: Mapping[str, Any] | None = None):
        super().__init__(seed=seed, space=space)
        self.allowed = value_masks(self.space)  # per factor: which values the search may use
        self.inside = row_mask(self.space)  # per space row: whether exploitation may pick it
        self.k, self.g, self.rho, self.temperature, self.lam = k, g, rho, temperature, lam
        self.exploitation, self.ucb, self.heuristic = exploitation, ucb, heuristic
        self.advantage = {name: np.zeros(len(values)) for name, values in FACTORS.items()}
        self.updates = {name: np.zeros(len(values), dtype=np.int64) for name, values in FACTORS.items()}
        self.visits = {name: np.zeros(len(values), dtype=np.int64) for name, values in FACTORS.items()}
        self.scores: dict[int, float] = {}  # P: space row -> f, in evaluation order
        self.population: list[Strategy] = []  # B
        self.counts = {"explore": 0, "exploit": 0, "free": 0, "stall": 0}

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "k": self.k, "g": self.g, "rho": self.effective_rho, "temperature": self.temperature,
                "lam": self.effective_lam, "heuristic": self.heuristic}

    @property
    def effective_rho(self) -> float:
        return self.rho if self.exploitation else 0.0

    @property
    def effective_lam(self) -> float:
        return self.lam if self.ucb else 0.0

    # -- the search ----------------------------------------------------------------------------
    def run(self, search: Search) -> None:
        rng = np.random.default_rng(self.seed)
        self.initialise(search, self.start(search))
        while True:
            self.round(search, rng)

    def initialise(self, search: Search, start: Strategy) -> None:
        """Evaluate s0 and its one-factor variants; set A, n, N and B from them."""
        f_start = self._evaluate(search, start, "init")
        per_value = {name: np.zeros(len(values)) for name, values in FACTORS.items()}
        for name, values in FACTORS.items():
            per_value[name][values.index(getattr(start, name))] = f_start
        for variant in one_factor_variants(start, self.space):
            name = next(n for n in FACTOR_NAMES if getattr(variant, n) != getattr(start, n))
            per_value[name][FACTORS[name].index(getattr(variant, name))] = self._evaluate(search, variant, "init")
        for name in FACTOR_NAMES:
            self.advantage[name] = per_value[name]
            self._recentre(name)
            self.updates[name][:] = 1
            self.visits[name][:] = 1
        self.population = self._best([strategy_at(row) for row in self.scores])

    def round(self, search: Search, rng: np.random.Generator) -> None:
        """Mutate every member of B g times, then keep the k best of B and the new strategies."""
        new: list[Strategy] = []
        if self._stalled():
            # Not in the spec: every neighbour of B is evaluated, so no mutation could ever
            # evaluate anything again; exploitation is the one move left.
            self.counts["stall"] += 1
            new.append(self.exploit(search))
        for parent in list(self.population):
            for _ in range(self.g):
                child = self.mutate(search, parent, rng)
                if child is not None:
                    new.append(child)
        self.population = self._best(self.population + new)

    def mutate(self, search: Search, parent: Strategy, rng: np.random.Generator) -> Strategy | None:
        """One mutation of ``parent``: the newly evaluated strategy, or None when it was free."""
        neighbours, scores = self.neighbour_scores(parent, search.evaluations + 1)
        probabilities = self.choice_probabilities(scores)
        name, value = neighbours[int(rng.choice(len(neighbours), p=probabilities))]
        child = changed(parent, name, value)
        if row_of(child) in self.scores:
            self.counts["free"] += 1
            return None
        if self.effective_rho > 0 and rng.random() < self.effective_rho:
            return self.exploit(search)
        return self.explore(search, parent, child, name)

    def neighbour_scores(self, strategy: Strategy, t: int) -> tuple[list[tuple[str, Any]], np.ndarray]:
        """Every one-factor change (factor, new value) of ``strategy`` and its d = A(v) - A(u) + UCB."""
        changes, scores = [], []
        bonus = math.log(t) if t > 1 else 0.0
        for name, values in FACTORS.items():
            u = values.index(getattr(strategy, name))
            for v, value in enumerate(values):
                if v == u or not self.allowed[name][v]:
                    continue
                ucb = self.effective_lam * math.sqrt(bonus / self.visits[name][v])
                changes.append((name, value))
                scores.append(self.advantage[name][v] - self.advantage[name][u] + ucb)
        return changes, np.array(scores)

    def choice_probabilities(self, scores: np.ndarray) -> np.ndarray:
        if not self.heuristic:
            return np.full(len(scores), 1.0 / len(scores))
        logits = scores / self.temperature
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def explore(self, search: Search, parent: Strategy, child: Strategy, name: str) -> Strategy:
        f_child = self._evaluate(search, child, "explore", parent=parent.key(), factor=name)
        u = FACTORS[name].index(getattr(parent, name))
        v = FACTORS[name].index(getattr(child, name))
        gain = f_child - self.scores[row_of(parent)] + self.advantage[name][u]
        n = self.updates[name][v]
        self.advantage[name][v] = (self.advantage[name][v] * n + gain) / (n + 1)
        self.updates[name][v] = n + 1
        self._recentre(name)
        self.counts["explore"] += 1
        return child

    def _recentre(self, name: str) -> None:
        """Zero mean over the factor's allowed values (all of them in the full space); left-out ones stay 0."""
        allowed = self.allowed[name]
        self.advantage[name][allowed] -= self.advantage[name][allowed].mean()
        self.advantage[name][~allowed] = 0.0

    def exploit(self, search: Search) -> Strategy:
        strategy = self.exploitation_target()
        self._evaluate(search, strategy, "exploit")
        self.counts["exploit"] += 1
        return strategy

    def exploitation_target(self) -> Strategy:
        """The unevaluated strategy with the largest total advantage (the first of ties in space order)."""
        indices = space_indices()
        totals = np.zeros(len(indices))
        for column, name in enumerate(FACTOR_NAMES):
            totals += self.advantage[name][indices[:, column]]
        totals[list(self.scores)] = -np.inf
        totals[~self.inside] = -np.inf
        if not np.isfinite(totals.max()):
            raise SearchStopped("every strategy of the search space was evaluated")
        return strategy_at(int(np.argmax(totals)))

    def _evaluate(self, search: Search, strategy: Strategy, phase: str, **notes: Any) -> float:
        f = self.evaluate(search, strategy, phase, **notes)
        self.scores[row_of(strategy)] = f
        for name, index in zip(FACTOR_NAMES, value_indices(strategy), strict=True):
            self.visits[name][index] += 1
        return f

    def _best(self, strategies: list[Strategy]) -> list[Strategy]:
        """The k best distinct strategies; ties go to the earlier evaluated (P keeps evaluation order)."""
        order = {row: position for position, row in enumerate(self.scores)}
        unique = {row_of(s): s for s in strategies}
        ranked = sorted(unique, key=lambda row: (-self.scores[row], order[row]))
        return [unique[row] for row in ranked[: self.k]]

    def _stalled(self) -> bool:
        return bool(self.population) and all(
            row in self.scores for s in self.population for row in neighbour_rows(s, self.space))

    # -- inspection ----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        def by_value(arrays: dict[str, np.ndarray], cast) -> dict[str, dict[str, Any]]:
            return {name: {factor_text(value): cast(arrays[name][i]) for i, value in enumerate(FACTORS[name])}
                    for name in FACTOR_NAMES}

        return {"advantage": by_value(self.advantage, lambda x: round(float(x), 6)),
                "updates": by_value(self.updates, int), "visits": by_value(self.visits, int),
                "population": [s.key() for s in self.population], "moves": dict(self.counts)}
