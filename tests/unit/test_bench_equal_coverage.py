"""The equal-coverage width of bench/bench_ppi_peers.py (a published comparison): an estimator's intervals
scaled by its system's 95% stretch cover that system in exactly 95% of the draws."""

from __future__ import annotations

import numpy as np
import pytest
from bench.bench_ppi_peers import stretch, stretch_at


def test_stretch_is_the_factor_each_arm_needs_to_reach_the_truth():
    ci = np.array([0.0, 1.0])
    assert stretch(ci, 0.8, 0.9) == pytest.approx(0.5) # upper arm 0.2, truth 0.1 above the estimate
    assert stretch(ci, 0.8, 0.0) == 1.0  # lower arm 0.8, truth at its end
    assert stretch(ci, 0.8, -0.4) == pytest.approx(1.5)
    assert stretch(np.array([1.0, 1.0]), 1.0, 1.0) == 0.0  # zero width on the truth: covers
    assert stretch(np.array([1.0, 1.0]), 1.0, 0.9) == np.inf  # zero width beside it: no factor helps


def test_intervals_scaled_by_the_stretch_cover_their_system_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    truth, draws = 0.3, 2000
    estimates = truth + rng.normal(0, 0.1, draws)
    lower_arm, upper_arm = rng.uniform(0.05, 0.3, draws), rng.uniform(0.05, 0.3, draws)  # skewed, varying intervals
    intervals = np.stack([estimates - lower_arm, estimates + upper_arm], axis=1)
    factor = stretch_at([[stretch(ci, e, truth) for ci, e in zip(intervals, estimates, strict=True)]])[0]
    scaled = np.stack([estimates - factor * lower_arm, estimates + factor * upper_arm], axis=1)
    covered = np.mean((scaled[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= scaled[:, 1]))
    assert 0.95 <= covered < 0.95 + 1.5 / draws
    assert np.isnan(stretch_at([[0.5] * 99])[0])  # under 100 intervals: no 95% stretch
