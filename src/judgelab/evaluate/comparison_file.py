"""Comparisons between systems read from a JSON-lines file in one pass, kept as a few fields a row.

``evaluate`` on comparison items needs four fields of each (id, system_a, system_b, the human verdict)
and one number from its judgment (the judge's preference for a). Read whole, as ``load_items`` and
``load_judgments`` read them, each comparison is an ``Item`` of about 1.3 KB and a ``Judgment`` of about
1.5 KB: a million comparisons took 3.3 GB. Here each line is validated exactly as those readers validate
it (errors name the file, line and field) and then let go; what is kept is a :class:`ComparisonRow`
(about 130 bytes with its id) and the judge's preference in an array.

The route is taken for one judge's verdicts in one file beside a ``.jsonl``/``.ndjson`` data file whose
first line is a comparison between systems (:func:`read_comparison_table` returns None otherwise, and the
caller reads objects as before).
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.data.io import (
    duplicate_id,
    iter_jsonl,
    iter_judgments,
    judges_named,
    judgments_file,
    nest_dotted,
    validate_item,
    warn_unused_names,
)
from judgelab.data.item import VERDICTS, Item
from judgelab.data.judgment import Judgment
from judgelab.data.labels import PREFERENCES
from judgelab.data.stream import streamable
from judgelab.errors import DataError
from judgelab.metrics.align import judged_twice, several_judges

#: Items validated in full and kept for the warning about unknown columns (as ``data.stream.head`` keeps).
HEAD_ITEMS = 1000


class ComparisonRow:
    """One comparison as ``evaluate`` reads it: what an ``Item`` of kind pairwise gives it, and nothing else."""

    __slots__ = ("id", "system_a", "system_b", "label")
    kind = "pairwise"

    def __init__(self, ident: str, system_a: str, system_b: str, label: str | None) -> None:
        self.id, self.system_a, self.system_b, self.label = ident, system_a, system_b, label

    def aspect_scale(self, aspect: str | None) -> None:
        """A comparison declares no scale (``data.labels.check_against_items`` asks every item)."""
        return None


@dataclass(frozen=True)
class ComparisonTable:
    """Comparisons and one judge's preference for a on each (NaN: no usable verdict), as read from files."""

    rows: list[ComparisonRow]
    verdicts: np.ndarray
    unknown_judgments: int  # verdicts for ids that are no comparison of the data

    def __len__(self) -> int:
        return len(self.rows)


def read_comparison_table(data: Any, judgments: Any, *, judge: Any = None,
                          field: str | None = None) -> ComparisonTable | None:
    """The comparisons of ``data`` with ``judgments``' verdicts, or None where this route does not apply:
    ``data`` no JSON-lines path whose first record names ``system_a``, ``judgments`` no single path, or
    several judges asked for (a panel reads objects)."""
    if not (_is_path(data) and streamable(data) and _is_path(judgments) and (judge is None or isinstance(judge, str))):
        return None
    path = Path(data)
    if not path.is_file():
        return None  # the object route says what is wrong with it
    first = next(iter_jsonl(path, whole=True), None)
    if first is None or first[1].get("system_a") is None:
        return None
    rows, position = _read_rows(path)
    verdicts, unknown = _read_verdicts(judgments_file(judgments), position, judge, field)
    return ComparisonTable(rows, verdicts, unknown)


def judge_preference(judgment: Judgment | None) -> float | None:
    """The judge's preference for a: its probability where it recorded one (``extra.preference``, a pairwise
    judge with ``score: logprob``), else the mean over both orders when it judged both."""
    if judgment is None or not judgment.ok or judgment.label not in VERDICTS:
        return None
    soft = judgment.extra.get("preference")  # a pairwise judge scored by logprobs (score: logprob): a soft verdict
    if isinstance(soft, float) and 0.0 <= soft <= 1.0:
        return soft
    both = judgment.extra.get("verdicts")
    if isinstance(both, Mapping) and len(both) == 2 and all(v in VERDICTS for v in both.values()):
        return float(np.mean([PREFERENCES[v] for v in both.values()]))
    return PREFERENCES[judgment.label]


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _read_rows(path: Path) -> tuple[list[ComparisonRow], dict[str, int]]:
    """The comparisons of a JSON-lines file and each id's position, checked as ``load_items`` checks them."""
    where = str(path)
    rows: list[ComparisonRow] = []
    position: dict[str, int] = {}
    lines = array("q")  # the line each comparison was on: a duplicate id names both
    # one string per system name and verdict, shared by the rows (typed as an item's label, str or int, may be)
    names: dict[str | int, str | int] = {}
    columns: dict[str, None] = {}
    head: list[Item] = []
    for line, record in iter_jsonl(path, whole=True):
        record = nest_dotted(record, where, line)
        if not columns.keys() >= record.keys():
            columns.update(dict.fromkeys(record))
        item = validate_item(record, where, line)
        _check_comparison(item, position, lines, where, line)
        position[item.id] = len(rows)
        lines.append(line)
        if len(head) < HEAD_ITEMS:
            head.append(item)
        shared = [None if text is None else names.setdefault(text, text)
                  for text in (item.system_a, item.system_b, item.label)]
        # _check_comparison and the item's own check: both systems named, the label a verdict or None
        rows.append(ComparisonRow(item.id, *shared))  # type: ignore[arg-type]
    if not rows:
        raise DataError("no items", where)
    warn_unused_names(where, columns, head)
    return rows, position


def _check_comparison(item: Item, position: dict[str, int], lines: array, where: str, line: int) -> None:
    if item.id in position:
        raise duplicate_id(item.id, lines[position[item.id]], where, line)
    if item.kind != "pairwise":
        raise DataError(f"a {item.kind} item among comparisons between systems: evaluate one kind at a time",
                        where, line)
    if item.system_a is None:
        raise names_no_systems(item.id, where, line)


def _read_verdicts(path: Path, position: dict[str, int], judge: str | None,
                   field: str | None) -> tuple[np.ndarray, int]:
    """Each comparison's preference for a from one judge's verdicts (NaN: none usable), and how many verdicts
    name no comparison of the data. The judge is chosen as ``metrics.align.select_judgments`` chooses it (by
    name, else every judge whose name starts with ``judge``; several left is an error), so one column is
    kept per candidate judge while the file is read, then merged."""
    n = len(position)
    columns: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}  # judge -> (preference, seen)
    unknown: Counter[str | None] = Counter()
    names: set[str] = set()
    for judgment in iter_judgments(path, field=field, labels=VERDICTS):
        name = judgment.judge
        if name is not None:
            names.add(name)
        if judge is not None and (name is None or not name.startswith(judge)):
            continue
        k = position.get(judgment.item_id)
        if k is None:
            unknown[name] += 1
            continue
        preference, seen = columns.get(name) or columns.setdefault(name, (np.full(n, np.nan), np.zeros(n, bool)))
        if seen[k]:
            raise judged_twice(judgment.item_id)
        seen[k] = True
        value = judge_preference(judgment)
        preference[k] = np.nan if value is None else value
    chosen = _chosen_judges(names, judge)
    verdicts, taken = np.full(n, np.nan), np.zeros(n, bool)
    for name in chosen:
        if name in columns:
            preference, seen = columns[name]
            if (taken & seen).any():  # a judgment with no judge's name and one with it, for one comparison
                raise judged_twice(next(i for i, k in position.items() if taken[k] and seen[k]))
            verdicts[seen] = preference[seen]
            taken |= seen
    return verdicts, sum(unknown[name] for name in chosen)


def names_no_systems(item_id: str, where: str | None = None, line: int | None = None) -> DataError:
    """The error for a comparison that names no systems, where systems are ranked."""
    return DataError(f"item {item_id!r} names no systems: ranking systems needs system_a and system_b on every "
                     "comparison", where, line, "system_a" if where else None)


def _chosen_judges(names: set[str], judge: str | None) -> list[str | None]:
    """The judges whose verdicts count: ``judge`` as ``data.io.judges_named`` reads it, else every verdict (of
    at most one named judge, with those naming none)."""
    if judge is not None:
        chosen: list[str | None] = list(judges_named(judge, names))
        if len(chosen) > 1:
            raise several_judges(sorted(names & set(chosen)), judge)  # type: ignore[arg-type]
        return chosen
    if len(names) > 1:
        raise several_judges(sorted(names), None)
    return [None, *names]


__all__ = ["ComparisonRow", "ComparisonTable", "judge_preference", "names_no_systems", "read_comparison_table"]
