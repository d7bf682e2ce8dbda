"""A disk that fills up under a run (issue 50, item 17), in process: os.write failing with ENOSPC
(tests/doubles.py's FullDisk) under the run folder, and a completion cache whose database refuses
inserts as SQLite does on a full disk. tests/reliability/test_full_disk.py does both on a real tmpfs.

Before: the first refused write raised inside the client's callback, which cancelled the calls in
flight (paid, never cached: paid again by the rerun) and ended in an internal error."""

from __future__ import annotations

import json
import sqlite3

import pytest

from judgelab.data import Item
from judgelab.errors import StorageError
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.cache import CompletionCache
from judgelab.llm.types import Request
from judgelab.runner import run_judge
from tests.doubles import FullDisk, ScriptedBackend, scripted_client

N_ITEMS = 30


def _items() -> list[Item]:
    return [Item(id=f"i{k}", source=f"Question {k}?", output=f"Answer {k}.") for k in range(N_ITEMS)]


def _judge() -> PromptedJudge:
    return PromptedJudge(aspect="quality", family="generic", criteria="Quality: the answer is right.")


def _started(backend: ScriptedBackend) -> int:
    """Calls sent to the backend: each one paid for, whether its reply was kept or not."""
    return sum(backend.attempts.values())


def test_a_full_run_folder_stops_the_run_and_the_rerun_pays_for_no_call_twice(tmp_path, monkeypatch):
    from judgelab.runner.run import _Recorder

    monkeypatch.setattr(_Recorder, "FLUSH_EVERY", 1)  # each judgment written at once: the first is refused
    backend = ScriptedBackend(lambda request, i: "Rating: [[4]]", delay=0.05, max_concurrency=3)
    disk = FullDisk(monkeypatch, tmp_path / "run", free=0)
    with scripted_client(backend, cache=tmp_path / "cache.sqlite") as client, \
            pytest.raises(StorageError, match=r"the disk holding .*judgments.jsonl is full .*the run stopped"):
        run_judge(_judge(), _items(), client, tmp_path / "run")
    assert _started(backend) < N_ITEMS  # stopped: no new call once the disk refused the judgments
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "failed" and "is full" in record["error"]
    paid = _started(backend)
    disk.free = None  # space is back
    again = ScriptedBackend(lambda request, i: "Rating: [[4]]")
    with scripted_client(again, cache=tmp_path / "cache.sqlite") as client:
        result = run_judge(_judge(), _items(), client, tmp_path / "run")
    assert paid + _started(again) == N_ITEMS  # the calls in flight finished into the cache
    assert result.counts["ok"] == N_ITEMS and not (tmp_path / "run" / ".run.spare").exists()


class _FullDatabase:
    """A cache's database whose disk fills after ``room`` replies: inserts then fail as SQLite's do."""

    def __init__(self, db: sqlite3.Connection, room: int):
        self._db, self.room = db, room

    def execute(self, sql: str, *args):
        if sql.startswith("INSERT"):
            if self.room == 0:
                error = sqlite3.OperationalError("database or disk is full")
                error.sqlite_errorcode = 13  # SQLITE_FULL
                raise error
            self.room -= 1
        return self._db.execute(sql, *args)

    def close(self) -> None:
        self._db.close()


def _full_cache(path, room: int = 4) -> CompletionCache:
    cache = CompletionCache(path)
    cache._db = _FullDatabase(cache._db, room)  # type: ignore[assignment]
    return cache


def test_a_full_cache_lets_the_calls_in_flight_finish_then_stops(tmp_path):
    backend = ScriptedBackend(lambda request, i: "Rating: [[4]]", delay=0.05, max_concurrency=3)
    cache = _full_cache(tmp_path / "cache.sqlite")
    requests = [Request.of(f"prompt {k}") for k in range(N_ITEMS)]
    done: list[int] = []
    with scripted_client(backend, cache=cache) as client:
        with pytest.raises(StorageError, match=r"cache.sqlite is full .*could not be cached"):
            client.complete_all(requests, on_done=lambda index, completions: done.append(index))
        assert 0 < len(done) < N_ITEMS
        assert len(done) == _started(backend)  # every call sent reached its caller: none was cancelled
        assert cache.unsaved == len(done) - 4  # the replies the disk refused, held in memory
        keys = [request.cache_key(backend.identity, 0) for request in requests]
        assert set(cache.get_many(keys)) == {keys[k] for k in done}  # and served from there


def test_the_run_keeps_its_judgments_when_the_cache_is_full_and_the_rerun_pays_nothing_twice(tmp_path):
    backend = ScriptedBackend(lambda request, i: "Rating: [[4]]", delay=0.05, max_concurrency=3)
    with scripted_client(backend, cache=_full_cache(tmp_path / "cache.sqlite")) as client, \
            pytest.raises(StorageError, match="cache.sqlite is full"):
        run_judge(_judge(), _items(), client, tmp_path / "run")
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "failed" and record["items"] == _started(backend)  # each reply judged and kept
    again = ScriptedBackend(lambda request, i: "Rating: [[4]]")
    with scripted_client(again, cache=tmp_path / "cache.sqlite") as client:
        run_judge(_judge(), _items(), client, tmp_path / "run")
    assert _started(backend) + _started(again) == N_ITEMS
