"""Watch systems as their judged outputs arrive over time, and raise an alarm when a mean moves
(``judgelab evaluate --monitor``; docs/evaluate.md, "Monitoring").

Each system's judged scores are read in time order. A reference period (before ``reference_until``,
else the earliest fifth of the system's outputs) gives the system's mean a betting interval. After
it, a confidence sequence for the mean is started at the beginning of every block of outputs as long
as the reference period (judgelab.metrics.betting), so a change is measured on the outputs after it
and not diluted by the months before; once the watched stream is longer than two reference periods the
blocks grow with it (a new sequence starts when the outputs since the last start reach half of those
watched before it), so a log of n outputs runs O(log n) sequences, each moved on in one pass over its
outputs: time O(n log n), memory O(n) for the outputs themselves. An alarm is raised the first time one
of them is disjoint from the reference interval: the mean has moved, up or down. Each step is checked
on the sequence's coarse-grid bounds (wider than its refined bounds by at most 1/400 of the scale), so a
refinement is paid once per sequence, not at every output.

The guarantee: if no system's scores change in distribution over time (each output a draw from the
same population), the chance of any alarm for any system, at any time in the whole stream, is at
most ``1 - confidence``. Each system gets ``alpha / K`` of the error (K systems): half for its
reference interval, half spent over its sequences, the j-th at ``alpha / (2K) x 6 / (pi^2 j^2)``
(the sum over j is ``alpha / (2K)``); while all hold, two intervals of one mean cannot be disjoint.
A normal approximation recomputed each day (what a dashboard does) has no such bound: it raises
false alarms at the rate it is looked at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.errors import ConfigError
from judgelab.metrics.betting import CHUNK, RunningSequence, betting_interval

REFERENCE_SHARE = 0.2  # without reference_until: the earliest fifth of each system's outputs
MIN_REFERENCE = 5  # outputs a reference period needs


@dataclass(frozen=True)
class Watch:
    """One system: its reference interval, its sequence since, and the alarm if the mean moved."""

    system: str
    reference: tuple[float, float]
    reference_mean: float
    reference_n: int
    current: tuple[float, float]  # the latest block's sequence, on the outputs since it began
    current_mean: float
    current_n: int
    alarm: str | None  # "up" or "down"
    alarm_at: Any  # the time of the output that raised it

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "reference": list(self.reference), "reference_mean": self.reference_mean,
                "reference_n": self.reference_n, "current": list(self.current), "current_mean": self.current_mean,
                "current_n": self.current_n, "alarm": self.alarm,
                "alarm_at": None if self.alarm_at is None else str(self.alarm_at)}


def monitor(systems, times, values, scale: tuple[float, float], *, reference_until: Any = None,
            confidence: float = 0.95) -> list[Watch]:
    """One :class:`Watch` per system from each output's system, time and judged value (the time:
    anything ordered, e.g. datetimes or numbers; ties keep the given order)."""
    values = np.asarray(values, dtype=float)
    rows_of: dict[str, list[int]] = {}
    for k, system in enumerate(systems):
        if np.isfinite(values[k]):
            rows_of.setdefault(system, []).append(k)
    times = list(times)
    names = sorted(set(systems))
    level = 1 - (1 - confidence) / (2 * len(names))
    watches = []
    for name in names:
        rows = sorted(rows_of.get(name, []), key=lambda k: times[k])  # stable: ties keep the file's order
        watches.append(_watch(name, [times[k] for k in rows], values[rows], scale, reference_until, level))
    return watches


RESTART_SHARE = 0.5  # a new sequence starts after max(reference, this share of the outputs watched before it)


def sequence_starts(cut: int, n: int) -> list[int]:
    """Where the sequences start: every ``cut`` outputs after the reference period (the first at ``cut``), the
    gap growing to half of what was watched before once that is longer, so a change is diluted by at most a
    third of a sequence's outputs and n outputs need O(log n) sequences."""
    starts = [cut]
    while True:
        gap = max(cut, math.ceil(RESTART_SHARE * (starts[-1] - cut)))
        if starts[-1] + gap >= n:
            return starts
        starts.append(starts[-1] + gap)


def _watch(name: str, times: list, values: np.ndarray, scale, reference_until, level: float) -> Watch:
    if reference_until is None:
        cut = max(MIN_REFERENCE, int(round(REFERENCE_SHARE * len(values))))
    else:
        cut = int(sum(t < reference_until for t in times))
    if cut < MIN_REFERENCE or cut >= len(values):
        raise ConfigError(f"system {name!r}: {cut} of its {len(values)} judged outputs fall in the reference period; "
                          f"monitoring needs at least {MIN_REFERENCE} there and one after (set --reference-until)")
    alpha = (1 - level) / 2  # half for the reference interval, half spent over the restarted sequences
    reference = betting_interval(values[:cut], scale, confidence=1 - alpha, order_seed=0)
    starts = sequence_starts(cut, len(values))
    running: list[tuple[int, RunningSequence]] = []
    alarm: tuple[int, str] | None = None  # (output, direction)
    for begin in range(cut, len(values), CHUNK):  # every sequence moved on over the same block of outputs
        end = min(begin + CHUNK, len(values))
        for j, start in enumerate(starts, start=1):
            if begin <= start < end:
                spent = alpha * 6 / (math.pi ** 2 * j ** 2)
                running.append((start, RunningSequence(scale, confidence=1 - spent)))
        for start, sequence in running:
            first = max(begin, start)
            low, high = sequence.extend(values[first:end])
            moved = (low > reference.high) | (high < reference.low)
            if moved.any() and (alarm is None or first + int(np.argmax(moved)) < alarm[0]):
                at = int(np.argmax(moved))
                alarm = (first + at, "up" if low[at] > reference.high else "down")
        if alarm is not None:  # nothing later can raise an earlier alarm: only the latest sequence is still read
            running = running[-1:]
    start, latest = running[-1]
    low_end, high_end = latest.bounds()
    return Watch(name, (reference.low, reference.high), float(values[:cut].mean()), cut,
                 (float(low_end), float(high_end)), float(values[start:].mean()), len(values) - start,
                 None if alarm is None else alarm[1], None if alarm is None else times[alarm[0]])


def watch_files(data, judgments, *, aspect: str | None = None, judge: str | None = None, field: str | None = None,
                time_field: str = "time", reference_until: Any = None, scale: tuple[float, float] | None = None,
                confidence: float = 0.95) -> list[Watch]:
    """:func:`monitor` over a JSON-lines data file (each item's time in ``time_field``) and its judgments:
    what ``judgelab evaluate --monitor`` runs. ``reference_until``: a time of the same kind as the items'
    (an ISO 8601 text or a number is parsed); ``scale``: the judged scores' range where the items declare
    none. Both files are read a line at a time, each line checked as ``load_items`` / ``load_judgments``
    check it, keeping a system, a time and a number per output: a log of a million outputs, not a million
    objects."""
    from judgelab.data.stream import iter_items
    from judgelab.evaluate.systems import widest_scale

    if not str(data).endswith((".jsonl", ".jsonl.gz")):
        raise ConfigError(f"--monitor reads each output's time from a JSON-lines data file; {data} is not one")
    times = read_times(data, time_field)
    until = _reference_time(reference_until, times)
    system_of, declared = {}, set()
    for item in iter_items(data):
        system_of[item.id] = item.system_id or "all"
        declared.add(item.aspect_scale(aspect) if aspect else item.scale)
    scale = scale or widest_scale(declared)
    if scale is None:
        raise ConfigError("--monitor needs the judged scores' range: give --scale LOW,HIGH (the items declare none)")
    judged = _judged_values(judgments, field, aspect, judge, system_of)
    lo, hi = scale
    off = next(((u, v) for u, v in judged.items() if not lo <= v <= hi), None)
    if off is not None:
        count = sum(1 for v in judged.values() if not lo <= v <= hi)
        raise ConfigError(f"{count} judged score(s) fall outside {lo:g}..{hi:g} (e.g. {off[1]:g} for item "
                          f"{off[0]!r}): give the judge's own range with --scale LOW,HIGH")
    units = list(judged)
    return monitor([system_of[u] for u in units], [times.get(u) for u in units], [judged[u] for u in units], scale,
                   reference_until=until, confidence=confidence)


def _judged_values(judgments, field: str | None, aspect: str | None, judge: str | None,
                   system_of: dict[str, str]) -> dict[str, float]:
    """{item id: the judge's score} for the items of the data, one judge's (by name, else by the prefix of one
    name, as ``select_judgments`` chooses), judgments read one at a time; failed judgments are left out."""
    from judgelab.data.io import iter_judgments, judges_named
    from judgelab.metrics.align import judge_value, several_judges

    by_judge: dict[str | None, dict[str, float]] = {}
    for judgment in iter_judgments(judgments, field=field):
        if judgment.item_id not in system_of or (aspect is not None and judgment.aspect not in (None, aspect)):
            continue
        value = judge_value(judgment, "pointwise") if judgment.ok else None
        if value is not None and math.isfinite(value):
            by_judge.setdefault(judgment.judge, {})[judgment.item_id] = value
    names = [name for name in by_judge if name is not None]
    if judge is not None:
        chosen = judges_named(judge, names, str(judgments))
        if len(chosen) > 1:
            raise several_judges(sorted(chosen), judge, "--judge")
        return by_judge[chosen[0]]
    if len(names) > 1:
        raise several_judges(sorted(names), judge, "--judge")
    merged: dict[str, float] = {}
    for values in by_judge.values():  # judgments without a judge name and those of the one named judge
        merged.update(values)
    return merged


def _reference_time(given: Any, times: dict[str, Any]):
    """``--reference-until`` parsed, and of the same kind as the items' times (a date is not compared with a
    number)."""
    if given is None:
        return None
    until = parse_time(given) if isinstance(given, str) else given
    if isinstance(given, str) and until is None:
        try:  # "1700000000" on a command line is a number
            until = parse_time(float(given))
        except (ValueError, OverflowError):
            until = None
    if until is None:
        raise ConfigError(f"--reference-until {given!r}: give an ISO 8601 date or time, or a number")
    kinds = {type(t).__name__ for t in times.values()}
    if kinds and type(until).__name__ not in kinds:
        theirs = "dates or times" if "datetime" in kinds else "numbers"
        raise ConfigError(f"--reference-until {given!r}: the items' times are {theirs}; give one of those")
    return until


def read_times(path, field: str) -> dict[str, Any]:
    """{item id: time} from a JSON-lines data file's ``field`` (a dotted path reaches into ``extra``):
    an ISO 8601 date or time, or a number. A line without it, or with something else there, is an
    error naming the file, the line and the field."""
    from judgelab.data.io import iter_jsonl, value_at
    from judgelab.errors import DataError

    times, kinds = {}, set()
    for line, record in iter_jsonl(path):
        value = value_at(record, field)
        if value is None and isinstance(record.get("extra"), dict):
            value = value_at(record["extra"], field)
        time = parse_time(value)
        if time is None:
            raise DataError(f"no time here ({'missing' if value is None else repr(value)[:60]}): --monitor reads each "
                            "output's time (an ISO 8601 date or time, or a number) from --time-field",
                            str(path), line, field)
        kinds.add(type(time).__name__)
        if len(kinds) > 1:
            raise DataError(f"{value!r} is not the same kind of time as the lines before (dates and numbers mixed)",
                            str(path), line, field)
        times[str(record.get("id"))] = time
    return times


def parse_time(value: Any):
    """An ISO 8601 date/time (a timezone-naive one is taken as UTC) or a finite number; None otherwise."""
    import datetime as dt
    import math

    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer past float's range is no time judgelab can order
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
    return None


__all__ = ["Watch", "monitor", "parse_time", "read_times", "sequence_starts", "watch_files"]
