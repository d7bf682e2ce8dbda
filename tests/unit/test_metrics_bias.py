"""Bias statistics (judgelab.metrics.bias) on constructed data with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.metrics import bias


def test_a_judge_that_always_picks_the_first_shown_output():
    # Original order: a shown first, judge says a. Swapped: b shown first, judge says b.
    result = bias.position_bias_both_orders(["a"] * 20, ["b"] * 20, n_resamples=200)
    assert result["first_position_rate"].value == 1.0
    assert result["flip_rate"].value == 1.0 and result["flips_to_first"].value == 1.0
    lo, hi = result["flip_rate"].ci  # Wilson: an interval even at 20/20
    assert 0.8 < lo < 1.0 and hi == pytest.approx(1.0)


def test_a_consistent_judge_has_no_position_bias():
    verdicts = ["a", "b"] * 15
    result = bias.position_bias_both_orders(verdicts, verdicts, n_resamples=200)
    assert result["flip_rate"].value == 0.0
    assert result["first_position_rate"].value == pytest.approx(0.5)


def test_hand_counted_position_shares_and_missing_verdicts():
    first = ["a", "a", "b", "tie", None, "b"]
    second = ["b", "a", "a", "b", "a", "b"]
    result = bias.position_bias_both_orders(first, second, n_resamples=100)
    # item 4 has no original verdict: left out. Flips: items 0, 2, 3 of 5.
    assert result["flip_rate"].value == pytest.approx(3 / 5) and result["flip_rate"].n == 5
    # first-shown picks: original 'a' (items 0, 1) + swapped 'b' (items 0, 3, 5) = 5 of 9 decisive verdicts.
    assert result["first_position_rate"].value == pytest.approx(5 / 9)
    assert result["first_position_rate"].n == 9
    assert result["flips_to_first"].value == pytest.approx(1 / 5)


def test_groups_give_a_cluster_bootstrap_interval():
    rng = np.random.default_rng(1)
    first = rng.choice(["a", "b"], 200)
    second = rng.choice(["a", "b"], 200)
    groups = np.repeat(np.arange(20), 10)
    result = bias.position_bias_both_orders(first, second, groups, n_resamples=300)
    flip = result["flip_rate"]
    assert flip.n_groups == 20 and flip.ci[0] < flip.value < flip.ci[1]


def test_one_order_against_humans_is_a_paired_difference():
    judge = ["a"] * 8 + ["b"] * 2
    human = ["a"] * 5 + ["b"] * 4 + ["tie"]
    result = bias.position_bias_one_order(judge, human, n_resamples=300)
    assert result["judge_first_position_rate"].value == pytest.approx(0.8)
    assert result["human_first_position_rate"].value == pytest.approx(5 / 9)  # the tie is not decisive
    assert result["difference"].difference == pytest.approx(0.8 - 5 / 9)
    lo, hi = result["difference"].ci
    assert lo <= 0.8 - 5 / 9 <= hi


def test_tie_rates():
    judge = ["tie", "a", "b", "tie"]
    human = ["tie (bothbad)", "a", "a", "b"]
    result = bias.tie_rates(judge, human, n_resamples=100)
    assert result["judge_tie_rate"].value == 0.5 and result["human_tie_rate"].value == 0.25
    assert result["difference"].difference == pytest.approx(0.25)
    assert bias.tie_rates(judge)["judge_tie_rate"].value == 0.5


def test_self_preference_counts_only_comparisons_with_one_own_side():
    system_a = ["gpt-4", "vicuna", "gpt-4-0613", "gpt-4", "gpt4all-13b"]
    system_b = ["vicuna", "gpt-4", "alpaca", "gpt-4-turbo", "koala"]
    judge = ["a", "b", "tie", "a", "a"]  # own side wins twice, one tie
    human = ["b", "b", "b", "a", "a"]  # own side wins once of three
    result = bias.self_preference(judge, human, system_a, system_b, "GPT-4", n_resamples=200)
    # rows 3 (both gpt-4) and 4 (gpt4all is not gpt-4) are left out
    assert result["judge_own_win_share"].n == 3
    assert result["judge_own_win_share"].value == pytest.approx(2.5 / 3)
    assert result["human_own_win_share"].value == pytest.approx(1 / 3)
    assert result["difference"].difference == pytest.approx(1.5 / 3)
    with pytest.raises(ValueError, match="family 'claude'"):
        bias.self_preference(judge, human, system_a, system_b, "claude")


def test_verdicts_outside_a_b_tie_are_refused():
    with pytest.raises(ValueError, match=r"verdict\[1\] is 'c'"):
        bias.position_bias_both_orders(["a", "c"], ["a", "b"])


def test_both_order_verdict_is_the_position_correction():
    assert list(bias.both_order_verdict(["a", "a", "b", None], ["a", "b", "b", "a"])) == ["a", "tie", "b", None]


def _simulated_pairs(n: int, length_effect: float, seed: int = 0):
    """Pairs whose true quality difference drives the humans; the judge also sees the length."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n)
    length_a, length_b = rng.normal(500, 150, n), rng.normal(500, 150, n)
    human = np.where(quality > 0, "a", "b")
    z = (length_a - length_b) / np.std(length_a - length_b, ddof=1)
    judge = np.where(rng.random(n) < 1 / (1 + np.exp(-(2 * quality + length_effect * z))), "a", "b")
    return judge, human, length_a, length_b


def test_verbosity_pairwise_finds_a_planted_length_preference():
    judge, human, length_a, length_b = _simulated_pairs(2000, 1.0)
    coefficient = bias.verbosity_pairwise(judge, length_a, length_b, human)
    assert coefficient.ci[0] > 0.5 and coefficient.n == 2000


def test_verbosity_pairwise_interval_covers_zero_without_length_preference():
    judge, human, length_a, length_b = _simulated_pairs(2000, 0.0, seed=3)
    coefficient = bias.verbosity_pairwise(judge, length_a, length_b, human)
    assert coefficient.ci[0] < 0 < coefficient.ci[1]


def test_verbosity_pairwise_human_covariate_absorbs_a_human_length_preference():
    # Humans prefer the longer output and the judge simply copies the humans: no bias beyond them.
    rng = np.random.default_rng(5)
    length_a, length_b = rng.normal(500, 150, 1500), rng.normal(500, 150, 1500)
    human = np.where(rng.random(1500) < 1 / (1 + np.exp(-(length_a - length_b) / 100)), "a", "b")
    judge = np.where(rng.random(1500) < 0.9, human, np.where(human == "a", "b", "a"))
    raw = bias.verbosity_pairwise(judge, length_a, length_b)
    beyond_humans = bias.verbosity_pairwise(judge, length_a, length_b, human)
    assert raw.ci[0] > 0.5
    assert beyond_humans.ci[0] < 0 < beyond_humans.ci[1]


def test_verbosity_with_both_orders_and_a_constant_judge():
    judge, human, length_a, length_b = _simulated_pairs(400, 1.0)
    both = bias.verbosity_pairwise(judge, length_a, length_b, human, judge_swapped=judge)
    assert both.value == pytest.approx(bias.verbosity_pairwise(judge, length_a, length_b, human).value)
    constant = bias.verbosity_pairwise(["a"] * 10, np.arange(10), np.zeros(10))
    assert np.isnan(constant.value) and "does not vary" in constant.reason


def test_verbosity_pointwise_recovers_a_known_slope():
    rng = np.random.default_rng(2)
    length = rng.normal(300, 100, 600)
    human = rng.normal(3, 1, 600)
    judge = human + 0.4 * (length - 300) / 100 + rng.normal(0, 0.1, 600)
    groups = np.repeat(np.arange(60), 10)
    coefficient = bias.verbosity_pointwise(judge, length, human, groups)
    per_sd = 0.4 * np.std(length, ddof=1) / 100
    assert coefficient.ci[0] < per_sd < coefficient.ci[1] and coefficient.n_groups == 60
    assert coefficient.value == pytest.approx(per_sd, abs=0.03)


def test_length_controlled_win_rate_undoes_a_pure_length_preference():
    # The candidate is no better than the baseline, but longer, and the judge likes length.
    rng = np.random.default_rng(4)
    n = 3000
    delta = rng.normal(200, 200, n)
    standardized = np.tanh(delta / np.std(delta, ddof=1))
    wins = (rng.random(n) < 1 / (1 + np.exp(-1.5 * standardized))).astype(float)
    result = bias.length_controlled_win_rate(wins, 500 + delta, np.full(n, 500.0))
    assert result["win_rate"].value > 0.6
    lc = result["length_controlled_win_rate"]
    assert lc.ci[0] < 0.5 < lc.ci[1]
    assert result["length_coefficient"].ci[0] > 1.0


def test_length_controlled_equals_raw_when_lengths_carry_nothing():
    rng = np.random.default_rng(6)
    wins = rng.choice([0.0, 0.5, 1.0], 2000, p=[0.3, 0.1, 0.6])
    result = bias.length_controlled_win_rate(wins, rng.normal(400, 50, 2000), rng.normal(400, 50, 2000))
    assert result["length_controlled_win_rate"].value == pytest.approx(result["win_rate"].value, abs=0.02)


def test_a_judge_that_always_prefers_the_longer_output_separates():
    rng = np.random.default_rng(7)
    length_a, length_b = rng.normal(500, 100, 100), rng.normal(500, 100, 100)
    coefficient = bias.verbosity_pairwise(np.where(length_a > length_b, "a", "b"), length_a, length_b)
    assert np.isnan(coefficient.value) and coefficient.reason.startswith("perfect separation")
