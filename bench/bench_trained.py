"""Trained cross-encoder scorers: group-wise cross-validated agreement with humans, next to UniEval's
published predictions and the UCLWI similarity scorer; a stacked variant; distilling the published
HANNA LLM raters vs the number of teacher-labelled items; training time and inference speed.

    .venv/bin/python -m bench.bench_trained --datasets topical_chat:coherence,qags_xsum:consistency \
        --folds 5 --epochs 1 --max-items 300 --write

With ``--stack-with-hanna-raters`` (HANNA) or ``--stack-with [LABEL=]JUDGMENTS`` (any dataset whose
item ids the file uses), the judge's scores get a row of their own and a second stacked row that
adds them as an input: "stacked (cross-encoder + similarity + LABEL)".

Results accumulate in ~/.cache/judgelab/bench_trained.json ($JUDGELAB_BENCH_RESULTS) (one entry per dataset/aspect, replaced when rerun),
so a long benchmark can be run piece by piece on a shared machine; --write renders every entry
into this benchmark's section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import DOC, command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.errors import JudgelabError
from judgelab.judges.trained import TrainedJudge
from judgelab.train import agreement, cross_validate, human_targets, read_teacher, stack_cv, teacher_targets
from judgelab.train.labels import Targets

ROOT = Path(__file__).resolve().parents[1]
#: Where results accumulate between runs (outside the repository: they are measurements, not code).
RESULTS = Path(os.environ.get("JUDGELAB_BENCH_RESULTS", Path.home() / ".cache" / "judgelab" / "bench_trained.json"))
HEADING = "## Trained scorers (fine-tuned MiniLM cross-encoder)"
DEFAULT_SETS = ("topical_chat:coherence,topical_chat:overall,sfres:naturalness,sfres:informativeness,"
                "sfhot:naturalness,sfhot:informativeness,hanna:coherence,qags_cnndm:consistency,qags_xsum:consistency")
#: Fields the scorer reads per dataset: the reference where the task is reference-based (data-to-text, as UniEval).
INPUTS = {"sfres": ("source", "reference"), "sfhot": ("source", "reference"), "topical_chat": ("source", "context")}
UNIEVAL_NAME = {"qags_cnndm": "qags_cnndm", "qags_xsum": "qags_xsum"}
HANNA_RATERS = "LLM raters"


def shared_benchmarks() -> Path:
    return Path(os.environ.get("JUDGELAB_SHARED", ROOT.parent / "shared")) / "benchmarks"


def first_groups(items: list, max_items: int | None) -> list:
    """Whole groups, in order of first appearance, until ``max_items`` items (all without a limit).
    Items keep their file order (some files interleave groups)."""
    if not max_items:
        return items
    sizes: dict[str, int] = {}
    for item in items:
        sizes[item.group] = sizes.get(item.group, 0) + 1
    chosen, total = set(), 0
    for group, size in sizes.items():
        if total >= max_items:
            break
        chosen.add(group)
        total += size
    return [item for item in items if item.group in chosen]


def unieval_scores(dataset: str, aspect: str) -> dict[str, float]:
    path = shared_benchmarks() / "reference" / "unieval_predictions.jsonl"
    scores = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["dataset"] == dataset and aspect in (row.get("prediction") or {}):
                scores[row["item_id"]] = float(row["prediction"][aspect])
    return scores


def similarity_oof(targets: Targets, aspect: str, folds: int, seed: int) -> np.ndarray:
    """Out-of-fold scores of the UCLWI similarity scorer (same group folds), NaN where it gives none."""
    from judgelab.judges.similarity import SimilarityJudge
    from judgelab.train.curves import fold_of

    assignment = fold_of(targets, folds, seed)
    predictions = np.full(len(targets.items), np.nan)
    for fold in range(folds):
        train = [item for item, f in zip(targets.items, assignment, strict=True) if f != fold]
        test = [item for item, f in zip(targets.items, assignment, strict=True) if f == fold]
        with tempfile.TemporaryDirectory() as folder:
            judge = SimilarityJudge(aspect=aspect, predict="expected").fit(train, None, out_dir=Path(folder))
            scores = {j.item_id: j.score for j in judge.run(test, None) if j.ok}
        for i, item in enumerate(targets.items):
            if assignment[i] == fold and item.id in scores:
                predictions[i] = scores[item.id]
    return predictions


def spearman(block: dict[str, Any], level: str) -> float | None:
    return ((block.get(level) or {}).get("spearman") or {}).get("value")


def run_one(name: str, aspect: str, args: argparse.Namespace) -> dict[str, Any]:
    items = first_groups(list(load_items(shared_benchmarks() / f"{name}.jsonl")), args.max_items)
    targets = human_targets(items, aspect, name)
    spec = TrainedJudge(aspect=aspect, epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                        train_layers=args.train_layers, inputs=INPUTS.get(name, ("source",)), seed=args.seed,
                        loss=args.loss, learning_rate=args.learning_rate)
    log(f"{name}/{aspect}: {len(targets.items)} items, {len({i.group for i in targets.items})} groups")
    started = time.perf_counter()
    point = cross_validate(spec, targets, folds=args.folds, seed=args.seed,
                           on_fold=lambda f, n, s: log(f"  fold {f + 1}: trained on {n} items in {s:.0f}s"))[0]
    rows = {"cross-encoder (ours)": agreement(point.predictions, targets.labels, targets)}
    unieval = unieval_scores(UNIEVAL_NAME.get(name, name), aspect)
    if unieval:
        rows["UniEval (published)"] = agreement(np.array([unieval.get(i.id, np.nan) for i in targets.items]),
                                                targets.labels, targets)
    features = []
    try:
        similarity = similarity_oof(targets, aspect, args.folds, args.seed)
        rows["similarity (UCLWI, ours)"] = agreement(similarity, targets.labels, targets)
        if np.isfinite(similarity).all():
            features.append(similarity)
    except Exception as exc:  # noqa: BLE001 - report why the baseline is missing, keep the benchmark going
        rows["similarity (UCLWI, ours)"] = {"unavailable": f"{type(exc).__name__}: {exc}"}
    if features and np.isfinite(point.predictions).all() and all(np.isfinite(f).all() for f in features):
        stacked = stack_cv(point.predictions, np.column_stack(features), targets, folds=args.folds, seed=args.seed)
        rows["stacked (cross-encoder + similarity)"] = agreement(stacked, targets.labels, targets)
    rows.update(stacked_with_judgments(point.predictions, features, targets, aspect, stack_with_files(name, args), args))
    return {"dataset": name, "aspect": aspect, "n_items": len(targets.items),
            "n_groups": len({i.group for i in targets.items}), "folds": args.folds,
            "spec": spec.model_dump(mode="json", include={"epochs", "max_length", "batch_size", "train_layers", "inputs",
                                                           "loss", "learning_rate"}),
            "train_seconds": point.train_seconds, "train_sizes": point.train_sizes,
            "wall_seconds": round(time.perf_counter() - started, 1), "rows": rows,
            "load": load_avg(), "date": datetime.now(timezone.utc).isoformat(timespec="minutes")}


def stack_with_files(dataset: str, args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(label, judgments file) pairs to stack for this dataset: --stack-with, and the HANNA raters on HANNA."""
    files = []
    for spec in args.stack_with:
        label, sep, path = spec.partition("=")
        files.append((label, Path(path)) if sep else (Path(spec).stem, Path(spec)))
    if args.stack_with_hanna_raters and dataset == "hanna":
        files.append((HANNA_RATERS, shared_benchmarks() / "reference" / "hanna_llm_ratings.jsonl"))
    return files


def stacked_with_judgments(base: np.ndarray, features: list[np.ndarray], targets: Targets, aspect: str,
                           files: list[tuple[str, Path]], args: argparse.Namespace) -> dict[str, Any]:
    """Rows for judgments files (mean over the file's judges, as ``--stack-with`` reads them): each
    file alone, then the stacked row with all of them added to the cross-encoder and similarity."""
    rows, columns, labels = {}, [], []
    for label, path in files:
        alone = f"{label} (published mean)" if label == HANNA_RATERS else f"{label} (given judgments)"
        try:
            scores = read_teacher(path, aspect)
        except JudgelabError as exc:  # e.g. a file without this dataset's aspect: say so, go on
            rows[alone] = {"unavailable": str(exc)}
            continue
        column = np.array([scores.get(item.id, np.nan) for item in targets.items])
        rows[alone] = agreement(column, targets.labels, targets)
        columns.append(column)
        labels.append(label)
    if not columns:
        return rows
    name = "stacked (cross-encoder" + (" + similarity" if features else "") + "".join(f" + {label}" for label in labels) + ")"
    inputs = np.column_stack([*features, *columns])
    if not (np.isfinite(inputs).all() and np.isfinite(base).all()):
        rows[name] = {"unavailable": f"the judgments cover {int(np.isfinite(inputs).all(axis=1).sum())} of "
                                     f"{len(targets.items)} items; stacking needs every item"}
        return rows
    rows[name] = agreement(stack_cv(base, inputs, targets, folds=args.folds, seed=args.seed), targets.labels, targets)
    return rows


def run_distill(args: argparse.Namespace) -> dict[str, Any]:
    """HANNA coherence: learn the mean of the published LLM raters from n teacher-labelled items."""
    items = first_groups(list(load_items(shared_benchmarks() / "hanna.jsonl")), args.max_items)
    teacher = read_teacher(shared_benchmarks() / "reference" / "hanna_llm_ratings.jsonl", "coherence", args.teacher_judge)
    targets = teacher_targets(items, "coherence", teacher)
    spec = TrainedJudge(aspect="coherence", epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                        train_layers=args.train_layers, seed=args.seed)
    sizes = [int(s) for s in args.distill_sizes.split(",")] + [None]
    log(f"distil hanna/coherence from {args.teacher_judge or 'all LLM raters'}: {len(targets.items)} items, sizes {sizes}")
    points = cross_validate(spec, targets, folds=args.folds, sizes=sizes, seed=args.seed,
                            on_fold=lambda f, n, s: log(f"  fold {f + 1}: {n} teacher labels, {s:.0f}s"))
    teacher_vs_humans = agreement(targets.labels, targets.humans, targets)
    curve = [{"size": p.size, "train_sizes": p.train_sizes, "train_seconds": p.train_seconds,
              "with_teacher": agreement(p.predictions, targets.labels, targets),
              "with_humans": agreement(p.predictions, targets.humans, targets)} for p in points]
    return {"dataset": "hanna", "aspect": "coherence", "kind": "distill", "teacher": args.teacher_judge or "mean of all 20",
            "n_items": len(targets.items), "folds": args.folds, "teacher_vs_humans": teacher_vs_humans, "curve": curve,
            "load": load_avg(), "date": datetime.now(timezone.utc).isoformat(timespec="minutes")}


def inference_speed(args: argparse.Namespace, n: int = 64) -> dict[str, Any]:
    """Items/s of a full forward pass (what a saved scorer does at use time) on Topical-Chat items."""
    from judgelab.train.model import new_scorer
    from judgelab.train.trainer import predict

    items = list(load_items(shared_benchmarks() / "topical_chat.jsonl"))[:n]
    spec = TrainedJudge(aspect="coherence", max_length=args.max_length, batch_size=args.batch_size)
    scorer, tokenizer = new_scorer(spec.base_model, "regression", [1.0, 3.0], (1.0, 3.0))
    predict(scorer, tokenizer, items[:8], spec)  # warm-up
    started = time.perf_counter()
    predict(scorer, tokenizer, items, spec)
    seconds = time.perf_counter() - started
    return {"items": n, "seconds": round(seconds, 2), "items_per_s": round(n / seconds, 1),
            "max_length": args.max_length, "load": load_avg()}


def render(results: dict[str, Any]) -> str:
    lines = [HEADING, ""]
    meta = results.get("meta", {})
    lines += [f"Machine: {meta.get('machine', '?')}, often shared with other jobs (each entry's load averages below). "
              "Every figure is a group-wise k-fold cross-validation (no source in two folds): each item is scored "
              "by a scorer that never saw its group. Spearman at dataset level (all items) and group level "
              "(within each source, averaged), 95% group-bootstrap intervals in brackets.", ""]
    lines += ["| dataset / aspect | items (groups) | folds | scorer | Spearman, dataset | Spearman, group |",
              "|---|---|---|---|---|---|"]
    for entry in results.get("entries", []):
        if entry.get("kind") == "distill":
            continue
        for scorer, block in entry["rows"].items():
            lines.append(f"| {entry['dataset']} / {entry['aspect']} | {entry['n_items']} ({entry['n_groups']}) | "
                         f"{entry['folds']} | {scorer} | {_cell(block, 'dataset')} | {_cell(block, 'group')} |")
    lines += ["", "Training settings and cost per entry (train seconds are per fold, on the shared, loaded machine):", ""]
    for entry in results.get("entries", []):
        if entry.get("kind") == "distill":
            continue
        seconds = entry["train_seconds"]
        lines.append(f"- {entry['dataset']}/{entry['aspect']}: `{entry.get('command', '?')}`; {entry['spec']}; "
                     f"train {np.mean(seconds):.0f}s per fold on {int(np.mean(entry['train_sizes']))} items "
                     f"({entry['date']}, load {entry['load']})")
    for entry in results.get("entries", []):
        if entry.get("kind") != "distill":
            continue
        lines += ["", f"Distilling the published HANNA LLM raters ({entry['teacher']}) into the cross-encoder, "
                  f"coherence, {entry['folds']}-fold group CV over {entry['n_items']} items "
                  f"(teacher vs humans: Spearman {_cell(entry['teacher_vs_humans'], 'dataset')}):", "",
                  "| teacher-labelled items per fold | Spearman with teacher | Spearman with humans | train s per fold |",
                  "|---|---|---|---|"]
        for point in entry["curve"]:
            lines.append(f"| {point['size']} | {_cell(point['with_teacher'], 'dataset')} | "
                         f"{_cell(point['with_humans'], 'dataset')} | {np.mean(point['train_seconds'] or [0]):.0f} |")
        lines.append(f"\n(`{entry.get('command', '?')}`, {entry['date']}, load {entry['load']})")
    speed = results.get("speed")
    if speed:
        lines += ["", f"Inference: {speed['items_per_s']} items/s ({speed['items']} Topical-Chat items, full "
                  f"6-layer forward at max_length {speed['max_length']}, load {speed['load']})."]
    for note in meta.get("notes", []):
        lines += ["", note]
    measured = {f"{e['dataset']}:{e['aspect']}" for e in results.get("entries", []) if e.get("kind") != "distill"}
    missing = [name for name in DEFAULT_SETS.split(",") if name not in measured]
    if missing:
        lines += ["", f"Not run yet: {', '.join(missing)} (`--datasets NAME:ASPECT`)."]
    return "\n".join(lines)


def _cell(block: dict[str, Any], level: str) -> str:
    if "unavailable" in block:
        return "n/a"
    estimate = (block.get(level) or {}).get("spearman") or {}
    if estimate.get("value") is None:
        return "n/a"
    ci = estimate.get("ci") or [None, None]
    return f"{estimate['value']:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci[0] is not None else "")


def load_results() -> dict[str, Any]:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"entries": []}


def store(results: dict[str, Any], entry: dict[str, Any]) -> None:
    key = (entry["dataset"], entry["aspect"], entry.get("kind"))
    results["entries"] = [e for e in results["entries"] if (e["dataset"], e["aspect"], e.get("kind")) != key] + [entry]
    save_results(results)


def save_results(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_trained", description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=DEFAULT_SETS, help="NAME:ASPECT,... ('' to skip)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-items", type=int, default=None, help="first whole groups up to N items per dataset")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--train-layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loss", choices=("mse", "pairwise"), default="mse", help="training loss (docs/training.md)")
    parser.add_argument("--learning-rate", type=float, default=3e-5, help="encoder learning rate")
    parser.add_argument("--stack-with", action="append", default=[], metavar="[LABEL=]JUDGMENTS",
                        help="a judgments file whose scores (mean over its judges) get their own row and join the "
                             "stacked row's inputs (repeatable; item ids must match the dataset's)")
    parser.add_argument("--stack-with-hanna-raters", action="store_true",
                        help="on HANNA: the published LLM raters' mean score as a --stack-with file")
    parser.add_argument("--distill", action="store_true", help="also the HANNA distillation curve")
    parser.add_argument("--distill-sizes", default="25,50,100")
    parser.add_argument("--teacher-judge", default=None, help="one HANNA LLM rater (prefix); default: all averaged")
    parser.add_argument("--speed", action="store_true", help="also measure inference items/s")
    parser.add_argument("--write", action="store_true", help="render the accumulated results into docs/benchmarks.md")
    args = parser.parse_args(argv)
    results = load_results()
    command = command_line("bench.bench_trained", argv)
    results["meta"] = {**results.get("meta", {}), "machine": describe_machine()}
    for spec in filter(None, re.split(r"\s*,\s*", args.datasets)):
        name, aspect = spec.split(":")
        store(results, {**run_one(name, aspect, args), "command": command})
        log(f"done {name}/{aspect}")
    if args.distill:
        store(results, {**run_distill(args), "command": command})
    if args.speed:
        results["speed"] = inference_speed(args)
        save_results(results)
    section = render(results)
    print(section)
    if args.write:
        heading, body = section.split("\n", 1)
        write_doc_section("bench_trained", body.strip(), heading=heading)
        log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
