"""The labels file, and what it says about each annotator: answered items, their order, who has what.

The file is the only state that matters. Every answer is appended as one line with an fsync before
the browser is told it was saved (``JsonlAppender``), so a killed server loses at most the answer in
flight; on restart the file is read back and each annotator continues where they stopped. Going
back and changing an answer appends a new line (the reader keeps the latest), and a form submitted
twice (a retried POST) carries the same ``answer_id`` and is written once.

A session may rate several aspects per item: each is its own line (the format one aspect has, so
every reader of labels files reads them unchanged), the lines of one answer are written with one
fsync, and an item counts as answered once every aspect has an answer.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from judgelab.annotate.decision import RunningDecision
from judgelab.annotate.task import AnnotationTask
from judgelab.data.io import JsonlAppender
from judgelab.data.item import Item
from judgelab.data.labels import Label, read_labels, refuse_unknown_ids
from judgelab.errors import ConfigError, DataError, term
from judgelab.files import is_unwritable, open_private, unwritable

#: An item served to an annotator is theirs for this long (only items outside the shared overlap
#: are reserved: two colleagues should not label the same one by accident).
LEASE_SECONDS = 600.0
#: Answers slower than this (a coffee break) do not count towards the ETA.
SLOW_SECONDS = 600.0


@dataclass(frozen=True)
class Progress:
    done: int  # items this annotator answered (labels and skips)
    total: int  # done + what is still for them
    eta_seconds: float | None
    skipped: int = 0  # of ``done``, the items skipped (no label given)

    @property
    def labelled(self) -> int:
        """Items answered with a label (``done`` less the skips)."""
        return self.done - self.skipped


Value = float | str | None  # a label's value; None: a skip


class LabelStore:
    """Reads ``task.out`` (refusing labels from another data set or scale), then appends to it."""

    def __init__(self, task: AnnotationTask):
        self.task = task
        self.path = task.out
        self._lock = threading.Lock()
        # annotator -> item -> aspect -> latest answer (this session's aspects)
        self._answers: dict[str, dict[str, dict[str, Label]]] = {}
        self._history: dict[str, list[str]] = {}  # annotator -> items in the order first answered
        self._labelled_by: dict[str, set[str]] = {}  # item -> annotators who gave it a label (not just skips)
        self._by_answer_id: dict[tuple[str, str | None], Label] = {}  # (form nonce, aspect) -> the line it wrote
        self._leases: dict[str, tuple[str, float]] = {}  # item -> (annotator, until)
        # --until-decided: the question's decision, moved on by each label of the first aspect as it comes
        self._decider = RunningDecision(task.question, task.items, task.scale.bounds) if task.question else None
        self._out = JsonlAppender(self.path)  # first: it drops a line a kill cut short
        try:
            existing = read_labels(self.path)
            self._check(existing)
        except BaseException:
            self._out.close()
            raise
        for label in existing:
            self._apply(label)

    def close(self) -> None:
        self._out.close()

    # -- reading back ---------------------------------------------------------------------------

    def _check(self, existing: list[Label]) -> None:
        refuse_unknown_ids(existing, self.task.all_ids)
        for label in existing:
            aspect = self.task.aspect_named(label.aspect or "")
            if aspect is None or label.skipped or label.value is None:
                continue
            scale = aspect.scale
            if not (isinstance(label.value, str) if scale.kind == "pairwise" else scale.accepts(label.value)):
                raise DataError(f"value {label.value!r} for {label.aspect!r} is not on this session's scale "
                                f"({scale.description}): labels on another scale? use the same scale or another "
                                f"{term('out')}",
                                label.where, field="value")

    def _apply(self, label: Label) -> None:
        if label.answer_id:
            self._by_answer_id[(label.answer_id, label.aspect)] = label
        if label.aspect not in self.task.aspect_names or label.item_id not in self.task.by_id:
            return  # another aspect or an item outside this session: kept in the file, not our business
        annotator = label.annotator or ""
        answers = self._answers.setdefault(annotator, {})
        if label.item_id not in answers:
            self._history.setdefault(annotator, []).append(label.item_id)
        answers.setdefault(label.item_id, {})[label.aspect] = label  # type: ignore[index]
        if self._decider is not None and label.aspect == self.task.aspect and not label.skipped:
            self._decider.add(label.item_id, label.value)
        owners = self._labelled_by.setdefault(label.item_id, set())
        if any(not a.skipped and a.value is not None for a in answers[label.item_id].values()):
            owners.add(annotator)
        else:
            owners.discard(annotator)

    # -- answers --------------------------------------------------------------------------------

    def record(self, annotator: str, item_id: str, value: Value | Mapping[str, Value], *, note: str | None = None,
               seconds: float | None = None, order: str | None = None, answer_id: str | None = None) -> list[Label]:
        """Append one answer and return its lines: ``value`` for every aspect (None: a skip), or one value
        per aspect name. A repeated ``answer_id`` (a retried post) is not written again."""
        values = dict(value) if isinstance(value, Mapping) else dict.fromkeys(self.task.aspect_names, value)
        if set(values) != set(self.task.aspect_names):
            raise ValueError(f"an answer gives a value for each of {self.task.aspect_names}, not {sorted(values)}")
        with self._lock:
            done = {name: self._by_answer_id.get((answer_id, name)) for name in values} if answer_id else {}
            labels, lines = [], []
            for name in self.task.aspect_names:  # every line of the answer, written with one fsync
                if done.get(name) is not None:
                    labels.append(done[name])
                    continue
                label = self._label(annotator, item_id, name, values[name], note=note, seconds=seconds, order=order,
                                    answer_id=answer_id)
                labels.append(label)
                lines.append(label.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
                             | {"item_id": item_id, "aspect": name, "value": _plain(values[name]), "annotator": annotator})
            if lines:
                self._out.extend(lines)
            for label in labels:
                self._apply(label)
            self._leases = {item: lease for item, lease in self._leases.items() if lease[0] != annotator}
            return labels

    def _label(self, annotator: str, item_id: str, aspect: str, value: Value, **fields) -> Label:
        return Label(item_id=item_id, aspect=aspect, value=value, annotator=annotator,  # type: ignore[arg-type]
                     skipped=value is None, scale=self.task.aspect_named(aspect).scale.bounds,  # type: ignore[union-attr]
                     timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     note=fields.pop("note") or None, **fields)

    def answers(self, annotator: str, item_id: str) -> dict[str, Label]:
        """The annotator's latest answer for the item, per aspect (empty: not answered)."""
        return dict(self._answers.get(annotator, {}).get(item_id, {}))

    def answer(self, annotator: str, item_id: str) -> Label | None:
        """The latest answer for the first (or only) aspect."""
        return self.answers(annotator, item_id).get(self.task.aspect)

    def history(self, annotator: str) -> list[str]:
        """Items the annotator answered, in the order first answered (what `b` walks back through)."""
        return list(self._history.get(annotator, []))

    def annotators(self) -> list[str]:
        return list(self._answers)

    def decision(self):
        """--until-decided: what the labels given so far say about the task's question (None: no question).
        Made again only after a new label, at a cost that does not grow with the labels (``RunningDecision``)."""
        if self._decider is None:
            return None
        with self._lock:
            return self._decider.decision()

    # -- what comes next ------------------------------------------------------------------------

    def next_item(self, annotator: str, now: float | None = None) -> Item | None:
        """The first item in task order this annotator has not answered and may take, reserved for them."""
        now = time.time() if now is None else now
        decision = self.decision()
        if decision is not None and decision.decided:
            return None  # the question is answered: nothing more to ask
        with self._lock:
            for item in self._open_items(annotator, now):
                if item.id not in self.task.shared:
                    self._leases[item.id] = (annotator, now + LEASE_SECONDS)
                return item
        return None

    def progress(self, annotator: str, now: float | None = None) -> Progress:
        now = time.time() if now is None else now
        with self._lock:
            complete = [answers for answers in self._answers.get(annotator, {}).values() if self._complete(answers)]
            skipped = sum(1 for answers in complete if all(a.skipped or a.value is None for a in answers.values()))
            remaining = sum(1 for _ in self._open_items(annotator, now))
            pace = self._pace(annotator)
        return Progress(len(complete), len(complete) + remaining, None if pace is None else pace * remaining, skipped)

    def _complete(self, answers: Mapping[str, Label]) -> bool:
        """Is an item answered: has every aspect of the session an answer (a label or a skip)?"""
        return all(name in answers for name in self.task.aspect_names)

    def _open_items(self, annotator: str, now: float):
        answered = self._answers.get(annotator, {})
        for item in self.task.items:
            if self._complete(answered.get(item.id, {})):
                continue
            if item.id in self.task.shared:
                yield item
                continue
            others = self._labelled_by.get(item.id, set()) - {annotator}
            holder, until = self._leases.get(item.id, (annotator, 0.0))
            if not others and (holder == annotator or until < now):
                yield item

    def _pace(self, annotator: str) -> float | None:
        """Median seconds per answer: this annotator's once they have a few, else everyone's."""
        def times(answers):
            return [a.seconds for a in answers if a.seconds is not None and a.seconds < SLOW_SECONDS]

        first = self.task.aspect  # the aspects of one answer share its time: count it once
        own = times(a[first] for a in self._answers.get(annotator, {}).values() if first in a)
        pool = own if len(own) >= 3 else times(a[first] for answers in self._answers.values()
                                               for a in answers.values() if first in a)
        return statistics.median(pool) if pool else None


def lock_labels(path: Path) -> int:
    """Hold ``path`` for this process: a descriptor with an exclusive ``flock`` on the labels file;
    closing it (or the process ending, even by SIGKILL) lets go. A second server on the same file
    would hand out the same items (each keeps its leases in memory), so it is refused at once.

    The file itself is locked, not a ``.lock`` file beside it (``filelock`` truncates the file it
    locks, and a lock file would be left in the user's folder). Without ``fcntl`` (Windows) nothing
    is locked."""
    try:
        import fcntl
    except ImportError:
        return -1
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError as exc:
        if is_unwritable(exc):
            raise unwritable(path, exc, f"give {term('out')} a place that can be written") from None
        raise ConfigError(f"{path}: cannot open the labels file ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ConfigError(f"{path} is in use by another judgelab annotate server (it holds a lock on the file): "
                          "add annotators to that server (they share its link), or stop it first") from None
    return fd


def unlock_labels(fd: int) -> None:
    if fd >= 0:
        os.close(fd)


def _plain(value: float | str | None) -> float | int | str | None:
    """4 rather than 4.0 in the file: whole-number labels read as what the annotator pressed."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
