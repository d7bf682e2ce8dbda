"""``evaluate``: which system is better, by how much, and how sure can we be.

Builds the estimation problem from items and a judge's judgments (pointwise items with a
``system_id``, or relevance items plus TREC runs), reads which units carry human labels and how
they were drawn, and returns the three estimators side by side with every pairwise comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, overload

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.trec import judgment_qrels
from judgelab.errors import ConfigError, DataError, term
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.choose import choose_ranking
from judgelab.evaluate.compare import pairwise
from judgelab.evaluate.comparison_file import ComparisonTable
from judgelab.evaluate.design import Design, recorded_design, stratified_design
from judgelab.evaluate.design_variance import TARGETS
from judgelab.evaluate.estimators import corrected, human_only, judge_only
from judgelab.evaluate.guided import guided_ranking
from judgelab.evaluate.ir import runs_without_judgments, score_runs
from judgelab.evaluate.panel import is_panel, panel, worth
from judgelab.evaluate.problem import Problem, from_items, from_queries
from judgelab.evaluate.sample_file import SampleFile
from judgelab.evaluate.sequential import QUESTIONS, decide_best, per_system_level
from judgelab.evaluate.shrinkage import shrunk
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.limits import max_input_bytes, over_limit
from judgelab.metrics.align import items_of_one_kind, judge_value, judgments_by_item, select_judgments
from judgelab.metrics.ir import read_runs
from judgelab.metrics.results import json_number

ALL = "all"  # human_ids="all": every item's own human value is a label
#: Pairwise differences (and so rank intervals) are computed for up to this many systems: the table
#: grows as S(S-1)/2 per estimator (1,500 systems: 1.1 million pairs, which ran out of memory at 7.5 GB).
MAX_PAIRWISE_SYSTEMS = 200
#: The label-based estimators keep one covariance over systems per stratum (one stratum per system for
#: items), so their memory grows as S^3: about 0.4 GB at 300 systems, 27 GB at 1,500. Past this many
#: systems they are refused (the judge-only estimate needs no labels and has no such limit).
MAX_LABELLED_SYSTEMS = 300
#: Pointwise estimators hold tables of every item against every system (``Problem``: 8 bytes a cell, a
#: few such tables): one larger than the input bound (JUDGELAB_MAX_INPUT_BYTES, 128 MiB by default:
#: 16.7 million cells) is refused before it is built. 4,000 systems x 25 items each asked for 3 GB a table.
CELL_BYTES = 8


class _Fixing(TypedDict):
    """The settings of the corrected estimate, passed on together (``corrected(..., **fixing)``, ``worth``)."""

    calibration: str
    target: str
    variance: str
    folds: int
    seed: int
    confidence: float
    skewness_correction: bool
    intervals: str


def evaluate(items: Iterable[Item] | ComparisonTable, judgments: Iterable[Judgment], *, aspect: str | None = None,
             judge: str | None = None, human: Mapping[str, Any] | None = None,
             human_ids: Iterable[str] | str | None = None, sample: SampleFile | None = None,
             runs: str | Mapping[str, list] | None = None, measure: str = "nDCG@10", unjudged: str = "condense",
             calibration: str = "auto", target: str = "population", variance: str = "system", folds: int = 5,
             n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
             skewness_correction: bool = True, estimand: str = "win-prob", baseline: str | None = None,
             rank_method: str = "auto", bt_intervals: str = "sandwich", intervals: str = "auto",
             scale: tuple[float, float] | None = None, until_decided: str | None = None) -> SystemsReport:
    """Estimate every system's mean human score from a judge's verdicts and (optionally) a few labels.

    ``items``: pointwise items with ``system_id`` (or none: one system), or relevance items with
    ``runs`` (a folder of TREC run files or {name: ScoredDocs}). ``judgments``: the judge's
    verdicts (``judge`` picks one judge from several). Human labels: ``human`` {item id: value}
    (a labels file read by :func:`judgelab.data.labels.human_values`), or ``human_ids``: the ids
    (``"all"``: every item) whose own human score counts as a label. For IR a labelled unit is a
    query: ``human_ids`` lists query ids. ``sample``: the file ``judgelab sample`` wrote, which
    says how the labelled units were drawn (without it: a random sample within each system).
    See :mod:`judgelab.evaluate.estimators` for ``calibration``, and
    :mod:`judgelab.evaluate.design_variance` for ``target``, ``variance`` and
    ``skewness_correction``; :mod:`judgelab.evaluate.intervals` for ``intervals`` (``auto``: each
    system's own interval, t or betting, by a rule fixed in advance). ``scale``: the human values'
    ``(low, high)`` when the items do not declare it (betting intervals need it). ``until_decided``:
    ``"best"`` adds whether the labels so far, read in the order they were given, decide which system
    is best (:mod:`judgelab.evaluate.sequential`: confidence sequences, valid however long one labels).

    ``items`` may also be a :class:`~judgelab.evaluate.comparison_file.ComparisonTable` (comparisons and one
    judge's verdicts read from large files in one pass; ``judgments`` is then unused).

    Comparisons between systems (pairwise items with ``system_a``/``system_b``) go to
    :func:`judgelab.evaluate.comparison_items.evaluate_comparisons` with ``estimand``, ``baseline``,
    ``rank_method`` and ``bt_intervals`` (Bradley-Terry's ``sandwich`` or ``bootstrap`` intervals,
    ``n_resamples`` refits; docs/pairwise.md).
    """
    if isinstance(items, ComparisonTable):  # comparisons read from a large file in one pass (comparison_file.py)
        kind = "pairwise"
    else:
        items, kind = items_of_one_kind(items)
    if target not in TARGETS:  # checked here too: without labels no estimator would read it
        raise ConfigError(f"target {target!r}: choose {', '.join(TARGETS)}")
    if until_decided is not None and until_decided not in QUESTIONS:
        raise ConfigError(f"{term('until_decided')} {until_decided!r}: choose {', '.join(QUESTIONS)}")
    if kind == "pairwise":
        return _comparisons(items, judgments, judge=judge, human=human, human_ids=human_ids, estimand=estimand,
                            baseline=baseline, target=target, rank_method=rank_method, confidence=confidence, seed=seed,
                            sample=sample, bt_intervals=bt_intervals, n_resamples=n_resamples, intervals=intervals,
                            until_decided=until_decided)
    if estimand != "win-prob" or baseline is not None or rank_method != "auto" or bt_intervals != "sandwich":
        raise ConfigError(f"{term('estimand')}, {term('baseline')}, {term('rank_method')} and {term('bt_intervals')} "
                          "are for comparisons between "
                          "systems (items with system_a and system_b)")
    assert not isinstance(items, ComparisonTable)  # a table is comparisons: evaluated above
    built = built_problem(items, judgments, kind, aspect=aspect, judge=judge, human=human, human_ids=human_ids,
                          runs=runs, measure=measure, unjudged=unjudged, scale=scale,
                          without_runs="relevance items are evaluated per run")
    design = _design(built.problem, built.labelled, sample, built.notes.get("order"))
    n_systems = len(built.problem.systems)
    if design is not None and n_systems > MAX_LABELLED_SYSTEMS:
        raise ConfigError(f"{n_systems} systems: the estimates that use human labels (human, corrected) are computed "
                          f"for up to {MAX_LABELLED_SYSTEMS} systems (their covariance grows as the cube of the number "
                          "of systems); evaluate a subset of systems, or leave out the labels for judge-only estimates")
    estimates = {"judge": judge_only(built.problem, n_resamples=n_resamples, seed=seed, confidence=confidence)}
    recommended = None  # the estimator whose ranking to use, and why (evaluate/choose.py, evaluate/guided.py)
    judges = None  # a panel's judges: weight and worth in labels of each (evaluate/panel.py)
    decision = None
    if until_decided is not None and design is None:
        raise ConfigError(f"{term('until_decided')} needs the labels so far ({term('human')} or {term('human_ids')})")
    if design is not None:
        labelled_problem = built.problem.with_human(np.where(design.labelled[:, None], built.problem.human, np.nan))
        fixing: _Fixing = {"calibration": calibration, "target": target, "variance": variance, "folds": folds,
                           "seed": seed, "confidence": confidence, "skewness_correction": skewness_correction,
                           "intervals": intervals}
        recommended, judges = _with_labels(estimates, labelled_problem, design, fixing)
        if until_decided is not None:
            decision = _decide(labelled_problem, design, confidence=confidence, target=target, seed=seed)
    _keep_on_scale(estimates, built.problem.scale)
    pairs, pairs_omitted = _pairs(estimates, n_systems)
    labels = {"n_labelled": 0 if design is None else design.n_labelled,
              "design": None if design is None else design.method, "source": built.label_source,
              "unlabelled_sample_ids": built.notes.get("unlabelled_sample_ids", 0),
              "scale": None if built.problem.scale is None else list(built.problem.scale),
              "scale_from": built.notes.get("scale_from")}
    options = {"calibration": calibration, "target": target, "variance": variance, "folds": folds,
               "bootstrap": n_resamples, "seed": seed, "confidence": confidence,
               "skewness_correction": skewness_correction, "intervals": intervals}
    if kind == "relevance":
        options |= {"measure": measure, "unjudged": unjudged}
    return SystemsReport(built.problem.kind, built.aspect, built.measure, estimates, pairs, labels, built.coverage,
                         built.skipped, built.unjudged_share, options, pairs_omitted, recommended, decision, judges)


def _comparisons(items: list[Item] | ComparisonTable, judgments: Iterable[Judgment], *, until_decided: str | None,
                 bt_intervals: str, intervals: str, **options: Any) -> SystemsReport:
    """Comparisons between systems: :func:`judgelab.evaluate.comparison_items.evaluate_comparisons`."""
    if until_decided is not None:
        raise ConfigError(f"{term('until_decided')} is for pointwise items and runs; for comparisons, judgelab "
                          "compare --sequential decides between two systems")
    if not isinstance(items, ComparisonTable) and items[0].system_a is None:
        raise ConfigError("pairwise items without system_a/system_b compare two outputs, not systems; name the "
                          "systems compared (system_a, system_b) to rank them")
    from judgelab.evaluate.comparison_items import evaluate_comparisons

    return evaluate_comparisons(items, judgments, intervals=bt_intervals, system_intervals=intervals, **options)


def _with_labels(estimates: dict[str, SystemEstimates], labelled_problem: Problem, design: Design,
                 fixing: _Fixing) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Adds the estimates that use the labels to ``estimates`` (human, corrected, and shrunk for items or guided
    for runs); returns the recommended ranking and, for a panel, each judge's weight and worth."""
    estimates["human"] = human_only(labelled_problem, design, target=fixing["target"], variance=fixing["variance"],
                                    confidence=fixing["confidence"], skewness_correction=fixing["skewness_correction"],
                                    intervals=fixing["intervals"], seed=fixing["seed"])
    estimates["corrected"] = corrected(labelled_problem, design, labels_own=estimates["human"], **fixing)
    judges = None
    if labelled_problem.judges is not None:
        judges = worth(labelled_problem, design, estimates["human"], estimates["corrected"], **fixing)
    if labelled_problem.kind != "items":  # runs: the judge's order where the labels cannot contradict it (guided.py)
        estimates["guided"] = guided_ranking(estimates["corrected"], estimates["judge"])
        return {"estimator": "guided", "reason": "runs: the judge's order except where a corrected difference is "
                "significant (evaluate/guided.py)"}, judges
    # shrunk keeps the pooled variances it was built and measured with: a ranking model, whose intervals are
    # posterior ones, not per-system confidence intervals (shrinkage.shrunk)
    pooled_fixing: _Fixing = {**fixing, "variance": "pooled", "intervals": "t"}
    pooled = corrected(labelled_problem, design, **pooled_fixing)
    estimates["shrunk"] = shrunk(pooled, estimates["judge"].value)
    if not np.isfinite(estimates["shrunk"].value).any():
        return None, judges
    return choose_ranking(labelled_problem, design, estimates["judge"].value, seed=fixing["seed"],  # is shrunk's better?
                          calibration=estimates["corrected"].info["calibration"]).to_dict(), judges


def _pairs(estimates: dict[str, SystemEstimates], n_systems: int) -> tuple[dict[str, Any], str | None]:
    """Each estimator's pairwise differences, or why they are left out (too many systems)."""
    if n_systems <= MAX_PAIRWISE_SYSTEMS:
        # guided is a ranking, shrunk a model's point estimate: neither has tests that hold per pair
        return {name: pairwise(est) for name, est in estimates.items() if name not in ("guided", "shrunk")}, None
    return {}, (f"{n_systems} systems: pairwise differences and rank intervals are computed for up to "
                f"{MAX_PAIRWISE_SYSTEMS} systems ({n_systems * (n_systems - 1) // 2:,} pairs would not fit in memory); "
                "evaluate a subset of systems to compare them")


def _keep_on_scale(estimates: dict[str, SystemEstimates], scale: tuple[float, float] | None) -> None:
    """Every estimate of the human value, and its interval, clipped to the human scale: a value off it is
    never nearer the truth (a t interval at a few labels reaches past it; shrunk's trend can land below it).
    The judge's estimate stays on the judge's own scale."""
    if scale is None:
        return
    for name, est in estimates.items():
        if name in ("judge", "guided"):  # the judge's scale; guided's values are places in a ranking
            continue
        est.value[:] = np.clip(est.value, *scale)
        est.ci[:] = np.clip(est.ci, *scale)
        if "posterior_interval" in est.info:
            est.info["posterior_interval"] = [[json_number(min(max(v, scale[0]), scale[1])) if v is not None else None
                                               for v in pair] for pair in est.info["posterior_interval"]]


def _decide(problem: Problem, design: Design, *, confidence: float, target: str, seed: int) -> dict[str, Any]:
    """Which system is best, from each system's confidence sequence of its labels at a level that holds
    for all of them at once (evaluate/sequential.py: the labels' own, as a judge widens a sequence's
    range before it narrows its variance)."""
    level = per_system_level(confidence, len(problem.systems))
    own = human_only(problem, design, intervals="sequence", confidence=level, target=target, seed=seed)
    return decide_best(problem.systems, own.value, own.ci, own.n_labelled, level).to_dict()


@dataclass
class _Built:
    problem: Problem
    labelled: np.ndarray | None  # (U,) units with a human label, None without labels
    aspect: str | None
    coverage: dict[str, Any]
    label_source: str | None
    measure: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    unjudged_share: dict[str, float] | None = None
    notes: dict[str, Any] = field(default_factory=dict)


@overload
def _design(problem: Problem, labelled: np.ndarray, sample: SampleFile | None,
            order: np.ndarray | None = None) -> Design: ...
@overload
def _design(problem: Problem, labelled: np.ndarray | None, sample: SampleFile | None,
            order: np.ndarray | None = None) -> Design | None: ...
def _design(problem: Problem, labelled: np.ndarray | None, sample: SampleFile | None,
            order: np.ndarray | None = None) -> Design | None:
    if labelled is None:
        return None
    if sample is None or sample.probabilities is None or sample.method == "stratified":
        return stratified_design(problem, labelled, order)  # uniform within strata: n_h / N_h of the labels at hand
    probability = np.zeros(problem.n_units)
    probability[problem.index(sample.ids)] = sample.probabilities
    return recorded_design(problem, labelled, probability, sample.method)


def _aspect_of(items: list[Item], aspect: str | None) -> str | None:
    if aspect is not None:
        return aspect
    aspects = sorted({a for item in items for a in item.scores})
    if len(aspects) > 1:
        raise ConfigError(f"the items carry {len(aspects)} aspects ({', '.join(aspects)}); choose one with "
                          f"{term('aspect')}")
    return aspects[0] if aspects else None


def built_problem(items: list[Item], judgments: Iterable[Judgment], kind: str, *, aspect: str | None,
                  judge: str | None, human: Mapping[str, Any] | None, human_ids, runs, measure: str, unjudged: str,
                  scale: tuple[float, float] | None, without_runs: str) -> _Built:
    """The problem of pointwise items, or of relevance items with ``runs`` (a folder of TREC run files):
    relevance items without runs are refused with ``without_runs`` (what the caller does with them), and runs
    beside pointwise items."""
    if kind == "relevance":
        if runs is None:
            raise ConfigError(f"{without_runs}: give {term('runs')} (a folder of TREC run files)")
        return _query_problem(items, judgments, judge, human, human_ids, runs, measure, unjudged)
    if runs is not None:
        raise ConfigError(f"{term('runs')} scores TREC runs and needs relevance items (qid, docid)")
    return _item_problem(items, judgments, aspect, judge, human, human_ids, scale)


def _item_problem(items: list[Item], judgments: Iterable[Judgment], aspect: str | None, judge: str | None,
                  human: Mapping[str, Any] | None, human_ids, scale: tuple[float, float] | None = None) -> _Built:
    aspect = _aspect_of(items, aspect)
    named = [item.system_id is not None for item in items]
    if any(named) and not all(named):
        raise DataError(f"{named.count(False)} of {len(items)} items have no system_id; give every item one "
                        "(or none, to estimate one overall mean)")
    n_systems, bound = len({item.system_id for item in items}), max_input_bytes()
    if CELL_BYTES * n_systems * len(items) > bound:
        raise ConfigError(over_limit(f"{n_systems} systems x {len(items)} items: the table of every item against "
                                     f"every system ({CELL_BYTES * n_systems * len(items):,} bytes)", bound)
                          + "; evaluate a subset of the systems (judgelab sample needs no such table)")
    ids = {item.id for item in items}
    sets = panel(judgments, judge, aspect) if is_panel(judgments, judge) else None
    chosen = [one.judgments for one in sets] if sets else [select_judgments(judgments, aspect, judge)]
    found = [judgments_by_item(verdicts_of, ids) for verdicts_of in chosen]
    columns = np.array([[_verdict(by_item.get(item.id)) for item in items] for by_item, _ in found])
    verdicts, n_unknown = columns[0], found[0][1]
    own = np.array([_own_score(item, aspect) for item in items])
    declared = scale or _items_scale(items, aspect)
    problem = from_items([item.id for item in items], [item.system_id for item in items],
                         [item.group for item in items], verdicts, own, declared)
    if sets:
        stacked = np.full((*problem.judge.shape, len(sets)), np.nan)
        stacked[np.arange(problem.n_units), problem.strata] = columns.T
        problem = problem.with_judges(stacked, [one.name for one in sets])
    labelled, values, source, notes = _item_labels(problem, items, aspect, human, human_ids, own)
    if values is not None:
        matrix = np.full(problem.human.shape, np.nan)
        matrix[np.arange(problem.n_units), problem.strata] = values
        problem = problem.with_human(matrix)
    notes["scale_from"] = "--scale" if scale else "items" if declared else None
    if declared is not None and labelled is not None:
        _labels_inside(problem, labelled, declared, term("scale") if scale else "the items' scale")
    if declared is None and labelled is not None:
        inferred = inferred_scale(problem.human[labelled[:, None] & problem.present])
        if inferred is not None:
            problem = replace(problem, scale=inferred)
            notes["scale_from"] = "labels"
    grouped_by = sorted({item.grouped_by for item in items})
    coverage = {"units": len(items), "judged": int(np.isfinite(verdicts).sum()),
                "without_verdict": int((~np.isfinite(verdicts)).sum()), "unknown_judgments": n_unknown,
                "inputs": int(problem.clusters.max()) + 1, "inputs_from": "+".join(grouped_by)}
    if sets:
        coverage["judges"] = {one.name: {"judged": int(np.isfinite(column).sum()), "from": one.where,
                                         "unknown_judgments": unknown}
                              for one, column, (_, unknown) in zip(sets, columns, found, strict=True)}
    return _Built(problem, labelled, aspect, coverage, source, notes=notes)


def _labels_inside(problem: Problem, labelled: np.ndarray, scale: tuple[float, float], named: str) -> None:
    """Human labels outside the declared scale: a wrong scale (or wrong labels), which would leave every
    estimate clipped to it and a betting interval undefined; said before anything is computed."""
    units = np.flatnonzero(labelled)
    values = problem.human[units, problem.strata[units]]
    lo, hi = scale
    outside = np.isfinite(values) & ((values < lo) | (values > hi))
    if outside.any():
        first = units[np.argmax(outside)]
        raise ConfigError(f"{int(outside.sum())} human label(s) fall outside {named} {lo:g}..{hi:g} (e.g. "
                          f"{values[np.argmax(outside)]:g} for item {problem.units[first]!r}): give the labels' "
                          f"own range with {term('scale')} LOW,HIGH")


#: The rating scales read off labels, by their lowest value: 0-1, 0-4, 0-5, 0-10, 0-100, 1-3 ... 1-10.
SCALES_FROM = {0.0: (1.0, 4.0, 5.0, 10.0, 100.0), 1.0: (3.0, 4.0, 5.0, 6.0, 7.0, 9.0, 10.0)}
#: Fewer labels than this do not show a scale's ends (three labels 1, 2, 1 would read as a 1-2 scale).
MIN_LABELS_FOR_SCALE = 10


def inferred_scale(labels: np.ndarray) -> tuple[float, float] | None:
    """The rating scale the labels show when nothing declares one: at least 10 whole numbers whose lowest
    and highest are the ends of a usual scale (:data:`SCALES_FROM`). Else None: a scale cannot be read off
    continuous values, a few labels, or ones that do not start where scales start. A guess, so the output
    says it was made and how to give another (a 1-10 scale whose labels reached only 5 would read as 1-5)."""
    labels = labels[np.isfinite(labels)]
    if len(labels) < MIN_LABELS_FOR_SCALE or not np.all(labels == np.round(labels)):
        return None
    lo, hi = float(labels.min()), float(labels.max())
    return (lo, hi) if hi in SCALES_FROM.get(lo, ()) else None


def _items_scale(items: list[Item], aspect: str | None) -> tuple[float, float] | None:
    """The range the items declare for the aspect's human values (the widest, if they differ); None if
    any item declares none."""
    return widest_scale({item.aspect_scale(aspect) if aspect else item.scale for item in items})


def widest_scale(scales: set) -> tuple[float, float] | None:
    """The widest of the ranges the items declare; None if there are none or any item declares none."""
    if not scales or None in scales:
        return None
    return min(lo for lo, _ in scales), max(hi for _, hi in scales)


def _verdict(judgment: Judgment | None) -> float:
    if judgment is None or not judgment.ok:
        return np.nan
    value = judge_value(judgment, "pointwise")
    return np.nan if value is None else float(value)


def _own_score(item: Item, aspect: str | None) -> float:
    value = item.human_score(aspect) if aspect else None
    return np.nan if value is None else float(value)


def _item_labels(problem: Problem, items: list[Item], aspect: str | None, human, human_ids, own: np.ndarray):
    """(labelled items, their label values or None to keep the items' own scores, source, notes).

    With a labels mapping, ``human_ids`` is the sample the labels were drawn for: a label outside
    it breaks the design; a sampled item without a label is counted (taken as missing at random)."""
    if human is None and human_ids is None:
        return None, None, None, {}
    if human is not None:
        positions = problem.index(list(human))
        values = np.array([_number(human[i], i) for i in human])
        _check_scale(items, aspect, dict(zip(human, values, strict=True)))
        matrix = np.full(problem.n_units, np.nan)
        matrix[positions] = values
        labelled = np.isfinite(matrix)
        notes: dict[str, Any] = {"order": _order(problem.n_units, positions)}
        if human_ids is not None and human_ids != ALL:
            drawn = np.zeros(problem.n_units, dtype=bool)
            drawn[problem.index(list(human_ids))] = True
            outside = [problem.units[k] for k in np.flatnonzero(labelled & ~drawn)]
            if outside:
                raise DataError(f"{len(outside)} labelled item(s) are not in the sample the design describes "
                                f"(e.g. {', '.join(outside[:3])}); label the sampled items, or leave out the id list")
            notes["unlabelled_sample_ids"] = int((drawn & ~labelled).sum())
        return labelled, matrix, "labels file", notes
    notes = {}
    if human_ids == ALL:
        labelled = np.isfinite(own)
        if not labelled.any():  # "all" with nothing to find: say where labels were looked for, not judge-only
            looked = (f"for aspect {aspect!r} (looked for scores.{aspect} in each item)" if aspect is not None
                      else '(scores.ASPECT in each item, e.g. {"scores": {"overall": 4}})')
            raise DataError(f"{term('human_ids')} all: no item has a human score {looked}; give the labels with "
                            f"{term('human')}, or the items' scores")
    else:
        listed = problem.index(list(human_ids))
        labelled = np.zeros(problem.n_units, dtype=bool)
        labelled[listed] = True
        notes["order"] = _order(problem.n_units, listed)
        unscored = [problem.units[k] for k in np.flatnonzero(labelled & ~np.isfinite(own))]
        if unscored:
            raise DataError(f"{len(unscored)} listed item(s) have no human score for aspect {aspect!r} "
                            f"(e.g. {', '.join(unscored[:3])})")
    return labelled, None, "items' own scores", notes


def _order(n_units: int, positions: np.ndarray | Sequence[int]) -> np.ndarray:
    """Each unit's place in the order its label was given (inf: not labelled); a repeated id keeps its first."""
    order = np.full(n_units, np.inf)
    for place, unit in enumerate(positions):
        if not np.isfinite(order[unit]):
            order[unit] = place
    return order


def _number(value: Any, item_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value):
        raise DataError(f"human label {value!r} for item {item_id!r} is not a finite number")
    return float(value)


def _check_scale(items: list[Item], aspect: str | None, values: Mapping[str, float]) -> None:
    """Labels outside the items' declared scale come from another scale: refuse them."""
    by_id = {item.id: item for item in items}
    outside = []
    for item_id, value in values.items():
        scale = by_id[item_id].aspect_scale(aspect) if aspect else by_id[item_id].scale
        if scale is not None and not scale[0] <= value <= scale[1]:
            outside.append((item_id, value, scale))
    if outside:
        item_id, value, scale = outside[0]
        raise DataError(f"{len(outside)} human label(s) fall outside the items' scale for {aspect!r} "
                        f"(e.g. {value:g} for {item_id!r}, scale {scale[0]:g}-{scale[1]:g}): is the labels file on "
                        "another scale?")


def _query_problem(items: list[Item], judgments: Iterable[Judgment], judge: str | None, human, human_ids,
                   runs, measure: str, unjudged: str) -> _Built:
    runs = read_runs(runs) if not isinstance(runs, Mapping) else runs
    sets = panel(judgments, judge, "relevance") if is_panel(judgments, judge) else None
    chosen = sets[0].judgments if sets else select_judgments(judgments, "relevance", judge)
    judge_qrels, skipped_judgments = judgment_qrels(chosen, items)
    if not judge_qrels:
        raise DataError("no judgment gives a whole-number relevance label for these items: no judge qrels")
    queries = sorted({str(item.qid) for item in items})
    judge_scores = score_runs(runs, judge_qrels, queries, measure=measure, unjudged=unjudged)
    skipped = {name: f"no judged document in its top ranks ({judge_scores.measure})"
               for name in runs_without_judgments(judge_scores)}
    kept = {name: docs for name, docs in runs.items() if name not in skipped}
    if len(kept) < 2:
        raise DataError(f"{len(kept)} run(s) have judged documents in their top ranks; a leaderboard needs 2")
    if skipped:
        judge_scores = score_runs(kept, judge_qrels, queries, measure=measure, unjudged=unjudged)
    labelled_queries, human_qrels, source = _query_labels(items, human, human_ids, queries)
    human_values = np.full(judge_scores.values.shape, np.nan)
    if human_qrels:
        human_values = score_runs(kept, human_qrels, queries, measure=measure, unjudged=unjudged).values
    counts = judge_scores.measure.startswith("Num")  # NumRel, NumRet...: counts, not on [0, 1]
    problem = from_queries(queries, judge_scores.runs, judge_scores.values, human_values,
                           scale=None if counts else (0.0, 1.0))
    if sets:  # every judge's qrels score the same runs on the same queries
        problem = problem.with_judges(np.stack([judge_scores.values] + [
            _run_scores(one, items, kept, queries, measure, unjudged) for one in sets[1:]], axis=-1),
            [one.name for one in sets])
    labelled, notes = None, {}
    if labelled_queries is not None:
        wanted = set(labelled_queries)
        labelled = (np.array([q in wanted for q in queries], dtype=bool)  # no str array of the ids
                    & np.isfinite(human_values).any(axis=1))
        place = {q: k for k, q in enumerate(queries)}
        notes["order"] = _order(len(queries), [place[q] for q in labelled_queries if q in place])
    coverage = {"units": len(queries), "judged_pairs": len(judge_qrels), "items": len(items),
                "judgments_without_label": len(skipped_judgments)}
    share = dict(zip(judge_scores.runs, judge_scores.unjudged_share.tolist(), strict=True))
    return _Built(problem, labelled, "relevance", coverage, source, judge_scores.measure, skipped, share, notes)


def _run_scores(one, items: list[Item], runs, queries: list[str], measure: str, unjudged: str) -> np.ndarray:
    """(queries, runs) of the measure under one panel judge's qrels."""
    qrels, _ = judgment_qrels(one.judgments, items)
    if not qrels:
        raise DataError(f"{one.where}: no judgment of judge {one.name!r} gives a whole-number relevance label")
    return score_runs(runs, qrels, queries, measure=measure, unjudged=unjudged).values


def _query_labels(items: list[Item], human, human_ids, queries: list[str]):
    """(labelled query ids, human qrels of those queries, where the labels came from)."""
    from judgelab.metrics.ir import qrels_from_labels

    if human is None and human_ids is None:
        return None, [], None
    by_id = {item.id: item for item in items}
    if human is not None:
        unknown = [i for i in human if i not in by_id]
        if unknown:
            raise DataError(f"{len(unknown)} labelled id(s) are not items of the data: {', '.join(unknown[:5])}")
        pairs = [(by_id[i].qid, by_id[i].docid, human[i]) for i in human]
        source = "labels file"
    else:
        wanted = set(queries) if human_ids == ALL else set(map(str, human_ids))
        unknown = sorted(wanted - set(queries))
        if unknown:
            raise DataError(f"{len(unknown)} listed query id(s) are not queries of the data: {', '.join(unknown[:5])}")
        pairs = [(item.qid, item.docid, item.label) for item in items
                 if str(item.qid) in wanted and isinstance(item.label, int)]
        source = "items' own labels"
    qrels = qrels_from_labels(*zip(*pairs, strict=True)) if pairs else []
    given = list(dict.fromkeys(map(str, human_ids))) if human is None and human_ids != ALL else []
    # the queries in the order their labels were given (a confidence sequence reads them so)
    labelled = {str(q) for q, _, _ in pairs}
    return [q for q in dict.fromkeys(given + [str(q) for q, _, _ in pairs]) if q in labelled], qrels, source


__all__ = ["ALL", "SystemsReport", "evaluate"]
