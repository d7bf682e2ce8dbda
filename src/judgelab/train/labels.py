"""Training targets: human scores for an aspect, or a teacher judge's scores (distillation).

Everything here is checked before any training starts or any file is written, so bad input
(an aspect no item has, too few labels, labels that never vary, a teacher that rated none of
the items) stops with a clear error and leaves nothing behind.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judgelab.data.dataset import Dataset
from judgelab.data.io import iter_lines, judgments_file, load_judgments
from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError
from judgelab.files import JsonBudget

#: Below this many labelled items a validation split (and any learning) is meaningless.
MIN_LABELLED = 10


@dataclass(frozen=True)
class Targets:
    """Items with a training target, aligned arrays, and the human scores where they exist."""

    items: tuple[Item, ...]
    labels: np.ndarray  # what the scorer learns (human scores, or the teacher's)
    humans: np.ndarray  # human scores for the aspect, NaN where an item has none
    origin: str  # "human" or "teacher"

    @property
    def dataset(self) -> Dataset:
        return Dataset(self.items)


def human_targets(items: Sequence[Item], aspect: str, where: str = "<data>") -> Targets:
    check_aspect(items, aspect, where)
    kept = [item for item in items if item.human_score(aspect) is not None]
    labels = np.array([item.human_score(aspect) for item in kept], dtype=float)
    return Targets(tuple(kept), labels, labels.copy(), "human")


def teacher_targets(items: Sequence[Item], aspect: str, teacher: dict[str, float],
                    where: str = "<teacher>") -> Targets:
    """Items the teacher rated, with its scores as targets (human scores kept for comparison)."""
    kept = [item for item in items if item.id in teacher]
    if not kept:
        sample = ", ".join(list(teacher)[:3]) or "none"
        raise DataError(f"the teacher rated none of the {len(items)} items for {aspect!r} "
                        f"(its item ids look like: {sample})", where, field="item_id")
    labels = np.array([teacher[item.id] for item in kept], dtype=float)
    humans = np.array([np.nan if item.human_score(aspect) is None else item.human_score(aspect) for item in kept])
    return Targets(tuple(kept), labels, humans, "teacher")


def check_aspect(items: Sequence[Item], aspect: str, where: str) -> None:
    if not any(item.human_score(aspect) is not None for item in items):
        known = Dataset(items).aspects() if items else []
        raise ConfigError(f"{where}: no item has a human score for aspect {aspect!r}; "
                          f"aspects in the data: {', '.join(known) or 'none'} (or give --teacher JUDGMENTS)")


def check_trainable(targets: Targets, where: str, minimum: int = MIN_LABELLED) -> None:
    """Enough labelled items in at least two groups, and labels that vary."""
    n = len(targets.items)
    if n < minimum:
        raise DataError(f"only {n} labelled items; training needs at least {minimum}", where)
    groups = {item.group for item in targets.items}
    if len(groups) < 2:
        raise DataError(f"all {n} labelled items share one group ({next(iter(groups))!r}); a validation "
                        "split by group needs at least 2 groups", where, field="group_id")
    if np.ptp(targets.labels) == 0:
        raise DataError(f"every label is {targets.labels[0]:g}: constant labels teach nothing", where)


def scale_of(items: Sequence[Item], aspect: str, labels: np.ndarray) -> tuple[float, float]:
    """The aspect's declared [min, max] (``extra.aspect_scales`` / ``scale``), widened to the labels seen."""
    declared = next((s for s in (item.aspect_scale(aspect) for item in items) if s is not None), None)
    low, high = float(labels.min()), float(labels.max())
    if declared:
        low, high = min(low, declared[0]), max(high, declared[1])
    return low, high


def ordinal_levels(labels: np.ndarray, max_levels: int = 10) -> list[float]:
    """Ordered classes for the ordinal head: the distinct label values when there are few
    (integer ratings, averages of 3 annotators), else ``max_levels`` evenly spaced values
    (continuous teacher scores)."""
    distinct = np.unique(labels)
    if len(distinct) <= max_levels:
        return [float(v) for v in distinct]
    return [float(v) for v in np.linspace(distinct[0], distinct[-1], max_levels)]


def read_teacher(path: str | Path, aspect: str, judge: str | None = None, field: str | None = None
                 ) -> dict[str, float]:
    """Teacher scores by item id from a judgments file, read by ``load_judgments``.

    Two layouts: this toolkit's judgments (``item_id`` + ``score``, any of JSONL/CSV/Parquet;
    only ``ok`` judgments of this aspect, or without an aspect), or published ratings
    (``item_id`` + ``prediction`` {aspect: score}, as in ``benchmarks/reference/``: read at
    ``prediction.<aspect>`` unless ``field`` says otherwise). ``judge`` keeps one judge's rows
    (exact name, or a prefix such as ``Mistral-7B``); when several judges remain, their scores
    are averaged per item (an ensemble teacher).
    """
    path = judgments_file(path)
    if not path.is_file():
        raise ConfigError(f"teacher judgments not found: {path}")
    judgments = load_judgments(path, field=field or _published_field(path, aspect), judge=judge)
    scores: dict[str, list[float]] = defaultdict(list)
    for j in judgments:
        if j.ok and j.score is not None and j.aspect in (None, aspect):
            scores[j.item_id].append(j.score)
    if not scores:
        raise DataError(f"no usable teacher score for aspect {aspect!r}", path, field="score")
    return {item_id: float(np.mean(values)) for item_id, values in scores.items()}


def _published_field(path: Path, aspect: str) -> str | None:
    """``prediction.<aspect>`` (or ``prediction`` when it holds one value) for a file of published
    ratings (its first row has a ``prediction``); None for this toolkit's judgments."""
    if not path.name.endswith((".jsonl", ".json")):
        return None
    number, first = next((got for got in iter_lines(path, whole=False) if got[1].strip()), (1, b""))  # within the bound
    JsonBudget().spend(first, path, number)  # its values too: the line is parsed whole
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):  # no record to look into: the reader names the problem
        return None
    if not isinstance(record, dict) or "prediction" not in record:
        return None
    return f"prediction.{aspect}" if isinstance(record["prediction"], dict) else "prediction"
