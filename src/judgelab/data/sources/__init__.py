"""Readers of other tools' output files: each turns one tool's file (or a folder of them) into
judgelab's items and judgments (docs/sources.md).

>>> from judgelab.data.sources import read_source                      # doctest: +SKIP
>>> read = read_source("results/alpaca-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json")
>>> read.source, read.items.kind, read.judgments[0].judge
('alpaca-eval', 'pairwise', 'weighted_alpaca_eval_gpt4_turbo')

One module per tool (``inspect``, ``promptfoo``, ``lm_eval``, ``deepeval``, ``alpaca_eval``,
``arena_hard``, ``mt_bench``, and the traced runs of ``otel``, OpenTelemetry GenAI spans (the SDK's JSON or the
Collector's OTLP JSON), ``mlflow``, MLflow traces, and ``langfuse``, Langfuse traces with their scores), each with ``claims(path)`` (does the file look like that tool's?) and
``read(path)``. None of them imports the tool: the files are read as the JSON they are.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from judgelab.data.dataset import Dataset
from judgelab.data.item import VERDICTS
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError
from judgelab.files import regular_file
from judgelab.tools import SOURCES  # the --from names and the module that reads each


@dataclass(frozen=True)
class SourceData:
    """What a tool's file held: the items, the judges' verdicts on them, and what the reader noted
    (records left out or kept without a value, each with its count)."""

    source: str
    items: Dataset
    judgments: list[Judgment]  # every judge's, each named by Judgment.judge
    notes: tuple[str, ...] = field(default=())

    def judges(self) -> list[str]:
        return sorted({j.judge for j in self.judgments if j.judge is not None})


def _module(source: str):
    if source not in SOURCES:
        raise ConfigError(f"--from {source!r}: choose among {', '.join(SOURCES)}")
    return importlib.import_module(f"judgelab.data.sources.{SOURCES[source]}")


def detect_source(path: str | os.PathLike) -> str | None:
    """The tool whose output ``path`` is, from the file's shape; None when no reader claims it.
    A file two readers claim is a ConfigError asking for --from."""
    path = Path(path)
    if not path.exists():
        raise DataError("no such file or folder", path)
    if not path.is_dir():
        regular_file(path)  # a FIFO named log.eval would block the first reader that opens it
    claimed = [name for name in SOURCES if _module(name).claims(path)]
    if len(claimed) > 1:
        raise ConfigError(f"{path} looks like the output of {' and of '.join(claimed)}: say which with --from")
    return claimed[0] if claimed else None


def read_source(path: str | os.PathLike, source: str | None = None, *, partial: bool = False) -> SourceData:
    """Items and judgments from a tool's output file or folder; ``source`` is a --from name (detected
    from the file's shape when None). A run that did not finish (an Inspect log without its header) is
    refused unless ``partial``: then what it holds is read, and a note says so."""
    if source is None:
        source = detect_source(path)
        if source is None:
            raise ConfigError(f"{path}: not the output of a tool judgelab reads ({', '.join(SOURCES)}); "
                              "say which with --from")
    module = _module(source)
    if not Path(path).exists():
        raise DataError("no such file or folder", str(path))
    return module.read(Path(path), partial=partial)


class Inputs(NamedTuple):
    """The items and a judge's verdicts on them, wherever they came from; ``source``: the tool whose
    output the data was (None: judgelab's own files or objects), ``notes``: what its reader noted."""

    items: Dataset
    judgments: list[Judgment] | dict[str, list[Judgment]]  # a dict: several judges' verdicts, by where they came from
    source: str | None = None
    notes: tuple[str, ...] = ()


def read_inputs(data: Any, judgments: Any = None, source: str | None = None, *, field: str | None = None,
                partial: bool = False) -> Inputs:
    """The items and the judge's verdicts that ``evaluate``, ``meta``, ``audit`` and ``compare`` read, from the
    command line or the Python front door: another tool's output (``source``, a --from name, or detected from
    the file when no ``judgments`` are given; or a :class:`SourceData` already read) gives both; ``judgments``,
    when given, replaces the tool's verdicts. ``data``: a path, or items as :func:`judgelab.data.given.as_items`
    takes them; ``judgments``: as :func:`judgelab.data.given.as_judgments` takes them (``field`` as there);
    ``partial``: as :func:`read_source` takes it."""
    from judgelab.data.given import as_items, as_judgments, is_path, judgments_by_judge, several_judgments

    judged: list[Judgment] | dict[str, list[Judgment]] | None = None
    notes: tuple[str, ...] = ()
    if isinstance(data, SourceData):
        items, judged, source, notes = data.items, data.judgments, data.source, data.notes
    else:
        if source is None and judgments is None and is_path(data):
            source = detect_source(data)
        if source is None and judgments is None:
            where = data if is_path(data) else "the data"
            raise ConfigError(f"give --judgments (the judge's verdicts; judgments= in Python), or --from (source=) when "
                              f"{where} is another tool's output ({', '.join(SOURCES)})")
        if source is not None:
            if not is_path(data):
                raise ConfigError(f"--from {source}: reads that tool's output file; give its path as the data")
            read = read_source(data, source, partial=partial)
            items, judged, notes = read.items, read.judgments, read.notes
        else:
            items = as_items(data)
    if field is not None and judgments is None:  # a tool's verdicts are read as docs/sources.md says
        raise ConfigError(f"--field {field!r} says where a judgments file keeps its verdicts; {source or 'this'} "
                          "output has none to read that way: choose among its judges with --judge")
    if judgments is not None:
        # comparisons between systems: a verdict outside a/b/tie is named with its line as it is read
        comparisons = bool(items) and items[0].kind == "pairwise" and items[0].system_a is not None
        load = judgments_by_judge if several_judgments(judgments) else as_judgments
        judged = load(judgments, field=field, labels=VERDICTS if comparisons else None)
    return Inputs(items, judged or [], source, notes)
