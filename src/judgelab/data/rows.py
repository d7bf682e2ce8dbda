"""Rows out of a file or a DataFrame, one reader per format, before any model sees them.

JSON lines, a JSON array, CSV/TSV, Parquet and pandas DataFrames each give ``(line, record dict)``:
files are read under the input bound (gzip unpacked as it is read, Parquet by its footer), bytes that
are not UTF-8 and lone surrogates are DataErrors naming the line (and field when it can be found),
tabular cells become nested records (``scores.<aspect>`` columns, JSON text cells). The tabular
layout is described in :mod:`judgelab.data.io`, which validates these rows and writes files.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import gzip
import io
import json
import math
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from judgelab.csv_cells import read_cell
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.validation import _short
from judgelab.errors import DataError
from judgelab.files import JsonBudget, within_bound
from judgelab.limits import over_limit

if TYPE_CHECKING:
    import pandas as pd


_FORMATS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
}
_INT_TEXT = re.compile(r"[+-]?\d+")
_SURROGATE = re.compile("[\udc80-\udcff]")  # an undecodable byte, as "surrogateescape" decodes it
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair, left alone by a JSON "\\udfff" escape
_FRAME = "<DataFrame>"


@dataclass(frozen=True)
class _Schema:
    model: type[BaseModel]
    flat: tuple[str, ...]  # dict fields written as `<field>.<key>` columns
    json_cells: tuple[str, ...]  # fields written as one JSON text cell in CSV
    parquet_json: tuple[str, ...] = ("extra",)  # ... and in Parquet (free-form JSON Arrow cannot type)


#: An item's conversation, passages and trajectory (and a comparison's two conversations): lists of
#: objects, one JSON cell each in a table.
_CONVERSATION = ("messages", "contexts", "trajectory", "messages_a", "messages_b")
_ITEMS = _Schema(Item, flat=("scores",), json_cells=("extra", "scale", *_CONVERSATION),
                 parquet_json=("extra", *_CONVERSATION))
JUDGMENT_ROWS = _Schema(Judgment, flat=("criteria", "usage"), json_cells=("extra",))
#: Heads of the dotted keys read as nested fields in items (``scores.helpfulness``, ``extra.note``).
ITEM_DOTTED = (*_ITEMS.flat, "extra")


def open_rows(source: Any, schema: _Schema, *, verdict_at: str | None = None
               ) -> tuple[str, Iterator[tuple[int, dict[str, Any]]], str | None]:
    """(where, rows as (line, record dict), dataset name) for a path or a DataFrame.

    For judgments read from ``score``/``label`` (no ``verdict_at`` field), tabular sources check
    their columns once; JSON rows are checked one by one.
    """
    check = schema is JUDGMENT_ROWS and verdict_at is None
    if _is_frame(source):
        records = _frame_records(source)
        if check and len(source):
            columns = [str(c) for c in source.columns]
            _require_verdict(columns, _FRAME, None, _field_hint(dict.fromkeys(columns)))
        # Python strings from any source: a lone surrogate is looked for in every row
        rows = ((pos, _no_lone_surrogate(_from_cells(cells, schema, _FRAME, pos, typed=True), _FRAME, pos))
                for pos, cells in enumerate(records, start=1))
        return _FRAME, rows, None
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"expected a path or a pandas DataFrame, got {type(source).__name__}")
    path = Path(source)
    where = str(source)
    fmt, gz = _format_of(path)
    name = path.name[: -len("".join(path.suffixes[-2 if gz else -1:]))] or None  # "sfres.jsonl" -> "sfres"
    if fmt == "parquet":
        return where, _parquet_rows(path, schema, where, check=check), name
    data = _read_bytes(path, where, gz)
    if fmt in ("csv", "tsv"):
        delimiter = "\t" if fmt == "tsv" else ","
        budget = JsonBudget()  # the JSON cells of one file share its bound
        rows = ((line, _from_cells(cells, schema, where, line, typed=False, budget=budget))
                for line, cells in _csv_rows(data, where, delimiter, schema, check=check))
        return where, rows, name
    heads = (*schema.flat, "extra")
    rows = ((line, nest_dotted(record, where, line, heads))
            for line, record in _objects(_json_rows(data, where, array_ok=fmt == "json"), where))
    return where, (_checked(rows, where) if check else rows), name


def _checked(rows: Iterable[tuple[int, dict[str, Any]]], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, record in rows:
        _require_verdict(record, where, line, _field_hint(record))
        yield line, record


def _field_hint(record: Mapping[str, Any]) -> str:
    """How to read a row whose verdict has another name: the ``field`` option, with candidates from the row."""
    candidates: list[str] = []
    for key, value in record.items():
        if isinstance(value, dict) and key != "extra":
            candidates += [f"{key}.{sub}" for sub in value]
        elif key not in ("item_id", "judge", "raw", "dataset", "aspect", "explanation") and not isinstance(value, list):
            candidates.append(key)
    shown = ", ".join(candidates[:6]) + (", ..." if len(candidates) > 6 else "")
    return f"; name the field that holds the verdict (field=, --field), e.g. {shown}" if candidates else ""

def _read_bytes(path: Path, where: str, gz: bool) -> bytes:
    """The file's bytes (unpacked for ``.gz``), refused past ``max_input_bytes()``: a plain file by its
    size on disk, before reading; a gzip file as it unpacks, so a bomb never takes more than the bound."""
    bound = within_bound(path, where)
    too_large = "too large to read into memory; `judgelab judge --stream` reads JSON lines one at a time"
    try:
        data = _unpacked(path, where, bound) if gz else path.read_bytes()
    except OSError as err:
        raise DataError(f"cannot read: {err.strerror}", where) from None
    except MemoryError:
        raise DataError(too_large, where) from None
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]  # a UTF-8 byte-order mark at the start is harmless (Excel writes one)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError("the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8",
                        where, 1)
    return data


def _unpacked(path: Path, where: str, bound: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        with gzip.open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                size += len(chunk)
                if size > bound:
                    raise DataError(over_limit("the file unpacked", bound), where)
                chunks.append(chunk)
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise DataError(f"not a readable gzip file ({err})", where) from None
    return b"".join(chunks)


def _json_rows(data: bytes, where: str, *, array_ok: bool) -> Iterator[tuple[int, Any]]:
    JsonBudget().spend(data, where)  # the file is read whole and its rows kept: one count for all of them
    if array_ok and data.lstrip()[:1] == b"[":
        yield from _json_array_rows(data, where)
        return
    lines = data.split(b"\n")
    truncated = not data.endswith(b"\n")
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue  # blank lines separate nothing and are skipped
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _utf8_error(raw, err, where, lineno, _json_surrogate_field) from None
        if text.startswith("\ufeff"):
            raise DataError("a byte-order mark (BOM) starts this line; was the file concatenated from "
                            "files that each had one? Remove it", where, lineno)
        hint = ("; the file ends in the middle of this line (an interrupted write?)"
                if truncated and lineno == len(lines) else "")
        yield lineno, _json_value(text, where, lineno, hint)


def _json_value(text: str, where: str, line: int, hint: str = "") -> Any:
    """One JSON document (a line of a JSON-lines file): every way ``json.loads`` fails is a DataError
    at ``where:line``, and so is a string the toolkit could not write back (a lone surrogate)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"bad JSON ({err.msg}, column {err.colno}){hint}", where, line) from None
    except (ValueError, RecursionError) as err:
        raise DataError(f"bad JSON ({_beyond_limits(err)})", where, line) from None
    if "\\u" in text:  # only an escape makes a lone surrogate: valid UTF-8 text holds none
        _no_lone_surrogate(value, where, line)
    return value


def _beyond_limits(err: ValueError | RecursionError) -> str:
    """What json.loads refused other than bad syntax: too deep a nesting, or too long an integer."""
    if isinstance(err, RecursionError):
        return f"nested more deeply than Python's limit of about {sys.getrecursionlimit()} levels"
    limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()  # Python 3.10.7+ has the limit
    return f"an integer with more than {limit} digits"


def _no_lone_surrogate(value: Any, where: str, line: int) -> Any:
    """Refuse a string holding half of a UTF-16 surrogate pair (JSON ``"\\udfff"`` with no partner).

    Python reads it as a one-character string that cannot be encoded as UTF-8, so it would fail
    much later, when a prompt, a judgment or a report is written; here it is named at its line.
    """
    field = _surrogate_path(value, _LONE_SURROGATE)
    if field is not None:
        raise DataError("holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair), which "
                        "is not a character; remove it or write the character whole", where, line, field or None)
    return value


def _json_array_rows(data: bytes, where: str) -> Iterator[tuple[int, Any]]:
    """A JSON array of objects (``.json``), each reported at the line where it starts."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise DataError(f"not valid UTF-8: byte 0x{data[err.start]:02x}; save the file as UTF-8",
                        where, line) from None
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")

    def past_space(start: int) -> int:
        space = ws.match(text, start)
        assert space is not None  # \s* matches anywhere, the empty string at least
        return space.end()

    pos = past_space(text.index("[") + 1)
    line, counted = 1, 0
    if text.startswith("]", pos):
        pos = past_space(pos + 1)
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                value, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as err:
                raise DataError(f"bad JSON ({err.msg}, column {err.colno})", where, err.lineno) from None
            except (ValueError, RecursionError) as err:
                raise DataError(f"bad JSON ({_beyond_limits(err)})", where, line) from None
            if text.find("\\u", pos, end) >= 0:
                _no_lone_surrogate(value, where, line)
            yield line, value
            pos = past_space(end)
            if text.startswith(",", pos):
                pos = past_space(pos + 1)
            elif text.startswith("]", pos):
                pos = past_space(pos + 1)
                break
            else:
                raise DataError("bad JSON (expected ',' or ']' after an array element)", where,
                                text.count("\n", 0, pos) + 1)
    if pos != len(text):
        raise DataError("bad JSON (extra data after the closing ']')", where, text.count("\n", 0, pos) + 1)


def _objects(rows: Iterable[tuple[int, Any]], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, value in rows:
        if not isinstance(value, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
                type(value), "a number")
            raise DataError(f"expected a JSON object (one record per line), got {kind}", where, line)
        yield line, value


def _csv_rows(data: bytes, where: str, delimiter: str, schema: _Schema, *, check: bool = False
              ) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = None
        with contextlib.suppress(csv.Error, StopIteration):
            reader = csv.reader(io.StringIO(data.decode("utf-8", "surrogateescape"), newline=""),
                                delimiter=delimiter)
            names = next(reader)
            for cells in reader:
                hit = next((i for i, c in enumerate(cells) if _SURROGATE.search(c)), None)
                if hit is not None:
                    column = names[hit] if hit < len(names) else None
                    break
        start = err.start - (data.rfind(b"\n", 0, err.start) + 1)
        raise DataError(f"not valid UTF-8: byte 0x{data[err.start]:02x} at column {start + 1}; save the "
                        f"file as UTF-8", where, line, column) from None
    if csv.field_size_limit() < 2**30:
        csv.field_size_limit(2**30)  # the default 128 KiB is shorter than some documents
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    previous = previous_rows = header_line = 0
    try:
        for cells in reader:
            start, previous = previous + 1, reader.line_num
            if not cells:
                continue  # blank line
            if header is None:
                header = cells
                for i, name in enumerate(header):
                    if not name:
                        raise DataError(f"column {i + 1} of the header has no name", where, start)
                    if name in header[:i]:
                        raise DataError("duplicate column", where, start, name)
                header_line = start
                continue
            if check and previous_rows == 0:
                _require_verdict(header, where, header_line, _field_hint(dict.fromkeys(header)))
            previous_rows += 1
            if len(cells) != len(header):
                raise DataError(f"this row has {len(cells)} cells but the header has {len(header)}",
                                where, start)
            yield start, dict(zip(header, map(read_cell, cells), strict=True))
    except csv.Error as err:
        raise DataError(f"bad CSV: {err}", where, reader.line_num) from None


def _require_verdict(columns: Iterable[str], where: str, line: int | None, hint: str = "") -> None:
    """Judgments need something to compare with humans: a score, a label, or a failure status."""
    if not ({"score", "label", "status"} & set(columns)):
        raise DataError(f"a judgment needs a 'score' and/or a 'label' (found: {', '.join(columns)}){hint}",
                        where, line, "score")


def _parquet_rows(path: Path, schema: _Schema, where: str, *, check: bool = False
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    bound = within_bound(path, where)
    try:
        # the row groups' uncompressed size, from the footer: a compressed bomb is refused unread
        metadata = pq.ParquetFile(path).metadata
        unpacked = sum(metadata.row_group(k).total_byte_size for k in range(metadata.num_row_groups))
        if unpacked > bound:
            raise DataError(over_limit(f"the file uncompressed ({unpacked:,} bytes)", bound), where)
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"not a readable Parquet file ({err})", where) from None
    if check and table.num_rows:
        _require_verdict(table.column_names, where, None, _field_hint(dict.fromkeys(table.column_names)))
    budget = JsonBudget()  # the JSON cells of one file share its bound
    for row, cells in enumerate(table.to_pylist(), start=1):
        yield row, _from_cells(cells, schema, where, row, typed=True, budget=budget)


def _frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    if len(set(frame.columns)) != len(frame.columns):
        dup = next(c for i, c in enumerate(frame.columns) if c in list(frame.columns)[:i])
        raise DataError("duplicate column", _FRAME, None, dup)
    return frame.to_dict("records")


def _from_cells(cells: Mapping[str, Any], schema: _Schema, where: str, line: int, *, typed: bool,
                budget: JsonBudget | None = None) -> dict[str, Any]:
    """A tabular row -> the nested record the model validates. Empty cells are left out."""
    record: dict[str, Any] = {}
    nested = schema.flat + schema.json_cells
    for column, raw in cells.items():
        value = _py(raw) if typed else (None if raw == "" else raw)
        if value is None:
            continue
        if column in nested and isinstance(value, str):
            (budget or JsonBudget()).spend(value, where, line, column)
            try:
                record[column] = json.loads(value)
            except json.JSONDecodeError as err:
                raise DataError(f"not valid JSON ({err.msg} at column {err.colno}): {_short(value)}",
                                where, line, column) from None
        elif column == "label" and isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
            record[column] = int(value)  # tabular formats cannot say 2 from "2"; graded labels are ints
        else:
            record[column] = value
    return nest_dotted(record, where, line, (*schema.flat, "extra"))


def nest_dotted(record: dict[str, Any], where: str, line: int | None,
                heads: tuple[str, ...] = ITEM_DOTTED) -> dict[str, Any]:
    """``record`` with each key ``HEAD.KEY`` whose head is one of ``heads`` (dict fields: ``scores``,
    ``criteria``, ``usage``, ``extra``) moved to ``record[HEAD][KEY]``: every reader takes
    ``"scores.helpfulness": 4`` as ``"scores": {"helpfulness": 4}``, a JSON line as a CSV column.
    Both forms in one record merge; one key given two different values is a DataError."""
    dotted = [key for key in record if "." in key and key.partition(".")[0] in heads]
    if not dotted:
        return record
    moved = set(dotted)
    nested = {key: value for key, value in record.items() if key not in moved}
    for head in dict.fromkeys(key.partition(".")[0] for key in dotted):
        given = nested.get(head)
        if given is not None and not isinstance(given, dict):
            raise DataError(f"both a '{head}' value that is not an object and '{head}.<key>' fields",
                            where, line, head)
        nested[head] = dict(given or {})  # a copy: the caller's dict is left as it was
    for key in dotted:
        head, _, sub = key.partition(".")
        if sub in nested[head] and nested[head][sub] != record[key]:
            raise DataError(f"given twice, as {_short(nested[head][sub])} in '{head}' and as "
                            f"{_short(record[key])} in '{key}'", where, line, key)
        nested[head][sub] = record[key]
    return nested


def _py(value: Any) -> Any:
    """numpy/pandas/pyarrow scalars and containers -> plain Python; a missing value -> None."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _nested_py(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nested_py(v) for v in value]
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return [_nested_py(v) for v in value.tolist()]
        if isinstance(value, np.generic):
            return _py(value.item())
    pd = sys.modules.get("pandas")
    if pd is not None and (value is pd.NA or value is pd.NaT):
        return None
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    return value


def _nested_py(value: Any) -> Any:
    # Inside a container NaN is a value, not a missing cell.
    return value if isinstance(value, float) else _py(value)


def _utf8_error(raw: bytes, err: UnicodeDecodeError, where: str, line: int, locate: Any) -> DataError:
    field = None
    with contextlib.suppress(ValueError, RecursionError):
        field = locate(raw.decode("utf-8", "surrogateescape"))
    return DataError(f"not valid UTF-8: byte 0x{raw[err.start]:02x} at column {err.start + 1}; save the "
                     f"file as UTF-8", where, line, field)


def _json_surrogate_field(text: str) -> str | None:
    """The dotted path of the first value holding an undecodable byte (surrogate-escaped)."""
    return _surrogate_path(json.loads(text), _SURROGATE) or None


def _surrogate_path(node: Any, pattern: re.Pattern[str]) -> str | None:
    """The dotted path of the first string (or key) in ``node`` that ``pattern`` finds something in
    ("" for ``node`` itself); None when there is none. A loop, not recursion: JSON nested as deeply
    as ``json.loads`` allows must not exhaust the stack here."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(node, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if pattern.search(value):
                return ".".join(path)
            continue
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        found = []
        for key, child in children:
            if isinstance(key, str) and pattern.search(key):
                return ".".join((*path, key))
            found.append((child, (*path, str(key))))
        stack.extend(reversed(found))  # depth first
    return None


def _format_of(path: Path) -> tuple[str, bool]:
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    fmt = _FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None or (gz and fmt == "parquet"):
        raise DataError(f"unknown file format '{''.join(path.suffixes) or path.name}': use .jsonl, .json, "
                        ".csv, .tsv or .parquet (text formats may end in .gz)", path)
    return fmt, gz


def _is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)
