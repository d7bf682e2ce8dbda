"""The strategy space as arrays, and the base class of optimisers that search it.

Strategies are indexed by their position in ``Strategy.space()`` (the lexicographic order of
``FACTORS``), so whole-space computations (exploitation's arg-max of the total advantage,
random search's draw among unevaluated strategies) are numpy operations over 12,960 rows.

A search may be confined to a sub-space: some values of some factors left out (``space=`` of
every strategy optimiser, ``judgelab optimize --space``). A ``Space`` maps every factor to its
allowed values in ``FACTORS`` order; the full space is the default and changes nothing.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from judgelab.errors import ConfigError, term
from judgelab.judges.base import JudgeConfig
from judgelab.optimize.base import Optimizer, OptimizerExample, Search
from judgelab.strategy import FACTORS, Strategy, factor_text, parse_factor_text

#: Every factor's allowed values, in ``FACTORS`` order.
Space = dict[str, tuple[Any, ...]]

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


def neighbour_rows(strategy: Strategy, space: Space = FACTORS) -> list[int]:
    """Rows of the one-factor variants of ``strategy`` within ``space`` (20 in the full space;
    no Strategy objects built)."""
    row, indices = row_of(strategy), value_indices(strategy)
    masks = value_masks(space)
    return [row + (v - u) * stride for name, u, stride, size in zip(FACTOR_NAMES, indices, STRIDES, SIZES, strict=True)
            for v in range(size) if v != u and masks[name][v]]


def changed(strategy: Strategy, name: str, value) -> Strategy:
    """``strategy`` with one factor set to one of its values from ``FACTORS`` (valid by construction,
    so pydantic validation is skipped: searches build thousands of these)."""
    return strategy.model_copy(update={name: value})


def strategy_at(row: int) -> Strategy:
    indices = np.unravel_index(row, SIZES)
    return Strategy(**{name: FACTORS[name][int(i)] for name, i in zip(FACTOR_NAMES, indices, strict=True)})


def one_factor_variants(start: Strategy, space: Space = FACTORS) -> list[Strategy]:
    """The strategies of ``space`` that differ from ``start`` in exactly one factor, in table order
    (20 in the full space)."""
    return [changed(start, name, value) for name in FACTOR_NAMES for value in space[name]
            if value != getattr(start, name)]


# -- sub-spaces ----------------------------------------------------------------------------------


def restricted_space(restriction: Mapping[str, Any] | None = None) -> Space:
    """The space with the factors ``restriction`` names confined to the values it lists.

    Values are written as in a strategy key (``"10"``, ``"on"``, ``"TD-IC-ER"``) or as Python
    values, as a list or one comma-separated string: ``{"cot": "none,suffix", "scale": [3, 5, 10]}``.
    Raises ``ConfigError`` for an unknown factor, an unknown value or a factor left with no value.
    """
    space: Space = dict(FACTORS)
    for name, listed in (restriction or {}).items():
        if name not in FACTORS:
            raise ConfigError(f"space: unknown factor {name!r}; the factors are {', '.join(FACTORS)}")
        items = listed.split(",") if isinstance(listed, str) else listed if isinstance(listed, list | tuple) else [listed]
        wanted = {_factor_value(name, item) for item in items if str(item).strip()}
        if not wanted:
            raise ConfigError(f"space: {name} is given no value; list some of {_values_text(name)}")
        space[name] = tuple(value for value in FACTORS[name] if value in wanted)
    return space


def _factor_value(name: str, item: Any) -> Any:
    """One value of factor ``name``, validated as a strategy validates it."""
    try:
        text = item.strip() if isinstance(item, str) else item
        value = parse_factor_text(name, text) if isinstance(text, str) else text
        return getattr(Strategy().replace(**{name: value}), name)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"space: {item!r} is not a value of {name}; choose from {_values_text(name)}") from exc


def _values_text(name: str) -> str:
    return ", ".join(factor_text(value) for value in FACTORS[name])


def space_settings(space: Space) -> dict[str, list[str]]:
    """The restricted factors and their values as text (how a search records its space)."""
    return {name: [factor_text(v) for v in space[name]] for name in FACTOR_NAMES if len(space[name]) < len(FACTORS[name])}


def value_masks(space: Space) -> dict[str, np.ndarray]:
    """Per factor, which of its values (in ``FACTORS`` order) ``space`` allows."""
    return _value_masks(tuple(tuple(space[name]) for name in FACTOR_NAMES))


@functools.lru_cache(maxsize=64)
def _value_masks(allowed: tuple[tuple[Any, ...], ...]) -> dict[str, np.ndarray]:
    # Cached: searches ask for the masks of their one space at every mutation.
    return {name: np.array([value in values for value in FACTORS[name]])
            for name, values in zip(FACTOR_NAMES, allowed, strict=True)}


def space_rows(space: Space) -> np.ndarray:
    """The rows of ``Strategy.space()`` inside ``space``, ascending (all 12,960 for the full space)."""
    return np.flatnonzero(row_mask(space))


def row_mask(space: Space) -> np.ndarray:
    """A boolean per row of ``Strategy.space()``: whether the strategy lies inside ``space``."""
    indices, masks = space_indices(), value_masks(space)
    inside = np.ones(len(indices), dtype=bool)
    for column, name in enumerate(FACTOR_NAMES):
        inside &= masks[name][indices[:, column]]
    return inside


def outside(strategy: Strategy, space: Space) -> list[str]:
    """The ``factor=value`` settings of ``strategy`` that ``space`` leaves out (empty: inside)."""
    return [f"{name}={factor_text(getattr(strategy, name))}" for name in FACTOR_NAMES
            if getattr(strategy, name) not in space[name]]


class StrategyOptimizer(Optimizer):
    """An optimiser over the ``strategy`` of a prompted judge; the start point is the base config's.

    ``space`` confines the search to some values of some factors (see ``restricted_space``); the
    start strategy must lie inside it.
    """

    def __init__(self, *, seed: int = 0, space: Mapping[str, Any] | None = None):
        super().__init__(seed=seed)
        self.space = restricted_space(space)

    def settings(self) -> dict[str, Any]:
        # The full space adds nothing, so runs recorded before sub-spaces existed still resume.
        restricted = space_settings(self.space)
        return {**super().settings(), **({"space": restricted} if restricted else {})}

    #: The contract test's search space, six strategies: small enough to get past the start in a
    #: few evaluations. Factors it does not vary keep the default strategy's value.
    CONTRACT_SPACE: ClassVar[dict[str, list[Any]]] = {
        **{name: [getattr(Strategy(), name)] for name in FACTORS}, "scale": [5, 10], "cot": ["prefix", "none", "suffix"]}

    @classmethod
    def contract_example(cls) -> OptimizerExample:
        return OptimizerExample(options={"space": cls.CONTRACT_SPACE})

    def check(self, base: JudgeConfig) -> None:
        self._start_of(base)

    def start(self, search: Search) -> Strategy:
        return self._start_of(search.base)

    def _start_of(self, base: JudgeConfig) -> Strategy:
        strategy = getattr(base, "strategy", None)
        if not isinstance(strategy, Strategy):
            raise ConfigError(f"{self.method} searches prompting strategies: the start config must be a "
                              f"prompted judge (kind 'prompted'), not {base.kind!r}")
        if left_out := outside(strategy, self.space):
            raise ConfigError(f"the start strategy has {', '.join(left_out)}, which the search space leaves out; "
                              f"start from a strategy inside it ({term('strategy')}) or allow those values")
        return strategy

    @staticmethod
    def config(search: Search, strategy: Strategy) -> JudgeConfig:
        return search.base.model_copy(update={"strategy": strategy})

    def evaluate(self, search: Search, strategy: Strategy, phase: str, **notes: Any) -> float:
        """The search objective of ``strategy`` (one evaluation)."""
        return search.evaluate(self.config(search, strategy), phase, **notes).search_objective
