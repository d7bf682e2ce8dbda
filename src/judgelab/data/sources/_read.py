"""What the source readers share: bounded JSON reading with located errors, the record checks that
name what a tool's file should hold, and building validated items and judgments."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgelab.data.dataset import Dataset
from judgelab.data.io import _json_rows, _objects, _read_bytes, data_error
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import DataError
from judgelab.files import regular_file

SNIFF_BYTES = 1 << 16


def head(path: Path) -> str:
    """The start of a file as text (for telling the tools' files apart); '' when unreadable."""
    try:
        with open(regular_file(path), "rb") as handle:
            return handle.read(SNIFF_BYTES).decode("utf-8", "ignore")
    except (OSError, DataError):
        return ""


def files_in(path: Path, patterns: Iterable[str]) -> list[Path]:
    """``path`` itself, or the files under the folder ``path`` that match ``patterns``, sorted."""
    if not path.is_dir():
        return [path]
    found = sorted({f for pattern in patterns for f in path.rglob(pattern) if f.is_file()})
    if not found:
        raise DataError(f"no file matching {', '.join(patterns)} in this folder", path)
    return found


def json_document(path: Path) -> Any:
    """A whole JSON document (an object), under the input bound; NaN as Python reads it."""
    where = str(path)
    try:
        return json.loads(_read_bytes(regular_file(path), where, False).decode("utf-8"))
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
