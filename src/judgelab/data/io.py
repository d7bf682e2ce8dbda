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

Each format's rows are read in :mod:`judgelab.data.rows` (bounds, decompression, UTF-8, cells into
records); pydantic's errors become located DataErrors in :mod:`judgelab.data.validation`.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import threading
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from judgelab.csv_cells import safe_cell
from judgelab.data.fields import naming_warning, rename_hint
from judgelab.data.item import Item, ItemKind
from judgelab.data.judgment import Judgment
from judgelab.data.rows import (
    _FRAME,
    _ITEMS,
    JUDGMENT_ROWS,
    _format_of,
    _is_frame,
    _json_value,
    _Schema,
    open_rows,
)
from judgelab.data.rows import ITEM_DOTTED as ITEM_DOTTED
from judgelab.data.rows import nest_dotted as nest_dotted
from judgelab.data.validation import _short, _validate
from judgelab.data.validation import data_error as data_error
from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.files import JsonBudget, open_private, regular_file, within_bound, write_atomic
from judgelab.limits import max_input_bytes, over_limit

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.data.dataset import Dataset

__all__ = ["JsonlAppender", "load_items", "save_items", "load_judgments", "save_judgments", "select_judge"]

PathLike = str | os.PathLike

_KINDS = ("pointwise", "pairwise", "relevance")
_KIND_FIELD = {"pointwise": "output", "pairwise": "output_a", "relevance": "qid"}


# ---------------------------------------------------------------------------------------- public API


def load_items(source: PathLike | pd.DataFrame, *, kind: ItemKind | None = None) -> Dataset:
    """Read items from a ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` file (text formats
    may be ``.gz``) or a pandas DataFrame. ``kind`` makes every item have that kind."""
    from judgelab.data.dataset import Dataset

    if kind is not None and kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    where, rows, name = open_rows(source, _ITEMS)
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
    where, rows, _ = open_rows(source, JUDGMENT_ROWS, verdict_at=field)
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
    _atomic_write(path, _encode(records, JUDGMENT_ROWS, fmt, gz, path))
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

    columns, rows = _table([j.model_dump() for j in judgments], JUDGMENT_ROWS, (), Path(_FRAME))
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


# ---------------------------------------------------------------------------------------- verdicts

def _verdict_record(record: dict[str, Any], field: str | None, where: str, line: int) -> dict[str, Any]:
    """A row as the Judgment it describes. Without ``field``, as it is (this toolkit's layout,
    validated strictly). With it, the value at ``field`` becomes the score (a number) or the label
    (a string); a row whose ``status`` is not ok keeps no value, and gets a reason if it has none."""
    if field is None:
        return record
    value = value_at(record, field)
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


def value_at(record: Mapping[str, Any], field: str) -> Any:
    """``record[field]`` (a tabular column named ``prediction.coherence``), else the dotted path."""
    if field in record:
        return record[field]
    value: Any = record
    for part in field.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


# ---------------------------------------------------------------------------------------- writing

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
