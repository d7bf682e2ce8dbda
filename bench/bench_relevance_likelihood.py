"""Query likelihood (UPR) as a relevance judge on a CPU, on TREC DL 2019, beside the cosine.

The embedded model's
log-probability of the query given the passage (``LikelihoodJudge(likelihood_of="input")``, UPR,
Sachan et al. 2022), on TREC DL 2019, next to the query-passage cosine and the TREMA authors'
published labels on the same pairs.

The pairs are ``bench_trec_local``'s slice (round-robin over the 30 queries, seeded), so its 1.5B
criterion-grade rows are on the same pairs. Reported:
- how the raw scores rank the pairs against the human grades: Spearman over all pairs and within
  each query (averaged), with query-bootstrap intervals, and the paired difference to the cosine
  (``judgelab meta --baseline``'s comparison);
- labels from the class-balanced logistic / ordinal label models (and naive Bayes for two
  features), cross-fitted over the same query folds as ``bench_trec_local`` (nothing is fitted on
  the query it labels): Cohen's kappa, ordinal Krippendorff alpha and the Kendall tau between the
  nDCG@10 leaderboards of the 37 runs under human and judge qrels (both qrels hold only the
  slice's pairs).

"centred per query": the score minus the mean score of the query's judged pairs. The query is the
reply in every pair of a query, so its prior probability is a per-query offset that says nothing of
the passage; removing it needs no label, only the other judged pairs of the query.

    .venv/bin/python -m bench.bench_relevance_likelihood --pairs 900 --write   # ~25 min of 1.5B calls (per direction)

Every call goes through a completion cache in ~/.cache/judgelab/bench/, so a rerun resumes.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from datetime import datetime, timezone
from typing import Any

import numpy as np

from bench.bench_trec_local import (
    add_split_options,
    candidate_labels,
    cosines,
    fold_of_query,
    judged_with_cost,
    publish,
)
from bench.bench_trema import SHARED, _label_of, agreement_row, published, slice_items, table_a
from bench.common import describe_machine, log
from judgelab.data import load_items
from judgelab.data.item import Item
from judgelab.metrics.ir import qrels_from_labels, read_runs

SECTION = "bench_relevance_likelihood"
HEADING = "## Query likelihood as a relevance judge: TREC DL 2019 (`bench/bench_relevance_likelihood.py`)"
MODEL = "qwen2.5-coder-1.5b"
DIRECTIONS = {"input": "query likelihood", "output": "passage likelihood"}
AUTHORS = ("TREMA-4prompts/llama3-8b", "TREMA-sumdecompose/llama3-8b", "TREMA-4prompts/llama3.3-70b")


def likelihoods(items: list[Item], model: str, direction: str) -> tuple[dict[str, float], dict[str, Any]]:
    """item id -> mean token logprob of the query (``input``) or passage (``output``), and the cost."""
    from judgelab.judges.likelihood import LikelihoodJudge

    judge = LikelihoodJudge(aspect="relevance", likelihood_of=direction)
    judgments, cost = judged_with_cost(judge, items, model, "likelihood-cache.sqlite", f"{DIRECTIONS[direction]}:")
    scores = {j.item_id: float(j.score) for j in judgments if j.ok}
    return scores, {**cost, "failed": len(items) - len(scores)}


def centred_per_query(scores: dict[str, float], items: list[Item]) -> dict[str, float]:
    by_query: dict[str, list[float]] = defaultdict(list)
    for item in items:
        by_query[item.qid].append(scores[item.id])
    means = {qid: float(np.mean(values)) for qid, values in by_query.items()}
    return {item.id: scores[item.id] - means[item.qid] for item in items}


def ranking_rows(items: list[Item], raw: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Spearman of each raw score with the human grades (all pairs; within queries), and its paired
    difference to the cosine over the same query resamples."""
    from judgelab.metrics.compare import compare_scores
    from judgelab.metrics.correlation import correlations

    human = np.array([float(item.label) for item in items])
    queries = [item.qid for item in items]
    column = {name: np.array([by_id[item.id] for item in items]) for name, by_id in raw.items()}
    rows = []
    for name, values in column.items():
        found = correlations(human, values, queries, levels=("dataset", "group"), methods=("spearman",))
        row = {"score": name, **{level: _estimate(found[level]["spearman"]) for level in ("dataset", "group")}}
        if name != "cosine":
            compared = compare_scores(human, values, column["cosine"], queries, levels=("dataset", "group"),
                                      methods=("spearman",))
            row["minus_cosine"] = {level: _comparison(compared[level]["spearman"]) for level in ("dataset", "group")}
        rows.append(row)
    return rows


def _estimate(estimate: Any) -> dict[str, Any]:
    return {"value": estimate.value, "ci": list(estimate.ci) if estimate.ci else None}


def _comparison(comparison: Any) -> dict[str, Any]:
    return {"difference": comparison.difference, "ci": list(comparison.ci) if comparison.ci else None,
            "p": comparison.p_value}


def run(args: argparse.Namespace) -> dict[str, Any]:
    every = list(load_items(SHARED / "trec_dl2019.jsonl"))
    runs = read_runs(SHARED / "trec_dl2019_runs")
    folds = fold_of_query(every, args.folds, args.seed)
    pairs = slice_items(args.pairs, seed=args.seed)
    cos = cosines(pairs)
    raw: dict[str, dict[str, float]] = {"cosine": {item.id: float(c) for item, c in zip(pairs, cos, strict=True)}}
    cost: dict[str, Any] = {}
    for direction in args.directions:
        name = DIRECTIONS[direction]
        raw[name], cost[name] = likelihoods(pairs, args.model, direction)
    items = [item for item in pairs if all(item.id in by_id for by_id in raw.values())]
    for direction in args.directions:
        name = DIRECTIONS[direction]
        raw[f"{name}, centred per query"] = centred_per_query(raw[name], items)
    features = {name: {i: {name: v} for i, v in by_id.items()} for name, by_id in raw.items()}
    for name in [n for n in raw if n != "cosine"]:
        features[f"{name} + cosine"] = {item.id: {name: raw[name][item.id], "cosine": raw["cosine"][item.id]}
                                        for item in items}
    human_qrels = qrels_from_labels([i.qid for i in items], [i.docid for i in items], [int(i.label) for i in items])
    authors = published()
    candidates = {f"authors' {judge}": {i.id: _label_of(authors[("trec_dl2019", judge)][i.id]) for i in items
                                        if i.id in authors.get(("trec_dl2019", judge), {})} for judge in AUTHORS}
    candidates.update(candidate_labels(items, features, folds))
    rows = []
    for name, labels in candidates.items():
        log(f"labels: {name}")
        rows.append(agreement_row(name, items, labels, runs, human_qrels))
    return {"n": len(items), "queries": len({i.qid for i in items}), "cost": cost, "folds": args.folds,
            "labels": {str(k): sum(int(i.label) == k for i in items) for k in range(4)},
            "ranking": ranking_rows(items, raw), "rows": rows}


def _ci(block: dict[str, Any], key: str = "value") -> str:
    ci = block.get("ci")
    value = block[key]
    return "n/a" if value is None else f"{value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def ranking_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| score | Spearman, all pairs [95% CI] | Spearman within queries [95% CI] | minus cosine, all pairs (p) "
             "| minus cosine, within queries (p) |", "|---|---|---|---|---|"]
    for r in rows:
        diff = r.get("minus_cosine")
        cells = [f"{_ci(diff[level], 'difference')} ({diff[level]['p']:.2f})" for level in ("dataset", "group")] \
            if diff else ["", ""]
        lines.append(f"| {r['score']} | {_ci(r['dataset'])} | {_ci(r['group'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section(result: dict[str, Any], args: argparse.Namespace, command: str) -> str:
    costs = "; ".join(f"{name}: {c['paid_calls']} paid + {c['cache_hits']} cached calls in {c['wall_s']} s "
                      f"(load {c['load']}), {c['failed']} failed" for name, c in result["cost"].items())
    return "\n".join([
        HEADING, "",
        f"- command: `{command}`; date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine: {describe_machine()}",
        f"- pairs: {result['n']} over {result['queries']} queries (`bench_trec_local`'s slice, seed {args.seed}; human "
        f"labels {result['labels']}); model `{args.model}` (embedded, one forward pass per pair, nothing generated): "
        f"{costs}",
        f"- learned rows cross-fitted over the queries in {args.folds} folds (seed {args.seed}); tau = Kendall tau-b "
        "between the nDCG@10 leaderboards of the 37 runs under human and judge qrels (query bootstrap, 200 "
        "resamples); both qrels hold only these pairs",
        "", "**Raw scores against the human grades** (query-bootstrap intervals, 1,000 resamples; differences paired "
        "on the same resamples)", "", ranking_table(result["ranking"]),
        "", "**Labels** (cross-fitted label models on the scores)", "", table_a(result["rows"]), ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_relevance_likelihood",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=900, help="pairs of bench_trec_local's slice")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--directions", nargs="+", choices=tuple(DIRECTIONS), default=["input"],
                        help="input: the query given the passage (UPR); output: the passage given the query")
    return publish(run, section, SECTION, add_split_options(parser).parse_args(argv), argv)

if __name__ == "__main__":
    raise SystemExit(main())
