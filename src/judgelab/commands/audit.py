"""`judgelab audit`: a pairwise judge's biases with intervals, and counterfactual probes (docs/audit.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from judgelab.commands._common import CONCURRENCY_HELP, FROM_HELP, PARTIAL_HELP, TIMEOUT_HELP
from judgelab.commands._numbers import checked


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)


def audit(
    data: Annotated[Path, typer.Option(
        "--data", "-d", help="The comparisons (JSON lines): id, and as available label (human verdict), group_id, "
        "system_a/system_b, output_a/output_b.")],
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", "-j", help="The judge's verdicts: a run folder or judgments file (JSON lines).")] = None,
    source: Annotated[str | None, typer.Option("--from", help=FROM_HELP)] = None,
    partial: Annotated[bool, typer.Option("--partial", help=PARTIAL_HELP)] = False,
    field: Annotated[str | None, typer.Option(
        "--field", help="Where each row keeps the verdict, for published outputs (e.g. prediction, "
        "prediction.swap_false). Default: extra.verdicts of a pairwise run, else label.")] = None,
    swapped_field: Annotated[str | None, typer.Option(
        "--swapped-field", help="Where each row keeps the swapped order's verdict, in the item's names "
        "(e.g. prediction.swap_true).")] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Keep this judge's rows when the file holds several (a name or a prefix naming one).")] = None,
    human: Annotated[Path | None, typer.Option(
        "--human", help="Human labels replacing the items' label: annotate's labels.jsonl or any file with item_id "
        "and label/value a/b/tie (several annotators: their mean preference).")] = None,
    family: Annotated[str | None, typer.Option(
        "--family", help="The judge's model family as it appears in system names (e.g. gpt-4): adds self-preference.")] = None,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="A system: adds each system's raw and length-controlled win rate against it (needs texts).")] = None,
    probe: Annotated[str | None, typer.Option(
        "--probe", help="Counterfactual probes to run with --config and --model: swap,pad,reformat.")] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Pairwise judge config for the probes (default: the pairwise judge's defaults).")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model of the probes' judge.")] = None,
    model_name: Annotated[str | None, typer.Option("--model-name", help="Model name on an OpenAI-compatible server.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", callback=checked("Count"), help="Probe only the first N items.")] = None,
    cache: Annotated[bool, typer.Option(
        "--cache/--no-cache", help="Use the completion cache (what makes a rerun of the probes resume).")] = True,
    cache_path: Annotated[Path | None, typer.Option("--cache-path", help="Cache file.")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", callback=checked("Concurrency"), help=CONCURRENCY_HELP)] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP)] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", callback=checked("Resamples"), help="Bootstrap resamples (cluster intervals).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", callback=checked("Seed"), help="Seed of the bootstrap.")] = 0,
    confidence: Annotated[float, typer.Option("--confidence", callback=checked("Coverage"), help="Level of the intervals.")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    card: Annotated[Path | None, typer.Option(
        "--card", help="Also write these figures into the judge's card (the folder judgelab meta --card wrote), "
                       "its biases section (docs/cards.md).")] = None,
) -> None:
    """Measure a pairwise judge's biases (position, ties, verbosity, self-preference) with intervals."""
    from judgelab.api.verbs import audit as audit_judge
    from judgelab.audit.table import AuditReport
    from judgelab.commands._common import console

    found = audit_judge(data, judgments, source=source, partial=partial, field=field, swapped_field=swapped_field,
                        judge=judge, human=human, family=family, baseline=baseline, probes=probe, config=config,
                        model=model, model_name=model_name, limit=limit, cache=cache, cache_path=cache_path,
                        concurrency=concurrency, timeout=timeout, bootstrap=bootstrap, seed=seed, confidence=confidence,
                        card=card)
    report = found if found.verdicts_audited else None
    probe_results = found.probes or None
    output: dict = {}
    if report is not None:
        output["audit"] = AuditReport.to_dict(report)
    if probe_results is not None:
        output["probes"] = {name: result.to_dict() for name, result in probe_results.items()}
    if card is not None:
        output["card"] = str(card)
    if as_json:
        typer.echo(json.dumps(output, indent=2))
        return
    if report is not None:
        table, legend = _audit_table(report, console.width)
        console.print(table)
        for line in legend:
            console.print(line, soft_wrap=True)
        for line in _readings(report):
            console.print(escape(line))
        for line in report.not_measured:
            console.print(f"not measured: {escape(line)}")
    if probe_results is not None:
        console.print(_probe_table(probe_results, confidence))
    if card is not None:
        console.print(f"card: {escape(str(card))} (biases added)", soft_wrap=True)


def _interval(ci, digits: int = 3) -> str:
    return "" if not ci else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def _audit_table(report, width: int) -> tuple[Table, list[str]]:
    """The statistics (wrapping at spaces) beside their numbers (whole); a system name longer than the
    statistic column can be is shortened there and written out whole below (the legend lines)."""
    from judgelab.commands._tables import NamedTable, name_room, shortened_words

    level = f"{report.confidence:.0%} CI"
    title = f"Bias audit of {report.judge or 'the judge'}: {report.n_items} items, " + (
        "both orders" if report.both_orders else "one order")
    numbers = [("value", [f"{row.value:.3f}" for row in report.rows]), (level, [_interval(row.ci) for row in report.rows]),
               ("n", [str(row.n) for row in report.rows])]
    statistics, legend = shortened_words([f"{row.section}: {row.name}" for row in report.rows],
                                         name_room(numbers, width, title=title))
    table = Table(title=escape(title))
    for column in ("statistic", "value", level, "n"):
        table.add_column(column, justify="left" if column == "statistic" else "right", no_wrap=column != "statistic")
    section = None
    for k, (row, statistic) in enumerate(zip(report.rows, statistics, strict=True)):
        if section is not None and row.section != section:
            table.add_section()
        section = row.section
        table.add_row(escape(statistic), *(cells[k] for _, cells in numbers))
    return table, NamedTable(table, legend=legend).notes(width)


def _readings(report) -> list[str]:
    """What the rows mean, below the table (kept out of it so that 80 columns show every number)."""
    return [f"{row.name}: {row.reading}" for row in report.rows if row.reading]


def _probe_table(results, confidence: float) -> Table:
    table = Table(title="Counterfactual probes: does the verdict change?",
                  caption=f"value [{confidence:.0%} CI]; to perturbed: the preference moved towards the changed output")
    for column in ("probe", "flip rate", "to perturbed", "n", "failed"):
        table.add_column(column, justify="left" if column == "probe" else "right", no_wrap=True)
    for name, result in results.items():
        toward = result.toward_perturbed
        table.add_row(name, _with_interval(result.flip_rate), "" if toward is None else _with_interval(toward),
                      str(result.flip_rate.n), str(result.failed))
    return table


def _with_interval(estimate) -> str:
    return f"{estimate.value:.3f} {_interval(estimate.ci)}"
