"""The stacked trained judge: the fine-tuned cross-encoder, the UCLWI similarity scorer and any
judgments you already have (an API judge's run, the published LLM raters) as members of an
``EnsembleJudge(aggregate="stack")``, saved as one folder that ``judgelab judge --config`` reuses.

    DIR/judge.yaml              the ensemble (members by paths relative to DIR, the fitted ridge stacker)
    DIR/cross-encoder/          the trained scorer (judge.yaml, weights/, training.json)
    DIR/similarity/             the similarity judge (judge.yaml + its .npz weights)
    DIR/members/NAME.jsonl      one per ``--stack-with`` file: its scores for the aspect, one line per item
    DIR/members/sources.json    where each of those came from

Who learns from what, so that the stacker never sees a member's in-sample scores: both trained
members are fitted on the cross-encoder's *training* groups; the ridge stacker is fitted on its
*validation* groups (``val_fraction`` of the groups, never seen by either member). Judgments
members are read by the existing ensemble machinery (judges/ensemble.py: ``Member(judgments=...)``,
its reader, its imputation of missing scores), not a second loader or stacker.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.data.io import judgments_file, save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.files import safe_name
from judgelab.judges.ensemble import EnsembleJudge, Member
from judgelab.train.labels import Targets, read_teacher

if TYPE_CHECKING:  # torch and transformers load on first training, not when --stack-with files are checked
    from judgelab.judges.trained import TrainedJudge
    from judgelab.train.trainer import Trained

CROSS_ENCODER, SIMILARITY, MEMBERS = "cross-encoder", "similarity", "members"
#: Below this many validation items a ridge over the members is not worth fitting.
MIN_STACK_ITEMS = 6
_SUFFIXES = (".gz", ".jsonl", ".json", ".csv", ".parquet")


@dataclass(frozen=True)
class ExtraMember:
    """Scores some judge gave elsewhere, for the stacked aspect: one more input of the stacker."""

    name: str
    scores: dict[str, float]  # item id -> score (averaged over the file's judges)
    source: Path


def read_extra_members(specs: Sequence[str | Path], aspect: str, items: Sequence[Item]) -> list[ExtraMember]:
    """``--stack-with`` values (``PATH`` or ``NAME=PATH``) read as members; each must score ``aspect``
    on some of ``items``. Names: NAME, else the file's stem (a run folder's name for its
    judgments.jsonl), made distinct by ``-2``, ``-3``."""
    taken, members = {CROSS_ENCODER, SIMILARITY}, []
    for spec in specs:
        name, path, explicit = _name_and_path(spec)
        if name in taken:
            if explicit:
                raise ConfigError(f"--stack-with {spec}: the name {name!r} is taken (members: {', '.join(sorted(taken))})")
            name = next(f"{name}-{n}" for n in range(2, len(taken) + 3) if f"{name}-{n}" not in taken)
        taken.add(name)
        member = ExtraMember(name, _member_scores(name, path, aspect), path)
        _check_covers(member, items, "labelled")
        members.append(member)
    return members


def _name_and_path(spec: str | Path) -> tuple[str, Path, bool]:
    text = str(spec)
    name, sep, rest = text.partition("=")
    if sep and name and safe_name(name) == name and not Path(text).exists():
        return name, Path(rest), True
    path = Path(text)
    stem = path.name
    for suffix in _SUFFIXES:
        stem = stem.removesuffix(suffix)
    if stem == "judgments" and path.resolve().parent.name:  # runs/gpt-4o/judgments.jsonl -> gpt-4o
        stem = path.resolve().parent.name
    return safe_name(stem) if stem.strip("._-") else "member", path, False


def _member_scores(name: str, path: Path, aspect: str) -> dict[str, float]:
    """The file's scores for ``aspect`` by item id, read as a teacher file is (both judgment formats)."""
    path = judgments_file(path)
    if not path.is_file():
        raise ConfigError(f"--stack-with {name}: judgments file not found: {path}")
    try:
        return read_teacher(path, aspect)
    except DataError as exc:
        if exc.line is None and exc.field == "score":  # parsed fine, but nothing for this aspect
            raise DataError(f"stacked member {name!r} has no score for aspect {aspect!r} (rows of other aspects, "
                            "failed judgments and rows without a score do not count)", path, field="score") from None
        raise


def _check_covers(member: ExtraMember, items: Sequence[Item], which: str) -> None:
    if not any(item.id in member.scores for item in items):
        sample = ", ".join(list(member.scores)[:3])
        raise DataError(f"stacked member {member.name!r} scores none of the {len(items)} {which} items "
                        f"(its item ids look like: {sample})", member.source, field="item_id")


def save_stacked(trained: Trained, targets: Targets, out_dir: str | Path, record: dict[str, Any], *,
                 embedder: str = "static", overwrite: bool = False,
                 extra_members: Sequence[ExtraMember] = ()) -> EnsembleJudge:
    """Fit the similarity member and the stacker as described above; write DIR atomically.
    ``extra_members`` (``read_extra_members``) become members read from DIR/members/."""
    from judgelab.judges.similarity import SimilarityJudge
    from judgelab.train.save import check_out_dir, published, reload_as, save_trained

    out_dir = Path(out_dir)
    check_out_dir(out_dir, overwrite)
    train_items, val_items = _stack_split(trained, targets)
    _check_names(extra_members)
    for member in extra_members:
        _check_covers(member, val_items, "validation")
    with published(out_dir) as staging:
        save_trained(trained, staging / CROSS_ENCODER, record)
        similarity = SimilarityJudge(aspect=trained.spec.aspect, embedder=embedder, predict="expected")
        similarity.fit(train_items, None, out_dir=staging / SIMILARITY).save(staging / SIMILARITY / "judge.yaml")
        _write_members(staging / MEMBERS, extra_members, trained.spec.aspect)
        ensemble = EnsembleJudge(aspect=trained.spec.aspect, aggregate="stack",
                                 members=_members(staging, extra_members))
        # save() writes the members' paths relative to DIR: the folder can be moved as a whole.
        ensemble.fit(val_items, None).save(staging / "judge.yaml")
    return reload_as(out_dir, EnsembleJudge)


def stacking_spec(spec: TrainedJudge) -> TrainedJudge:
    """The cross-encoder's settings for a stacked judge: no checkpoint chosen on the validation
    groups, where the stacker is fitted (a checkpoint chosen there looks better there than on
    new sources: measured in docs/training.md, "Stacking out of sample")."""
    return spec.model_copy(update={"select_on_validation": False})


def _stack_split(trained: Trained, targets: Targets) -> tuple[list[Item], list[Item]]:
    """The cross-encoder's training and validation items, checked to be usable for stacking."""
    if targets.origin != "human":
        raise ConfigError("--stack fits its stacker on human scores; it cannot be combined with --teacher")
    if trained.spec.select_on_validation:
        warnings.warn("the cross-encoder kept the checkpoint that scored best on the validation groups, where the "
                      "stacker is fitted: it will look better there than on new sources (train it with "
                      "stacking_spec(spec))", DataWarning, stacklevel=3)
    by_id = {item.id: item for item in targets.items}
    val_items = [by_id[i] for i in trained.val_ids]
    if len(val_items) < MIN_STACK_ITEMS:
        raise DataError(f"--stack fits its stacker on the validation groups, which hold only {len(val_items)} items "
                        f"(at least {MIN_STACK_ITEMS}); raise --val-fraction or give more labelled items")
    return [by_id[i] for i in trained.train_ids], val_items


def _check_names(extra_members: Sequence[ExtraMember]) -> None:
    names = [CROSS_ENCODER, SIMILARITY, *(m.name for m in extra_members)]
    bad = [m.name for m in extra_members if safe_name(m.name) != m.name]
    if bad or len(set(names)) != len(names):
        raise ConfigError(f"stacked members need distinct file-safe names other than {CROSS_ENCODER!r} and "
                          f"{SIMILARITY!r}; got {names[2:]}")


def _members(folder: Path, extra_members: Sequence[ExtraMember]) -> tuple[Member, ...]:
    """The ensemble's members, with paths under ``folder`` (the staging folder)."""
    return (Member(name=CROSS_ENCODER, config=folder / CROSS_ENCODER / "judge.yaml"),
            Member(name=SIMILARITY, config=folder / SIMILARITY / "judge.yaml"),
            *(Member(name=m.name, judgments=folder / MEMBERS / f"{m.name}.jsonl") for m in extra_members))


def _write_members(folder: Path, extra_members: Sequence[ExtraMember], aspect: str) -> None:
    """One judgments file per member (its scores for the aspect, in the format ensemble members read)."""
    if not extra_members:
        return
    folder.mkdir(parents=True)
    for member in extra_members:
        save_judgments([Judgment(item_id=item_id, score=score, aspect=aspect, judge=member.name)
                        for item_id, score in member.scores.items()], folder / f"{member.name}.jsonl")
    sources = {m.name: {"file": str(m.source), "aspect": aspect, "items": len(m.scores)} for m in extra_members}
    (folder / "sources.json").write_text(json.dumps(sources, indent=2), encoding="utf-8")
