"""The verbs on a judge (:mod:`judgelab.api.verbs` re-exports them, and says how every verb takes its data):
``jl.load`` (items, or another tool's output), ``jl.judge`` (run a judge on them, with the checks and the
defaults a run needs), ``jl.meta`` (how far the judge agrees with humans) and ``jl.audit`` (a pairwise judge's
biases). Nothing heavy is imported before a verb runs.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from judgelab.api.options import (
    Engine,
    LikelihoodOf,
    Note,
    OptionsRefused,
    Reduce,
    Score,
    _inputs,
    _named,
    _warn,
)
from judgelab.errors import ConfigError, term

if TYPE_CHECKING:
    from judgelab.api.results import Audit, JudgeRun, MetaEvaluation, Source
    from judgelab.data.dataset import Dataset
    from judgelab.judges.base import JudgeConfig


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
