"""Strategy search with a real embedded model: HPSS and Greedy against the start point on held-out items.

The MT-Bench start point vs the best strategy HPSS finds vs the best Greedy finds, scored on held-out
test items.

    nice -n 10 .venv/bin/python -m bench.bench_optimize_real --model qwen2.5-coder-0.5b \\
        --dev-items 12 --test-items 12 --budget 6          # what fits ~20 min on a quiet 2-core machine
    .venv/bin/python -m bench.bench_optimize_real --dev-items 100 --test-items 100 --budget 71   # the paper's budget

SFRES or SFHOT (short data-to-text items) are split into dev and test by source (every output of
one meaning representation on the same side, ``split_by_group``), then the first sources of each
side are kept until ``--dev-items`` / ``--test-items`` items (sources with 2 or more outputs first, so
that pairwise agreement is defined). Each method runs ``judgelab.optimize``
from the MT-Bench start point (``Strategy.mt_bench()``, 1-5 since SF's native 1-6 is not in the
space) with the dataset-level Spearman objective; every LLM call goes through one cache
(``--out``/cache.sqlite), so a rerun resumes and a strategy both methods try is paid once.
Reported: best on dev; Spearman and pairwise agreement on test of the start and of the best; the
relative Spearman gain (the paper reports +29.4% on average with 14B-class models); LLM calls.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

from bench.common import DOC, command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.commands.optimize import parse_space
from judgelab.data import load_items, split_by_group
from judgelab.data.item import Item
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.models import judgelab_home
from judgelab.llm.resolve import make_client
from judgelab.optimize.base import (
    DEFAULT_MIN_COVERAGE,
    Budget,
    JudgeEvaluator,
    OptimizeResult,
    config_of,
    load_trajectory,
    optimize,
)
from judgelab.optimize.methods import make_optimizer
from judgelab.strategy import Strategy

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench_optimize_real"
HEADING = "## Strategy search with the embedded model: start vs HPSS vs Greedy on test (`bench/bench_optimize_real.py`)"


def shared_benchmarks() -> Path:
    configured = os.environ.get("JUDGELAB_SHARED")
    return (Path(configured) if configured else ROOT.parent / "shared") / "benchmarks"


def first_groups(items: list[Item], wanted: int) -> list[Item]:
    """Whole sources until at least ``wanted`` items: sources with 2 or more outputs first (pairwise
    agreement needs them), each kind in the split's order."""
    by_group: dict[str, list[Item]] = {}
    for item in items:
        by_group.setdefault(item.group, []).append(item)
    ordered = sorted(by_group.values(), key=lambda members: len(members) < 2)  # stable
    chosen: list[Item] = []
    for members in ordered:
        if len(chosen) >= wanted:
            break
        chosen.extend(members)
    return chosen


def split(dataset: str, aspect: str, dev_items: int, test_items: int, seed: int) -> tuple[list[Item], list[Item]]:
    data = load_items(shared_benchmarks() / f"{dataset}.jsonl")
    data = data.filter(lambda item: item.human_score(aspect) is not None)
    parts = split_by_group(data, {"dev": 0.5, "test": 0.5}, seed=seed)
    return first_groups(list(parts["dev"]), dev_items), first_groups(list(parts["test"]), test_items)


def run_method(method: str, base: PromptedJudge, dev, test, client, budget: int, out: Path,
               seed: int, passes: int = 1, space: dict[str, str] | None = None,
               min_coverage: float = DEFAULT_MIN_COVERAGE) -> tuple[OptimizeResult, float]:
    started = time.perf_counter()
    log(f"{method}: budget {budget} on {len(dev)} dev items")

    def progress(record: dict[str, Any]) -> None:
        if record["kind"] == "evaluation":
            log(f"{method} step {record['step']}: {record['strategy']} -> {record['objective']} "
                f"(best {record['best_objective']}, {record['total_calls']} calls)")

    options: dict[str, Any] = {"passes": passes} if method == "stepwise" else {}
    if space:
        options["space"] = space
    evaluator = JudgeEvaluator(dev, client, seed=seed, min_coverage=min_coverage)
    result = optimize(make_optimizer(method, client, seed=seed, **options), base, evaluator, Budget(budget),
                      method_folder(out, method, space), test_items=test, on_record=progress,
                      info={"data": f"{len(dev)} dev items", "backend": client.backend.identity})
    return result, time.perf_counter() - started


def method_folder(out: Path, method: str, space: dict[str, str] | None) -> Path:
    """A confined search has its own folder (a folder refuses another space); the cache is shared."""
    return out / (f"{method}-space" if space else method)


def trace(folder: Path, dev: list[Item], test: list[Item], client, count: int, seed: int) -> list[dict[str, Any]]:
    """Where the dev estimate and the test value part: ``count`` of the method's evaluated strategies,
    its best few on dev and the rest spread evenly over its dev ranking, each scored on the test items
    (kept in ``trace.json``: a rerun pays nothing)."""
    evaluations = [r for r in load_trajectory(folder) if r["kind"] == "evaluation" and r.get("objective") is not None]
    ranked = sorted({r["strategy"]: r for r in evaluations}.values(), key=lambda r: -r["objective"])
    top = ranked[: count // 2]
    rest = ranked[count // 2:]
    spread = [rest[round(k * (len(rest) - 1) / max(count - len(top) - 1, 1))] for k in range(count - len(top))] if rest else []
    path = folder / "trace.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    evaluator = JudgeEvaluator(dev, client, seed=seed)  # in-context examples from dev, as the search's test
    rows = []
    for record in list({r["strategy"]: r for r in top + spread}.values()):  # a short rest repeats indices
        if record["strategy"] not in stored:
            evaluation = evaluator.evaluate(config_of(record), test)
            stored[record["strategy"]] = evaluation.objective
            path.write_text(json.dumps(stored, indent=1))
        rows.append({"step": record["step"], "strategy": record["strategy"], "dev": record["objective"],
                     "test": stored[record["strategy"]]})
    return rows


def trace_table(method: str, rows: list[dict[str, Any]]) -> str:
    from scipy import stats

    known = [r for r in rows if r["test"] is not None]
    rho = stats.spearmanr([r["dev"] for r in known], [r["test"] for r in known]).statistic if len(known) > 2 else None
    lines = [f"Dev vs test for {len(rows)} of {method}'s strategies (its best on dev, then the rest spread over its "
             f"dev ranking); Spearman between the dev and test columns: {_fmt(rho, 2)}", "",
             "| step | strategy | dev (100 x Spearman) | test (100 x Spearman) |", "|---:|---|---:|---:|"]
    lines += [f"| {r['step']} | `{r['strategy']}` | {_fmt(r['dev'], 1)} | {_fmt(r['test'], 1)} |" for r in rows]
    return "\n".join(lines)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _change(start: float | None, best: float | None, gain: float | None) -> str:
    """Absolute change in Spearman, with the relative gain only when the start is positive (a ratio
    to a negative or near-zero start says nothing)."""
    if start is None or best is None:
        return "—"
    relative = f" ({gain:+.1%})" if gain is not None and start > 0 else " (n/a: start <= 0)"
    return f"{best - start:+.3f}{relative}"


def table(results: dict[str, tuple[OptimizeResult, float]]) -> str:
    lines = ["| method | evaluations | best on dev (100 x Spearman) | test Spearman: start | test Spearman: best | "
             "change (relative gain) | test pairwise agreement: start -> best | best strategy | LLM calls (paid + cached) | wall |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for method, (result, wall) in results.items():
        test = result.test or {}
        start, best = test.get("start", {}), test.get("best", {})
        gain = test.get("relative_gain")
        record = next(r for r in result.trajectory if r["step"] == result.best["step"])
        usage = result.usage
        lines.append(
            f"| {method} | {result.evaluations} | {_fmt(result.best['objective'], 1)} | {_fmt(start.get('value'))} | "
            f"{_fmt(best.get('value'))} | {_change(start.get('value'), best.get('value'), gain)} | "
            f"{_fmt(start.get('pairwise_agreement'))} -> {_fmt(best.get('pairwise_agreement'))} | "
            f"`{record['strategy']}` | {usage.calls} + {usage.cache_hits} | {wall / 60:.1f} min |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_optimize_real", description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", choices=("sfres", "sfhot"), default="sfres")
    parser.add_argument("--aspect", default="naturalness")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--dev-items", type=int, default=12)
    parser.add_argument("--test-items", type=int, default=12)
    parser.add_argument("--budget", type=int, default=6, help="evaluations per method (paper: 71)")
    parser.add_argument("--methods", nargs="+", default=["hpss", "greedy"])
    parser.add_argument("--max-tokens", type=int, default=None, help="cap on each judge reply (default: the judge's)")
    parser.add_argument("--start", default=None, help="start strategy factors (default: the MT-Bench point), "
                        "e.g. 'cot=none' for short replies on a slow machine")
    parser.add_argument("--score", choices=("parsed", "logprob"), default="parsed",
                        help="the judge's score: the written rating, or the logprob-weighted expected rating")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stepwise-passes", type=int, default=1,
                        help="passes over the 8 factors for stepwise (one pass is 21 evaluations; more "
                        "passes spend the rest of --budget)")
    parser.add_argument("--out", type=Path, default=judgelab_home() / "bench" / "optimize_real",
                        help="run folders (one per method) and the completion cache")
    parser.add_argument("--trace", type=int, default=0, help="score this many of the first method's strategies "
                        "on test (its best on dev and a spread of the rest): where dev and test part")
    parser.add_argument("--space", nargs="*", default=[], metavar="FACTOR=V1,V2",
                        help="confine the searches to these factor values (as judgelab optimize --space); "
                             "each method then runs in METHOD-space/ under --out")
    parser.add_argument("--min-coverage", type=float, default=DEFAULT_MIN_COVERAGE,
                        help="share of dev items that must be rated for an objective (as judgelab optimize; "
                             "0 reproduces runs recorded before the rule)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    dev, test = split(args.dataset, args.aspect, args.dev_items, args.test_items, args.seed)
    start = Strategy.from_key(args.start) if args.start else Strategy.mt_bench()
    base = PromptedJudge(aspect=args.aspect, strategy=start, max_tokens=args.max_tokens, model=args.model,
                         score=args.score)
    started, load_before = time.perf_counter(), load_avg()
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    space = parse_space(args.space)
    with make_client(args.model, cache=args.out / "cache.sqlite") as client:
        for method in args.methods:
            results[method] = run_method(method, base, dev, test, client, args.budget, args.out, args.seed,
                                         args.stepwise_passes, space, args.min_coverage)
        if args.trace:
            first = args.methods[0]
            folder = method_folder(args.out, first, space)
            traced = trace_table(first, trace(folder, dev, test, client, args.trace, args.seed))
    rendered = table(results) + (f"\n\n{traced}" if args.trace else "")
    print(rendered)
    command = command_line("bench.bench_optimize_real", argv)
    groups = (len({i.group for i in dev}), len({i.group for i in test}))
    section = f"""
- command: `{command.strip()}`; date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; \
machine: {describe_machine()}; load average before -> after: {load_before} -> {load_avg()}; \
wall {(time.perf_counter() - started) / 60:.1f} min
- data: {args.dataset.upper()} {args.aspect}, split by source (seed {args.seed}): {len(dev)} dev items \
({groups[0]} sources), {len(test)} test items ({groups[1]} sources); model `{args.model}` (embedded, greedy); \
start `{start.key()}`{" (the MT-Bench point)" if start == Strategy.mt_bench() else ""}; judge replies capped at {args.max_tokens or "the judge's default"} tokens; score: {args.score}
- budget {args.budget} evaluations per method on dev (the paper: 71 with 50% of the data as dev); one shared \
completion cache, so a strategy both methods evaluate is paid once (calls = paid + cache hits)
- objective: dataset-level Spearman on dev (x100); test: the same statistic on the held-out sources; \
change = best - start on test, relative gain = change / start where the start is positive; pairwise agreement: share of same-source output pairs \
ordered as the humans order them

{rendered}
"""
    if not args.no_write:
        write_doc_section(SECTION, f"{HEADING}\n{section}")
        log(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
