"""Reading datasets larger than memory: items one JSON line at a time, and chunks for the judge.

The data layer's ``load_items`` reads a whole file (it checks ids across it and supports every
format); a streamed run instead reads ``.jsonl``/``.ndjson`` (optionally ``.gz``) line by line
and validates each row exactly as ``load_items`` does (``DataError`` with file, line and field),
duplicate ids included, across the whole file: an id judged twice would break every rerun's
metrics. The ids seen are kept on disk (``_SeenIds``), so memory stays flat however long the stream.
A file is first read once for its ids alone (``check_ids``), so a duplicate anywhere is refused before
any call is paid; an iterator can be read only once, so it is checked chunk by chunk as it is read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Container, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from judgelab.data.io import (  # one reader, so errors read the same
    duplicate_id,
    iter_jsonl,
    nest_dotted,
    open_binary,
    validate_item,
    warn_unused_names,
)
from judgelab.data.item import Item
from judgelab.errors import DataError
from judgelab.files import regular_file

STREAMABLE = (".jsonl", ".ndjson")


def _item_id(item: Item) -> str:
    return item.id


def streamable(path: str | Path) -> bool:
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return bool(suffixes) and suffixes[-1] in STREAMABLE


def iter_items(path: str | Path, only: Container[str] | None = None) -> Iterator[Item]:
    """Items of a JSON-lines file, one at a time (blank lines skipped). The path is checked now
    (a DataError if it is no JSON-lines file), the lines as they are read.

    ``only``: validate and yield just the items with these ids (the others are only parsed),
    for readers that need a few items out of a large file, such as the report.
    """
    path = Path(path)
    if not streamable(path):
        raise DataError("streaming reads JSON lines (.jsonl/.ndjson, optionally .gz); convert the file "
                        "or load it whole with load_items", path)
    regular_file(path)
    where = str(path)
    wanted = ((line, record) for line, record in iter_jsonl(path) if only is None or str(record.get("id")) in only)
    return distinct_ids(((line, validate_item(nest_dotted(record, where, line), where, line))
                         for line, record in wanted), where)


def head(path: str | Path, count: int) -> list[Item]:
    """The first ``count`` items of a JSON-lines file, read as ``load_items`` reads them (a warning naming
    the file when its unknown columns look like judgelab fields no item uses): what a streamed run checks
    before it starts."""
    where, columns, items = str(path), {}, []
    for line, record in islice(iter_jsonl(regular_file(Path(path))), count):
        record = nest_dotted(record, where, line)
        columns.update(dict.fromkeys(record))
        items.append(validate_item(record, where, line))
    warn_unused_names(where, columns, items)
    return items


def distinct_ids(items: Iterable[tuple[int, Any]], where: str, *, id_of: Callable[[Any], str] = _item_id,
                 note: str = "") -> Iterator[Any]:
    """The items of ``(line, item)`` pairs, stopping at an id seen before with a DataError naming
    both lines (for an iterator that is no file, ``where`` names it and lines are positions; ``note``
    is added to the message)."""
    seen = _SeenIds()
    try:
        for line, item in items:
            ident = id_of(item)
            earlier = seen.first_line(ident, line)
            if earlier != line:
                raise duplicate_id(ident, earlier, where, line, note)
            yield item
    finally:
        seen.close()


def check_ids(path: str | Path, limit: int | None = None) -> None:
    """Read a JSON-lines file (its first ``limit`` records) once for the ids alone, before anything is
    judged: a duplicate anywhere is a DataError naming both lines before any call is paid, rather than
    after the chunks before it were judged. Lines are parsed, not validated (the judging pass validates
    each as it reads it); a line without a usable id is left to that pass."""
    rows = islice(iter_jsonl(regular_file(Path(path))), limit)
    ids = ((line, ident) for line, record in rows
           if isinstance(ident := Item._ids_as_text(record.get("id")), str) and ident)
    for _ in distinct_ids(ids, str(path), id_of=str):
        pass


class _SeenIds:
    """The ids a stream has seen, with the line each was first seen on, in a temporary SQLite table.

    On disk so that memory stays flat: a Python dict of a million ids takes about 125 MB, the
    table a few MB of page cache (and about 6 s per million ids). SQLite makes a database named
    ``""`` a private temporary file, deleted when it is closed; its one transaction is never
    committed, so nothing is ever synced.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID")
        self._db.execute("BEGIN")

    def first_line(self, ident: str, line: int) -> int:
        """The line ``ident`` was first seen on: ``line`` itself, the first time."""
        try:
            self._db.execute("INSERT INTO seen VALUES (?, ?)", (ident, line))
        except sqlite3.IntegrityError:
            return self._db.execute("SELECT line FROM seen WHERE id = ?", (ident,)).fetchone()[0]
        return line

    def close(self) -> None:
        self._db.close()


def count_lines(path: str | Path, block: int = 1 << 20) -> int:
    """Lines of a JSON-lines file, read in blocks: the progress bar's total (blank lines count too)."""
    count, last = 0, b"\n"
    with open_binary(path) as handle:
        while chunk := handle.read(block):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def chunks(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """Lists of about ``size`` items, cut where the group changes when it does soon after.

    Keeping a group inside one chunk keeps it inside one batch of the judge, which orders a
    batch by source so consecutive prompts share their longest prefix. A chunk never grows past
    twice ``size`` (one huge group is split rather than held in memory whole).
    """
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    iterator = iter(items)
    carry: list[Item] = []
    while True:
        chunk = carry + list(islice(iterator, size - len(carry)))
        carry = []
        if not chunk:
            return
        for item in iterator:
            if item.group != chunk[-1].group or len(chunk) >= 2 * size:
                carry = [item]
                break
            chunk.append(item)
        yield chunk
