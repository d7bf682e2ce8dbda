"""What the readers of traced runs (``otel``, ``mlflow``, ``langfuse``) share: records read one per line or as a run of
indented JSON documents, JSON kept as text in a span's attributes read within the file's value budget,
an item's group from its user turns, retrieved passages merged by id, and counted notes."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from judgelab.data.rows import _beyond_limits, _json_rows, _objects, _read_bytes
from judgelab.data.sources import SourceData
from judgelab.data.sources._read import dataset, files_in, text, typed
from judgelab.errors import DataError
from judgelab.files import JsonBudget, regular_file


def records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) for each record of ``path``: JSON lines or a JSON array, or, when the file starts with a
    lone ``{`` line, indented JSON documents one after another (what the OpenTelemetry SDK's
    ConsoleSpanExporter prints; a trace saved with ``to_json(pretty=True)``), read as the array they make
    (each document starts with a lone ``{`` line: a nested one is indented). Within the input bound."""
    where = str(path)
    data = _read_bytes(regular_file(path), where, False)
    lines = data.split(b"\n")
    starts = [k for k, line in enumerate(lines) if line.rstrip(b"\r") == b"{"]
    if starts and not b"".join(lines[:starts[0]]).strip():
        for k in starts[1:]:
            lines[k] = b"," + lines[k]  # the lines stay where they were: errors name the file's own lines
        data = b"[" + b"\n".join(lines) + b"\n]"
    return _objects(_json_rows(data, where, array_ok=True), where)


def claimed(path: Path, patterns: tuple[str, ...], ours: Callable[[Path], bool]) -> bool:
    """Whether ``path`` (or a file of the folder ``path`` matching ``patterns``) is one ``ours`` claims."""
    if path.is_dir():
        return any(ours(f) for pattern in patterns for f in path.rglob(pattern))
    return ours(path)


def exported(path: Path, patterns: tuple[str, ...], ours: Callable[[Path], bool], what: str,
             expected: str) -> tuple[list[Path], Counter[str]]:
    """The files to read (``path``, or those of the folder ``path`` that ``ours`` claims) and the notes'
    counter (counting the folder's other files, left out)."""
    files, counts = files_in(path, patterns), Counter[str]()
    if path.is_dir():
        kept = [f for f in files if ours(f)]
        if not kept:
            raise DataError(f"no {what} in this folder: expected {expected}", path)
        counts.update({f"file(s) of the folder that hold no {what} left out": len(files) - len(kept)}
                      if len(kept) < len(files) else {})
        files = kept
    return files, counts


def decoded(value: Any, budget: JsonBudget, name: str, where: str, line: int | None, field: str) -> Any:
    """The JSON a field keeps as text (a span attribute: the SDKs take no structured values; a promptfoo
    provider's conversation), read within ``budget``, the file's JSON values; a value already structured is as
    it is."""
    if not isinstance(value, str):
        return value
    budget.spend(value, where, line, field)
    try:
        return json.loads(value)
    except json.JSONDecodeError as err:
        raise DataError(f"{name} is not JSON ({err.msg}, column {err.colno})", where, line, field) from None
    except (ValueError, RecursionError) as err:
        raise DataError(f"{name} is not readable JSON ({_beyond_limits(err)})", where, line, field) from None


def group_of(messages: list[dict[str, Any]], fallback: str | None = None) -> str:
    """An item's group: its user turns (so one question asked of several systems is one group), else
    ``fallback`` (the run's input)."""
    users = [text(m.get("content")) for m in messages if m.get("role") == "user"]
    return hashlib.sha1(str(users or fallback).encode()).hexdigest()[:12]


def add_passage(passages: dict[str, dict[str, Any]], passage: dict[str, Any]) -> None:
    """A retrieved passage, once: one retrieved again (the same id) is the passage already kept."""
    passages.setdefault(passage["id"], passage)


def noted(name: str, counts: Counter[str]) -> list[str]:
    """Each counted note of a file, as ``<file>: <count> <what>``."""
    return [f"{name}: {n} {what}" for what, n in counts.items()]


def traced_data(name: str, path: Path, items: list, judgments: list, counts: Counter[str], nothing: str) -> SourceData:
    """The SourceData of a traces file, its counted notes kept; no item read is a DataError naming the file with
    ``nothing`` (what the reader found none of) and the notes."""
    notes = noted(path.name, counts)
    if not items:
        raise DataError(f"{nothing}{' (' + '; '.join(notes) + ')' if notes else ''}", path)
    return SourceData(name, dataset(items, str(path)), judgments, tuple(notes))


def listed(value: Any, key: str, what: str, where: str, line: int | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field prefix, record) for each object of a list response's ``key`` (Langfuse's ``data``, an MLflow
    search's ``traces``), each named by its position when it is not an object."""
    for k, one in enumerate(typed_at(value, list, where, line, key, f"'{key}'")):
        yield f"{key}.{k}.", typed_at(one, dict, where, line, f"{key}.{k}", f"{what} {k} of '{key}'")


def typed_at(value: Any, kinds: type | tuple[type, ...], where: str, line: int | None, field: str, name: str) -> Any:
    """:func:`typed`, its error naming the ``field`` too (a span's attribute, a trace's key)."""
    try:
        return typed(value, kinds, where, name, line)
    except DataError as err:
        raise DataError(err.detail, where, line, field) from None


def maybe_json(value: Any, budget: JsonBudget, where: str, line: int | None, field: str) -> Any:
    """A tool call's arguments or result: the JSON a text holds, else the text itself (it is no JSON)."""
    if isinstance(value, str):
        budget.spend(value, where, line, field)
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value
