"""Items and judgments as a caller gives them: a file, a pandas DataFrame, a Dataset, or a list of
``Item``/``Judgment`` objects or plain dicts. The Python front door (``import judgelab as jl``) takes
all of these wherever it takes data; files and DataFrames go through the readers of
:mod:`judgelab.data.io`, lists are checked here with the same errors, located as ``<list>:ROW``.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from judgelab.data.dataset import Dataset
from judgelab.data.io import load_items, load_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.validation import _validate
from judgelab.errors import ConfigError, DataError

LIST = "<list>"  # where a row of a list came from, in error messages


def is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def _rows(value: Any, what: str) -> list[Any]:
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{what}: give a file path, a pandas DataFrame or a list of {what}, "
                        f"not {type(value).__name__}")
    return list(value)


def as_items(data: Any) -> Dataset:
    """``data`` as a Dataset: a path or DataFrame read by ``load_items``, a Dataset as it is (or the one
    ``data.items`` holds: another tool's output read), or a list of ``Item`` objects and dicts (each dict
    validated as a file's row would be)."""
    held = getattr(data, "items", None)
    if isinstance(held, Dataset):
        data = held
    if isinstance(data, Dataset):
        return data
    if is_path(data) or _is_frame(data):
        return load_items(data)
    rows = _rows(data, "items")
    if not rows:
        raise DataError("no items", LIST)
    items = [row if isinstance(row, Item) else _validate(Item, _record(row, k), LIST, k)
             for k, row in enumerate(rows, start=1)]
    return Dataset(items, name=None)


def as_judgments(data: Any, *, field: str | None = None, labels: Collection[str] | None = None) -> list[Judgment]:
    """``data`` as judgments: a judgments file or run folder, a DataFrame, anything holding
    ``.judgments`` (a run's result, another tool's output), or a list of ``Judgment`` objects and dicts.
    ``field`` and ``labels`` as in :func:`judgelab.data.io.load_judgments`."""
    held = getattr(data, "judgments", None)
    if held is not None and not is_path(data):
        data = held
    if is_path(data) or _is_frame(data):
        return load_judgments(data, field=field, labels=labels)
    rows = _rows(data, "judgments")
    if all(isinstance(row, Judgment) for row in rows):
        for k, judgment in enumerate(rows, start=1):
            if labels is not None and judgment.ok and judgment.label not in labels:
                raise DataError(f"{judgment.label!r} is not a verdict: give one of {', '.join(labels)}", LIST, k,
                                "label")
        return rows
    import pandas as pd  # dicts (maybe mixed with objects) are read as the rows of a table

    records = [row.model_dump() if isinstance(row, Judgment) else _record(row, k) for k, row in enumerate(rows, 1)]
    return load_judgments(pd.DataFrame.from_records(records), field=field, labels=labels)


def several_judgments(data: Any) -> bool:
    """Whether ``data`` is several judges' verdicts: a mapping ``{name: verdicts}``, or a list or tuple of
    verdict sources (paths, DataFrames, runs, lists), one per judge; not one list of judgments or rows."""
    if isinstance(data, Mapping):
        return True
    if not isinstance(data, (list, tuple)) or not data:
        return False
    return all(is_path(one) or _is_frame(one) or hasattr(one, "judgments") or isinstance(one, (list, tuple))
               for one in data)


def judgments_by_judge(data: Any, *, field: str | None = None,
                       labels: Collection[str] | None = None) -> dict[str, list[Judgment]]:
    """Several judges' verdicts (:func:`several_judgments`) as ``{where: judgments}``: a mapping's keys, a
    path as given, else ``judgments N``; each read as :func:`as_judgments` reads one."""
    named = data.items() if isinstance(data, Mapping) else (
        (str(one) if is_path(one) else f"judgments {k}", one) for k, one in enumerate(data, start=1))
    out: dict[str, list[Judgment]] = {}
    for where, one in named:
        if where in out:
            raise ConfigError(f"{where} is given twice as a judge's verdicts")
        out[str(where)] = as_judgments(one, field=field, labels=labels)
    return out


def named_by_where(by_where: Mapping[str, Iterable[Judgment]]) -> list[Judgment]:
    """Several judges' verdicts (``{where: judgments}``) as one list, a verdict that names no judge named by where
    it came from, so that the judges stay apart (a folder's judgments.jsonl, an active draw among judges)."""
    return [j if j.judge is not None else j.model_copy(update={"judge": str(where)})
            for where, found in by_where.items() for j in found]


def _record(row: Any, position: int) -> dict[str, Any]:
    if not isinstance(row, Mapping):
        raise DataError(f"expected a dict (or an Item/Judgment), got {type(row).__name__}", LIST, position)
    return dict(row)
