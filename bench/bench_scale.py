"""Large inputs to `judgelab evaluate`: time and peak memory of a watched log and of many comparisons.

A production log watched with --monitor, comparisons among many systems, a million comparisons. Each case writes its synthetic files, then runs the command line in a fresh process (so its peak RSS,
``ru_maxrss``, is its own) and records seconds and MB. Cases:

* ``monitor``: 2 systems x n judged outputs with a time each (scores 1-5 at random, no change), the
  default reference period (the earliest fifth) and a short one (``--reference-until 1000``);
* ``ring``: k systems in a ring, k comparisons (each system against the next), every one labelled (the
  board printed; ``--json`` would add all k(k-1)/2 pairs of every estimator);
* ``million``: 10^6 comparisons among 30 systems, 2,000 labelled: JSON lines (read in one pass, a few
  fields a comparison kept: evaluate/comparison_file.py), and the same comparisons as CSV (read whole,
  an ``Item`` and a ``Judgment`` object each, as every format but JSON lines still is).

    .venv/bin/python -m bench.bench_scale            # all cases, written to docs/benchmarks.md
    .venv/bin/python -m bench.bench_scale --quick    # the small sizes only, printed
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import command_line, describe_machine, log, table_head, table_row, write_doc_section

MONITOR_SIZES = (10_000, 100_000, 500_000)
RING_SIZES = (200, 500, 1000)
QUICK = {"monitor": (10_000,), "ring": (200,)}


def write_monitor(folder: Path, n: int) -> list[str]:
    rng = random.Random(0)
    with (folder / "logs.jsonl").open("w") as items, (folder / "judged.jsonl").open("w") as judged:
        for k in range(2 * n):
            items.write(json.dumps({"id": f"o{k}", "system_id": "ab"[k % 2], "output": "o", "scale": [1, 5],
                                    "time": k // 2}) + "\n")
            judged.write(json.dumps({"item_id": f"o{k}", "score": rng.randint(1, 5)}) + "\n")
    return ["evaluate", "--data", str(folder / "logs.jsonl"), "--judgments", str(folder / "judged.jsonl"),
            "--monitor", "--json"]


def write_comparisons(folder: Path, n: int, k: int, labelled: int, ring: bool, csv: bool = False) -> list[str]:
    argv = _write_comparisons(folder, n, k, labelled, ring)
    if csv:
        import pandas as pd

        pd.read_json(folder / "items.jsonl", lines=True, dtype=False).to_csv(folder / "items.csv", index=False)
        (folder / "items.jsonl").unlink()
        argv[2] = str(folder / "items.csv")
    return argv


def _write_comparisons(folder: Path, n: int, k: int, labelled: int, ring: bool) -> list[str]:
    rng = random.Random(0)
    with (folder / "items.jsonl").open("w") as items, (folder / "judged.jsonl").open("w") as judged:
        for i in range(n):
            a, b = (i % k, (i + 1) % k) if ring else rng.sample(range(k), 2)
            record = {"id": f"c{i}", "system_a": f"s{a}", "system_b": f"s{b}"}
            if i < labelled:
                record["label"] = rng.choice("ab") if rng.random() < 0.8 else "tie"
            items.write(json.dumps(record) + "\n")
            judged.write(json.dumps({"item_id": f"c{i}", "prediction": rng.choice(["a", "b", "tie"])}) + "\n")
    return ["evaluate", "--data", str(folder / "items.jsonl"), "--judgments", str(folder / "judged.jsonl"),
            "--field", "prediction", "--human-ids", "all"]  # the board; --json adds every pair (k(k-1)/2 of them)


def child(argv: list[str]) -> None:
    """Runs in the fresh process: the command line in-process, then its time and peak RSS."""
    from judgelab.cli import main

    sys.argv = ["judgelab", *argv]
    started = time.perf_counter()
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    seconds = time.perf_counter() - started
    print(json.dumps({"exit": code, "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)


def measure(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.bench_scale", "--child", *argv], capture_output=True,
                          text=True, check=False)
    figures = json.loads(done.stderr.strip().splitlines()[-1])
    if figures["exit"] not in (0, 1):  # 1: --monitor's alarm
        raise RuntimeError(f"{' '.join(argv)} exited {figures['exit']}: {done.stderr[-500:]}")
    return figures


def cases(quick: bool):
    for n in QUICK["monitor"] if quick else MONITOR_SIZES:
        yield f"--monitor, 2 systems x {n:,} outputs", lambda f, n=n: write_monitor(f, n)
        if n >= 100_000:
            yield (f"--monitor, 2 systems x {n:,} outputs, --reference-until 1000",
                   lambda f, n=n: [*write_monitor(f, n), "--reference-until", "1000"])
    for k in QUICK["ring"] if quick else RING_SIZES:
        yield f"comparisons, a ring of {k:,} systems, all labelled", lambda f, k=k: write_comparisons(f, k, k, k, True)
    if not quick:
        yield ("10^6 comparisons among 30 systems, 2,000 labelled",
               lambda f: write_comparisons(f, 1_000_000, 30, 2000, False))
        yield ("the same, the comparisons as CSV (read whole, as objects)",
               lambda f: write_comparisons(f, 1_000_000, 30, 2000, False, csv=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small sizes only; print, do not write")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child)
    rows = []
    for name, write in cases(args.quick):
        with tempfile.TemporaryDirectory() as folder:
            command = write(Path(folder))
            size = sum(p.stat().st_size for p in Path(folder).iterdir()) / 1e6
            figures = measure(command)
        rows.append([name, f"{size:.1f}", f"{figures['seconds']:.1f}", f"{figures['peak_mb']:.0f}"])
        log(" | ".join(rows[-1]))
    table = [*table_head(["case", "input MB", "seconds", "peak MB"]), *map(table_row, rows)]
    body = "\n".join([f"Machine: {describe_machine()}. Command: `{command_line('bench.bench_scale', argv)}`; each case "
                      "in a fresh process (its own peak RSS), the command line as a user runs it.", "", *table])
    print(body)
    if not args.quick:
        write_doc_section("bench_scale", body,
                          heading="## Large inputs to evaluate: a watched log, many systems, a million comparisons "
                                  "(`bench/bench_scale.py`)")


if __name__ == "__main__":
    main()
