"""Chatbot Arena's comparisons with human votes and LLM judges' verdicts on the same ones
(``benchmarks/chatbot_arena/``, from Chatzi et al., NeurIPS 2024; docs/pairwise.md).

>>> comparisons, judgments = load_arena("../shared/benchmarks/chatbot_arena")   # doctest: +SKIP
>>> len(comparisons), sorted({j.judge for j in judgments})[0]
(18833, 'claude-3-opus-20240229')
"""

from __future__ import annotations

import os
from pathlib import Path

from judgelab.data.dataset import Dataset
from judgelab.data.io import load_items, load_judgments
from judgelab.data.item import VERDICTS
from judgelab.data.judgment import Judgment

COMPARISONS = "comparisons.jsonl"
JUDGMENTS = "judgments.jsonl"
#: Where the verdict sits in each row of the published judgments file.
VERDICT_FIELD = "prediction"


def load_arena(folder: str | os.PathLike, *, judge: str | None = None) -> tuple[Dataset, list[Judgment]]:
    """(the comparisons, every judge's verdicts on them; only ``judge``'s when given).

    The comparisons are pairwise items with ``system_a``/``system_b`` and the human vote as
    ``label`` (Arena's "tie (bothbad)" read as a tie, kept in ``extra.label_as_published``)."""
    folder = Path(folder)
    comparisons = load_items(folder / COMPARISONS, kind="pairwise")
    judgments = load_judgments(folder / JUDGMENTS, field=VERDICT_FIELD, judge=judge, labels=VERDICTS)
    return comparisons, judgments
