"""Write a trained scorer as a folder ``judgelab judge --config`` reuses, atomically.

    DIR/judge.yaml       the TrainedJudge config (recipe + what was learned), weights: weights
    DIR/weights/         encoder + tokenizer (Hugging Face format) and head.pt
    DIR/training.json    how training went and what the scorer agrees with (docs/training.md)

Everything is written into a temporary sibling folder that is renamed to DIR at the end, so a
crash or an error never leaves a half-written DIR behind.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from judgelab.errors import ConfigError, term
from judgelab.files import staged_folder
from judgelab.judges.base import JudgeConfig, load_judge
from judgelab.judges.trained import WEIGHTS_FOLDER, TrainedJudge
from judgelab.train.curves import agreement
from judgelab.train.labels import Targets
from judgelab.train.trainer import Trained

TRAINING_FORMAT = "judgelab.training/1"
J = TypeVar("J", bound=JudgeConfig)


def check_out_dir(out_dir: Path, overwrite: bool = False) -> None:
    """Refuse to mix a new scorer into a folder that already holds something (unless overwriting)."""
    if out_dir.exists() and (not out_dir.is_dir() or (any(out_dir.iterdir()) and not overwrite)):
        raise ConfigError(f"{term('out_dir', '--out')} {out_dir} exists and is not empty; choose a new folder (or "
                          f"{term('overwrite')})")


def training_record(trained: Trained, targets: Targets, **facts: Any) -> dict[str, Any]:
    """What training.json holds: history, validation agreement and predictions, and ``facts``."""
    position = {item.id: i for i, item in enumerate(targets.items)}
    val = [position[i] for i in trained.val_ids]
    val_items = [targets.items[i] for i in val]
    predicted = trained.predict(val_items) if val else np.zeros(0)
    subset = Targets(tuple(val_items), targets.labels[val], targets.humans[val], targets.origin)
    validation: dict[str, Any] = {"n": len(val)}
    if val:
        validation["with_targets"] = agreement(predicted, subset.labels, subset)
        if targets.origin == "teacher" and np.isfinite(subset.humans).any():
            validation["with_humans"] = agreement(predicted, subset.humans, subset)
    return {
        "format": TRAINING_FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "aspect": trained.spec.aspect, "head": trained.spec.head, "trained_on": trained.spec.trained_on,
        "n_items": len(targets.items), "n_train": len(trained.train_ids), "n_val": len(val),
        "train_seconds": round(trained.seconds, 2), "history": trained.history, "best": trained.best,
        "validation": validation,
        "validation_predictions": {item.id: float(p) for item, p in zip(val_items, predicted, strict=True)},
        **facts,
    }


def save_trained(trained: Trained, out_dir: Path, record: dict[str, Any], overwrite: bool = False) -> TrainedJudge:
    """Write DIR/judge.yaml, DIR/weights/, DIR/training.json; return the config as reloaded from DIR."""
    out_dir = Path(out_dir)
    check_out_dir(out_dir, overwrite)
    with published(out_dir) as staging:
        trained.scorer.save(staging / WEIGHTS_FOLDER, trained.tokenizer)
        config = trained.spec.model_copy(update={"weights": (staging / WEIGHTS_FOLDER).resolve()})
        config.save(staging / "judge.yaml")
        record = {**record, "config": json.loads(json.dumps(config.model_dump(mode="json"), default=str))}
        record["config"]["weights"] = WEIGHTS_FOLDER
        (staging / "training.json").write_text(json.dumps(record, indent=2, default=_plain), encoding="utf-8")
    return reload_as(out_dir, TrainedJudge)


def published(out_dir: Path) -> contextlib.AbstractContextManager[Path]:
    """A staging folder that replaces ``out_dir`` whole when the block succeeds (so a failure or a
    kill never leaves a half-written judge folder); weights from torch / Hugging Face writers are
    made owner-only on the way."""
    return staged_folder(out_dir)


def reload_as(out_dir: Path, kind: type[J]) -> J:
    """DIR/judge.yaml as loaded by ``judgelab judge --config``, checked to be the kind just written."""
    loaded = load_judge(out_dir / "judge.yaml")
    if not isinstance(loaded, kind):  # only if someone else wrote judge.yaml meanwhile
        raise ConfigError(f"{out_dir / 'judge.yaml'} is not a {kind.registry_name} judge config")
    return loaded


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
