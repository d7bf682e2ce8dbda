"""Meta-evaluation speed: all correlation levels with 1,000-resample CIs, 100,000 items, 1,000 groups.

    python -m bench.bench_metrics            # print the figures
    python -m bench.bench_metrics --write    # also replace this benchmark's section of docs/benchmarks.md

Synthetic data shaped like SummEval scaled up: 1,000 sources x 100 systems (one output each),
human score = mean of three 1-5 ratings (13 distinct values). Two judges: integer 1-10 scores
(the usual prompted judge) and continuous scores (a logprob-weighted judge, ~100,000 distinct
values), because the exact resampling kernels take a different path for each (see
``judgelab.metrics.weighted``). For scale, the naive way, scipy on every resample written out
item by item, is timed on a few resamples and extrapolated to 1,000.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from scipy import stats

from bench.common import write_doc_section
from judgelab.metrics import correlations
from judgelab.metrics.bootstrap import GroupBootstrap

N_GROUPS, N_SYSTEMS, N_RESAMPLES = 1_000, 100, 1_000
SECTION = "## Meta-evaluation (`bench/bench_metrics.py`)"


def synthetic(seed: int = 0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(N_GROUPS), N_SYSTEMS).astype(str)
    systems = np.tile(np.arange(N_SYSTEMS), N_GROUPS).astype(str)
    quality = rng.normal(size=len(groups)) + rng.normal(size=N_SYSTEMS)[np.tile(np.arange(N_SYSTEMS), N_GROUPS)]
    ratings = np.clip(np.round(3 + quality[:, None] + rng.normal(size=(len(groups), 3))), 1, 5)
    human = ratings.mean(axis=1)
    continuous = 5.5 + 2 * quality + 1.5 * rng.normal(size=len(groups))
    judges = {"integer 1-10": np.clip(np.round(continuous), 1, 10), "continuous": continuous}
    return human, judges, groups, systems


def time_all_levels(human, judge, groups, systems) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): on a shared machine the CPU time is the
    steadier figure."""
    wall, cpu = time.perf_counter(), time.process_time()
    correlations(human, judge, groups, systems, n_resamples=N_RESAMPLES, seed=0)
    return time.perf_counter() - wall, time.process_time() - cpu


def time_naive_dataset_level(human, judge, groups, resamples: int = 5) -> float:
    """Seconds for 1,000 resamples of scipy's Spearman + Kendall on expanded resamples."""
    codes = np.unique(groups, return_inverse=True)[1]
    counts = next(GroupBootstrap(N_GROUPS, resamples, seed=0).blocks())
    start = time.perf_counter()
    for row in counts:
        weights = row[codes].astype(int)
        x, y = np.repeat(human, weights), np.repeat(judge, weights)
        stats.spearmanr(x, y)
        stats.kendalltau(x, y)
    return (time.perf_counter() - start) / resamples * N_RESAMPLES


def machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = f", load average {os.getloadavg()[0]:.1f} at start" if hasattr(os, "getloadavg") else ""
    return f"{cores} cores, {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}{load}"


def run() -> str:
    human, judges, groups, systems = synthetic()
    lines = [SECTION, "",
             f"{len(human):,} items in {N_GROUPS:,} groups, {N_SYSTEMS} systems; Pearson, Spearman and Kendall tau-b "
             f"at the dataset, group and system levels, each with a {N_RESAMPLES:,}-resample cluster-bootstrap CI.",
             "", f"- machine: {machine()}", "- command: `python -m bench.bench_metrics`", "",
             "| judge scores | all levels, 1,000-resample CIs: wall (CPU) | naive dataset level "
             "(scipy per expanded resample, Spearman + Kendall only, extrapolated) |",
             "|---|---|---|"]
    for name, judge in judges.items():
        wall, cpu = min(time_all_levels(human, judge, groups, systems) for _ in range(2))
        naive = time_naive_dataset_level(human, judge, groups)
        lines.append(f"| {name} | {wall:.1f} s ({cpu:.1f} s) | ~{naive:.0f} s |")
        print(lines[-1], flush=True)
    lines += ["", "Best of 2 runs; in parentheses the process's CPU time, the steadier figure when other jobs share "
              "the machine (the load average above). Every replicate is exact (equal to scipy on the expanded "
              "resample); docs/metrics.md, \"Bootstrap\", says how.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    section = run()
    print(section)
    if parser.parse_args().write:
        # no markers: the section is the heading's, up to the next heading or start marker
        write_doc_section("bench_metrics", section.split("\n", 1)[1], heading=SECTION, markers=False)
