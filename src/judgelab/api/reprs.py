"""The front door's results at a plain Python prompt: a few lines each (what the result is, its sizes, the
headline figures and where the rest is) instead of the dataclass repr of every array it holds, which ran to
8 KB for one ``jl.evaluate``. Jupyter shows the result's ``_repr_html_`` instead of this."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from judgelab.printable import printable

WIDTH = 120  # a longer line (long system names, notes) is cut, ending in "..."
SHOWN = 5  # systems, statistics or ids listed before "... (N more)"
NAME_ROOM = 48  # names are padded to the longest shown; a longer one is cut to this


def text(head: str, body: Iterable[str], more: str) -> str:
    """``head``, then ``body`` and where the rest is (``more``, then the notebook view), indented; the lines with
    data at most WIDTH characters, its control characters shown as escapes."""
    shown = [_clip(printable(line)) for line in (head, *(f"  {line}" for line in body))]
    return "\n".join([*shown, f"  more: {more}; notebooks: _repr_html_"])


def _clip(line: str) -> str:
    return line if len(line) <= WIDTH else line[:WIDTH - 3] + "..."


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def number(value: Any) -> str:
    return f"{float(value):.3g}" if _finite(value) else "-"


def figure(value: Any, ci: Sequence[Any] | None = None) -> str:
    """``0.776 [0.615, 0.899]``; the interval left out when it has no finite ends."""
    shown = number(value)
    if ci is not None and len(ci) == 2 and all(_finite(end) for end in ci):
        shown += f" [{number(ci[0])}, {number(ci[1])}]"
    return shown


def listing(parts: Sequence[str], shown: int = SHOWN) -> str:
    rest = f" ... ({len(parts) - shown} more)" if len(parts) > shown else ""
    return ", ".join(parts[:shown]) + rest


def _name(name: str) -> str:
    shown = printable(name)
    return shown if len(shown) <= NAME_ROOM else shown[:NAME_ROOM - 3] + "..."


def table(rows: Sequence[tuple[str, str]], what: str) -> list[str]:
    """The first SHOWN (name, figures) rows as lines, names padded to one width (cut past NAME_ROOM, so that
    the figures always show), then how many more ``what`` there are."""
    names = [_name(name) for name, _ in rows[:SHOWN]]
    room = max(map(len, names), default=0)
    lines = [f"{name:<{room}}  {figures}" for name, (_, figures) in zip(names, rows, strict=False)]
    return lines + ([f"... ({len(rows) - SHOWN} more {what})"] if len(rows) > SHOWN else [])


def statistics(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Estimate rows (level, statistic, value, ci, n) as table lines: ``dataset spearman  0.776 [0.615, 0.899] n=36``."""
    named = [(row["statistic"] if row["statistic"] == row["level"] else f"{row['level']} {row['statistic']}",
              f"{figure(row['value'], row.get('ci'))}" + (f"  n={row['n']}" if row.get("n") is not None else ""))
             for row in rows]
    return table(named, "statistics") or ["no statistic"]


# -- jl.evaluate ------------------------------------------------------------------------------------------
def evaluation(report: Any) -> str:
    """A SystemsReport: sizes, the leading estimator's ranking with intervals, the other estimators."""
    labels = report.labels
    design = f" ({labels['design']} design)" if labels.get("design") else ""
    what = report.measure or f"aspect {report.aspect or '-'}"
    head = (f"{type(report).__name__}: {len(report.systems)} {'runs' if report.kind == 'queries' else 'systems'}, "
            f"{report.coverage.get('units', '?')} {report.kind}, {what}; {labels['n_labelled']} labelled{design}")
    body = [*_ranking(report, _leading(report)), *_evaluation_notes(report)]
    return text(head, body, ".table() or .to_pandas() (every estimator), .pairs_table(), .recommended, .to_dict()")


def _leading(report: Any) -> str:
    """The estimator ``judgelab evaluate``'s table is ranked by: the recommended one (comparisons: corrected,
    whose rank sets are simultaneous), else corrected, else the judge's."""
    recommended = (report.recommended or {}).get("estimator")
    candidates = ("corrected", "judge") if report.kind == "comparisons" else (recommended, "corrected", "judge")
    return next(str(name) for name in candidates if name in report.estimates)


def _ranking(report: Any, name: str) -> list[str]:
    estimate, rank = report.estimates[name], report.ranks(name)[0]
    order = sorted(range(len(report.systems)), key=lambda k: (math.isnan(rank[k]), rank[k]))
    rows = [(f"{number(rank[k])} {report.systems[k]}", figure(estimate.value[k], estimate.ci[k])) for k in order]
    why = " (recommended)" if name == (report.recommended or {}).get("estimator") else ""
    level = f" [{report.options.get('confidence', 0.95):.0%} interval]" if "[" in "".join(f for _, f in rows) else ""
    return [f"rank, system and the {name} estimate{why}{level}:", *(f"  {line}" for line in table(rows, "systems"))]


def _evaluation_notes(report: Any) -> list[str]:
    notes = [f"estimators: {', '.join(report.estimates)}"
             + (f"; {len(report.skipped)} left out (.skipped)" if report.skipped else "")]
    if (report.recommended or {}).get("provisional"):
        notes.append("the recommended ranking is provisional: few labels per system (.recommended['provisional'])")
    if report.pairs_omitted:
        notes.append("no pairwise differences or rank intervals: too many systems (.pairs_omitted)")
    if report.decision:
        decided = "decided" if report.decision.get("decided") else "not decided"
        notes.append(f"until decided ({report.decision.get('question')}): {decided} (.decision)")
    return notes


# -- jl.meta and jl.judge -----------------------------------------------------------------------------------
def meta(report: Any, rows: Iterable[Mapping[str, Any]]) -> str:
    """A MetaReport: what was compared, how many items were used, the first statistics with intervals."""
    coverage = report.coverage
    named = [f"{what} {value}" for what, value in (("judge", report.judge), ("preset", report.preset)) if value]
    head = (f"{type(report).__name__}: {report.kind} items, aspect {report.aspect or '-'}, "
            f"{coverage.n_used} of {coverage.n_items} used" + "".join(f", {part}" for part in named))
    section = next(iter(report.sections), "dataset")
    return text(head, statistics(rows), f"result[{section!r}] (a section), .to_pandas() (every statistic), "
                                        ".coverage, .to_dict()")


def run(result: Any, rows: Iterable[Mapping[str, Any]]) -> str:
    """A JudgeRun: judgments by status, the run folder, the accounting, the agreement with the human labels."""
    counts, usage = result.counts, result.usage or {}
    head = (f"{type(result).__name__}: {len(result.judgments)} judgments of {result.aspect or 'the items'} "
            f"({', '.join(f'{status} {n}' for status, n in counts.items())})"
            + (f", run folder {result.folder}" if result.folder else ""))
    cost = usage.get("cost_usd")
    body = [f"usage: {usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens, "
            f"cost {'unknown' if cost is None else f'${cost:.4f}'}, {number(usage.get('wall_s'))} s"]
    if result.metrics and "unavailable" in result.metrics:
        body.append(f"no agreement figures: {result.metrics['unavailable']}")
    elif result.metrics:
        body += ["agreement with the items' human labels:", *(f"  {line}" for line in statistics(rows))]
    return text(head, body, ".to_pandas() (each judgment beside its human value), .judgments, .metrics, .config")


# -- jl.compare, jl.audit, jl.sample, jl.load ------------------------------------------------------------
def comparison(result: Any) -> str:
    head = (f"{type(result).__name__}: {'PASS' if result.passed else 'FAIL'}, {result.candidate} vs {result.baseline}"
            + (f" ({result.aspect})" if result.aspect else "")
            + (f"; {len(result.warnings)} warnings (.warnings)" if result.warnings else ""))
    figures = (f"{result.difference:+.4g} [{result.low:+.4g}, {result.high:+.4g}] ({1 - result.alpha:.0%} interval, "
               f"{result.estimator}, {result.design}, n={result.n}, {result.n_labelled} labelled): {result.decision}")
    return text(head, [f"{result.measure or 'candidate - baseline'} = {figures}"],
                ".summary(), .details() (why), .to_pandas(), .plan(regression), .junit_xml(), .markdown()")


def audit(report: Any) -> str:
    head = (f"{type(report).__name__}: biases of {report.judge or 'the judge'}, {report.n_items} items, "
            f"{'both orders' if report.both_orders else 'one order'}; {len(report.rows)} statistics, "
            f"{len(report.not_measured)} not measured" + (f"; probes: {', '.join(report.probes)}" if report.probes
                                                         else ""))
    rows = [(f"{row.section}: {row.name}", f"{figure(row.value, row.ci)}  n={row.n}") for row in report.rows]
    return text(head, table(rows, "statistics"), ".to_pandas() (every statistic), .row(name), .not_measured, "
                                                 ".probes, .to_dict()")


def sample(drawn: Any) -> str:
    header = drawn.header or {}
    head = (f"{type(drawn).__name__}: {len(drawn.ids)} {header.get('units', 'units')} to label ({drawn.method} "
            f"sample, seed {header.get('seed', '-')}); {len(drawn.sizes)} strata")
    body = [f"drawn per stratum: {listing([f'{name} {n}' for name, n in drawn.sizes.items()])}",
            f"ids: {listing(list(drawn.ids))}"]
    return text(head, body, ".to_pandas(), .ids, .probabilities, .write(path); once labelled, give it as human_ids=")


def source(read: Any) -> str:
    kinds = "/".join(sorted(read.items.kinds)) or "no"
    judges = read.judges()
    head = (f"{type(read).__name__}: {read.source} output, {len(read.items)} {kinds} items, "
            f"{len(read.judgments)} judgments" + (f" by {listing(judges, 3)}" if judges else ""))
    body = [f"{len(read.notes)} notes from the reader (.notes)"] if read.notes else []
    return text(head, body, ".items, .judgments, .judges(), .to_pandas() (each judgment with its item)")
