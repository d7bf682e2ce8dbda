"""Label in rounds, look after each, stop when the question is decided (docs/evaluate.md, "Label until decided").

A confidence sequence (``intervals="sequence"``: judgelab.metrics.betting, anytime bets) holds at
every number of labels at once, so a decision taken the first time the sequences allow it keeps
its error rate however the labelling was stopped; a t interval recomputed after every round does
not (on HANNA with no real difference between the two systems it declared one in 13% of sessions,
on Chatbot Arena in 27%: bench/bench_optional_stopping.py).

Questions:

* ``best``: which system has the highest value. Every system's sequence of its labels at level
  ``1 - alpha / K`` (a union bound over the K systems, so that all hold at once); decided when the
  leader's lower bound clears every other system's upper bound.
* the gate of ``judgelab compare --sequential`` (evaluate/two_systems.py): is the candidate worse
  than the baseline by more than a margin, decided when its sequence for the difference leaves the
  margin on either side.

Both read the labels' own sequences (human-only) unless told otherwise: a prediction-powered
sequence bets on the rectifier ``human - judge``, whose range is the scale's plus the judge's
spread, and a bounded-range guarantee pays for the range long before it gains from a smaller
variance (with 30 paired HANNA-like inputs the corrected sequence was 2.5 times as wide as the
labels' own).

The labels must be drawn uniformly at random within each system and read in the order they were
given (the labels file's order, or the id list's); the estimators take that order from the design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.errors import ConfigError

QUESTIONS = ("best",)


@dataclass(frozen=True)
class Decision:
    """The question, whether the labels so far decide it, the answer, and each system's sequence."""

    question: str
    decided: bool
    answer: str
    confidence: float  # the level of each system's sequence (1 - alpha / K for "best")
    bounds: dict[str, tuple[float, float]]
    more_per_system: int | None = None  # a rough guess of the labels still needed (None: decided or no guess)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "decided": self.decided, "answer": self.answer,
                "confidence_per_system": self.confidence, "more_per_system": self.more_per_system,
                "bounds": {k: [float(a), float(b)] for k, (a, b) in self.bounds.items()}}


def per_system_level(confidence: float, n_systems: int) -> float:
    """Each system's level so that K sequences hold at once with probability ``confidence``."""
    return 1 - (1 - confidence) / max(n_systems, 1)


def decide_best(systems: tuple[str, ...], value: np.ndarray, ci: np.ndarray, n_labelled: np.ndarray,
                confidence: float) -> Decision:
    """``best`` from every system's confidence sequence (made at :func:`per_system_level`)."""
    known = np.isfinite(value) & np.all(np.isfinite(ci), axis=1)
    if known.sum() < 2:
        raise ConfigError("which system is best needs at least two systems with labels")
    bounds = {systems[k]: (float(ci[k, 0]), float(ci[k, 1])) for k in np.flatnonzero(known)}
    leader = int(np.flatnonzero(known)[np.argmax(value[known])])
    others = known.copy()
    others[leader] = False
    runner = int(np.flatnonzero(others)[np.argmax(ci[others, 1])])
    if ci[leader, 0] > ci[runner, 1]:
        return Decision("best", True, f"{systems[leader]} is best: its lower bound {ci[leader, 0]:.3g} is above every "
                        f"other system's upper bound ({systems[runner]}: {ci[runner, 1]:.3g})", confidence, bounds)
    return Decision("best", False, f"{systems[leader]} leads, but its lower bound {ci[leader, 0]:.3g} is "
                    f"below {systems[runner]}'s upper bound {ci[runner, 1]:.3g}; keep labelling", confidence, bounds,
                    _more(value, ci, n_labelled, leader, runner))


def _more(value, ci, n_labelled, leader: int, runner: int) -> int | None:
    """Labels per system until the two intervals part, if widths shrink as 1/sqrt(n) and the values stay."""
    gap = value[leader] - value[runner]
    half = ((ci[leader, 1] - ci[leader, 0]) + (ci[runner, 1] - ci[runner, 0])) / 2
    if not gap > 0 or not half > 0:
        return None  # too close to call from here
    n = float(max(n_labelled[leader], n_labelled[runner], 1))
    needed = n * (half / gap) ** 2
    return max(int(math.ceil(needed - n)), 1)
