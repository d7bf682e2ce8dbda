"""Readers of other tools' output files: each turns one tool's file (or a folder of them) into
judgelab's items and judgments (docs/sources.md).

>>> from judgelab.data.sources import read_source                      # doctest: +SKIP
>>> read = read_source("results/alpaca-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json")
>>> read.source, read.items.kind, read.judgments[0].judge
('alpaca-eval', 'pairwise', 'weighted_alpaca_eval_gpt4_turbo')

One module per tool (``inspect``, ``promptfoo``, ``lm_eval``, ``deepeval``, ``alpaca_eval``,
``arena_hard``, ``mt_bench``), each with ``claims(path)`` (does the file look like that tool's?) and
``read(path)``. None of them imports the tool: the files are read as the JSON they are.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from judgelab.data.dataset import Dataset
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError

#: ``--from`` names and the module that reads each.
SOURCES = {"inspect": "inspect", "promptfoo": "promptfoo", "lm-eval": "lm_eval", "deepeval": "deepeval",
           "alpaca-eval": "alpaca_eval", "arena-hard": "arena_hard", "mt-bench": "mt_bench"}


@dataclass(frozen=True)
class SourceData:
    """What a tool's file held: the items, the judges' verdicts on them, and what the reader noted
    (records left out or kept without a value, each with its count)."""

    source: str
    items: Dataset
    judgments: list[Judgment]
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
    claimed = [name for name in SOURCES if _module(name).claims(path)]
    if len(claimed) > 1:
        raise ConfigError(f"{path} looks like the output of {' and of '.join(claimed)}: say which with --from")
    return claimed[0] if claimed else None


def read_source(path: str | os.PathLike, source: str | None = None) -> SourceData:
    """Items and judgments from a tool's output file or folder; ``source`` is a --from name (detected
    from the file's shape when None)."""
    if source is None:
        source = detect_source(path)
        if source is None:
            raise ConfigError(f"{path}: not the output of a tool judgelab reads ({', '.join(SOURCES)}); "
                              "say which with --from")
    module = _module(source)
    if not Path(path).exists():
        raise DataError("no such file or folder", path)
    return module.read(Path(path))
