"""The options `judgelab evaluate`, `sample`, `compare` and `cascade` share (the data, the judge's verdicts, the
human labels and the ids whose labels count, ...), declared once so that each reads and helps alike; and
``_load``, which reads them as `cascade` takes them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from judgelab.commands._common import FROM_HELP, PARTIAL_HELP
from judgelab.commands._ids import ids_file
from judgelab.commands._numbers import checked

CALIBRATION_HELP = "Map from judge to human scale for the corrected estimate: auto, isotonic, linear, identity."


# -- shared options -----------------------------------------------------------------------------------
Data = Annotated[Path, typer.Option("--data", "-d", help="Items (JSONL/JSON/CSV/Parquet): pointwise with system_id, or relevance.")]
Aspect = Annotated[str | None, typer.Option("--aspect", "-a", help="Human score to estimate (default: the only one).")]
JudgeName = Annotated[str | None, typer.Option("--judge", "--judge-name",
                                                help="Judge name, when the judgments file holds several.")]
JudgeNames = Annotated[list[str] | None, typer.Option(
    "--judge", "--judge-name", help="Judge name, when a judgments file holds several; give it more than once to "
                                    "combine several judges in one estimate (docs/evaluate.md, several judges).")]
JudgmentsFiles = Annotated[list[Path] | None, typer.Option(
    "--judgments", "-j", help="The judge's verdicts: a run folder, its judgments.jsonl, or any file with item_id and "
                              "score/label; give it more than once to combine several judges in one estimate.")]


def one_or_several(values: list | None):
    """A repeated option as the library takes it: None, the one value, or the list of several."""
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)
Field = Annotated[str | None, typer.Option(
    "--field", help="Where the verdict is in each row, e.g. prediction.coherence (published judge outputs).")]
Human = Annotated[Path | None, typer.Option(
    "--human", help="Human labels: a labels file (judgelab annotate), or any JSONL/CSV with item_id and score/label.")]
HumanIds = Annotated[str | None, typer.Option(
    "--human-ids", callback=ids_file("--human-ids"), help="File of ids (as `judgelab sample` writes; query ids for runs) whose labels count, or 'all'. "
                        "Without --human the items' own human scores are the labels.")]
Runs = Annotated[Path | None, typer.Option("--runs", help="Folder of TREC run files (relevance items): one system per run.")]
Measure = Annotated[str, typer.Option("--measure", help="ir_measures measure for runs.")]
Unjudged = Annotated[str, typer.Option(
    "--unjudged", help="Documents no qrels label: 'condense' (score runs on their judged documents) or 'nonrelevant'.")]
Seed = Annotated[int, typer.Option("--seed", callback=checked("Seed"), help="Seed of the bootstrap, the folds and the draw.")]
From = Annotated[str | None, typer.Option("--from", help=FROM_HELP)]
Partial = Annotated[bool, typer.Option("--partial", help=PARTIAL_HELP)]


def _load(data: Path, judgments: Path | None, human: Path | None, human_ids: str | None, aspect: str | None,
          field: str | None = None, source: str | None = None, partial: bool = False):
    """Items, judgments, human labels (with --human), the ids whose labels count, the sample file, and the
    aspect: --aspect, else the one aspect the labels file names (several: an error asking for --aspect)."""
    from judgelab.commands._common import read_inputs
    from judgelab.evaluate import ALL, read_sample

    if judgments is None and source is None:
        from judgelab.data.io import load_items

        items, judged = load_items(data), []
    else:
        items, judged = read_inputs(data, judgments, source, field=field, partial=partial)
    sample_file = None
    ids: Any = None
    if human_ids == ALL:
        ids = ALL
    elif human_ids is not None:
        sample_file = read_sample(human_ids)
        ids = sample_file.ids
    labels = None
    if human is not None:
        from judgelab.data.labels import values_for_items

        labels, aspect = values_for_items(human, items, aspect)
    return items, judged, labels, ids, sample_file, aspect
