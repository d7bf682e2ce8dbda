"""`judgelab qrels`: a judge's relevance labels as a TREC qrels file (``qid 0 docid label``)."""

from __future__ import annotations

from pathlib import Path

import typer

from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("qrels")(qrels)


def qrels(
    judgments: Path = typer.Argument(..., help="A run folder (its judgments.jsonl) or a judgments file."),
    data: Path | None = typer.Option(None, "--data", "-d", help="The relevance items judged (qid, docid); default: the run's data file."),
    out: Path = typer.Option(..., "--out", "-o", help="Qrels file to write."),
) -> None:
    """Write the labels of ok judgments as TREC qrels; unparsable and failed ones are listed, never written as 0."""
    from judgelab.commands._common import console
    from judgelab.data import load_items, load_judgments
    from judgelab.data.trec import write_qrels

    data = data or _run_data(judgments)
    result = write_qrels(load_judgments(judgments), list(load_items(data)), out)
    console.print(f"{result.written} qrels lines: {result.path}")
    if result.skipped:
        console.print(f"{len(result.skipped)} judgments without a label were left out, e.g.:")
        for item_id, why in list(result.skipped.items())[:5]:
            console.print(f"  {item_id}: {why}")


def _run_data(judgments: Path) -> Path:
    from judgelab.files import read_run_record

    record = read_run_record(judgments) if judgments.is_dir() else None
    if record and record.get("data"):
        return Path(record["data"])
    raise ConfigError("say which items were judged: --data ITEMS (needed for their qid and docid)")
