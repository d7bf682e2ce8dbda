"""What the source readers share: bounded JSON reading with located errors, the record checks that
name what a tool's file should hold, and building validated items and judgments."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgelab.data.dataset import Dataset
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.rows import _json_rows, _objects, _read_bytes
from judgelab.data.validation import data_error
from judgelab.errors import DataError
from judgelab.files import JsonBudget, regular_file

SNIFF_BYTES = 1 << 16


def head(path: Path) -> str:
    """The start of a file as text (for telling the tools' files apart); '' when unreadable."""
    try:
        with open(regular_file(path), "rb") as handle:
            return handle.read(SNIFF_BYTES).decode("utf-8", "ignore")
    except (OSError, DataError):
        return ""


def files_in(path: Path, patterns: Iterable[str]) -> list[Path]:
    """``path`` itself, or the files under the folder ``path`` that match ``patterns``, sorted. A match that
    is no regular file (a FIFO named log.eval, a device) is refused by name: skipped, a run would be left
    out of the leaderboard without a word; opened, it could block."""
    if not path.is_dir():
        return [path]
    found = sorted({f for pattern in patterns for f in path.rglob(pattern) if not f.is_dir()})
    if not found:
        raise DataError(f"no file matching {', '.join(patterns)} in this folder", path)
    return [regular_file(f) for f in found]


def json_document(path: Path) -> Any:
    """A whole JSON document (an object), under the input bound (its bytes and its values); NaN as Python
    reads it."""
    where = str(path)
    data = _read_bytes(regular_file(path), where, False)
    JsonBudget().spend(data, where)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise DataError(f"not valid UTF-8 (byte {err.start})", where) from None
    except json.JSONDecodeError as err:
        raise DataError(f"bad JSON ({err.msg}, column {err.colno})", where, err.lineno) from None
    except (ValueError, RecursionError) as err:
        raise DataError(f"bad JSON ({err})", where) from None


def json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) for each record of a JSON array or JSON-lines file, under the input bound."""
    where = str(path)
    data = _read_bytes(regular_file(path), where, False)
    return _objects(_json_rows(data, where, array_ok=True), where)


def need(record: Mapping[str, Any], keys: Iterable[str], where: str, line: int | None, expected: str,
         name: str | None = None) -> None:
    """A DataError naming the first key ``record`` lacks and what the reader expected of the file;
    ``name`` says which record when the file has no lines to point at (a JSON document)."""
    for key in keys:
        if key not in record:
            raise DataError(f"{name + ': ' if name else ''}no {key!r}: expected {expected} (a file from another "
                            "version of the tool?)", where, line, key)


def between(text: str | None, start: str, end: str) -> str | None:
    """The text between the last ``start`` and the next ``end`` (None when either is missing)."""
    if not text or start not in text:
        return None
    rest = text.rsplit(start, 1)[1]
    return rest.split(end, 1)[0] if end in rest else None


def both_orders(original: str | None, swapped: str | None) -> str | None:
    """One verdict from both orders, in the item's names: a verdict that flips with the order is a tie
    (as the pairwise judge's ``swap`` does); None when either order has none."""
    if original is None or swapped is None:
        return None
    return original if original == swapped else "tie"


def item(record: dict[str, Any], where: str, line: int | None) -> Item:
    try:
        return Item.model_validate(record)
    except ValidationError as err:
        raise data_error(err, record, where, line) from None


def judgment(record: dict[str, Any], where: str, line: int | None) -> Judgment:
    try:
        return Judgment.model_validate(record)
    except ValidationError as err:
        raise data_error(err, record, where, line) from None


def dataset(items: list[Item], where: str) -> Dataset:
    """The items as a dataset; a repeated id names the record (the same record read twice)."""
    seen: set[str] = set()
    for one in items:
        if one.id in seen:
            raise DataError(f"the record {one.id!r} appears twice", where)
        seen.add(one.id)
    if not items:
        raise DataError("no records", where)
    return Dataset._trusted(items, name=None)


def text(value: Any) -> str:
    """A tool's output as text: strings as they are, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


_KINDS = ((bool, "true/false"), (str, "a string"), (dict, "an object"), (list, "an array"),
          ((int, float), "a number"), (type(None), "null"))
_EXAMPLES: tuple[object, ...] = (False, "", {}, [], 0, None)  # a value of each JSON kind, in _KINDS' order


def kind_of(value: Any) -> str:
    """A JSON value's type in words ("a number", "an object", ...)."""
    return next(name for kinds, name in _KINDS if isinstance(value, kinds))


def typed(value: Any, kinds: type | tuple[type, ...], where: str, name: str, line: int | None = None) -> Any:
    """``value`` when it is one of the JSON ``kinds`` (a number is never true/false); else a DataError saying
    what ``name`` (the record and field, in the tool's words) is and what it should be: a file from another
    tool or version must not end in an internal error."""
    wanted = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, wanted) and (bool in wanted or not isinstance(value, bool)):
        return value
    expected = " or ".join(kind_of(example) for example in _EXAMPLES if isinstance(example, wanted))
    raise DataError(f"{name} is {kind_of(value)}: expected {expected}", where, line)


@dataclass
class Part:
    """What one file of a folder gave, for :func:`merged`: ``written``, when the tool wrote it (sortable
    text; None when the file does not say); ``incomplete``, why its run did not finish (None: it did)."""

    file: Path
    items: list[Item]
    judgments: list[Judgment]
    written: str | None = None
    incomplete: str | None = None


def merged(parts: list[Part], where: str, partial: bool = False) -> tuple[Dataset, list[Judgment], list[str]]:
    """The items and judgments of a folder's files, and notes. A record in two files is a rerun when both
    say when they were written: the newer file's is read (a note says so), else both files are named. A
    run that did not finish is refused unless ``partial`` (then noted), but not when a rerun replaces it."""
    owner = _owners(parts, where)
    items, judgments, notes = [], [], []
    for part in parts:
        mine = {one.id for one in part.items if owner[one.id] is part}
        if len(mine) < len(part.items):
            newer = sorted({owner[one.id].file.name for one in part.items} - {part.file.name})
            notes.append(f"{part.file.name}: {len(part.items) - len(mine)} of its {len(part.items)} records are in "
                         f"the newer {' and '.join(newer)} too (a rerun): read from there")
        if part.incomplete and mine:
            if not partial:
                raise DataError(f"{part.incomplete}; give --partial (partial=True in Python) to read what it holds",
                                part.file)
            notes.append(f"{part.file.name}: {part.incomplete}: read as it is (--partial)")
        items += [one for one in part.items if one.id in mine]
        judgments += [j for j in part.judgments if j.item_id in mine]
    return dataset(items, where), judgments, notes


def _owners(parts: list[Part], where: str) -> dict[str, Part]:
    """Which file each record is read from: the newest that holds it."""
    owner: dict[str, Part] = {}
    for part in sorted(parts, key=lambda p: p.written or "", reverse=True):
        if part.items:
            dataset(part.items, str(part.file))  # a record twice in one file
        for one in part.items:
            first = owner.setdefault(one.id, part)
            if first is not part and (not (first.written and part.written) or first.written == part.written):
                raise DataError(f"the record {one.id!r} is in both {first.file} and {part.file}, and neither says it "
                                "is the newer: expected each record once (read one file, or move the other out of "
                                "the folder)", where)
    return owner
