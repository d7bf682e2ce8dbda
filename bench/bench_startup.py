"""How fast the command line starts, before and after a change, as ratios to `python -c pass`.

`judgelab --help`, `judgelab evaluate --help` and a small `judgelab evaluate`, in seconds and as ratios
to `python -c pass` measured in the same run.

    .venv/bin/python -m bench.bench_startup --before-ref a13b7bd~1 --write   # ~2 min
    .venv/bin/python -m bench.bench_startup --runs 3                         # this tree only, prints

Each command is started as a user starts it (the `judgelab` console script, a fresh process), with
PYTHONPATH set to the `src` of the tree measured: this one, and with ``--before-ref REF`` a temporary
`git worktree` of REF (removed at the end; this tree's files are not touched). The runs are interleaved
(round by round, every command of every tree in turn) so that both trees see the same moments of a busy
machine; the figures are medians over ``--runs`` rounds, and the ratio of each to `python -c pass`'s
median in the same run is what to compare across machines. Peak memory: the process's maximum resident
set (``wait4``). The small `evaluate` reads the promptfoo fixture in tests/data/sources (two providers,
four tests, the llm-rubric grader as judge): its work takes milliseconds, so its time is the start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Start-up of the command line (`bench/bench_startup.py`)"
JUDGELAB = str(Path(sys.executable).with_name("judgelab"))
SMALL = ROOT / "tests" / "data" / "sources" / "promptfoo" / "results.json"
#: (label, argv): `python -c pass` first, the floor every ratio is taken to
COMMANDS = [
    ("`python -c pass`", [sys.executable, "-c", "pass"]),
    ("typer and its rich help, imported alone (what any typer --help costs)",
     [sys.executable, "-c", "import typer, typer.rich_utils"]),
    ("`judgelab --help`", [JUDGELAB, "--help"]),
    ("`judgelab evaluate --help`", [JUDGELAB, "evaluate", "--help"]),
    ("`judgelab evaluate` (promptfoo fixture)", [JUDGELAB, "evaluate", "--data", str(SMALL), "--from", "promptfoo",
                                                 "--judge", "llm-rubric"]),
]
GOAL = 0.5  # seconds: the bound set for the two --help commands


def one_run(argv: list[str], src: Path, cache: Path) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one process started with ``src`` first on its path, its
    bytecode cached in ``cache`` (as an installed package has its .pyc files)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(cache), COLUMNS="120")
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.stderr.close()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} (PYTHONPATH={src}) exited {process.returncode}: {error[-500:]}")
    return seconds, usage.ru_maxrss / 1024


@contextmanager
def worktree(ref: str | None):
    """The `src` folder of a temporary checkout of ``ref`` (None: no checkout)."""
    if ref is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-startup-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), ref], check=True,
                   capture_output=True)
    try:
        yield folder / "src"
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False,
                       capture_output=True)


def measure(trees: dict[str, Path], runs: int) -> dict[tuple[str, str], dict[str, float]]:
    times: dict[tuple[str, str], list[tuple[float, float]]] = {(t, c): [] for t in trees for c, _ in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="bench-startup-pycache-") as folder:
        caches = {tree: Path(folder) / tree for tree in trees}  # one per tree: the two have the same paths
        for _label, argv in COMMANDS:  # untimed: the bytecode and the file system's caches
            for tree, src in trees.items():
                one_run(argv, src, caches[tree])
        for k in range(runs):
            for label, argv in COMMANDS:
                for tree, src in trees.items():
                    times[(tree, label)].append(one_run(argv, src, caches[tree]))
            log(f"round {k + 1}/{runs}")
    return {key: {"seconds": statistics.median(s for s, _ in values), "mb": statistics.median(m for _, m in values)}
            for key, values in times.items()}


def doc(figures: dict, trees: list[str], runs: int, command: str, loads: tuple[str, str], ref: str | None) -> str:
    floor = {tree: figures[(tree, COMMANDS[0][0])]["seconds"] for tree in trees}
    head = "| command | " + " | ".join(f"{t}: seconds | {t}: x `python -c pass` | {t}: peak MB" for t in trees) + " |"
    lines = [f"Machine: {describe_machine()}. Command: `{command}`. Load average (1/5/15 min) {loads[0]} before, "
             f"{loads[1]} after: a busy machine stretches every figure, so read the ratios. Medians of {runs} runs "
             "each, interleaved; each a fresh process started as a user starts it (the `judgelab` console script, "
             "COLUMNS=120, its bytecode cached as an installed package's is: this machine sets "
             "PYTHONDONTWRITEBYTECODE, lifted for these runs, the cache in a temporary folder)" + (f"; before: `{ref}`, checked out beside this tree" if ref else "") + ". Goal: "
             f"`judgelab --help` and `judgelab evaluate --help` under {GOAL} s on this machine.", "", head,
             "|---|" + "---|---|---|" * len(trees)]
    for label, _ in COMMANDS:
        cells = []
        for tree in trees:
            figure = figures[(tree, label)]
            cells.append(f"{figure['seconds']:.3f} | {figure['seconds'] / floor[tree]:.1f} | {figure['mb']:.0f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    last = trees[-1]
    floor_help = figures[(last, COMMANDS[1][0])]["seconds"]
    help_s, evaluate_help = (figures[(last, label)]["seconds"] for label in (COMMANDS[2][0], COMMANDS[3][0]))
    verdict = "under" if max(help_s, evaluate_help) < GOAL else "not yet under"
    lines += ["", f"Read ({last}): `judgelab --help` {help_s:.2f} s and `judgelab evaluate --help` {evaluate_help:.2f} s, "
              f"{verdict} {GOAL} s at this load; typer with its rich help is {floor_help:.2f} s of that, imported alone. "
              "The small `evaluate` loads numpy and scipy, which do its work, and no scikit-learn, pandas or LLM "
              "client (tests/unit/test_cli_startup.py holds both)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-ref", help="a commit to measure beside this tree (a temporary git worktree)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="write the section of docs/benchmarks.md")
    args = parser.parse_args()
    before_load = load_avg()
    log(f"machine load before: {before_load} ({os.cpu_count()} cores)")
    with worktree(args.before_ref) as before:
        trees = {**({"before": before} if before else {}), "after" if before else "this tree": ROOT / "src"}
        figures = measure(trees, args.runs)
    body = doc(figures, list(trees), args.runs, command_line("bench.bench_startup"), (before_load, load_avg()),
               args.before_ref)
    print(body)
    if args.write:
        write_doc_section("bench_startup", body, heading=SECTION)


if __name__ == "__main__":
    main()
