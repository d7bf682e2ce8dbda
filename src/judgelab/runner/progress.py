"""The one progress display of a run: items, rate, cache hits, tokens, cost and ETA (rich)."""

from __future__ import annotations

import time

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from judgelab.llm.types import Usage


class ItemsPerSecond(ProgressColumn):
    """Judged items per second over rich's recent window (rich ships only a bytes-per-second column)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- items/s" if speed is None else f"{speed:,.1f} items/s", style="progress.data.speed")


def usage_text(usage: Usage) -> str:
    cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd else ""
    tokens = usage.prompt_tokens + usage.completion_tokens
    return f"{usage.calls:,} calls, {usage.cache_hits:,} cached, {tokens:,} tok{cost}"


class RunProgress:
    """Context manager; ``advance(usage)`` after each judgment. Hidden: nothing is drawn.

    Redrawn at most ``refresh_per_second`` times, so a million cache-served items do not pay for
    a million redraws; ``total=None`` (an unsized stream) shows no bar and no ETA.
    """

    def __init__(self, show: bool, total: int | None, already: int = 0, description: str = "judging"):
        self._bar = Progress(
            TextColumn(description), BarColumn(), MofNCompleteColumn(), ItemsPerSecond(),
            TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            disable=not show, transient=False, refresh_per_second=4,
        )
        self._task = self._bar.add_task(description, total=total, completed=already, info="")
        self._texted = 0.0

    def __enter__(self) -> RunProgress:
        self._bar.start()
        return self

    def advance(self, usage: Usage, count: int = 1) -> None:
        # The counters text is rebuilt at most every 0.2 s: per item it cost as much as judging a cached item.
        now = time.monotonic()
        if now - self._texted > 0.2:
            self._texted = now
            self._bar.update(self._task, advance=count, info=usage_text(usage))
        else:
            self._bar.advance(self._task, count)

    def refresh(self, usage: Usage) -> None:
        self._bar.update(self._task, info=usage_text(usage))

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()
