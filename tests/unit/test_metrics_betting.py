"""Betting intervals and confidence sequences for bounded means: against the authors' package
(confseq) on the same inputs, and their defining properties (coverage, scale, sampling without
replacement, anytime validity).

``tests/data/confseq_reference.json`` holds 24 cases and what confseq 0.0.11 returned for them,
written by ``bench/peers/confseq_driver.py``. To rerun confseq itself (it needs NumPy < 2 and a
C++ build against Boost, so it lives in its own venv)::

    apt-get install libboost-dev
    python3 -m venv ~/.cache/judgelab/confseq-venv
    ~/.cache/judgelab/confseq-venv/bin/pip install "numpy<2" scipy matplotlib multiprocess \
        "pybind11>=2.11" scikit-build cmake ninja setuptools wheel
    ~/.cache/judgelab/confseq-venv/bin/pip install --no-build-isolation confseq==0.0.11

and ``test_against_confseq_live`` runs it on fresh inputs.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgelab.metrics.betting import (
    betting_interval,
    betting_pvalues,
    confidence_sequence,
    rectified_interval,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "confseq_reference.json"
DRIVER = Path(__file__).resolve().parents[2] / "bench" / "peers" / "confseq_driver.py"
CONFSEQ_PYTHON = Path(os.environ.get("JUDGELAB_CONFSEQ_PYTHON",
                                     Path.home() / ".cache" / "judgelab" / "confseq-venv" / "bin" / "python"))
GRID_STEP = 1e-3  # confseq's grid (breaks=1000) pads each end by one step


def ours(case):
    """Our bounds after each observation, in the same setting as the confseq call."""
    confidence = 1 - case["alpha"]
    if case["anytime"]:
        return confidence_sequence(case["x"], (0, 1), confidence=confidence, population=case["N"],
                                   truncation=case["c"])
    interval = betting_interval(case["x"], (0, 1), confidence=confidence, population=case["N"],
                                truncation=case["c"])
    return np.array([interval.low]), np.array([interval.high])


def check_against(case, reference):
    low, high = ours(case)
    ref_low, ref_high = np.array(reference["low"]), np.array(reference["high"])
    if not case["anytime"]:
        ref_low, ref_high = ref_low[-1:], ref_high[-1:]
    # the same set of kept means on a finer grid: within confseq's step, and never wider than its hull
    assert np.all(np.abs(low - ref_low) <= GRID_STEP + 1e-9), (low, ref_low)
    assert np.all(np.abs(high - ref_high) <= GRID_STEP + 1e-9), (high, ref_high)
    assert np.all(low >= ref_low - 1e-9) and np.all(high <= ref_high + 1e-9)
    # p-values: 1 / the largest martingale value confseq reached at each candidate mean
    p = betting_pvalues(case["x"], (0, 1), case["means"], confidence=1 - case["alpha"], population=case["N"],
                        anytime=case["anytime"], truncation=case["c"])
    expected = np.minimum(1.0, 1.0 / np.array(reference["largest_martingale"]))
    np.testing.assert_allclose(p, expected, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("index", range(24))
def test_matches_confseq_reference(index):
    recorded = json.loads(DATA.read_text())
    assert recorded["confseq"] == "0.0.11"
    case = recorded["cases"][index]
    check_against(case, case["confseq"])


def test_against_confseq_live(tmp_path):
    """confseq itself on fresh inputs (skipped unless its venv exists; see the module docstring)."""
    if not CONFSEQ_PYTHON.exists():
        pytest.skip(f"no confseq interpreter at {CONFSEQ_PYTHON} (optional: the recorded cases are checked above)")
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    cases = [{"x": np.round(rng.beta(a, b, n), 6).tolist(), "N": population, "alpha": 0.05, "anytime": anytime,
              "c": 0.9, "means": np.round(rng.uniform(0, 1, 4), 4).tolist()}
             for a, b, n, population, anytime in ((0.5, 2, 15, None, False), (2, 2, 30, 45, False),
                                                 (5, 1, 20, None, True), (1, 1, 25, 30, True))]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    subprocess.run([str(CONFSEQ_PYTHON), str(DRIVER), str(tmp_path / "cases.json"), str(tmp_path / "out.json")],
                   check=True, timeout=300)
    for case, reference in zip(cases, json.loads((tmp_path / "out.json").read_text()), strict=True):
        check_against(case, reference)


def test_interval_is_inside_the_scale_and_never_a_point():
    interval = betting_interval([5, 5, 5], (1, 5))
    assert 1 <= interval.low < interval.high == 5
    two = betting_interval([3.0, 3.0], (1, 5))
    assert two.width > 2  # two equal labels say little: a wide interval, not a zero-width one


def test_every_unit_drawn_gives_the_exact_mean():
    x = [1, 2, 2, 5, 4, 3]
    interval = betting_interval(x, (1, 5), population=len(x))
    assert interval.low == pytest.approx(np.mean(x)) and interval.high == pytest.approx(np.mean(x))


def test_without_replacement_is_narrower_than_with():
    rng = np.random.default_rng(0)
    population = rng.integers(1, 6, 60).astype(float)
    x = rng.permutation(population)[:30]
    assert betting_interval(x, (1, 5), population=60).width < betting_interval(x, (1, 5)).width


def test_coverage_per_population_holds_at_few_draws():
    """Skewed, discrete populations of 40 units, 5 labels each: the 95% interval covers at least 95%."""
    rng = np.random.default_rng(1)
    for shape in ((0.4, 3), (3, 0.4), (1, 1)):
        population = np.round(rng.beta(*shape, 40) * 4) + 1
        truth = population.mean()
        hits = [betting_interval(rng.choice(population, 5, replace=False), (1, 5), population=40)
                for _ in range(300)]
        covered = np.mean([i.low <= truth <= i.high for i in hits])
        assert covered >= 0.95, (shape, covered)


def test_confidence_sequence_holds_under_peeking():
    """Look after every observation, stop at the first interval that excludes the truth: the error
    rate of the whole sequence stays under alpha (a t interval checked that way errs far more often)."""
    rng = np.random.default_rng(2)
    errors, t_errors = 0, 0
    for _ in range(200):
        x = rng.binomial(1, 0.3, 80).astype(float)
        low, high = confidence_sequence(x, (0, 1))
        errors += bool(np.any((low > 0.3) | (high < 0.3)))
        n = np.arange(2, 81)
        mean = np.cumsum(x)[1:] / n
        sd = np.array([x[:k].std(ddof=1) for k in n])
        half = 2.0 * sd / np.sqrt(n)
        t_errors += bool(np.any(np.abs(mean - 0.3) > half))
    assert errors / 200 <= 0.05
    assert t_errors > 2 * errors


def test_sequence_bounds_only_tighten():
    low, high = confidence_sequence(np.random.default_rng(3).uniform(0, 1, 50), (0, 1))
    assert np.all(np.diff(low) >= -1e-12) and np.all(np.diff(high) <= 1e-12)


def test_pvalues_agree_with_the_interval():
    x = np.random.default_rng(4).uniform(2, 4, 25)
    interval = betting_interval(x, (1, 5))
    p = betting_pvalues(x, (1, 5), [interval.low - 0.05, np.mean(x), interval.high + 0.05, 0.5, 6])
    assert p[0] <= 0.05 and p[2] <= 0.05 and p[1] > 0.05
    assert p[3] == 0 and p[4] == 0  # outside the scale: impossible


def test_rectified_interval_narrows_with_a_good_predictor_only_once_bets_are_not_capped():
    """The rectifier spans twice the scale, and a bounded-range guarantee cannot use its small variance
    until the bets stop being capped: with 20 labels a good predictor widens the interval, from 100 on
    it narrows it."""
    rng = np.random.default_rng(5)
    human_all = np.clip(np.round(rng.normal(3, 1, 400)), 1, 5)
    good = np.clip(human_all + rng.normal(0, 0.3, 400), 1, 5)
    widths = {}
    for n in (20, 100):
        labelled = rng.choice(400, n, replace=False)
        plain = betting_interval(human_all[labelled], (1, 5), population=400)
        fixed = rectified_interval(human_all[labelled], good[labelled], good, (1, 5), population=400)
        assert fixed.low <= human_all.mean() <= fixed.high
        widths[n] = fixed.width / plain.width
    assert widths[20] > 1 and widths[100] < 0.8


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_any_data_gives_an_ordered_interval_inside_the_scale(values, confidence):
    # not "around the sample mean": a candidate rejected at any time stays rejected, so a sample drawn
    # in a sorted order ([0] * 4 + [1] * 4 at 0.8: [0.162, 0.471]) can exclude its own mean; hence order_seed
    interval = betting_interval(values, (0, 1), confidence=confidence)
    assert 0 <= interval.low <= interval.high <= 1
    assert interval.width > 0 or math.isclose(interval.width, 0)


def test_a_sorted_sample_can_exclude_its_own_mean_and_a_shuffled_one_does_not():
    values = [0.0] * 4 + [1.0] * 4
    assert betting_interval(values, (0, 1), confidence=0.8).high < 0.5
    shuffled = betting_interval(values, (0, 1), confidence=0.8, order_seed=0)
    assert shuffled.low <= 0.5 <= shuffled.high


@pytest.mark.parametrize("bad, message", [
    ({"x": [1, 6], "scale": (1, 5)}, "outside the scale"),
    ({"x": [1, float("nan")], "scale": (1, 5)}, "finite"),
    ({"x": [1, 2], "scale": (5, 1)}, "low < high"),
    ({"x": [1, 2, 3], "scale": (1, 5), "population": 2}, "population"),
])
def test_bad_input_is_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        betting_interval(bad["x"], bad["scale"], population=bad.get("population"))


@pytest.mark.parametrize("population", [None, 9000])
def test_a_running_sequence_fed_in_blocks_has_the_batch_bounds_and_coarse_bounds_around_them(population):
    from judgelab.metrics.betting import CHUNK, RunningSequence

    x = np.random.default_rng(3).choice([1.0, 2.0, 3.0, 4.0, 5.0], size=2 * CHUNK + 77, p=[.1, .2, .3, .3, .1])
    running = RunningSequence((1, 5), confidence=0.9, population=population)
    low, high = running.extend(x[:CHUNK + 5])  # more than a block at once, then the rest one by one and in a block
    for value in x[CHUNK + 5:CHUNK + 40]:
        running.add(value)
    more_low, more_high = running.extend(x[CHUNK + 40:])
    batch = betting_interval(x, (1, 5), confidence=0.9, population=population, anytime=True)  # the sequence's last
    assert running.bounds() == (batch.low, batch.high)  # bit for bit
    assert len(low) == CHUNK + 5 and len(more_low) == len(x) - CHUNK - 40
    assert more_low[-1] <= batch.low and batch.high <= more_high[-1]  # coarse: never narrower
    assert batch.low - more_low[-1] <= 4 / 400 + 1e-12 and more_high[-1] - batch.high <= 4 / 400 + 1e-12
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0)  # a running intersection only shrinks
