"""compare_systems (the gate of `judgelab compare`) and judgelab.testing on simulated systems."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import JudgelabError
from judgelab.evaluate.gate import decide
from judgelab.evaluate.two_systems import compare_systems
from judgelab.testing import assert_not_worse


def simulate(n_inputs: int = 60, shift: float = 0.0, *, seed: int = 0, shared: bool = True, bias: float = 0.0,
             difficulty: float = 1.0):
    """Two systems answering the same inputs (``shared``): human = 3 + input difficulty + noise (+ shift
    for the candidate), judge = human + bias + noise. Items carry their human score as ``scores``."""
    rng = np.random.default_rng(seed)
    hardness = rng.normal(0, difficulty, n_inputs)
    items, judgments = [], []
    for system, offset in (("base", 0.0), ("cand", shift)):
        human = 3 + hardness + offset + rng.normal(0, 0.3, n_inputs)
        judge = human + (bias if system == "cand" else 0.0) + rng.normal(0, 0.3, n_inputs)
        for g in range(n_inputs):
            item_id = f"{system}-{g}"
            group = f"q{g}" if shared else f"{system}-q{g}"
            items.append(Item(id=item_id, output="text", source=f"prompt {g}", system_id=system, group_id=group,
                              scores={"quality": float(human[g])}))
            judgments.append(Judgment(item_id=item_id, score=float(judge[g])))
    return items, judgments


def by_id(judgments, items, system):
    ids = [item.id for item in items if item.system_id == system]
    score = {j.item_id: j.score for j in judgments}
    return np.array([score[i] for i in ids])


# -- the decision -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("low", "high", "margin", "higher", "expected"), [
    (-0.5, -0.2, 0.1, True, "worse"),
    (-0.5, -0.1, 0.1, True, "not worse"),  # exactly at -margin: not beyond it
    (-0.5, -0.1000001, 0.1, True, "worse"),
    (-0.5, 0.2, 0.0, True, "not worse"),
    (0.05, 0.2, 0.0, True, "better"),
    (0.2, 0.5, 0.1, False, "worse"),  # lower is better: the candidate's score rose beyond the margin
    (0.1, 0.5, 0.1, False, "not worse"),
    (-0.5, -0.05, 0.0, False, "better"),
])
def test_decision_at_the_margin(low, high, margin, higher, expected):
    assert decide(low, high, margin, higher) == expected


@pytest.mark.parametrize(("low", "high", "higher", "expected"), [
    (-0.5, 0.2, True, "undecided"),  # holds -0.5, worse than -margin: not shown within the margin
    (-0.1, 0.2, True, "not worse"),  # the bound exactly at -margin is within it
    (-0.5, -0.2, True, "worse"),
    (0.05, 0.2, True, "better"),
    (-0.2, 0.5, False, "undecided"),
    (-0.2, 0.1, False, "not worse"),
])
def test_fail_undecided_passes_only_an_interval_within_the_margin(low, high, higher, expected):
    assert decide(low, high, 0.1, higher, fail_undecided=True) == expected
    assert decide(low, high, 0.1, higher) == ("not worse" if expected == "undecided" else expected)


def test_margin_boundary_through_compare_systems():
    items, judgments = simulate(shift=-0.4, seed=1)
    first = compare_systems(items, judgments, baseline="base", candidate="cand", n_resamples=300)
    assert first.decision == "worse" and first.high < 0
    at = compare_systems(items, judgments, baseline="base", candidate="cand", margin=-first.high, n_resamples=300)
    assert at.high == first.high and at.decision == "not worse" and at.passed
    just_below = compare_systems(items, judgments, baseline="base", candidate="cand", margin=-first.high * 0.999,
                                 n_resamples=300)
    assert just_below.decision == "worse" and not just_below.passed


# -- paired vs unpaired -----------------------------------------------------------------------------------
def test_paired_difference_is_the_mean_output_difference():
    items, judgments = simulate(shift=-0.2, seed=2, difficulty=1.5)
    paired = compare_systems(items, judgments, baseline="base", candidate="cand", n_resamples=500)
    unpaired = compare_systems(items, judgments, baseline="base", candidate="cand", pairing="unpaired",
                               n_resamples=500)
    expected = np.mean(by_id(judgments, items, "cand") - by_id(judgments, items, "base"))
    assert paired.paired and not unpaired.paired
    assert paired.difference == pytest.approx(expected) and unpaired.difference == pytest.approx(expected)
    assert paired.n == 60 and unpaired.n == 120
    assert "same inputs" in paired.pairing_reason and "--pairing unpaired" in unpaired.pairing_reason


def test_pairing_the_labels_removes_the_inputs_difficulty_from_the_interval():
    items, judgments = simulate(shift=-0.3, seed=2, difficulty=1.5)
    labelled = [f"{s}-{g}" for g in range(0, 60, 2) for s in ("base", "cand")]  # 30 inputs, both outputs
    options = {"baseline": "base", "candidate": "cand", "human_ids": labelled, "estimator": "human"}
    paired = compare_systems(items, judgments, **options)
    unpaired = compare_systems(items, judgments, pairing="unpaired", **options)
    assert paired.difference == pytest.approx(unpaired.difference)  # the same labels, the same mean difference
    # input difficulty (sd 1.5) against output noise (sd 0.3): it cancels in the paired differences only
    assert (paired.high - paired.low) < 0.4 * (unpaired.high - unpaired.low)
    assert paired.decision == "worse" and unpaired.decision == "not worse"


def test_auto_pairing_falls_back_when_inputs_differ_and_paired_refuses():
    items, judgments = simulate(seed=3, shared=False)
    result = compare_systems(items, judgments, baseline="base", candidate="cand", n_resamples=200)
    assert not result.paired and "share 0 input" in result.pairing_reason
    with pytest.raises(JudgelabError, match="pairing paired: the two systems share 0 input"):
        compare_systems(items, judgments, baseline="base", candidate="cand", pairing="paired")


def test_only_shared_inputs_pair_and_the_rest_is_named():
    items, judgments = simulate(n_inputs=30, seed=4)
    extra = [Item(id="base-extra", output="t", source="p", system_id="base", group_id="only-base",
                  scores={"quality": 3.0})]
    result = compare_systems(items + extra, judgments + [Judgment(item_id="base-extra", score=3.0)],
                             baseline="base", candidate="cand", n_resamples=200)
    assert result.paired and result.n == 30 and "1 items of inputs only one system answers" in result.pairing_reason


# -- estimators -----------------------------------------------------------------------------------------
def test_labels_make_it_corrected_and_human_only_is_the_mean_labelled_difference():
    items, judgments = simulate(seed=5, bias=-0.5)  # the judge marks the candidate down; humans see no change
    labelled = [f"{s}-{g}" for g in range(0, 60, 3) for s in ("base", "cand")]  # 20 inputs, both outputs
    fixed = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=labelled)
    judge = compare_systems(items, judgments, baseline="base", candidate="cand")
    assert fixed.estimator == "corrected" and "prediction-powered" in fixed.estimator_reason and not fixed.warnings
    assert fixed.n_labelled == 20 and "20 inputs have both outputs labelled" in fixed.pairing_reason
    assert judge.estimator == "judge" and judge.decision == "worse" and "no bias correction" in judge.warnings[0]
    assert fixed.low < 0 < fixed.high and fixed.passed  # the correction removes the judge's bias
    human = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=labelled,
                            estimator="human")
    own = {item.id: item.scores["quality"] for item in items}
    expected = np.mean([own[f"cand-{g}"] - own[f"base-{g}"] for g in range(0, 60, 3)])
    assert human.difference == pytest.approx(expected) and human.estimator_reason == "chosen with --estimator human"


def test_labels_on_one_side_only_leave_the_comparison_unpaired():
    items, judgments = simulate(seed=6)
    one_side = [f"base-{g}" for g in range(0, 60, 4)] + [f"cand-{g}" for g in range(1, 60, 4)]
    result = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=one_side)
    assert not result.paired and "0 shared input(s) have both outputs labelled" in result.pairing_reason
    assert result.estimator == "corrected" and result.n_labelled == 30


def test_lower_is_better_fails_on_a_rise():
    items, judgments = simulate(shift=0.5, seed=7)
    result = compare_systems(items, judgments, baseline="base", candidate="cand", higher_is_better=False,
                             n_resamples=300)
    assert result.difference > 0 and result.decision == "worse"
    assert compare_systems(items, judgments, baseline="base", candidate="cand", n_resamples=300).decision == "better"


# -- bad input --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("options", "message"), [
    ({"baseline": "nope", "candidate": "cand"}, "system 'nope' is not in the data (systems come from each item's system_id, or system_a/system_b of comparisons; here: base, cand)"),
    ({"baseline": "base", "candidate": "base"}, "both 'base'"),
    ({"baseline": "base", "candidate": "cand", "margin": -0.1}, "margin -0.1: give 0 or more"),
    ({"baseline": "base", "candidate": "cand", "alpha": 1.5}, "alpha 1.5"),
    ({"baseline": "base", "candidate": "cand", "estimator": "corrected"}, "needs human labels"),
    ({"baseline": "base", "candidate": "cand", "human_ids": ["base-0", "zzz"]}, "not items of the data: 'zzz'"),
])
def test_bad_input_is_one_clear_error(options, message):
    items, judgments = simulate(n_inputs=10, seed=8)
    with pytest.raises(JudgelabError) as caught:
        compare_systems(items, judgments, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# -- judgelab.testing ------------------------------------------------------------------------------------
def test_assert_not_worse_raises_with_the_figures_on_a_regression():
    items, judgments = simulate(shift=-0.5, seed=9)
    with pytest.raises(AssertionError) as caught:
        assert_not_worse(items, judgments, baseline="base", candidate="cand", margin=0.1, n_resamples=300)
    text = str(caught.value)
    assert text.startswith("cand - base = -0.") and "margin 0.1): worse by more than the margin" in text
    assert "upper bound -0." in text and "< -0.1)" in text and "judge-only has no bias correction" in text


def test_assert_not_worse_passes_without_a_regression_and_returns_the_result():
    items, judgments = simulate(shift=0.0, seed=10)
    result = assert_not_worse(items, judgments, baseline="base", candidate="cand", margin=0.2, n_resamples=300)
    assert result.passed and result.low < 0 < result.high
