"""`judgelab optimize METHOD`: search judge configs on dev items into a resumable run folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from judgelab.commands._common import (
    HUMAN_HELP,
    TIMEOUT_HELP,
    client_from_options,
    human_labelled,
    key_values,
)
from judgelab.commands._numbers import checked
from judgelab.commands.judge import judge_config_from_options
from judgelab.errors import ConfigError
from judgelab.llm.models import MODEL_STRING_HELP
from judgelab.optimize.names import DEFAULT_MIN_COVERAGE, METHOD_SUMMARIES, OBJECTIVES

if TYPE_CHECKING:
    from judgelab.optimize.base import OptimizeResult


def register(app: typer.Typer) -> None:
    app.command("optimize")(optimize_command)


def optimize_command(
    method: str = typer.Argument(..., help=f"Search method: {', '.join(METHOD_SUMMARIES)}."),
    data: Path = typer.Option(..., "--data", "-d", help="Dev items with human labels (JSONL, CSV, Parquet)."),
    aspect: str = typer.Option(..., "--aspect", "-a", help="The human score to agree with (e.g. naturalness)."),
    budget: int = typer.Option(..., "--budget", "-b", callback=checked("Count"), help="Evaluations on the dev items (HPSS paper: 71)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder; rerun the same command into it to resume."),
    test: Path | None = typer.Option(None, "--test", help="Held-out items: the best and the start config are scored on them."),
    human: Path | None = typer.Option(None, "--human", help=HUMAN_HELP + " For --data and --test; only labelled items are used."),
    objective: str = typer.Option("spearman", "--objective", help=f"What to maximise: {', '.join(OBJECTIVES)}."),
    min_coverage: float = typer.Option(DEFAULT_MIN_COVERAGE, "--min-coverage", callback=checked("Fraction"), help="A config's objective is undefined when fewer than this share of the dev items get a usable rating."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP),
    model_name: str | None = typer.Option(None, "--model-name", help="Model name on an OpenAI-compatible server."),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed"), help="Seed of the search (and of LLM proposals)."),
    config: Path | None = typer.Option(None, "--config", "-c", help="Start judge config (YAML/JSON); default: the MT-Bench strategy."),
    strategy: str | None = typer.Option(None, "--strategy", help="Start strategy factors, e.g. 'scale=3' (a dataset's native scale)."),
    family: str | None = typer.Option(None, "--family", help="Task wording: summarisation, dialogue, data2text, story, qa, relevance, generic, conversation."),
    task: str | None = typer.Option(None, "--task", help="Your task description (generic family)."),
    criteria: str | None = typer.Option(None, "--criteria", help="Start criteria text (what ape/rewrite optimise), or @FILE."),
    option: list[str] = typer.Option([], "--option", "-O", help="Optimiser setting KEY=VALUE, repeatable (e.g. -O rho=0 -O lam=2); see docs/optimize.md."),
    space: list[str] = typer.Option([], "--space", help="Confine a strategy search to some values of a factor, FACTOR=V1,V2; repeatable (e.g. --space cot=none,suffix --space scale=3,5,10)."),
    max_calls: int | None = typer.Option(None, "--max-calls", callback=checked("Count"), help="Also stop once this many paid LLM calls were made."),
    max_cost: float | None = typer.Option(None, "--max-cost", callback=checked("Positive"), help="Also stop once this much USD was spent (needs prices)."),
    limit: int | None = typer.Option(None, "--limit", callback=checked("Count"), help="Use only the first N dev items (and N test items)."),
    examples_from: Path | None = typer.Option(None, "--examples-from", help="Labelled items for in-context examples (default: --data)."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Use the completion cache (LLM proposals replay from it on resume)."),
    cache_path: Path | None = typer.Option(None, "--cache-path", help="Cache file (default ~/.cache/judgelab/cache.sqlite)."),
    price_in: float | None = typer.Option(None, "--price-in", callback=checked("NonNegative"), help="USD per 1M prompt tokens, for cost accounting."),
    price_out: float | None = typer.Option(None, "--price-out", callback=checked("NonNegative"), help="USD per 1M completion tokens."),
    report: bool = typer.Option(True, "--report/--no-report", help="Also write the best config's dev run and report.html into --out."),
) -> None:
    """Search for the judge config that agrees best with the humans on dev items (HPSS and baselines)."""
    from judgelab.commands._common import console
    from judgelab.commands.judge import _text_or_file
    from judgelab.data import load_items
    from judgelab.optimize.base import Budget, JudgeEvaluator, optimize
    from judgelab.optimize.methods import make_optimizer

    if method not in METHOD_SUMMARIES:
        raise ConfigError(f"unknown method {method!r}; choose from {', '.join(METHOD_SUMMARIES)}")
    if objective not in OBJECTIVES:
        raise ConfigError(f"--objective {objective!r}: choose from {', '.join(OBJECTIVES)}")
    dev, held_out = _dev_and_test(data, test, human, aspect, limit)
    base = judge_config_from_options(config, None, aspect, family=family, task=task, criteria=_text_or_file(criteria),
                                     strategy=strategy, score=None, samples=None, temperature=None)
    model = model or base.model
    if model:
        base = base.model_copy(update={"model": model})
    pool = list(load_items(examples_from)) if examples_from else None
    with client_from_options(model, model_name, cache, cache_path, price_in=price_in, price_out=price_out,
                             timeout=timeout) as client:
        optimizer = make_optimizer(method, client, seed=seed, **optimizer_settings(option, space))
        evaluator = JudgeEvaluator(dev, client, objective=objective, examples_pool=pool, seed=seed,  # type: ignore[arg-type]
                                   min_coverage=min_coverage)
        info = {"data": str(data), "test": str(test) if test else None, "aspect": aspect,
                "backend": client.backend.identity, "dev_items": len(dev)}
        with SearchProgress(console, budget) as progress:
            result = optimize(optimizer, base, evaluator, Budget(budget, max_calls, max_cost), out,
                              test_items=held_out, on_record=progress.update, info=info)
        if report and result.best_config is not None:
            write_best_run(result, dev, client, out, str(data), pool)
    print_result(console, result)
    if report and result.best_config is not None:
        console.print(f"report: {out / 'report.html'}")


def _dev_and_test(data: Path, test: Path | None, human: Path | None, aspect: str, limit: int | None
                  ) -> tuple[list, list | None]:
    """The dev (and test) items; with --human, relabelled from the one file that covers both."""
    from judgelab.data import load_items

    dev = list(load_items(data))
    held_out = list(load_items(test)) if test is not None else []
    if human is not None:
        relabelled, _ = human_labelled(dev + held_out, human, aspect, labelled_only=False)
        dev_ids = {item.id for item in dev}
        from judgelab.metrics.align import human_value

        labelled = [item for item in relabelled if human_value(item, aspect) is not None]
        dev, held_out = ([item for item in labelled if item.id in dev_ids],
                         [item for item in labelled if item.id not in dev_ids])
        if not dev:
            raise ConfigError(f"--human {human}: none of the --data items is labelled for {aspect!r}")
    if limit:
        dev, held_out = dev[:limit], held_out[:limit]
    from judgelab.metrics.align import require_human_values

    require_human_values(dev, aspect, data)  # the search's objective: refused before the model loads
    return dev, (held_out if test is not None else None)


def write_best_run(result: OptimizeResult, dev: list, client, out: Path, data_path: str, pool) -> None:
    """Make the search folder a run folder of the best config on the dev items (run.json,
    judgments.jsonl, metrics.json, report.html with the trajectory), through the normal runner:
    every call is a cache hit of the search's own evaluation."""
    from judgelab.files import read_run_record
    from judgelab.runner.run import run_judge

    assert result.best_config is not None
    earlier = read_run_record(out, hint="the best config's run is not written over it; remove it and rerun "
                                        "(the search is kept and replayed)")
    if earlier is not None and earlier.get("judge_digest") != result.best_config.digest():
        # A rerun found a new best: the earlier best's run files no longer describe the folder.
        for name in ("run.json", "judgments.jsonl", "metrics.json"):
            (out / name).unlink(missing_ok=True)
    options = {"examples_pool": pool} if pool is not None else {}
    run_judge(result.best_config, dev, client, out, data_path=data_path, **options)


def optimizer_settings(option: list[str], space: list[str]) -> dict[str, Any]:
    """The ``-O`` settings and the ``--space`` restriction, as keyword arguments of the optimiser."""
    settings = parse_options(option)
    if space:
        if "space" in settings:
            raise ConfigError("the space is given twice (-O space=... and --space); use --space")
        settings["space"] = parse_space(space)
    return settings


def parse_space(pairs: list[str]) -> dict[str, str]:
    """``--space FACTOR=V1,V2`` pairs as ``{factor: "V1,V2"}``."""
    restriction: dict[str, str] = {}
    for name, values in key_values(pairs, "--space", "FACTOR=VALUE,VALUE, e.g. --space cot=none,suffix"):
        if name in restriction:
            raise ConfigError(f"--space names {name} twice; list all its values once")
        restriction[name] = values
    return restriction


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` settings; values read as YAML scalars (``0.2``, ``false``, ``5``)."""
    import yaml

    return {key: yaml.safe_load(value) for key, value in key_values(pairs, "--option", "KEY=VALUE, e.g. -O rho=0")}


class SearchProgress:
    """One rich line: evaluations spent of the budget, best so far, its pairwise agreement, calls, cost."""

    def __init__(self, console: Console, budget: int):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("searching"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=console)
        self._task = self._bar.add_task("search", total=budget, info="")
        self._best_pairwise: float | None = None

    def __enter__(self) -> SearchProgress:
        self._bar.start()
        return self

    def update(self, record: dict[str, Any]) -> None:
        if record["kind"] == "evaluation" and record["step"] == record["best_step"]:
            self._best_pairwise = record.get("pairwise_agreement")
        best = record.get("best_objective")
        pairwise = f" (pairwise {self._best_pairwise:.2f})" if self._best_pairwise is not None else ""
        cost = record.get("total_cost_usd")
        info = (f"best {best:.1f}{pairwise}" if best is not None else "best —") + \
            f" · {record['total_calls']} calls, {record['total_cache_hits']} cached" + \
            (f" · ${cost:.4f}" if cost else "")
        self._bar.update(self._task, completed=record["step"], info=info)

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()


def print_result(console: Console, result: OptimizeResult) -> None:
    from judgelab.optimize.base import BEST

    best = result.best or {}
    record = next((r for r in result.trajectory if r["step"] == best.get("step")), {})
    table = Table("", "value", title=f"search: {result.status}")
    table.add_row("evaluations", str(result.evaluations))
    proposals = sum(r["kind"] == "proposal" for r in result.records)
    if proposals:
        table.add_row("proposals without evaluation", str(proposals))
    table.add_row("best on dev", _number(best.get("objective")) + f" (step {best.get('step')}, 100 x {record.get('statistic', '')})")
    table.add_row("pairwise agreement (best)", _number(record.get("pairwise_agreement"), 3))
    start = result.trajectory[0] if result.trajectory else {}
    table.add_row("start on dev", _number(start.get("objective")))
    if record.get("strategy"):
        table.add_row("best strategy", record["strategy"])
    usage = result.usage
    cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    table.add_row("LLM calls", f"{usage.calls} paid, {usage.cache_hits} cache hits, cost {cost}")
    if result.test:
        for name in ("start", "best"):
            entry = result.test[name]
            table.add_row(f"test: {name}", f"{_number(entry['objective'])} (pairwise {_number(entry['pairwise_agreement'], 3)})")
        change, gain = result.test.get("change"), result.test.get("relative_gain")
        table.add_row("test: change (best - start)", "—" if change is None else f"{change:+.1f}")
        table.add_row("test: relative gain", "— (start <= 0)" if gain is None else f"{gain:+.1%}")
    console.print(table)
    if result.folder:
        console.print(f"run folder: {result.folder} (best config: {result.folder / BEST})")


def _number(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
