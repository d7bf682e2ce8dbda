"""A relevance judge that runs on a CPU: TREC DL 2019 qrels from local components, beside TREMA's labels.

TREC DL 2019 qrels from local components, next to the TREMA authors' published Llama labels on the
same pairs.

Components, all cross-fitted with one split of the 30 DL 2019 queries into ``--folds`` folds (a
query's pairs are all on one side: nothing is fitted on the query it labels):
(a) the default embedded model (``qwen2.5-coder-1.5b``) grading the four TREMA criteria with
    expected grades from its logprobs (``TremaJudge(mode="four-prompts", grade_score="logprob")``),
    on a slice of ``--pairs`` pairs taken round-robin over the queries (every query covered); the
    naive-Bayes / logistic / ordinal aggregators are fitted on the other folds' grades and human labels;
(b) the trained scorer (``judgelab train``'s MiniLM cross-encoder, RankNet loss within queries) on
    every DL 2019 pair, trained on the other folds' pairs; its score becomes a label through an
    ordinal aggregator fitted on the other folds (cut points);
(c) the query-passage cosine of the similarity scorer's embedder, as one more feature;
and stacks of (a)-(c) by the same aggregators.

Reported per row: Cohen's kappa (4-point and at each cut), ordinal Krippendorff alpha, and the
Kendall tau between the nDCG@10 leaderboards of the 37 runs under human and judge qrels. On the
slice, both qrels hold only the slice's pairs (so every row, the authors' included, is measured on the
same pairs); the cross-encoder alone is also measured on all 5353 pairs.

    .venv/bin/python -m bench.bench_trec_local --pairs 300 --write     # ~45 min of LLM calls, ~30 min training

Every LLM call goes through a completion cache and the cross-encoder's out-of-fold scores are kept
in ~/.cache/judgelab/bench/, so a rerun resumes (``--pairs`` larger: only the new pairs are paid).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_trema import (
    CRITERIA,
    RESULTS_DIR,
    SHARED,
    _label_of,
    agreement_row,
    published,
    slice_items,
    table_a,
)
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
from judgelab.metrics.ir import qrels_from_labels, read_runs

SECTION = "bench_trec_local"
HEADING = "## A relevance judge on a CPU: TREC DL 2019 qrels from local components (`bench/bench_trec_local.py`)"
MODEL = "qwen2.5-coder-1.5b"
SHIPPED = "**similarity judge (fit/judge), logistic (balanced), on all folds' pairs**"
LEARNED = {"naive Bayes": lambda: NaiveBayesAggregator(),
           "logistic (balanced)": lambda: LogisticAggregator(class_weight="balanced"),
           "ordinal (balanced)": lambda: OrdinalAggregator(class_weight="balanced")}


# -- the components -------------------------------------------------------------------------------
def expected_grades(items: list[Item], model: str) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """item id -> the four expected criterion grades (pairs with an unparsable grade are left out)."""
    from judgelab.judges.trema import TremaJudge

    judge = TremaJudge(mode="four-prompts", aggregator={"method": "sum"}, grade_score="logprob")
    judgments, cost = judged_with_cost(judge, items, model, "trema-cache.sqlite", "graded")
    grades = {j.item_id: dict(j.criteria) for j in judgments if j.ok and len(j.criteria or {}) == len(CRITERIA)}
    return grades, {**cost, "failed": len(items) - len(grades)}


def judged_with_cost(judge, items: list[Item], model: str, cache: str, verb: str) -> tuple[list, dict[str, Any]]:
    """``judge`` run over ``items`` through a completion cache in ``RESULTS_DIR`` (a rerun resumes), and
    what the run cost: paid calls, cache hits, wall seconds and the load at the end."""
    from judgelab.llm.resolve import make_client

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    with make_client(model, cache=RESULTS_DIR / cache) as client:
        before, started = client.stats(), time.perf_counter()
        judgments = judge.run(items, client, on_judgment=_progress(len(items), verb))
        after = client.stats()
    return judgments, {"paid_calls": after["calls"] - before["calls"],
                       "cache_hits": after["cache_hits"] - before["cache_hits"],
                       "wall_s": round(time.perf_counter() - started), "load": load_avg()}


def _progress(total: int, verb: str):
    done = [0]

    def on_judgment(_judgment) -> None:
        done[0] += 1
        if done[0] % 25 == 0 or done[0] == total:
            log(f"  {verb} {done[0]}/{total} pairs")
    return on_judgment


def cross_encoder_scores(items: list[Item], folds: int, seed: int, epochs: int, max_length: int) -> np.ndarray:
    """Out-of-fold cross-encoder scores for every pair (kept in a JSON file: a rerun reuses them)."""
    from judgelab.judges.trained import TrainedJudge
    from judgelab.train import cross_validate, human_targets

    spec = TrainedJudge(aspect="relevance", inputs=("source",), epochs=epochs, max_length=max_length,
                        train_layers=2, loss="pairwise", learning_rate=1e-4, seed=seed)
    key = json.dumps({"folds": folds, "seed": seed, "n": len(items),
                      **spec.model_dump(mode="json", include={"epochs", "max_length", "train_layers", "loss",
                                                              "learning_rate", "inputs", "base_model"})},
                     sort_keys=True)
    path = RESULTS_DIR / "trec_local_cross_encoder.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    if key in stored:
        return np.array(stored[key]["scores"], dtype=float)
    targets = human_targets(items, "relevance")
    assert [t.id for t in targets.items] == [i.id for i in items], "every DL 2019 pair has a human label"
    log(f"(b) cross-encoder on {len(items)} pairs, {folds} folds by query")
    point = cross_validate(spec, targets, folds=folds, seed=seed,
                           on_fold=lambda f, n, s: log(f"  fold {f + 1}: trained on {n} pairs in {s:.0f}s"))[0]
    stored[key] = {"scores": point.predictions.tolist(), "train_seconds": point.train_seconds}
    path.write_text(json.dumps(stored))
    return point.predictions


def cosines(items: list[Item]) -> np.ndarray:
    """Cosine between the query's and the passage's embeddings (the similarity scorer's embedder)."""
    from judgelab.embed import make_embedder

    embedder = make_embedder("minilm")
    queries = embedder.encode([item.query or "" for item in items])
    passages = embedder.encode([item.passage or "" for item in items])
    return np.sum(queries * passages, axis=1)  # the embedder returns unit vectors


def similarity_judge_labels(items: list[Item], folds: dict[str, int]) -> dict[str, int | None]:
    """The shipped judge as a user fits it (``judgelab fit`` on a similarity config with
    a logistic label model), cross-fitted by the same query folds: each fold's labels from a judge
    fitted on the other folds' pairs. It should match the "logistic (balanced) on cosine" row."""
    import tempfile

    from judgelab.judges.similarity import SimilarityJudge

    spec = SimilarityJudge(aspect="relevance", embedder="minilm",
                           label_aggregator={"method": "logistic", "class_weight": "balanced"})
    labels: dict[str, int | None] = {}
    with tempfile.TemporaryDirectory() as folder:
        for fold in sorted(set(folds.values())):
            fitted = spec.fit([i for i in items if folds[i.qid] != fold], out_dir=Path(folder))
            labels.update({j.item_id: j.label for j in fitted.run([i for i in items if folds[i.qid] == fold])})
    return labels


# -- cross-fitted labels --------------------------------------------------------------------------
def fold_of_query(items: Sequence[Item], folds: int, seed: int) -> dict[str, int]:
    """The query folds ``cross_validate`` uses (``kfold_by_group``), as query -> fold."""
    from judgelab.data import Dataset, kfold_by_group

    return {item.qid: fold for fold, (_, test) in enumerate(kfold_by_group(Dataset(list(items)), folds, seed=seed))
            for item in test}


def cross_fitted(make, rows: list[dict[str, float]], labels: list[int], folds: list[int]) -> list[int | None]:
    """Each row's label from an aggregator fitted on the rows of the other folds."""
    names = tuple(rows[0])
    out: list[int | None] = [None] * len(rows)
    for fold in sorted(set(folds)):
        train = [i for i, f in enumerate(folds) if f != fold]
        held = [i for i, f in enumerate(folds) if f == fold]
        fitted = fit_aggregator(make(), [rows[i] for i in train], [labels[i] for i in train], names)
        for i, label in zip(held, aggregate_grades(fitted, [rows[i] for i in held]), strict=True):
            out[i] = label
    return out


def candidate_labels(items: list[Item], features: dict[str, dict[str, dict[str, float]]],
                     folds: dict[str, int]) -> dict[str, dict[str, int | None]]:
    """name -> item id -> label, for every (feature set, aggregator) pair that is defined on ``items``."""
    labels = [int(item.label) for item in items]
    fold_list = [folds[item.qid] for item in items]
    ids = [item.id for item in items]
    out: dict[str, dict[str, int | None]] = {}
    for feature_set, by_id in features.items():
        if not all(i in by_id for i in ids):
            continue
        rows = [by_id[i] for i in ids]
        if feature_set == "1.5B expected grades":
            out[f"sum 5/7/10 over {feature_set}"] = dict(zip(ids, aggregate_grades(SumAggregator(), rows, CRITERIA),
                                                           strict=True))
        for name, make in LEARNED.items():
            if name == "naive Bayes" and len(rows[0]) == 1:
                continue  # one feature: the ordinal cut points are the model; NB adds nothing
            out[f"{name} on {feature_set}"] = dict(zip(ids, cross_fitted(make, rows, labels, fold_list), strict=True))
    return out


# -- the benchmark --------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    every = list(load_items(SHARED / "trec_dl2019.jsonl"))
    runs = read_runs(SHARED / "trec_dl2019_runs")
    folds = fold_of_query(every, args.folds, args.seed)
    pairs = slice_items(args.pairs, seed=args.seed) if args.pairs else []
    grades, cost = expected_grades(pairs, args.model) if pairs else ({}, {})
    ce = cross_encoder_scores(every, args.folds, args.seed, args.epochs, args.max_length) if args.epochs else None
    cos = cosines(every)
    by_id = {item.id: i for i, item in enumerate(every)}
    single: dict[str, dict[str, dict[str, float]]] = {"cosine": {i.id: {"cosine": float(cos[by_id[i.id]])} for i in every}}
    if ce is not None:
        single["cross-encoder"] = {i.id: {"ce": float(ce[by_id[i.id]])} for i in every}
    features = dict(single)
    if grades:
        features["1.5B expected grades"] = grades
        for others in (["cosine"], [name for name in ("cross-encoder", "cosine") if name in single]):
            features["1.5B grades + " + " + ".join(others)] = {
                i: {**g, **{k: v for name in others for k, v in single[name][i].items()}} for i, g in grades.items()}
    if ce is not None:
        features["cross-encoder + cosine"] = {i.id: {**single["cross-encoder"][i.id], **single["cosine"][i.id]}
                                              for i in every}
    shipped = similarity_judge_labels(every, folds)
    authors = published()
    result: dict[str, Any] = {"cost": cost, "folds": args.folds}
    for scope, items in (("slice", [p for p in pairs if p.id in grades]), ("all", every)):
        if not items:
            continue
        human_qrels = qrels_from_labels([i.qid for i in items], [i.docid for i in items], [int(i.label) for i in items])
        candidates: dict[str, dict[str, int | None]] = {}
        for judge in ("TREMA-4prompts/llama3-8b", "TREMA-sumdecompose/llama3-8b", "TREMA-4prompts/llama3.3-70b"):
            theirs = authors.get(("trec_dl2019", judge), {})
            candidates[f"authors' {judge}"] = {i.id: _label_of(theirs[i.id]) for i in items if i.id in theirs}
        candidates.update(candidate_labels(items, features, folds))
        candidates[SHIPPED] = shipped
        rows = []
        for name, labels in candidates.items():
            log(f"{scope}: {name}")
            rows.append(agreement_row(name, items, labels, runs, human_qrels))
        result[scope] = {"n": len(items), "queries": len({i.qid for i in items}),
                         "labels": {str(k): sum(int(i.label) == k for i in items) for k in range(4)}, "rows": rows}
    return result


def section(result: dict[str, Any], args: argparse.Namespace, command: str) -> str:
    parts = [HEADING, "",
             f"- command: `{command}`; date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; machine: "
             f"{describe_machine()}; load at the end: {load_avg()}",
             f"- folds: the 30 queries in {args.folds} folds (seed {args.seed}); every learned row is cross-fitted "
             "(fitted on the other folds' pairs, applied to this fold's); tau = Kendall tau-b between the nDCG@10 "
             "leaderboards of the 37 runs under human and judge qrels (query bootstrap, 200 resamples)"]
    cost = result.get("cost") or {}
    if "slice" in result:
        s = result["slice"]
        parts.append(f"- slice: {s['n']} pairs over {s['queries']} queries (round-robin, seeded; human labels "
                     f"{s['labels']}); {args.model} grading calls: {cost.get('paid_calls')} paid + "
                     f"{cost.get('cache_hits')} cached in {cost.get('wall_s')} s (load {cost.get('load')}); "
                     f"pairs with an unparsable grade: {cost.get('failed')}. Both qrels hold only the slice's pairs.")
    if args.epochs:
        parts.append(f"- cross-encoder: all-MiniLM-L6-v2 fine-tuned ({args.epochs} epochs, max length {args.max_length}, "
                     "top 2 layers, RankNet loss within queries, learning rate 1e-4) on the other folds' pairs")
    for scope, title in (("slice", "On the slice (every row on the same pairs)"), ("all", "On all DL 2019 pairs")):
        if scope in result:
            parts += ["", f"**{title}**", "", table_a(result[scope]["rows"])]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_trec_local", description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=300, help="slice graded by the LLM (0: no LLM rows)")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--epochs", type=int, default=2, help="cross-encoder epochs (0: no cross-encoder)")
    parser.add_argument("--max-length", type=int, default=128)
    return publish(run, section, SECTION, add_split_options(parser).parse_args(argv), argv)


def add_split_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The query folds and the docs switch that the DL 2019 benchmarks share."""
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="write the section of docs/benchmarks.md")
    return parser


def publish(run_fn, section_fn, name: str, args: argparse.Namespace, argv: list[str] | None) -> int:
    """Run, keep the result in ``RESULTS_DIR/<name>.json``, print the section, and write it with --write."""
    result = run_fn(args)
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(result, default=str))
    rendered = section_fn(result, args, command_line(f"bench.{name}", argv).strip())
    print(rendered)
    if args.write:
        write_doc_section(name, rendered)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
