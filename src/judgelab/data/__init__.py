"""Items, datasets, judgments and their files.

>>> from judgelab.data import load_items            # doctest: +SKIP
>>> ds = load_items("../shared/benchmarks/sfres.jsonl")
>>> ds.kind, len(ds), ds.aspects()
('pointwise', 830, ['informativeness', 'naturalness', 'overall'])
"""

from judgelab.data.dataset import Dataset
from judgelab.data.io import (
    JsonlAppender,
    judgments_file,
    load_items,
    load_judgments,
    save_items,
    save_judgments,
)
from judgelab.data.item import Item, ItemKind
from judgelab.data.judgment import Judgment, JudgmentStatus
from judgelab.data.split import kfold_by_group, split_by_group
from judgelab.errors import DataError, DataWarning

__all__ = [
    "DataError",
    "DataWarning",
    "Dataset",
    "Item",
    "ItemKind",
    "JsonlAppender",
    "Judgment",
    "JudgmentStatus",
    "judgments_file",
    "kfold_by_group",
    "load_items",
    "load_judgments",
    "save_items",
    "save_judgments",
    "split_by_group",
]
