"""evaluate --monitor (evaluate/monitor.py): no false alarm beyond the level over a whole stream, a planted
drift caught, times read and refused with the file, line and field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from judgelab.errors import ConfigError, DataError
from judgelab.evaluate.monitor import monitor, parse_time, read_times, sequence_starts, watch_files


def stream(n_days=30, per_day=10, drop_from=None, seed=0, systems=("a", "b")):
    rng = np.random.default_rng(seed)
    names, times, values = [], [], []
    for day in range(n_days):
        for system in systems:
            shift = -0.8 if (drop_from is not None and system == "b" and day >= drop_from) else 0.0
            for _ in range(per_day):
                names.append(system)
                times.append(float(day))
                values.append(float(np.clip(np.round(rng.normal(3.5 + shift, 0.8)), 1, 5)))
    return names, times, values


def test_no_change_raises_no_alarm_beyond_the_level_where_daily_normal_checks_do():
    alarms, naive = 0, 0
    for seed in range(30):
        names, times, values = stream(seed=seed)
        watches = monitor(names, times, values, (1, 5))
        alarms += any(w.alarm for w in watches)
        # a dashboard's check: each day, a normal interval of the days so far against the first six days
        values, names, times = np.array(values), np.array(names), np.array(times)
        for system in ("a", "b"):
            mine = names == system
            reference = values[mine & (times < 6)]
            for day in range(7, 30):
                recent = values[mine & (times >= 6) & (times <= day)]
                diff = recent.mean() - reference.mean()
                se = np.sqrt(recent.var(ddof=1) / len(recent) + reference.var(ddof=1) / len(reference))
                if abs(diff) > stats.norm.ppf(0.975) * se:
                    naive += 1
                    break
    assert alarms / 30 <= 0.05
    assert naive > 2 * alarms  # looked at every day, the normal check raises false alarms


def test_a_planted_drop_is_caught_after_it_happens():
    names, times, values = stream(drop_from=15)
    watches = {w.system: w for w in monitor(names, times, values, (1, 5))}
    assert watches["a"].alarm is None
    assert watches["b"].alarm == "down" and watches["b"].alarm_at >= 15


def test_the_reference_period_can_end_at_a_given_time_and_needs_outputs():
    names, times, values = stream(n_days=10)
    watches = monitor(names, times, values, (1, 5), reference_until=3.0)
    assert {w.reference_n for w in watches} == {30}
    with pytest.raises(ConfigError, match="reference period"):
        monitor(names, times, values, (1, 5), reference_until=0.0)


def test_times_are_read_with_their_line_and_refused_with_it(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"id": f"i{k}", "extra": {"at": f"2026-11-0{k + 1}"}}) + "\n" for k in range(3)))
    times = read_times(good, "at")
    assert times["i0"] < times["i2"] and parse_time("2026-11-01T10:00:00Z").tzinfo is not None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a", "time": 1.0}) + "\n" + json.dumps({"id": "b"}) + "\n")
    with pytest.raises(DataError) as raised:
        read_times(bad, "time")
    assert raised.value.line == 2 and raised.value.field == "time" and str(bad) in str(raised.value)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps({"id": "a", "time": 1.0}) + "\n" + json.dumps({"id": "b", "time": "2026-11-01"}) + "\n")
    with pytest.raises(DataError, match="mixed"):
        read_times(mixed, "time")
    assert parse_time("soon") is None and parse_time(True) is None and parse_time(float("nan")) is None


def test_a_long_log_runs_few_sequences_in_one_pass_and_still_catches_a_late_drop():
    # 2 systems x 200,000 outputs after a reference of 500: once quadratic (a sequence every 500 outputs, each
    # refined at every step), now O(log n) sequences moved on block by block
    assert sequence_starts(20, 100) == [20, 40, 60, 80]  # the default's blocks of a fifth, as before
    starts = sequence_starts(500, 200_000)
    assert len(starts) < 20 and starts[:3] == [500, 1000, 1500]
    assert all(b - a <= max(500, (a - 500) / 2 + 1) for a, b in zip(starts, starts[1:], strict=False))  # bounded
    rng = np.random.default_rng(4)
    n = 200_000
    values = np.clip(np.round(rng.normal(3.5, 0.8, 2 * n)), 1, 5)
    names = np.array(["a", "b"] * n)
    times = np.repeat(np.arange(n, dtype=float), 2)
    values[(names == "b") & (times >= 190_000)] -= 1  # the last 5% of b drops a point
    watches = {w.system: w for w in monitor(names, times, np.clip(values, 1, 5), (1, 5), reference_until=500.0)}
    assert watches["a"].alarm is None and watches["b"].alarm == "down" and watches["b"].alarm_at >= 190_000
    assert watches["a"].current[0] <= 3.5 <= watches["a"].current[1] or abs(watches["a"].current_mean - 3.5) < 0.05


def test_times_past_a_float_and_a_reference_of_another_kind_are_refused_by_name(tmp_path):
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"id": "a", "time": 1}) + "\n" + json.dumps({"id": "b", "time": 10 ** 400}) + "\n")
    with pytest.raises(DataError) as raised:
        read_times(huge, "time")
    assert raised.value.line == 2 and str(huge) in str(raised.value)
    assert parse_time(10 ** 400) is None and parse_time(10 ** 6) == 1e6
    data = tmp_path / "logs.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "system_id": "a", "output": "o", "scale": [1, 5],
                                        "time": float(k)}) + "\n" for k in range(12)))
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps({"item_id": f"i{k}", "score": 3.0}) + "\n" for k in range(12)))
    with pytest.raises(ConfigError, match="the items' times are numbers"):
        watch_files(data, judged, reference_until="2026-11-01")
    assert watch_files(data, judged, reference_until="6")[0].reference_n == 6  # a number given as text


def test_the_files_are_read_a_line_at_a_time_and_one_judge_is_chosen(tmp_path):
    data = tmp_path / "logs.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "system_id": "ab"[k % 2], "output": "o", "scale": [1, 5],
                                        "time": float(k // 2)}) + "\n" for k in range(40)))
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps({"item_id": f"i{k}", "judge": judge, "score": 3.0 + (judge == "big/v2")})
                              + "\n" for k in range(40) for judge in ("small", "big/v2")))
    with pytest.raises(ConfigError, match="judges"):
        watch_files(data, judged)  # two judges: say which
    watches = {w.system: w for w in watch_files(data, judged, judge="big")}  # a prefix of one judge's name
    assert watches["a"].reference_mean == watches["b"].current_mean == 4.0 and watches["b"].reference_n == 5
    with pytest.raises(ConfigError, match="no judgment from judge 'nobody'"):
        watch_files(data, judged, judge="nobody")
    judged.write_text(json.dumps({"item_id": "i0", "score": 9.0}) + "\n")
    with pytest.raises(ConfigError, match="1 judged score\\(s\\) fall outside 1..5"):
        watch_files(data, judged)
