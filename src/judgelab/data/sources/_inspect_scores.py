"""Inspect AI's score values as numbers and its epoch reducers, as Inspect itself computes them
(``inspect_ai.scorer._metric.value_to_float`` and ``inspect_ai.scorer._reducer``, Inspect AI 0.3.285), so
that a log reads as Inspect reports it. Written out here: the readers never import the tool."""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from typing import Any

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}  # compared in lower case, as Inspect does
READ = "C, P, I, N, yes/no, true/false, numbers and texts holding one"
REDUCERS = "mean, median, mode, max, majority, at_least_<k>, pass_at_<k>, pass_k_<k>"
_WITH_K = re.compile(r"(at_least|pass_at|pass_k)_(\d+)")
_THRESHOLD = 1.0  # at_least and pass_at count an epoch as correct from 1.0 (Inspect's default; the log names no other)


def to_float(value: Any) -> float | None:
    """``value_to_float``: a boolean or number as it is (NaN: unscored), Inspect's letter grades, yes/no and
    true/false in any case, a text holding a finite number; None for anything else (Inspect warns and
    counts it 0; judgelab never reads a value it cannot read as a 0)."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    if value in LETTERS:
        return LETTERS[value]
    if value.lower() in WORDS:
        return WORDS[value.lower()]
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _read(value: Any) -> float:
    """``to_float`` of a value given to :func:`reduce`, whose caller has checked that it reads as a number; a
    TypeError (as comparing or adding up a None would raise) if it does not."""
    number = to_float(value)
    if number is None:
        raise TypeError(f"{value!r} is not a value Inspect reads as a number")
    return number


def unscored(value: Any) -> bool:
    """Inspect's unscored sentinel (NaN), or a null in its place."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def known(reducer: str) -> bool:
    return reducer in ("mean", "median", "mode", "max", "majority") or bool(_WITH_K.fullmatch(reducer))


def reduce(reducer: str, values: list[Any]) -> Any:
    """One sample's value over its epochs by the ``known`` reducer named as the log names it; NaN when no
    epoch was scored. ``values`` are scalars ``to_float`` reads, or unscored."""
    kept = [value for value in values if not unscored(value)]
    if not kept:
        return math.nan
    if reducer in ("mode", "majority"):
        value, count = Counter(kept).most_common(1)[0]  # ties: the first seen, as Counter keeps them
        return value if reducer == "mode" or 2 * count > len(values) else math.nan  # majority: of every epoch
    if reducer == "max":
        return max(kept, key=_read)
    floats = [_read(value) for value in kept]
    if reducer in ("mean", "median"):
        return (statistics.mean if reducer == "mean" else statistics.median)(floats)
    name, k = _WITH_K.fullmatch(reducer).groups()  # type: ignore[union-attr]  # a known() reducer: it matches
    return _with_k(name, int(k), len(floats), sum(value >= _THRESHOLD for value in floats))


def _with_k(name: str, k: int, total: int, correct: int) -> float:
    if name == "at_least":
        return float(correct >= k)
    if total < k:  # fewer scored epochs than k: undefined, as Inspect says
        return math.nan
    if name == "pass_k":
        return math.comb(correct, k) / math.comb(total, k)
    if total - correct < k:  # pass_at: Chen et al.'s unbiased estimator
        return 1.0
    return 1.0 - math.prod(1.0 - k / n for n in range(total - correct + 1, total + 1))
