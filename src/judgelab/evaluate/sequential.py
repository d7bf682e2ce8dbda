"""Label in rounds, look after each, stop when the question is decided (docs/evaluate.md, "Label until decided").

A confidence sequence (``intervals="sequence"``: judgelab.metrics.betting, anytime bets) holds at
every number of labels at once, so a decision taken the first time the sequences allow it keeps
its error rate however the labelling was stopped; a t interval recomputed after every round does
not (with no real difference between the two systems it declared one in 14% of sessions on HANNA
and 27% on Chatbot Arena, the sequence in 0% and 3%: bench/bench_optional_stopping.py).

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

from judgelab.errors import ConfigError, term

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


# -- the labelling loop: a question asked of the labels as they come (judgelab annotate --until-decided) ----
@dataclass(frozen=True)
class Question:
    """``best`` (pointwise items with systems: which has the highest mean) or ``worse`` (comparisons:
    is ``candidate`` worse than ``baseline`` head-to-head by more than ``margin`` on the win rate)."""

    kind: str
    baseline: str | None = None
    candidate: str | None = None
    margin: float = 0.0
    confidence: float = 0.95

    @property
    def text(self) -> str:
        if self.kind == "best":
            return "which system is best"
        return f"is {self.candidate} worse than {self.baseline} by more than {self.margin:g} (win rate)"


def parse_question(text: str, confidence: float = 0.95) -> Question:
    """``best``, or ``worse:BASELINE,CANDIDATE[,MARGIN]`` (the margin on the win rate, e.g. 0.05)."""
    kind, _, rest = text.strip().partition(":")
    if kind == "best" and not rest:
        return Question("best", confidence=confidence)
    if kind == "worse":
        parts = [p.strip() for p in rest.split(",")]
        if len(parts) in (2, 3) and all(parts[:2]) and parts[0] != parts[1]:
            try:
                margin = float(parts[2]) if len(parts) == 3 else 0.0
            except ValueError:
                margin = -1.0
            if 0 <= margin < 0.5:
                return Question("worse", parts[0], parts[1], margin, confidence)
    raise ConfigError(f"{term('until_decided')} {text!r}: give 'best' (items with system_id) or "
                      "'worse:BASELINE,CANDIDATE' "
                      "with an optional margin on the win rate ('worse:v1,v2,0.05'; comparisons between systems)")


def check_question(question: Question, items) -> None:
    """The question fits the items: systems to rank, or comparisons between the two named systems."""
    items = list(items)
    if question.kind == "best":
        systems = {item.system_id for item in items}
        if items[0].kind != "pointwise" or None in systems or len(systems) < 2:
            raise ConfigError(f"{term('until_decided')} best ranks systems: it needs pointwise items with a system_id, "
                              "of two systems or more")
        return
    pairs = [item for item in items if item.kind == "pairwise"
             and {item.system_a, item.system_b} == {question.baseline, question.candidate}]
    if not pairs:
        raise ConfigError(f"{term('until_decided')} worse:{question.baseline},{question.candidate}: no comparison "
                          "between those two systems (system_a, system_b) in the items")


def decide_labels(question: Question, items, labels, scale: tuple[float, float] | None) -> Decision:
    """The decision from the labels given so far: ``labels`` (item id, value) in the order they came
    (each item's first counts), read as confidence sequences over the items of the question."""
    from judgelab.data.labels import PREFERENCES
    from judgelab.metrics.betting import confidence_sequence

    by_id = {item.id: item for item in items}
    first: dict[str, float | str] = {}
    for item_id, value in labels:
        if item_id in by_id and value is not None and item_id not in first:
            first[item_id] = value
    if question.kind == "worse":
        units = [i for i in items if {i.system_a, i.system_b} == {question.baseline, question.candidate}]
        values = [PREFERENCES[v] if isinstance(v, str) else float(v) for i, v in first.items()
                  if {by_id[i].system_a, by_id[i].system_b} == {question.baseline, question.candidate}]
        keys = [i for i in first if {by_id[i].system_a, by_id[i].system_b} == {question.baseline, question.candidate}]
        own = [v if by_id[k].system_a == question.candidate else 1 - v for k, v in zip(keys, values, strict=True)]
        return decide_worse(question, np.array(own), len(units), confidence_sequence)
    systems = sorted({item.system_id for item in items})
    level = per_system_level(question.confidence, len(systems))
    value, ci, counts = np.full(len(systems), np.nan), np.full((len(systems), 2), np.nan), np.zeros(len(systems))
    for k, system in enumerate(systems):
        mine = [float(v) for i, v in first.items() if by_id[i].system_id == system]
        population = sum(1 for item in items if item.system_id == system)
        if scale is None:  # the TypeError confidence_sequence's scale, or indexing None, would raise below
            raise TypeError("which system is best needs the labels' scale")
        if mine:
            low, high = confidence_sequence(mine, scale, confidence=level, population=population)
            value[k], ci[k], counts[k] = np.mean(mine), (low[-1], high[-1]), len(mine)
        else:
            value[k], ci[k] = (scale[0] + scale[1]) / 2, scale
    return decide_best(tuple(systems), value, ci, counts, level)


def decide_worse(question: Question, own: np.ndarray, population: int, sequence) -> Decision:
    limit = 0.5 - question.margin
    name = question.candidate
    bounds: dict[str, tuple[float, float]]
    if len(own) == 0:
        bounds = {name: (0.0, 1.0)}  # type: ignore[dict-item]  # a worse question names its candidate
        return Decision("worse", False, f"no label yet on the {population} comparisons of {name} with "
                        f"{question.baseline}", question.confidence, bounds)
    low, high = sequence(own, (0.0, 1.0), confidence=question.confidence, population=population)
    bounds = {name: (float(low[-1]), float(high[-1]))}  # type: ignore[dict-item]  # as above
    where = (f"{name}'s win rate against {question.baseline}: {own.mean():.3f}, confidence sequence "
             f"[{low[-1]:.3f}, {high[-1]:.3f}] after {len(own)} of {population} comparisons")
    if high[-1] < limit:
        return Decision("worse", True, f"{name} is worse than {question.baseline} by more than the margin "
                        f"({where}, below {limit:g})", question.confidence, bounds)
    if low[-1] > limit:
        return Decision("worse", True, f"{name} is not worse than {question.baseline} by more than the margin "
                        f"({where}, above {limit:g})", question.confidence, bounds)
    return Decision("worse", False, f"not yet: {where} still holds {limit:g}", question.confidence, bounds)
