"""`judgelab passages`: a RAG system's retrieved passages written as one relevance item per passage (docs/rag.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command("passages")(passages)


def passages(
    data: Annotated[Path, typer.Option("--data", "-d", help="Items with 'contexts' (retrieved passages with ids) and a "
                                                            "question (JSONL, JSON, CSV, Parquet), or another tool's "
                                                            "file with --from.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the query-passage pairs (the format by its "
                                                          "extension: .jsonl, .csv, .parquet).")],
    runs: Annotated[Path | None, typer.Option(
        "--runs", help="Also write one TREC run per system (SYSTEM.run, the passages in their retrieved order) "
                       "into this folder, for evaluate --runs.")] = None,
    source: Annotated[str | None, typer.Option(
        "--from", help="Read another tool's file (deepeval, inspect, ...; default: found from the content).")] = None,
) -> None:
    """One relevance item per (item, passage): qid the question (group_id, else the item id), docid the passage
    id, query the question, passage its title and text, system_id kept, the grade from extra.passage_labels;
    then judge them with any relevance judge (TREMA), and meta, evaluate --runs, annotate them."""
    from judgelab.api.verbs import load
    from judgelab.commands._common import console
    from judgelab.data import save_items
    from judgelab.data.given import as_items
    from judgelab.data.passages import pair_counts, plan_runs, split_passages
    from judgelab.files import private_dir, write_atomic

    items = list(as_items(load(data, source=source)))  # another tool's output: its items
    pairs = split_passages(items)
    planned = plan_runs(pairs, runs) if runs is not None else {}  # checked first: an error leaves no pairs file
    save_items(pairs, out)
    if runs is not None:
        private_dir(runs)
    written = [write_atomic(path, text) for path, text in planned.items()]
    counts = pair_counts(pairs)
    console.print(f"{len(items)} item(s) -> {counts['pairs']} passage(s) of {counts['questions']} question(s) "
                  f"written to {out} (ids ITEM#passage:ID; {counts['labelled']} with grades from "
                  f"extra.passage_labels)", soft_wrap=True, markup=False)
    if written:
        console.print(f"{len(written)} run(s) written to {runs}: {', '.join(p.name for p in written)}",
                      soft_wrap=True, markup=False)
