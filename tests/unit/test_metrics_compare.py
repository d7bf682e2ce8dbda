"""Paired bootstrap comparison of two judges."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.metrics import compare_judges, dataset_level, paired_difference


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    return human, rng.integers(0, 30, n).astype(str), rng


def test_identical_judges_differ_by_nothing():
    human, groups, rng = _data()
    judge = human + rng.normal(size=len(human))
    result = compare_judges(human, judge, judge.copy(), groups, n_resamples=200)
    assert result.difference == 0 and result.ci == (0.0, 0.0) and result.p_value == 1.0


def test_clearly_better_judge_is_detected():
    human, groups, rng = _data(1)
    worse, better = human + 3 * rng.normal(size=len(human)), human + 0.3 * rng.normal(size=len(human))
    result = compare_judges(human, worse, better, groups, method="kendall", n_resamples=300)
    assert result.difference > 0 and result.ci[0] > 0 and result.p_value < 0.01
    assert result.difference == pytest.approx(result.b.value - result.a.value)


def test_replicates_are_paired_on_the_same_groups():
    human, groups, rng = _data(2)
    a, b = human + rng.normal(size=len(human)), human + rng.normal(size=len(human))
    result = compare_judges(human, a, b, groups, n_resamples=100, seed=4)
    alone = dataset_level(human, b, groups, n_resamples=100, seed=4)["spearman"]
    np.testing.assert_array_equal(result.b.resamples, alone.resamples)


def test_items_either_judge_missed_are_left_out_for_both():
    human, groups, rng = _data(3, n=50)
    a, b = human + rng.normal(size=50), human + rng.normal(size=50)
    a[:5] = np.nan
    result = compare_judges(human, a, b, groups, n_resamples=20)
    assert result.a.n == result.b.n == 45
    assert result.b.value == dataset_level(human[5:], b[5:], groups[5:], n_resamples=0)["spearman"].value


def test_estimates_from_different_resamples_are_refused():
    human, groups, _ = _data()
    a = dataset_level(human, human ** 3, groups, n_resamples=20)["spearman"]
    b = dataset_level(human, human ** 3, groups, n_resamples=30)["spearman"]
    with pytest.raises(ValueError, match="same resamples"):
        paired_difference(a, b)


def test_without_replicates_the_difference_has_no_interval_and_says_why():
    human, groups, rng = _data()
    judge = human + rng.normal(size=len(human))
    plain = dataset_level(human, judge, groups, n_resamples=0)["spearman"]
    result = paired_difference(plain, plain)
    assert result.difference == 0.0 and result.ci is None and np.isnan(result.p_value)
    assert result.reason


def test_a_constant_judge_gives_an_undefined_difference_not_an_error():
    human, groups, rng = _data(2, n=40)
    constant = np.full(len(human), 3.0)
    result = compare_judges(human, constant, human + rng.normal(size=len(human)), groups, n_resamples=20)
    assert np.isnan(result.difference) and result.ci is None
    assert "constant" in result.to_dict()["reason"]


def test_meta_evaluate_compares_with_a_baseline_on_common_items():
    from judgelab.data import Item, Judgment
    from judgelab.metrics import meta_evaluate

    human, groups, rng = _data(4, n=60)
    items = [Item(id=f"i{k}", output="o", group_id=str(g), scores={"q": float(h)})
             for k, (h, g) in enumerate(zip(human, groups, strict=True))]
    new = human + 0.5 * rng.normal(size=60)
    old = human + 2.0 * rng.normal(size=60)
    judged = [Judgment(item_id=f"i{k}", score=float(v)) for k, v in enumerate(new)]
    baseline = [Judgment(item_id=f"i{k}", score=float(v)) for k, v in enumerate(old) if k >= 10]
    report = meta_evaluate(items, judged, baseline=baseline, levels=["dataset"], n_resamples=100, seed=2)
    comparison = report["comparison"]["dataset"]["kendall"]
    expected = compare_judges(human[10:], old[10:], new[10:], groups[10:], method="kendall", n_resamples=100, seed=2)
    assert comparison.difference == pytest.approx(expected.difference) and comparison.ci == expected.ci
    assert comparison.b.n == 50 and report["dataset"]["kendall"].n == 60


def test_the_group_level_compares_both_judges_on_the_groups_both_can_score():
    """A judge that gives one score to every output of most sources (a similarity scorer predicting
    classes) is defined on few groups; the baseline is compared with it on those same groups."""
    rng = np.random.default_rng(5)
    groups = np.repeat([f"g{k}" for k in range(40)], 4)
    human = rng.normal(size=len(groups))
    coarse = np.round(human + rng.normal(size=len(groups)))
    coarse[np.isin(groups, [f"g{k}" for k in range(30)])] = 2.0  # constant within 30 of the 40 sources
    fine = human + rng.normal(size=len(groups))
    fine[groups == "g39"] = 1.0  # and the baseline is constant in one of the other ten
    result = compare_judges(human, fine, coarse, groups, level="group", n_resamples=100)
    assert result.a.n_groups == result.b.n_groups == 9
    assert result.a.resamples is not None and result.ci is not None
    assert result.note == ("on the 9 groups both judges can score; left out: 30 where the judge gives one score "
                           "to every output, 1 where the baseline does")
    assert result.to_dict()["note"] == result.note
    alone = compare_judges(human, fine, fine, groups, level="group", n_resamples=0)
    assert alone.a.n_groups == 39 and alone.note is None  # nothing dropped but the baseline's own constant group


def test_pairwise_judges_are_compared_by_paired_bootstrap():
    from judgelab.metrics.compare import compare_pairwise

    rng = np.random.default_rng(7)
    preferred = rng.choice(["a", "b"], size=200)
    other = {"a": "b", "b": "a"}
    good = np.where(rng.random(200) < 0.85, preferred, [other[p] for p in preferred]).astype(object)
    weak = np.where(rng.random(200) < 0.6, preferred, [other[p] for p in preferred]).astype(object)
    weak[:40] = "tie"
    out = compare_pairwise(preferred, good, weak, good, np.where(rng.random(200) < 0.5, weak, "tie"),
                           n_resamples=300, seed=1)
    accuracy = out["accuracy"]
    half = np.mean(weak == preferred) + 0.5 * np.mean(weak == "tie")
    assert accuracy.a.value == pytest.approx(half) and accuracy.a.rule == "ties count half"
    assert accuracy.difference == pytest.approx(np.mean(good == preferred) - half)
    assert accuracy.ci[0] > 0 and accuracy.p_value < 0.01
    consistency = out["positional_consistency"]
    assert consistency.b.value == 1.0 and consistency.difference > 0 and consistency.ci is not None
    wrong = compare_pairwise(preferred, good, weak, ties="wrong", n_resamples=0)
    assert wrong["accuracy"].a.value == pytest.approx(np.mean(weak == preferred))
    assert set(wrong) == {"accuracy"}  # one order only: no consistency to compare
