"""Crash-safety trials: SIGKILL `judgelab judge` or `judgelab optimize` at random moments, rerun, check what survived.

    .venv/bin/python -m bench.kill_trials --trials 20 --items 12
    .venv/bin/python -m bench.kill_trials --command optimize --trials 20 --items 4 --budget 4

A judge trial passes when the cache passes SQLite's integrity check, the rerun exits 0, judgments.jsonl
holds every item exactly once, and calls committed before the kill + calls the rerun paid = the
number of distinct requests (no finished call paid twice, none lost).

An optimise trial (HPSS or random search from an 8-token rate-first judge, embedded model) passes when
the cache passes the integrity check, the rerun exits 0, trajectory.jsonl holds each evaluation index
once, in order, with the configs an uninterrupted run of the same seed evaluates, best.yaml equals that
run's, the rerun's client and its trajectory lines agree on what it paid, and calls committed before the
kill + calls the rerun paid = the uninterrupted run's distinct requests = the calls in the cache.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.reliability.kill import KillWhen, Reference, run_optimize_trial, run_trial

from bench.common import describe_machine, load_avg, log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", choices=("judge", "optimize"), default="judge")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--items", type=int, default=None, help="items judged (default: 12 judge, 4 optimize)")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--method", choices=("hpss", "random"), default="hpss", help="optimize: the search")
    parser.add_argument("--budget", type=int, default=4, help="optimize: evaluations")
    args = parser.parse_args()
    items = args.items or (12 if args.command == "judge" else 4)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        trial_at = _trial_runner(args, items, Path(tmp))
        clean = trial_at("clean", lambda *_: False)
        trials = _random_kills(trial_at, clean.kill_after_s, args.trials, random.Random(args.seed))
    command = (f"python -m bench.kill_trials --command {args.command} --trials {args.trials} --items {items} "
               f"--seed {args.seed}" + (f" --method {args.method} --budget {args.budget}"
                                        if args.command == "optimize" else ""))
    print(json.dumps({"command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                      "machine": describe_machine(), "load": load_avg(), "wall_s": round(time.time() - started, 1),
                      "uninterrupted_run_s": round(clean.kill_after_s, 1), **_summary(trials)}, indent=2))


def _trial_runner(args: argparse.Namespace, items: int, tmp: Path) -> Callable[[str, KillWhen], Any]:
    """``trial_at(name, kill_when)`` runs one trial of the chosen command in ``tmp/name``; for optimise
    runs the first (uninterrupted) trial becomes the reference the others are compared with."""
    if args.command == "judge":
        return lambda name, kill_when: run_trial(tmp / name, items, args.model, kill_when=kill_when)
    reference: list[Reference] = []

    def trial_at(name: str, kill_when: KillWhen):
        trial = run_optimize_trial(tmp / name, items, args.model, kill_when, method=args.method, budget=args.budget,
                                   reference=reference[0] if reference else None)
        if not reference:
            reference.append(Reference.of(tmp / name))
            log(f"reference: {len(reference[0].digests)} evaluations, {reference[0].distinct_requests} distinct calls")
        return trial
    return trial_at


def _random_kills(trial_at: Callable[[str, KillWhen], Any], full: float, n: int, rng: random.Random) -> list:
    log(f"an uninterrupted run takes {full:.1f}s")
    trials = []
    for number in range(n):
        moment = rng.uniform(0.2, full)  # anywhere from start-up to the final save
        trial = trial_at(f"t{number}", lambda _run, seconds, at=moment: seconds >= at)
        trials.append(trial)
        if not trial.killed:  # the run was faster than the calibration (less load): kill earlier next time
            full = min(full, trial.kill_after_s)
        log(f"trial {number}: kill at {moment:.1f}s, killed={trial.killed}, lines {trial.lines_at_kill}, "
            f"cached {trial.cached_at_kill}, rerun paid {trial.rerun_calls}, passed={trial.passed}")
    return trials


def _summary(trials: list) -> dict[str, Any]:
    killed = [t for t in trials if t.killed]
    return {"trials": len(trials), "killed_mid_run": len(killed), "passed": sum(t.passed for t in trials),
            # judge: judgments written before the kill; optimize: evaluations recorded before the kill
            "killed_with_lines_written": sum(t.lines_at_kill > 0 for t in killed),
            "calls_saved_by_cache": sum(t.cached_at_kill for t in killed),
            "calls_paid_by_reruns": sum(t.rerun_calls for t in trials),
            "failed": [i for i, t in enumerate(trials) if not t.passed]}


if __name__ == "__main__":
    main()
