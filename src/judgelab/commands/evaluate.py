"""`judgelab evaluate`: which system is better, and how sure; its terminal board (the leaderboard and what
needs attention), the tables of --style-control and --ties davidson, and --monitor; docs/evaluate.md. The
options it shares with `sample`, `compare` and `cascade` are commands/_system_options.py's."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from judgelab.commands._numbers import checked, one_of
from judgelab.commands._system_options import (
    CALIBRATION_HELP,
    Aspect,
    Data,
    Field,
    From,
    Human,
    HumanIds,
    JudgeNames,
    JudgmentsFiles,
    Measure,
    Partial,
    Runs,
    Seed,
    Unjudged,
    one_or_several,
)
from judgelab.errors import ConfigError
from judgelab.printable import printable


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate)


# -- evaluate -----------------------------------------------------------------------------------------
def evaluate(
    data: Data,
    judgments_given: JudgmentsFiles = None,
    source: From = None,
    partial: Partial = False,
    aspect: Aspect = None,
    judge_given: JudgeNames = None,
    field: Field = None,
    human: Human = None,
    human_ids: HumanIds = None,
    runs: Runs = None,
    measure: Measure = "nDCG@10",
    unjudged: Unjudged = "condense",
    calibration: Annotated[str, typer.Option("--calibration", help=CALIBRATION_HELP)] = "auto",
    target: Annotated[str, typer.Option(
        "--target", callback=one_of("population", "items"),
        help="'population': new sources like these; 'items': exactly these items.")] = "population",
    variance: Annotated[str, typer.Option(
        "--variance", help="Each 'system' its own variance (default), or one 'pooled' across systems (intervals "
                           "that hold on average over systems, not for each; with --intervals t).")] = "system",
    intervals: Annotated[str, typer.Option(
        "--intervals", help="Each system's interval: auto (a guarded t interval from 10 labels with a mean away from "
                            "the scale's ends, else a betting interval valid at any number of labels), betting, or t "
                            "(the design-based t interval of earlier releases).")] = "auto",
    scale: Annotated[str | None, typer.Option(
        "--scale", help="The human scores' range LOW,HIGH (e.g. 1,5) when the items declare none: betting intervals "
                        "need it.")] = None,
    until_decided: Annotated[str | None, typer.Option(
        "--until-decided", help="'best': say whether the labels so far (in the order given) decide which system is "
                                "best, by confidence sequences valid however long you label; exit 0 decided, 3 not "
                                "yet.")] = None,
    skewness_correction: Annotated[bool, typer.Option(
        "--skewness-correction/--no-skewness-correction",
        help="Centre human/corrected intervals with Johnson's skewness correction (off: plain t intervals).")] = True,
    bootstrap: Annotated[int, typer.Option("--bootstrap", callback=checked("Resamples"), help="Bootstrap resamples for the judge-only intervals (and for --bt-intervals bootstrap).")] = 1000,
    seed: Seed = 0,
    confidence: Annotated[float, typer.Option("--confidence", callback=checked("Coverage"), help="Interval coverage, e.g. 0.95.")] = 0.95,
    estimand: Annotated[str, typer.Option(
        "--estimand", help="Comparisons between systems: win-prob (win probability, ties half), bradley-terry "
                           "(strengths), baseline-win-rate (against --baseline).")] = "win-prob",
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="Comparisons: the system whose win rate against the others baseline-win-rate estimates.")] = None,
    rank_method: Annotated[str, typer.Option(
        "--rank-method", help="Comparisons: simultaneous rank sets from auto (default: max-t, or bonferroni "
                               "below a median of 25 labelled comparisons per system), max-t, bonferroni or holm.")] = "auto",
    bt_intervals: Annotated[str, typer.Option(
        "--bt-intervals", help="Comparisons, --estimand bradley-terry: sandwich (default) or bootstrap intervals "
                               "(--bootstrap resamples of the comparisons, each refitted).")] = "sandwich",
    style_control: Annotated[bool, typer.Option(
        "--style-control", help="Comparisons with output_a/output_b: also Bradley-Terry with length and markdown "
                                "covariates (Chatbot Arena's style control): the style coefficients and the "
                                "style-controlled leaderboard.")] = False,
    ties: Annotated[str, typer.Option(
        "--ties", callback=one_of("half", "davidson"),
        help="Comparisons: a tie is half a win (half, the leaderboard's), or also Davidson's tie model "
             "(davidson): strengths and the tie parameter.")] = "half",
    style_intervals: Annotated[str, typer.Option(
        "--style-intervals", callback=one_of("sandwich", "bootstrap"),
        help="--style-control: sandwich intervals (default; clustered by question when comparisons share one, "
             "group_id) or bootstrap ones (--bootstrap resamples of the questions, else of the comparisons, each "
             "refitted).")] = "sandwich",
    monitor: Annotated[bool, typer.Option(
        "--monitor", help="Watch each system's judged mean over time (--time-field) and raise an alarm when it moves "
                          "from its reference period; confidence sequences: no false alarm, anywhere in the stream, "
                          "with probability --confidence. Exit 1 on an alarm.")] = False,
    time_field: Annotated[str, typer.Option(
        "--time-field", help="--monitor: each item's time (ISO 8601 or a number), a field of the JSON-lines data "
                             "(dotted paths reach into extra).")] = "time",
    reference_until: Annotated[str | None, typer.Option(
        "--reference-until", help="--monitor: the reference period ends here (default: the earliest fifth of each "
                                  "system's outputs).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Also write a report folder: systems.json, systems.csv, pairs.csv, report.html.")] = None,
) -> None:
    """Leaderboard of systems from a judge, corrected with a few human labels (prediction-powered).

    Items are pointwise (with system_id), relevance (with --runs), or comparisons between systems
    (system_a, system_b, verdicts a/b/tie; docs/pairwise.md)."""
    from judgelab.api.verbs import evaluate as evaluate_systems
    from judgelab.commands._common import console

    judgments, judge = one_or_several(judgments_given), one_or_several(judge_given)
    if monitor and (isinstance(judgments, list) or isinstance(judge, list)):
        raise ConfigError("--monitor watches one judge: give --judgments and --judge once")
    if monitor:
        if judgments is None:
            raise ConfigError("--monitor reads the judge's verdicts from --judgments")
        ignored = [flag for flag, given in (("--human", human), ("--human-ids", human_ids), ("--runs", runs),
                                            ("--until-decided", until_decided), ("--from", source))
                   if given is not None]
        if ignored:
            raise ConfigError(f"--monitor watches the judge's scores over time and reads no {', '.join(ignored)}: "
                              "leave them out, or run evaluate without --monitor")
        return _monitor(data, judgments, aspect, judge, field, time_field, reference_until, parse_scale(scale),
                        confidence, as_json, out, console)
    report = evaluate_systems(data, judgments, source=source, partial=partial, aspect=aspect, judge=judge, field=field,
                              human=human, human_ids=human_ids, runs=runs, measure=measure, unjudged=unjudged,
                              calibration=calibration, target=target, variance=variance, intervals=intervals,
                              scale=parse_scale(scale), until_decided=until_decided,
                              skewness_correction=skewness_correction, bootstrap=bootstrap, seed=seed,
                              confidence=confidence, estimand=estimand, baseline=baseline, rank_method=rank_method,
                              bt_intervals=bt_intervals, out=out, style_control=style_control, ties=ties,
                              style_intervals=style_intervals)
    written = None if out is None else Path(out) / "report.html"
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        for renderable in systems_tables(report, console.width):
            console.print(renderable, soft_wrap=isinstance(renderable, str))
        if getattr(report, "style", None) is not None:  # comparisons with --style-control or --ties davidson
            for renderable in style_tables(report.style, console.width):
                console.print(renderable, soft_wrap=isinstance(renderable, str))
    if written is not None:
        typer.echo(f"report: {printable(written)}", err=as_json)
    if report.decision is not None and not report.decision["decided"]:
        raise typer.Exit(NOT_DECIDED)


NOT_DECIDED = 3  # --until-decided: the labels so far do not decide the question (keep labelling)


def _signed(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """``+0.359 [+0.329, +0.389]``; "n/a" without a value, the value alone without an interval."""
    if value is None:
        return "n/a"
    return f"{value:+.3f}" + ("" if low is None or high is None else f" [{low:+.3f}, {high:+.3f}]")


def style_tables(style: dict[str, Any], width: int = 120) -> list[Any]:
    """``--style-control`` / ``--ties davidson``: the style coefficients per estimator, the style-controlled
    strengths beside the plain ones with the ranking fit's simultaneous rank sets and the Kendall tau between the
    rankings, what the intervals are (clustered by question, or bootstrap), Davidson's tie parameter."""
    from judgelab.commands._tables import named_table
    from judgelab.report.systems_view import rank_text

    out: list[Any] = []
    fits, davidson = style["style_controlled"], style["davidson"]
    if fits:
        covariates = style["covariates"]
        names = list(next(iter(fits.values()))["coefficients"])
        columns = [(name, [_signed(*(fit["coefficients"][f][k] for k in ("value", "low", "high"))) for f in names])
                   for name, fit in fits.items()]
        out.append(named_table(names, columns, width, name_header="feature",
                               title="Style coefficients (log-odds per standard deviation of (a - b) / (a + b + 1))"
                               ).table)
        if covariates["dropped"]:
            out.append(f"left out (no variation over the comparisons): {escape(', '.join(covariates['dropped']))}")
        systems = list(next(iter(fits.values()))["strengths"])
        last = list(fits)[-1]  # the corrected fit when there are labels, else the judge's
        value = {s: fits[last]["strengths"][s]["value"] for s in systems}
        order = sorted(systems, key=lambda s: (value[s] is None, -(value[s] or 0.0)))
        columns = [(f"{name} style-controlled", [_signed(fit["strengths"][s]["value"], *fit["strengths"][s]["ci"])
                                                 for s in order]) for name, fit in fits.items()]
        columns.append((f"{last} plain", [_signed(style["plain_bradley_terry"][last][s]) for s in order]))
        ranked = fits[last]["strengths"]
        if "rank" in ranked[order[0]]:  # rank sets: simultaneous over the systems, from the ranking fit
            columns.insert(0, ("rank (set)", [rank_text(*(math.nan if v is None else v for v in
                                                          (ranked[s]["rank"], *ranked[s]["rank_set"]))) or "-"
                                              for s in order]))
        narrow_first = [f"{last} plain", *(f"{name} style-controlled" for name in fits if name != last)]
        board = named_table(order, columns, width, left_out_first=narrow_first,
                            title=f"Style-controlled Bradley-Terry strengths, ranked by the {last} fit")
        out.append(board.table)
        if board.left_out:
            out.append(f"left out for the width (wider terminal, or --json): {escape(', '.join(board.left_out))}")
        out.append(_style_intervals_line(fits[last], style.get("clusters"), last))
        taus = ", ".join(f"{name} {tau:.3f}" for name, tau in style["kendall_tau_plain_vs_style"].items()
                         if tau is not None)
        out.append(f"Kendall tau between the plain and the style-controlled ranking: {taus}")
    for name, fit in davidson.items():
        tie = fit["tie"]
        if tie["nu"] is None:
            out.append(f"[yellow]Davidson ({name}): no finite fit[/] (a system or a covariate decides every "
                       "comparison)")
            continue
        out.append(f"Davidson ({name}): tie parameter nu {tie['nu']:.3f} [{tie['low']:.3f}, {tie['high']:.3f}], "
                   f"{tie['tie_share_at_equal_strength']:.0%} ties between equal systems "
                   f"({tie['observed_tie_share']:.0%} observed); strengths "
                   + ", ".join(f"{escape(s)} {_signed(one['value'], *one['ci'])}" for s, one in fit["strengths"].items()))
    return out + [f"[yellow]{escape(note)}[/]" for note in style["notes"]]


def _style_intervals_line(fit: dict[str, Any], clusters: dict[str, Any] | None, name: str) -> str:
    """What the style fits' intervals are: bootstrap or sandwich, clustered by how many questions, and the rank
    sets' method."""
    source = f" ({clusters['from']})" if clusters else ""
    if fit["intervals"] == "bootstrap":
        kind = (f"bootstrap, {fit['n_resamples']} resamples of the "
                + (f"{fit['clusters']} questions{source}" if fit["clusters"] else "comparisons"))
    else:
        kind = "sandwich" + (f", clustered by {fit['clusters']} questions{source}" if fit["clusters"] else "")
    if clusters and not fit["clusters"]:  # the items target draws only the labels: the questions tie no errors
        kind += " (comparisons as independent: --target items)"
    sets = fit.get("rank_sets")
    ranks = f"; rank sets ({name}): {sets['method']}, simultaneous" if sets else ""
    return f"intervals: {kind}{ranks}"


def _monitor(data, judgments, aspect, judge, field, time_field, reference_until, scale, confidence, as_json,
             out, console) -> None:
    """``evaluate --monitor``: each system's judged mean over time (evaluate/monitor.py)."""
    from judgelab.evaluate.monitor import watch_files

    if out is not None:
        from judgelab.report.monitor import check_monitor_folder

        check_monitor_folder(out)
    watches = watch_files(data, judgments, aspect=aspect, judge=judge, field=field, time_field=time_field,
                          reference_until=reference_until, scale=scale, confidence=confidence)
    if out is not None:
        from judgelab.report.monitor import write_monitor_report

        typer.echo(f"report: {printable(write_monitor_report(out, watches, confidence))}", err=as_json)
    if as_json:
        typer.echo(json.dumps({"monitor": [w.to_dict() for w in watches], "confidence": confidence}, indent=2))
    else:
        from judgelab.commands._tables import named_table

        columns = [("reference", [f"{w.reference_mean:.3f} [{w.reference[0]:.3f}, {w.reference[1]:.3f}] "
                                  f"n={w.reference_n}" for w in watches]),
                   ("since then", [f"{w.current_mean:.3f} [{w.current[0]:.3f}, {w.current[1]:.3f}] n={w.current_n}"
                                   for w in watches]),
                   ("alarm", ["-" if w.alarm is None else f"[red]moved {w.alarm}[/] at {escape(str(w.alarm_at))}"
                              for w in watches])]
        fitted = named_table([w.system for w in watches], columns, console.width, wrap=("reference", "since then", "alarm"),
                             title=f"Each system's judged mean over time ({confidence:.0%}: no false alarm for any "
                                   "system, anywhere in the stream)")
        console.print(fitted.table)
        for line in fitted.notes(console.width, "system names"):
            console.print(line, soft_wrap=True)
    if any(w.alarm for w in watches):
        raise typer.Exit(1)


def parse_scale(text: str | None) -> tuple[float, float] | None:
    """``--scale 1,5`` -> (1.0, 5.0); a clear error for anything else."""
    if text is None:
        return None
    parts = text.replace(" ", "").split(",")
    try:
        low, high = (float(part) for part in parts)
    except ValueError:
        raise ConfigError(f"--scale {text!r}: give LOW,HIGH, e.g. 1,5") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ConfigError(f"--scale {text!r}: give two finite numbers, LOW < HIGH")
    return low, high


def _cell(value: float, ci, n: int | None = None, *, compact: bool = False,
          scale: tuple[float, float] | None = None) -> str:
    """``3.463 [3.316, 3.602] n=7``; compact (narrow terminals): ``3.46 ±0.14`` (half the interval's width),
    or ``4.50 [2.50, 5.00]`` where the interval was cut at an end of the ``scale`` (a ± would put it past it)."""
    if value is None or not math.isfinite(value):
        return "-"
    has_ci = ci is not None and math.isfinite(ci[0])
    if compact and has_ci and scale is not None and (ci[0] <= scale[0] or ci[1] >= scale[1]):
        return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
    if compact:
        return f"{value:.2f}" + (f" ±{(ci[1] - ci[0]) / 2:.2f}" if has_ci else "")
    text = f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if has_ci else "")
    return text + (f" n={n}" if n else "")


def _estimate_cell(est, k: int, name: str, compact: bool, scale: tuple[float, float] | None = None) -> str:
    """The value and interval; "n/a" or "(no interval)" when the estimator gave a reason (listed below
    the table, so a long reason does not squeeze the columns)."""
    from judgelab.report.systems_view import MARKS

    if not math.isfinite(est.value[k]):
        return "n/a"
    text = _cell(est.value[k], est.ci[k], int(est.n_labelled[k]) if name == "human" else None, compact=compact,
                 scale=None if name == "judge" else scale)
    mark = MARKS.get(_kinds(est)[k])
    return text + (" (no interval)" if est.reason[k] else f" {mark}" if mark else "")


def _kinds(est) -> tuple:
    """Each system's kind of interval (t, betting, sequence), None where the estimator records none."""
    return tuple(est.info.get("per_system") or (None,) * len(est.value))


#: The columns ``evaluate`` leaves out, in this order, while the system names lack room (docs/evaluate.md);
#: the estimate the table is ranked by and the rank are always kept.
LEFT_OUT_FIRST = ("judge", "human", "shrunk", "corrected")
MARK_WORDS = {"b": "b: a betting interval", "s": "s: a confidence sequence"}


def systems_tables(report, width: int = 120) -> list[Any]:
    """The terminal board: a header line, the leaderboard, what needs attention (reasons, a provisional
    ranking, separable pairs, what the labels were worth), and one closing line saying what the rank
    column holds and where each column is explained (report.html, --json; docs/evaluate.md).
    Intervals print as ± half-widths when the full ones would leave the system names too little room,
    so numbers are never cut; columns are left out (``LEFT_OUT_FIRST``) and names shortened (with a
    legend) only when even those do not fit: no name is ever wrapped or lost."""
    from rich.text import Text

    from judgelab.commands._tables import NAME_ROOM, name_room, named_table
    from judgelab.report.systems_view import RANKED, rank_legend, rank_sources, rank_text

    estimates = report.estimates
    recommended = (report.recommended or {}).get("estimator")
    main, interval = rank_sources(report.kind, estimates, recommended, [n for n in RANKED if n in report.pairs])
    rank = report.ranks(main)[0]
    best, worst = report.ranks(interval)[1:] if interval else ([math.nan] * len(rank),) * 2
    order = sorted(range(len(report.systems)), key=lambda k: (math.isnan(rank[k]), rank[k]))
    shown = [name for name in estimates if name != "guided"]  # a ranking: the rank column shows it
    spans = [rank_text(rank[k], best[k], worst[k]) or "-" for k in order]

    def columns(compact: bool) -> list[tuple[str, list[str]]]:
        scale = report.labels.get("scale")
        return [(name, [_estimate_cell(estimates[name], k, name, compact, scale) for k in order])
                for name in shown] + [("rank", spans)]

    names = [report.systems[k] for k in order]
    compact = name_room(columns(False), width) < min(max(len(name) for name in names), NAME_ROOM)
    kind = "bootstrap " if report.options.get("intervals") == "bootstrap" else ""
    ranked_by = "the guided ranking" if main == "guided" else f"the {main} estimate"
    title = (f"Systems, ranked by {ranked_by} ({int(report.options['confidence'] * 100)}% {kind}intervals)"
             + (", ± half-widths" if compact else ""))
    fitted = named_table(names, columns(compact), width, title=title,
                         left_out_first=[name for name in LEFT_OUT_FIRST if name != main])
    pointer = ". ".join([*_marks_shown(estimates, shown), "Each column explained: report.html (--out DIR), --json"])
    closing = f"{rank_legend(main, interval, recommended)}\n{pointer}"
    return [_header_line(report), *_data_lines(report), fitted.table, *fitted.notes(width, "system names"),
            *_attention_lines(report), *_panel_lines(report), Text(closing, style="dim")]


def _marks_shown(estimates, shown: list[str]) -> list[str]:
    """What the marks that end some interval cells mean (``b``, ``s``), for those the table shows."""
    from judgelab.report.systems_view import MARKS

    kinds = {kind for name in shown for kind, ci in zip(_kinds(estimates[name]), estimates[name].ci, strict=True)
             if math.isfinite(ci[0])}
    return [MARK_WORDS[MARKS[kind]] for kind in sorted(kinds & set(MARKS))]


def _header_line(report) -> str:
    what = report.measure or f"aspect {report.aspect or '-'}"
    labels = report.labels
    return (f"[bold]{len(report.systems)} {'runs' if report.kind == 'queries' else 'systems'}[/], "
            f"{report.coverage['units']} {report.kind}, {escape(what)}; {labels['n_labelled']} labelled {report.kind}"
            + (f" ({labels['design']} design, {labels['source']})" if labels["design"] else ""))


def _data_lines(report) -> list[str]:
    """What judgelab read off the data rather than was told, said under the header: a scale from the labels,
    inputs matched by their text (no group_id), no scale at all with labels (t intervals, unguarded by one)."""
    lines, labels, coverage = [], report.labels, report.coverage
    scale = labels.get("scale")
    if labels.get("scale_from") == "labels":
        lines.append(f"[yellow]scale {scale[0]:g}-{scale[1]:g} read off the labels[/]; --scale LOW,HIGH if it is wider")
    elif scale is None and labels.get("n_labelled") and report.kind == "items":
        lines.append("[yellow]no scale[/]: t intervals, which may not hold with few labels; --scale LOW,HIGH")
    if coverage.get("inputs_from") == "text" and coverage.get("inputs", 0) < coverage.get("units", 0):
        lines.append(f"{coverage['inputs']} inputs, matched by their text (no group_id)")
    return lines


def _panel_lines(report) -> list[str]:
    """Several judges: each one's weight and what it was worth in labels, alone and added to the others."""
    if not report.judges:
        return []
    method = report.estimates["corrected"].info.get("calibration", "")
    lines = [f"{len(report.judges)} judges combined ({escape(str(method))}); worth in labels, alone / added to the "
             "others (t intervals only):"]
    for name, one in report.judges.items():
        weight = "-" if one.get("weight") is None else f"{one['weight']:.3g}"
        alone, added = (one.get(k) for k in ("alone", "added"))
        lines.append(f"  {escape(name)}: weight {weight}, {'-' if alone is None else f'{alone:.0f}'} / "
                     f"{'-' if added is None else f'{added:+.0f}'}")
    return lines


def _attention_lines(report) -> list[str]:
    """What the reader must know about these data: reasons, a provisional ranking, separable pairs, what
    the labels were worth, skipped runs, unjudged documents, the decision, unlabelled sampled ids."""
    from judgelab.report.systems_view import reason_lines

    infos = {name: est.info for name, est in report.estimates.items()}
    lines = [f"[yellow]{escape(head)}[/]: {escape(why)}" for head, why in reason_lines(
        report.systems, report.kind, {name: est.reason for name, est in report.estimates.items()}, infos)]
    if (report.recommended or {}).get("provisional"):
        lines.append(_provisional_line(report.recommended["provisional"]))
    if report.pairs_omitted:
        lines.append(f"[yellow]{escape(report.pairs_omitted)}[/]")
    else:
        counts = ", ".join(f"{name} {int(pairs.significant.sum() // 2)}" for name, pairs in report.pairs.items())
        lines.append(f"pairs separable after Holm's correction (of {len(report.systems) * (len(report.systems) - 1) // 2}): "
                     f"{counts}")
    effective = report.effective_labels_total()
    if effective:
        lines.append(_effective_labels_line(*effective, len(report.systems)))
    if report.skipped:
        lines.append("[yellow]skipped[/]: " + "; ".join(f"{escape(k)} ({v})" for k, v in report.skipped.items()))
    if report.unjudged_share:
        worst_run = max(report.unjudged_share, key=lambda k: report.unjudged_share[k])
        lines.append(f"unjudged documents in the top ranks: up to {report.unjudged_share[worst_run]:.0%} "
                     f"({escape(worst_run)}); runs scored with --unjudged {report.options['unjudged']}")
    if report.decision is not None:
        lines.append(_decision_line(report.decision))
    if report.labels.get("unlabelled_sample_ids"):
        lines.append(f"[yellow]{report.labels['unlabelled_sample_ids']} sampled ids have no label[/]: taken as "
                     "missing at random")
    return lines


def _provisional_line(reason: str) -> str:
    """The flag in short: labels per system and how many more (``evaluate.choose.provisional_reason``);
    why, in report.html and the JSON. A reason of another shape is printed whole."""
    from judgelab.evaluate.choose import MIN_LABELS_PER_SYSTEM

    head, _, rest = reason.partition(": ")
    action = rest.rpartition("; ")[2]
    if not (head.endswith("labels per system") and action.startswith("label about")):
        return f"[yellow]provisional ranking[/]: {escape(reason)}"
    return f"[yellow]provisional ranking[/]: {escape(head)}, below {MIN_LABELS_PER_SYSTEM}; {escape(action)}"


def _decision_line(decision: dict[str, Any]) -> str:
    more = (f" (about {decision['more_per_system']} more labels per system, if the values stay)"
            if decision.get("more_per_system") else "")
    colour = "green" if decision["decided"] else "yellow"
    return (f"[{colour}]{'decided' if decision['decided'] else 'not decided'}[/] (which system is best; "
            f"confidence sequences at {decision['confidence_per_system']:.4g} each): {escape(decision['answer'])}{more}")



def _effective_labels_line(total: float, labelled: float, counted: int, systems: int) -> str:
    """What the judge's verdicts were worth in labels, read the right way round when they were worth none,
    and saying whose labels are counted when not every system has t intervals."""
    from judgelab.report.systems_view import effective_reading

    reading = effective_reading(total, labelled, counted, systems)
    where, given = reading["where"], reading["given"]
    if reading["narrowed"]:
        return (f"the corrected t intervals{where} are as narrow as human-only ones with [bold]{total:.0f}[/] labels "
                f"where {given}: the judge's verdicts were worth about {total - labelled:.0f} more")
    return (f"the judge's verdicts did not narrow the t intervals{where}: the corrected ones are as narrow as "
            f"human-only ones with {total:.0f} labels, and {given}")
