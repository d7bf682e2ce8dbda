"""--until-decided, kept up to date label by label: the decision ``decide_labels`` would give, at a cost
that does not grow with the labels.

``decide_labels`` reads every label given so far as a confidence sequence, which costs O(n^2) (5 s a page
at 2,000 labels, 44 s at 4,000). Here each label moves one running sequence on by one step
(``metrics.betting.RunningSequence``), and the decision is made again only when a label came since.
The sequences hold the same numbers as ``decide_labels``'s, so the answer and its wording are the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judgelab.data.item import Item
from judgelab.data.labels import PREFERENCES
from judgelab.evaluate.sequential import Decision, Question, decide_best, decide_worse, per_system_level
from judgelab.metrics.betting import RunningSequence


class RunningDecision:
    """The question's decision from the labels added so far (each item's first label counts)."""

    def __init__(self, question: Question, items: Sequence[Item], scale: tuple[float, float] | None):
        self.question = question
        self._by_id = {item.id: item for item in items}
        self._seen: set[str] = set()
        self._decision: Decision | None = None
        if question.kind == "worse":
            pair = {question.baseline, question.candidate}
            population = sum(1 for item in items if {item.system_a, item.system_b} == pair)
            self._streams = {question.candidate: _Stream((0.0, 1.0), question.confidence, population)}
        else:
            self._systems = tuple(sorted({item.system_id for item in items}))
            self._level = per_system_level(question.confidence, len(self._systems))
            self._scale = scale
            self._streams = {system: _Stream(scale, self._level, sum(1 for item in items if item.system_id == system))
                             for system in self._systems}

    def add(self, item_id: str, value: float | str | None) -> None:
        """A label, in the order given: counted if it is its item's first."""
        item = self._by_id.get(item_id)
        if item is None or value is None or item_id in self._seen:
            return
        self._seen.add(item_id)
        if self.question.kind == "worse":
            if {item.system_a, item.system_b} != {self.question.baseline, self.question.candidate}:
                return
            won = PREFERENCES[value] if isinstance(value, str) else float(value)
            self._streams[self.question.candidate].add(won if item.system_a == self.question.candidate else 1 - won)
        else:
            self._streams[item.system_id].add(float(value))  # type: ignore[index]
        self._decision = None

    def decision(self) -> Decision:
        if self._decision is None:
            self._decision = self._worse() if self.question.kind == "worse" else self._best()
        return self._decision

    def _worse(self) -> Decision:
        # decide_labels's own wording of a head-to-head answer, so that the two never drift apart
        stream = self._streams[self.question.candidate]
        return decide_worse(self.question, np.array(stream.values), stream.population, stream.as_sequence)

    def _best(self) -> Decision:
        k = len(self._systems)
        value, ci, counts = np.full(k, np.nan), np.full((k, 2), np.nan), np.zeros(k)
        for index, system in enumerate(self._systems):
            stream = self._streams[system]
            if stream.values:
                value[index], ci[index], counts[index] = np.mean(stream.values), stream.sequence.bounds(), len(stream.values)
            else:
                value[index], ci[index] = (self._scale[0] + self._scale[1]) / 2, self._scale  # type: ignore[index]
        return decide_best(self._systems, value, ci, counts, self._level)


class _Stream:
    """One sequence's values (for their mean) and its running bounds."""

    def __init__(self, scale, confidence: float, population: int):
        self.values: list[float] = []
        self.population = population
        self.sequence = RunningSequence(scale, confidence=confidence, population=population) if population else None

    def add(self, value: float) -> None:
        self.values.append(value)
        self.sequence.add(value)  # type: ignore[union-attr]

    def as_sequence(self, *_args, **_options) -> tuple[np.ndarray, np.ndarray]:
        """Stands in for ``confidence_sequence`` where only the last bounds are read."""
        low, high = self.sequence.bounds()  # type: ignore[union-attr]
        return np.array([low]), np.array([high])
