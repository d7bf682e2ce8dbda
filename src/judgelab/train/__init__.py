"""Trained scorers: fine-tune a small cross-encoder on human labels or on a teacher judge's
scores (distillation), measure it with group-wise cross-validation and learning curves.

>>> from judgelab.train import human_targets, check_trainable, train_scorer   # doctest: +SKIP
>>> from judgelab.judges.trained import TrainedJudge
>>> targets = human_targets(items, "coherence"); check_trainable(targets, "items.jsonl")
>>> trained = train_scorer(TrainedJudge(aspect="coherence", epochs=1), targets)
>>> trained.predict(new_items)

Heavy imports (torch, transformers) happen on first use, not on ``import judgelab``.
"""

from __future__ import annotations

from typing import Any

from judgelab.judges.scorer_inputs import build_pair, keep_end, keep_recent_turns, keep_start
from judgelab.train.labels import (
    MIN_LABELLED,
    Targets,
    check_aspect,
    check_trainable,
    human_targets,
    ordinal_levels,
    read_teacher,
    teacher_targets,
)

_LAZY = {
    "train_scorer": "judgelab.train.trainer",
    "Trained": "judgelab.train.trainer",
    "predict": "judgelab.judges.scorer_model",
    "cross_validate": "judgelab.train.curves",
    "CurvePoint": "judgelab.train.curves",
    "agreement": "judgelab.train.curves",
    "stack_cv": "judgelab.train.curves",
    "save_trained": "judgelab.train.save",
    "fit_judge": "judgelab.train.fit",
    "fit_trained": "judgelab.train.fit",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "MIN_LABELLED",
    "Targets",
    "build_pair",
    "check_aspect",
    "check_trainable",
    "fit_judge",
    "fit_trained",
    "human_targets",
    "keep_end",
    "keep_recent_turns",
    "keep_start",
    "ordinal_levels",
    "read_teacher",
    "teacher_targets",
    *_LAZY,
]
