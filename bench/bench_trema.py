"""TREMA on TREC DL 2019: aggregators over the published criterion grades, and the TREMA modes run here.

(a) No LLM call: the TREMA authors' published per-criterion grades (reference/trema_outputs.jsonl)
    aggregated by judgelab's aggregators (sum with thresholds; naive Bayes, logistic regression and
    ordinal trained on the authors' LLMJudge-dev Llama-3-8B grades with the LLMJudge human labels),
    against the authors' own labels (TREMA-4prompts = prompt aggregation, TREMA-sumdecompose,
    TREMA-CoT). Statistics versus the DL 2019 human labels: Cohen's kappa (4-point and at each
    binary cut), ordinal Krippendorff alpha, and the Kendall tau between the nDCG@10 leaderboards
    of the 37 DL 2019 runs under human and judge qrels.
(b) TremaJudge's modes with an embedded model on a DL 2019 slice (round-robin over the queries,
    so every query is represented), through the completion cache (a rerun resumes): the same
    agreement statistics on the slice and the LLM calls per pair.

    .venv/bin/python -m bench.bench_trema --pairs 43 --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.data.item import Item
from judgelab.judges.aggregate import (
    LogisticAggregator,
    NaiveBayesAggregator,
    OrdinalAggregator,
    SumAggregator,
    aggregate_grades,
    fit_aggregator,
)
from judgelab.metrics.agreement import label_agreement
from judgelab.metrics.ir import leaderboard, qrels_from_labels, read_runs

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "benchmarks"
HEADING = "## TREMA: criterion aggregators and modes (TREC DL 2019)"
CRITERIA = ("exactness", "coverage", "topicality", "contextual_fit")
MODELS = ("llama3-8b", "llama3.3-70b", "flan-t5-large")
STATS = ("kappa", "kappa_cut_1", "kappa_cut_2", "kappa_cut_3", "alpha")
RESULTS_DIR = Path.home() / ".cache" / "judgelab" / "bench"


# -- (a) aggregators over published grades ------------------------------------------------------
def published() -> dict[tuple[str, str], dict[str, Any]]:
    """(dataset, judge) -> {item_id: prediction} from the TREMA authors' published outputs."""
    table: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    with open(SHARED / "reference" / "trema_outputs.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            table[(row["dataset"], row["judge"])][row["item_id"]] = row["prediction"]
    return table


def trained_aggregators(outputs: dict) -> dict[str, Any]:
    """Learned aggregators fitted on the LLMJudge-dev Llama-3-8B four-prompt grades and human labels."""
    human = {item.id: item.label for item in load_items(SHARED / "llmjudge_dev.jsonl")}
    grades = outputs[("llmjudge", "TREMA-4prompts/llama3-8b")]
    ids = sorted(grades)
    rows, labels = [grades[i] for i in ids], [human[i] for i in ids]
    untrained = {"naive Bayes": NaiveBayesAggregator(), "logistic": LogisticAggregator(),
                 "logistic (balanced)": LogisticAggregator(class_weight="balanced"),
                 "ordinal (balanced)": OrdinalAggregator(class_weight="balanced")}
    return {name: fit_aggregator(agg, rows, labels, CRITERIA) for name, agg in untrained.items()}


def agreement_row(name: str, items: Sequence[Item], labels: dict[str, int | None], runs: dict,
                  human_qrels: list, with_tau: bool = True) -> dict[str, Any]:
    judged = [item for item in items if labels.get(item.id) is not None]
    human = [item.label for item in judged]
    judge = [labels[item.id] for item in judged]
    row: dict[str, Any] = {"judge": name, "n": len(judged), "missing": len(items) - len(judged)}
    stats = label_agreement(human, judge, [item.qid for item in judged], n_resamples=200) if judged else None
    for stat in STATS:
        row[stat] = stats[stat].value if stats and stat in stats.estimates else float("nan")
    if with_tau:
        judge_qrels = qrels_from_labels([i.qid for i in judged], [i.docid for i in judged], judge)
        board = leaderboard(runs, human_qrels, judge_qrels, n_resamples=200)
        row["tau"], row["tau_ci"] = board.tau.value, board.tau.ci
    return row


def part_a() -> list[dict[str, Any]]:
    items = list(load_items(SHARED / "trec_dl2019.jsonl"))
    runs = read_runs(SHARED / "trec_dl2019_runs")
    human_qrels = qrels_from_labels([i.qid for i in items], [i.docid for i in items], [i.label for i in items])
    outputs = published()
    learned = trained_aggregators(outputs)
    rows = []
    for model in MODELS:
        grades = outputs.get(("trec_dl2019", f"TREMA-4prompts/{model}"))
        if not grades:
            continue
        ids = [item.id for item in items]
        graded = [grades.get(i, {}) for i in ids]
        candidates: dict[str, dict[str, int | None]] = {
            f"authors' prompt aggregation (TREMA-4prompts/{model})": {i: grades[i]["label"] for i in ids if i in grades}}
        for method in ("TREMA-sumdecompose", "TREMA-CoT"):
            theirs = outputs.get(("trec_dl2019", f"{method}/{model}"))
            if theirs:
                candidates[f"authors' {method}/{model}"] = {i: _label_of(theirs[i]) for i in ids if i in theirs}
        ours = {"sum, Table 4 (5/7/10)": aggregate_grades(SumAggregator(), graded, CRITERIA),
                "sum, authors' code (6/7/10, missing = 0)": aggregate_grades(
                    SumAggregator(thresholds=(6, 7, 10)), graded, CRITERIA, missing="zero")}
        ours.update({name: aggregate_grades(agg, graded) for name, agg in learned.items()})
        candidates.update({f"{name} on {model} grades": dict(zip(ids, labels, strict=True))
                           for name, labels in ours.items()})
        for name, labels in candidates.items():
            log(f"(a) {name}")
            rows.append(agreement_row(name, items, labels, runs, human_qrels))
    return rows


def _label_of(prediction: Any) -> int | None:
    return prediction["label"] if isinstance(prediction, dict) else prediction


# -- (b) TREMA modes with an embedded model -------------------------------------------------------
def slice_items(pairs: int, seed: int = 0) -> list[Item]:
    """``pairs`` DL 2019 pairs, taken round-robin over the queries (each query's pairs shuffled)."""
    by_query: dict[str, list[Item]] = defaultdict(list)
    for item in load_items(SHARED / "trec_dl2019.jsonl"):
        by_query[item.qid].append(item)
    rng = random.Random(seed)
    for pool in by_query.values():
        rng.shuffle(pool)
    chosen: list[Item] = []
    depth = 0
    while len(chosen) < pairs and any(depth < len(pool) for pool in by_query.values()):
        chosen += [pool[depth] for _, pool in sorted(by_query.items()) if depth < len(pool)][: pairs - len(chosen)]
        depth += 1
    return chosen


MODES = {
    "four-prompts + prompt (TREMA-4prompts)": {"mode": "four-prompts"},
    "four-prompts + sum (TREMA-sumdecompose)": {"mode": "four-prompts", "aggregator": {"method": "sum"}},
    "cot (TREMA-CoT)": {"mode": "cot"},
    "query-generation (TREMA-other)": {"mode": "query-generation"},
    # Expected grades from the logprobs at each grade token (grade_score: logprob); the label
    # prompts stay greedy. Their grading calls ask for logprobs, so they are new cache entries,
    # shared by the three rows (same prompts): 4 new grading calls per pair, +1 per pair for
    # the prompt row, +1 (the label; the check is cached) for the cot row.
    "four-prompts + sum, expected grades (logprob)": {"mode": "four-prompts", "aggregator": {"method": "sum"},
                                                      "grade_score": "logprob"},
    "four-prompts + prompt, expected grades (logprob)": {"mode": "four-prompts", "grade_score": "logprob"},
    "cot, expected grades (logprob)": {"mode": "cot", "grade_score": "logprob"},
}


def part_b(pairs: int, model: str) -> dict[str, Any]:
    from judgelab.judges.trema import TremaJudge
    from judgelab.llm.resolve import make_client

    items = slice_items(pairs)
    results_path = RESULTS_DIR / f"trema_modes_{model}_{pairs}.json"
    earlier = json.loads(results_path.read_text()) if results_path.exists() else {}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    rows = []
    with make_client(model, cache=RESULTS_DIR / "trema-cache.sqlite") as client:
        for name, options in MODES.items():
            log(f"(b) {name} on {len(items)} pairs with {model}")
            before = client.stats()
            started = time.perf_counter()
            judgments = TremaJudge(**options).run(items, client)
            wall = time.perf_counter() - started
            after = client.stats()
            calls = after["calls"] - before["calls"]
            hits = after["cache_hits"] - before["cache_hits"]
            labels = {j.item_id: j.label for j in judgments if j.ok}
            row = agreement_row(name, items, labels, {}, [], with_tau=False)
            row.update(requests_per_pair=(calls + hits) / len(items), paid_calls=calls, cache_hits=hits,
                       unparsable=sum(j.status == "unparsable" for j in judgments),
                       errors=sum(j.status == "error" for j in judgments))
            first = earlier.get(name, {})
            # a rerun served from the cache keeps the wall time of the run that paid for the calls
            row["wall_s"] = wall if calls or not first else first.get("wall_s", wall)
            row["load"] = load_avg() if calls or not first else first.get("load", load_avg())
            rows.append(row)
            earlier[name] = {"wall_s": row["wall_s"], "load": row["load"]}
            results_path.write_text(json.dumps(earlier))
    return {"model": model, "pairs": len(items), "queries": len({i.qid for i in items}),
            "labels": dict(sorted(_count(i.label for i in items).items())), "rows": rows}


def _count(values) -> dict[Any, int]:
    counts: dict[Any, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return counts


# -- output ---------------------------------------------------------------------------------------
def _f(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.3f}"


def table_a(rows: list[dict[str, Any]]) -> str:
    lines = ["| labels from | n | missing | kappa 4-pt | 0 vs 123 | 01 vs 23 | 012 vs 3 | alpha (ord.) | tau nDCG@10 [95% CI] |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = r.get("tau_ci") or [None, None]
        tau = f"{_f(r['tau'])} [{_f(ci[0])}, {_f(ci[1])}]"
        lines.append(f"| {r['judge']} | {r['n']} | {r['missing']} | " + " | ".join(_f(r[s]) for s in STATS) + f" | {tau} |")
    return "\n".join(lines)


def table_b(result: dict[str, Any]) -> str:
    lines = ["| mode | n labelled | unparsable | errors | kappa 4-pt | 0 vs 123 | 01 vs 23 | 012 vs 3 | alpha (ord.) "
             "| LLM calls per pair | wall (s) | load |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['judge']} | {r['n']} | {r['unparsable']} | {r['errors']} | "
                     + " | ".join(_f(r[s]) for s in STATS)
                     + f" | {r['requests_per_pair']:.2f} | {r['wall_s']:.0f} | {r['load']} |")
    return "\n".join(lines)


def section(rows_a: list[dict[str, Any]], result_b: dict[str, Any] | None, command: str) -> str:
    parts = [
        HEADING, "",
        f"Command: `{command}`. Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {describe_machine()}. "
        f"Load average at the end: {load_avg()}.", "",
        "**(a) Aggregators over the TREMA authors' published criterion grades** (no LLM call; all 5353 DL 2019 pairs, "
        "37 runs). Learned aggregators are trained on the authors' LLMJudge-dev Llama-3-8B four-prompt grades with "
        "the LLMJudge human labels (7263 pairs, 43 with a missing grade left out) and applied to each model's DL 2019 "
        "grades; `missing` = pairs with a missing grade, which get no label (left out of kappa/alpha and of the judge "
        "qrels), except for the authors' own rows and the `missing = 0` sum. Kappa/alpha versus the DL 2019 human "
        "labels; tau = Kendall tau-b between the nDCG@10 leaderboards under human and judge qrels (query bootstrap, "
        "200 resamples). The `sum, authors' code` rows reproduce the authors' TREMA-sumdecompose labels exactly "
        "(tested in tests/unit/test_trema_published.py).", "",
        table_a(rows_a), "",
    ]
    if result_b:
        parts += [
            f"**(b) TremaJudge modes with `{result_b['model']}`** (embedded, greedy) on a DL 2019 slice of "
            f"{result_b['pairs']} pairs covering {result_b['queries']} of the 30 queries (round-robin over queries, "
            f"seeded; human labels {result_b['labels']}). Kappa/alpha over the pairs the judge labelled (unparsable "
            "replies get no label). A leaderboard tau is not given: a slice this small leaves most run documents "
            "unjudged, so the tau would measure the slice, not the judge. Wall time is the run that paid for the "
            "calls (a rerun is served from the cache).", "",
            table_b(result_b), "",
        ]
    else:
        parts += ["**(b) TremaJudge modes with an embedded model**: not in this run (`--pairs 0`).", ""]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_trema", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=43, help="DL 2019 pairs for part (b) (0: skip it)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="embedded model for part (b)")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--modes-only", action="store_true", help="run part (b) only (fills the cache), print only")
    parser.add_argument("--reuse-aggregators", action="store_true",
                        help="take part (a) from the last run's saved rows instead of recomputing it")
    args = parser.parse_args(argv)
    command = command_line("bench.bench_trema", argv)
    saved_a = RESULTS_DIR / "trema_aggregators.json"
    if args.modes_only:
        rows_a = []
    elif args.reuse_aggregators and saved_a.exists():
        rows_a = json.loads(saved_a.read_text())
    else:
        rows_a = part_a()
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        saved_a.write_text(json.dumps(rows_a, default=float))
    print(table_a(rows_a))
    result_b = part_b(args.pairs, args.model) if args.pairs else None
    if result_b:
        print(table_b(result_b))
    if not (args.no_doc or args.modes_only):
        heading, body = section(rows_a, result_b, command.strip()).split("\n", 1)
        write_doc_section("trema", body.strip(), heading=heading)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
