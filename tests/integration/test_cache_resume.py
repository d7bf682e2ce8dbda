"""A killed run resumes from the cache: finished calls are never paid for twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).with_name("_resume_worker.py")


def run_worker(tmp: Path, name: str, cache: Path, kill_after_calls: int | None = None) -> Path:
    log, out = tmp / f"{name}.calls", tmp / f"{name}.out"
    process = subprocess.Popen([sys.executable, str(WORKER), str(cache), str(log), str(out)])
    if kill_after_calls is not None:
        deadline = time.monotonic() + 300
        while _count(log) < kill_after_calls and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.01)
        assert process.poll() is None, "worker finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=600) == (-signal.SIGKILL if kill_after_calls is not None else 0)
    return log


def _count(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_sigkill_then_rerun_pays_each_call_once(tmp_path, test_model_path):
    cache = tmp_path / "cache.sqlite"
    killed_log = run_worker(tmp_path, "killed", cache, kill_after_calls=12)
    resumed_log = run_worker(tmp_path, "resumed", cache)
    paid_before, paid_after = _count(killed_log), _count(resumed_log)
    assert paid_before >= 12 and paid_after > 0
    # The worker logs a call when the model returns, just before the client writes it to the cache;
    # a SIGKILL between the two loses that one reply (no program can close that window), so the
    # resumed run may pay again for the killed run's last logged call, and for nothing else.
    killed_calls = killed_log.read_text().splitlines()
    paid_twice = set(killed_calls) & set(resumed_log.read_text().splitlines())
    assert paid_twice <= {killed_calls[-1]}
    assert paid_before + paid_after == 30 + len(paid_twice)

    reference_log = run_worker(tmp_path, "reference", tmp_path / "fresh.sqlite")
    assert _count(reference_log) == 30
    assert (tmp_path / "resumed.out").read_text() == (tmp_path / "reference.out").read_text()
