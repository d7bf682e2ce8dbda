"""Active-Critic vanilla / coarse / fine on a Topical-Chat (or HANNA) slice: agreement and LLM calls.

    nice -n 10 .venv/bin/python -m bench.bench_critic                          # default model, writes docs
    nice -n 10 .venv/bin/python -m bench.bench_critic --items 24 --model qwen2.5-coder-0.5b --draws 2
    .venv/bin/python -m bench.bench_critic --quick                             # smollm2-135m, prints only

The slice is the first ``--items`` items of whole groups (sources), visited in a seeded order; it is
split by group into 25% tuning and 75% test items (seed 004 Appendix B). Each variant is fitted on
the tuning items only (task inference, criteria, demonstration search with Q = Pearson + Spearman +
Kendall) and then judges the test items. Reported per variant: dataset-level Pearson, Spearman,
Kendall and Q on the test items with an ok judgment, the unparsable share, and the LLM calls
(requests, whether answered by the model or by the cache) for fitting and per test item.

Every call goes through ``<out>/critic-cache.sqlite``: a rerun of the same command resumes where a
killed one stopped (coarse and fine also share their task-inference calls through it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_judge_quality import benchmarks_dir, fmt
from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Dataset, Item, load_items
from judgelab.data.split import split_by_group
from judgelab.judges.critic import ActiveCriticJudge
from judgelab.llm.models import DEFAULT_MODEL, judgelab_home
from judgelab.llm.resolve import make_client
from judgelab.metrics.correlation import METHODS, correlation

SECTION = "bench_critic"
VARIANTS = ("vanilla", "coarse", "fine")
DATASET_NAMES = {"topical_chat": "Topical-Chat", "hanna": "HANNA"}


@dataclass
class Figures:
    variant: str
    n_test: int
    n_ok: int
    correlations: dict[str, float]
    fit_calls: int
    test_calls: int
    fit_minutes: float
    test_minutes: float
    n_criteria: int
    n_demos: int
    best_q_tuning: float | None

    @property
    def q(self) -> float:
        return float(sum(self.correlations.values()))


def slice_items(dataset: str, n_items: int, seed: int) -> Dataset:
    """The first ``n_items`` items of whole groups, groups visited in a seeded order."""
    items = load_items(benchmarks_dir() / f"{dataset}.jsonl")
    groups = items.groups()
    order = sorted(groups)
    np.random.default_rng(seed).shuffle(order)
    chosen: list[Item] = []
    for name in order:
        if len(chosen) >= n_items:
            break
        chosen.extend(groups[name])
    return Dataset(chosen, name=dataset)


def requests_made(client) -> int:
    return client.usage.calls + client.usage.cache_hits


def run_variant(variant: str, tune: Sequence[Item], test: Sequence[Item], client, args, out: Path) -> Figures:
    judge = ActiveCriticJudge(aspect=args.aspect, variant=variant, draws=args.draws, demos=tuple(args.demos),
                              tuning_fraction=1.0, max_text_chars=args.max_text_chars, seed=args.seed,
                              fit_max_tokens=args.fit_max_tokens)
    started, before = time.perf_counter(), requests_made(client)
    fitted = judge.fit(tune, client, out_dir=out / variant)
    fitted.save(out / variant / "fitted.yaml")
    fit_calls, fit_minutes = requests_made(client) - before, (time.perf_counter() - started) / 60
    log(f"{variant}: fitted with {fit_calls} calls in {fit_minutes:.1f} min (best tuning Q "
        f"{fitted.fit_summary.get('best_q')})")
    started, before = time.perf_counter(), requests_made(client)
    judgments = fitted.run(test, client)
    test_calls, test_minutes = requests_made(client) - before, (time.perf_counter() - started) / 60
    with (out / variant / "judgments.jsonl").open("w", encoding="utf-8") as handle:
        for judgment in judgments:
            handle.write(judgment.model_dump_json() + "\n")
    pairs = [(item.human_score(args.aspect), j.score) for item, j in zip(test, judgments, strict=True) if j.ok]
    human, predicted = [p[0] for p in pairs], [p[1] for p in pairs]
    return Figures(variant=variant, n_test=len(test), n_ok=len(pairs),
                   correlations={m: correlation(m, human, predicted) for m in METHODS},
                   fit_calls=fit_calls, test_calls=test_calls, fit_minutes=fit_minutes, test_minutes=test_minutes,
                   n_criteria=len(fitted.criteria), n_demos=len(fitted.demonstrations),
                   best_q_tuning=fitted.fit_summary.get("best_q"))


def table(rows: Sequence[Figures]) -> str:
    lines = ["| variant | test items (ok) | Pearson | Spearman | Kendall | Q | criteria | demos | tuning Q "
             "| LLM calls: fit | LLM calls / test item | minutes fit + test |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c = r.correlations
        lines.append(f"| {r.variant} | {r.n_test} ({r.n_ok}) | {fmt(c['pearson'])} | {fmt(c['spearman'])} | "
                     f"{fmt(c['kendall'])} | {fmt(r.q)} | {r.n_criteria} | {r.n_demos} | {fmt(r.best_q_tuning)} | "
                     f"{r.fit_calls} | {r.test_calls / max(r.n_test, 1):.2f} | {r.fit_minutes:.1f} + {r.test_minutes:.1f} |")
    return "\n".join(lines)


def section(rows: Sequence[Figures], args: argparse.Namespace, meta: dict[str, Any]) -> str:
    name = DATASET_NAMES.get(args.dataset, args.dataset)
    return "\n".join([
        "## Active-Critic variants (bench_critic)", "",
        f"{name} `{args.aspect}`, {meta['n_items']} items from {meta['n_groups']} sources split by source into "
        f"{meta['n_tune']} tuning and {meta['n_test']} test items (seed {args.seed}). Model `{args.model}`; "
        f"demonstration search: {args.draws} draws of {args.demos[0]}-{args.demos[1]} demonstrations scored by "
        f"Q on the tuning items; the test items are never seen while fitting. Correlations are dataset-level "
        f"on the test items with an ok judgment. LLM calls count requests (model or cache); fitting includes "
        f"task inference (coarse, fine) and every search draw.", "",
        table(rows), "",
        f"Command: `{meta['command']}`  ",
        f"Date: {meta['date']}; machine: {meta['machine']}; load average at start / end: "
        f"{meta['load_start']} / {meta['load_end']}; wall time {meta['minutes']:.1f} min.",
        *([f"\n{args.note}"] if args.note else []),
    ])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_critic", description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="topical_chat", choices=sorted(DATASET_NAMES))
    parser.add_argument("--aspect", default="overall")
    parser.add_argument("--items", type=int, default=48, help="Items in the slice (whole sources).")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--draws", type=int, default=4, help="Demonstration draws K per variant.")
    parser.add_argument("--demos", type=int, nargs=2, default=(3, 3), metavar=("MIN", "MAX"))
    parser.add_argument("--max-text-chars", type=int, default=600, help="Clip demonstration texts (chars).")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--fit-max-tokens", type=int, default=256, help="Budget of each task-inference reply.")
    parser.add_argument("--n-threads", type=int, default=None, help="llama.cpp threads (1 on a crowded machine).")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=judgelab_home() / "bench" / "critic")
    parser.add_argument("--quick", action="store_true", help="smollm2-135m, 12 items, 1 draw; prints only.")
    parser.add_argument("--doc", action=argparse.BooleanOptionalAction, default=None,
                        help="Write docs/benchmarks.md (default: unless --quick).")
    parser.add_argument("--note", default="", help="A sentence added under the table (e.g. what did not fit).")
    args = parser.parse_args(argv)
    if args.quick:
        args.model, args.items, args.draws = "smollm2-135m", 12, 1
    started, load_start = time.perf_counter(), load_avg()
    data = slice_items(args.dataset, args.items, args.seed)
    split = split_by_group(data, {"tune": 0.25, "test": 0.75}, seed=args.seed)
    tune, test = list(split["tune"]), list(split["test"])
    out = args.out / args.model / f"{args.dataset}-{args.items}-{args.seed}"
    log(f"{len(data)} items: {len(tune)} tuning, {len(test)} test; model {args.model}; results in {out}")
    backend_options = {"n_ctx": args.n_ctx} | ({"n_threads": args.n_threads} if args.n_threads else {})
    rows: list[Figures] = []
    meta = {"n_items": len(data), "n_groups": len(data.groups()), "n_tune": len(tune), "n_test": len(test),
            "command": command_line("bench.bench_critic", argv), "machine": describe_machine(), "load_start": load_start}
    write_doc = (not args.quick) if args.doc is None else args.doc
    with make_client(args.model, cache=args.out / "critic-cache.sqlite", backend_options=backend_options) as client:
        for variant in args.variants:
            rows.append(run_variant(variant, tune, test, client, args, out))
            log(f"{variant}: Q {fmt(rows[-1].q)} on {rows[-1].n_ok}/{rows[-1].n_test} test items")
            # Written after every variant, so a run stopped for time still leaves what it measured.
            meta |= {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "load_end": load_avg(),
                     "minutes": (time.perf_counter() - started) / 60}
            save_figures(out, rows, meta)
            if write_doc:
                write_doc_section(SECTION, section(rows, args, meta))
    print(table(rows))


def save_figures(out: Path, rows: Sequence[Figures], meta: dict[str, Any]) -> None:
    def finite(value: Any) -> Any:
        return None if isinstance(value, float) and math.isnan(value) else value

    payload = {"meta": meta, "rows": [{k: ({m: finite(x) for m, x in v.items()} if isinstance(v, dict) else finite(v))
                                       for k, v in r.__dict__.items()} for r in rows]}
    (out / "figures.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")

if __name__ == "__main__":
    main()
