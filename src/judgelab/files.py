"""Files and folders judgelab creates hold the user's data (prompts, replies, scores): owner-only.

Every writer of run folders, caches and trajectories goes through these helpers, so the rule holds
for Python API callers whatever their umask (the CLI also sets umask 077): a new file is created
``0600`` and a new folder ``0700``. Existing folders are left as their owner set them; a file
replaced atomically keeps the mode of the file it replaces.

``read_run_record`` is the one reader of a run folder's ``run.json`` (the runner's resume, the
report, ``meta``, ``optimize``, ``qrels``): it lives here, beside the writers and free of heavy
imports, so the runner and the commands need not import the report package to read it.

One rule for every path a user names: a file read is a regular file (``regular_file``), no larger
than the input bound (``within_bound``, ``read_text``; ``judgelab.data.io`` streams the rest line by
line under it), and a file written is missing or a regular file (``writable_file``, checked by
``open_private`` and ``write_atomic``). Opening a FIFO blocks until another process opens its other
end (SIGTERM cannot end a process blocked in ``open()``), and a device such as ``/dev/zero`` never ends.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from judgelab.errors import ConfigError, DataError, StorageError
from judgelab.limits import MAX_INPUT_BYTES_VARIABLE, max_input_bytes, over_limit, size_text

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


#: errno values of a write that fails for want of space (``ENOSPC``; ``EDQUOT``: the user's quota)
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
#: errno values that say the place cannot be written at all, whatever is written
UNWRITABLE = (*DISK_FULL, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO)
_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR = 13, 8, 10


def is_unwritable(exc: BaseException) -> bool:
    """Is ``exc`` a write refused by the place (full, read-only, no permission), not a bug?"""
    if isinstance(exc, sqlite3.DatabaseError):
        return getattr(exc, "sqlite_errorcode", None) in (_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR) or \
            "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in UNWRITABLE


def unwritable(path: str | Path, exc: BaseException, then: str = "") -> StorageError:
    """The one-line error of a write to ``path`` that ``exc`` refused, naming the file and its disk (the
    file system it is on, by its mount point); ``then``: what it means for the user, appended."""
    code = getattr(exc, "errno", None)
    if isinstance(exc, sqlite3.DatabaseError):
        code = {_SQLITE_FULL: errno.ENOSPC, _SQLITE_READONLY: errno.EROFS}.get(
            getattr(exc, "sqlite_errorcode", None), errno.ENOSPC if "disk is full" in str(exc) else errno.EIO)
    disk = f"the file system mounted at {mount_point(path)}"
    if code in DISK_FULL:
        what = f"the disk holding {path} is full ({disk}; {os.strerror(code)})"
    elif code == errno.EROFS:
        what = f"{path} is on a read-only file system ({disk})"
    elif code in (errno.EACCES, errno.EPERM):
        what = f"{path} cannot be written: permission denied"
    else:
        what = f"{path} cannot be written ({disk}): {getattr(exc, 'strerror', None) or exc}"
    return StorageError(f"{what}{': ' + then if then else ''}")


def mount_point(path: str | Path) -> str:
    """Where the file system holding ``path`` (or its nearest existing folder) is mounted."""
    folder = Path(os.path.abspath(path))
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    while not os.path.ismount(folder) and folder != folder.parent:
        folder = folder.parent
    return str(folder)


def private_dir(path: str | Path) -> Path:
    """Create ``path`` and its missing parents ``0700`` (``Path.mkdir(parents=True)`` would give the
    parents the umask's mode); folders that exist are not touched."""
    path = Path(path)
    missing = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            folder.mkdir(mode=PRIVATE_DIR)
    return path


def open_private(path: str | Path, flags: int) -> int:
    """``os.open`` that creates a missing file ``0600`` (and its folder ``0700``); returns the descriptor.
    Only a regular file is opened (``writable_file``)."""
    path = writable_file(path)
    private_dir(path.parent)
    return os.open(path, flags | os.O_CREAT, PRIVATE_FILE)


def touch_private(path: str | Path) -> Path:
    """Create an empty ``0600`` file if there is none (before a library such as SQLite opens it with
    the umask's mode; SQLite then gives its ``-wal``/``-shm`` files the database file's mode)."""
    os.close(open_private(path, os.O_RDWR))
    return Path(path)


def open_sqlite(path: str | Path, schema: str, probe: str, what: str) -> sqlite3.Connection:
    """A SQLite database judgelab keeps (the completion and the embedding caches), ready to use:
    created owner-only, WAL mode with ``synchronous=NORMAL`` (a killed process loses nothing it
    committed), ``schema`` applied, ``probe`` (a query naming the columns used) run once.

    A path that is no such database (a corrupt or foreign file, a folder, a FIFO) is a ConfigError
    naming it, rather than SQLite's bare "file is not a database" from deep inside a run.
    """
    path = Path(path)
    if path.is_symlink():  # it holds every prompt: where it lives, and who can read it there, is not ours to know
        raise ConfigError(f"{path}: is a symbolic link; give the {what}'s real path (it holds prompts and "
                          "replies, so judgelab keeps it owner-only where it is)")
    if path.exists() and not path.is_file():  # a FIFO would block SQLite's first read
        raise ConfigError(f"{path}: not a regular file; give a file path for the {what}")
    try:
        touch_private(path)  # owner-only before SQLite opens it (its -wal/-shm follow the file's mode)
        for existing in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm"))):
            if existing.is_file() and not existing.is_symlink() and existing.stat().st_mode & 0o077:
                existing.chmod(PRIVATE_FILE)  # left readable by others (an older version, a umask of 022)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(schema)
        db.execute(probe).fetchall()
    except (sqlite3.DatabaseError, OSError) as exc:
        raise ConfigError(f"{path}: cannot use this file as the {what} ({exc}); move it away or give another "
                          "path") from None
    return db


def write_atomic(path: str | Path, data: str | bytes, *, fsync: bool = True) -> Path:
    """Write beside ``path``, then rename over it: readers see the old or the new file, never half
    of one, and a kill leaves no partial file. New files are ``0600``; a replaced one keeps its mode.

    Raises ``OSError`` (callers turn it into their own located error).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with staged_file(path) as staged, open(staged, "wb") as fh:
        fh.write(payload)
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())
    return Path(path)


@contextlib.contextmanager
def staged_file(path: str | Path) -> Iterator[Path]:
    """A private file beside ``path`` for the block to write: when the block succeeds it replaces
    ``path`` (keeping the mode of the file it replaces), and whatever happens it is gone. Several
    outputs published together stage each, so a failure leaves every one as it was."""
    path = writable_file(path)
    with located(path):
        private_dir(path.parent)
        mode = path.stat().st_mode & 0o777 if path.exists() else PRIVATE_FILE
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # created 0600
        os.close(fd)
        try:
            yield Path(tmp)
            if mode != PRIVATE_FILE:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def located(path: str | Path) -> Iterator[None]:
    """An ``OSError`` raised in the block names ``path`` (a write to a file object names none, and one to
    a staged file names that): what the user gave is what the message must say."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None or Path(exc.filename).name.startswith(f".{Path(path).name}."):
            exc.filename = str(path)
        raise


def restrict_tree(path: str | Path) -> Path:
    """Make what a library wrote with the umask's modes (Hugging Face ``save_pretrained``,
    ``torch.save``, ``numpy.savez``) owner-only: ``path`` itself, and everything under it if it is a
    folder. Those libraries take no mode argument, so this runs after they have written."""
    path = Path(path)
    targets = [path, *path.rglob("*")] if path.is_dir() else [path]
    for target in targets:
        if not target.is_symlink():
            target.chmod(PRIVATE_DIR if target.is_dir() else PRIVATE_FILE)
    return path


def replace_folder(folder: Path, out_dir: Path) -> None:
    """``out_dir`` becomes ``folder``: whatever was there before is removed first."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    folder.rename(out_dir)


@contextlib.contextmanager
def staged_folder(out_dir: str | Path, *,
                  move_in: Callable[[Path, Path], None] = replace_folder) -> Iterator[Path]:
    """A private scratch folder beside ``out_dir``, named like it, for the block to write into.

    When the block succeeds the folder is made owner-only (library writers use the umask) and
    ``move_in(folder, out_dir)`` publishes it (default: replaces ``out_dir`` whole); whatever
    happens, the scratch is removed, so a failure or a kill never leaves a half-written folder.
    """
    out_dir = Path(os.path.abspath(out_dir))  # "." and "a/.." have no name of their own
    with located(out_dir):
        scratch = Path(tempfile.mkdtemp(dir=private_dir(out_dir.parent), prefix=f".{out_dir.name}."))  # 0700
    try:
        folder = scratch / out_dir.name
        folder.mkdir(mode=PRIVATE_DIR)
        yield folder
        restrict_tree(folder)
        move_in(folder, out_dir)
    except OSError as exc:  # named as the user knows it: under out_dir, not the scratch
        named = str(exc.filename) if exc.filename is not None else None  # an error without a file keeps its text
        if named is not None and named.startswith(str(folder)):
            exc.filename = str(out_dir) + named.removeprefix(str(folder))
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_UNSAFE_IN_NAMES = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, limit: int = 80) -> str:
    """``text`` (an aspect, a member's name: anything a user wrote) as one file-name component that
    stays in its folder: every run of characters other than ASCII letters, digits, ``.``, ``_`` and
    ``-`` becomes ``_`` (no separator, no NUL), leading dots go (no ``..``, no hidden file), and the
    result is cut to ``limit`` characters. The one way names from user input become file names."""
    return _UNSAFE_IN_NAMES.sub("_", text).lstrip(".")[:limit] or "_"


_NOT_A_FILE = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _special(mode: int) -> str:
    return next((name for test, name in _NOT_A_FILE if test(mode)), "a special file")


def regular_file(path: str | Path) -> Path:
    """``path`` if it names a regular file (symlinks followed); else a DataError saying what it is.

    Checked with ``stat`` before opening: opening a FIFO blocks until some process writes to it,
    and a device such as ``/dev/zero`` never ends (read whole, it ends in a MemoryError). Data
    files are read whole, and a streamed one twice (to count its lines, then to judge), which
    only a file allows.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DataError("no such file", path) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path) from None
    if stat.S_ISDIR(mode):
        raise DataError("is a directory, not a data file", path)
    if not stat.S_ISREG(mode):
        raise DataError(f"is {_special(mode)}, not a regular file (judgelab reads its input files whole, and a "
                        "streamed one twice): save the data to a file first", path)
    return path


def writable_file(path: str | Path) -> Path:
    """``path`` if judgelab may write a file there: nothing yet, or a regular file (symlinks followed);
    else a ConfigError saying what is there. Opening a FIFO to write blocks until a reader comes, and
    a device is no place to keep a result."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write here: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else _special(mode)
        raise ConfigError(f"{path}: is {what}, not a regular file: give the path of a file to write (a new one, "
                          "or one to replace)")
    return path


def within_bound(path: str | Path, where: str | None = None) -> int:
    """``max_input_bytes()``, once ``path`` is known to be a regular file no larger than it."""
    size = regular_file(path).stat().st_size
    bound = max_input_bytes()
    if size > bound:
        raise DataError(over_limit(f"the file ({size:,} bytes)", bound), where or path)
    return bound


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file a user names (``--criteria @FILE``, an id list, a config, a JSON record),
    read whole: a regular file within the input bound, else a DataError naming it."""
    path = Path(path)
    within_bound(path)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path) from None


def text_or_file(value: str) -> str:
    """``value``, or the text of the file it names as ``@FILE`` (``--criteria @FILE``)."""
    return read_text(value[1:]) if value.startswith("@") else value


#: A parsed JSON value takes up to about 64 bytes of Python objects (an empty object: a dict and its slot in
#: the array holding it) for as little as 2 bytes of text: 120 MB of ``{},`` parse into 3 GB. So an input's
#: values are bounded as its bytes are: one per 8 bytes of the input bound (16.7 million at 128 MiB, at most
#: about a gigabyte of objects); real logs and results files hold one per 10 to 20 bytes.
JSON_BYTES_PER_VALUE = 8
_JSON_MARKS = b"{[,:"  # outside strings, each starts a value or a key
_SCAN_CHUNK = 1 << 22


class JsonBudget:
    """The JSON values one input may bring into memory, spent by each document parsed from it (an
    archive's members, a file's lines or JSON cells) before ``json.loads`` builds any of them.

    Counted by hand rather than parsed by a streaming parser (ijson): every reader keeps the whole
    document and parses it with ``json``, and a count at C speed keeps that one parser and its errors.
    Nesting needs no count: ``json`` stops at Python's recursion limit (``RecursionError``)."""

    def __init__(self) -> None:
        self.bound = max_input_bytes()
        self.left = self.bound // JSON_BYTES_PER_VALUE

    def spend(self, text: str | bytes, where: str | Path, line: int | None = None, field: str | None = None) -> None:
        found = _json_values(text, self.left)
        if found > self.left:
            most = self.bound // JSON_BYTES_PER_VALUE
            raise DataError(f"holds more than {most:,} JSON values (objects, arrays, strings, numbers), the most the "
                            f"{size_text(self.bound)} limit on one input allows: one per {JSON_BYTES_PER_VALUE} bytes, "
                            f"as each takes up to 64 bytes once read ({MAX_INPUT_BYTES_VARIABLE}; set it higher to "
                            "allow more)", where, line, field)
        self.left -= found


def _json_values(text: str | bytes, most: int) -> int:
    """The values and keys of JSON ``text``: its ``{[,:`` counted at C speed, and only when that passes
    ``most`` recounted outside strings (a string may hold any number of them)."""
    quick = sum(text.count(mark) for mark in (_JSON_MARKS if isinstance(text, bytes) else _JSON_MARKS.decode()))
    if quick <= most:
        return quick
    return _outside_strings(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))


def _outside_strings(data: bytes) -> int:
    """``{[,:`` outside JSON strings: escapes dropped (``\\\\`` pairs first, as a JSON scanner pairs
    them, then ``\\"``), a byte is in a string when an odd number of quotes precede it. In chunks, so
    numpy's masks stay a few MiB whatever the size."""
    import numpy as np

    data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = np.zeros(256, dtype=bool)
    marks[list(_JSON_MARKS)] = True
    inside = count = 0
    for start in range(0, len(data), _SCAN_CHUNK):
        chunk = np.frombuffer(data, np.uint8, min(_SCAN_CHUNK, len(data) - start), start)
        quotes = chunk == ord('"')
        outside = (np.cumsum(quotes, dtype=np.uint8) & 1) == inside  # uint8 wraps, keeping the parity
        count += int(np.count_nonzero(marks[chunk] & outside))
        inside ^= int(np.count_nonzero(quotes)) & 1
    return count


def read_json(path: str | Path) -> Any:
    """The JSON document in ``path``, or None when there is no such file; bad JSON is a
    ``DataError`` naming the file and line, and so are more values than the input bound allows."""
    path = Path(path)
    if not path.exists():
        return None
    text = read_text(path)
    JsonBudget().spend(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"bad JSON ({exc.msg})", path, exc.lineno) from None
    except RecursionError:  # json's decoder recurses once per level of nesting
        raise DataError(f"nested more deeply than Python's limit of about {sys.getrecursionlimit()} levels",
                        path) from None


#: Where a field of a file is: the 1-based line for a pydantic error location, or None.
LineOf = Callable[[tuple[str | int, ...]], int | None]


def line_finder(text: str) -> LineOf:
    """Where a pydantic error's location is in a YAML or JSON document's ``text``: follows the location
    through the node tree (PyYAML's ``compose`` keeps each node's position; JSON is YAML) to the deepest
    key or item it names; a location part that is not in the text (a union member's tag, a missing field)
    stops the walk there. No line when the text is no YAML PyYAML reads."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return lambda loc: None

    def line_of(loc: tuple[str | int, ...]) -> int | None:
        node, line = root, None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                entry = next(((k, v) for k, v in node.value if k.value == str(part)), None)
                if entry is None:
                    break
                node, line = entry[1], entry[0].start_mark.line + 1  # the key's line: where the field is named
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line

    return line_of


def read_run_record(folder: str | Path, *, hint: str | None = None) -> dict[str, Any] | None:
    """FOLDER/run.json (None when there is none); bad JSON or anything but an object is a DataError
    naming the file (and line), with ``hint`` (what the caller will not do, and what to do instead)
    appended. The one reader of run.json (re-exported by ``judgelab.report``)."""
    path = Path(folder) / "run.json"
    try:
        record = read_json(path)
        if record is not None and not isinstance(record, dict):
            raise DataError("run.json must hold one JSON object", path)
    except DataError as exc:
        if hint is None:
            raise
        raise DataError(f"{exc.detail}: {hint}", exc.path, exc.line) from None
    return record


def source_folder(judgments_file: str | Path) -> Path:
    """The run folder judgments were read from: the folder given, or the folder of a file."""
    path = Path(judgments_file)
    return path if path.is_dir() else path.parent


def source_run(judgments_file: str | Path | None) -> dict[str, Any]:
    """run.json of the judge run the judgments come from (model, judge config, accounting), if any:
    ``--judgments`` named its folder or the judgments.jsonl in it. Read by meta and evaluate reports."""
    if judgments_file is None or not (Path(judgments_file).is_dir() or Path(judgments_file).name == "judgments.jsonl"):
        return {}  # a run.json beside some other file describes another file's judgments
    try:
        return read_run_record(source_folder(judgments_file)) or {}
    except DataError:
        return {}  # only context for the page's header: an unreadable neighbour must not stop the command
