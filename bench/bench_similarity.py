"""The UCLWI similarity scorer (no LLM) on Topical-Chat, HANNA, SF Hotel and SF Restaurant.

Group-wise k-fold cross-validation (every output of a source in the same fold): fit on k-1 folds,
predict the held-out fold, then correlate all out-of-fold predictions with the human scores,
at dataset level (one Spearman over all items) and group level (Spearman within each source,
averaged). UniEval's published predictions on the same items stand beside them. Both embedding
models; items/s counts embedding from a cold cache plus every fold's fit and predict.

    nice -n 10 .venv/bin/python -m bench.bench_similarity            # everything, writes docs/benchmarks.md
    nice -n 10 .venv/bin/python -m bench.bench_similarity --quick    # static model, 2 datasets, 3 folds
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.data.split import kfold_by_group
from judgelab.metrics.correlation import dataset_level, group_level

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("JUDGELAB_SHARED", ROOT.parent / "shared"))
DATASETS = {
    "topical_chat": ["coherence", "engagingness", "groundedness", "naturalness", "understandability", "overall"],
    "hanna": ["relevance", "coherence", "empathy", "surprise", "engagement", "complexity"],
    "sfhot": ["informativeness", "naturalness", "overall"],
    "sfres": ["informativeness", "naturalness", "overall"],
}


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def correlations(human: np.ndarray, judge: np.ndarray, groups: list[str]) -> tuple[float, float]:
    d, g, _ = correlations_and_groups(human, judge, groups)
    return d, g


def correlations_and_groups(human: np.ndarray, judge: np.ndarray, groups: list[str]) -> tuple[float, float, str]:
    """Dataset- and group-level Spearman, and "used/all" groups of the group level (a group whose
    judge scores are all equal has no correlation and is left out)."""
    keep = ~np.isnan(judge) & ~np.isnan(human)
    g = [grp for grp, k in zip(groups, keep, strict=True) if k]
    d = dataset_level(human[keep], judge[keep], methods=("spearman",), n_resamples=0)["spearman"].value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimate = group_level(human[keep], judge[keep], g, methods=("spearman",), n_resamples=0)["spearman"]
    return d, estimate.value, f"{estimate.n_groups}/{estimate.n_groups + len(estimate.skipped)}"


def unieval_predictions() -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    with open(SHARED / "benchmarks" / "reference" / "unieval_predictions.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            found[row["item_id"]] = row["prediction"]
    return found


def cross_validate(items, aspects: list[str], embedder: str, folds: int, predict: str) -> tuple[dict, float]:
    """Out-of-fold predictions per aspect, and the seconds spent fitting and predicting."""
    from judgelab.judges.similarity import SimilarityJudge

    predictions = {a: np.full(len(items), np.nan) for a in aspects}
    index = {item.id: k for k, item in enumerate(items)}
    spent = 0.0
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one-output groups are skipped by design and counted elsewhere
        for train, test in kfold_by_group(items, folds, seed=0):
            for aspect in aspects:
                started = time.perf_counter()
                judge = SimilarityJudge(aspect=aspect, embedder=embedder, predict=predict).fit(list(train), out_dir=Path(out))
                for judgment in judge.run(list(test)):
                    if judgment.ok:
                        predictions[aspect][index[judgment.item_id]] = judgment.score
                spent += time.perf_counter() - started
    return predictions, spent


def cold_embedding_seconds(items, embedder: str) -> float:
    """Every output and source embedded once from an empty cache (what a first run pays)."""
    from judgelab.embed import make_embedder

    texts = sorted({i.output for i in items} | {i.source for i in items if i.source})
    started = time.perf_counter()
    make_embedder(embedder, cache=False).encode(texts)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="static model, topical_chat + sfhot, 3 folds")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--embedders", default="static,minilm")
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args(argv)
    datasets = ["topical_chat", "sfhot"] if args.quick else list(DATASETS)
    embedders = ["static"] if args.quick else args.embedders.split(",")
    folds = 3 if args.quick else args.folds
    unieval = unieval_predictions()
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    loads = [load_avg()]
    rows, speed = [], []
    uni_rows = []
    for name in datasets:
        items = load_items(SHARED / "benchmarks" / f"{name}.jsonl")
        for aspect in DATASETS[name]:
            uni = np.array([unieval.get(i.id, {}).get(aspect, np.nan) for i in items], dtype=float)
            if not np.isnan(uni).all():
                d, g, used = correlations_and_groups(human_scores(items, aspect), uni, [i.group for i in items])
                uni_rows.append((name, aspect, "UniEval (published)", "-", d, g, used, int((~np.isnan(uni)).sum()),
                                 len(items)))
    with tempfile.TemporaryDirectory() as home:
        os.environ["JUDGELAB_HOME"] = home  # a private embedding cache: the timing starts cold
        # Model by model, writing the doc after each dataset: on a busy machine a partial run still lands.
        for embedder in embedders:
            for name in datasets:
                items = load_items(SHARED / "benchmarks" / f"{name}.jsonl")
                groups = [i.group for i in items]
                log(f"{name}: {embedder}")
                embed_s = cold_embedding_seconds(items, embedder)
                for predict in ("class", "expected"):
                    predictions, fit_s = cross_validate(items, DATASETS[name], embedder, folds, predict)
                    speed.append((name, embedder, predict, len(items), embed_s, fit_s))
                    for aspect in DATASETS[name]:
                        d, g, used = correlations_and_groups(human_scores(items, aspect), predictions[aspect], groups)
                        covered = int((~np.isnan(predictions[aspect])).sum())
                        rows.append((name, aspect, embedder, predict, d, g, used, covered, len(items)))
                        log(f"  {aspect} {predict}: dataset {fmt(d)} group {fmt(g)}")
                loads.append(load_avg())
                done = f"{embedder} on {name}"
                if not args.no_doc:
                    write_doc_section("bench_similarity", render(_ordered(rows + uni_rows), speed, folds, argv, started_at,
                                                             loads, last=done))
    rows = _ordered(rows + uni_rows)
    report = render(rows, speed, folds, argv, started_at, loads, last=None)
    print(report)
    if not args.no_doc:
        write_doc_section("bench_similarity", report)


def human_scores(items, aspect: str) -> np.ndarray:
    return np.array([np.nan if i.human_score(aspect) is None else i.human_score(aspect) for i in items], dtype=float)


def _ordered(rows: list) -> list:
    order = {name: k for k, name in enumerate(DATASETS)}
    aspect_order = {(n, a): k for n, aspects in DATASETS.items() for k, a in enumerate(aspects)}
    return sorted(rows, key=lambda r: (order[r[0]], aspect_order[(r[0], r[1])], r[2].startswith("UniEval"), r[2], r[3]))


def render(rows, speed, folds, argv, started_at, loads, last: str | None) -> str:
    lines = [
        "## Similarity scorer (UCLWI, no LLM)",
        "",
        *([f"**Partial run**: results so far, up to {last}; the run continues model by model.", ""] if last else []),
        f"Command: `{command_line('bench.bench_similarity', argv)}`  ",
        f"Date: {started_at}; machine: {describe_machine()}; load average (1/5/15 min) before and after each "
        f"dataset/model: {', '.join(loads)} (the machine was shared with other jobs).",
        "",
        f"Group-wise {folds}-fold cross-validation (every output of a source in one fold; seed 0), logistic "
        "regression on the rounded human score. `class`: the most probable class (the paper's argmax); "
        "`expected`: the probability-weighted score. Spearman over all out-of-fold predictions (dataset) and "
        "within each source, averaged over sources (group; SF Hotel/Restaurant sources mostly have two outputs, "
        "so their group ρ is a mean of ±1 values). `judged` counts items with a prediction (an output alone in "
        "its group would get an error judgment by design; these datasets have none). `features`: per-system "
        "columns (Topical-Chat, HANNA) or sorted neighbours (SF Hotel/Restaurant, which name no systems). "
        "UniEval: its published predictions on the same items (a fine-tuned T5 evaluator; none for HANNA).",
        "",
        "`groups`: sources the group ρ averages over, of all (a source whose outputs all get one score, or all "
        "one human score, has no ρ and is left out).",
        "",
        "| dataset | aspect | scorer | prediction | dataset ρ | group ρ | groups | judged |",
        "|---|---|---|---|---:|---:|---:|---:|",
    ]
    for name, aspect, scorer, predict, d, g, used, covered, total in rows:
        lines.append(f"| {name} | {aspect} | {scorer} | {predict} | {fmt(d)} | {fmt(g)} | {used} | {covered}/{total} |")
    lines += ["", "Speed (all aspects of a dataset; embedding from an empty cache, then fit + predict in every fold):", "",
              "| dataset | embedder | prediction | items | embed s | fit+predict s | items/s (embed + one aspect's CV) |",
              "|---|---|---|---:|---:|---:|---:|"]
    aspects_of = {name: len(a) for name, a in DATASETS.items()}
    for name, embedder, predict, n, embed_s, fit_s in speed:
        per_aspect = fit_s / aspects_of[name]
        lines.append(f"| {name} | {embedder} | {predict} | {n} | {embed_s:.1f} | {fit_s:.1f} | {n / (embed_s + per_aspect):.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
