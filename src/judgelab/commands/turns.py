"""`judgelab turns`: a file of conversations written as one item per assistant reply (docs/conversations.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("turns")(turns)


def turns(
    data: Annotated[Path, typer.Option("--data", "-d", help="Conversations: items with 'messages' (JSONL, JSON, CSV, "
                                                            "Parquet), or another tool's file with --from.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the turns (the format by its extension: "
                                                          ".jsonl, .csv, .parquet).")],
    source: Annotated[str | None, typer.Option(
        "--from", help="Read another tool's file (deepeval, inspect, ...; default: found from the content).")] = None,
) -> None:
    """One item per assistant reply: its id CONVERSATION#turnN, its messages the conversation up to that reply,
    its human values from the conversation's extra.turn_scores; then judge, meta, evaluate, annotate the turns."""
    from judgelab.api.verbs import load
    from judgelab.commands._common import console
    from judgelab.data import save_items
    from judgelab.data.given import as_items
    from judgelab.data.turns import split_turns

    conversations = list(as_items(load(data, source=source)))  # another tool's output: its items
    split = split_turns(conversations)
    save_items(split, out)
    labelled = sum(1 for item in split if item.scores)
    console.print(f"{len(conversations)} conversation(s) -> {len(split)} turn(s) written to {out} "
                  f"(ids CONVERSATION#turnN; {labelled} with human values from extra.turn_scores)", soft_wrap=True,
                  markup=False)
