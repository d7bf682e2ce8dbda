"""`judgelab report RUN_DIR`: (re)write the run folder's self-contained report.html."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run_dir: Path = typer.Argument(..., help="A run folder written by judge, demo or optimize."),
    data: Path | None = typer.Option(None, "--data", "-d", help="The items with human labels, when run.json's "
                                     "data file has moved (default: the file run.json names)."),
    card: Path | None = typer.Option(None, "--card", help="A judge card (judgelab meta --card) to show in the "
                                     "report: copied into RUN_DIR as card.json; refused when it is another judge's "
                                     "(docs/cards.md)."),
) -> None:
    """Write RUN_DIR/report.html from the run's files (open it in any browser, offline)."""
    from judgelab.commands._common import console
    from judgelab.data.stream import iter_items, streamable
    from judgelab.report import write_report

    if card is not None:
        from judgelab.report.card import attach_card

        attach_card(run_dir, card)  # checked first: a card of another judge leaves the folder as it was
    items = None
    if data is not None:
        from judgelab.data import load_items

        items = iter_items(data) if streamable(data) else load_items(data)
    console.print(f"report: {write_report(run_dir, items)}")
