"""Correlation levels against scipy, hand-worked cases, and the exact resampling kernels."""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from judgelab.metrics import correlation, correlations, dataset_level, group_level, system_level, weighted
from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
from judgelab.metrics.results import CONSTANT_HUMAN, CONSTANT_JUDGE, FEWER_THAN_2
from judgelab.metrics.weighted import PairedSample

SCIPY = {
    "pearson": lambda x, y: stats.pearsonr(x, y).statistic,
    "spearman": lambda x, y: stats.spearmanr(x, y).statistic,
    "kendall": lambda x, y: stats.kendalltau(x, y, variant="b").statistic,
}


def _random_sample(seed: int, n: int = 200, groups: int = 20):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    judge = human + rng.normal(size=n)
    return human, judge, rng.integers(0, groups, n).astype(str)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("method", list(SCIPY))
def test_dataset_level_equals_scipy(seed, method):
    human, judge, groups = _random_sample(seed)
    result = dataset_level(human, judge, groups, n_resamples=0)[method]
    assert result.value == SCIPY[method](human, judge)
    assert (result.n, result.n_groups, result.ci) == (200, len(set(groups)), None)


@pytest.mark.parametrize("method", list(SCIPY))
def test_group_level_is_mean_of_scipy_per_group(method):
    human, judge, groups = _random_sample(7, n=300, groups=30)
    expected = np.mean([SCIPY[method](human[groups == g], judge[groups == g]) for g in np.unique(groups)])
    assert group_level(human, judge, groups, n_resamples=0)[method].value == pytest.approx(expected, abs=1e-15)


def test_group_level_hand_worked_with_skipped_groups():
    # g1: correlates perfectly; g2: one item; g3: constant human; g4: constant judge; g5: ties.
    human = [1, 2, 3, 5, 2, 2, 1, 2, 1, 1, 2, 2]
    judge = [2, 4, 6, 1, 1, 3, 7, 7, 1, 2, 2, 3]
    groups = ["g1"] * 3 + ["g2"] + ["g3"] * 2 + ["g4"] * 2 + ["g5"] * 4
    result = group_level(human, judge, groups, n_resamples=0)
    g5 = stats.kendalltau([1, 1, 2, 2], [1, 2, 2, 3]).statistic
    assert result["kendall"].value == pytest.approx((1.0 + g5) / 2)
    assert result["pearson"].value == pytest.approx((1.0 + stats.pearsonr([1, 1, 2, 2], [1, 2, 2, 3])[0]) / 2)
    assert result["spearman"].n_groups == 2 and result["spearman"].n == 7
    assert {(s.group, s.reason) for s in result["spearman"].skipped} == {
        ("g2", FEWER_THAN_2), ("g3", CONSTANT_HUMAN), ("g4", CONSTANT_JUDGE)}
    assert result["spearman"].to_dict()["skipped"] == {FEWER_THAN_2: ["g2"], CONSTANT_HUMAN: ["g3"],
                                                      CONSTANT_JUDGE: ["g4"]}


def test_group_level_with_no_usable_group_is_nan_with_reason():
    result = group_level([1, 1, 2], [3, 4, 5], ["a", "a", "b"], n_resamples=10)["spearman"]
    assert np.isnan(result.value) and result.reason and result.ci is None
    assert result.to_dict()["value"] is None  # JSON has no NaN


def test_system_level_hand_worked():
    # Systems s1..s3 over two sources; means: human 1.5, 3.5, 2.0; judge 2.5, 4.0, 4.5
    human = [1, 2, 3, 4, 2, 2]
    judge = [2, 3, 4, 4, 5, 4]
    systems = ["s1", "s1", "s2", "s2", "s3", "s3"]
    groups = ["a", "b", "a", "b", "a", "b"]
    result = system_level(human, judge, systems, groups, n_resamples=0)
    human_means, judge_means = [1.5, 3.5, 2.0], [2.5, 4.0, 4.5]
    for method, ref in SCIPY.items():
        assert result[method].value == pytest.approx(ref(human_means, judge_means), abs=1e-15)
    assert (result["pearson"].n, result["pearson"].n_groups) == (3, 2)


def test_system_level_needs_two_systems():
    result = system_level([1, 2], [1, 3], ["s", "s"], n_resamples=5)["pearson"]
    assert np.isnan(result.value) and result.reason == "fewer than 2 systems"


def test_constant_side_gives_nan_with_reason_at_dataset_level():
    result = dataset_level([1, 1, 1], [1, 2, 3], n_resamples=10)
    assert np.isnan(result["kendall"].value) and result["kendall"].reason == CONSTANT_HUMAN


def test_correlation_never_warns_on_degenerate_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(correlation("spearman", [1, 2, 3], [4, 4, 4]))
        assert np.isnan(correlation("pearson", [1], [2]))


def test_unknown_method_and_level_raise():
    with pytest.raises(ValueError, match="unknown correlation"):
        dataset_level([1, 2, 3], [1, 2, 3], methods=["cosine"])
    with pytest.raises(ValueError, match="unknown level"):
        correlations([1, 2, 3], [1, 2, 3], levels=["corpus"])


# -- bootstrap ---------------------------------------------------------------------------------
def test_bootstrap_counts_are_seeded_and_block_independent():
    a = np.concatenate(list(GroupBootstrap(30, 120, seed=3).blocks()))
    b = np.concatenate(list(GroupBootstrap(30, 120, seed=3).blocks()))
    c = np.concatenate(list(GroupBootstrap(30, 120, seed=4).blocks()))
    assert a.shape == (120, 30) and np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all(a.sum(axis=1) == 30)  # each resample draws as many groups as there are
    # the first 50 resamples do not depend on how many are drawn in total
    assert np.array_equal(a[:50], np.concatenate(list(GroupBootstrap(30, 50, seed=3).blocks())))


def test_percentile_ci_ignores_undefined_replicates():
    replicates = np.r_[np.arange(101.0), np.nan]
    assert percentile_ci(replicates, 0.9) == pytest.approx((5.0, 95.0))
    assert percentile_ci(None) is None


def test_interval_covers_value_and_is_reproducible():
    human, judge, groups = _random_sample(11)
    first = dataset_level(human, judge, groups, n_resamples=300, seed=5)
    again = dataset_level(human, judge, groups, n_resamples=300, seed=5)
    for method, est in first.items():
        assert est.ci[0] < est.value < est.ci[1]
        assert est.ci == again[method].ci and len(est.resamples) == 300


def test_cluster_bootstrap_resamples_groups_not_items():
    # Two groups: any resample holds whole groups, so the replicate values are the correlations
    # of {g1}, {g2} (undefined: constant within a group) or of both groups (the point value).
    human = [1.0, 1.0, 5.0, 5.0]
    judge = [1.0, 2.0, 6.0, 8.0]
    est = dataset_level(human, judge, ["g1", "g1", "g2", "g2"], n_resamples=200, seed=1)["pearson"]
    finite = est.resamples[np.isfinite(est.resamples)]
    assert np.allclose(finite, est.value)


def _expanded_reference(human, judge, groups_codes, counts_row):
    weights = counts_row[groups_codes].astype(int)
    x, y = np.repeat(human, weights), np.repeat(judge, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [SCIPY[m](x, y) if len(np.unique(x)) > 1 and len(np.unique(y)) > 1 else np.nan for m in SCIPY]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), judge_kind=st.sampled_from(["likert", "rounded", "continuous"]),
       human_levels=st.integers(1, 9), force_items=st.booleans())
# found by CI: a resample whose judge scores are constant must give NaN (scipy), not 0
@example(seed=2211, judge_kind="likert", human_levels=3, force_items=False)
def test_resample_kernels_equal_scipy_on_expanded_resamples(seed, judge_kind, human_levels, force_items):
    """Every replicate equals scipy on the resample written out item by item, in both layouts
    (contingency tables for few distinct values; item-level merge, forced here, for many)."""
    rng = np.random.default_rng(seed)
    n, n_groups = int(rng.integers(3, 120)), int(rng.integers(1, 12))
    human = rng.integers(0, human_levels, n).astype(float)
    judge = {"likert": rng.integers(1, 6, n).astype(float), "rounded": np.round(human + rng.normal(size=n), 1),
             "continuous": rng.normal(size=n)}[judge_kind]
    codes = rng.integers(0, n_groups, n)
    counts = next(GroupBootstrap(n_groups, 8, seed).blocks())
    with mock.patch.object(weighted, "MAX_CELLS", 0 if force_items else weighted.MAX_CELLS):
        got = PairedSample(human, judge, codes, n_groups).replicate(counts, list(SCIPY))
    for row, counts_row in zip(got, counts, strict=True):
        np.testing.assert_allclose(row, _expanded_reference(human, judge, codes, counts_row), atol=1e-12)


def test_kernels_on_large_ties_match_scipy():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 4, 5000).astype(float)
    judge = np.where(rng.random(5000) < 0.5, human, rng.integers(1, 4, 5000)).astype(float)
    codes = rng.integers(0, 50, 5000)
    counts = next(GroupBootstrap(50, 3, 0).blocks())
    got = PairedSample(human, judge, codes, 50).replicate(counts, list(SCIPY))
    for row, counts_row in zip(got, counts, strict=True):
        np.testing.assert_allclose(row, _expanded_reference(human, judge, codes, counts_row), atol=1e-12)


def test_all_levels_share_the_same_resampled_groups():
    human, judge, groups = _random_sample(2)
    systems = np.array([f"s{i % 4}" for i in range(len(human))])
    out = correlations(human, judge, groups, systems, n_resamples=50, seed=9)
    assert set(out) == {"dataset", "group", "system"}
    assert all(len(e.resamples) == 50 for level in out.values() for e in level.values())


def test_two_systems_give_a_system_level_value_without_an_interval():
    """Two means correlate at +1 or -1 in every resample: '1.000 [1.000, 1.000]' looked certain and said nothing."""
    from judgelab.metrics.correlation import system_level

    two = system_level([1, 2, 3, 4], [1, 2, 2, 4], ["a", "a", "b", "b"])["spearman"]
    assert two.value == pytest.approx(1.0) and two.ci is None and "needs 3 systems" in two.rule
    three = system_level([1, 2, 3, 4, 5, 2], [1, 2, 2, 4, 5, 1], ["a", "a", "b", "b", "c", "c"])["spearman"]
    assert three.ci is not None and three.rule is None
