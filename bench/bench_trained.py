"""Trained cross-encoder scorers: cross-validated agreement with humans, beside UniEval and similarity.

Group-wise cross-validated agreement with humans, next to UniEval's
published predictions and the UCLWI similarity scorer; a stacked variant; distilling the published
HANNA LLM raters vs the number of teacher-labelled items; training time and inference speed.

    .venv/bin/python -m bench.bench_trained --datasets topical_chat:coherence,qags_xsum:consistency \
        --folds 5 --epochs 1 --max-items 300 --write

With ``--stack-with-hanna-raters`` (HANNA) or ``--stack-with [LABEL=]JUDGMENTS`` (any dataset whose
item ids the file uses), the judge's scores get a row of their own and a second stacked row that
adds them as an input: "stacked (cross-encoder + similarity + LABEL)".

Results accumulate in ~/.cache/judgelab/bench_trained.json ($JUDGELAB_BENCH_RESULTS) (one entry per dataset/aspect/kind
and set of --stack-with members, replaced when rerun),
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
from judgelab.data import Dataset, Item, load_items
from judgelab.errors import JudgelabError
from judgelab.judges.trained import TrainedJudge
from judgelab.train import agreement, cross_validate, human_targets, read_teacher, stack_cv, teacher_targets
from judgelab.train.labels import Targets

ROOT = Path(__file__).resolve().parents[1]
#: Where results accumulate between runs (outside the repository: they are measurements, not code).
RESULTS = Path(os.environ.get("JUDGELAB_BENCH_RESULTS", Path.home() / ".cache" / "judgelab" / "bench_trained.json"))
HEADING = "## Trained scorers (fine-tuned MiniLM cross-encoder)"
BY_SOURCE_HEADING = "## Stacked trained judges out of sample (split by source)"
DEFAULT_SETS = ("topical_chat:coherence,topical_chat:overall,sfres:naturalness,sfres:informativeness,"
                "sfhot:naturalness,sfhot:informativeness,hanna:coherence,qags_cnndm:consistency,qags_xsum:consistency")
#: Fields the scorer reads per dataset: the reference where the task is reference-based (data-to-text, as UniEval).
INPUTS = {"sfres": ("source", "reference"), "sfhot": ("source", "reference"), "topical_chat": ("source", "context")}
UNIEVAL_NAME = {"qags_cnndm": "qags_cnndm", "qags_xsum": "qags_xsum"}
HANNA_RATERS = "LLM raters"
#: The column of UniEval's published predictions in a --by-source entry (compared, not a member).
UNIEVAL = "UniEval (published)"


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
        rows[UNIEVAL] = agreement(np.array([unieval.get(i.id, np.nan) for i in targets.items]),
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


def run_by_source(name: str, aspect: str, args: argparse.Namespace) -> dict[str, Any]:
    """What a user of ``train --stack`` gets on sources it never saw: k folds over the sources;
    on the other folds' items, exactly ``train --stack`` (cross-encoder and similarity scorer on
    the training groups, the stacker on the validation groups, ``--stack-with`` files as members),
    then the saved judge and each member alone score this fold's items. Every item is scored once;
    the figures pool all folds. "previous stacker": a ridge with penalty 1 and weights of any sign
    (the stacker before this release) refitted on the same validation items and members."""
    from judgelab.data.split import kfold_by_group
    from judgelab.judges.base import load_judge
    from judgelab.train import train_scorer
    from judgelab.train.save import training_record
    from judgelab.train.stack import read_extra_members, save_stacked, stacking_spec

    items = first_groups(list(load_items(shared_benchmarks() / f"{name}.jsonl")), args.max_items)
    items = list(human_targets(items, aspect, name).items)
    spec = TrainedJudge(aspect=aspect, epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                        train_layers=args.train_layers, inputs=INPUTS.get(name, ("source",)), seed=args.seed,
                        loss=args.loss, learning_rate=args.learning_rate, val_fraction=args.val_fraction)
    spec = stacking_spec(spec)  # as train --stack does
    files = stack_with_files(name, args)
    index = {item.id: k for k, item in enumerate(items)}
    scores: dict[str, np.ndarray] = {}
    folds_log, seconds = [], []
    log(f"{name}/{aspect} by source: {len(items)} items, {len({i.group for i in items})} sources, {args.folds} folds")
    for fold, (fit_part, held) in enumerate(kfold_by_group(Dataset(items), args.folds, seed=args.seed)):
        fit_part, held = list(fit_part), list(held)
        targets = human_targets(fit_part, aspect, name)
        started = time.perf_counter()
        trained = train_scorer(spec, targets)
        seconds.append(time.perf_counter() - started)
        extra = read_extra_members([f"{label.replace(' ', '-')}={path}" for label, path in files], aspect, fit_part)
        with tempfile.TemporaryDirectory() as folder:
            stacked = save_stacked(trained, targets, Path(folder) / "stacked", training_record(trained, targets),
                                   extra_members=extra)
            val_ids = set(trained.val_ids)
            val_items = [item for item in fit_part if item.id in val_ids]
            held_values = stacked._matrix(held, stacked.member_judgments(held, None))
            val_values = stacked._matrix(val_items, stacked.member_judgments(val_items, None))
            judged = {j.item_id: j.score for j in load_judge(Path(folder) / "stacked" / "judge.yaml").run(held) if j.ok}
        human_val = np.array([item.human_score(aspect) for item in val_items])
        old = _previous_stacker(val_values, human_val, held_values)
        columns = {"stack (this release)": np.array([judged.get(item.id, np.nan) for item in held]),
                   "stack (previous stacker)": old,
                   **{m.name: held_values[:, c] for c, m in enumerate(stacked.members)}}
        for label, column in columns.items():
            target = scores.setdefault(label, np.full(len(items), np.nan))
            target[[index[item.id] for item in held]] = column
        folds_log.append({"fold": fold, "fit_items": len(fit_part), "val_items": len(val_items), "held_items": len(held),
                          "coef": dict(zip([m.name for m in stacked.members], stacked.learned["coef"], strict=True)),
                          "alpha": stacked.learned["alpha"][0],
                          "cv_spearman": (stacked.learned["cv_spearman"] or [None])[0],
                          "train_seconds": round(seconds[-1], 1),
                          # what the stacker was fitted on, so other stackers can be compared without training again
                          "validation": {"ids": [item.id for item in val_items], "human": human_val.tolist(),
                                         "values": [[None if np.isnan(v) else float(v) for v in row]
                                                    for row in val_values]}})
        chosen = {key: value for key, value in folds_log[-1].items() if key != "validation"}
        log(f"  fold {fold + 1}: trained on {len(targets.items)} items in {seconds[-1]:.0f}s; stacker {chosen}")
    targets = human_targets(items, aspect, name)
    unieval = unieval_scores(UNIEVAL_NAME.get(name, name), aspect)
    if unieval:
        scores[UNIEVAL] = np.array([unieval.get(i.id, np.nan) for i in items])
    rows = {_by_source_label(label): agreement(column, targets.labels, targets) for label, column in scores.items()}
    fold = np.full(len(items), -1)
    for k, (_, held) in enumerate(kfold_by_group(Dataset(items), args.folds, seed=args.seed)):
        fold[[index[item.id] for item in held]] = k
    for label, column in scores.items():  # what one fitted judge gives on one set of unseen sources
        rows[_by_source_label(label)]["per_fold_dataset_spearman"] = [
            _spearman_or_none(targets.labels[fold == k], column[fold == k]) for k in range(args.folds)]
    return {"dataset": name, "aspect": aspect, "kind": "by_source", "n_items": len(items),
            "n_groups": len({i.group for i in items}), "folds": args.folds,
            "extra_members": [label for label, _ in files],
            "spec": spec.model_dump(mode="json", include={"epochs", "max_length", "batch_size", "train_layers", "inputs",
                                                           "loss", "learning_rate", "val_fraction",
                                                           "select_on_validation"}),
            "train_seconds": seconds, "rows": rows, "stackers": folds_log,
            "predictions": {"ids": [item.id for item in items], "fold": fold.tolist(),
                            **{label: [None if np.isnan(v) else float(v) for v in column]
                               for label, column in scores.items()}},
            "load": load_avg(), "date": datetime.now(timezone.utc).isoformat(timespec="minutes")}


def _spearman_or_none(human: np.ndarray, predicted: np.ndarray) -> float | None:
    from scipy import stats

    keep = np.isfinite(human) & np.isfinite(predicted)
    if keep.sum() < 3 or np.ptp(predicted[keep]) == 0:
        return None
    return float(stats.spearmanr(human[keep], predicted[keep]).statistic)


def _previous_stacker(val_values: np.ndarray, human: np.ndarray, held_values: np.ndarray) -> np.ndarray:
    """The stacker before this release: mean imputation, standardisation, Ridge(alpha=1), any sign."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    impute = np.nanmean(val_values, axis=0)
    val_values, held_values = (np.where(np.isnan(v), impute, v) for v in (val_values, held_values))
    scaler = StandardScaler().fit(val_values)
    return Ridge(alpha=1.0).fit(scaler.transform(val_values), human).predict(scaler.transform(held_values))


def _by_source_label(member: str) -> str:
    return {"cross-encoder": "cross-encoder alone", "similarity": "similarity alone"}.get(member, member)


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
    from judgelab.judges.scorer_model import predict
    from judgelab.train.model import new_scorer

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
        if entry.get("kind") in ("distill", "by_source"):
            continue
        for scorer, block in entry["rows"].items():
            lines.append(f"| {entry['dataset']} / {entry['aspect']} | {entry['n_items']} ({entry['n_groups']}) | "
                         f"{entry['folds']} | {scorer} | {_cell(block, 'dataset')} | {_cell(block, 'group')} |")
    lines += ["", "Training settings and cost per entry (train seconds are per fold, on the shared, loaded machine):", ""]
    for entry in results.get("entries", []):
        if entry.get("kind") in ("distill", "by_source"):
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
    measured = {f"{e['dataset']}:{e['aspect']}" for e in results.get("entries", []) if e.get("kind") is None}
    missing = [name for name in DEFAULT_SETS.split(",") if name not in measured]
    if missing:
        lines += ["", f"Not run yet: {', '.join(missing)} (`--datasets NAME:ASPECT`)."]
    return "\n".join(lines)


def render_by_source(results: dict[str, Any]) -> str:
    """The ``--by-source`` entries: ``train --stack`` fitted on some sources, scored on the others."""
    entries = [e for e in results.get("entries", []) if e.get("kind") == "by_source"]
    first_seen: dict[tuple[str, str], int] = {}
    for entry in entries:  # variants of one dataset/aspect (other --stack-with members) side by side
        first_seen.setdefault((entry["dataset"], entry["aspect"]), len(first_seen))
    entries.sort(key=lambda e: first_seen[e["dataset"], e["aspect"]])
    lines = ["`train --stack` as a user runs it, scored on sources it never saw: k folds over the sources; in each, "
             "the cross-encoder and the similarity scorer are trained on the other folds' training groups, the "
             "stacker on their validation groups (`--val-fraction`), `--stack-with` files are members; then the "
             "saved judge, and each member alone, score the fold's items. Pooled over folds: every item scored "
             "once. `stack (previous stacker)`: a ridge with penalty 1 and weights of any sign, refitted on the "
             "same validation items (the stacker before this release). Spearman, 95% group-bootstrap intervals; "
             "pooled over folds (dataset, group), and the dataset-level Spearman within each fold averaged over "
             "folds (what one fitted judge gives on one set of unseen sources: pooling also compares scores of "
             "judges fitted on different folds).", "",
             "| dataset / aspect | items (sources) | folds | scorer | Spearman, dataset | Spearman, group | "
             "dataset, mean over folds |",
             "|---|---|---|---|---|---|---:|"]
    for entry in entries:
        for scorer, block in entry["rows"].items():
            per_fold = [v for v in block.get("per_fold_dataset_spearman") or [] if v is not None]
            lines.append(f"| {_entry_name(entry)} | {entry['n_items']} ({entry['n_groups']}) | "
                         f"{entry['folds']} | {scorer} | {_cell(block, 'dataset')} | {_cell(block, 'group')} | "
                         f"{f'{np.mean(per_fold):.3f}' if per_fold else 'n/a'} |")
    lines += ["", *render_stack_vs_members(entries)]
    lines += ["", "Per entry: the command, the training settings, and the stacker of each fold (weights on the "
              "standardised members; `alpha`: the penalty its group-wise cross-validation chose):", ""]
    for entry in entries:
        chosen = "; ".join(f"fold {f['fold'] + 1}: " + ", ".join(f"{name} {w:.2f}" for name, w in f["coef"].items())
                           + f" (alpha {f['alpha']:g}, inner CV ρ "
                           f"{'n/a' if f['cv_spearman'] is None else format(f['cv_spearman'], '.2f')}; "
                           f"{f['val_items']} validation items)" for f in entry["stackers"])
        lines.append(f"- {_entry_name(entry)}: `{entry.get('command', '?')}`; {entry['spec']}; train "
                     f"{np.mean(entry['train_seconds']):.0f}s per fold ({entry['date']}, load {entry['load']}). {chosen}")
    return "\n".join(lines)


def _entry_name(entry: dict[str, Any]) -> str:
    """``dataset / aspect``, and the ``--stack-with`` members when the entry has any (the HANNA
    raters are named in the rows already)."""
    extra = [m for m in entry.get("extra_members", ()) if m != HANNA_RATERS]
    return f"{entry['dataset']} / {entry['aspect']}" + (f" (+ {', '.join(extra)})" if extra else "")


def render_stack_vs_members(entries: list[dict[str, Any]]) -> list[str]:
    """The stack minus each of its members on the held-out items: the paired group bootstrap of
    ``judgelab meta --baseline`` (same resamples of sources for both), from the stored predictions,
    so the question "is the stack ever worse than a member out of sample?" has an interval."""
    lines = ["Stack (this release) minus each member alone, and minus UniEval's published predictions where the "
             "set has them, pooled held-out predictions, Spearman; 95% paired "
             "bootstrap over sources (1,000 resamples, as `judgelab meta --baseline`) and its p-value. At the group "
             "level both are compared on the groups where neither is constant.", "",
             "| dataset / aspect | member | difference, dataset [95% CI] | p | difference, group [95% CI] | p |",
             "|---|---|---|---:|---|---:|"]
    for entry in entries:
        for member, (dataset, group) in stack_minus_members(entry).items():
            lines.append(f"| {_entry_name(entry)} | {member} | {_difference(dataset)} | "
                         f"{dataset.p_value:.2f} | {_difference(group)} | {group.p_value:.2f} |")
    return lines


#: Stored prediction columns of a --by-source entry that are not stack members.
NOT_MEMBERS = frozenset({"ids", "fold", "stack (this release)", "stack (previous stacker)", UNIEVAL})


def stored_predictions(entry: dict[str, Any]) -> tuple[dict[str, Item], Dataset, dict[str, np.ndarray]]:
    """A --by-source entry's held-out predictions as stored: the dataset's items by id, the held-out
    items in stored order, and each scorer's column (NaN where it gave nothing)."""
    items = {item.id: item for item in load_items(shared_benchmarks() / f"{entry['dataset']}.jsonl")}
    predictions = entry["predictions"]
    columns = {label: np.array([np.nan if v is None else v for v in values], dtype=float)
               for label, values in predictions.items() if label not in ("ids", "fold")}
    return items, Dataset([items[i] for i in predictions["ids"]]), columns


def stack_minus_members(entry: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """{member: (dataset-level, group-level) Comparison of the stack against that member}, and against
    UniEval's published scores where the entry has them."""
    from judgelab.metrics.compare import compare_scores

    _, held, columns = stored_predictions(entry)
    human, groups = held.human_scores(entry["aspect"]), [item.group for item in held]
    out = {}
    for member in (label for label in columns if label not in NOT_MEMBERS - {UNIEVAL}):
        compared = compare_scores(human, columns["stack (this release)"], columns[member], groups,
                                  levels=("dataset", "group"), methods=("spearman",))
        out[_by_source_label(member)] = (compared["dataset"]["spearman"], compared["group"]["spearman"])
    return out


def _difference(comparison: Any) -> str:
    ci = comparison.ci
    return f"{comparison.difference:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f" ({comparison.reason})")


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


def entry_key(entry: dict[str, Any]) -> tuple:
    """One stored entry per dataset, aspect, kind and set of ``--stack-with`` members, so a stack
    with extra members sits beside the one without them instead of replacing it."""
    return entry["dataset"], entry["aspect"], entry.get("kind"), tuple(entry.get("extra_members", ()))


def store(results: dict[str, Any], entry: dict[str, Any]) -> None:
    results["entries"] = [e for e in results["entries"] if entry_key(e) != entry_key(entry)] + [entry]
    save_results(results)


def save_results(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))


def by_source_section(title: str | None) -> tuple[str, str]:
    """(marker name, heading) of the docs section a --by-source run writes: the main one, or one of
    its own (``--section-title``), so that entries measured on another machine are not rendered
    away by a results file that lacks them."""
    if not title:
        return "bench_trained_by_source", BY_SOURCE_HEADING
    return "bench_trained_by_source_" + re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_"), f"## {title}"


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
    parser.add_argument("--by-source", action="store_true",
                        help="measure train --stack as a user runs it: fit on some sources, score the others "
                             "(k folds over sources), instead of the cross-validated table")
    parser.add_argument("--val-fraction", type=float, default=0.3, help="with --by-source: train --stack's --val-fraction")
    parser.add_argument("--section-title", default=None,
                        help="with --by-source --write: write into a section of this title instead of the main one")
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
        run = run_by_source if args.by_source else run_one
        store(results, {**run(name, aspect, args), "command": command})
        log(f"done {name}/{aspect}")
    if args.distill:
        store(results, {**run_distill(args), "command": command})
    if args.speed:
        results["speed"] = inference_speed(args)
        save_results(results)
    if args.by_source:
        section = render_by_source(results)
        print(section)
        if args.write:
            name, heading = by_source_section(args.section_title)
            write_doc_section(name, section, heading=heading)
            log(f"wrote {DOC.relative_to(ROOT)}")
        return 0
    section = render(results)
    print(section)
    if args.write:
        heading, body = section.split("\n", 1)
        write_doc_section("bench_trained", body.strip(), heading=heading)
        log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
