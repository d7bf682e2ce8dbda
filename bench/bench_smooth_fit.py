"""Speed of shrunk's smooth curve: the full fit (intervals) against the estimates alone.

The check of the recommended ranking (evaluate/choose.py) fits the estimates alone 60 times per `evaluate`.

    python -m bench.bench_smooth_fit           # about 1 minute; --write puts the table in docs/benchmarks.md

Both are timed in one run, alternating, on the same random problems (6, 11, 25 and 50 systems), and
so is a whole `choose_ranking` on a stratified sample of 8 labels per system: compare the ratios.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from bench.common import command_line, describe_machine, log, write_doc_section
from judgelab.evaluate import from_items, stratified_design
from judgelab.evaluate.choose import choose_ranking
from judgelab.evaluate.shrinkage import fay_herriot

SIZES = (6, 11, 25, 50)


def _per_call(function, seconds: float) -> float:
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        function()
        calls += 1
    return (time.perf_counter() - started) / calls


def _problem(size: int, rng: np.random.Generator):
    """``size`` systems of 40 items, 8 labelled each; the judge follows the humans' system means."""
    systems = np.repeat(np.arange(size), 40)
    truth = rng.normal(size=size)
    human = truth[systems] + rng.normal(0, 0.8, len(systems))
    judge = truth[systems] + rng.normal(0, 0.5, len(systems))
    ids = [f"i{k}" for k in range(len(systems))]
    built = from_items(ids, systems.astype(str), ids, judge, human)
    labelled = np.zeros(len(systems), dtype=bool)
    for system in range(size):
        labelled[rng.choice(np.flatnonzero(systems == system), 8, replace=False)] = True
    judge_means = np.array([judge[systems == int(s)].mean() for s in built.systems])
    return built.with_human(np.where(labelled[:, None], built.human, np.nan)), stratified_design(built, labelled), judge_means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = ["| systems | full fit (ms) | estimates alone (ms) | ratio full / alone | choose_ranking (s) |", "|---|---|---|---|---|"]
    for size in SIZES:
        x = rng.normal(size=size)
        d, v = x + rng.normal(0, 0.5, size), rng.uniform(0.01, 0.2, size)
        full = _per_call(partial(fay_herriot, d, v, x, rule="smooth"), args.seconds)
        alone = _per_call(partial(fay_herriot, d, v, x, rule="smooth", interval=False), args.seconds)
        choose = _per_call(partial(choose_ranking, *_problem(size, rng), rule="smooth"), args.seconds)
        log(f"{size} systems: full {full * 1e3:.2f} ms, alone {alone * 1e3:.2f} ms, choose {choose:.3f} s")
        rows.append(f"| {size} | {full * 1e3:.2f} | {alone * 1e3:.2f} | {full / alone:.1f} | {choose:.3f} |")
    body = "\n".join([f"Machine: {describe_machine()}. Command: `{command_line('bench.bench_smooth_fit')}`.", "", *rows])
    print(body)
    if args.write:
        write_doc_section("bench_smooth_fit", body, heading="## Speed of shrunk's smooth curve (`bench/bench_smooth_fit.py`)")


if __name__ == "__main__":
    main()
