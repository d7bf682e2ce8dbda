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
    (lambda: jl.judge(MISSING, timeout=float("inf")), "timeout inf: input should be a finite"),
    (lambda: jl.judge(MISSING, limit=0), "limit 0: input should be greater than or equal to 1"),
])
def test_a_number_out_of_range_is_a_value_error_naming_the_argument(call, named):
    with pytest.raises(ValueError) as raised:
        call()
    assert isinstance(raised.value, ArgumentError) and isinstance(raised.value, ConfigError)
    assert str(raised.value).startswith(named) and "--" not in str(raised.value)
