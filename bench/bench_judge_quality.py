"""Quality of the prompted judge's MT-Bench start strategy on the HPSS held-in split.

    .venv/bin/python -m bench.bench_judge_quality                       # ~60 min, writes docs/benchmarks.md
    .venv/bin/python -m bench.bench_judge_quality --quick --model smollm2-135m   # < 3 min, prints only
    .venv/bin/python -m bench.bench_judge_quality --report-only         # table from what is on disk

For each dataset + aspect (default: SFRES naturalness, SFHOT naturalness, Topical-Chat coherence;
``--tasks hpss`` adds every aspect HPSS evaluates), the default embedded model judges held-in items
(``extra.hpss_split == "valid"``, the HPSS validation file) with ``PromptedJudge(score="logprob")``.
One run gives both scores per item: the generation-parsed rating (``extra.parsed_scores``) and the
logprob-weighted expected rating (the judgment's score). Reported: n, dataset-level Spearman with a
1,000-resample cluster-bootstrap CI (over sources), the unparsable share of each score, items/minute.

Budget and resuming. Groups (sources) are visited in a seeded order, all held-in items of a group at
once, so the judged subset is always a prefix of one fixed sequence. Each judgment is appended (and
fsynced) to ``<out>/<model>/<dataset>-<aspect>-<judge digest>.jsonl`` as it finishes, with the wall
time it took; a rerun skips what is there and counts its time against the budget, and every LLM call
goes through ``bench-cache.sqlite``. No new group starts once the budget is spent: ``--budget-minutes``
is shared by the tasks, each getting an equal part of what the earlier ones left. A run killed at any
point still yields figures (``--report-only``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import DOC, command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Item, JsonlAppender, Judgment, load_items
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.models import DEFAULT_MODEL, judgelab_home
from judgelab.strategy import Strategy

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench_judge_quality"
HELD_IN = "valid"  # extra.hpss_split: the HPSS validation file

# The aspects the README quotes first, then the rest of what HPSS evaluates (seed section 4).
PRIMARY = (("sfres", "naturalness"), ("sfhot", "naturalness"), ("topical_chat", "coherence"))
HPSS_ASPECTS = {
    "sfres": ("naturalness", "informativeness", "overall"),
    "sfhot": ("naturalness", "informativeness", "overall"),
    "topical_chat": ("coherence", "engagingness", "groundedness", "naturalness"),
}
# HPSS starts Topical-Chat at its native 1-3 scale (seed Appendix C and Table 19); SF's native 1-6
# is not in the space, so SFRES/SFHOT start at MT-Bench's 1-5.
NATIVE_SCALE = {"topical_chat": 3, "sfres": 6, "sfhot": 6}
DATASET_NAMES = {"sfres": "SFRES", "sfhot": "SFHOT", "topical_chat": "Topical-Chat"}


# =============================================================================================
# Small helpers (shared with bench_prefix_order)
# =============================================================================================
def benchmarks_dir() -> Path:
    if os.environ.get("JUDGELAB_BENCHMARKS"):
        return Path(os.environ["JUDGELAB_BENCHMARKS"])
    if os.environ.get("JUDGELAB_SHARED"):
        return Path(os.environ["JUDGELAB_SHARED"]) / "benchmarks"
    return ROOT.parent / "shared" / "benchmarks"


def machine() -> str:
    return describe_machine()


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


# =============================================================================================
# Tasks, items and the judged-so-far file
# =============================================================================================
@dataclass
class Task:
    dataset: str
    aspect: str

    @property
    def label(self) -> str:
        return f"{self.dataset}:{self.aspect}"


def parse_tasks(spec: str) -> list[Task]:
    if spec == "primary":
        return [Task(d, a) for d, a in PRIMARY]
    if spec == "hpss":
        primary = [Task(d, a) for d, a in PRIMARY]
        rest = [Task(d, a) for d, aspects in HPSS_ASPECTS.items() for a in aspects if (d, a) not in PRIMARY]
        return primary + rest
    tasks = []
    for part in spec.split(","):
        dataset, _, aspect = part.strip().partition(":")
        if dataset not in HPSS_ASPECTS or aspect not in HPSS_ASPECTS[dataset]:
            raise SystemExit(f"unknown task {part!r}; use dataset:aspect with {HPSS_ASPECTS}")
        tasks.append(Task(dataset, aspect))
    return tasks


def held_in_groups(dataset: str, aspect: str, seed: int, split: str = HELD_IN) -> list[list[Item]]:
    """Held-in items (``split``: another HPSS split) with a human score for ``aspect``, grouped by source,
    groups in a seeded order."""
    items = load_items(benchmarks_dir() / f"{dataset}.jsonl")
    by_group: dict[str, list[Item]] = {}
    for item in items:
        if item.extra.get("hpss_split") == split and item.human_score(aspect) is not None:
            by_group.setdefault(item.group, []).append(item)
    names = sorted(by_group)
    random.Random(seed).shuffle(names)
    return [sorted(by_group[name], key=lambda it: it.id) for name in names]


def make_judge(task: Task, max_tokens: int | None = None) -> PromptedJudge:
    """The MT-Bench start point; ``max_tokens`` None is the judge's own budget (512 with CoT first)."""
    strategy = Strategy.mt_bench(native_scale=NATIVE_SCALE[task.dataset])
    return PromptedJudge(aspect=task.aspect, strategy=strategy, score="logprob", max_tokens=max_tokens)


def record_of(judgment: Judgment, item: Item, elapsed_s: float) -> dict[str, Any]:
    extra = judgment.extra
    parsed = (extra.get("parsed_scores") or [None])[0]
    mass = (extra.get("logprob_mass") or [None])[0]
    usage = judgment.usage
    return {
        "item_id": item.id, "group": item.group, "system": item.system_id,
        "human": item.human_score(judgment.aspect or ""),
        "parsed": parsed, "logprob": judgment.score, "logprob_mass": mass,
        "status": judgment.status, "reason": judgment.reason,
        "cached": usage.calls == 0 and usage.cache_hits > 0, "elapsed_s": round(elapsed_s, 4),
        "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "raw": judgment.raw,
    }


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """What an earlier run judged (errors are retried, so they are left out)."""
    records: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return records
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a kill
            continue
        if record.get("status") != "error":
            records[record["item_id"]] = record
    return records


class Recorder:
    """The ``on_judgment`` callback that appends each judgment's record to a file, with the wall time since the
    previous judgment (or since :meth:`restart`), and keeps the records that are not errors (errors are retried)."""

    def __init__(self, appender: JsonlAppender, by_id: dict[str, Item], records: dict[str, dict[str, Any]]):
        self.appender, self.by_id, self.records = appender, by_id, records
        self.restart()

    def restart(self) -> None:
        self.mark = time.perf_counter()

    def __call__(self, judgment: Judgment) -> None:
        now = time.perf_counter()
        record = record_of(judgment, self.by_id[judgment.item_id], now - self.mark)
        self.mark = now
        self.appender.append(record)
        if record["status"] != "error":
            self.records[record["item_id"]] = record


def task_path(out: Path, model: str, task: Task, max_tokens: int | None) -> Path:
    digest = make_judge(task, max_tokens).digest()
    return out / Path(model).stem / f"{task.dataset}-{task.aspect}-{digest}.jsonl"


# =============================================================================================
# Judging within the budget
# =============================================================================================
@dataclass
class TaskRun:
    task: Task
    path: Path
    groups: list[list[Item]]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def spent_s(self) -> float:
        return sum(r["elapsed_s"] for r in self.records.values())

    @property
    def available(self) -> int:
        return sum(len(g) for g in self.groups)


def judge_task(run: TaskRun, client: Any, budget_s: float, max_groups: int | None, max_tokens: int | None,
               min_groups: int = 0, max_items_per_group: int | None = None) -> None:
    """Judge the next sources in order until ``budget_s`` (counting earlier runs' time) is spent."""
    judge = make_judge(run.task, max_tokens)
    by_id = {item.id: item for group in run.groups for item in group}
    appender = JsonlAppender(run.path)  # drops a line cut short by an earlier kill
    run.records = read_records(run.path)
    on_judgment = Recorder(appender, by_id, run.records)
    started_groups = 0
    try:
        for group in run.groups:
            todo = [item for item in group[:max_items_per_group] if item.id not in run.records]
            if not todo:
                continue
            over = run.spent_s >= budget_s and started_groups >= min_groups
            if over or (max_groups is not None and started_groups >= max_groups):
                break
            started_groups += 1
            on_judgment.restart()
            judge.run(todo, client, on_judgment=on_judgment)
    finally:
        appender.close()


# =============================================================================================
# Figures
# =============================================================================================
@dataclass
class Figures:
    task: Task
    n: int
    n_groups: int
    available: int
    parsed: Any
    logprob: Any
    n_parsed: int
    n_logprob: int
    unparsable_parsed: float
    unparsable_logprob: float
    errors: int
    items_per_min: float | None
    fresh: int
    mean_completion_tokens: float | None
    scale: int


def spearman(records: list[dict[str, Any]], key: str, n_resamples: int):
    from judgelab.metrics import dataset_level

    rows = [r for r in records if r[key] is not None and r["human"] is not None]
    if len(rows) < 2:
        return None, len(rows)
    est = dataset_level([r["human"] for r in rows], [r[key] for r in rows], [r["group"] for r in rows],
                        methods=("spearman",), n_resamples=n_resamples, seed=0)["spearman"]
    return est, len(rows)


def figures(run: TaskRun, n_resamples: int) -> Figures:
    wanted = {item.id for group in run.groups for item in group}
    records = [r for r in run.records.values() if r["item_id"] in wanted]
    n = len(records)
    parsed, n_parsed = spearman(records, "parsed", n_resamples)
    logprob, n_logprob = spearman(records, "logprob", n_resamples)
    fresh = [r for r in records if not r["cached"]]
    fresh_s = sum(r["elapsed_s"] for r in fresh)
    tokens = [r["completion_tokens"] for r in fresh if r["completion_tokens"]]
    return Figures(
        task=run.task, n=n, n_groups=len({r["group"] for r in records}), available=run.available,
        parsed=parsed, logprob=logprob, n_parsed=n_parsed, n_logprob=n_logprob,
        unparsable_parsed=(n - n_parsed) / n if n else float("nan"),
        unparsable_logprob=(n - n_logprob) / n if n else float("nan"),
        errors=sum(r["status"] == "error" for r in records),
        items_per_min=60 * len(fresh) / fresh_s if fresh_s > 0 else None, fresh=len(fresh),
        mean_completion_tokens=sum(tokens) / len(tokens) if tokens else None,
        scale=make_judge(run.task).strategy.scale,
    )


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.1%}"


def _corr(est: Any, n_ok: int) -> str:
    if est is None or math.isnan(est.value):
        return f"n/a (n={n_ok})"
    ci = f" [{fmt(est.ci[0], 2)}, {fmt(est.ci[1], 2)}]" if est.ci else ""
    return f"{fmt(est.value)}{ci}"


def table(rows: Sequence[Figures]) -> str:
    lines = [
        "| Dataset | Aspect | Scale | n (sources) / held-in | Spearman, parsed [95% CI] | unparsable, parsed "
        "| Spearman, logprob-weighted [95% CI] | unparsable, logprob | items/min | generated tokens/item |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for f in rows:
        lines.append(
            f"| {DATASET_NAMES[f.task.dataset]} | {f.task.aspect} | 1-{f.scale} | {f.n} ({f.n_groups}) / {f.available} "
            f"| {_corr(f.parsed, f.n_parsed)} | {pct(f.unparsable_parsed)} | {_corr(f.logprob, f.n_logprob)} "
            f"| {pct(f.unparsable_logprob)} | {fmt(f.items_per_min, 2)} | {fmt(f.mean_completion_tokens, 0)} |"
        )
    return "\n".join(lines)


def read_sessions(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    sessions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            sessions.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return sessions


def _runs_text(meta: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """The judging command(s) with date, machine and load: from the sessions file, else this process."""
    sessions = meta.get("sessions") or []
    if not sessions:
        return [f"- command: `{meta['command']}` (seed {args.seed}); date: {meta['date']}; machine: "
                f"{meta['machine']}; load average (1/5/15 min) before -> after: {meta['load']}"]
    lines = []
    for k, s in enumerate(sessions):
        what = "command" if len(sessions) == 1 else f"session {k + 1} of {len(sessions)}{' (resumed)' if k else ''}"
        lines.append(f"- {what}: `{s['command']}` (budget {s['budget_minutes']:g} min of judging, shared by the "
                     f"tasks); date: {s['date']}; machine: {s['machine']}; load average (1/5/15 min) at the "
                     f"start: {s['load_before']}; model load {s['load_s']} s, not in the budget")
    if args.report_only:
        lines.append(f"- table rebuilt from the judgments on disk by `{meta['command']}` on {meta['date']}")
    else:
        lines.append(f"- load average (1/5/15 min) before -> after this session: {meta['load']}")
    return lines


def section(rows: Sequence[Figures], args: argparse.Namespace, meta: dict[str, Any]) -> str:
    strategies = sorted({make_judge(f.task).strategy.key() for f in rows})
    errors = sum(f.errors for f in rows)
    return "\n".join([
        "## Prompted judge quality: MT-Bench start strategy on the HPSS held-in split (`bench/bench_judge_quality.py`)",
        "",
        *_runs_text(meta, args),
        f"- model: `{args.model}` (embedded, greedy); sources visited in the order of seed {args.seed}"
        + (f"; replies cut at {args.max_tokens} tokens" if args.max_tokens else ""),
        "- judge: `PromptedJudge(aspect=..., strategy=Strategy.mt_bench(native_scale), score=\"logprob\")`, "
        "strategy " + "; ".join(f"`{s}`" for s in strategies) + " (Topical-Chat at its native 1-3 scale, "
        "SFRES/SFHOT at 1-5 since their native 1-6 is not in the space); human-written criteria of the benchmark",
        "- items: the HPSS held-in (validation) rows (`extra.hpss_split == \"valid\"`), sources visited in a seeded "
        "order with all their held-in rows, until each task's share of the budget was spent; n is what fitted",
        "- *parsed*: the rating the judge wrote after its explanation; *logprob-weighted*: the expected rating "
        "under the model's distribution at that rating token (same reply, same run). Unparsable: no rating "
        "found (parsed) or no usable distribution at it (logprob); those items are left out of that Spearman",
        "- Spearman at the dataset level, 95% percentile CI from 1,000 cluster-bootstrap resamples over sources; "
        f"items/min counts judgments not served from the cache{f'; {errors} errors' if errors else ''}",
        "",
        table(rows),
        "",
    ])


# =============================================================================================
# Main
# =============================================================================================
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_judge_quality", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 items of 1 source per task, replies cut at 64 tokens, separate output "
                             "folder, no doc: checks the plumbing, not a figure")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--budget-minutes", type=float, default=None, help="judging time for all tasks (default 60)")
    parser.add_argument("--tasks", default="primary",
                        help="'primary' (SFRES/SFHOT naturalness, Topical-Chat coherence), 'hpss' (every aspect "
                             "HPSS evaluates), or dataset:aspect,...")
    parser.add_argument("--seed", type=int, default=0, help="the order sources are visited in")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cap on each reply (default: the judge's own, 512 with CoT first; 64 with --quick)")
    parser.add_argument("--out", type=Path, default=None,
                        help="judgments folder (default $JUDGELAB_HOME/bench/judge_quality)")
    parser.add_argument("--cache", type=Path, default=None, help="default $JUDGELAB_HOME/bench-cache.sqlite")
    parser.add_argument("--report-only", action="store_true", help="no judging: the table from the files on disk")
    parser.add_argument("--doc", action=argparse.BooleanOptionalAction, default=None,
                        help="write docs/benchmarks.md (default: yes, except with --quick)")
    args = parser.parse_args(argv)
    if args.budget_minutes is None:
        args.budget_minutes = 1.5 if args.quick else 60.0
    write_doc = (not args.quick) if args.doc is None else args.doc
    max_groups = 1 if args.quick else None
    if args.quick and args.max_tokens is None:
        args.max_tokens = 64
    out = args.out or judgelab_home() / "bench" / ("judge_quality-quick" if args.quick else "judge_quality")
    cache = args.cache or judgelab_home() / "bench-cache.sqlite"
    tasks = parse_tasks(args.tasks)
    meta = {"command": command_line("bench.bench_judge_quality", argv),
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(), "load_s": "n/a"}
    sessions_path = out / Path(args.model).stem / "sessions.jsonl"
    load_before = load_avg()

    runs = [TaskRun(t, task_path(out, args.model, t, args.max_tokens), held_in_groups(t.dataset, t.aspect, args.seed))
            for t in tasks]
    budget_s = args.budget_minutes * 60
    if args.report_only:
        for run in runs:
            run.records = read_records(run.path)
    else:
        from judgelab.llm.resolve import make_client

        log(f"loading {args.model}; cache {cache}; judgments under {out / Path(args.model).stem}")
        started = time.perf_counter()
        client = make_client(args.model, cache=cache)
        meta["load_s"] = f"{time.perf_counter() - started:.1f}"
        with JsonlAppender(sessions_path) as sessions:  # what the doc names as the command, even after a kill
            sessions.append({**meta, "load_before": load_before, "budget_minutes": args.budget_minutes})
        try:
            for k, run in enumerate(runs):
                used = sum(r.spent_s for r in runs[:k])
                share = max(0.0, (budget_s - used) / (len(runs) - k))
                log(f"{run.task.label}: {run.available} held-in items in {len(run.groups)} sources; "
                    f"share {share / 60:.1f} min")
                judge_task(run, client, share, max_groups, args.max_tokens, min_groups=1 if args.quick else 0,
                           max_items_per_group=2 if args.quick else None)
                f = figures(run, n_resamples=200)
                log(f"{run.task.label}: n={f.n}, {run.spent_s / 60:.1f} min; Spearman parsed "
                    f"{_corr(f.parsed, f.n_parsed)}, logprob {_corr(f.logprob, f.n_logprob)}; unparsable "
                    f"{f.unparsable_parsed:.0%} / {f.unparsable_logprob:.0%}")
        except KeyboardInterrupt:
            log("interrupted: reporting what was judged (rerun the same command to resume)")
            for run in runs:
                run.records = read_records(run.path)
        finally:
            client.close()
    meta["load"] = f"{load_before} -> {load_avg()}"
    meta["sessions"] = read_sessions(sessions_path)
    rows = [figures(run, n_resamples=1000) for run in runs]
    print(table(rows))
    if write_doc:
        write_doc_section(SECTION, section(rows, args, meta))
        log(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
