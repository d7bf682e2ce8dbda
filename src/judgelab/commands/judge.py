"""`judgelab judge`: run a judge over a data file into a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgelab.commands._common import (
    CONCURRENCY_HELP,
    THREADS_HELP,
    TIMEOUT_HELP,
    client_from_options,
    print_run,
)
from judgelab.commands._numbers import checked
from judgelab.errors import ConfigError
from judgelab.llm.models import MODEL_STRING_HELP

if TYPE_CHECKING:
    from judgelab.judges.base import JudgeConfig


def register(app: typer.Typer) -> None:
    app.command("judge")(judge)


def judge(
    data: Path = typer.Option(..., "--data", "-d", help="Items to judge (JSONL, CSV, Parquet)."),
    aspect: str | None = typer.Option(None, "--aspect", "-a", help="What to rate (e.g. coherence)."),
    config: Path | None = typer.Option(None, "--config", "-c", help="A judge config (YAML/JSON), e.g. from an optimiser."),
    method: str | None = typer.Option(None, "--method", help="Judge kind when no --config is given (default: prompted); see `judgelab fit --help`."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP),
    model_name: str | None = typer.Option(None, "--model-name", help="Model name on an OpenAI-compatible server."),
    family: str | None = typer.Option(None, "--family", help="Task wording: summarisation, dialogue, data2text, story, qa, relevance, generic."),
    task: str | None = typer.Option(None, "--task", help="Your task description (generic family)."),
    criteria: str | None = typer.Option(None, "--criteria", help="Your evaluation criteria text, or @FILE."),
    strategy: str | None = typer.Option(None, "--strategy", help="HPSS factors, e.g. 'scale=10,cot=none,order=TD-IC-ER'."),
    score: str | None = typer.Option(None, "--score", help="parsed (the written rating) or logprob (expected rating); default parsed, logprob on an embedded model without --config or a cot in --strategy."),
    reduce: str | None = typer.Option(None, "--reduce", help="Likelihood judge: mean (per token), sum or min of the output's token logprobs."),
    likelihood_of: str | None = typer.Option(None, "--likelihood-of", help="Likelihood judge: score the output given the input (output, GPTScore) or the input given the output (input; for relevance the query given the passage, UPR)."),
    samples: int | None = typer.Option(None, "--samples", callback=checked("Samples"), help="Self-consistency samples (with --temperature > 0)."),
    temperature: float | None = typer.Option(None, "--temperature", callback=checked("Temperature")),
    examples_from: Path | None = typer.Option(None, "--examples-from", help="Labelled items for in-context examples (default: --data)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Run folder (rerun into it to resume)."),
    limit: int | None = typer.Option(None, "--limit", callback=checked("Count"), help="Judge only the first N items."),
    concurrency: int | None = typer.Option(None, "--concurrency", callback=checked("Concurrency"), help=CONCURRENCY_HELP),
    rpm: float | None = typer.Option(None, "--rpm", callback=checked("Positive"), help="Requests per minute limit."),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    threads: int | None = typer.Option(None, "--threads", callback=checked("Threads"), help=THREADS_HELP),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Use the completion cache (what makes reruns resume)."),
    cache_path: Path | None = typer.Option(None, "--cache-path", help="Cache file (default ~/.cache/judgelab/cache.sqlite)."),
    price_in: float | None = typer.Option(None, "--price-in", callback=checked("NonNegative"), help="USD per 1M prompt tokens, for cost accounting."),
    price_out: float | None = typer.Option(None, "--price-out", callback=checked("NonNegative"), help="USD per 1M completion tokens."),
    save_config: Path | None = typer.Option(None, "--save-config", help="Also write the judge config used here (once the run has finished)."),
    engine: str = typer.Option("local", "--engine", help="local (this process) or ray (a Ray cluster: RAY_ADDRESS, else a local one)."),
    workers: int | None = typer.Option(None, "--workers", callback=checked("Count"), help="Ray workers (default: the cluster's CPUs)."),
    stream: bool = typer.Option(False, "--stream", help="Read, judge and write in chunks (JSON lines): memory stays flat in the number of items."),
    chunk_size: int | None = typer.Option(None, "--chunk-size", callback=checked("Count"), help="Items per chunk with --stream (default 1000)."),
    member: list[str] | None = typer.Option(None, "--member", help="Ensemble configs: NAME=FILE reads member NAME's "
                                            "verdicts from FILE (a judgments file or run folder) for this run; repeatable."),
) -> None:
    """Judge items with an LLM and compare with the human labels they carry."""
    from judgelab.commands._common import console
    from judgelab.data import load_items
    from judgelab.runner.run import check_out_folder, run_judge

    if out is not None:
        check_out_folder(out)  # before anything is loaded: a wrong --out costs nothing
    if stream:
        from itertools import islice

        from judgelab.data.stream import check_ids, head, iter_items

        items = islice(iter_items(data), limit) if limit else iter_items(data)
        check_ids(data, limit or None)  # a duplicate id anywhere is refused before the model loads and any call is paid
        sample = head(data, min(limit or 1000, 1000))  # what the checks below look at: the first items
    else:
        items = load_items(data)
        if limit:
            items = items[:limit]
        sample = items
    pointwise_options = {"--aspect": aspect, "--family": family, "--task": task, "--criteria": criteria,
                         "--strategy": strategy, "--score": score, "--samples": samples, "--reduce": reduce,
                         "--likelihood-of": likelihood_of, "--examples-from": examples_from}
    method = _method_for(sample, data, config, method, [name for name, value in pointwise_options.items() if value is not None])
    judge_config = judge_config_from_options(config, method, aspect, family=family, task=task, criteria=_text_or_file(criteria),
                                 strategy=strategy, score=score, samples=samples, temperature=temperature,
                                 reduce=reduce, likelihood_of=likelihood_of)
    judge_config = rebind_members(judge_config, member or [])
    judge_config = _embedded_default(judge_config, model, config, strategy, score)
    pool = list(load_items(examples_from)) if examples_from else None
    check_items(sample, judge_config, data, pool)  # warnings before the model loads and the first call is paid
    with client_from_options(model or judge_config.model, model_name, cache, cache_path, concurrency, rpm,
                             price_in, price_out, uses_llm=judge_config.uses_llm, timeout=timeout,
                             threads=threads) as client:
        options = {"examples_pool": pool} if pool is not None else {}
        try:
            result = run_judge(judge_config, items if stream else list(items), client, out, data_path=str(data),
                               show_progress=True, engine=engine, workers=workers,
                               chunk_size=(chunk_size or 1000) if stream else None, **options)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (errors.Terminated)
            from judgelab.commands._common import err_console

            if out is not None and not Path(out).exists():  # nothing finished: the run took its new folder back
                err_console.print(f"interrupted before any judgment was finished: nothing was written ({out} was "
                                  "not kept); rerun the same command to start")
            else:
                where = f"kept in {out}; rerun the same command to resume" if out else "lost: no --out folder"
                err_console.print(f"interrupted: the judgments finished so far are {where}")
            raise SystemExit(getattr(exc, "exit_code", 130)) from None  # typer would return the KeyboardInterrupt
    if save_config:  # only now: bad input anywhere (data, examples, model, run folder) leaves no file behind
        _save(judge_config, save_config)
    print_run(console, result)
    _fail_if_nothing_judged(result)


def _embedded_default(judge_config: JudgeConfig, model: str | None, config: Path | None, strategy: str | None,
                      score: str | None) -> JudgeConfig:
    """The embedded models' default (the rating first, from the probabilities), said on stderr when applied."""
    from judgelab.commands._common import err_console
    from judgelab.judges.options import with_embedded_default

    judge_config, applied = with_embedded_default(judge_config, model, from_options=config is None,
                                                  strategy=strategy, score=score)
    if applied:
        err_console.print("embedded model: the judge rates first and the score is the expected rating under its "
                          "probabilities (cot=none, --score logprob; docs/judges.md). For HPSS's MT-Bench start, an "
                          "explanation first: --strategy cot=prefix --score parsed", highlight=False, soft_wrap=True)
    return judge_config


def _method_for(items, data: Path, config: Path | None, method: str | None, pointwise: list[str]) -> str | None:
    """``--method``, or ``pairwise`` for a file of comparisons given neither a config nor a method: they
    are judged pairwise, as ``--method pairwise`` does. Options only a pointwise judge takes are refused
    then (exit 2), with the command to type."""
    from rich.markup import escape

    from judgelab.commands._common import err_console

    detected = config is None and method is None and bool(items) and all(item.kind == "pairwise" for item in items)
    if not (detected or method == "pairwise") or not pointwise:
        if detected:
            err_console.print(f"{escape(str(data))}: pairwise items (output_a, output_b): judged with the pairwise judge, "
                              "as --method pairwise does", highlight=False, soft_wrap=True)
        return "pairwise" if detected else method
    what = "holds pairwise items (output_a, output_b)" if detected else "is judged with --method pairwise"
    raise ConfigError(f"{data} {what}: the pairwise judge asks which output better follows the instruction and takes "
                      f"no {', '.join(pointwise)}; run: {_command_without(pointwise)}")


def _command_without(options: list[str]) -> str:
    """This command as typed, without ``options`` and their values (``--aspect x``, ``--aspect=x``, ``-a x``)."""
    import shlex
    import sys

    names = set(options) | ({"-a"} if "--aspect" in options else set())
    kept, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
        elif arg.partition("=")[0] in names:
            skip = "=" not in arg
        elif not (arg.startswith("-a") and not arg.startswith("--") and "-a" in names):  # -acoherence
            kept.append(arg)
    return " ".join(["judgelab", *map(shlex.quote, kept)])


def check_items(items, judge_config: JudgeConfig, data: Path, pool: list | None = None) -> None:
    """Warn, before the model loads, of a run that would waste its calls: no item has the input its
    outputs answer (a file naming it otherwise), or none has the human value the judge learns from
    (in-context examples) or that its aspect suggests (the items carry scores, for other aspects)."""
    import warnings

    from judgelab.data.fields import PROMPT_FIELD, text_columns
    from judgelab.errors import DataWarning
    from judgelab.metrics.align import no_human_values

    items = list(items)
    if not items:
        return
    kind = items[0].kind
    if not any(item.prompt for item in items):
        columns = list(dict.fromkeys(name for item in items for name in text_columns(item)))
        held = f" (text the file holds under {', '.join(columns[:5])} goes unread)" if columns else ""
        then = ("the pairwise judge shows it, so each comparison will be an error" if judge_config.kind == "pairwise"
                else f"each {'passage' if kind == 'relevance' else 'output'} is judged without it (or is an error "
                "where the judge's prompt needs it)")
        warnings.warn(f"{data}: no item has {PROMPT_FIELD[kind]!r}, the input each output answers: {then}{held}",
                      DataWarning, stacklevel=2)
    aspect = getattr(judge_config, "aspect", None)
    learns = bool(getattr(getattr(judge_config, "strategy", None), "examples", 0))
    labelled = pool if learns and pool is not None else items
    missing = no_human_values(labelled, aspect) if aspect or kind == "pairwise" else None
    if missing and (learns or any(item.scores for item in labelled)):
        what = "the in-context examples are drawn from them" if learns else "the run will have no agreement figures"
        where = "the --examples-from items" if labelled is pool else str(data)
        warnings.warn(f"{where}: {missing}; {what}", DataWarning, stacklevel=2)


def _fail_if_nothing_judged(result) -> None:
    """Exit 1 when every item ended in an error (a missing field, every request refused): a run that
    judged nothing is no success. Some errors among judged items keep exit 0, counted in the summary."""
    from rich.markup import escape

    from judgelab.commands._common import err_console

    judgments = result.judgments
    if not len(judgments) or result.counts["error"] < len(judgments):
        return
    reason = next((j.reason for j in judgments if j.reason), "no reason recorded")
    err_console.print(f"[bold red]error:[/] every item ended in an error ({len(judgments)} of {len(judgments)}), e.g. "
                      f"{escape(reason)}", highlight=False, soft_wrap=True)
    raise SystemExit(1)


def judge_config_from_options(config: Path | None, method: str | None, aspect: str | None, **overrides) -> JudgeConfig:
    """The config file if given (else a default judge of kind ``method``), with command-line options laid over it
    (:func:`judgelab.judges.options.judge_config_from_options`, imported when a command builds its judge)."""
    from judgelab.judges.options import judge_config_from_options as build

    return build(config, method, aspect, **overrides)


def rebind_members(judge_config: JudgeConfig, specs: list[str]) -> JudgeConfig:
    """``--member NAME=FILE`` for each spec: an ensemble's member reads its verdicts from FILE."""
    if not specs:
        return judge_config
    from judgelab.judges.ensemble import EnsembleJudge

    if not isinstance(judge_config, EnsembleJudge):
        raise ConfigError(f"--member rebinds an ensemble's members; this judge is of kind {judge_config.kind!r}")
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--member {spec!r}: give NAME=FILE (a member's name and a judgments file)")
        judge_config = judge_config.with_member_file(name, Path(path))
    return judge_config


def _save(judge_config: JudgeConfig, path: Path) -> None:
    try:
        judge_config.save(path)
    except OSError as exc:
        raise ConfigError(f"--save-config {path}: cannot write: {exc.strerror or exc}") from exc


def _text_or_file(value: str | None) -> str | None:
    from judgelab.files import text_or_file

    return value and text_or_file(value)
