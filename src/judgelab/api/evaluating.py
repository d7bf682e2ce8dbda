"""The verbs on systems (:mod:`judgelab.api.verbs` re-exports them, and says how every verb takes its data):
``jl.evaluate`` (a leaderboard with intervals), ``jl.compare`` (is the candidate worse than the baseline?),
``jl.sample`` (which items to label), and the two planners, ``jl.plan_labels`` (how many labels an interval
this wide needs) and ``jl.plan_spend`` (which judges to run and how many labels a budget buys).
Nothing heavy is imported before a verb runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from judgelab.api.options import (
    Calibration,
    Estimand,
    GateEstimator,
    Intervals,
    Pairing,
    RankMethod,
    Target,
    Unjudged,
    Variance,
    _human,
    _human_ids,
    _inputs,
    _named,
    _named_files,
    _scale,
)
from judgelab.errors import ConfigError, term

if TYPE_CHECKING:
    from judgelab.api.results import Comparison, Evaluation, LabelPlan, Sample, SpendPlan


def evaluate(data: Any, judgments: Any = None, *, source: str | None = None, partial: bool = False,
             aspect: str | None = None,
             judge: str | None = None, field: str | None = None, human: Any = None, human_ids: Any = None,
             runs: Any = None, measure: str = "nDCG@10", unjudged: Unjudged = "condense", calibration: Calibration = "auto",
             target: Target = "population", variance: Variance = "system", intervals: Intervals = "auto",
             scale: tuple[float, float] | None = None, until_decided: Literal["best"] | None = None,
             skewness_correction: bool = True, bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95,
             estimand: Estimand = "win-prob", baseline: str | None = None, rank_method: RankMethod = "auto",
             bt_intervals: Literal["sandwich", "bootstrap"] = "sandwich", out: str | Path | None = None,
             style_control: bool = False, ties: Literal["half", "davidson"] = "half",
             style_intervals: Literal["sandwich", "bootstrap"] = "sandwich") -> Evaluation:
    """Which system is better, and how sure (``judgelab evaluate``): each system's estimate judge-only, human-only
    on the labelled units, corrected (prediction-powered) and shrunk, with per-system intervals, rank intervals
    and Holm-corrected pairwise tests (docs/evaluate.md, docs/pairwise.md).

    Args:
        data: pointwise items with ``system_id``, relevance items with ``runs``, or comparisons between systems
            (``system_a``, ``system_b``); a file, a list of dicts or items, a DataFrame, or another tool's output.
        judgments: the judge's verdicts (a file or run folder, a list, ``jl.judge``'s run), or a list of several
            judges' for one estimate from all of them; None when ``data`` is another tool's output.
        source: the tool that wrote ``data`` (``inspect``, ``promptfoo``, ...; detected when None).
        partial: read a tool's run that did not finish (an Inspect log without its header), saying so; without
            it such a run is refused.
        aspect: the aspect scored (default: the only one).
        judge: which judge of a file holding several (a list: several in one estimate).
        field: the judgments' field holding the verdict (published layouts: ``"prediction"``).
        human: a labels file (or ``{item id: value}``) whose labels count.
        human_ids: ``"all"`` (every item's own human score is a label), or the ids whose labels count (a list,
            a sample file, or ``jl.sample``'s draw, whose inclusion probabilities then weight the labels).
        runs: relevance items: a folder of TREC run files (or ``{name: ScoredDocs}``).
        measure: relevance items: the measure per query (``nDCG@10``, an ir_measures name).
        unjudged: relevance items: documents without a qrels label are dropped (``condense``) or count as
            not relevant (``nonrelevant``).
        calibration: the map from the judge's scale to the humans' for the corrected estimate.
        target: the value for outputs like these (``population``) or for exactly these (``items``).
        variance: each system's own variance (``system``) or one pooled over systems.
        intervals: each system's interval: ``auto`` (t or betting by a rule fixed in advance), ``betting``,
            ``t``, ``sequence`` (valid however long one keeps labelling).
        scale: the human scores' range, e.g. ``(1, 5)``, when the items declare none.
        until_decided: ``"best"``: also whether the labels so far decide which system is best.
        skewness_correction: with t intervals, centre them by Johnson's correction for skewed labels.
        bootstrap: resamples for the judge-only intervals (and for ``bt_intervals="bootstrap"``); 0: none.
        seed: seed of the bootstrap, the folds and the draws.
        confidence: the intervals' coverage, in (0, 1).
        estimand: comparisons: ``win-prob``, ``bradley-terry``, or ``baseline-win-rate`` (with ``baseline``).
        baseline: comparisons: the system whose win rate against the others ``baseline-win-rate`` estimates.
        rank_method: comparisons: how the simultaneous rank sets are made.
        bt_intervals: comparisons, Bradley-Terry: ``sandwich`` or ``bootstrap`` intervals.
        style_control: comparisons with ``output_a``/``output_b``: also the style-controlled Bradley-Terry fits
            (length and markdown covariates, their coefficients, Kendall tau against the plain ranking), in
            ``.style`` (docs/evaluate.md, "Style control and ties").
        ties: comparisons: ``half`` (a tie is half a win, the leaderboard's) or also ``davidson``'s tie model.
        style_intervals: the style fits' intervals: ``sandwich`` (cluster-robust by question when comparisons
            share one: ``group_id``) or ``bootstrap`` (``bootstrap`` resamples of the questions, else of the
            comparisons, each refitted). Rank sets on the style-controlled strengths either way.
        out: also write a report folder (systems.json, systems.csv, pairs.csv, report.html).

    Returns:
        An :class:`~judgelab.Evaluation` (``.to_pandas()``, ``.ranks(estimator)``, ``.to_dict()``; an HTML view
        in Jupyter).

    Raises:
        ArgumentError: a number out of its range (a ``ValueError``), before anything is read.
        DataError: bad input, naming the file, the line and the field.
    """
    from judgelab.api.results import Evaluation
    from judgelab.errors import term
    from judgelab.evaluate import evaluate as run_evaluate
    from judgelab.evaluate.comparison_file import read_comparison_table
    from judgelab.limits import checked_arguments
    from judgelab.metrics.bootstrap import check_resamples

    checked_arguments(bootstrap=("Resamples", bootstrap), seed=("Seed", seed), confidence=("Coverage", confidence))

    if bootstrap:
        check_resamples(bootstrap, confidence, term("bootstrap"))
    if out is not None:
        from judgelab.report.systems import check_systems_folder

        check_systems_folder(out)
    # comparisons between systems in a JSON-lines file: read in one pass, a few fields a row (comparison_file.py)
    styled = style_control or ties != "half"  # reads the responses' texts: the items themselves, not the table
    if style_intervals != "sandwich" and not style_control:
        raise ConfigError(f"--style-intervals {style_intervals} is for the style-controlled fits: add --style-control")
    table = (read_comparison_table(data, judgments, judge=judge, field=field)
             if out is None and source is None and not styled else None)
    items, judged, source = (table, [], None) if table is not None else _inputs(data, judgments, source, field,
                                                                                 partial)
    labels, aspect = _human(human, items if table is None else table.rows, aspect)
    ids, sample_file = _human_ids(human_ids)
    style = None
    if styled:  # first: a comparison without its texts is refused before anything is estimated or written
        from judgelab.evaluate.style import style_for_items

        style = style_for_items(items, judged, judge=judge, human=labels, human_ids=ids, sample=sample_file,
                                style_control=style_control, ties=ties, target=target, confidence=confidence,
                                intervals=style_intervals, n_resamples=bootstrap, rank_method=rank_method, seed=seed,
                                where=_named(data)).to_dict()
    report = run_evaluate(items, judged, aspect=aspect, judge=judge, human=labels, human_ids=ids, sample=sample_file,
                          runs=runs, measure=measure, unjudged=unjudged, calibration=calibration, target=target,
                          variance=variance, n_resamples=bootstrap, seed=seed, confidence=confidence,
                          skewness_correction=skewness_correction, estimand=estimand, baseline=baseline,
                          rank_method=rank_method, bt_intervals=bt_intervals, intervals=intervals,
                          scale=_scale(scale), until_decided=until_decided)
    if style is not None:
        from dataclasses import replace

        from judgelab.evaluate.preferences import PreferenceReport

        assert isinstance(report, PreferenceReport)  # style_for_items refused items that are not comparisons
        report = replace(report, style=style)
    if out is not None:
        from judgelab.report.systems import write_systems_report

        options = {"aspect": aspect, "judge": judge, "field": field, "from": source, "human": _named(human),
                   "human_ids": _named(human_ids), "runs": _named(runs), **report.options}
        write_systems_report(out, items, judged, report, data=_named(data), judgments_file=_named_files(judgments),
                             options=options)
    return Evaluation.of(report)



def compare(data: Any, judgments: Any = None, *, baseline: str, candidate: str, margin: float = 0.0,
            alpha: float = 0.05, higher_is_better: bool = True, estimator: GateEstimator = "auto", pairing: Pairing = "auto",
            source: str | None = None, aspect: str | None = None, judge: str | None = None, field: str | None = None,
            human: Any = None, human_ids: Any = None, calibration: Calibration = "auto", target: Target = "population",
            bootstrap: int = 1000, seed: int = 0, sequential: bool = False, fail_undecided: bool = False) -> Comparison:
    """Is the ``candidate`` system worse than the ``baseline`` (``judgelab compare``)? ``candidate - baseline``
    with its ``1 - alpha`` interval, paired on the inputs both answer (``group_id``), corrected with the human
    labels when there are some (``human``, ``human_ids`` as in :func:`evaluate`); ``.passed`` is False only when
    the candidate is significantly worse by more than ``margin``. ``sequential``: labels gathered in rounds
    (confidence sequences). ``fail_undecided``: ``.passed`` only when the interval shows the candidate no worse
    than ``margin`` (a non-inferiority test: an interval too wide to tell fails, as ``"undecided"``).
    ``.plan(regression)``: labels needed to catch a regression of that size."""
    from judgelab.api.results import Comparison, wrap
    from judgelab.evaluate.two_systems import compare_systems
    from judgelab.limits import checked_arguments

    checked_arguments(margin=("NonNegative", margin), alpha=("ErrorRate", alpha), bootstrap=("Resamples", bootstrap),
                      seed=("Seed", seed))

    items, judged, _ = _inputs(data, judgments, source, field)
    labels, aspect = _human(human, items, aspect)
    ids, sample_file = _human_ids(human_ids)
    result = compare_systems(items, judged, baseline=baseline, candidate=candidate, margin=margin, alpha=alpha,
                             higher_is_better=higher_is_better, estimator=estimator, pairing=pairing, aspect=aspect,
                             judge=judge, human=labels, human_ids=ids, sample=sample_file, calibration=calibration,
                             target=target, n_resamples=bootstrap, seed=seed, sequential=sequential,
                             fail_undecided=fail_undecided)
    return wrap(Comparison, result)



def sample(data: Any, budget: float, *, judgments: Any = None, aspect: str | None = None, judge: str | None = None,
           field: str | None = None, active: bool = False, mix: float = 0.5, exclude: Any = None, seed: int = 0,
           out: str | Path | None = None) -> Sample:
    """Which units to label (``judgelab sample``): ``budget`` of them (a count, or a fraction such as 0.1),
    stratified by system (comparisons: by pair of systems; relevance items: queries), or ``active``: favouring
    those the judge is least sure of (``judgments`` with an uncertainty: logprob scores, several samples, both
    orders), ``mix`` of each probability kept uniform. ``exclude``: ids already labelled (a list or a sample
    file). The draw is the ``human_ids`` of :func:`evaluate` and :func:`compare` once labelled; ``out`` (or
    ``.write(path)``) writes it as the sample file the command line reads."""
    from judgelab.api.results import Sample
    from judgelab.data.given import (
        as_items,
        as_judgments,
        judgments_by_judge,
        named_by_where,
        several_judgments,
    )
    from judgelab.data.item import VERDICTS
    from judgelab.evaluate.sampling import draw_sample
    from judgelab.limits import checked_arguments

    checked_arguments(budget=("Positive", budget), mix=("Mix", mix), seed=("Seed", seed))

    items = as_items(data)
    judged = None
    if judgments is not None:  # comparisons: a verdict outside a/b/tie is named with its line
        labels = VERDICTS if items[0].kind == "pairwise" else None
        judged = (named_by_where(judgments_by_judge(judgments, field=field, labels=labels))
                  if several_judgments(judgments) else as_judgments(judgments, field=field, labels=labels))
    excluded = _human_ids(exclude, "exclude")[0] if exclude is not None else None
    drawn_sample, drawn, units = draw_sample(items, budget, judged, aspect=aspect, judge=judge, active=active, mix=mix,
                                             exclude=excluded, seed=seed)
    result = Sample.of(drawn_sample, drawn, units)
    if out is not None:
        result.write(out)
    return result



def plan_labels(data: Any, judgments: Any, width: float, *, human: Any = None, human_ids: Any = None,
                aspect: str | None = None, judge: str | None = None, field: str | None = None,
                runs: Any = None, seed: int = 0) -> LabelPlan:
    """How many labels each system needs for intervals ``width`` wide (``judgelab sample --plan``), human-only
    and corrected, from how well the judge predicts the labels so far.

    Args:
        data: pointwise items with ``system_id``, or relevance items with ``runs``, as :func:`evaluate` takes them.
        judgments: the judge's verdicts (a file or run folder, a list, ``jl.judge``'s run; a list of several).
        width: the full width of the intervals wanted, on the labels' scale (e.g. 0.3 on a 1-5 scale).
        human: a labels file (or ``{item id: value}``) whose labels count.
        human_ids: ``"all"``, the ids whose labels count, a sample file or ``jl.sample``'s draw.
        aspect: the aspect scored (default: the only one).
        judge: which judge of a file holding several (a list: several in one estimate).
        field: the judgments' field holding the verdict.
        runs: relevance items: a folder of TREC run files.
        seed: seed of the folds.

    Returns:
        A :class:`~judgelab.api.results.LabelPlan`: ``needed`` per estimator and system, ``totals()``,
        ``n_labelled``, ``to_pandas()``.
    """
    from judgelab.api.results import LabelPlan, wrap
    from judgelab.evaluate import evaluate as run_evaluate
    from judgelab.evaluate.plan import plan_labels as plan_widths
    from judgelab.limits import checked_arguments

    checked_arguments(seed=("Seed", seed))
    planning = term("plan_labels()", "--plan")
    if judgments is None:
        raise ConfigError(f"{planning} needs the judge's verdicts ({term('judgments')}) and some labels "
                          f"({term('human')} or {term('human_ids')})")
    if human is None and human_ids is None:
        raise ConfigError(f"{planning} needs the labels so far ({term('human')} or {term('human_ids')}): it measures "
                          "how well the judge predicts them")
    items, judged, _ = _inputs(data, judgments, None, field)
    labels, aspect = _human(human, items, aspect)
    ids, sample_file = _human_ids(human_ids)
    report = run_evaluate(items, judged, aspect=aspect, judge=judge, human=labels, human_ids=ids, sample=sample_file,
                          runs=runs, n_resamples=0, seed=seed)
    return wrap(LabelPlan, plan_widths(report, width), n_labelled=report.labels["n_labelled"], kind=report.kind)



def plan_spend(data: Any, judgments: Any, budget: float, *, judge_costs: Mapping[str, float] | None = None,
               label_cost: float | None = None, human: Any = None, human_ids: Any = None, aspect: str | None = None,
               judge: str | None = None, field: str | None = None, runs: Any = None, measure: str = "nDCG@10",
               seed: int = 0) -> SpendPlan:
    """What ``budget`` buys (``judgelab sample --spend``): which judges to run on every unit and how many units
    to label for the narrowest intervals, predicted from a pilot (the judges' verdicts and the labels so far).

    Args:
        data: pointwise items with ``system_id``, relevance items with ``runs``, or comparisons between systems.
        judgments: the judges' verdicts on the pilot (a file or run folder, a list; a list of several judges').
        budget: the money to spend, in the unit of ``judge_costs`` and ``label_cost``.
        judge_costs: each judge's cost per unit judged, ``{judge name (or its start): price}`` (0 for one already
            run); one for every judge. Runs: per query-document pair judged.
        label_cost: the cost of one human label (runs: of one query-document pair; a labelled query costs its
            pairs, and serves every run).
        human: a labels file (or ``{item id: value}``) whose labels count.
        human_ids: ``"all"``, the ids whose labels count, a sample file or ``jl.sample``'s draw.
        aspect: the aspect scored (default: the only one).
        judge: which judge of a file holding several (a list: several).
        field: the judgments' field holding the verdict.
        runs: relevance items: a folder of TREC run files (each run is a system, scored with ``measure``).
        measure: runs: the ir_measures measure (default nDCG@10).
        seed: seed of the pilot's resamples.

    Returns:
        A :class:`~judgelab.api.results.SpendPlan`: ``options`` (narrowest first), ``best``, ``next_money``,
        ``left_out``, ``to_pandas()``, ``draw(seed=...)`` (the ids to label, as :func:`sample`'s result).

    Raises:
        ConfigError: a missing cost or pilot, or a budget that buys no plan with 10 labels a system.
    """
    from judgelab.api.results import SpendPlan, wrap
    from judgelab.evaluate.spend import plan_spend_for
    from judgelab.limits import checked_arguments

    checked_arguments(seed=("Seed", seed))
    spending = term("budget", "--spend")
    if judgments is None or label_cost is None or not judge_costs:
        raise ConfigError(f"{term('plan_spend()', '--spend')} needs the judges' verdicts on a pilot "
                          f"({term('judgments')}, {term('human')}/{term('human_ids')}), {term('judge_costs')} "
                          f"NAME=PRICE for each judge and {term('label_cost')} PRICE")
    items, judged, _ = _inputs(data, judgments, None, field)
    labels, aspect = _human(human, items, aspect)
    ids, sample_file = _human_ids(human_ids)
    plan = plan_spend_for(items, judged, budget=budget, judge_costs=dict(judge_costs), label_cost=label_cost,
                          aspect=aspect, judge=judge, human=labels, human_ids=ids, sample=sample_file, seed=seed,
                          runs=runs, measure=measure)
    if plan.best is None:
        what, why = (("10 labelled queries", f"a query's pairs at {term('label_cost')} {label_cost:g}") if
                     plan.unit == "queries" else ("10 labels a system", f"{len(plan.systems)} systems"))
        raise ConfigError(f"{spending} {budget:g} buys no plan with {what} ({why}: at least {plan.least_spend:.4g} in "
                          "labels alone)")
    return wrap(SpendPlan, plan, items=tuple(items))
