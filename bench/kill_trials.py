"""Crash-safety trials: SIGKILL `judgelab judge` at random moments, rerun, check what survived.

    .venv/bin/python -m bench.kill_trials --trials 20 --items 12

A trial passes when the cache passes SQLite's integrity check, the rerun exits 0, judgments.jsonl
holds every item exactly once, and calls committed before the kill + calls the rerun paid = the
number of distinct requests (no finished call paid twice, none lost).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from tests.reliability.kill import run_trial

from bench.common import describe_machine, load_avg, log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        clean = run_trial(Path(tmp) / "clean", args.items, args.model, kill_when=lambda *_: False)
        full = clean.kill_after_s
        log(f"an uninterrupted run takes {full:.1f}s")
        trials = []
        for number in range(args.trials):
            moment = rng.uniform(0.2, full)  # anywhere from start-up to the final save
            trial = run_trial(Path(tmp) / f"t{number}", args.items, args.model,
                              kill_when=lambda _run, seconds, at=moment: seconds >= at)
            trials.append(trial)
            if not trial.killed:  # the run was faster than the calibration (less load): kill earlier next time
                full = min(full, trial.kill_after_s)
            log(f"trial {number}: kill at {moment:.1f}s, killed={trial.killed}, lines {trial.lines_at_kill}, "
                f"cached {trial.cached_at_kill}, rerun paid {trial.rerun_calls}, passed={trial.passed}")
    killed = [t for t in trials if t.killed]
    print(json.dumps({
        "command": f"python -m bench.kill_trials --trials {args.trials} --items {args.items} --seed {args.seed}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": describe_machine(),
        "load": load_avg(), "wall_s": round(time.time() - started, 1),
        "trials": len(trials), "killed_mid_run": len(killed), "passed": sum(t.passed for t in trials),
        "killed_with_judgments_written": sum(t.lines_at_kill > 0 for t in killed),
        "calls_saved_by_cache": sum(t.cached_at_kill for t in killed),
    }, indent=2))


if __name__ == "__main__":
    main()
