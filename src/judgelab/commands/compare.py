"""`judgelab compare`: is the candidate system worse than the baseline? A gate for CI; docs/compare.md."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgelab.commands._numbers import checked, one_of
from judgelab.commands._system_options import (
    CALIBRATION_HELP,
    Aspect,
    Field,
    Human,
    HumanIds,
    JudgeNames,
    Seed,
    one_or_several,
)
from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)


def compare(
    data: Annotated[Path, typer.Option(
        "--data", "-d", help="Items (JSONL/JSON/CSV/Parquet) with system_id, and group_id: the input each answers; "
                             "or comparisons between systems (system_a, system_b; verdicts a/b/tie).")],
    judgments_given: Annotated[list[Path], typer.Option(
        "--judgments", "-j", help="The judge's verdicts on both systems' items: a run folder, its judgments.jsonl, "
                                  "or any file with item_id and score/label; more than once: several judges in one "
                                  "estimate.")],
    baseline: Annotated[str, typer.Option("--baseline", help="The system_id to compare against (e.g. main).")],
    candidate: Annotated[str, typer.Option("--candidate", help="The system_id under test (e.g. this change).")],
    margin: Annotated[float, typer.Option(
        "--margin", callback=checked("NonNegative"), help="How much worse the candidate may be, on the score's scale: fail only when the interval "
                         "lies beyond it.")] = 0.0,
    alpha: Annotated[float, typer.Option(
        "--alpha", callback=checked("ErrorRate"), help="1 - the interval's coverage; a false alarm (fail with no real regression) has "
                        "probability at most alpha/2.")] = 0.05,
    higher_is_better: Annotated[bool, typer.Option(
        "--higher-is-better/--lower-is-better", help="Which direction of the score is good.")] = True,
    estimator: Annotated[str, typer.Option(
        "--estimator", help="auto (corrected with human labels, judge-only without), corrected, human, judge.")] = "auto",
    pairing: Annotated[str, typer.Option(
        "--pairing", help="auto (paired when the systems answer the same inputs, by group_id), paired, unpaired. "
                          "Comparisons: auto (head-to-head where the two meet), paired (head-to-head only), "
                          "unpaired (their win probabilities against all opponents).")
    ] = "auto",
    aspect: Aspect = None,
    judge_given: JudgeNames = None,
    field: Field = None,
    human: Human = None,
    human_ids: HumanIds = None,
    calibration: Annotated[str, typer.Option("--calibration", help=CALIBRATION_HELP)] = "auto",
    target: Annotated[str, typer.Option(
        "--target", callback=one_of("population", "items"),
        help="'population': new inputs like these; 'items': exactly these inputs.")] = "population",
    bootstrap: Annotated[int, typer.Option("--bootstrap", callback=checked("Resamples"), help="Bootstrap resamples for the judge-only interval.")
    ] = 1000,
    seed: Seed = 0,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write a JUnit XML testcase here.")] = None,
    markdown: Annotated[Path | None, typer.Option(
        "--markdown", help="Also write a markdown summary here (e.g. $GITHUB_STEP_SUMMARY; appended to if it exists).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the text lines.")] = False,
    sequential: Annotated[bool, typer.Option(
        "--sequential", help="The labels were gathered in rounds and looked at: use confidence sequences over them "
                             "in the order given, valid however the labelling was stopped.")] = False,
    plan: Annotated[float | None, typer.Option(
        "--plan", callback=checked("Positive"), help="Also say how many labels would catch a regression of this "
        "size (on the score's scale, beyond --margin) with 80% power, from the labels so far.")] = None,
    fail_undecided: Annotated[bool, typer.Option(
        "--fail-undecided", help="Also exit 1 when the interval cannot tell: pass only when it shows the candidate "
                                 "no worse than --margin (a non-inferiority test; with few labels this fails until "
                                 "enough are labelled, where the default passes with a 'not decided' warning).")
    ] = False,
    require_card: Annotated[Path | None, typer.Option(
        "--require-card", help="Gate only on a judge this card (judgelab meta --card) certifies: its judge, its "
                               "config, and every --floor met by an exact lower bound; else exit 2 saying why and how "
                               "many more labels of each class would do (docs/cards.md).")] = None,
    floor: Annotated[str, typer.Option(
        "--floor", help="With --require-card: the floors, e.g. tpr=0.8,tnr=0.8 (two classes), recall=0.7 (every "
                        "class), kappa=0.6.")] = "tpr=0.8,tnr=0.8",
) -> None:
    """Candidate - baseline with its interval; exit 1 when the candidate is significantly worse by more than --margin
    (with --fail-undecided: unless it is shown no worse than that)."""
    from judgelab.api.verbs import compare as compare_systems
    from judgelab.commands._common import console
    from judgelab.files import writable_file

    judgments, judge = one_or_several(judgments_given), one_or_several(judge_given)
    for path in (junit, markdown):  # before the work: a folder, a FIFO or a device is no report file
        if path is not None:
            writable_file(path)
    gate = None
    if require_card is not None:  # before the work: an uncertified judge gates nothing
        from judgelab.report.card import require_card as certified

        gate = certified(require_card, floor, judge=judge if isinstance(judge, str) else None,
                         judgments_file=judgments if isinstance(judgments, Path) else None)
    result = compare_systems(data, judgments, baseline=baseline, candidate=candidate, margin=margin, alpha=alpha,
                             higher_is_better=higher_is_better, estimator=estimator, pairing=pairing, aspect=aspect,
                             judge=judge, field=field, human=human, human_ids=human_ids, calibration=calibration,
                             target=target, bootstrap=bootstrap, seed=seed, sequential=sequential,
                             fail_undecided=fail_undecided)
    planned = result.plan(plan) if plan is not None else None
    _publish(result, junit, markdown)
    if as_json:
        typer.echo(json.dumps(result.to_dict() | ({"plan": planned} if planned else {}) | ({"card": gate} if gate else {}),
                              indent=2))
    else:
        status = "[bold green]PASS[/]" if result.passed else "[bold red]FAIL[/]"
        console.print(f"{status} {escape(result.summary())}", soft_wrap=True)
        console.print(f"estimator: {escape(result.estimator_reason)}", soft_wrap=True)
        console.print(f"{result.design_heading}: {escape(result.design)}: {escape(result.pairing_reason)}"
                      if result.basis else f"pairing: {escape(result.pairing_reason)}", soft_wrap=True)
        for warning in result.warnings:
            console.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
        if planned:
            console.print(f"plan: {escape(planned['text'])}", soft_wrap=True)
    if not result.passed:
        raise typer.Exit(1)


def _publish(result, junit: Path | None, markdown: Path | None) -> None:
    """Both reports or neither, so the CI status never disagrees with the job's summary: the JUnit file
    is staged beside its path, the markdown appended (a job summary collects several steps), and only
    then is the JUnit file moved in; a failure on either leaves both as they were."""
    from judgelab.files import open_private, staged_file

    with _writing(junit), (staged_file(junit) if junit else contextlib.nullcontext()) as staged:
        if staged is not None:
            staged.write_text(result.junit_xml(), encoding="utf-8")
        if markdown is not None:
            with _writing(markdown), os.fdopen(open_private(markdown, os.O_WRONLY | os.O_APPEND), "a",
                                               encoding="utf-8") as handle:
                handle.write(result.markdown())


@contextlib.contextmanager
def _writing(path: Path | None) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
