"""Inspect AI's value_to_float and epoch reducers as the Inspect reader applies them (written out from
inspect_ai 0.3.285's scorer/_metric.py and scorer/_reducer/reducer.py; the real logs' own figures are
checked in tests/e2e/test_cli_sources_runs.py)."""

from __future__ import annotations

import math

import pytest

from judgelab.data.sources._inspect_scores import known, reduce, to_float, unscored


@pytest.mark.parametrize(("value", "number"), [
    ("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), ("yes", 1.0), ("YES", 1.0), ("No", 0.0), ("true", 1.0),
    ("False", 0.0), ("0.25", 0.25), ("1e-1", 0.1), (True, 1.0), (False, 0.0), (3, 3.0), (0.5, 0.5),
    ("c", None), ("maybe", None), ("nan", None), ("inf", None), ([1], None), ({"a": 1}, None), (None, None)])
def test_values_read_as_inspect_reads_them(value, number):
    assert to_float(value) == number


def test_unscored_is_nan_or_null():
    assert unscored(math.nan) and unscored(None) and not unscored(0.0) and not unscored("N")


@pytest.mark.parametrize(("reducer", "values", "expected"), [
    ("mean", ["C", "I", "P"], 0.5),
    ("mean", ["C", math.nan, "I"], 0.5),  # an unscored epoch is left out
    ("median", [0.0, 0.5, 1.0, 1.0], 0.75),
    ("mode", ["I", "C", "C"], "C"),
    ("mode", ["I", "C"], "I"),  # a tie: the first seen
    ("majority", ["C", "C", math.nan], "C"),
    ("max", ["I", "P", "I"], "P"),
    ("max", ["no", "yes"], "yes"),
    ("at_least_2", ["C", "I", "C"], 1.0),
    ("at_least_2", ["C", "P", "P"], 0.0),  # P is 0.5: below the 1.0 that counts
    ("pass_at_2", ["C", "I", "I"], 2 / 3),  # 1 - C(2,2)/C(3,2)
    ("pass_at_2", ["C", "C", "I"], 1.0),
    ("pass_at_1", ["C", "I", "I", "I"], 0.25),
    ("pass_k_2", ["C", "C", "I"], 1 / 3),  # C(2,2)/C(3,2)
])
def test_reducers(reducer, values, expected):
    assert known(reducer)
    assert reduce(reducer, values) == (pytest.approx(expected) if isinstance(expected, float) else expected)


@pytest.mark.parametrize(("reducer", "values"), [
    ("mean", [math.nan, None]), ("majority", ["C", "I", math.nan]), ("pass_at_3", ["C", "I", math.nan])])
def test_undefined_reductions_are_unscored(reducer, values):
    assert math.isnan(reduce(reducer, values))


def test_unknown_reducers():
    assert not known("trimmed_mean") and not known("at_least") and not known("max_2")
