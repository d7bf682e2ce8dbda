"""A killed run resumes from the cache: finished calls are never paid for twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).with_name("_resume_worker.py")


STALL = 300  # seconds without a new call before the wait gives up: a stuck worker, not a slow machine


def run_worker(tmp: Path, name: str, cache: Path, kill_after_calls: int | None = None) -> Path:
    """Run the worker; with ``kill_after_calls``, SIGKILL it once it has logged that many calls. The wait
    lasts as long as calls keep coming (a loaded machine is slow, not wrong); only a stall fails it."""
    log, out = tmp / f"{name}.calls", tmp / f"{name}.out"
    process = subprocess.Popen([sys.executable, str(WORKER), str(cache), str(log), str(out)])
    if kill_after_calls is not None:
        seen, last_progress = 0, time.monotonic()
        while _count(log) < kill_after_calls and process.poll() is None:
            if _count(log) > seen:
                seen, last_progress = _count(log), time.monotonic()
            if time.monotonic() - last_progress > STALL:
                process.kill()
                raise AssertionError(f"timed out: the worker logged no new call in {STALL} s ({seen} of "
                                     f"{kill_after_calls} before the kill); a stuck model run, not a wrong result")
            time.sleep(0.01)
        assert process.poll() is None, "worker finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == (-signal.SIGKILL if kill_after_calls is not None else 0)
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
