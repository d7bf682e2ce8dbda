"""Python's verbs check their numbers as the CLI checks its flags, with one definition of each range
(``judgelab.limits``) and the argument's own name in the message: ``jl.evaluate(..., confidence=1.5)`` once
failed inside numpy ("Percentiles must be in the range [0, 100]") and ``mix=3`` was taken silently."""

from __future__ import annotations

import pytest

import judgelab as jl
from judgelab.errors import ArgumentError, ConfigError

MISSING = "no-such-file.jsonl"  # checked before anything is read: the data is never opened


@pytest.mark.parametrize("call, named", [
    (lambda: jl.evaluate(MISSING, confidence=1.5), "confidence 1.5: input should be less than 1"),
    (lambda: jl.evaluate(MISSING, bootstrap=-1), "bootstrap -1: input should be greater than or equal to 0"),
    (lambda: jl.evaluate(MISSING, seed=2**40), "seed 1099511627776: input should be less than or equal to"),
    (lambda: jl.compare(MISSING, baseline="a", candidate="b", alpha=1e-300), "alpha 1e-300: input should be greater"),
    (lambda: jl.compare(MISSING, baseline="a", candidate="b", margin=float("nan")), "margin nan: input should be a finite"),
    (lambda: jl.meta(MISSING, confidence=0), "confidence 0: input should be greater than 0"),
    (lambda: jl.audit(MISSING, judgments=MISSING, concurrency=10_000), "concurrency 10000: input should be less"),
    (lambda: jl.sample(MISSING, 10, mix=3), "mix 3: input should be less than or equal to 1"),
    (lambda: jl.sample(MISSING, 0), "budget 0: input should be greater than 0"),  # once "--budget 0" in Python
    (lambda: jl.judge(MISSING, timeout=float("inf")), "timeout inf: input should be a finite"),
    (lambda: jl.judge(MISSING, limit=0), "limit 0: input should be greater than or equal to 1"),
])
def test_a_number_out_of_range_is_a_value_error_naming_the_argument(call, named):
    with pytest.raises(ValueError) as raised:
        call()
    assert isinstance(raised.value, ArgumentError) and isinstance(raised.value, ConfigError)
    assert str(raised.value).startswith(named) and "--" not in str(raised.value)


def test_the_word_options_spelled_for_editors_are_the_librarys_own_lists():
    from typing import get_args

    from judgelab.api import verbs
    from judgelab.evaluate import (
        calibrate,
        design_variance,
        intervals,
        ir,
        preferences,
        rank_sets,
        two_systems,
    )

    assert get_args(verbs.Calibration) == calibrate.CHOICES
    assert get_args(verbs.Target) == design_variance.TARGETS == preferences.TARGETS
    assert get_args(verbs.Variance) == design_variance.VARIANCES
    assert get_args(verbs.Intervals) == intervals.INTERVALS
    assert get_args(verbs.Unjudged) == ir.UNJUDGED
    assert get_args(verbs.Estimand) == preferences.ESTIMANDS
    assert get_args(verbs.RankMethod) == rank_sets.RANK_METHODS
    assert get_args(verbs.GateEstimator) == two_systems.ESTIMATORS
    assert get_args(verbs.Pairing) == two_systems.PAIRINGS


def test_every_parameter_of_evaluate_is_documented_where_editors_show_it():
    import inspect
    import re

    doc = jl.evaluate.__doc__
    missing = [name for name in inspect.signature(jl.evaluate).parameters if not re.search(rf"^\s+{name}:", doc, re.M)]
    assert missing == []
