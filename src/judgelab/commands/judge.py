"""`judgelab judge`: run a judge over a data file into a run folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgelab.commands._common import (
    CONCURRENCY_HELP,
    FROM_HELP,
    THREADS_HELP,
    TIMEOUT_HELP,
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
    family: str | None = typer.Option(None, "--family", help="Task wording: summarisation, dialogue, data2text, story, qa, relevance, generic, conversation."),
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
    source: str | None = typer.Option(None, "--from", help=FROM_HELP),
    stream: bool = typer.Option(False, "--stream", help="Read, judge and write in chunks (JSON lines): memory stays flat in the number of items."),
    chunk_size: int | None = typer.Option(None, "--chunk-size", callback=checked("Count"), help="Items per chunk with --stream (default 1000)."),
    member: list[str] | None = typer.Option(None, "--member", help="Ensemble configs: NAME=FILE reads member NAME's "
                                            "verdicts from FILE (a judgments file or run folder) for this run; repeatable."),
) -> None:
    """Judge items with an LLM and compare with the human labels they carry."""
    from judgelab.api.verbs import Note, OptionsRefused
    from judgelab.api.verbs import judge as judge_items
    from judgelab.commands._common import console, notes_printed

    members = _members(member or [])
    try:
        with notes_printed(Note):  # what the verb chose for us (pairwise, the embedded default), said plainly
            result = judge_items(data, aspect, config=config, method=method, family=family, task=task,
                                 criteria=criteria, strategy=strategy, score=score, samples=samples,
                                 temperature=temperature, reduce=reduce, likelihood_of=likelihood_of,
                                 examples_from=examples_from, member=members, model=model, model_name=model_name,
                                 out=out, limit=limit, stream=stream, chunk_size=chunk_size, cache=cache,
                                 cache_path=cache_path, concurrency=concurrency, rpm=rpm, timeout=timeout,
                                 threads=threads, price_in=price_in, price_out=price_out, engine=engine,
                                 workers=workers, save_config=save_config, progress=True, source=source)
    except OptionsRefused as exc:  # the command to type instead
        raise ConfigError(f"{exc}; run: {_command_without(exc.options)}") from None
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (errors.Terminated)
        from judgelab.commands._common import err_console

        if out is not None and not Path(out).exists():  # nothing finished: the run took its new folder back
            err_console.print(f"interrupted before any judgment was finished: nothing was written ({out} was "
                              "not kept); rerun the same command to start")
        else:
            where = f"kept in {out}; rerun the same command to resume" if out else "lost: no --out folder"
            err_console.print(f"interrupted: the judgments finished so far are {where}")
        raise SystemExit(getattr(exc, "exit_code", 130)) from None  # typer would return the KeyboardInterrupt
    print_run(console, result)
    _fail_if_nothing_judged(result)


def _members(specs: list[str]) -> dict[str, str]:
    """``--member NAME=FILE`` for each spec, as ``{NAME: FILE}``."""
    members = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--member {spec!r}: give NAME=FILE (a member's name and a judgments file)")
        members[name] = path
    return members


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


def _text_or_file(value: str | None) -> str | None:
    from judgelab.files import text_or_file

    return value and text_or_file(value)
