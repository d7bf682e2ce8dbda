"""Watch systems as their judged outputs arrive over time, and raise an alarm when a mean moves
(``judgelab evaluate --monitor``; docs/evaluate.md, "Monitoring").

Each system's judged scores are read in time order. A reference period (before ``reference_until``,
else the earliest fifth of the system's outputs) gives the system's mean a betting interval. After
it, a confidence sequence for the mean is started at the beginning of every block of outputs as long
as the reference period (judgelab.metrics.betting), so a change is measured on the outputs after it
and not diluted by the months before. An alarm is raised the first time one of them is disjoint from
the reference interval: the mean has moved, up or down.

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
from judgelab.metrics.betting import betting_interval, confidence_sequence

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
    systems, times, values = list(systems), list(times), np.asarray(values, dtype=float)
    names = sorted(set(systems))
    level = 1 - (1 - confidence) / (2 * len(names))
    watches = []
    for name in names:
        rows = [k for k, s in enumerate(systems) if s == name and np.isfinite(values[k])]
        rows.sort(key=lambda k: times[k])  # stable: ties keep the file's order
        watches.append(_watch(name, [times[k] for k in rows], values[rows], scale, reference_until, level))
    return watches


def _watch(name: str, times: list, values: np.ndarray, scale, reference_until, level: float) -> Watch:
    if reference_until is None:
        cut = max(MIN_REFERENCE, int(round(REFERENCE_SHARE * len(values))))
    else:
        cut = sum(t < reference_until for t in times)
    if cut < MIN_REFERENCE or cut >= len(values):
        raise ConfigError(f"system {name!r}: {cut} of its {len(values)} judged outputs fall in the reference period; "
                          f"monitoring needs at least {MIN_REFERENCE} there and one after (set --reference-until)")
    alpha = (1 - level) / 2  # half for the reference interval, half spent over the restarted sequences
    reference = betting_interval(values[:cut], scale, confidence=1 - alpha, order_seed=0)
    alarm, alarm_at, latest = None, None, None
    for j, start in enumerate(range(cut, len(values), cut), start=1):
        spent = alpha * 6 / (math.pi ** 2 * j ** 2)
        low, high = confidence_sequence(values[start:], scale, confidence=1 - spent)
        latest = (start, float(low[-1]), float(high[-1]))
        moved = (low > reference.high) | (high < reference.low)
        if moved.any():
            at = start + int(np.argmax(moved))
            if alarm_at is None or at < alarm_at[0]:
                alarm = "up" if low[at - start] > reference.high else "down"
                alarm_at = (at, times[at])
    start, low_end, high_end = latest
    return Watch(name, (reference.low, reference.high), float(values[:cut].mean()), cut, (low_end, high_end),
                 float(values[start:].mean()), len(values) - start, alarm, None if alarm_at is None else alarm_at[1])


def read_times(path, field: str) -> dict[str, Any]:
    """{item id: time} from a JSON-lines data file's ``field`` (a dotted path reaches into ``extra``):
    an ISO 8601 date or time, or a number. A line without it, or with something else there, is an
    error naming the file, the line and the field."""
    from judgelab.data.io import _value_at, iter_jsonl
    from judgelab.errors import DataError

    times, kinds = {}, set()
    for line, record in iter_jsonl(path):
        value = _value_at(record, field)
        if value is None and isinstance(record.get("extra"), dict):
            value = _value_at(record["extra"], field)
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
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
    return None


__all__ = ["Watch", "monitor", "parse_time", "read_times"]
