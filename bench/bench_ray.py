"""The Ray engine on the embedded model: 1 vs 2 workers, speed-up and identical judgments.

Each worker runs the model with one thread (a CPU-bound judge: the goal is >= 1.7x with 2
workers on 2 cores). Every configuration starts from an empty cache in a fresh local Ray
instance; the time is ``run_judge``'s wall time (it includes each worker loading the model
once). KV-prefix reuse is off so that judgments can be compared exactly across shardings.

    .venv/bin/python -m bench.bench_ray                 # the 36 bundled demo items, smollm2-135m
    .venv/bin/python -m bench.bench_ray --quick         # 8 items (checks that it works)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import date
from importlib.resources import files
from pathlib import Path

from bench.common import describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.llm.resolve import make_client
from judgelab.runner import run_judge

OPTIONS = {"n_threads": 1, "prefix_reuse": False}


def run_once(judge, items, model: str, workers: int, folder: Path) -> tuple[float, list, dict]:
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        with make_client(model, cache=folder / "cache.sqlite", backend_options=OPTIONS) as client:
            started = time.perf_counter()
            result = run_judge(judge, items, client, folder / "run", engine="ray", workers=workers, meta=False)
            seconds = time.perf_counter() - started
    finally:
        ray.shutdown()
    return seconds, [(j.item_id, j.status, j.score, j.raw) for j in result.judgments], result.usage


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="8 items")
    parser.add_argument("--items", type=int, help="how many demo items (default 36)")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    examples = files("judgelab") / "examples"
    items = list(load_items(Path(str(examples / "demo_summaries.jsonl"))))[: args.items or (8 if args.quick else 36)]
    judge = load_judge(Path(str(examples / "demo_judge.yaml"))).model_copy(update={"score": "parsed"})
    loads, rows, verdicts = [load_avg()], [], {}
    for workers in (1, 2):
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
            seconds, verdicts[workers], usage = run_once(judge, items, args.model, workers, Path(tmp))
        loads.append(load_avg())
        rows.append({"workers": workers, "seconds": seconds, "items_per_min": 60 * len(items) / seconds,
                     "calls": usage["calls"]})
        log(f"{workers} worker(s): {seconds:.1f}s, {usage['calls']} calls")
    identical = verdicts[1] == verdicts[2]
    speedup = rows[0]["seconds"] / rows[1]["seconds"]
    table = ["| workers | wall s | items/min | paid calls |", "|---:|---:|---:|---:|"]
    table += [f"| {r['workers']} | {r['seconds']:.1f} | {r['items_per_min']:.1f} | {r['calls']} |" for r in rows]
    summary = f"Speed-up with 2 workers: **{speedup:.2f}x**; judgments identical: **{'yes' if identical else 'NO'}**."
    print("\n".join([*table, "", summary]))
    if args.no_doc:
        return
    from bench.common import command_line

    write_doc_section("bench_ray", "\n".join([
        "## Ray engine: 1 vs 2 workers (`bench/bench_ray.py`)",
        "",
        f"- command: `{command_line('bench.bench_ray', argv)}`; date {date.today().isoformat()}; machine: "
        f"{describe_machine()}; load average (1/5/15 min) before, after 1 and after 2 workers: {', '.join(loads)}.",
        f"- what runs: the demo judge (`cot=none`, parsed rating) on {len(items)} bundled demo items with "
        f"{args.model}, `run_judge(..., engine=\"ray\", workers=N)` in a fresh local Ray instance "
        "(`ray.init(num_cpus=N)`) with an empty cache; one model thread per worker, KV-prefix reuse off; the "
        "time includes each worker loading the model once.",
        "",
        *table,
        "",
        summary,
    ]))


if __name__ == "__main__":
    main()
