"""Streaming a large dataset through the runner: peak memory and items per second.

Synthetic items (written to a temporary JSON-lines file) are judged by a judge that calls no
model (it scores an output by its length), so the figures are the runner's own cost: reading
and validating each line, chunking by group, the judge call, appending judgments.jsonl, the
progress accounting, and the report at the end. Each size runs in a fresh process so its
peak RSS (``ru_maxrss``) is its own.

    .venv/bin/python -m bench.bench_stream                  # 100k and 1M items
    .venv/bin/python -m bench.bench_stream --quick          # 10k and 100k items
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import ClassVar, Literal

from bench.common import describe_machine, load_avg, log, write_doc_section
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import JudgeConfig


class LengthJudge(JudgeConfig):
    """No LLM: the score is the output's length in words, folded onto 1-5."""

    registry_name: ClassVar[str] = ""
    kind: Literal["bench-length"] = "bench-length"
    aspect: str = "quality"

    def run(self, items: Sequence[Item], client, on_judgment=None) -> list[Judgment]:
        return [self.emit(Judgment(item_id=item.id, aspect=self.aspect, score=len((item.output or "").split()) % 5 + 1),
                          on_judgment) for item in items]


def write_items(path: Path, n: int) -> None:
    words = "the summary says what the article says in fewer words than it".split()
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            record = {"id": f"s{i:07d}", "group_id": f"g{i // 8}", "system_id": f"sys{i % 8}",
                      "output": " ".join(words[: 3 + i % 9]), "scores": {"quality": 1 + i % 5}}
            out.write(json.dumps(record) + "\n")


def measure(path: Path, out: Path) -> dict:
    """Runs in the child process: one streamed run, its time and peak RSS."""
    from judgelab.llm.backends.none import no_llm_client
    from judgelab.runner import run_judge

    started = time.perf_counter()
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), path, client, out, meta=False)
    seconds = time.perf_counter() - started
    lines = sum(1 for _ in (out / "judgments.jsonl").open())
    return {"items": len(result.judgments), "lines": lines, "seconds": seconds,
            "items_per_s": len(result.judgments) / seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_size(n: int, folder: Path) -> dict:
    data = folder / f"items-{n}.jsonl"
    write_items(data, n)
    log(f"{n:,} items written ({data.stat().st_size / 1e6:.0f} MB); streaming")
    child = subprocess.run([sys.executable, "-m", "bench.bench_stream", "--child", str(data), str(folder / f"run-{n}")],
                           capture_output=True, text=True, check=True)
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    assert figures["items"] == figures["lines"] == n, figures
    data.unlink()
    return {"n": n, **figures}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k and 100k items instead of 100k and 1M")
    parser.add_argument("--sizes", type=int, nargs="+", help="item counts to run")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), Path(args.child[1]))))
        return
    from bench.common import command_line

    sizes = args.sizes or ([10_000, 100_000] if args.quick else [100_000, 1_000_000])
    loads = [load_avg()]
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        rows = []
        for n in sizes:
            rows.append(run_size(n, Path(tmp)))
            loads.append(load_avg())
            log(json.dumps(rows[-1]))
    table = ["| items | wall s | items/s | peak RSS (MB) |", "|---:|---:|---:|---:|"]
    table += [f"| {r['n']:,} | {r['seconds']:.1f} | {r['items_per_s']:,.0f} | {r['peak_rss_mb']:.0f} |" for r in rows]
    print("\n".join(table))
    if args.no_doc:
        return
    body = "\n".join([
        "## Streaming: memory and throughput (`bench/bench_stream.py`)",
        "",
        f"- command: `{command_line('bench.bench_stream', argv)}`; date {date.today().isoformat()}; machine: "
        f"{describe_machine()}; load average (1/5/15 min) before and after each size: {', '.join(loads)}.",
        "- what runs: synthetic pointwise items (8 per group) in a JSON-lines file, judged by a judge that calls no "
        "model (score = output length in words, folded onto 1-5), through `run_judge(judge, path, client, out, "
        "meta=False)`: the streamed path (chunks of 1,000 items cut at group boundaries, judgments appended in "
        "batches with one fsync each, report.html from a 5,000-judgment sample). Each size in its own process; "
        "peak RSS is that process's `ru_maxrss`.",
        "",
        *table,
        "",
        "Memory should not grow with the number of items (goal: under 1 GB, flat from 100k to 1M). "
        "Agreement figures are left out (`meta=False`): correlations need every value at once, so a streamed run "
        "computes them from the files afterwards only when asked.",
    ])
    write_doc_section("bench_stream", body)


if __name__ == "__main__":
    main()
