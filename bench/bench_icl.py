"""In-context example retrieval (PanguIR 3.3): trained vs semantic vs stratified / random examples.

    nice -n 10 .venv/bin/python -m bench.bench_icl                      # writes docs/benchmarks.md
    nice -n 10 .venv/bin/python -m bench.bench_icl --quick --no-doc     # a few minutes, prints only

SF-RES (``--dataset``), one aspect, split by group (meaning representation) into dev and test.
The retriever is trained on ``--train-items`` dev items with ``--candidates`` dev examples each
(LLM feedback through the judge), then the same judge (MT-Bench strategy, ``cot=none``,
``--examples`` examples, logprob-weighted score) rates the same ``--test-items`` test items with
each example source, examples drawn from the dev split. Reported: dataset-level Spearman with a
95% group-bootstrap CI, the paired difference to the stratified set, items scored, LLM calls
(paid + cache hits, from the benchmark's own cache file in ``--out``: a rerun resumes from it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.bench_judge_quality import benchmarks_dir, machine
from bench.common import command_line, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.data.split import split_by_group
from judgelab.judges.prompted import PromptedJudge
from judgelab.judges.retrieval import EXAMPLE_SOURCES
from judgelab.llm.resolve import make_client
from judgelab.metrics import meta_evaluate
from judgelab.optimize.icl import TrainingOptions, fit_example_retriever
from judgelab.strategy import Strategy

SECTION = "bench_icl"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m", help="judge model string (default smollm2-135m)")
    parser.add_argument("--dataset", default="sfres", help="benchmark file stem (sfres, sfhot, topical_chat, ...)")
    parser.add_argument("--aspect", default="naturalness")
    parser.add_argument("--train-items", type=int, default=None, help="dev items the retriever learns from (24; quick 6)")
    parser.add_argument("--candidates", type=int, default=None, help="candidate examples per training item (6; quick 4)")
    parser.add_argument("--test-items", type=int, default=None, help="test items judged per source (40; quick 12)")
    parser.add_argument("--examples", type=int, default=3, choices=(3, 5, 10), help="in-context examples per prompt")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--sources", default=",".join(EXAMPLE_SOURCES), help="comma-separated example sources")
    parser.add_argument("--score", default="logprob", choices=("logprob", "parsed"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_icl"), help="retriever, cache and judge files")
    parser.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    parser.add_argument("--doc", dest="doc", action="store_true", default=None, help="write docs/benchmarks.md")
    parser.add_argument("--no-doc", dest="doc", action="store_false")
    args = parser.parse_args(argv)
    args.train_items = args.train_items or (6 if args.quick else 24)
    args.candidates = args.candidates or (4 if args.quick else 6)
    args.test_items = args.test_items or (12 if args.quick else 40)
    args.doc = (not args.quick) if args.doc is None else args.doc
    unknown = set(args.sources.split(",")) - set(EXAMPLE_SOURCES)
    if unknown:
        parser.error(f"unknown sources {sorted(unknown)}; choose from {', '.join(EXAMPLE_SOURCES)}")
    return args


def usage_delta(client: Any, before: dict[str, float]) -> dict[str, float]:
    now = client.usage
    return {"calls": now.calls - before["calls"], "cache_hits": now.cache_hits - before["cache_hits"]}


def snapshot(client: Any) -> dict[str, float]:
    return {"calls": client.usage.calls, "cache_hits": client.usage.cache_hits}


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    dataset = load_items(benchmarks_dir() / f"{args.dataset}.jsonl")
    parts = split_by_group(dataset, {"dev": 0.5, "test": 0.5}, seed=args.seed)
    dev, test = list(parts["dev"]), list(parts["test"])[: args.test_items]
    train = dev[: args.train_items]
    judge = PromptedJudge(aspect=args.aspect, strategy=Strategy(cot="none", examples=args.examples),
                          score=args.score, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    cache = args.out / "cache.sqlite"  # its own file: a rerun resumes, and cache hits are reported as such
    rows, training = [], {}
    with make_client(args.model, cache=cache) as client:
        log(f"feedback on {len(train)} items x {args.candidates} candidates, pool {len(dev)} dev items")
        before, clock = snapshot(client), time.monotonic()
        fitted = fit_example_retriever(judge, train, client, args.out, pool=dev, candidates=args.candidates,
                                       options=TrainingOptions(epochs=args.epochs, seed=args.seed),
                                       examples=args.examples, show_progress=True)
        report = fitted.training
        training = {**usage_delta(client, before), "seconds": time.monotonic() - clock,
                    "train_seconds": report.seconds, "queries": report.queries, "pairs": report.pairs,
                    "dropped": sum(f.dropped for f in fitted.feedback),
                    "loss": (report.losses[0], report.losses[-1])}
        log(f"retriever: {training}")
        baseline = None
        for source in args.sources.split(","):
            config = fitted.judge.model_copy(update={"example_source": source})
            before, clock = snapshot(client), time.monotonic()
            judgments = config.run(test, client, examples_pool=dev)
            used = usage_delta(client, before)
            meta = meta_evaluate(test, judgments, aspect=args.aspect, n_resamples=1000, seed=args.seed,
                                 baseline=baseline if source != "stratified" else None).to_dict()
            if source == "stratified":
                baseline = judgments
            rows.append(row(source, meta, used, time.monotonic() - clock))
            log(f"{source}: {rows[-1]}")
    table = render_table(rows)
    print(table)
    print(f"retriever training: {training}")
    if args.doc:
        write_doc_section(SECTION, doc_section(args, argv, started, table, training, len(dev), len(test)))


def row(source: str, meta: dict[str, Any], used: dict[str, float], seconds: float) -> dict[str, Any]:
    spearman = meta["dataset"]["spearman"]
    comparison = (meta.get("comparison") or {}).get("dataset", {}).get("spearman")
    return {"source": source, "spearman": spearman["value"], "ci": spearman.get("ci"),
            "delta": comparison, "n": meta["coverage"]["n_used"], "items": meta["coverage"]["n_items"],
            "calls": used["calls"], "cache_hits": used["cache_hits"], "seconds": seconds}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def render_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| example source | Spearman | 95% CI | vs stratified (paired) | items scored | LLM calls (paid + cached) | wall s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = r["ci"] or [None, None]
        delta = r["delta"]
        if isinstance(delta, dict):
            dci = delta.get("ci") or [None, None]
            delta_text = f"{_fmt(delta.get('difference'))} [{_fmt(dci[0])}, {_fmt(dci[1])}] p={delta.get('p_value', 0):.2f}"
        else:
            delta_text = "—"
        lines.append(f"| {r['source']} | {_fmt(r['spearman'])} | [{_fmt(ci[0])}, {_fmt(ci[1])}] | {delta_text} | "
                     f"{r['n']}/{r['items']} | {r['calls']:.0f} + {r['cache_hits']:.0f} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def doc_section(args: argparse.Namespace, argv: Sequence[str] | None, started: str, table: str,
                training: dict[str, Any], n_dev: int, n_test: int) -> str:
    loss = training["loss"]
    return f"""## In-context example retrieval: trained vs semantic vs stratified / random (`bench/bench_icl.py`)

Command: `nice -n 10 {command_line("bench.bench_icl", argv)}` — {started}, {machine()}, load average at the end
{load_avg()} (the machine was shared with other jobs: wall times are not speed figures).

{args.dataset}, aspect `{args.aspect}`, split by group 50/50 (seed {args.seed}): {n_dev} dev items (the example
pool), the first {n_test} test items judged. Judge: `{args.model}`, MT-Bench strategy with `cot=none`,
{args.examples} in-context examples, `{args.score}` score. Retriever: MiniLM towers fine-tuned {args.epochs}
epoch(s) on {training['queries']} dev items x {args.candidates} candidate examples each
({training['pairs']} ranked pairs, {training['dropped']} unparsable/failed feedback calls dropped; loss
{loss[0]:.3f} -> {loss[1]:.3f}; feedback {training['calls']:.0f} LLM calls + {training['cache_hits']:.0f} cache hits,
{training['train_seconds']:.0f} s of training). `diverse` = the high- and low-band picks of the semantic and
the trained retriever (PanguIR 3.3.3); `stratified` = one fixed set spread over the ratings (HPSS);
`random` = a seeded draw per item.

{table}

Cached calls: prompts already paid for, by an earlier run into the same `--out` or by another example source that picked the same examples.
The CIs are 1000 group-bootstrap resamples; "vs stratified" is the paired bootstrap difference on the
same items. With a small judge (`{args.model}`) and {n_test} items the intervals are wide: read the table as
the pipeline measured end to end at this size, not as evidence for or against the seed's claim.
"""


if __name__ == "__main__":
    main()
