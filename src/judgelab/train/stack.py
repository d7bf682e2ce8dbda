"""The stacked trained judge: the fine-tuned cross-encoder and the UCLWI similarity scorer as two
members of an ``EnsembleJudge(aggregate="stack")``, saved as one folder that ``judgelab judge
--config`` reuses.

    DIR/judge.yaml              the ensemble (members by relative path, the fitted ridge stacker)
    DIR/cross-encoder/          the trained scorer (judge.yaml, weights/, training.json)
    DIR/similarity/             the similarity judge (judge.yaml + its .npz weights)

Who learns from what, so that the stacker never sees a member's in-sample scores: both members
are fitted on the cross-encoder's *training* groups; the ridge stacker is fitted on its
*validation* groups (``val_fraction`` of the groups, never seen by either member). This is the
existing ensemble machinery (judges/ensemble.py), not a second stacking implementation; an LLM
judge can be added later as a third member by editing DIR/judge.yaml and re-fitting it with
``judgelab fit --config DIR/judge.yaml --data DEV`` (docs/training.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgelab.errors import ConfigError, DataError
from judgelab.judges.ensemble import EnsembleJudge, Member
from judgelab.judges.similarity import SimilarityJudge
from judgelab.train.labels import Targets
from judgelab.train.save import check_out_dir, published, reload_as, save_trained
from judgelab.train.trainer import Trained

CROSS_ENCODER, SIMILARITY = "cross-encoder", "similarity"
#: Below this many validation items a ridge over two members is not worth fitting.
MIN_STACK_ITEMS = 6


def save_stacked(trained: Trained, targets: Targets, out_dir: Path, record: dict[str, Any], *,
                 embedder: str = "static", overwrite: bool = False) -> EnsembleJudge:
    """Fit the similarity member and the stacker as described above; write DIR atomically."""
    out_dir = Path(out_dir)
    check_out_dir(out_dir, overwrite)
    if targets.origin != "human":
        raise ConfigError("--stack fits its stacker on human scores; it cannot be combined with --teacher")
    by_id = {item.id: item for item in targets.items}
    train_items = [by_id[i] for i in trained.train_ids]
    val_items = [by_id[i] for i in trained.val_ids]
    if len(val_items) < MIN_STACK_ITEMS:
        raise DataError(f"--stack fits its stacker on the validation groups, which hold only {len(val_items)} items "
                        f"(at least {MIN_STACK_ITEMS}); raise --val-fraction or give more labelled items")
    with published(out_dir) as staging:
        save_trained(trained, staging / CROSS_ENCODER, record)
        similarity = SimilarityJudge(aspect=trained.spec.aspect, embedder=embedder, predict="expected")
        similarity.fit(train_items, None, out_dir=staging / SIMILARITY).save(staging / SIMILARITY / "judge.yaml")
        ensemble = EnsembleJudge(aspect=trained.spec.aspect, aggregate="stack", members=(
            Member(name=CROSS_ENCODER, config=staging / CROSS_ENCODER / "judge.yaml"),
            Member(name=SIMILARITY, config=staging / SIMILARITY / "judge.yaml")))
        fitted = ensemble.fit(val_items, None)
        # Members by relative path (resolved against DIR when loaded): the folder can be moved as a whole.
        relative = tuple(Member(name=name, config=Path(name) / "judge.yaml") for name in (CROSS_ENCODER, SIMILARITY))
        fitted.model_copy(update={"members": relative}).save(staging / "judge.yaml")
    return reload_as(out_dir, EnsembleJudge)
