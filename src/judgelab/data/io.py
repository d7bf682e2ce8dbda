"""Reading and writing items and judgments: JSON lines, JSON, CSV/TSV, Parquet, pandas.

Readers validate every row at the boundary and stop at the first problem with a ``DataError``
naming the file, the 1-based line (for Parquet and DataFrames: the 1-based row) and the field.
Writers build the whole file in memory and then replace the target atomically, so a failed
save leaves nothing behind. ``JsonlAppender`` is the one incremental writer: append-only,
one fsync per line, and it drops a crash-truncated last line when reopened.

Tabular layout (CSV, Parquet, DataFrame): one column per field; dict fields with numeric values
are flat columns (``scores.<aspect>``, ``criteria.<name>``, ``usage.<field>``); ``extra``,
``messages``, ``contexts`` and ``trajectory`` (and in CSV ``scale``) are JSON text cells. Readers
accept both the flat and the JSON-cell forms, and any column the model does not know goes to ``extra``. An empty cell means "no value".
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
import threading
import warnings
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from judgelab.csv_cells import read_cell, safe_cell
from judgelab.data.fields import naming_warning, rename_hint
from judgelab.data.item import Item, ItemKind
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.files import JsonBudget, open_private, regular_file, within_bound, write_atomic
from judgelab.limits import max_input_bytes, over_limit

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.data.dataset import Dataset

__all__ = ["JsonlAppender", "load_items", "save_items", "load_judgments", "save_judgments", "select_judge"]

PathLike = str | os.PathLike

_FORMATS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
}
_KINDS = ("pointwise", "pairwise", "relevance")
_KIND_FIELD = {"pointwise": "output", "pairwise": "output_a", "relevance": "qid"}
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


#: An item's conversation, passages and trajectory: lists of objects, one JSON cell each in a table.
_CONVERSATION = ("messages", "contexts", "trajectory")
_ITEMS = _Schema(Item, flat=("scores",), json_cells=("extra", "scale", *_CONVERSATION),
                 parquet_json=("extra", *_CONVERSATION))
_JUDGMENTS = _Schema(Judgment, flat=("criteria", "usage"), json_cells=("extra",))
#: Heads of the dotted keys read as nested fields in items (``scores.helpfulness``, ``extra.note``).
ITEM_DOTTED = (*_ITEMS.flat, "extra")


# ---------------------------------------------------------------------------------------- public API


def load_items(source: PathLike | pd.DataFrame, *, kind: ItemKind | None = None) -> Dataset:
    """Read items from a ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` file (text formats
    may be ``.gz``) or a pandas DataFrame. ``kind`` makes every item have that kind."""
    from judgelab.data.dataset import Dataset

    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    where, rows, name = _open_rows(source, _ITEMS)
    items: list[Item] = []
    first_line: dict[str, int] = {}
    columns: dict[str, None] = {}  # every top-level name, in the order first seen
    for line, record in rows:
        if not columns.keys() >= record.keys():
            columns.update(dict.fromkeys(record))
        item = validate_item(record, where, line)
        if item.id in first_line:
            raise duplicate_id(item.id, first_line[item.id], where, line)
        first_line[item.id] = line
        if kind is not None and item.kind != kind:
            raise DataError(f"expected a {kind} item, got a {item.kind} one", where, line, _KIND_FIELD[kind])
        items.append(item)
    if not items:
        raise DataError("no items", where)
    warn_unused_names(where, columns, items)
    return Dataset._trusted(items, name=name)


def duplicate_id(ident: str, first_line: int, where: str, line: int, note: str = "") -> DataError:
    """The error for an id a file uses a second time, naming both lines (every reader of items says it so)."""
    return DataError(f"duplicate id {ident!r} (first used on line {first_line}){note}", where, line, "id")


def validate_item(record: dict[str, Any], where: str, line: int) -> Item:
    """``record`` as an Item; a row missing a required field that it has under another name says which."""
    try:
        return _validate(Item, record, where, line)
    except DataError as exc:
        hint = rename_hint(record) if exc.detail.startswith("required field is missing") else ""
        if not hint:
            raise
        raise DataError(f"{exc.detail}; {hint}", exc.path, exc.line, exc.field) from None


def warn_unused_names(where: str, columns: Collection[str], items: Sequence[Item]) -> None:
    """A ``DataWarning`` (one line naming ``where``) when unknown columns look like fields no item uses."""
    if any(column not in Item.model_fields for column in columns):  # the usual case costs one pass over the names
        message = naming_warning(where, columns, items)
        if message:  # from this one line: Python's registry shows a message once, however often the file is read
            warnings.warn(message, DataWarning, stacklevel=1)


def save_items(dataset: Dataset | Iterable[Item], path: PathLike) -> Path:
    """Write items in the format the suffix names; atomic (nothing is written on error)."""
    from judgelab.data.dataset import Dataset

    if not isinstance(dataset, Dataset):
        dataset = Dataset(dataset)
    path = Path(path)
    fmt, gz = _format_of(path)
    records = [_dump(item, item.id, path, exclude_defaults=fmt in ("jsonl", "json")) for item in dataset]
    _atomic_write(path, _encode(records, _ITEMS, fmt, gz, path))
    return path


def judgments_file(path: PathLike) -> Path:
    """``path``, or the ``judgments.jsonl`` of the run folder ``path``: wherever a judgments file is
    read (meta, qrels, teachers, stacked and ensemble members), the run folder will do."""
    path = Path(path)
    return path / "judgments.jsonl" if path.is_dir() else path


def load_judgments(source: PathLike | pd.DataFrame, *, field: str | None = None,
                   judge: str | None = None, labels: Collection[str] | None = None) -> list[Judgment]:
    """Read judgments: this toolkit's (a judgments file or its run folder), any JSONL/JSON/CSV/
    Parquet/DataFrame with an ``item_id`` column plus ``score`` and/or ``label``, or judge outputs
    published in another layout (``{"item_id", "judge", "prediction": {"coherence": 3.3}}``) with
    ``field``. Other columns go to ``extra``. Ids may repeat (several judges or aspects per item).
    An empty file gives ``[]``.

    ``field``: dotted path of the verdict in each row (``prediction.coherence``; a tabular column of
    that name also works): a number becomes the score, a string the label, a missing or null value
    an ``unparsable`` judgment (kept, never a 0). Without it: ``score`` / ``label``.
    ``judge``: keep the rows of the judge with this name, else of the judges whose name starts with
    it (``Mistral-7B`` for ``Mistral-7B/eval_prompt_1`` ... ``_4``); a ``ConfigError`` lists the
    judges when none matches. Rows whose ``status`` is not ``ok`` stay failures (without a value).

    ``labels``: the verdicts an ok judgment may give (``("a", "b", "tie")`` for comparisons); any
    other label is a DataError naming the file and line.

    The one reader of judgment files: ``meta --judgments/--baseline``, ensemble members, trainers'
    teachers and stacked members all read through it.
    """
    if isinstance(source, (str, os.PathLike)):
        source = judgments_file(source)
    judgments = list(iter_judgments(source, field=field, labels=labels))
    return judgments if judge is None else select_judge(judgments, judge, _FRAME if _is_frame(source) else str(source))


def iter_judgments(source: PathLike | pd.DataFrame, *, field: str | None = None,
                   labels: Collection[str] | None = None) -> Iterator[Judgment]:
    """:func:`load_judgments`'s judgments one at a time, read and checked the same way: for a reader that keeps
    a number per judgment (``evaluate --monitor`` on a log of a million), not a million objects."""
    if isinstance(source, (str, os.PathLike)):
        source = judgments_file(source)
    where, rows, _ = _open_rows(source, _JUDGMENTS, verdict_at=field)
    known = Judgment.model_fields.keys()
    for line, record in rows:
        record = _verdict_record(record, field, where, line)
        unknown = [key for key in record if key not in known]
        extra = record.get("extra")
        if unknown and (extra is None or isinstance(extra, dict)):  # else validation reports 'extra'
            record["extra"] = {**(extra or {}), **{key: record.pop(key) for key in unknown}}
        judgment = _validate(Judgment, record, where, line)
        if labels is not None and judgment.ok and judgment.label not in labels:
            given = "no label" if judgment.label is None else f"{_short(judgment.label)} is not a verdict"
            raise DataError(f"{given}: give one of {', '.join(labels)}", where, line, field or "label")
        yield judgment


def select_judge(judgments: Iterable[Judgment], judge: str, where: str | None = None) -> list[Judgment]:
    """The judgments of the judge named ``judge``, else of every judge whose name starts with it.

    A ``ConfigError`` naming the judges present when none matches."""
    judgments = list(judgments)
    chosen = set(judges_named(judge, {j.judge for j in judgments if j.judge is not None}, where))
    return [j for j in judgments if j.judge in chosen]


def judges_named(judge: str, names: Iterable[str], where: str | None = None) -> list[str]:
    """The judge named ``judge`` among ``names``, else every judge whose name starts with it; a ``ConfigError``
    naming the judges present when none matches. What :func:`select_judge` keeps, by name."""
    names = sorted(set(names))
    chosen = [judge] if judge in names else [name for name in names if name.startswith(judge)]
    if not chosen:
        listed = ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "no judge names"
        raise ConfigError(f"{where + ': ' if where else ''}no judgment from judge {judge!r} (no judge named "
                          f"{judge!r}, nor one whose name starts with it); judges: {listed}")
    return chosen


def open_binary(path: PathLike) -> io.BufferedIOBase:
    """A file opened for reading bytes, gunzipped when it ends in ``.gz``; a DataError if it cannot be."""
    path = regular_file(Path(path))
    try:
        return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path) from None


def iter_lines(path: PathLike, *, whole: bool = True) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` for each line of a text file (gunzipped for ``.gz``), read one at a time.

    No line is read past ``max_input_bytes()`` (a gzip bomb's zeros have no line break), and with
    ``whole`` (what is read is kept: run files, id lists) neither is the file, unpacked. Without it
    (a stream judged line by line) the file may be as long as it likes.
    """
    where, bound = str(path), max_input_bytes()
    if whole and Path(path).suffix.lower() != ".gz":
        within_bound(Path(path), where)  # refused by its size, before reading
    total = 0
    with open_binary(path) as handle:
        # readline with a limit: a line is never read past the bound
        for line_number, raw in enumerate(iter(lambda: handle.readline(bound + 1), b""), start=1):
            total += len(raw)
            if len(raw) > bound:
                raise DataError(over_limit("this line", bound), where, line_number)
            if whole and total > bound:
                raise DataError(over_limit("the file unpacked", bound), where)
            yield line_number, raw


def text_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a UTF-8 text file a user names (run files, qrels, id lists), under the
    input bound (``iter_lines``); bytes that are not UTF-8 are a DataError naming the line."""
    for line_number, raw in iter_lines(path):
        try:
            yield line_number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", str(path), line_number) from None


def iter_jsonl(path: PathLike, *, whole: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON-lines file (``.gz`` too), one at a time.

    For files read as they stream (large inputs, run folders' own logs); a line that is not a JSON
    object raises a DataError naming the file and line. ``whole``: as :func:`iter_lines` takes it (the
    file under the input bound, for a reader that keeps something of every line).
    """
    where = str(path)
    for line_number, raw in iter_lines(path, whole=whole):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"bad JSON ({exc})", where, line_number) from None
        JsonBudget().spend(text, where, line_number)  # a streamed line is judged, then let go
        record = _json_value(text, where, line_number)
        if not isinstance(record, dict):
            raise DataError("expected a JSON object (one record per line)", where, line_number)
        yield line_number, record


def save_judgments(judgments: Iterable[Judgment], path: PathLike) -> Path:
    """Write judgments in the format the suffix names; atomic (nothing is written on error)."""
    path = Path(path)
    fmt, gz = _format_of(path)
    records = [_dump(j, j.item_id, path) for j in judgments]
    _atomic_write(path, _encode(records, _JUDGMENTS, fmt, gz, path))
    return path


def items_frame(dataset: Iterable[Item]) -> pd.DataFrame:
    """The DataFrame behind ``Dataset.to_pandas``: the tabular layout with Python objects in cells."""
    import pandas as pd

    records = [item.model_dump() for item in dataset]
    columns, rows = _table(records, _ITEMS, (), Path(_FRAME))
    frame = pd.DataFrame.from_records(rows, columns=columns)
    for column in columns:
        if column.startswith("scores."):
            frame[column] = frame[column].astype(float)
    return frame


def judgments_frame(judgments: Iterable[Judgment]) -> pd.DataFrame:
    """Judgments as a DataFrame in the same layout: ``criteria.<name>`` and ``usage.<field>`` columns,
    ``extra`` as dicts (what the front door's ``to_pandas()`` of a run gives)."""
    import pandas as pd

    columns, rows = _table([j.model_dump() for j in judgments], _JUDGMENTS, (), Path(_FRAME))
    return pd.DataFrame.from_records(rows, columns=columns)


class JsonlAppender:
    """Append-only JSON-lines writer for streaming runs: each record is one ``write`` of one
    line followed by ``fsync``, so a crash loses at most the line being written. Reopening
    a file whose last line was cut short drops that fragment with a ``DataWarning``.

    A write that fails (a full disk: ``ENOSPC`` after part of the lines went out, or an ``fsync``
    that fails) raises its ``OSError`` with the file cut back to where it was: no partial line is
    left for the next write to be glued onto. Should the cut itself fail, the next write cuts the
    partial tail first (``_drop_partial_tail``). One writer per file (each user locks its file).

    >>> with JsonlAppender("run/judgments.jsonl") as out:    # doctest: +SKIP
    ...     out.append(judgment)
    """

    def __init__(self, path: PathLike, *, fsync: bool = True):
        self.path = Path(path)
        if self.path.suffix.lower() == ".gz":
            raise DataError("an appender writes plain JSON lines; drop the .gz suffix", self.path)
        self.fsync = fsync
        self.dropped_bytes = self._drop_partial_tail()
        self._lock = threading.Lock()
        self._torn = False  # a failed write may have left part of a line: cut it before the next one
        created = not self.path.exists()
        self._fd: int | None = open_private(self.path, os.O_WRONLY | os.O_APPEND)  # owner only, folder too
        if created and fsync:
            _fsync_dir(self.path.parent)

    def append(self, record: BaseModel | Mapping[str, Any]) -> None:
        self.extend([record])

    def extend(self, records: Iterable[BaseModel | Mapping[str, Any]]) -> None:
        """Append several records with one write and one fsync."""
        lines = []
        for record in records:
            data = record.model_dump(mode="json") if isinstance(record, BaseModel) else dict(record)
            lines.append(_json_line(data, self.path))
        if not lines:
            return
        payload = "".join(lines).encode("utf-8")
        with self._lock:
            if self._fd is None:
                raise ValueError(f"{self.path} is closed")
            if self._torn:
                self._drop_partial_tail()
                self._torn = False
            size = os.fstat(self._fd).st_size
            try:
                self._write(payload)
            except OSError as exc:
                self._cut_back(size)
                exc.filename = exc.filename or str(self.path)
                raise

    def _write(self, payload: bytes) -> None:
        view = memoryview(payload)
        while view:
            view = view[os.write(self._fd, view):]  # type: ignore[arg-type]
        if self.fsync:
            os.fsync(self._fd)  # type: ignore[arg-type]

    def _cut_back(self, size: int) -> None:
        """After a failed write: the file as it was before it (truncating frees space, so it works on a
        full disk), else a note to cut the partial tail before the next write."""
        try:
            os.ftruncate(self._fd, size)  # type: ignore[arg-type]
            os.fsync(self._fd)  # type: ignore[arg-type]
        except OSError:
            self._torn = True

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop_partial_tail(self) -> int:
        """Truncate after the last newline if the file does not end with one; bytes dropped."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return 0
        if size == 0:
            return 0
        with open(self.path, "r+b") as fh:
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return 0
            end, keep = size, 0
            while end > 0:  # scan backwards for the last complete line
                start = max(0, end - 65536)
                fh.seek(start)
                newline = fh.read(end - start).rfind(b"\n")
                if newline >= 0:
                    keep = start + newline + 1
                    break
                end = start
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
        dropped = size - keep
        warnings.warn(
            f"{self.path}: dropped a partial last line ({dropped} bytes), left by an interrupted write",
            DataWarning, stacklevel=3,
        )
        return dropped


# ---------------------------------------------------------------------------------------- reading


def _open_rows(source: Any, schema: _Schema, *, verdict_at: str | None = None
               ) -> tuple[str, Iterator[tuple[int, dict[str, Any]]], str | None]:
    """(where, rows as (line, record dict), dataset name) for a path or a DataFrame.

    For judgments read from ``score``/``label`` (no ``verdict_at`` field), tabular sources check
    their columns once; JSON rows are checked one by one.
    """
    check = schema is _JUDGMENTS and verdict_at is None
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


def _verdict_record(record: dict[str, Any], field: str | None, where: str, line: int) -> dict[str, Any]:
    """A row as the Judgment it describes. Without ``field``, as it is (this toolkit's layout,
    validated strictly). With it, the value at ``field`` becomes the score (a number) or the label
    (a string); a row whose ``status`` is not ok keeps no value, and gets a reason if it has none."""
    if field is None:
        return record
    value = _value_at(record, field)
    status = record.get("status")
    record = {key: value for key, value in record.items() if key not in ("score", "label")}
    if status not in (None, "ok"):
        return record | {"reason": record.get("reason") or f"status {status!r} in the file, no reason given"}
    if value is None:
        return record | {"status": "unparsable", "reason": f"no value at {field!r}"}
    if isinstance(value, str):
        return record | {"label": value}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return record | {"score": value}
    raise DataError(f"expected a number (a score) or a string (a label), got {_short(value)}", where, line, field)


def _value_at(record: Mapping[str, Any], field: str) -> Any:
    """``record[field]`` (a tabular column named ``prediction.coherence``), else the dotted path."""
    if field in record:
        return record[field]
    value: Any = record
    for part in field.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


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


# ---------------------------------------------------------------------------------------- validation


def _validate(model: type[BaseModel], record: dict[str, Any], where: str, line: int) -> Any:
    try:
        return model.model_validate(record)
    except ValidationError as err:
        raise data_error(err, record, where, line) from None


def data_error(err: ValidationError, record: Mapping[str, Any], where: str, line: int | None) -> DataError:
    """pydantic's first error on ``record`` as one located line: the user's field path, why, what was given."""
    errors = err.errors(include_url=False)
    field = _field_of(errors[0], record)
    messages: list[str] = []
    for error in errors:
        if _field_of(error, record) == field:
            message = _message(error)
            if message not in messages:
                messages.append(message)
    detail = "; or ".join(messages)
    first = errors[0]
    if first["type"] not in ("missing", "value_error") and first["loc"] and "input" in first:
        detail += f" (got {_short(first['input'])})"
    return DataError(detail, where, line, field)


def _message(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "required field is missing"
    msg = str(error["msg"]).removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:] if msg.startswith("Input") else msg


def _field_of(error: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    """pydantic's loc as the user's field path: keys that exist in the input, joined by '.'.

    Union member tags in the loc (``label.int``) are not keys of the input and are dropped; a
    model-level error names its field through ``ctx['field']`` (see ``Item``).
    """
    loc = error.get("loc") or ()
    if not loc:
        return (error.get("ctx") or {}).get("field")
    parts: list[str] = []
    node: Any = record
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif not parts:
            node = None  # a top-level field absent from the input (missing)
        else:
            continue
        parts.append(str(part))
    if error.get("type") == "missing" and len(loc) > 1 and parts and parts[-1] != str(loc[-1]):
        parts.append(str(loc[-1]))  # a key missing inside a list of objects: name it (messages.0.role)
    return ".".join(parts)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


# ---------------------------------------------------------------------------------------- writing


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


def _dump(model: BaseModel, ident: str, path: Path, *, exclude_defaults: bool = False) -> dict[str, Any]:
    try:
        return model.model_dump(mode="json", exclude_defaults=exclude_defaults)
    except Exception as err:  # pydantic's serialisation errors carry no common base worth naming
        raise DataError(f"cannot serialise record {ident!r}: {err}", path, None, "extra") from None


def _json_line(record: Mapping[str, Any], path: Path) -> str:
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        ident = record.get("id", record.get("item_id"))
        raise DataError(f"cannot write record {ident!r} as JSON: {err}", path, None, "extra") from None


def _encode(records: list[dict[str, Any]], schema: _Schema, fmt: str, gz: bool, path: Path) -> bytes:
    if fmt == "jsonl":
        data = "".join(_json_line(r, path) for r in records).encode("utf-8")
    elif fmt == "json":
        body = ",\n".join(_json_line(r, path)[:-1] for r in records)
        data = (f"[\n{body}\n]\n" if records else "[]\n").encode("utf-8")
    elif fmt in ("csv", "tsv"):
        _no_empty_required_text(records, path)
        data = _csv_bytes(*_table(records, schema, schema.json_cells, path), "\t" if fmt == "tsv" else ",")
    else:
        data = _parquet_bytes(*_table(records, schema, schema.parquet_json, path), path)
    return gzip.compress(data, mtime=0) if gz else data


def _table(records: list[dict[str, Any]], schema: _Schema, json_cells: tuple[str, ...], path: Path
           ) -> tuple[list[str], list[dict[str, Any]]]:
    """Flatten records into rows and the columns that hold at least one value, in field order."""
    rows = []
    for record in records:
        row: dict[str, Any] = {}
        for key, value in record.items():
            if key in schema.flat and isinstance(value, dict):
                row.update((f"{key}.{sub}", v) for sub, v in value.items())
            elif isinstance(value, (dict, list, tuple)) and not value:
                row[key] = None  # an empty extra is no extra
            elif key in json_cells and value is not None:
                row[key] = _json_line(value, path)[:-1]
            else:
                row[key] = value
        rows.append(row)
    seen: dict[str, None] = {}
    for row in rows:
        seen.update((k, None) for k, v in row.items() if v is not None)
    order = {name: i for i, name in enumerate(schema.model.model_fields)}
    columns = sorted(seen, key=lambda c: order.get(c.partition(".")[0], len(order)))  # stable
    key = next(iter(order))  # id / item_id: even an empty table has a header
    return ([key] if key not in columns else []) + columns, rows


def _no_empty_required_text(records: list[dict[str, Any]], path: Path) -> None:
    """CSV cannot tell "" from an empty cell (no value); refuse rather than write an unreadable item."""
    for record in records:
        for field in ("output", "output_a", "output_b", "qid", "docid", "item_id"):
            if record.get(field) == "":
                ident = record.get("id", record.get("item_id"))
                raise DataError(f"record {ident!r} has an empty string, which a CSV cell cannot tell from "
                                "a missing value; save as .jsonl or .parquet", path, None, field)


def _csv_bytes(columns: list[str], rows: list[dict[str, Any]], delimiter: str) -> bytes:
    out = io.StringIO(newline="")
    # "\r\n" (RFC 4180) also makes the writer quote cells holding a lone "\r"
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if (v := row.get(c)) is None else safe_cell(v) for c in columns])
    return out.getvalue().encode("utf-8")


def _parquet_bytes(columns: list[str], rows: list[dict[str, Any]], path: Path) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {}
    for column in columns:
        values = [row.get(column) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) > 1 and str in kinds:  # e.g. labels 2 and "a" in one dataset
            values = [None if v is None else str(v) for v in values]
        try:
            arrays[column] = pa.array(values)
        except (pa.ArrowException, TypeError, ValueError) as err:
            raise DataError(f"cannot store this column in Parquet ({err})", path, None, column) from None
    buffer = io.BytesIO()
    pq.write_table(pa.table({c: arrays[c] if rows else pa.array([], pa.string()) for c in columns}), buffer)
    return buffer.getvalue()


def _atomic_write(path: Path, data: bytes) -> None:
    """Write to a temp file beside ``path`` then rename over it: readers see old or new, never half."""
    try:
        write_atomic(path, data)  # new files owner-only (judgelab.files)
    except OSError as err:
        raise DataError(f"cannot write: {err.strerror}", path) from None


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform/filesystem allows it
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)
