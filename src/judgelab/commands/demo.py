"""`judgelab demo`: the whole loop on a tiny bundled dataset, with the embedded model."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from judgelab.commands._common import THREADS_HELP, TIMEOUT_HELP, client_from_options, print_run
from judgelab.commands._numbers import checked
from judgelab.llm.models import MODEL_STRING_HELP

DEMO_DATA = "demo_summaries.jsonl"
DEMO_JUDGE = "demo_judge.yaml"


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP),
    model_name: str | None = typer.Option(None, "--model-name"),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    threads: int | None = typer.Option(None, "--threads", callback=checked("Threads"), help=THREADS_HELP),
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Run folder."),
    cache: bool = typer.Option(True, "--cache/--no-cache"),
) -> None:
    """Judge 36 bundled news summaries for coherence, compare with the authors' illustrative ratings, and write
    report.html in the run folder (its path is the last line printed)."""
    from judgelab.commands._common import console
    from judgelab.data import load_items
    from judgelab.judges.base import load_judge
    from judgelab.runner.run import run_judge

    examples = files("judgelab") / "examples"
    items = list(load_items(Path(str(examples / DEMO_DATA))))
    judge = load_judge(Path(str(examples / DEMO_JUDGE)))
    # soft_wrap: off a terminal rich would fold the strategy key at 80 columns, inside a word
    console.print(f"[bold]judgelab demo[/]: {len(items)} summaries of 9 articles, aspect 'coherence', "
                  f"score={judge.score}\nstrategy: {judge.strategy.key()}", soft_wrap=True)
    with client_from_options(model or judge.model, model_name, cache, timeout=timeout, threads=threads) as client:
        console.print(f"model: {client.backend.identity}")
        result = run_judge(judge, items, client, out, data_path=str(examples / DEMO_DATA), show_progress=True)
    table = Table("item", "human", "judge", "status", title="judgments")
    for item, judgment in zip(items, result.judgments, strict=True):
        score = "—" if judgment.score is None else f"{judgment.score:.2f}"
        table.add_row(item.id, f"{item.scores['coherence']:.0f}", score, judgment.status)
    console.print(table)
    print_run(console, result)
    console.print("[dim]The embedded models are small: they show the pipeline, not judge quality. "
                  "Try --model http://host:port/v1 with a strong model.[/]", soft_wrap=True)
    # the last line is what to open next (soft_wrap: a long path is never folded, so it can be copied)
    report = (result.folder or out) / "report.html"
    console.print(f"report: {escape(str(report))} (open it in a browser)", soft_wrap=True, highlight=False)
