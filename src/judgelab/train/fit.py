"""Fitting any judge kind, the trained cross-encoder included, from one place above ``judges/``.

Every learning kind fits itself (``judge.fit``) with what lives at or below ``judges/`` (scikit-learn
models, prompts); the cross-encoder's fine-tuning needs torch and the trainer here, and a judge may not
import upward (docs/architecture.md). So ``fit_judge`` is the one entry point that fits every kind:
``judgelab fit`` and ``judgelab train`` use it, and so should Python code that fits configs it did not
choose itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import JudgeConfig
from judgelab.judges.trained import WEIGHTS_FOLDER, TrainedJudge
from judgelab.llm.client import Client
from judgelab.train.labels import check_trainable, human_targets


def fit_judge(judge: JudgeConfig, items: Sequence[Item], client: Client | None = None, *,
              out_dir: Path | None = None) -> JudgeConfig:
    """A new config of ``judge`` fitted on the items' human labels (files it learns go under ``out_dir``)."""
    if isinstance(judge, TrainedJudge):
        return fit_trained(judge, items, out_dir=out_dir)
    return judge.fit(items, client, out_dir=out_dir)


def fit_trained(judge: TrainedJudge, items: Sequence[Item], *, out_dir: Path | None = None) -> TrainedJudge:
    """Fine-tune the cross-encoder on the items' human scores for ``judge.aspect``; weights go to
    ``out_dir/weights``, and the returned config names them."""
    from judgelab.train.trainer import train_scorer  # torch: only when something is trained

    if out_dir is None:
        raise ConfigError("a trained judge needs out_dir: the folder its weights are written to")
    targets = human_targets(items, judge.aspect)
    check_trainable(targets, "training items")
    trained = train_scorer(judge, targets)
    folder = Path(out_dir) / WEIGHTS_FOLDER
    trained.scorer.save(folder, trained.tokenizer)
    return trained.spec.model_copy(update={"weights": folder.resolve(), "trained_on": "human"})
