"""Run a judge over items into a run folder, resumably.

    RUN_DIR/run.json         the judge config, model, versions, seed, data, counts and accounting
    RUN_DIR/judgments.jsonl  one line per item, appended as each finishes, rewritten in input order at the end
    RUN_DIR/metrics.json     agreement with the humans, when the items carry human labels
    RUN_DIR/report.html      a self-contained page with all of the above

Rerunning into the same folder resumes: items already judged (ok or unparsable) are kept,
the rest are judged, and any LLM call that had finished is served from the cache.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from judgelab.data.io import JsonlAppender, load_judgments, save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError
from judgelab.judges.base import JudgeConfig
from judgelab.llm.client import Client


@dataclass
class RunResult:
    judgments: list[Judgment]
    usage: dict[str, Any]
    metrics: dict[str, Any] | None
    folder: Path | None

    @property
    def unparsable_share(self) -> float:
        return self.counts["unparsable"] / len(self.judgments) if self.judgments else 0.0

    @property
    def counts(self) -> dict[str, int]:
        counts = {"ok": 0, "unparsable": 0, "error": 0}
        for judgment in self.judgments:
            counts[judgment.status] += 1
        return counts


def run_judge(
    judge: JudgeConfig,
    items: Sequence[Item],
    client: Client,
    out: str | Path | None = None,
    *,
    data_path: str | None = None,
    show_progress: bool = False,
    meta: bool = True,
    **run_options: Any,
) -> RunResult:
    """Judge ``items`` (resuming from ``out`` if it holds this judge's earlier run) and write the folder."""
    if not judge.fitted:
        raise ConfigError(f"this {judge.kind!r} judge learns from labelled items first: "
                          f"`judgelab fit --method {judge.kind} --data TRAIN --out fitted.yaml` (or judge.fit(items))")
    folder = Path(out) if out else None
    header = _header(judge, client, data_path)
    done = _resume(folder, header, items) if folder else {}
    todo = [item for item in items if item.id not in done]
    started = time.perf_counter()
    with _progress(show_progress, len(items), len(done)) as tick, _appender(folder) as append:
        def record(judgment: Judgment) -> None:
            if append:
                append(judgment)
            tick(client)

        new = judge.run(todo, client, on_judgment=record, **run_options) if todo else []
    by_id = {**done, **{j.item_id: j for j in new}}
    judgments = [by_id[item.id] for item in items]
    usage = {**client.stats(), "wall_s": time.perf_counter() - started, "resumed_items": len(done)}
    metrics = _metrics(judge, items, judgments) if meta else None
    result = RunResult(judgments, usage, metrics, folder)
    if folder:
        save_judgments(judgments, folder / "judgments.jsonl")  # atomic: input order, no duplicates
        _write_json(folder / "run.json", {**header, "status": "finished", "items": len(items),
                                          "counts": result.counts, "unparsable_share": result.unparsable_share,
                                          "usage": usage})
        if metrics is not None:
            _write_json(folder / "metrics.json", metrics)
        from judgelab.report import write_report

        write_report(folder, items)
    return result


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


def _resume(folder: Path, header: dict[str, Any], items: Sequence[Item]) -> dict[str, Judgment]:
    """Judgments of an earlier run of the same judge on the same backend; errors are retried."""
    record = folder / "run.json"
    if record.exists():
        earlier = json.loads(record.read_text(encoding="utf-8"))
        if (earlier.get("judge_digest"), earlier.get("backend")) != (header["judge_digest"], header["backend"]):
            raise ConfigError(
                f"{folder} holds a run of another judge or model ({earlier.get('judge_digest')} on "
                f"{earlier.get('backend')}); choose a new --out folder"
            )
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(record, {**header, "status": "running"})
    path = folder / "judgments.jsonl"
    if not path.exists():
        return {}
    JsonlAppender(path).close()  # drops a line cut short by a crash
    wanted = {item.id for item in items}
    return {j.item_id: j for j in load_judgments(path) if j.item_id in wanted and j.status != "error"}


class _appender:
    """Context manager yielding a function that appends one judgment durably (or None without a folder)."""

    def __init__(self, folder: Path | None):
        self._writer = JsonlAppender(folder / "judgments.jsonl") if folder else None

    def __enter__(self):
        return self._writer.append if self._writer else None

    def __exit__(self, *exc: object) -> None:
        if self._writer:
            self._writer.close()


class _progress:
    """One rich progress bar with items, cache hits, tokens and cost; a no-op when hidden."""

    def __init__(self, show: bool, total: int, already: int):
        self._bar = Progress(
            TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), disable=not show, transient=False,
        )
        self._task = self._bar.add_task("judging", total=total, completed=already, info="")

    def __enter__(self):
        self._bar.start()
        return self._tick

    def _tick(self, client: Client) -> None:
        usage = client.usage
        cost = f" ${usage.cost_usd:.4f}" if usage.cost_usd else ""
        info = f"{usage.calls} calls, {usage.cache_hits} cached, {usage.prompt_tokens + usage.completion_tokens} tok{cost}"
        self._bar.update(self._task, advance=1, info=info)

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()


def _metrics(judge: JudgeConfig, items: Sequence[Item], judgments: list[Judgment]) -> dict[str, Any] | None:
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


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)
