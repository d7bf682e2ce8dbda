"""The verbs of ``import judgelab as jl``: thin glue over the deep modules, one verb per command.

Every keyword is the command-line option of the same name (``--human-ids`` is ``human_ids=``; ``--from``,
a Python keyword, is ``source=``). Data may be a file path, a pandas DataFrame, a :class:`~judgelab.data.Dataset`,
a list of ``Item``/``Judgment`` objects or dicts, or what another verb returned (``jl.load`` of another tool's
output holds items and judgments; ``jl.judge``'s run holds judgments; ``jl.sample``'s draw is a ``human_ids``).
Nothing heavy is imported before a verb runs.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from judgelab.errors import ConfigError, term

if TYPE_CHECKING:
    from judgelab.api.results import (
        Audit,
        Comparison,
        Evaluation,
        JudgeRun,
        LabelPlan,
        MetaEvaluation,
        Sample,
        Source,
        SpendPlan,
    )
    from judgelab.data.dataset import Dataset
    from judgelab.judges.base import JudgeConfig

#: The choices of the verbs' word options, spelled out for editors and type checkers (the library checks them
#: against its own lists: evaluate/calibrate.py CHOICES, design_variance.TARGETS, ...).
Calibration = Literal["auto", "isotonic", "linear", "identity", "stack"]
Target = Literal["population", "items"]
Variance = Literal["pooled", "system"]
Intervals = Literal["auto", "betting", "t", "sequence"]
Unjudged = Literal["condense", "nonrelevant"]
Estimand = Literal["win-prob", "bradley-terry", "baseline-win-rate"]
RankMethod = Literal["auto", "max-t", "bonferroni", "holm"]
GateEstimator = Literal["auto", "corrected", "human", "judge"]
Pairing = Literal["auto", "paired", "unpaired"]
#: ``judge``'s: a pointwise judge's score (judges/prompted.py ScoreMode) or a pairwise judge's (label, logprob)
Score = Literal["parsed", "logprob", "label"]
Reduce = Literal["mean", "sum", "min"]  # judges/likelihood.py Reduce
LikelihoodOf = Literal["output", "input"]  # judges/likelihood.py Direction
Engine = Literal["local", "ray"]  # runner/run.py ENGINES


class Note(UserWarning):
    """What a verb chose for its caller that the caller did not say (comparisons judged pairwise, an embedded
    model's default strategy): no problem, a note. The command line prints it as a plain line on stderr;
    ``warnings.filterwarnings("ignore", category=Note)`` silences it in Python."""


class OptionsRefused(ConfigError):
    """Options the judge takes none of; ``options``: them, named as the caller knows them (the command line
    adds the command to type without them)."""

    def __init__(self, message: str, options: Sequence[str]):
        super().__init__(message)
        self.options = list(options)


def load(data: Any, *, source: str | None = None, partial: bool = False) -> Dataset | Source:
    """Items from a file (JSONL, JSON, CSV, TSV, Parquet, optionally gzipped), a DataFrame or a list of
    dicts: a :class:`~judgelab.data.Dataset`. Another tool's output (``source``: inspect, promptfoo, lm-eval,
    deepeval, alpaca-eval, arena-hard, mt-bench; detected from the file when None): a :class:`Source`,
    its ``items`` and the ``judgments`` the tool's judges gave, which every other verb takes as data.
    ``partial``: read a run that did not finish (an Inspect log stopped mid-way) as far as it got."""
    from judgelab.data.given import as_items, is_path
    from judgelab.data.sources import detect_source, read_source

    if source is None and is_path(data):
        source = detect_source(data)
    if source is None:
        return as_items(data)
    if not is_path(data):
        raise TypeError(f"source={source!r} reads that tool's output file: give its path")
    from judgelab.api.results import Source, wrap

    read = read_source(data, source, partial=partial)
    _warn(read.source, read.notes)
    return wrap(Source, read)


def judge(data: Any, aspect: str | None = None, *, config: Any = None, method: str | None = None,
          family: str | None = None, task: str | None = None, criteria: str | None = None,
          strategy: str | None = None, score: Score | None = None, samples: int | None = None,
          temperature: float | None = None, reduce: Reduce | None = None, likelihood_of: LikelihoodOf | None = None,
          examples_from: Any = None, member: Mapping[str, str | Path] | None = None, model: str | None = None,
          model_name: str | None = None, out: str | Path | None = None, limit: int | None = None,
          stream: bool = False, chunk_size: int | None = None, cache: bool = True,
          cache_path: str | Path | None = None, concurrency: int | None = None, rpm: float | None = None,
          timeout: float | None = None, threads: int | None = None, price_in: float | None = None,
          price_out: float | None = None, engine: Engine = "local", workers: int | None = None,
          save_config: str | Path | None = None, progress: bool = False, source: str | None = None) -> JudgeRun:
    """Judge items with an LLM (``judgelab judge``): one :class:`~judgelab.data.Judgment` per item, and the
    agreement with the human labels the items carry.

    Before the model loads, the run is checked (the run folder, the options against the judge, a streamed
    file's ids) and what would waste its calls is warned of (a ``DataWarning``: no item has the input its
    outputs answer, or none has the human value the judge learns from). Comparisons (``output_a``/``output_b``)
    given neither ``config`` nor ``method`` are judged with the pairwise judge, said by a :class:`Note`.

    Args:
        data: the items: a file, a DataFrame, a list of dicts or items, a Dataset, another tool's output.
        source: the tool that wrote ``data`` (otel, mlflow, deepeval, inspect, ...): its items are judged;
            detected from the file when None, as :func:`load` does.
        aspect: what to rate (e.g. ``"coherence"``); a prompted judge needs it (or a config naming it).
        config: a judge config (a YAML/JSON file, a dict, or a config object such as an optimiser's best); else
            a default judge of kind ``method`` for ``aspect``, with the options below laid over either.
        method: the judge kind without a ``config`` (``prompted`` when None; ``pairwise``, ``likelihood``,
            ``trema``, ...).
        family: the task's wording: summarisation, dialogue, data2text, story, qa, relevance, generic, conversation.
        task: your task description (the generic family).
        criteria: your evaluation criteria text, or ``"@FILE"``: the text of that file.
        strategy: HPSS factors, e.g. ``"scale=10,cot=none,order=TD-IC-ER"``. With an embedded model, a judge
            built from options rates first and scores the expected rating under its probabilities unless
            ``strategy`` names ``cot`` or ``score`` is given (a :class:`Note` says so; ``.config`` shows it).
        score: ``parsed`` (the written rating) or ``logprob`` (the expected rating); a pairwise judge's
            ``label`` or ``logprob``.
        samples: self-consistency samples (with ``temperature`` > 0).
        temperature: the sampling temperature, 0 to 2.
        reduce: likelihood judge: ``mean`` (per token), ``sum`` or ``min`` of the output's token logprobs.
        likelihood_of: likelihood judge: score the ``output`` given the input, or the ``input`` given the output.
        examples_from: labelled items for in-context examples (default: ``data``).
        member: an ensemble's members' verdicts for this run, ``{member name: judgments file or run folder}``.
        model: an embedded preset (``qwen2.5-coder-1.5b`` by default, ``smollm2-135m``, ...), a ``.gguf`` path,
            ``openai:<model>`` or a server's base URL with ``model_name``.
        model_name: the model's name on an OpenAI-compatible server.
        out: a run folder (rerun into it to resume; it gets a report.html).
        limit: judge only the first N items.
        stream: read, judge and write in chunks, memory flat in the number of items: ``data`` is a JSON-lines
            file and ``out`` is needed; the run then holds no ``items``.
        chunk_size: items per chunk with ``stream`` (default 1000).
        cache: use the completion cache (what makes reruns resume).
        cache_path: the cache file (default ~/.cache/judgelab/cache.sqlite).
        concurrency: calls to a server in flight at once, 1 to 256.
        rpm: requests per minute at most.
        timeout: seconds one request attempt to a server may take.
        threads: the embedded model's threads, 1 to 256.
        price_in: USD per million prompt tokens, for the cost.
        price_out: USD per million completion tokens.
        engine: ``local`` (this process) or ``ray`` (a Ray cluster: RAY_ADDRESS, else a local one).
        workers: Ray workers (default: the cluster's CPUs).
        save_config: also write the judge config used here, once the run has finished (a failed run writes none).
        progress: show a progress bar.

    Returns:
        A :class:`~judgelab.JudgeRun`: ``judgments``, ``counts``, ``usage``, ``metrics``, ``folder``, ``config``.

    Raises:
        ArgumentError: a number out of its range (a ``ValueError``), before anything is read.
        ConfigError: options that cannot be used together, before the model loads.
        DataError: bad input, naming the file, the line and the field.
    """
    from judgelab.api.results import JudgeRun, wrap
    from judgelab.data.given import as_items
    from judgelab.files import text_or_file
    from judgelab.judges.options import judge_config_from_options
    from judgelab.limits import checked_arguments
    from judgelab.llm.resolve import client_from_options
    from judgelab.runner.run import check_out_folder, run_judge

    checked_arguments(samples=("Samples", samples), temperature=("Temperature", temperature), limit=("Count", limit),
                      chunk_size=("Count", chunk_size), concurrency=("Concurrency", concurrency), rpm=("Positive", rpm),
                      timeout=("Seconds", timeout), threads=("Threads", threads), price_in=("NonNegative", price_in),
                      price_out=("NonNegative", price_out), workers=("Count", workers))
    if out is not None:
        check_out_folder(out)  # before anything is loaded: a wrong folder costs nothing
    items, first = _items_to_judge(data, limit, stream, source)
    pointwise = {"aspect": aspect, "family": family, "task": task, "criteria": criteria, "strategy": strategy,
                 "score": score, "samples": samples, "reduce": reduce, "likelihood_of": likelihood_of,
                 "examples_from": examples_from}
    method = _judge_method(first, data, config, method, [name for name, value in pointwise.items() if value is not None])
    judge_config = judge_config_from_options(config, method, aspect, family=family, task=task,
                                             criteria=criteria and text_or_file(criteria), strategy=strategy, score=score, samples=samples, temperature=temperature,
                                             reduce=reduce, likelihood_of=likelihood_of)
    judge_config = _with_members(judge_config, member)
    judge_config = _embedded_default(judge_config, model, config is None, strategy, score)
    pool = list(as_items(examples_from)) if examples_from is not None else None
    _check_items(first, judge_config, data, pool)  # warnings before the model loads and the first call is paid
    with client_from_options(model or judge_config.model, model_name, cache, cache_path, concurrency, rpm, price_in,
                             price_out, uses_llm=judge_config.uses_llm, timeout=timeout, threads=threads) as client:
        pooled: dict[str, Any] = {"examples_pool": pool} if pool is not None else {}
        result = run_judge(judge_config, items if stream else list(items), client, out, data_path=_named(data),
                           show_progress=progress, engine=engine, workers=workers,
                           chunk_size=(chunk_size or 1000) if stream else None, **pooled)
    if save_config is not None:  # only now: bad input anywhere (data, examples, model, run folder) leaves no file
        _save_config(judge_config, save_config)
    return wrap(JudgeRun, result, items=None if stream else items, config=judge_config)


def _items_to_judge(data: Any, limit: int | None, stream: bool, source: str | None = None):
    """The items to judge (a stream: an iterator over the file), and those the checks before the run look at
    (a stream: its first 1000). A streamed file's duplicate id anywhere is refused before any call is paid."""
    from judgelab.data.given import as_items, is_path

    if not stream:
        items = as_items(load(data, source=source))
        items = items[:limit] if limit else items
        return items, items
    if not is_path(data):
        raise TypeError("stream=True reads a JSON-lines file as it judges: give its path")
    if source is not None:
        from judgelab.errors import ConfigError, term

        raise ConfigError(f"{term('stream')} reads judgelab's own JSON lines; {term('source')} {source} reads another "
                          "tool's file whole: give one of them")
    from itertools import islice

    from judgelab.data.stream import check_ids, head, iter_items

    streamed = islice(iter_items(data), limit) if limit else iter_items(data)
    check_ids(data, limit or None)
    return streamed, head(data, min(limit or 1000, 1000))


def _judge_method(items, data: Any, config: Any, method: str | None, pointwise: list[str]) -> str | None:
    """``method``, or ``pairwise`` for comparisons given neither a config nor a method (a :class:`Note` says
    so). Options only a pointwise judge takes are refused then, as :class:`OptionsRefused`."""
    detected = config is None and method is None and bool(items) and all(item.kind == "pairwise" for item in items)
    where = _named(data) or term("data")
    if not (detected or method == "pairwise") or not pointwise:
        if detected:
            warnings.warn(Note(f"{where}: pairwise items (output_a, output_b): judged with the pairwise judge, as "
                               f"{_setting('method', 'pairwise')} does"), stacklevel=3)
        return "pairwise" if detected else method
    what = ("holds pairwise items (output_a, output_b)" if detected
            else f"is judged with {_setting('method', 'pairwise')}")
    names = [term(name) for name in pointwise]
    raise OptionsRefused(f"{where} {what}: the pairwise judge asks which output better follows the instruction and "
                         f"takes no {', '.join(names)}", names)


def _with_members(judge_config: JudgeConfig, member: Mapping[str, str | Path] | None) -> JudgeConfig:
    """``member``: each named member of an ensemble reads its verdicts from the file given for it."""
    if not member:
        return judge_config
    from judgelab.judges.ensemble import EnsembleJudge

    if not isinstance(judge_config, EnsembleJudge):
        raise ConfigError(f"{term('member')} rebinds an ensemble's members; this judge is of kind "
                          f"{judge_config.kind!r}")
    for name, path in member.items():
        judge_config = judge_config.with_member_file(name, Path(path))
    return judge_config


def _embedded_default(judge_config: JudgeConfig, model: str | None, from_options: bool, strategy: str | None,
                      score: str | None) -> JudgeConfig:
    """The embedded models' default (the rating first, from the probabilities), said by a :class:`Note`."""
    from judgelab.judges.options import with_embedded_default

    judge_config, applied = with_embedded_default(judge_config, model, from_options=from_options, strategy=strategy,
                                                  score=score)
    if applied:
        warnings.warn(Note("embedded model: the judge rates first and the score is the expected rating under its "
                           f"probabilities (cot=none, {_setting('score', 'logprob')}; docs/judges.md). For HPSS's "
                           f"MT-Bench start, an explanation first: {_setting('strategy', 'cot=prefix')} "
                           f"{_setting('score', 'parsed')}"), stacklevel=3)
    return judge_config


def _check_items(items, judge_config: JudgeConfig, data: Any, pool: list | None = None) -> None:
    """Warn, before the model loads, of a run that would waste its calls: no item has the input its
    outputs answer (a file naming it otherwise), or none has the human value the judge learns from
    (in-context examples) or that its aspect suggests (the items carry scores, for other aspects)."""
    from judgelab.data.fields import PROMPT_FIELD, text_columns
    from judgelab.errors import DataWarning
    from judgelab.metrics.align import no_human_values

    items = list(items)
    if not items:
        return
    where, kind = _named(data) or term("data"), items[0].kind
    if not any(item.prompt for item in items):
        columns = list(dict.fromkeys(name for item in items for name in text_columns(item)))
        held = f" (text the file holds under {', '.join(columns[:5])} goes unread)" if columns else ""
        then = ("the pairwise judge shows it, so each comparison will be an error" if judge_config.kind == "pairwise"
                else f"each {'passage' if kind == 'relevance' else 'output'} is judged without it (or is an error "
                "where the judge's prompt needs it)")
        warnings.warn(f"{where}: no item has {PROMPT_FIELD[kind]!r}, the input each output answers: {then}{held}",
                      DataWarning, stacklevel=3)
    aspect = getattr(judge_config, "aspect", None)
    learns = bool(getattr(getattr(judge_config, "strategy", None), "examples", 0))
    labelled = pool if learns and pool is not None else items
    missing = no_human_values(labelled, aspect) if aspect or kind == "pairwise" else None
    if missing and (learns or any(item.scores for item in labelled)):
        what = "the in-context examples are drawn from them" if learns else "the run will have no agreement figures"
        named = f"the {term('examples_from')} items" if labelled is pool else where
        warnings.warn(f"{named}: {missing}; {what}", DataWarning, stacklevel=3)


def _save_config(judge_config: JudgeConfig, path: str | Path) -> None:
    try:
        judge_config.save(path)
    except OSError as exc:
        raise ConfigError(f"{term('save_config')} {path}: cannot write: {exc.strerror or exc}") from exc


def _setting(name: str, value: str) -> str:
    """An option set to ``value`` as the caller writes it: ``--method pairwise``, or ``method='pairwise'``."""
    flag = term(name)
    return f"{flag} {value}" if flag != name else f"{name}={value!r}"


def meta(data: Any, judgments: Any = None, *, source: str | None = None, partial: bool = False,
         aspect: str | None = None, preset: str | None = None, levels: str | Sequence[str] | None = None,
         runs: Any = None, field: str | None = None, judge: str | None = None, baseline: Any = None,
         baseline_field: str | None = None, baseline_judge: str | None = None, ties: Literal["half", "wrong"] = "half",
         bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95,
         alpha_level: Literal["ordinal", "nominal", "interval"] = "ordinal", human: Any = None,
         out: str | Path | None = None, card: str | Path | None = None) -> MetaEvaluation:
    """How well a judge agrees with the human labels (``judgelab meta``): correlations at the dataset, group
    and system levels, label agreement, pairwise accuracy, an IR leaderboard (``runs``: a folder of TREC runs),
    each with a group-bootstrap interval.

    ``judgments``: the judge's verdicts (a judgments file or run folder, a DataFrame, a list, ``jl.judge``'s
    run); without them, ``data`` is another tool's output (``source``; ``partial``: read a run that did not
    finish). ``preset``: how a paper reports (aeollm, llmjudge, hpss, active-critic). ``levels``:
    ``"dataset,group,system"`` or a list. ``baseline``: another judge's verdicts, for judge-minus-baseline
    differences (paired bootstrap). ``human``: a labels file whose labels replace the items' human values
    (``.human_labels``: its annotators and how far they agree). ``out``: also write a report folder. ``card``:
    also write the judge's card to this folder (``.card``, ``.card_path``; docs/cards.md)."""
    from judgelab.api.results import MetaEvaluation, wrap
    from judgelab.errors import ConfigError, term
    from judgelab.limits import checked_arguments
    from judgelab.metrics import meta_evaluate
    from judgelab.metrics.align import require_human_values
    from judgelab.metrics.bootstrap import check_resamples
    from judgelab.metrics.evaluate import check_meta_options

    checked_arguments(bootstrap=("Resamples", bootstrap), seed=("Seed", seed), confidence=("Coverage", confidence))
    if bootstrap:  # 0: no intervals
        check_resamples(bootstrap, confidence, term("bootstrap"))
    check_meta_options(ties, alpha_level)  # before any input is read
    if out is not None:
        from judgelab.report import check_meta_folder

        check_meta_folder(out)  # before the statistics: a refused folder costs nothing
    if isinstance(levels, str):
        levels = [part.strip() for part in levels.split(",") if part.strip()] or None
    if (baseline_field or baseline_judge) and baseline is None:
        raise ConfigError(f"{term('baseline_field')} and {term('baseline_judge')} describe the {term('baseline')} "
                          f"file: give {term('baseline')} too")
    items, judged, source = _inputs(data, judgments, source, field, partial)
    labels_file = None
    if human is not None:
        from judgelab.metrics.annotators import relabelled_by_file

        items, aspect, labels_file = relabelled_by_file(list(items), human, aspect, seed)
    require_human_values(list(items), aspect, _named(data))  # named with the file, before any statistics
    other = None
    if baseline is not None:
        from judgelab.data.given import as_judgments

        other = as_judgments(baseline, field=baseline_field)
    report = meta_evaluate(items, judged, aspect=aspect, preset=preset, judge=judge, levels=levels, runs=runs,
                           n_resamples=bootstrap, seed=seed, confidence=confidence, alpha_level=alpha_level,
                           baseline=other, baseline_judge=baseline_judge, ties=ties)
    result = wrap(MetaEvaluation, report, human_labels=labels_file)
    built = None
    if card is not None:
        from judgelab.report.card import build_card, write_card

        built = build_card(items, judged, aspect=aspect, judge=judge, judgments_file=_named(judgments),
                           meta=result.to_dict())
        result = dataclasses.replace(result, card=built, card_path=write_card(card, built))
    if out is not None:
        from judgelab.report import write_meta_report

        options = {"aspect": aspect, "human": _named(human), "preset": preset, "level": levels, "runs": _named(runs),
                   "field": field, "from": source, "judge": judge, "baseline": _named(baseline),
                   "baseline_field": baseline_field, "baseline_judge": baseline_judge, "ties": ties,
                   "bootstrap": bootstrap, "seed": seed, "alpha_level": alpha_level}
        write_meta_report(out, items, judged, result, data=_named(data), judgments_file=_named(judgments),
                          options=options, card=built)  # the card shown in the report beside the agreement
    return result


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


def audit(data: Any, judgments: Any = None, *, source: str | None = None, partial: bool = False,
          field: str | None = None, swapped_field: str | None = None, judge: str | None = None, human: Any = None,
          family: str | None = None, baseline: str | None = None, probes: str | Sequence[str] | None = None,
          config: Any = None, model: str | None = None, model_name: str | None = None, limit: int | None = None,
          cache: bool = True, cache_path: str | Path | None = None, concurrency: int | None = None,
          timeout: float | None = None, bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95,
          card: str | Path | None = None) -> Audit:
    """A pairwise judge's biases, each with an interval (``judgelab audit``): position (flip rate with both
    orders; first-position rate against the humans'), ties, verbosity, self-preference (``family``: the judge's
    model family as it appears in system names), each system's raw and length-controlled win rate against
    ``baseline``. ``data``: comparisons (``output_a``/``output_b``, ``label`` the human verdict), or another
    tool's output (``partial``: a run that did not finish); ``judgments``: the judge's verdicts (both orders from
    a pairwise run; published layouts with ``field``/``swapped_field``). ``human``: a labels file replacing the
    items' verdicts. ``probes``: run ``swap``, ``pad``, ``reformat`` with a pairwise judge (``config``,
    ``model``) on the first ``limit`` items. ``card``: also write the figures into this judge's card (the folder
    ``meta(..., card=...)`` wrote; refused when it is another judge's), its ``biases`` section (docs/cards.md)."""
    from judgelab.api.results import Audit
    from judgelab.audit import audit as audit_verdicts
    from judgelab.audit.probes import probe_names, probe_run
    from judgelab.data.sources import SourceData
    from judgelab.errors import ConfigError, term
    from judgelab.limits import checked_arguments
    from judgelab.metrics.bootstrap import check_resamples

    checked_arguments(bootstrap=("Resamples", bootstrap), seed=("Seed", seed), confidence=("Coverage", confidence),
                      limit=("Count", limit), concurrency=("Concurrency", concurrency), timeout=("Seconds", timeout))
    check_resamples(bootstrap, confidence, term("bootstrap"))  # its intervals are percentile ones
    tool_output = source is not None or isinstance(data, SourceData)
    if tool_output and probes:
        raise ConfigError(f"{term('probes')} judges judgelab comparison items (JSON lines); {term('source')} reads "
                          "another tool's verdicts")
    if judgments is None and not probes and not tool_output:
        source = _detected(data)
        tool_output = source is not None
        if not tool_output:
            raise ConfigError(f"give {term('judgments')} (a judge's verdicts) or {term('probes')} (run the probes), or "
                              f"both; or {term('source')} when {term('data')} is another tool's output")
    if (config is not None or model is not None) and not probes:
        raise ConfigError(f"{term('config')} and {term('model')} are for the probes: give {term('probes')} "
                          "swap,pad,reformat")
    names = probe_names(probes, term("probes"))
    comparisons, verdicts = _audit_inputs(data, judgments, source if tool_output else None, field, swapped_field,
                                          judge, partial)
    if human is not None:
        from judgelab.audit import read_human_labels

        comparisons = read_human_labels(human, comparisons)
    report = None
    if verdicts is not None:
        report = audit_verdicts(verdicts, comparisons, family=family, baseline=baseline, n_resamples=bootstrap,
                                seed=seed, confidence=confidence)
    found = {}
    if names:
        found = probe_run(data, names, config=config, limit=limit, confidence=confidence, model=model,
                          model_name=model_name, cache=cache, cache_path=cache_path, concurrency=concurrency,
                          timeout=timeout)
    if card is not None:
        from judgelab.report.card import add_biases

        add_biases(card, {"audit": None if report is None else report.to_dict(),
                          "probes": {name: result.to_dict() for name, result in found.items()}},
                   judge=judge or (report.judge if report is not None else None), judgments_file=_named(judgments))
    return Audit.of(report, found, len(comparisons), confidence)


def _detected(data: Any) -> str | None:
    """The tool whose output ``data`` is (a path only), or None."""
    from judgelab.data.given import is_path
    from judgelab.data.sources import detect_source

    return detect_source(data) if is_path(data) else None


def _audit_inputs(data: Any, judgments: Any, source: str | None, field: str | None, swapped_field: str | None,
                  judge: str | None, partial: bool):
    """(the comparisons, the judge's verdicts or None): from judgelab's comparison items, or another tool's
    output (its judge's verdicts, both orders where it judged both); ``judgments`` replaces the verdicts."""
    from judgelab.audit import read_comparisons, read_verdicts
    from judgelab.audit.inputs import comparisons_of, verdicts_of
    from judgelab.data.given import as_items, as_judgments, is_path
    from judgelab.data.sources import SourceData
    from judgelab.errors import ConfigError, term

    verdicts = None
    if source is not None or isinstance(data, SourceData):
        if judgments is None and (field or swapped_field):
            raise ConfigError(f"{term('field')} and {term('swapped_field')} say where a judgments file keeps its "
                              f"verdicts; {source} output has none to read that way: choose among its judges with "
                              f"{term('judge')}")
        items, judged, _ = _inputs(data, None, source, None, partial)
        comparisons = comparisons_of(items)
        if judgments is None:
            verdicts = verdicts_of(judged, judge, _named(data))
    else:
        comparisons = read_comparisons(data) if is_path(data) else comparisons_of(as_items(data))
    if verdicts is None and judgments is not None:
        verdicts = (read_verdicts(judgments, field=field, swapped_field=swapped_field, judge=judge) if is_path(judgments)
                    else verdicts_of(as_judgments(judgments), judge))
    return comparisons, verdicts


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


# -- glue the verbs share ---------------------------------------------------------------------------------
def _inputs(data: Any, judgments: Any, source: str | None, field: str | None, partial: bool = False):
    """Items and verdicts as the commands read them (judgelab.data.sources.read_inputs), and the tool whose
    output they were (as named, or detected); a reader's notes become warnings."""
    from judgelab.data.sources import read_inputs

    inputs = read_inputs(data, judgments, source, field=field, partial=partial)
    _warn(inputs.source, inputs.notes)
    return inputs.items, inputs.judgments, inputs.source


def _warn(source: str | None, notes: Iterable[str]) -> None:
    from judgelab.errors import SourceNote

    for note in notes:
        warnings.warn(SourceNote(source, note), stacklevel=4)


def _human(human: Any, items, aspect: str | None) -> tuple[Mapping[str, Any] | None, str | None]:
    """``human=``: ``{item id: value}`` as it is, or a labels file (or list of labels) read for these items."""
    if human is None or isinstance(human, Mapping):
        return human, aspect
    from judgelab.data.labels import values_for_items

    return values_for_items(human, items, aspect)


def _human_ids(human_ids: Any, name: str = "human_ids"):
    """``human_ids=``: ``"all"``, a sample file, a drawn sample (its probabilities weight the labels), or ids.
    ``name``: the argument, as a refusal names it (``exclude`` of :func:`sample` takes the same ids but no "all")."""
    from judgelab.data.given import is_path
    from judgelab.evaluate import ALL, SampleFile, read_sample

    if human_ids is None or (name == "human_ids" and isinstance(human_ids, str) and human_ids == ALL):
        return human_ids, None
    if is_path(human_ids):
        if not Path(human_ids).exists():
            raise _ids_refused(name, human_ids, "no such file; ")
        human_ids = read_sample(human_ids)
    if isinstance(human_ids, SampleFile):
        return human_ids.ids, human_ids
    if not isinstance(human_ids, Iterable):  # human_ids=5, meant as a count
        raise _ids_refused(name, human_ids)
    return [str(unit) for unit in human_ids], None


def _ids_refused(name: str, value: Any, problem: str = ""):
    """The ConfigError for ids given in a form ``name`` does not take, naming the forms it does take."""
    from judgelab.errors import ConfigError

    text = str(value)
    count = text if text.isascii() and text.isdigit() and int(text) > 0 else "20"  # human_ids=5: meant as a count?
    forms = ("the ids (a list, or a file with one id per line) or jl.sample's draw" if name == "exclude" else
             f'"all" (every item\'s own human score is a label), the ids (a list, or a file with one id per line) '
             f"or jl.sample's draw (jl.sample(data, {count}) draws {count} to label)")
    return ConfigError(f"{name}={value!r}: {problem}give {forms}")


def _scale(scale: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if scale is None else (float(scale[0]), float(scale[1]))


def _named(value: Any) -> str | None:
    """A path as the report records it; data given as objects is recorded as given in Python."""
    from judgelab.data.given import is_path

    return str(value) if is_path(value) else None


def _named_files(value: Any) -> str | list[str] | None:
    """:func:`_named`, and several judges' files as the list of their paths (evaluate's report names each)."""
    from judgelab.data.given import is_path

    if isinstance(value, (list, tuple)) and value and all(is_path(one) for one in value):
        return [str(one) for one in value]
    return _named(value)


