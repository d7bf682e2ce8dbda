"""Run a judge over items into a run folder, resumably.

    RUN_DIR/run.json         the judge config, model, versions, seed, data, counts and accounting
    RUN_DIR/judgments.jsonl  one line per item, appended as each finishes
    RUN_DIR/metrics.json     agreement with the humans, when the items carry human labels
    RUN_DIR/report.html      a self-contained page with all of the above

Rerunning into the same folder resumes: items already judged (ok or unparsable) are kept unless
what a judge reads of them changed since (each judgment records its item's ``content_digest``),
the rest are judged, and any LLM call that had finished is served from the cache. Ctrl-C stops
the run cleanly: every judgment finished so far is on disk and run.json says ``interrupted``;
any other error leaves run.json ``failed`` with the error. One process at a time runs into a
folder (a lock file, ``.run.lock``, refuses a second); a folder holding no judgment is no run
to protect, and one that this run created and judged nothing into is removed when it stops.

Two shapes of input: a list of items is judged as one batch and judgments.jsonl is rewritten
in input order at the end; a stream (a JSON-lines path, an iterator, or any input with
``chunk_size``) is read and judged chunk by chunk, never held whole, and judgments.jsonl stays
in completion order. ``engine="ray"`` sends the chunks to Ray workers (runner/ray_engine.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from judgelab.data.digest import content_digest
from judgelab.data.io import JsonlAppender, load_items, load_judgments, save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.stream import check_ids, chunks, count_lines, distinct_ids, iter_items
from judgelab.errors import ConfigError, DataError, JudgelabError, term
from judgelab.files import (
    PRIVATE_FILE,
    is_unwritable,
    open_private,
    private_dir,
    read_run_record,
    staged_file,
    unwritable,
    write_atomic,
)
from judgelab.judges.base import JudgeConfig
from judgelab.limits import max_input_bytes, over_limit
from judgelab.llm.client import Client
from judgelab.llm.types import Usage
from judgelab.runner.progress import RunProgress

#: Items per chunk of a streamed run: big enough for the client's concurrency and shared
#: prompt prefixes, small enough that memory does not depend on the dataset.
DEFAULT_CHUNK = 1000
ENGINES = ("local", "ray")
#: Why a duplicate id in items given as an iterator may be found after some were judged.
_READ_ONCE = ("; items given as an iterator are read once, so their ids are checked chunk by chunk as they are "
              "read (a file is checked whole first): chunks before this line were judged, and are kept")


class JudgmentsFile(Sequence[Judgment]):
    """The judgments of a streamed run, read from judgments.jsonl when iterated (never held)."""

    def __init__(self, path: Path, count: int):
        self.path, self._count = path, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Judgment]:
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield Judgment.model_validate_json(line)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return list(self)[index]
        for position, judgment in enumerate(self):
            if position == (index if index >= 0 else self._count + index):
                return judgment
        raise IndexError(index)


@dataclass
class RunResult:
    judgments: Sequence[Judgment]
    usage: dict[str, Any]
    metrics: dict[str, Any] | None
    folder: Path | None
    counts: dict[str, int] = field(default_factory=lambda: {"ok": 0, "unparsable": 0, "error": 0})

    @property
    def unparsable_share(self) -> float:
        total = sum(self.counts.values())
        return self.counts["unparsable"] / total if total else 0.0


@dataclass
class _Tally:
    """What the run has finished so far: counts by status (earlier judgments kept included), how many
    were kept from an earlier run, and how many of those were dropped since their item changed."""

    counts: dict[str, int] = field(default_factory=lambda: {"ok": 0, "unparsable": 0, "error": 0})
    usage: Usage = field(default_factory=Usage)
    resumed: int = 0
    rejudged: int = 0

    def add(self, judgment: Judgment) -> None:
        self.counts[judgment.status] += 1

    def resume(self, status: str) -> None:
        self.counts[status] += 1
        self.resumed += 1

    def rejudge(self, status: str) -> None:
        """An earlier judgment (of ``status``) is dropped: its item changed, and is judged again."""
        self.counts[status] -= 1
        self.resumed -= 1
        self.rejudged += 1


def run_judge(
    judge: JudgeConfig,
    items: Sequence[Item] | Iterable[Item] | str | Path,
    client: Client,
    out: str | Path | None = None,
    *,
    data_path: str | None = None,
    show_progress: bool = False,
    meta: bool = True,
    chunk_size: int | None = None,
    engine: str = "local",
    workers: int | None = None,
    **run_options: Any,
) -> RunResult:
    """Judge ``items`` (resuming from ``out`` if it holds this judge's earlier run) and write the folder.

    ``items``: a list (one batch), or a stream: a JSON-lines path or an iterator, read
    ``chunk_size`` items at a time (default 1000; giving ``chunk_size`` streams a list too).
    ``engine="ray"`` judges the chunks on a Ray cluster with ``workers`` workers (default: its CPUs).
    ``run_options`` go to ``judge.run`` (e.g. ``examples_pool``, ``order_by_source``).
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if not judge.fitted:
        raise ConfigError(f"this {judge.kind!r} judge learns from labelled items first: "
                          f"`judgelab fit --method {judge.kind} --data TRAIN --out fitted.yaml` (or judge.fit(items))")
    from_file = isinstance(items, (str, Path))
    if from_file:
        data_path = data_path or str(items)
    streamed = chunk_size is not None or from_file or not isinstance(items, Sequence)
    if streamed and out is None:
        raise ConfigError("a streamed run writes its judgments as it goes: give a run folder (out)")
    if engine == "ray":
        from judgelab.runner.ray_engine import RayEngine

        executor: _Engine = RayEngine(client, workers=workers)
    else:
        executor = _LocalEngine(client)
    header = {**_header(judge, client, data_path), "engine": engine}
    with RunFolder(out, header) if out else contextlib.nullcontext() as folder:
        if streamed:
            return _run_streamed(judge, items, client, folder, header, executor, chunk_size or DEFAULT_CHUNK,
                                 show_progress, meta, run_options)
        return _run_batch(judge, list(items), client, folder, executor, show_progress, meta, run_options)


def check_out_folder(out: str | Path) -> Path:
    """``out`` as a run folder: it may exist (to resume) or not, but it cannot be a file.
    Commands call it before loading a model, so a wrong ``--out`` costs nothing."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{term('out')} {out} is a file; give a folder for the run")
    return out


# -- engines: how a batch of items becomes judgments -----------------------------------------------
class _Engine:
    def judge(self, judge: JudgeConfig, batches: Iterable[list[Item]], on_judgment, run_options: dict) -> None:
        raise NotImplementedError

    def usage(self) -> Usage:
        raise NotImplementedError

    def halt(self, error: JudgelabError) -> None:
        """Start no more paid calls (the run cannot keep what they return); by default nothing to stop."""


class _LocalEngine(_Engine):
    """This process, through the caller's client (its concurrency limit, cache and accounting)."""

    def __init__(self, client: Client):
        self.client = client

    def judge(self, judge: JudgeConfig, batches: Iterable[list[Item]], on_judgment, run_options: dict) -> None:
        for batch in batches:
            if batch:
                self._judge_batch(judge, batch, on_judgment, run_options)

    def _judge_batch(self, judge: JudgeConfig, batch: list[Item], on_judgment, run_options: dict) -> None:
        seen: set[str] = set()

        def record(judgment: Judgment) -> None:
            seen.add(judgment.item_id)
            on_judgment(judgment)

        for judgment in judge.run(batch, self.client, on_judgment=record, **run_options):
            if judgment.item_id not in seen:  # a judge that reports only at the end is still recorded
                record(judgment)

    def usage(self) -> Usage:
        return self.client.usage

    def halt(self, error: JudgelabError) -> None:
        self.client.halt(error)


# -- the two shapes of a run -----------------------------------------------------------------------
def _run_batch(judge, items: list[Item], client, folder: RunFolder | None, executor: _Engine, show_progress: bool,
               meta: bool, run_options: dict) -> RunResult:
    digests = {item.id: content_digest(item) for item in items} if folder else None
    earlier = folder.resume(set(digests)) if folder else {}
    tally = _Tally()
    done: dict[str, Judgment] = {}
    for ident, judgment in earlier.items():
        tally.resume(judgment.status)
        if _unchanged(judgment.item_digest, digests[ident]):
            done[ident] = judgment
        else:
            tally.rejudge(judgment.status)
    todo = [item for item in items if item.id not in done]
    by_id = dict(done)
    started = time.perf_counter()
    if folder:
        folder.track(tally, executor, started)

    def keep(judgment: Judgment) -> None:
        by_id[judgment.item_id] = judgment

    with RunProgress(show_progress, len(items), len(done)) as progress, \
            _Recorder(folder, tally, progress, executor, keep, digests) as record:
        executor.judge(judge, _batches(todo, executor), record, run_options)
    judgments = [by_id[item.id] for item in items]
    usage = _usage(executor, client, started, tally)
    metrics = _metrics(judge, items, judgments) if meta else None
    result = RunResult(judgments, usage, metrics, folder and folder.path, tally.counts)
    if folder:
        save_judgments(judgments, folder.path / "judgments.jsonl")  # atomic: input order, no duplicates
        folder.finish(result, len(items), items)
    return result


def _run_streamed(judge, items, client, folder: RunFolder, header, executor: _Engine, chunk_size: int,
                  show_progress: bool, meta: bool, run_options: dict) -> RunResult:
    if isinstance(items, (str, Path)):  # before the folder is claimed: a path that is no file costs nothing
        source = iter_items(items)
        total = count_lines(items)
        check_ids(items)  # a duplicate id anywhere stops the run before any call is paid
    else:
        total = len(items) if isinstance(items, Sequence) else None
        source = distinct_ids(enumerate(items, start=1), "<items>", note=_READ_ONCE)
    tally = _Tally()
    resume = _StreamResume(folder.resume(None), tally)
    started = time.perf_counter()
    folder.track(tally, executor, started)
    with RunProgress(show_progress, total, tally.resumed) as progress, \
            _Recorder(folder, tally, progress, executor, digests=resume.digests) as record:
        def uncount() -> None:  # an item counted as done when the run started is judged again
            progress.advance(executor.usage(), -1)

        executor.judge(judge, (resume.todo(chunk, uncount) for chunk in chunks(source, chunk_size)), record,
                       run_options)
    if resume.changed:
        folder.drop_superseded(resume.changed)
    n_items = sum(tally.counts.values())
    usage = _usage(executor, client, started, tally)
    judgments = JudgmentsFile(folder.path / "judgments.jsonl", n_items)
    metrics = _metrics_from_files(judge, header.get("data"), folder.path) if meta else None
    result = RunResult(judgments, usage, metrics, folder.path, tally.counts)
    folder.finish(result, n_items, None)
    return result


class _StreamResume:
    """A streamed run's earlier judgments as each one's digest and status by id (the judgments may not
    fit in memory), checked against each chunk's items as they are read."""

    def __init__(self, judgments: dict[str, Judgment], tally: _Tally):
        self.earlier = {ident: (j.item_digest, j.status) for ident, j in judgments.items()}
        self.tally = tally
        self.digests: dict[str, str] = {}  # of the items in flight, until the recorder stamps their judgment
        self.changed: set[str] = set()
        for _, status in self.earlier.values():
            tally.resume(status)

    def todo(self, chunk: list[Item], uncount: Callable[[], None]) -> list[Item]:
        """The chunk's items to judge: new ones, and those changed since their earlier judgment."""
        batch = []
        for item in chunk:
            digest, then = content_digest(item), self.earlier.get(item.id)
            if then is not None and _unchanged(then[0], digest):
                continue
            if then is not None:
                self.tally.rejudge(then[1])
                self.changed.add(item.id)
                uncount()
            self.digests[item.id] = digest
            batch.append(item)
        return batch


def _unchanged(digest_then: str | None, digest_now: str) -> bool:
    """Is a judgment given to an item of content ``digest_then`` still the judgment of the item now?"""
    # a judgment without a digest was written before runs recorded one: kept on its id, as it was then
    return digest_then is None or digest_then == digest_now


def _batches(items: list[Item], executor: _Engine) -> list[list[Item]]:
    """One batch locally (the judge orders it by source); shards of whole groups for Ray."""
    if isinstance(executor, _LocalEngine):
        return [items]
    from judgelab.runner.ray_engine import shard_by_group

    return shard_by_group(items, executor.shard_count(len(items)))  # type: ignore[attr-defined]


class _Recorder:
    """Context manager yielding ``record(judgment)``: count it, advance the display, append it to the file.

    Lines are written in small batches (one write and one fsync per ``FLUSH_EVERY`` judgments or
    ``FLUSH_SECONDS``, whichever comes first): one fsync per line would cap a cache-served or
    no-LLM run at the disk's fsync rate. A crash loses at most that much, and those judgments'
    LLM calls are in the cache, so the resumed run pays nothing for them.

    A disk that refuses the lines (full, read-only) stops the run's paid calls (``halt``: the calls in
    flight end into the cache and here), frees the room the run folder kept for this, and keeps what it
    still cannot write in memory, tried again with each new judgment; the run then ends with a
    ``StorageError`` naming the file and its disk.
    """

    FLUSH_EVERY, FLUSH_SECONDS = 256, 0.5

    def __init__(self, folder: RunFolder | None, tally: _Tally, progress: RunProgress, executor: _Engine,
                 keep=None, digests: dict[str, str] | None = None):
        self._writer = JsonlAppender(folder.path / "judgments.jsonl") if folder else None
        self._spare = folder.release_space if folder else lambda: False  # room kept for writing how a run ended
        self._tally, self._progress, self._executor, self._keep = tally, progress, executor, keep
        self._digests = digests  # item id -> content digest, stamped on (and popped by) its judgment
        self._pending: list[Judgment] = []
        self._flushed = time.monotonic()
        self._lock = threading.Lock()
        self._closed = False
        self._refused: JudgelabError | None = None  # the disk refused a write: the run ends with this error

    def __enter__(self):
        return self.record

    def record(self, judgment: Judgment) -> None:
        # Called from the client's thread; Ctrl-C closes the recorder from the main thread. The lock
        # keeps "counted" and "on disk" the same set, and nothing is taken once closed (the call is
        # in the cache, so a resumed run gets that judgment for free).
        with self._lock:
            if self._closed:
                return
            if self._digests is not None:
                judgment = judgment.model_copy(update={"item_digest": self._digests.pop(judgment.item_id, None)})
            judgment = _readable(judgment)
            if self._keep:
                self._keep(judgment)
            self._tally.add(judgment)
            if self._writer:
                self._pending.append(judgment)
                if self._refused is not None or len(self._pending) >= self.FLUSH_EVERY or \
                        time.monotonic() - self._flushed > self.FLUSH_SECONDS:
                    self._flush_or_hold()
        self._progress.advance(self._executor.usage())

    def flush(self) -> None:
        if self._writer and self._pending:
            self._writer.extend(self._pending)  # all or nothing: a refused write leaves no partial line
            self._pending = []
        self._flushed = time.monotonic()

    def _flush_or_hold(self) -> None:
        """Write what is pending. The first write the disk refuses stops the run's paid calls (``halt``) and
        frees the room the run folder kept, for these lines and run.json; later tries write them once it can."""
        try:
            self.flush()
        except OSError as exc:
            if not is_unwritable(exc):
                raise
            if self._refused is None:
                self._refused = unwritable(self._writer.path, exc, "the run stopped; rerun the same command "  # type: ignore[union-attr]
                                           "once there is space: it resumes, paying for no call in the cache")
                self._executor.halt(self._refused)
                if self._spare():
                    with contextlib.suppress(OSError):
                        self.flush()

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        with self._lock:
            self._closed = True
            if self._writer:
                try:
                    self._flush_or_hold()
                finally:
                    self._writer.close()
        self._progress.refresh(self._executor.usage())
        if self._refused is not None and kind is None:
            raise self._refused


def _readable(judgment: Judgment) -> Judgment:
    """``judgment``, or, when its line would be past the bound on one input (``max_input_bytes``) that
    every reader of judgments.jsonl applies, that item's error without the texts: the line could not be
    read back, and a resumed run could not start. Each reply is bounded (``llm.replies``); a judgment of
    many samples keeps them all."""
    size, bound = len(judgment.model_dump_json()), max_input_bytes()  # about 2 µs for a usual judgment
    if size <= bound:
        return judgment
    return Judgment(item_id=judgment.item_id, aspect=judgment.aspect, judge=judgment.judge, usage=judgment.usage,
                    item_digest=judgment.item_digest, status="error",
                    reason="not kept: " + over_limit(f"this judgment ({size:,} bytes of JSON)", bound))


def _usage(executor: _Engine, client: Client, started: float, tally: _Tally) -> dict[str, Any]:
    return {**executor.usage().model_dump(), "retries": client.retries, "backend": client.backend.identity,
            "wall_s": time.perf_counter() - started, "resumed_items": tally.resumed,
            "rejudged_changed_items": tally.rejudged}


# -- folder and metadata ---------------------------------------------------------------------------
class RunFolder:
    """The run folder of one run, from the moment it is claimed to a run.json that says how it ended.

    ``resume`` claims it: a lock file keeps a second process out (it would pay again for every call
    the first has not finished; it is refused at once rather than left waiting, since it would only
    resume what the first wrote), and an earlier run is resumed only when it is the same judge on
    the same backend, unless it holds no judgment (a run that stopped before judging anything is no
    run to protect). On leaving, run.json says ``finished`` (``finish``), ``interrupted`` (Ctrl-C) or
    ``failed`` with the error, with the counts and usage so far. A run that stops before it judged
    anything (a failed start) leaves no trace: a folder it created is removed, and an existing one is
    put back as it was (its run.json, judgments.jsonl and lock file; a line a crash cut short is the
    one thing not put back: every reader drops it).
    """

    LOCK = ".run.lock"
    #: Room kept on the run folder's disk while the run goes (a file of zeros, removed when it ends): on a
    #: disk that fills up meanwhile, freeing it lets the last judgments and a run.json saying why be written.
    SPARE, SPARE_BYTES = ".run.spare", 256 * 1024

    def __init__(self, path: str | Path, header: dict[str, Any]):
        self.path, self.header = check_out_folder(path), header
        self.created = not self.path.exists()
        self._lock: FileLock | None = None
        self._progress: Callable[[], dict[str, Any]] = dict
        self._judged_now: Callable[[], bool] = lambda: False  # has this run recorded a judgment?
        self._undo: list[Callable[[], None]] = []  # puts back what this run changed in an existing folder
        self._earlier_bytes = 0  # judgments.jsonl as resumed: lines past this were written by this run

    def __enter__(self) -> RunFolder:
        return self

    def resume(self, wanted: set[str] | None) -> dict[str, Judgment]:
        """Claim the folder; judgments of an earlier run of the same judge on the same backend
        (errors are left out: they are judged again).

        ``wanted=None`` (a stream, whose ids are not known up front) keeps every earlier judgment.
        Of an id on several lines (a run stopped while judging a changed item again) the last is kept.
        """
        self._lock_folder()
        judgments = self.path / "judgments.jsonl"
        earlier = read_run_record(self.path, hint=f"cannot resume from it; choose a new {term('out')} folder")
        if earlier is not None and _holds_judgments(judgments) and \
                (earlier.get("judge_digest"), earlier.get("backend")) != (self.header["judge_digest"], self.header["backend"]):
            raise ConfigError(
                f"{self.path} holds a run of another judge or model ({earlier.get('judge_digest')} on "
                f"{earlier.get('backend')}); choose a new {term('out')} folder"
            )
        self._remember(self.path / "run.json")
        _write_json(self.path / "run.json", {**self.header, "status": "running"})
        if not judgments.exists():
            self._remember(judgments)
            return {}
        JsonlAppender(judgments).close()  # drops a line cut short by a crash
        earlier_judgments = load_judgments(judgments)
        kept = {j.item_id: j for j in earlier_judgments
                if (wanted is None or j.item_id in wanted) and j.status != "error"}
        if wanted is None and len(kept) < len(earlier_judgments):
            self._remember(judgments)  # a streamed run appends: drop the error lines now, they are judged again
            save_judgments(kept.values(), judgments)
        self._earlier_bytes = judgments.stat().st_size
        return kept

    def drop_superseded(self, ids: set[str]) -> None:
        """Remove the earlier run's lines for ``ids``, items this streamed run judged again (their new
        lines follow), line by line: the file may not fit in memory. A run stopped before this leaves
        both lines, and the next resume keeps the last."""
        path = self.path / "judgments.jsonl"
        with staged_file(path) as staged, path.open("rb") as old, staged.open("wb") as new:
            offset = 0
            for line in old:
                offset += len(line)
                if offset <= self._earlier_bytes and line.strip() and json.loads(line)["item_id"] in ids:
                    continue
                new.write(line)
            new.flush()
            os.fsync(new.fileno())

    def _remember(self, path: Path) -> None:
        """Note how to put ``path`` back as it is now, should this run stop before judging anything."""
        if path.exists():
            before = path.read_bytes()
            self._undo.append(lambda: write_atomic(path, before))
        else:
            self._undo.append(lambda: path.unlink(missing_ok=True))

    def _lock_folder(self) -> None:
        private_dir(self.path)
        lock = self.path / self.LOCK
        if lock.is_symlink():  # planted: locking would open (and create) whatever it points to
            raise ConfigError(f"{lock} is a symbolic link, which judgelab does not follow: remove it (a run makes "
                              f"its own lock file) or choose another {term('out')} folder")
        made_here = not lock.exists()
        self._lock = FileLock(lock, mode=PRIVATE_FILE)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            self._lock = None
            raise ConfigError(f"{self.path} is in use by another judgelab run (it holds {self.LOCK}); wait for "
                              f"it to end (then rerun to resume from it) or choose another {term('out')} "
                              "folder") from None
        except OSError as exc:  # e.g. a link planted since the check above: the lock opens no link
            self._lock = None
            raise ConfigError(f"{lock}: cannot lock the run folder ({exc.strerror or exc}); remove it or "
                              f"choose another {term('out')} folder") from None
        if made_here:  # an existing lock file is never removed: another process may be about to take it
            self._undo.append(lambda: lock.unlink(missing_ok=True))
        self._keep_space()

    def _keep_space(self) -> None:
        """Set ``SPARE_BYTES`` of the disk aside (``release_space`` gives them back); none on a disk already full."""
        spare = self.path / self.SPARE
        try:
            fd = open_private(spare, os.O_WRONLY)
            try:
                os.posix_fallocate(fd, 0, self.SPARE_BYTES)
            finally:
                os.close(fd)
        except (OSError, AttributeError):  # no room, or no posix_fallocate (Windows): nothing kept
            spare.unlink(missing_ok=True)

    def release_space(self) -> bool:
        """Free the room kept on the disk; whether there was any."""
        spare = self.path / self.SPARE
        if not spare.is_file():
            return False
        spare.unlink()
        return True

    def track(self, tally: _Tally, executor: _Engine, started: float) -> None:
        """What run.json records if the run stops early: counts, items and usage so far."""
        self._judged_now = lambda: sum(tally.counts.values()) > tally.resumed
        self._progress = lambda: {
            "counts": tally.counts, "items": sum(tally.counts.values()),
            "usage": {**executor.usage().model_dump(), "resumed_items": tally.resumed,
                      "rejudged_changed_items": tally.rejudged, "wall_s": time.perf_counter() - started}}

    def finish(self, result: RunResult, n_items: int, items: Sequence[Item] | None) -> None:
        self.release_space()
        _write_json(self.path / "run.json", {**self.header, "status": "finished", "items": n_items,
                                             "counts": result.counts, "unparsable_share": result.unparsable_share,
                                             "usage": result.usage})
        if result.metrics is not None:
            _write_json(self.path / "metrics.json", result.metrics)
        from judgelab.report import write_report

        write_report(self.path, items)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        # Entered before the recorder, so by now the recorder is closed: the counts written are
        # exactly the lines on disk.
        raised = error
        try:
            if error is None:
                return
            if isinstance(error, OSError) and is_unwritable(error):  # a full or read-only disk: said in one line
                error = unwritable(error.filename or self.path, error, "rerun the same command once it can be "
                                   "written: it resumes, paying for no call that is in the cache")
            self.release_space()  # room for run.json, should the disk be full
            if self._judged_now():
                status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
                why = {} if status == "interrupted" else {"error": _error_text(error)}
                with contextlib.suppress(OSError):  # on a full disk run.json may not be written at all
                    _write_json(self.path / "run.json", {**self.header, "status": status, **why, **self._progress()})
            elif self.created and self._lock is not None:
                # only the run that holds the lock removes the folder: two runs started at once both
                # saw it missing, and the one refused must not delete the folder the other is using
                shutil.rmtree(self.path, ignore_errors=True)
            else:  # a failed start: the folder as it was (the lock file goes while it is still held)
                for undo in reversed(self._undo):
                    with contextlib.suppress(OSError):
                        undo()
            if isinstance(error, JudgelabError) and error is not raised:
                raise error from raised
        finally:
            with contextlib.suppress(OSError):
                self.release_space()
            if self._lock is not None:
                self._lock.release()


def _holds_judgments(path: Path) -> bool:
    """Does this judgments file hold at least one line (it may not exist)?"""
    try:
        with path.open("rb") as handle:
            return any(line.strip() for line in handle)
    except FileNotFoundError:
        return False


def _error_text(error: BaseException) -> str:
    """The error as the CLI prints it: a user error's own message, else its type and message."""
    return str(error) if isinstance(error, JudgelabError) else f"{type(error).__name__}: {error}"


def _header(judge: JudgeConfig, client: Client, data_path: str | None) -> dict[str, Any]:
    return {
        "judge": judge.model_dump(mode="json"), "judge_digest": judge.digest(), "seed": getattr(judge, "seed", None),
        "backend": client.backend.identity, "model": client.backend.model_name, "data": data_path,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "versions": _versions(),
    }


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for package in ("judgelab", "llama-cpp-python", "openai"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def _metrics(judge: JudgeConfig, items: Sequence[Item], judgments: Sequence[Judgment]) -> dict[str, Any] | None:
    """Agreement with the human labels the items carry (scores, graded or pairwise labels), if any."""
    from judgelab.metrics import meta_evaluate
    from judgelab.metrics.align import human_value

    aspect = getattr(judge, "aspect", None)
    if not any(human_value(item, aspect) is not None for item in items):
        return None
    try:
        return meta_evaluate(items, judgments, aspect=aspect, n_resamples=1000).to_dict()
    except JudgelabError as exc:  # e.g. every judgment failed: the run is still written, with why
        return {"unavailable": str(exc)}


def _metrics_from_files(judge: JudgeConfig, data_path: str | None, folder: Path) -> dict[str, Any] | None:
    """A streamed run's agreement, computed after judging from the data file and judgments.jsonl.

    Correlations need every value at once, so this reads both files whole; pass ``meta=False``
    for datasets that do not fit in memory and run ``judgelab meta`` where they do.
    """
    if not data_path or not Path(data_path).is_file():
        return None
    try:
        items, judgments = load_items(data_path), load_judgments(folder / "judgments.jsonl")
    except DataError as exc:  # a file past the input bound (judgelab.limits) streams, but is not read whole
        return {"unavailable": str(exc)}
    return _metrics(judge, items, judgments)


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, default=str))  # owner-only, never half written
