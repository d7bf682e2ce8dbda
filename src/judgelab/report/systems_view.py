"""The "Systems" section of report.html, drawn from systems.json (``judgelab evaluate --out``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgelab.errors import DataError
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
    """Rows, forest plots and the significance matrix for report.html, from systems.json."""
    if not systems:
        return None
    estimators = systems["estimators"]
    main = next(name for name in ("corrected", "human", "judge") if name in estimators)
    ranking, point = _rankings(systems, main)
    order = sorted(systems["systems"], key=lambda s: _sort_key(estimators[ranking][s]["value"]))
    # the guided ranking's value counts the runs ranked below each run: a column for TREC runs; for
    # comparisons (systems.json has it too) the rank columns already say where each system stands
    shown = [name for name in estimators if name != "guided" or systems.get("kind") != "comparisons"]
    rows = [{"system": s, "cells": [(name, estimators[name][s]) for name in shown],
             "rank": estimators[ranking][s]["rank_interval"],
             "point_rank": estimators[point][s].get("rank") if point else None} for s in order]
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
    pairs = systems["pairs"]
    if main in pairs:  # absent past evaluate's MAX_PAIRWISE_SYSTEMS
        figures.append(plots.significance(order, _signs(pairs[main], order), title=f"Separable pairs: {LABELS[main]}"))
    return {"kind": systems.get("kind"), "rows": rows, "estimators": [LABELS[name] for name in shown],
            "main": LABELS[main], "ranking": LABELS[ranking], "point": LABELS[point] if point else None,
            "recommended": systems.get("recommended"), "rank_method": _rank_method(systems),
            "figures": figures, "effective": _effective(systems.get("effective_labels"), len(order)),
            "labels": systems["labels"],
            "skipped": systems.get("skipped") or {}, "unjudged": systems.get("unjudged_share"),
            "options": systems.get("options") or {}, "significant": {
                LABELS[name]: sum(p["significant"] for p in found) for name, found in pairs.items()},
            "n_pairs": len(pairs.get(main, ())), "pairs_omitted": systems.get("pairs_omitted")}


def effective_reading(total: float, labelled: float, counted: int, systems: int) -> tuple[bool, str]:
    """How the effective-labels line reads, in the CLI and the report alike: whether the judge's verdicts
    narrowed the t intervals (worth more labels than were labelled, once rounded), and the words naming
    the systems counted when they are not all of them."""
    where = "" if not counted or counted == systems else f" (the {counted} systems with t intervals)"
    return round(total) > round(labelled), where


def _effective(effective: Mapping[str, Any] | None, systems: int) -> dict[str, Any] | None:
    """systems.json's effective labels with :func:`effective_reading` for the template; None without a total."""
    if not effective or effective.get("total") is None:
        return None
    narrowed, where = effective_reading(effective["total"], effective["labelled"], effective.get("systems_counted")
                                        or 0, systems)
    return {**effective, "narrowed": narrowed, "where": where}


def _rankings(systems: Mapping[str, Any], main: str) -> tuple[str, str | None]:
    """(the estimator the rows are ranked by, the one whose point rank gets a column of its own): as
    the terminal does. Runs: the guided order (evaluate/guided.py); items: the recommended estimate
    (evaluate/choose.py); comparisons: corrected, whose rank sets are simultaneous, with the
    recommended point ranking beside it."""
    estimators = systems["estimators"]
    recommended = (systems.get("recommended") or {}).get("estimator")
    if systems.get("kind") == "queries" and "guided" in estimators:
        return "guided", None
    if systems.get("kind") != "comparisons":
        return (recommended if recommended in estimators else main), None
    return main, (recommended if recommended in estimators and recommended != main else None)


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


def _sort_key(value: float | None) -> float:
    return -value if value is not None else np.inf


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
