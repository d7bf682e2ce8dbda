"""One crash trial: start `judgelab judge`, SIGKILL it at a chosen moment, rerun, check what survived.

Shared by tests/reliability/test_kill.py (a few trials) and bench/kill_trials.py (20 random ones).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judgelab.data.io import save_items
from tests.reliability.scenario import make_items

CRITERIA = "Coherence (1-5): the summary is well organised and reads as one whole."


@dataclass
class Trial:
    killed: bool  # False: the run finished before the kill moment
    kill_after_s: float
    lines_at_kill: int
    cached_at_kill: int  # finished calls committed before the kill
    integrity: str  # SQLite's integrity_check of the cache after the kill
    rerun_code: int
    rerun_calls: int  # calls the rerun paid
    resumed_items: int
    ids_ok: bool  # judgments.jsonl holds every item exactly once

    @property
    def passed(self) -> bool:
        return (self.integrity == "ok" and self.rerun_code == 0 and self.ids_ok
                and self.cached_at_kill + self.rerun_calls == self.n_requests)

    n_requests: int = 0


def judge_command(data: Path, folder: Path, model: str) -> list[str]:
    return [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(data), "--aspect", "coherence",
            "--model", model, "--family", "summarisation", "--criteria", CRITERIA,
            "--strategy", "scale=5,cot=none", "--out", str(folder / "run"),
            "--cache-path", str(folder / "cache.sqlite")]


def run_trial(folder: Path, n_items: int, model: str, kill_when: Callable[[Path, float], bool],
              max_wait: float = 600) -> Trial:
    """``kill_when(run_dir, seconds_since_start)`` is polled every 10 ms; True sends SIGKILL."""
    folder.mkdir(parents=True, exist_ok=True)
    data = save_items(make_items(n_items), folder / "items.jsonl")
    command = judge_command(data, folder, model)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed = False
    while process.poll() is None and time.monotonic() - started < max_wait:
        if kill_when(folder / "run", time.monotonic() - started):
            os.kill(process.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.01)
    process.wait()
    elapsed = time.monotonic() - started
    lines = _lines(folder / "run" / "judgments.jsonl")
    integrity, cached = _cache_state(folder / "cache.sqlite")
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=max_wait)
    record = json.loads((folder / "run" / "run.json").read_text()) if rerun.returncode == 0 else {}
    usage = record.get("usage", {})
    ids = [json.loads(line)["item_id"] for line in _text_lines(folder / "run" / "judgments.jsonl")]
    return Trial(killed=killed, kill_after_s=elapsed, lines_at_kill=lines, cached_at_kill=cached,
                 integrity=integrity, rerun_code=rerun.returncode, rerun_calls=usage.get("calls", -1),
                 resumed_items=usage.get("resumed_items", -1),
                 ids_ok=sorted(ids) == sorted(item.id for item in make_items(n_items)), n_requests=n_items)


def _text_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _cache_state(path: Path) -> tuple[str, int]:
    """The cache opened as the next run will (WAL replayed): integrity and committed calls."""
    if not path.exists():
        return "ok", 0
    db = sqlite3.connect(path)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        count = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] if "calls" in tables else 0
    finally:
        db.close()
    return integrity, count
