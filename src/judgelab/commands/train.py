"""`judgelab train`: fine-tune a cross-encoder scorer on human labels or a teacher's judgments.

Writes DIR/judge.yaml (reused by `judgelab judge --config DIR/judge.yaml`), DIR/weights/ and
DIR/training.json (history, validation agreement, optional learning curve; docs/training.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from judgelab.commands._common import HUMAN_HELP, human_labelled
from judgelab.commands._numbers import checked
from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("train")(train)


def train(
    data: Path = typer.Option(..., "--data", "-d", help="Items to learn from (JSONL, CSV, Parquet)."),
    aspect: str = typer.Option(..., "--aspect", "-a", help="The score to learn (e.g. coherence)."),
    out: Path = typer.Option(..., "--out", "-o", help="New folder for judge.yaml, weights/ and training.json."),
    human: Path | None = typer.Option(None, "--human", help=HUMAN_HELP + " Only labelled items are learnt from."),
    teacher: Path | None = typer.Option(None, "--teacher", help="Learn a teacher judge's scores instead of the human ones "
                                        "(judgments file with item_id + score, or published ratings with prediction)."),
    teacher_judge: str | None = typer.Option(None, "--teacher-judge", help="Keep this judge's rows of the teacher file "
                                             "(name or prefix); several judges left are averaged."),
    head: str = typer.Option("regression", "--head", help="regression (MSE on the scaled score) or ordinal (ordered levels)."),
    loss: str = typer.Option("mse", "--loss", help="mse (the head's loss) or pairwise (plus a RankNet loss within groups; "
                             "batches of whole groups)."),
    epochs: int = typer.Option(3, "--epochs", callback=checked("Count"), help="Passes over the training items (early stopping may stop sooner)."),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed"), help="Seed for the validation split, initialisation and batch order."),
    max_length: int = typer.Option(256, "--max-length", callback=checked("EncoderWindow"), help="Encoder window in tokens; longer inputs are cut (docs/training.md)."),
    batch_size: int = typer.Option(16, "--batch-size", callback=checked("Count")),
    learning_rate: float = typer.Option(3e-5, "--learning-rate", callback=checked("Positive"), help="Encoder learning rate (the head uses 1e-3)."),
    train_layers: int | None = typer.Option(None, "--train-layers", callback=checked("Layers"), help="Fine-tune only the top N encoder layers (faster on CPU)."),
    inputs: str = typer.Option("source,context", "--inputs", help="Fields read besides the output: source,context,reference."),
    val_fraction: float = typer.Option(0.15, "--val-fraction", callback=checked("HeldOut"), help="Share of groups held out for early stopping."),
    labels: str | None = typer.Option(None, "--labels", help="Also give graded labels (e.g. TREC relevance 0-3, "
                                      "for `judgelab qrels`), learnt on the validation groups: logistic (all grades, in "
                                      "about the humans' shares), ordinal (cut points) or naive-bayes; logistic and "
                                      "ordinal weight the grades equally (class_weight balanced)."),
    curve: str | None = typer.Option(None, "--curve", help="Also measure a learning curve: training sizes, e.g. 16,32,64,all."),
    folds: int = typer.Option(5, "--folds", callback=checked("Folds"), help="Group-wise folds for --curve."),
    limit: int | None = typer.Option(None, "--limit", callback=checked("Count"), help="Use only the first N items."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing, non-empty --out folder."),
    stack: bool = typer.Option(False, "--stack", help="Save a stacked judge instead: the cross-encoder and the similarity "
                               "scorer (fitted on the training groups) combined by a ridge fitted on the validation groups."),
    embedder: str = typer.Option("static", "--embedder", help="With --stack: the similarity scorer's embedder "
                                 "(static, minilm, or a model folder)."),
    stack_with: list[str] | None = typer.Option(None, "--stack-with", help="With --stack: a judgments file (PATH or "
                                                "NAME=PATH; repeatable) whose scores for the aspect become one more "
                                                "input of the stacker, copied into DIR/members/."),
) -> None:
    """Train a local scorer (no LLM at use time) from labelled items, or distil a teacher judge into one."""
    from judgelab.commands._common import console
    from judgelab.data import load_items
    from judgelab.train import check_trainable, human_targets, read_teacher, teacher_targets
    from judgelab.train.save import check_out_dir

    check_out_dir(out, overwrite)
    if stack and teacher:
        raise ConfigError("--stack fits its stacker on human scores; it cannot be combined with --teacher")
    if stack_with and not stack:
        raise ConfigError("--stack-with adds members to the stacked judge: give --stack as well")
    if labels and stack:
        raise ConfigError("--labels gives the cross-encoder graded labels; a --stack judge gives scores only")
    spec = _spec(aspect, head, loss, epochs, seed, max_length, batch_size, learning_rate, train_layers, inputs,
                 val_fraction, labels)
    sizes = _sizes(curve)
    items, _ = human_labelled(list(load_items(data)), human, aspect, labelled_only=teacher is None)
    items = items[:limit] if limit else items
    if teacher:
        scores = read_teacher(teacher, aspect, teacher_judge)
        targets = teacher_targets(items, aspect, scores, str(teacher))
        origin = f"teacher:{teacher.name}" + (f"#{teacher_judge}" if teacher_judge else "")
    else:
        targets = human_targets(items, aspect, str(data))
        origin = "human"
    check_trainable(targets, str(teacher or data))
    extra_members = _extra_members(stack_with, aspect, targets)
    spec = spec.model_copy(update={"trained_on": origin})
    if stack:
        from judgelab.train.stack import stacking_spec

        spec = stacking_spec(spec)  # the validation groups stay unseen: the stacker is fitted there
    console.print(f"training a {head} scorer for {aspect!r} on {len(targets.items)} items ({origin} labels)")
    trained, record = _train_and_measure(spec, targets, sizes, folds, data, teacher)
    from judgelab.train.save import save_trained
    from judgelab.train.stack import save_stacked

    if stack:
        stacked = save_stacked(trained, targets, out, record, embedder=embedder, overwrite=overwrite,
                               extra_members=extra_members)
        _print_stack(console, stacked)
    else:
        save_trained(trained, out, record, overwrite)
    _print_summary(console, record, out)


def _spec(aspect: str, head: str, loss: str, epochs: int, seed: int, max_length: int, batch_size: int, learning_rate: float,
          train_layers: int | None, inputs: str, val_fraction: float, labels: str | None = None):
    from judgelab.judges.base import judge_from_dict

    fields = [name.strip() for name in inputs.split(",") if name.strip()]
    config = {"kind": "trained", "aspect": aspect, "head": head, "loss": loss, "epochs": epochs, "seed": seed, "max_length": max_length,
              "batch_size": batch_size, "learning_rate": learning_rate, "train_layers": train_layers,
              "inputs": fields, "val_fraction": val_fraction}
    if labels:
        config["label_aggregator"] = {"method": labels, **({"class_weight": "balanced"} if labels != "naive-bayes" else {})}
    return judge_from_dict(config, "command-line options")


def _sizes(curve: str | None) -> list[int | None] | None:
    if not curve:
        return None
    sizes: list[int | None] = []
    for part in curve.split(","):
        part = part.strip().lower()
        if part == "all":
            sizes.append(None)
        elif part.isdigit() and int(part) > 0:
            sizes.append(int(part))
        else:
            raise ConfigError(f"--curve {curve!r}: give positive item counts or 'all', e.g. 16,32,64,all")
    return sizes


def _train_and_measure(spec, targets, sizes, folds: int, data: Path, teacher: Path | None) -> tuple[Any, dict[str, Any]]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from judgelab.train import agreement, cross_validate, train_scorer
    from judgelab.train.save import training_record

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task("training", total=None, info="")

        def on_progress(step: int, total: int, figures: dict[str, Any]) -> None:
            rho = figures.get("val_spearman")
            info = f"epoch {figures.get('epoch')}, loss {figures.get('train_loss', figures.get('loss', 0)):.4f}"
            bar.update(task, completed=step, total=total, info=info + (f", val rho {rho:.3f}" if rho is not None else ""))

        trained = train_scorer(spec, targets, on_progress=on_progress)
        curve = None
        if sizes:
            fold_task = bar.add_task("learning curve", total=folds * len(sizes), info="")
            points = cross_validate(spec, targets, folds=folds, sizes=sizes, seed=spec.seed,
                                    on_fold=lambda fold, n, s: bar.update(fold_task, advance=1, info=f"fold {fold + 1}, {n} items, {s:.0f}s"))
            curve = [_curve_entry(point, targets, agreement) for point in points]
    record = training_record(trained, targets, data=str(data), teacher=str(teacher) if teacher else None,
                             learning_curve=curve, curve_folds=folds if sizes else None)
    return trained, record


def _curve_entry(point, targets, agreement) -> dict[str, Any]:
    import numpy as np

    entry = {"size": point.size, "train_sizes": point.train_sizes,
             "train_seconds": [round(s, 2) for s in point.train_seconds],
             "n_predicted": int(np.isfinite(point.predictions).sum()),
             "with_targets": agreement(point.predictions, targets.labels, targets)}
    if targets.origin == "teacher" and np.isfinite(targets.humans).any():
        entry["with_humans"] = agreement(point.predictions, targets.humans, targets)
    return entry


def _extra_members(stack_with: list[str] | None, aspect: str, targets) -> list:
    """The --stack-with files, read and checked before any training (bad input fails fast)."""
    from judgelab.train.stack import read_extra_members

    return read_extra_members(stack_with, aspect, targets.items) if stack_with else []


def _print_stack(console, stacked) -> None:
    members = stacked.selection_table["*"]
    learned = stacked.learned
    weights = dict(zip((m.name for m in stacked.members), learned["coef"], strict=True))
    console.print("stacked judge, fitted on the validation groups: " + ", ".join(
        f"{name} (Spearman {'n/a' if rho is None else f'{rho:.3f}'}, weight {weights[name]:+.3f})"
        for name, rho in members.items()))
    cv = learned.get("cv_spearman") or []
    console.print(f"stacker penalty {learned.get('alpha', [float('nan')])[0]:g}, chosen by group-wise cross-validation "
                  f"on the validation groups (out-of-fold Spearman {cv[0]:.3f})" if cv else
                  "stacker penalty 1 (too few validation groups to cross-validate)")


def _print_summary(console, record: dict[str, Any], out: Path) -> None:
    validation = record["validation"]
    rho = (validation.get("with_targets") or {}).get("dataset", {}).get("spearman", {}).get("value")
    console.print(f"trained in {record['train_seconds']:.0f}s on {record['n_train']} items; validation "
                  f"({validation['n']} items) Spearman with the {'teacher' if record['teacher'] else 'humans'}: "
                  + ("n/a" if rho is None else f"{rho:.3f}"))
    humans = (validation.get("with_humans") or {}).get("dataset", {}).get("spearman", {}).get("value")
    if humans is not None:
        console.print(f"validation Spearman with the humans: {humans:.3f}")
    for entry in record.get("learning_curve") or []:
        value = (entry["with_targets"].get("dataset") or {}).get("spearman", {}).get("value")
        console.print(f"  curve: {entry['size']} items -> Spearman " + ("n/a" if value is None else f"{value:.3f}"))
    console.print(f"judge config: {out / 'judge.yaml'}  (judgelab judge --config {out / 'judge.yaml'} --data ITEMS)")
