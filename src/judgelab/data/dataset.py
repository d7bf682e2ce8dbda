"""Dataset: an ordered, id-indexed, read-only sequence of items.

Operations return new datasets and never change the one they are called on. Loading and saving
delegate to ``judgelab.data.io``; splitting lives in ``judgelab.data.split``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

import numpy as np

from judgelab.data.item import Item, ItemKind
from judgelab.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


SHOWN_ROWS = 10  # rows of a dataset a notebook shows


class Dataset(Sequence[Item]):
    """Items in file order, addressable by position (``ds[0]``) or id (``ds["sfres-0001"]``)."""

    __slots__ = ("_items", "_index", "name")

    def __init__(self, items: Iterable[Item] = (), *, name: str | None = None):
        items = tuple(items)
        index: dict[str, int] = {}
        for position, item in enumerate(items):
            if not isinstance(item, Item):
                raise TypeError(f"a Dataset holds Item objects, got {type(item).__name__} at {position}")
            if item.id in index:
                raise DataError(f"duplicate id {item.id!r} (positions {index[item.id]} and {position})",
                                name, None, "id")
            index[item.id] = position
        self._items, self._index, self.name = items, index, name

    @classmethod
    def _trusted(cls, items: Iterable[Item], *, name: str | None = None) -> Dataset:
        """Build without re-checking: for items already validated with unique ids (loaders, subsets)."""
        self = cls.__new__(cls)
        self._items = tuple(items)
        self._index = {item.id: i for i, item in enumerate(self._items)}
        self.name = name
        return self

    # -- sequence ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self._items)

    @overload
    def __getitem__(self, key: int | str) -> Item: ...
    @overload
    def __getitem__(self, key: slice) -> Dataset: ...
    def __getitem__(self, key: int | str | slice) -> Item | Dataset:
        if isinstance(key, str):
            try:
                return self._items[self._index[key]]
            except KeyError:
                raise KeyError(f"no item with id {key!r}") from None
        if isinstance(key, slice):
            return Dataset._trusted(self._items[key], name=self.name)
        return self._items[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return key in self._index
        return isinstance(key, Item) and key.id in self._index and self[key.id] == key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dataset) and self._items == other._items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        kinds = "/".join(sorted(self.kinds)) or "empty"
        return f"Dataset({self.name!r}, {len(self)} items, {kinds}, {len(self.groups())} groups)"

    # -- views --------------------------------------------------------------------------------------

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self._items]

    @property
    def kinds(self) -> set[ItemKind]:
        return {item.kind for item in self._items}

    @property
    def kind(self) -> ItemKind:
        """The kind every item has; a DataError if the dataset is empty or mixes kinds."""
        kinds = self.kinds
        if len(kinds) != 1:
            raise DataError(f"expected one kind of item, found {sorted(kinds) or 'none'}", self.name)
        return next(iter(kinds))

    def aspects(self) -> list[str]:
        """Aspects with human scores, in first-seen order; ``relevance`` for graded relevance labels."""
        seen: dict[str, None] = {}
        for item in self._items:
            seen.update(dict.fromkeys(item.scores))
            if item.kind == "relevance" and isinstance(item.label, int):
                seen.setdefault("relevance")
        return list(seen)

    def groups(self) -> dict[str, list[Item]]:
        """Items by ``Item.group`` (group_id, else qid, else the item's own id), in first-seen order."""
        groups: dict[str, list[Item]] = {}
        for item in self._items:
            groups.setdefault(item.group, []).append(item)
        return groups

    def human_scores(self, aspect: str) -> np.ndarray:
        """Float array aligned with the items; NaN where an item has no human score for ``aspect``."""
        scores = (item.human_score(aspect) for item in self._items)
        return np.fromiter((np.nan if s is None else s for s in scores), dtype=float, count=len(self))

    # -- new datasets -------------------------------------------------------------------------------

    def filter(self, keep: Callable[[Item], bool]) -> Dataset:
        return Dataset._trusted((item for item in self._items if keep(item)), name=self.name)

    def subset(self, ids: Iterable[str]) -> Dataset:
        """The items with these ids, in the order given."""
        ids = list(ids)
        unknown = [i for i in ids if i not in self._index]
        if unknown:
            raise KeyError(f"{len(unknown)} ids not in the dataset, e.g. {unknown[:3]}")
        return Dataset((self[i] for i in ids), name=self.name)

    def renamed(self, name: str | None) -> Dataset:
        return Dataset._trusted(self._items, name=name)

    # -- I/O ----------------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, kind: ItemKind | None = None) -> Dataset:
        from judgelab.data.io import load_items

        return load_items(path, kind=kind)

    def save(self, path: str | os.PathLike[str]) -> Path:
        from judgelab.data.io import save_items

        return save_items(self, path)

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame, *, kind: ItemKind | None = None,
                    name: str | None = None) -> Dataset:
        """One item per row; columns as in a CSV file (see ``judgelab.data.io``)."""
        from judgelab.data.io import load_items

        return load_items(frame, kind=kind).renamed(name)

    def to_pandas(self) -> pd.DataFrame:
        """One row per item: fields that some item sets, ``scores.<aspect>`` as float columns
        (NaN = no score), ``extra`` as dicts. ``Dataset.from_pandas`` reverses it."""
        from judgelab.data.io import items_frame

        return items_frame(self)

    def _repr_html_(self) -> str:
        """Jupyter: this summary line and the first ``SHOWN_ROWS`` rows of ``to_pandas()`` (cells escaped)."""
        from html import escape

        more = f" (the first {SHOWN_ROWS} shown)" if len(self) > SHOWN_ROWS else ""
        return f"<p>{escape(repr(self))}{more}</p>" + self[:SHOWN_ROWS].to_pandas().to_html(escape=True)
