"""The bias table (judgelab.audit.audit) on constructed comparisons with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.audit import Pair, Verdicts, audit
from judgelab.errors import ConfigError, DataError


def _comparisons(n: int = 40, seed: int = 0) -> dict[str, Pair]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        system_a, system_b = ("x", "y") if i % 2 == 0 else ("y", "x")
        out[f"c{i}"] = Pair(id=f"c{i}", group=f"q{i // 2}", human=str(rng.choice(["a", "b", "tie"])),
                                  system_a=system_a, system_b=system_b, output_a="w " * int(rng.integers(5, 50)),
                                  output_b="w " * int(rng.integers(5, 50)))
    return out


def test_a_judge_that_always_picks_the_first_shown_output():
    comparisons = _comparisons()
    verdicts = Verdicts(judge="first", original=dict.fromkeys(comparisons, "a"), swapped=dict.fromkeys(comparisons, "b"))
    report = audit(verdicts, comparisons, n_resamples=100)
    assert report.both_orders and report.n_items == 40
    assert report.row("flip rate").value == 1.0
    assert report.row("first-position rate (both orders)").value == 1.0
    assert report.row("first-position rate, judge").value == 1.0
    assert report.row("tie rate, judge").value == 0.0
    # every verdict flips, so the position-corrected verdict is a tie: half credit on every labelled item
    assert report.row("accuracy, both orders (position-corrected)").value == 0.5
    assert report.row("length coefficient").reading  # a length coefficient was attempted (the judge is constant)


def test_self_preference_and_length_controlled_win_rate_against_a_baseline():
    comparisons = _comparisons()
    # the judge always prefers system x
    original = {i: "a" if c.system_a == "x" else "b" for i, c in comparisons.items()}
    report = audit(Verdicts("j", original, {}), comparisons, family="x", baseline="y", n_resamples=100)
    assert not report.both_orders
    assert report.row("x win share, judge").value == 1.0
    assert report.row("x vs y: win rate").value == 1.0
    lc = report.row("x vs y: length-controlled")
    assert np.isnan(lc.value) and "does not vary" in lc.reading
    assert any("one order only" in line for line in report.not_measured)


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"baseline": "z"}, ConfigError, "not a system"),
    ({"family": "nobody"}, ConfigError, "family 'nobody'"),
])
def test_options_naming_nothing_in_the_data(options, error, message):
    comparisons = _comparisons(6)
    with pytest.raises(error, match=message):
        audit(Verdicts("j", dict.fromkeys(comparisons, "a"), {}), comparisons, n_resamples=10, **options)


def test_a_judged_item_missing_from_the_data():
    with pytest.raises(DataError, match="not in the data"):
        audit(Verdicts("j", {"elsewhere": "a"}, {}), _comparisons(4), n_resamples=10)
