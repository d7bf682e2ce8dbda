"""The strategy space as arrays, and the base class of optimisers that search it.

Strategies are indexed by their position in ``Strategy.space()`` (the lexicographic order of
``FACTORS``), so whole-space computations (exploitation's arg-max of the total advantage,
random search's draw among unevaluated strategies) are numpy operations over 12,960 rows.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from judgelab.errors import ConfigError
from judgelab.judges.base import JudgeConfig
from judgelab.judges.strategy import FACTORS, Strategy
from judgelab.optimize.base import Optimizer, Search

FACTOR_NAMES: tuple[str, ...] = tuple(FACTORS)
SIZES: tuple[int, ...] = tuple(len(values) for values in FACTORS.values())


@functools.cache
def space_indices() -> np.ndarray:
    """``(12960, 8)`` value indices of every strategy, in ``Strategy.space()`` order."""
    return np.array(list(itertools.product(*(range(n) for n in SIZES))), dtype=np.int64)


#: Row distance between strategies that differ by one step in each factor's value index.
STRIDES: tuple[int, ...] = tuple(int(np.prod(SIZES[i + 1:])) for i in range(len(SIZES)))


@functools.lru_cache(maxsize=65536)
def value_indices(strategy: Strategy) -> tuple[int, ...]:
    return tuple(FACTORS[name].index(getattr(strategy, name)) for name in FACTOR_NAMES)


def row_of(strategy: Strategy) -> int:
    """Position of ``strategy`` in ``Strategy.space()`` (mixed radix over the factor sizes)."""
    return sum(index * stride for index, stride in zip(value_indices(strategy), STRIDES, strict=True))


def neighbour_rows(strategy: Strategy) -> list[int]:
    """Rows of the 20 one-factor variants of ``strategy`` (no Strategy objects built)."""
    row, indices = row_of(strategy), value_indices(strategy)
    return [row + (v - u) * stride for u, stride, size in zip(indices, STRIDES, SIZES, strict=True)
            for v in range(size) if v != u]


def changed(strategy: Strategy, name: str, value) -> Strategy:
    """``strategy`` with one factor set to one of its values from ``FACTORS`` (valid by construction,
    so pydantic validation is skipped: searches build thousands of these)."""
    return strategy.model_copy(update={name: value})


def strategy_at(row: int) -> Strategy:
    indices = np.unravel_index(row, SIZES)
    return Strategy(**{name: FACTORS[name][int(i)] for name, i in zip(FACTOR_NAMES, indices, strict=True)})


def one_factor_variants(start: Strategy) -> list[Strategy]:
    """The 20 strategies that differ from ``start`` in exactly one factor, in table order."""
    return start.neighbours()


class StrategyOptimizer(Optimizer):
    """An optimiser over the ``strategy`` of a prompted judge; the start point is the base config's."""

    def start(self, search: Search) -> Strategy:
        strategy = getattr(search.base, "strategy", None)
        if not isinstance(strategy, Strategy):
            raise ConfigError(f"{self.method} searches prompting strategies: the start config must be a "
                              f"prompted judge (kind 'prompted'), not {search.base.kind!r}")
        return strategy

    @staticmethod
    def config(search: Search, strategy: Strategy) -> JudgeConfig:
        return search.base.model_copy(update={"strategy": strategy})

    def evaluate(self, search: Search, strategy: Strategy, phase: str, **notes: Any) -> float:
        """The search objective of ``strategy`` (one evaluation)."""
        return search.evaluate(self.config(search, strategy), phase, **notes).search_objective
