"""One crash trial: start `judgelab judge` or `judgelab optimize`, SIGKILL it at a chosen moment,
rerun the same command, check what survived.

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


KillWhen = Callable[[Path, float], bool]


def run_trial(folder: Path, n_items: int, model: str, kill_when: KillWhen, max_wait: float = 600) -> Trial:
    """``kill_when(run_dir, seconds_since_start)`` is polled every 10 ms; True sends SIGKILL."""
    folder.mkdir(parents=True, exist_ok=True)
    data = save_items(make_items(n_items), folder / "items.jsonl")
    command = judge_command(data, folder, model)
    killed, elapsed = _start_and_kill(command, folder / "run", kill_when, max_wait)
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


def _start_and_kill(command: list[str], run_dir: Path, kill_when: KillWhen, max_wait: float) -> tuple[bool, float]:
    """Run ``command``, SIGKILL it when ``kill_when`` says so; (killed, seconds it ran)."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed = False
    while process.poll() is None and time.monotonic() - started < max_wait:
        if kill_when(run_dir, time.monotonic() - started):
            os.kill(process.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.01)
    process.wait()  # past max_wait the run is no longer killed: it is left to finish
    return killed, time.monotonic() - started


# -- optimiser runs ---------------------------------------------------------------------------------------------
#: The start judge of an optimise trial: rate first, 8 tokens, so every evaluation is a few cheap calls. HPSS's
#: first variants of this start point change only the scale, so a small budget never asks for long replies.
START_CONFIG = {"kind": "prompted", "aspect": "coherence", "family": "summarisation", "criteria": CRITERIA,
                "strategy": {"scale": 5, "cot": "none"}, "max_tokens": 8}


@dataclass
class Reference:
    """What an uninterrupted optimise run produced: the configs it evaluated, its best, its distinct calls."""

    digests: list[str]
    best_yaml: str
    distinct_requests: int

    @classmethod
    def of(cls, folder: Path) -> Reference:
        records = [r for r in _records(folder / "run") if r["kind"] == "evaluation"]
        return cls(digests=[r["digest"] for r in records], best_yaml=(folder / "run" / "best.yaml").read_text(),
                   distinct_requests=_cache_state(folder / "cache.sqlite")[1])


@dataclass
class OptimizeTrial:
    killed: bool
    kill_after_s: float
    lines_at_kill: int  # evaluations recorded in trajectory.jsonl before the kill
    cached_at_kill: int
    integrity: str
    rerun_code: int
    rerun_calls: int  # calls the rerun's client paid (run.json of the best config's run, written last)
    rerun_calls_recorded: int  # the same by the trajectory: calls of the lines the rerun added
    steps: list[int]  # evaluation indexes in trajectory.jsonl after the rerun
    digests: list[str]  # the configs evaluated, in order
    best_yaml: str | None
    cached_after: int  # distinct calls in the cache after the rerun
    reference: Reference | None = None

    @property
    def steps_ok(self) -> bool:
        """Each evaluation index once, in order, and the configs an uninterrupted run evaluates."""
        expected = self.reference.digests if self.reference else self.digests
        return self.steps == list(range(1, len(expected) + 1)) and self.digests == expected

    @property
    def best_ok(self) -> bool:
        return self.best_yaml is not None and (self.reference is None or self.best_yaml == self.reference.best_yaml)

    @property
    def n_requests(self) -> int:
        return self.reference.distinct_requests if self.reference else self.cached_after

    @property
    def passed(self) -> bool:
        return (self.integrity == "ok" and self.rerun_code == 0 and self.steps_ok and self.best_ok
                and self.rerun_calls == self.rerun_calls_recorded
                and self.cached_at_kill + self.rerun_calls == self.n_requests == self.cached_after)


def optimize_command(data: Path, folder: Path, model: str, *, method: str = "hpss", budget: int = 3,
                     seed: int = 0) -> list[str]:
    return [sys.executable, "-m", "judgelab.cli", "optimize", method, "--data", str(data), "--aspect", "coherence",
            "--budget", str(budget), "--model", model, "--config", str(folder / "start.yaml"), "--seed", str(seed),
            "--out", str(folder / "run"), "--cache-path", str(folder / "cache.sqlite")]


def run_optimize_trial(folder: Path, n_items: int, model: str, kill_when: KillWhen, *, method: str = "hpss",
                       budget: int = 3, reference: Reference | None = None, max_wait: float = 600) -> OptimizeTrial:
    """Kill ``judgelab optimize`` at ``kill_when``, rerun it, compare with ``reference`` (an uninterrupted
    run of the same search: ``Reference.of(folder)`` of a trial whose ``kill_when`` never fires)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = save_items(make_items(n_items), folder / "items.jsonl")
    (folder / "start.yaml").write_text(json.dumps(START_CONFIG), encoding="utf-8")
    command = optimize_command(data, folder, model, method=method, budget=budget)
    killed, elapsed = _start_and_kill(command, folder / "run", kill_when, max_wait)
    at_kill = _records(folder / "run")
    integrity, cached = _cache_state(folder / "cache.sqlite")
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=max_wait)
    after = _records(folder / "run")
    evaluations = [r for r in after if r["kind"] == "evaluation"]
    record = folder / "run" / "run.json"
    paid = json.loads(record.read_text())["usage"]["calls"] if rerun.returncode == 0 and record.exists() else -1
    best = folder / "run" / "best.yaml"
    return OptimizeTrial(killed=killed, kill_after_s=elapsed, cached_at_kill=cached,
                         lines_at_kill=sum(r["kind"] == "evaluation" for r in at_kill),
                         integrity=integrity, rerun_code=rerun.returncode, rerun_calls=paid,
                         rerun_calls_recorded=sum(r.get("calls", 0) + (r.get("proposal_calls") or 0)
                                                  for r in after[len(at_kill):]),
                         steps=[r["step"] for r in evaluations], digests=[r["digest"] for r in evaluations],
                         best_yaml=best.read_text() if best.exists() else None,
                         cached_after=_cache_state(folder / "cache.sqlite")[1], reference=reference)


def _records(run_dir: Path) -> list[dict]:
    """trajectory.jsonl's complete lines (a line cut by the kill is what the rerun drops)."""
    path = run_dir / "trajectory.jsonl"
    if not path.exists():
        return []
    complete = path.read_text(encoding="utf-8").rpartition("\n")[0]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


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
