"""`judgelab meta`: how well a judge's outputs agree with the human labels (docs/metrics.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from judgelab.commands._common import FROM_HELP, HUMAN_HELP, PARTIAL_HELP
from judgelab.commands._numbers import checked
from judgelab.printable import printable

PRESET_HELP = "How a seed reports: aeollm, llmjudge, hpss, active-critic (default: everything that applies)."


def register(app: typer.Typer) -> None:
    app.command("meta")(meta)


def meta(
    data: Annotated[Path, typer.Option("--data", "-d", help="Items with human labels (JSONL/JSON/CSV/Parquet).")],
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", "-j", help="Judgments: a run folder, its judgments.jsonl, or any file with item_id and score/label.")] = None,
    source: Annotated[str | None, typer.Option("--from", help=FROM_HELP)] = None,
    partial: Annotated[bool, typer.Option("--partial", help=PARTIAL_HELP)] = False,
    aspect: Annotated[str | None, typer.Option(
        "--aspect", "-a", help="Human score to compare with (default: the only one).")] = None,
    preset: Annotated[str | None, typer.Option("--preset", "-p", help=PRESET_HELP)] = None,
    level: Annotated[str | None, typer.Option(
        "--level", help="Correlation levels, comma-separated: dataset,group,system.")] = None,
    runs: Annotated[Path | None, typer.Option(
        "--runs", help="Folder of TREC run files: adds the leaderboard (relevance items).")] = None,
    field: Annotated[str | None, typer.Option(
        "--field", help="Where each row keeps the verdict, for published judge outputs: e.g. prediction.coherence "
        "(a number is the score, a string the label). Default: score, else label.")] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", "--judge-name", help="Keep this judge's rows, when the file holds several (its name, or a prefix "
        "that names one judge).")] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", help="Another judge's judgments (file or run folder): adds judge-minus-baseline differences (paired bootstrap).")] = None,
    baseline_field: Annotated[str | None, typer.Option(
        "--baseline-field", help="--field for the --baseline file (default: score, else label).")] = None,
    baseline_judge: Annotated[str | None, typer.Option(
        "--baseline-judge", help="--judge for the --baseline file.")] = None,
    ties: Annotated[str, typer.Option(
        "--ties", help="Pairwise accuracy: a 'tie' verdict (the two orders disagreed) counts half (LLMBar) or wrong.")] = "half",
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", callback=checked("Resamples"), help="Bootstrap resamples for the intervals (0: none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", callback=checked("Seed"), help="Seed of the bootstrap.")] = 0,
    alpha_level: Annotated[str, typer.Option(
        "--alpha-level", help="Krippendorff's alpha level: ordinal, nominal or interval.")] = "ordinal",
    human: Annotated[Path | None, typer.Option(
        "--human", help=HUMAN_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Also write a report folder: run.json, metrics.json, judgments.jsonl, report.html.")] = None,
    card: Annotated[Path | None, typer.Option(
        "--card", help="Also write the judge's card here (card.json, card.html): class recalls with exact lower "
                       "bounds, kappa and base rate, identity; what compare --require-card reads (docs/cards.md).")] = None,
) -> None:
    """Meta-evaluate a judge: correlations, label agreement, pairwise agreement, IR leaderboard."""
    from judgelab.api.verbs import meta as meta_evaluate
    from judgelab.commands._common import console

    report = meta_evaluate(data, judgments, source=source, partial=partial, aspect=aspect, preset=preset, levels=level,
                           runs=runs, field=field, judge=judge, baseline=baseline, baseline_field=baseline_field,
                           baseline_judge=baseline_judge, ties=ties, bootstrap=bootstrap, seed=seed,
                           alpha_level=alpha_level, human=human, out=out, card=card)
    result = report.to_dict()
    written = None if out is None else Path(out) / "report.html"
    if report.card_path is not None:
        typer.echo(f"card: {printable(report.card_path)}", err=as_json)
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for renderable in _tables(result, console.width):
            console.print(renderable, soft_wrap=isinstance(renderable, str))
    if written is not None:  # stderr under --json: stdout stays one JSON object
        typer.echo(f"report: {printable(written)}", err=as_json)


# -- human-readable output -----------------------------------------------------------------------
def _is_estimate(value: Any) -> bool:
    return isinstance(value, Mapping) and "value" in value and "ci" in value


def _estimates(section: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """(dotted name, estimate dict) for every estimate nested in a section."""
    if _is_estimate(section):
        yield " / ".join(path), section
    elif isinstance(section, Mapping):
        for key, value in section.items():
            yield from _estimates(value, (*path, key))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _skipped(estimate: dict) -> str:
    skipped = estimate.get("skipped") or {}
    text = ", ".join(f"{len(groups)} {reason}" for reason, groups in skipped.items())
    return "; ".join(part for part in (text, estimate.get("reason") or "") if part)


def _groups(estimate: dict) -> str:
    """Groups used, out of all when some were left out: "9/119"."""
    used = estimate.get("n_groups")
    if used is None:
        return "-"
    skipped = estimate.get("n_groups_skipped") or 0
    return f"{used}/{used + skipped}" if skipped else str(used)


def _dropped_lines(result: dict) -> Iterator[str]:
    """One loud line per figure that left out groups because a side was constant."""
    for entry in result.get("dropped_groups") or ():
        reasons = ", ".join(f"{reason} {count}" for reason, count in entry["by_reason"].items())
        yield (f"[bold yellow]{escape(entry['figure'])}: {entry['n_dropped']} of {entry['n_groups']} groups "
               f"({entry['share_dropped']:.0%}) left out[/] [yellow]({escape(reasons)}); its figures describe the "
               f"other {entry['n_used']} groups only[/]")


def _tables(result: dict, width: int = 120) -> Iterator[Any]:
    from judgelab.commands._common import statistic_label, whole_number_table

    coverage = result["coverage"]
    lost = ", ".join(f"{k.removeprefix('n_').replace('_', ' ')} {v}" for k, v in coverage.items()
                     if v and k not in ("n_items", "n_used"))
    judge = f", judge {escape(result['judge'])}" if result["judge"] else ""
    yield (f"[bold]{result['kind']}[/] items, aspect [bold]{escape(result['aspect'] or '-')}[/]{judge}, "
           f"preset {result['preset'] or '-'}: {coverage['n_used']} of {coverage['n_items']} items used"
           + (f" ([yellow]{lost}[/])" if lost else ""))
    confidence = int(result["bootstrap"]["confidence"] * 100)
    rows = []
    for name, section in result.items():
        if name in ("coverage", "bootstrap", "comparison", "dropped_groups", "human_labels"):
            continue
        for label, est in _estimates(section, (name,)):
            ci = est["ci"]
            rows.append((escape(statistic_label(label.replace("leaderboard / ", ""), est)), _number(est["value"]),
                         escape(f"[{_number(ci[0])}, {_number(ci[1])}]") if ci else "-", str(est["n"]),
                         _groups(est), escape(_skipped(est))))
    yield whole_number_table("Agreement with humans", ("statistic", "value", f"{confidence}% CI", "n", "groups",
                                                       "skipped"), rows, text=("statistic", "skipped"))
    if "human_labels" in result:
        yield _human_line(result["human_labels"])
    yield from _dropped_lines(result)
    if "agreement" in result:
        yield _confusion_table(result["agreement"]["confusion_matrix"])
    if "leaderboard" in result:
        yield from _runs_table(result["leaderboard"], width)
    if "comparison" in result:
        yield from _comparison_table(result["comparison"], confidence)
    boot = result["bootstrap"]
    yield f"[dim]{boot['n_resamples']} bootstrap resamples of groups, seed {boot['seed']}[/]"


def _human_line(human: dict) -> str:
    line = (f"human labels: {escape(human['file'])}, {human['labelled_items']} items, "
            f"{human['annotators']} annotator{'s' if human['annotators'] != 1 else ''}")
    inter = human.get("inter_annotator")
    if inter:
        alpha = inter["alpha"]
        value = "undefined" if alpha["value"] is None else f"{alpha['value']:.3f}"
        line += (f"; inter-annotator Krippendorff alpha {value} on {inter['n_overlap']} shared items "
                 "(judgelab agreement for more)")
    return line


def _confusion_table(confusion: dict) -> Table:
    labels = [escape(str(label)) for label in confusion["labels"]]
    table = Table("human \\ judge", *labels, title="Confusion matrix")
    for label, row in zip(labels, confusion["matrix"], strict=True):
        table.add_row(label, *(str(count) for count in row))
    return table


def _runs_table(board: dict, width: int) -> Iterator[Any]:
    """The runs by the human measure beside the judge's: run names whole (or shortened, with a legend)."""
    from rich import box

    from judgelab.commands._tables import named_table

    runs = board["runs"]
    by_human = sorted(runs, key=lambda name: -(runs[name]["human"] or 0))
    by_judge = sorted(runs, key=lambda name: -(runs[name]["judge"] or 0))
    measure = board["measure"]
    columns = [(f"{measure} human", [_number(runs[name]["human"]) for name in by_human]),
               ("rank", [str(by_human.index(name) + 1) for name in by_human]),
               (f"{measure} judge", [_number(runs[name]["judge"]) for name in by_human]),
               ("rank", [str(by_judge.index(name) + 1) for name in by_human])]
    fitted = named_table(by_human, columns, width, name_header="run", title="Leaderboard", box=box.SIMPLE_HEAD,
                         pad_edge=False, collapse_padding=True)
    yield fitted.table
    yield from fitted.notes(width, "run names")


def _comparison_table(comparison: dict, confidence: int) -> Iterator[Any]:
    """The judge-minus-baseline table, then what each comparison was made on or why it has no interval."""
    from judgelab.commands._common import statistic_label, whole_number_table
    from judgelab.metrics.compare import sides

    rows, notes = [], {}
    for level, by_method in comparison.items():
        for method, c in by_method.items():
            judge, baseline = sides(c)
            name = statistic_label(f"{level} / {method}", judge)
            ci = escape(f"[{_number(c['ci'][0])}, {_number(c['ci'][1])}]") if c["ci"] else "-"
            rows.append((escape(name), _number(judge["value"]), _number(baseline["value"]),
                         _number(c["difference"]), ci, _number(c["p_value"]), str(judge["n"])))
            for text in (c.get("note"), c.get("reason")):
                if text:
                    notes.setdefault(text, []).append(name)
    yield whole_number_table("Judge minus baseline (paired bootstrap)",
                             ("statistic", "judge", "baseline", "difference", f"{confidence}% CI", "p", "n"), rows,
                             text=("statistic",))
    for text, names in notes.items():
        where = names[0].split(" / ")[0] if len(names) > 1 else names[0]
        yield f"[yellow]{escape(where)}: {escape(text)}[/]"
