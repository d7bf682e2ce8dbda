"""`judgelab similarity-weights`: the fitted similarity scorer's weights, per class and feature (UCLWI Table 4)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("similarity-weights")(similarity_weights)


def similarity_weights(
    config: Path = typer.Argument(..., help="A fitted similarity judge config (from `judgelab fit --method similarity`)."),
    csv: Path | None = typer.Option(None, "--csv", help="Also write the table as CSV."),
) -> None:
    """Print the standardised weights (one row per score class, one column per feature, plus bias)."""
    from judgelab.commands._common import console
    from judgelab.csv_cells import safe_csv
    from judgelab.files import write_atomic
    from judgelab.judges.base import load_judge
    from judgelab.judges.similarity import SimilarityJudge, weight_table

    judge = load_judge(config)
    if not isinstance(judge, SimilarityJudge):
        raise ConfigError(f"{config}: a config of kind 'similarity' is needed, this one is {judge.kind!r}")
    table = weight_table(judge)
    if csv:
        write_atomic(csv, safe_csv(table))
    # Features as rows: a judge with a dozen systems has more features than a terminal has columns.
    view = Table("feature", *map(str, table.index),
                 title=f"similarity weights: {judge.aspect} ({judge.estimator}, features={judge.features})")
    for feature, column in table.items():
        view.add_row(str(feature), *(f"{value:+.4f}" for value in column))
    console.print(view)
