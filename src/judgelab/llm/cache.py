"""Content-addressed completion cache in SQLite: the resume mechanism of every run.

Written with the standard library's sqlite3 rather than diskcache because we need batch
lookups (one query for hundreds of keys, which is what makes cache-served reruns fast) and
exact control of durability. WAL mode with synchronous=NORMAL survives a killed process:
every completion committed before the kill is there on the next run, so it is never paid twice.

A reply the database cannot take (its disk is full, or read-only) is held in memory, served to
any later lookup, and written with the next reply that can be: ``put`` raises a ``StorageError``
naming the file and its disk, and the client stops the run once the calls in flight have ended.
"""

from __future__ import annotations

import contextlib
import gc
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from judgelab.errors import StorageError, term
from judgelab.files import is_unwritable, open_sqlite, unwritable
from judgelab.llm.types import Completion

# A rowid table: batch lookups read the (small) key index and then whole rows, which measured
# twice as fast as WITHOUT ROWID with multi-kilobyte request texts in the rows.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT NOT NULL UNIQUE,
    backend TEXT NOT NULL,
    created REAL NOT NULL,
    request TEXT NOT NULL,
    completion TEXT NOT NULL
);
"""
_BATCH = 500  # keys per IN (...) query: well under SQLite's variable limit
_INSERT = "INSERT OR REPLACE INTO calls (key, backend, created, request, completion) VALUES (?, ?, ?, ?, ?)"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while bulk-parsing (and handing out) cached completions.

    Parsing thousands of completions allocates hundreds of thousands of small objects (a logprob
    judge's top-20 alternatives are 21 models each), and every gen-0 threshold crossed starts a
    collection that walks the growing live set: measured 3.5x slower than the parse itself. The
    parsed objects hold no reference cycles, so nothing is left for the collector to find.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class CompletionCache:
    """Maps ``Request.cache_key(backend, sample_index)`` to the stored ``Completion``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # Prompts and replies are the user's data: the file (and the -wal/-shm files SQLite gives
        # the same mode) is readable by its owner only, in a folder made 0700 if it was missing.
        self._lock = threading.Lock()
        self._unsaved: dict[str, tuple[str, str, float, str, str]] = {}  # key -> a row the disk refused
        self._db = open_sqlite(self.path, _SCHEMA, "SELECT key, backend, created, request, completion FROM calls LIMIT 0",
                               "completion cache")

    def get(self, key: str) -> Completion | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        keys = list(keys)
        found: dict[str, Completion] = {}
        with self._lock, gc_paused():
            for start in range(0, len(keys), _BATCH):
                chunk = keys[start : start + _BATCH]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, completion FROM calls WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, payload in rows:
                    found[key] = Completion.model_validate_json(payload)
            for key in set(keys) & self._unsaved.keys():
                found[key] = Completion.model_validate_json(self._unsaved[key][4])
        return found

    def put(self, key: str, backend: str, request_json: str, completion: Completion) -> None:
        """Store a reply. Raises ``StorageError`` when the disk refuses it: the reply is then held in memory
        (served by lookups) and written with the next ``put`` that succeeds, or on ``close``."""
        payload = completion.model_dump_json(exclude={"cached"})
        with self._lock:
            self._unsaved[key] = (key, backend, time.time(), request_json, payload)
            self._write_unsaved()

    @property
    def unsaved(self) -> int:
        """Replies held in memory: the disk refused them."""
        return len(self._unsaved)

    def _write_unsaved(self) -> None:
        for key, row in list(self._unsaved.items()):
            try:
                self._db.execute(_INSERT, row)
            except sqlite3.DatabaseError as exc:
                if not is_unwritable(exc):
                    raise
                held = len(self._unsaved)
                raise unwritable(self.path, exc, f"{held} repl{'y' if held == 1 else 'ies'} could not be cached, so no "
                                 f"new call was started; free some space there (or give another {term('cache_path')}) "
                                 "and rerun the same command: what was judged or cached is not paid again") from None
            del self._unsaved[key]

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._unsaved:  # a last try: the space may be back
                with contextlib.suppress(StorageError):
                    self._write_unsaved()
            self._db.close()

    def __enter__(self) -> CompletionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
