"""The labels file, and what it says about each annotator: answered items, their order, who has what.

The file is the only state that matters. Every answer is appended as one line with an fsync before
the browser is told it was saved (``JsonlAppender``), so a killed server loses at most the answer in
flight; on restart the file is read back and each annotator continues where they stopped. Going
back and changing an answer appends a new line (the reader keeps the latest), and a form submitted
twice (a retried POST) carries the same ``answer_id`` and is written once.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from judgelab.annotate.task import AnnotationTask
from judgelab.data.io import JsonlAppender
from judgelab.data.item import Item
from judgelab.data.labels import Label, read_labels, refuse_unknown_ids
from judgelab.errors import ConfigError, DataError
from judgelab.files import open_private

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


class LabelStore:
    """Reads ``task.out`` (refusing labels from another data set or scale), then appends to it."""

    def __init__(self, task: AnnotationTask):
        self.task = task
        self.path = task.out
        self._lock = threading.Lock()
        self._answers: dict[str, dict[str, Label]] = {}  # annotator -> item -> latest answer (this aspect)
        self._history: dict[str, list[str]] = {}  # annotator -> items in the order first answered
        self._labelled_by: dict[str, set[str]] = {}  # item -> annotators whose latest answer is a label
        self._by_answer_id: dict[str, Label] = {}  # form nonce -> the answer it wrote
        self._leases: dict[str, tuple[str, float]] = {}  # item -> (annotator, until)
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
        scale = self.task.scale
        for label in existing:
            if label.aspect != self.task.aspect or label.skipped or label.value is None:
                continue
            if not (isinstance(label.value, str) if self.task.pairwise else scale.accepts(label.value)):
                raise DataError(f"value {label.value!r} for {label.aspect!r} is not on this session's scale "
                                f"({scale.description}): labels on another scale? use the same scale or another --out",
                                label.where, field="value")

    def _apply(self, label: Label) -> None:
        if label.answer_id:
            self._by_answer_id[label.answer_id] = label
        if label.aspect != self.task.aspect or label.item_id not in self.task.by_id:
            return  # another aspect or an item outside this session: kept in the file, not our business
        annotator = label.annotator or ""
        answers = self._answers.setdefault(annotator, {})
        if label.item_id not in answers:
            self._history.setdefault(annotator, []).append(label.item_id)
        answers[label.item_id] = label
        owners = self._labelled_by.setdefault(label.item_id, set())
        if label.skipped or label.value is None:
            owners.discard(annotator)
        else:
            owners.add(annotator)

    # -- answers --------------------------------------------------------------------------------

    def record(self, annotator: str, item_id: str, value: float | str | None, *, note: str | None = None,
               seconds: float | None = None, order: str | None = None, answer_id: str | None = None) -> Label:
        """Append one answer (``value`` None: a skip) and return it; a repeated ``answer_id`` is not written again."""
        with self._lock:
            if answer_id and answer_id in self._by_answer_id:
                return self._by_answer_id[answer_id]
            label = Label(item_id=item_id, aspect=self.task.aspect, value=value, annotator=annotator,
                          skipped=value is None, seconds=seconds, note=note or None, order=order,  # type: ignore[arg-type]
                          scale=self.task.scale.bounds, answer_id=answer_id,
                          timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"))
            self._out.append(label.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
                             | {"item_id": item_id, "aspect": self.task.aspect, "value": _plain(value),
                                "annotator": annotator})
            self._apply(label)
            self._leases = {item: lease for item, lease in self._leases.items() if lease[0] != annotator}
            return label

    def answer(self, annotator: str, item_id: str) -> Label | None:
        return self._answers.get(annotator, {}).get(item_id)

    def history(self, annotator: str) -> list[str]:
        """Items the annotator answered, in the order first answered (what `b` walks back through)."""
        return list(self._history.get(annotator, []))

    def annotators(self) -> list[str]:
        return list(self._answers)

    # -- what comes next ------------------------------------------------------------------------

    def next_item(self, annotator: str, now: float | None = None) -> Item | None:
        """The first item in task order this annotator has not answered and may take, reserved for them."""
        now = time.time() if now is None else now
        with self._lock:
            for item in self._open_items(annotator, now):
                if item.id not in self.task.shared:
                    self._leases[item.id] = (annotator, now + LEASE_SECONDS)
                return item
        return None

    def progress(self, annotator: str, now: float | None = None) -> Progress:
        now = time.time() if now is None else now
        with self._lock:
            done = len(self._answers.get(annotator, {}))
            remaining = sum(1 for _ in self._open_items(annotator, now))
            pace = self._pace(annotator)
        return Progress(done, done + remaining, None if pace is None else pace * remaining)

    def _open_items(self, annotator: str, now: float):
        answered = self._answers.get(annotator, {})
        for item in self.task.items:
            if item.id in answered:
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

        own = times(self._answers.get(annotator, {}).values())
        pool = own if len(own) >= 3 else times(a for answers in self._answers.values() for a in answers.values())
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
