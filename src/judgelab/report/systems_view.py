"""The "Systems" section of report.html, drawn from systems.json (``judgelab evaluate --out``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgelab.errors import DataError
from judgelab.evaluate.intervals import KINDS
from judgelab.files import line_finder, read_json, read_text
from judgelab.report import plots

LABELS = {"judge": "judge only", "human": "human only", "corrected": "corrected (PPI)", "shrunk": "shrunk (EB)",
          "guided": "guided ranking (runs ranked below)"}


# -- systems.json as the report reads it: a hand-edited file is refused at the field, not deep in a plot --
Number = Annotated[float, Field(allow_inf_nan=False)]
Bounds = tuple[Number | None, Number | None]
Estimator = Literal["judge", "human", "corrected", "shrunk", "guided"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")  # what the report does not draw is kept, unchecked


class _Cell(_Part):
    value: Number | None = None
    ci: Bounds = (None, None)
    rank: Number | None = None
    rank_interval: Bounds = (None, None)
    n_labelled: int | None = None
    reason: str | None = None


class _Pair(_Part):
    a: str
    b: str
    difference: Number | None = None
    significant: bool = False


class _Labels(_Part):
    n_labelled: int = 0
    design: str | None = None
    source: str | None = None


class _Options(_Part):
    confidence: Annotated[float, Field(gt=0, lt=1)] | None = None
    intervals: str | None = None
    target: str | None = None
    calibration: str | None = None


class _Recommended(_Part):
    estimator: str | None = None
    reason: str | None = None
    provisional: str | None = None


class _Effective(_Part):
    total: Number | None = None
    labelled: Number | None = None  # over the systems counted (t intervals on both sides); halves for comparisons
    systems_counted: int | None = None


class _RankSets(_Part):
    method: str | None = None


class SystemsFile(_Part):
    """What ``evaluate --out`` writes to systems.json (``SystemsReport.to_dict``), as far as the report uses it."""

    kind: Literal["items", "queries", "comparisons"] = "items"
    systems: list[str]
    estimators: dict[Estimator, dict[str, _Cell]]
    pairs: dict[Estimator, list[_Pair]] = {}
    labels: _Labels = _Labels()
    measure: str | None = None
    aspect: str | None = None
    recommended: _Recommended | None = None
    rank_sets: dict[str, _RankSets] = {}
    options: _Options = _Options()
    effective_labels: _Effective | None = None
    skipped: dict[str, Any] = {}
    unjudged_share: dict[str, Number | None] | None = None
    pairs_omitted: str | None = None
    decision: dict[str, Any] | None = None
    #: each estimator's ``info`` (its settings): what the reading notes need, kept beside the systems
    estimator_info: dict[str, dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _keep_info(cls, value: Any) -> Any:
        estimators = value.get("estimators") if isinstance(value, dict) else None
        if not isinstance(estimators, dict):
            return value
        kept = {name: by_system["info"] for name, by_system in estimators.items()
                if isinstance(by_system, dict) and isinstance(by_system.get("info"), dict)}
        return {**value, "estimator_info": kept}

    @field_validator("estimators", mode="before")
    @classmethod
    def _without_info(cls, value: Any) -> Any:
        """Each estimator's ``info`` (its settings, drawn nowhere) is not a system."""
        if not isinstance(value, dict):
            return value
        return {name: {k: v for k, v in by_system.items() if k != "info"} if isinstance(by_system, dict) else by_system
                for name, by_system in value.items()}


def read_systems(path: Path) -> dict[str, Any] | None:
    """systems.json checked (None when there is none): a value the report cannot draw is a DataError
    naming the file, the line and the field."""
    data = read_json(path)
    if data is None:
        return None

    def line_of(loc: tuple[str | int, ...]) -> int | None:  # read again only to say where a bad field is
        return line_finder(read_text(path))(loc)

    try:
        systems = SystemsFile.model_validate(data)
    except ValidationError as exc:
        from judgelab.data.io import data_error

        raise data_error(exc, data, str(path), line_of(exc.errors()[0]["loc"])) from None
    for name, by_system in systems.estimators.items():  # every listed system has figures, every pair is of two
        missing = next((s for s in systems.systems if s not in by_system), None)
        if missing is not None:
            raise DataError(f"has no figures for system {missing!r} (listed in 'systems')", path,
                            line_of(("estimators", name)), f"estimators.{name}")
    for name, pairs in systems.pairs.items():
        for k, pair in enumerate(pairs):
            side = next((side for side in ("a", "b") if getattr(pair, side) not in systems.systems), None)
            if side is not None:
                raise DataError(f"system {getattr(pair, side)!r} is not listed in 'systems'", path,
                                line_of(("pairs", name, k, side)), f"pairs.{name}.{k}.{side}")
    if "judge" not in systems.estimators:
        raise DataError("evaluate always writes the judge's estimate", path, line_of(("estimators",)), "estimators.judge")
    return systems.model_dump()


def systems_section(systems: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Rows, forest plots, the significance matrix and the reading notes for report.html, from systems.json."""
    if not systems:
        return None
    estimators = systems["estimators"]
    main = next(name for name in ("corrected", "human", "judge") if name in estimators)
    recommended = (systems.get("recommended") or {}).get("estimator")
    point, interval = rank_sources(systems.get("kind"), estimators, recommended,
                                   [name for name in RANKED if name in systems["pairs"]])
    order = sorted(systems["systems"], key=lambda s: _sort_key(estimators[point][s]))
    # the guided ranking is the rank column (runs), or one the page does not recommend (comparisons)
    shown = [name for name in estimators if name != "guided"]
    marks = {name: _marks(systems, name) for name in shown}
    rows = [{"system": s, "cells": [(name, estimators[name][s], marks[name].get(s)) for name in shown],
             "rank": _rank_cell(estimators, point, interval, s)} for s in order]
    pairs = systems["pairs"]
    return {"kind": systems.get("kind"), "rows": rows, "estimators": [LABELS[name] for name in shown],
            "main": LABELS[main], "ranking": LABELS[point], "rank_legend": rank_legend(point, interval, recommended),
            "read_first": _read_first(systems, point, interval), "notes": reading_notes(systems),
            "reasons": _reasons(systems), "recommended": systems.get("recommended"),
            "rank_method": _rank_method(systems), "figures": _figures(systems, order, main),
            "effective": _effective(systems.get("effective_labels"), len(order)), "labels": systems["labels"],
            "skipped": systems.get("skipped") or {}, "unjudged": systems.get("unjudged_share"),
            "options": systems.get("options") or {}, "decision": systems.get("decision"), "significant": {
                LABELS[name]: sum(p["significant"] for p in found) for name, found in pairs.items()},
            "n_pairs": len(pairs.get(main, ())), "pairs_omitted": systems.get("pairs_omitted"),
            "judges": judges_rows(systems)}


def judges_rows(systems: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Several judges in one estimate: per judge its weight, what it was worth in labels alone and added to the
    others (t intervals only; evaluate/panel.worth), and how many units it judged."""
    judges = systems.get("judges") or {}
    covered = (systems.get("coverage") or {}).get("judges") or {}
    return [{"name": name, "weight": one.get("weight"), "alone": one.get("alone"), "added": one.get("added"),
             "judged": (covered.get(name) or {}).get("judged"), "from": (covered.get(name) or {}).get("from")}
            for name, one in judges.items() if isinstance(one, Mapping)]


def _figures(systems: Mapping[str, Any], order: list[str], main: str) -> list[Any]:
    estimators = systems["estimators"]
    if systems.get("kind") == "comparisons":
        figures = _comparison_figures(systems, order)
    else:
        human_scale = {LABELS[name]: _series(estimators[name], order) for name in ("human", "corrected", "shrunk")
                       if name in estimators}
        figures = [plots.forest(order, {LABELS["judge"]: _series(estimators["judge"], order)},
                                title="Judge only (the judge's scale)", x_label="mean judge score")]
        if human_scale:
            figures.append(plots.forest(order, human_scale, title="With human labels (the human scale)",
                                        x_label=systems.get("measure") or
                                        f"mean human {systems.get('aspect') or 'score'}"))
    if main in systems["pairs"]:  # absent past evaluate's MAX_PAIRWISE_SYSTEMS
        figures.append(plots.significance(order, _signs(systems["pairs"][main], order),
                                          title=f"Separable pairs: {LABELS[main]}"))
    return figures


# -- the rank column: one rule and one wording for the terminal (commands/evaluate.py) and the page --
def rank_sources(kind: str | None, estimators: Iterable[str], recommended: str | None,
                 with_intervals: Iterable[str]) -> tuple[str, str | None]:
    """(the estimator whose point rank the rank column shows and the rows follow, the one whose rank
    interval it shows in brackets, or None). Runs: the guided ranking, no interval; otherwise the
    recommended estimate (evaluate/choose.py, evaluate/preferences.recommend), else corrected, human or
    judge, with its own rank interval, or corrected's where it has none (shrunk: a model's)."""
    names = set(estimators)
    if kind == "queries" and "guided" in names:
        return "guided", None
    point = next(name for name in (recommended, "corrected", "human", "judge") if name in names)
    with_intervals = set(with_intervals)
    return point, next((name for name in (point, "corrected") if name in with_intervals), None)


def rank_text(rank: float | None, best: float | None = None, worst: float | None = None) -> str | None:
    """``2 (1-3)``: the point rank and, in brackets, the rank interval; None without a rank."""
    if rank is None or math.isnan(rank):
        return None
    if best is None or worst is None or math.isnan(best) or math.isnan(worst):
        return f"{int(rank)}"
    return f"{int(rank)} ({int(best)}-{int(worst)})"


def rank_legend(point: str, interval: str | None, recommended: str | None) -> str:
    """What the rank column holds, said once, in the same words under the terminal table (one line at
    80 columns) and on the page."""
    if point == "guided":
        return "rank: the guided ranking (recommended for runs), without a rank interval"
    why = " (recommended)" if point == recommended else ""
    brackets = ("" if interval is None else "; in brackets, its rank interval" if interval == point
                else f"; in brackets, {interval}'s rank interval")
    return f"rank: {point}'s point rank{why}{brackets}"


def _rank_cell(estimators: Mapping[str, Any], point: str, interval: str | None, system: str) -> str | None:
    bounds = (estimators[interval][system].get("rank_interval") or (None, None)) if interval else (None, None)
    return rank_text(estimators[point][system].get("rank"), *bounds)


# -- what the page explains and the terminal only points to (docs/evaluate.md, "Reading the board") --
# what ends an interval cell in the terminal and on the page: each marked kind of the registry
MARKS = {name: kind.mark for name, kind in KINDS.items() if kind.mark}


def _info(systems: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """An estimator's ``info``: kept aside by :class:`SystemsFile`, or in place (``to_dict()`` as it is)."""
    kept = (systems.get("estimator_info") or {}).get(name)
    info = kept if kept is not None else systems["estimators"][name].get("info")
    return info if isinstance(info, Mapping) else {}


def _marks(systems: Mapping[str, Any], name: str) -> dict[str, str]:
    """{system: ``b``} for a betting interval, ``s`` for a confidence sequence (the interval's kind)."""
    by_system = systems["estimators"][name]
    kinds = _info(systems, name).get("per_system") or ()
    return {system: MARKS[kind] for system, kind in zip(systems["systems"], kinds, strict=False)
            if isinstance(kind, str) and kind in MARKS and (by_system[system].get("ci") or (None,))[0] is not None}


def _read_first(systems: Mapping[str, Any], point: str, interval: str | None) -> str:
    """Which number a first reader should look at, in plain words."""
    if point == "judge":
        return ("Read first the judge only column: each system's mean judge score and how precisely it is known. "
                "It is on the judge's scale and keeps the judge's biases: label a few items to correct them.")
    value = LABELS["corrected"] if "corrected" in systems["estimators"] else LABELS[point]
    brackets = "; in brackets, the ranks the data still allow it" if interval else ""
    return (f"Read first the rank column (where each system stands{brackets}), then the {value} column: each "
            "system's value on the human scale, with an interval that holds for that system.")


def reading_notes(systems: Mapping[str, Any]) -> list[str]:
    """How to read each column: what the terminal's closing line points to."""
    notes = [_judge_note(systems.get("kind")), *_label_notes(systems)]
    if "shrunk" in systems["estimators"]:
        notes.append("shrunk (EB): hierarchical Bayes, each system pulled toward what the judge's mean predicts "
                     "for it; a model's point estimate: its posterior intervals (systems.json) hold on average "
                     "over systems, not for each, so none is shown.")
    return notes + _rank_notes(systems)


def _judge_note(kind: str | None) -> str:
    unit = "comparisons" if kind == "comparisons" else "sources"
    return (f"judge only: the judge's own values; its intervals resample {unit} and stay on the judge's scale: they "
            "say how precisely the judge's mean is known, not how far it is from the humans'.")


def _label_notes(systems: Mapping[str, Any]) -> list[str]:
    if "human" not in systems["estimators"]:
        return []
    options = systems.get("options") or {}
    comparisons = systems.get("kind") == "comparisons"
    if comparisons and options.get("intervals") == "bootstrap":
        return [f"judge / human / corrected intervals: percentiles of {options.get('n_resamples')} resamples of "
                "the comparisons, each refitted (unless a note above says an estimator kept its t intervals)."]
    rule = options.get("system_intervals" if comparisons else "intervals")
    if rule == "t":
        return ["human only / corrected (PPI): design-based t intervals (--intervals t)."]
    if rule == "sequence":
        return ["human only / corrected (PPI): each system's confidence sequence (s), valid however many labels "
                "were taken and whenever the labelling stopped (labels in the order given)."]
    note = ("human only / corrected (PPI): each system's own interval: a t interval guarded to 97% from 10 "
            "labels with a mean away from the scale's ends, else a betting interval (b: valid at any number of "
            "labels, wider")
    return [note + ("; corrected's is the labels' own there)." if rule == "auto" else ").")]


def _rank_notes(systems: Mapping[str, Any]) -> list[str]:
    if systems.get("kind") == "comparisons":
        chosen = ", ".join(f"{name} {sets.get('method')}" for name, sets in (systems.get("rank_sets") or {}).items()
                           if name in RANKED)
        option = (systems.get("options") or {}).get("rank_method")
        return [f"rank intervals: rank sets that hold for every system at once ({option}: {chosen})."]
    info = _info(systems, "guided") if "guided" in systems["estimators"] else {}
    notes = [] if systems.get("kind") == "queries" and info else [
        "rank intervals: the best and worst rank the significant differences between systems allow (Holm's "
        "correction over all pairs)."]
    if isinstance(info.get("level"), (int, float)):  # a hand-edited systems.json may hold anything here
        notes.append(f"guided ranking: the judge's order, except where a corrected difference is significant at "
                     f"{info['level']:g} ({info.get('significant_pairs')} pairs; {info.get('overruled_judge_pairs')} "
                     "of them against the judge's order).")
    return notes


def reason_lines(systems: Sequence[str], kind: str | None, reasons: Mapping[str, Sequence[str | None]],
                 infos: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(estimator and the systems concerned, why) for each reason an estimator gave per system, once;
    then each estimator's reason for the intervals it kept (``info["intervals_reason"]``). The terminal
    prints the same lines."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for name, by_system in reasons.items():
        for system, reason in zip(systems, by_system, strict=True):
            if reason:
                grouped.setdefault((name, reason), []).append(system)
    noun = "runs" if kind == "queries" else "systems"

    def which(names: list[str]) -> str:  # name a few; count many (a declined interval concerns every run)
        if len(names) <= 5:
            return ", ".join(names)
        return f"all {len(names)} {noun}" if len(names) == len(systems) else f"{len(names)} {noun}"

    lines = [(f"{name} for {which(names)}", reason) for (name, reason), names in grouped.items()]
    return lines + [(name, info["intervals_reason"]) for name, info in infos.items() if info.get("intervals_reason")]


def _reasons(systems: Mapping[str, Any]) -> list[tuple[str, str]]:
    estimators = systems["estimators"]
    return reason_lines(systems["systems"], systems.get("kind"),
                        {name: [by_system[s].get("reason") for s in systems["systems"]]
                         for name, by_system in estimators.items()},
                        {name: _info(systems, name) for name in estimators})


def effective_reading(total: float, labelled: float, counted: int, systems: int) -> dict[str, Any]:
    """How the effective-labels line reads, in the CLI and the report alike. Only systems with t intervals
    on both sides are counted (a betting interval's width is set by the scale, not by a variance the judge
    could shrink): when some are not, the words say how many are, and whose labels ``labelled`` counts."""
    every = not counted or counted == systems
    return {"narrowed": round(total) > round(labelled),  # worth more labels than were labelled, once rounded
            "where": "" if every else f" ({counted} of {systems} systems {'has' if counted == 1 else 'have'} them)",
            "given": f"{labelled:.0f} were labelled" if every else (
                f"that system has {labelled:.0f}" if counted == 1 else f"those {counted} systems have {labelled:.0f}")}


def _effective(effective: Mapping[str, Any] | None, systems: int) -> dict[str, Any] | None:
    """systems.json's effective labels with :func:`effective_reading` for the template; None without a total."""
    if not effective or effective.get("total") is None:
        return None
    return {**effective, **effective_reading(effective["total"], effective["labelled"],
                                             effective.get("systems_counted") or 0, systems)}


RANKED = ("judge", "human", "corrected")  # shrunk's rank sets carry no simultaneous guarantee: not drawn


def _comparison_figures(systems: Mapping[str, Any], order: list[str]) -> list[Any]:
    """Comparisons: every estimator is on one scale (a win probability, a strength), so one forest
    plot holds them all; then each system's point rank and simultaneous rank set per estimator."""
    estimators = systems["estimators"]
    options = systems.get("options") or {}
    confidence = round(100 * (options.get("confidence") or 0.95))
    kind = " bootstrap" if options.get("intervals") == "bootstrap" else ""
    measure = systems.get("measure") or "value"
    forest = plots.forest(order, {LABELS[name]: _series(estimators[name], order) for name in estimators
                                  if name != "guided"},  # a ranking (runs below), not on this scale
                          title=f"{measure[0].upper()}{measure[1:]}, {confidence}%{kind} intervals", x_label=measure)
    sets = {LABELS[name]: _ranks(estimators[name], order) for name in RANKED if name in estimators}
    method = _rank_method(systems)
    ranks = plots.rank_sets(order, sets, title=f"Rank sets holding for all systems at once ({method}, "
                                               f"{confidence}%); dot: point rank")
    return [forest, ranks]


def _rank_method(systems: Mapping[str, Any]) -> str | None:
    """The corrected rank sets' method (what ``auto`` chose), else the option."""
    chosen = (systems.get("rank_sets") or {}).get("corrected", {}).get("method")
    return chosen or (systems.get("options") or {}).get("rank_method")


def _ranks(by_system: Mapping[str, Any], order: list[str]):
    rank = [by_system[s].get("rank") for s in order]
    best = [(by_system[s].get("rank_interval") or [None, None])[0] for s in order]
    worst = [(by_system[s].get("rank_interval") or [None, None])[1] for s in order]
    return (rank, best, worst)


def _sort_key(cell: Mapping[str, Any]) -> tuple[float, float]:
    """By rank (what the rank column shows), then by value (a file without ranks)."""
    rank, value = cell.get("rank"), cell.get("value")
    return (np.inf if rank is None else rank, np.inf if value is None else -value)


def _series(by_system: Mapping[str, Any], order: list[str]):
    mid = [by_system[s]["value"] for s in order]
    low = [by_system[s]["ci"][0] for s in order]
    high = [by_system[s]["ci"][1] for s in order]
    return (mid, low, high)


def _signs(pairs: list[Mapping[str, Any]], order: list[str]) -> list[list[int]]:
    position = {s: k for k, s in enumerate(order)}
    signs = [[0] * len(order) for _ in order]
    for pair in pairs:
        if pair["significant"] and pair["difference"] is not None:
            a, b = position[pair["a"]], position[pair["b"]]
            sign = 1 if pair["difference"] > 0 else -1
            signs[a][b], signs[b][a] = sign, -sign
    return signs
