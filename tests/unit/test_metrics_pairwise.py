"""Pairwise agreement of pointwise judges and accuracy of pairwise judges, by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judgelab.metrics import pairwise_accuracy, pairwise_agreement
from judgelab.metrics.results import FEWER_THAN_2


def test_hand_worked_win_tie_lose():
    # group a: pairs (1,2) < <  match; (1,2)vs(1,3) < < match; (2,2) tie vs (3,2) > : mismatch -> 2/3
    # group b: one pair, human tie, judge tie -> match. group c: one item, skipped.
    human = [1, 2, 2, 4, 4, 5]
    judge = [1, 3, 2, 7, 7, 1]
    groups = ["a", "a", "a", "b", "b", "c"]
    pooled = pairwise_agreement(human, judge, groups, n_resamples=0)
    assert pooled.value == pytest.approx(3 / 4) and pooled.n == 4 and pooled.n_groups == 2
    assert [(s.group, s.reason) for s in pooled.skipped] == [("c", FEWER_THAN_2)]
    per_group = pairwise_agreement(human, judge, groups, average="groups", n_resamples=0)
    assert per_group.value == pytest.approx((2 / 3 + 1) / 2)


def test_matches_brute_force_on_random_data():
    rng = np.random.default_rng(0)
    human, judge = rng.integers(1, 4, 120), rng.integers(1, 4, 120)
    groups = rng.integers(0, 10, 120)
    matches = pairs = 0
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        for i, j in itertools.combinations(members, 2):
            pairs += 1
            matches += np.sign(human[i] - human[j]) == np.sign(judge[i] - judge[j])
    result = pairwise_agreement(human, judge, groups, n_resamples=100)
    assert result.value == pytest.approx(matches / pairs) and result.n == pairs
    assert result.ci[0] <= result.value <= result.ci[1]


def test_pairwise_judge_accuracy_and_positional_consistency():
    preferred = ["a", "b", "a", "b"]
    verdict = ["a", "a", "a", "b"]
    swapped = ["a", "b", "b", "b"]  # already mapped back: "a" means output_a
    out = pairwise_accuracy(preferred, verdict, swapped, n_resamples=50)
    assert out["accuracy"].value == 0.75 and out["positional_consistency"].value == 0.5
    assert set(pairwise_accuracy(preferred, verdict, n_resamples=0)) == {"accuracy"}


def test_ties_count_half_or_wrong_and_the_estimate_says_which():
    preferred = ["a", "b", "a", "b", "tie"]
    verdict = ["a", "tie", "tie", "a", "tie"]
    half = pairwise_accuracy(preferred, verdict, n_resamples=0)["accuracy"]
    assert half.value == pytest.approx((1 + 0.5 + 0.5 + 0 + 1) / 5) and half.rule == "ties count half"
    assert half.to_dict()["rule"] == "ties count half"
    wrong = pairwise_accuracy(preferred, verdict, ties="wrong", n_resamples=0)["accuracy"]
    assert wrong.value == pytest.approx(2 / 5) and wrong.rule == "ties count wrong"
    with pytest.raises(ValueError, match="ties"):
        pairwise_accuracy(preferred, verdict, ties="none")
