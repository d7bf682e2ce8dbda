"""Items per minute with and without prefix-aware ordering on Topical-Chat.

    .venv/bin/python -m bench.bench_prefix_order                  # qwen2.5-coder-1.5b, writes docs/benchmarks.md
    .venv/bin/python -m bench.bench_prefix_order --model qwen2.5-coder-1.5b --model qwen2.5-coder-0.5b
    .venv/bin/python -m bench.bench_prefix_order --quick --model smollm2-135m   # < 3 min, prints only

Topical-Chat has 6 outputs (systems) per dialogue context. The same N items (``--contexts`` contexts
x 6 outputs; 6 x 6 = 36 by default, 2 x 6 with ``--quick``), in one seeded shuffled order, are judged
by ``PromptedJudge.run(..., order_by_source=True)`` (items of one context one after another, so
consecutive prompts share the instructions *and* the dialogue) and ``order_by_source=False`` (the
shuffled order as given: mostly only the instructions are shared). The strategy is the MT-Bench
start point at Topical-Chat's 1-3 scale with ``cot=none`` (the rating comes first, 16 tokens at
most), so prompt evaluation dominates and the dialogue sits early in the prompt (order TD-ER-IC).

No cache (every call is paid); runs alternate with / without / with / without ... on one loaded
model, each after a one-token call that replaces the KV state, and are summarised by medians.
Reported: items/min, the ratio, and the prompt tokens the embedded backend reused from the previous
call (``Completion.reused_prefix_tokens``) against those it evaluated.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.bench_judge_quality import (
    ROOT,
    benchmarks_dir,
    load_avg,
    log,
    machine,
)
from bench.common import DOC, command_line, write_doc_section
from judgelab.data import Item, load_items
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.models import DEFAULT_MODEL
from judgelab.llm.types import Completion, Request
from judgelab.strategy import Strategy

SECTION = "bench_prefix_order"
OUTPUTS_PER_CONTEXT = 6


@dataclass
class Run:
    ordered: bool
    wall_s: float
    n: int
    calls: list[tuple[str, Completion]]  # (group of the judged item, completion) in execution order
    scores: dict[str, float | None]
    unparsable: int

    @property
    def items_per_min(self) -> float:
        return 60 * self.n / self.wall_s

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for _, c in self.calls)

    @property
    def reused(self) -> int:
        return sum(c.reused_prefix_tokens for _, c in self.calls)

    @property
    def same_source_adjacent(self) -> int:
        """Calls whose item answers the same context as the call before it."""
        groups = [g for g, _ in self.calls]
        return sum(a == b for a, b in zip(groups, groups[1:], strict=False))


@dataclass
class ModelResult:
    model: str
    load_s: float
    n_items: int
    n_contexts: int
    runs: list[Run] = field(default_factory=list)
    load: str = ""

    def of(self, ordered: bool) -> list[Run]:
        return [r for r in self.runs if r.ordered == ordered]


def pick_items(n_contexts: int, seed: int) -> list[Item]:
    """``n_contexts`` whole contexts (6 outputs each), chosen and then shuffled with ``seed``."""
    items = load_items(benchmarks_dir() / "topical_chat.jsonl")
    by_group: dict[str, list[Item]] = {}
    for item in items:
        by_group.setdefault(item.group, []).append(item)
    full = sorted(g for g, members in by_group.items() if len(members) == OUTPUTS_PER_CONTEXT)
    rng = random.Random(seed)
    chosen = rng.sample(full, n_contexts)
    picked = [item for g in chosen for item in by_group[g]]
    rng.shuffle(picked)
    return picked


def make_judge(aspect: str) -> PromptedJudge:
    return PromptedJudge(aspect=aspect, strategy=Strategy.mt_bench(native_scale=3).replace(cot="none"))


class Recorder:
    """Wraps the backend's ``agenerate`` to keep every completion (reused prefix tokens included)."""

    def __init__(self, backend: Any):
        self.active = False
        self.calls: list[tuple[Request, Completion]] = []
        inner = backend.agenerate

        async def agenerate(request: Request, sample_index: int) -> Completion:
            completion = await inner(request, sample_index)
            if self.active:
                self.calls.append((request, completion))
            return completion

        backend.agenerate = agenerate


def check_kwarg() -> None:
    if "order_by_source" not in inspect.signature(PromptedJudge.run).parameters:
        raise SystemExit("PromptedJudge.run has no order_by_source option yet; this benchmark needs it")


def bench_model(model: str, items: list[Item], aspect: str, repeats: int, deadline: float,
                warmup: list[Item]) -> ModelResult:
    from judgelab.llm.resolve import make_client

    log(f"{model}: loading (no cache)")
    started = time.perf_counter()
    client = make_client(model, cache=False)
    result = ModelResult(model, time.perf_counter() - started, len(items), len({i.group for i in items}))
    recorder = Recorder(client.backend)
    judge = make_judge(aspect)
    # The item's context (group) from its prompt: the item whose output ends the user message.
    group_of = {item.id: item.group for item in items}
    before = load_avg()
    try:
        judge.run(warmup, client)  # page the weights in, allocate buffers; not timed
        schedule = [flag for _ in range(repeats) for flag in (True, False)]
        for k, ordered in enumerate(schedule):
            if time.monotonic() > deadline and k >= 2:  # always at least one with/without pair
                log(f"{model}: budget spent after {k} runs")
                break
            client.complete(Request.of("Hi", max_tokens=1))  # same KV starting state for every run
            recorder.calls, recorder.active = [], True
            started = time.perf_counter()
            judgments = judge.run(items, client, order_by_source=ordered)
            wall = time.perf_counter() - started
            recorder.active = False
            calls = [(_group_of(request, items, group_of), completion) for request, completion in recorder.calls]
            run = Run(ordered, wall, len(items), calls, {j.item_id: j.score for j in judgments},
                      sum(j.status != "ok" for j in judgments))
            result.runs.append(run)
            log(f"{model}: run {k + 1}/{len(schedule)} {'with' if ordered else 'without'} ordering: "
                f"{run.items_per_min:.1f} items/min, reused {run.reused}/{run.prompt_tokens} prompt tokens, "
                f"{run.same_source_adjacent} same-context neighbours")
    finally:
        client.close()
    result.load = f"{before} -> {load_avg()}"
    return result


def _group_of(request: Request, items: list[Item], group_of: dict[str, str]) -> str:
    """Which context a recorded judge prompt is about (its user message quotes the item's output)."""
    text = request.messages[-1].content
    matches = [item for item in items if item.output and item.output.strip() in text and item.source
               and item.source.strip()[:200] in text]
    return group_of[matches[0].id] if matches else "?"


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summary_rows(result: ModelResult) -> list[str]:
    rows = []
    for ordered in (True, False):
        runs = result.of(ordered)
        if not runs:
            continue
        rates = [r.items_per_min for r in runs]
        prompt = median([r.prompt_tokens for r in runs])
        reused = median([r.reused for r in runs])
        rows.append(
            f"| {result.model} | {result.n_items} ({result.n_contexts} x 6) | "
            f"{'with (`order_by_source=True`)' if ordered else 'without (shuffled input order)'} | "
            f"**{median(rates):.1f}** | {', '.join(f'{x:.1f}' for x in rates)} | {median([r.wall_s for r in runs]):.1f} "
            f"| {prompt:,.0f} | {reused:,.0f} ({reused / prompt:.0%}) | {prompt - reused:,.0f} "
            f"| {median([r.same_source_adjacent for r in runs]):.0f} | {median([r.unparsable for r in runs]):.0f} |"
        )
    return rows


def ratio_line(result: ModelResult) -> str:
    with_, without = result.of(True), result.of(False)
    if not with_ or not without:
        return f"- {result.model}: not enough runs for a ratio"
    ratio = median([r.items_per_min for r in with_]) / median([r.items_per_min for r in without])
    evaluated = (median([r.prompt_tokens - r.reused for r in with_])
                 / median([r.prompt_tokens - r.reused for r in without]))
    same = all(a.scores == b.scores for a in with_ for b in without)
    return (f"- {result.model}: with / without = **{ratio:.2f}x** items/min (medians); prompt tokens evaluated "
            f"with / without = {evaluated:.2f}; scores {'identical' if same else 'not identical'} across orders; "
            f"model load {result.load_s:.1f} s; load average {result.load}")


def table(results: Sequence[ModelResult]) -> str:
    lines = [
        "| Model | Items | Order | items/min (median) | runs (items/min) | wall s (median) | prompt tokens "
        "| reused from the previous call | evaluated | same-context neighbours | not ok |",
        "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        lines += summary_rows(result)
    lines.append("")
    lines += [ratio_line(r) for r in results]
    return "\n".join(lines)


def section(results: Sequence[ModelResult], args: argparse.Namespace, meta: dict[str, str]) -> str:
    return "\n".join([
        "## Prefix-aware ordering: items per minute on Topical-Chat (`bench/bench_prefix_order.py`)",
        "",
        f"- command: `{meta['command']}`",
        f"- date: {meta['date']}; machine: {meta['machine']}",
        f"- items: {args.contexts} Topical-Chat contexts x 6 outputs, the same items in the same seeded shuffled "
        f"order (seed {args.seed}) for every run; aspect {args.aspect}; judge `PromptedJudge` with "
        f"`{make_judge(args.aspect).strategy.key()}` (MT-Bench start at 1-3, no CoT: rating first, <= 16 "
        "generated tokens), greedy, no cache",
        "- *with*: `PromptedJudge.run(items, client)` (default `order_by_source=True`: sorted by context, so "
        "consecutive prompts share instructions + dialogue); *without*: `order_by_source=False`, the shuffled "
        "order as given (consecutive prompts mostly share only the instructions)",
        f"- runs alternate with / without ({args.repeats} of each planned), one model load, each run after a "
        "one-token call that resets the KV state; medians. Reused tokens are the embedded backend's "
        "`Completion.reused_prefix_tokens` (KV cache kept from the previous call); evaluated = prompt - reused",
        "",
        table(results),
        "",
    ])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_prefix_order", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 contexts (12 items), no doc")
    parser.add_argument("--model", action="append", default=None,
                        help=f"embedded model; repeat for several (default {DEFAULT_MODEL})")
    parser.add_argument("--budget-minutes", type=float, default=None,
                        help="no new run starts after this (default 30; 3 with --quick); one pair always runs")
    parser.add_argument("--contexts", type=int, default=None, help="Topical-Chat contexts (default 6; 2 with --quick)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each order, alternating (default 2)")
    parser.add_argument("--aspect", default="coherence")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--doc", action=argparse.BooleanOptionalAction, default=None,
                        help="write docs/benchmarks.md (default: yes, except with --quick)")
    args = parser.parse_args(argv)
    check_kwarg()
    models = args.model or [DEFAULT_MODEL]
    args.contexts = args.contexts or (2 if args.quick else 6)
    budget = args.budget_minutes if args.budget_minutes is not None else (3.0 if args.quick else 30.0)
    write_doc = (not args.quick) if args.doc is None else args.doc
    meta = {"command": command_line("bench.bench_prefix_order", argv),
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine()}
    items = pick_items(args.contexts, args.seed)
    picked = {item.group for item in items}
    warmup = [i for i in load_items(benchmarks_dir() / "topical_chat.jsonl") if i.group not in picked][:2]
    deadline = time.monotonic() + budget * 60
    results = []
    for model in models:
        if results and time.monotonic() > deadline:
            log(f"budget spent: {model} skipped")
            break
        results.append(bench_model(model, items, args.aspect, args.repeats, deadline, warmup))
    print(table(results))
    if write_doc:
        write_doc_section(SECTION, section(results, args, meta))
        log(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
