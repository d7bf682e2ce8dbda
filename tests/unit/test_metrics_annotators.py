"""Inter-annotator agreement against the reference libraries (krippendorff, scikit-learn)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab.metrics.annotators import NO_OVERLAP, ONE_VALUE, annotator_agreement

NAN = np.nan


def test_alpha_is_krippendorffs_on_the_items_two_or_more_labelled():
    values = np.array([[1, 2, 3, 4, 5, 2, NAN, 1],
                       [1, 3, 3, 4, 4, NAN, 5, NAN],
                       [2, 2, NAN, 5, 5, NAN, NAN, NAN]])
    result = annotator_agreement(values, ["a", "b", "c"], n_resamples=200)
    overlap = values[:, :5]  # items 5-7 have one label each
    assert result.n_items == 8 and result.n_overlap == 5
    assert result.alpha.value == pytest.approx(krippendorff.alpha(overlap, level_of_measurement="ordinal"))
    assert result.alpha.ci[0] <= result.alpha.value <= result.alpha.ci[1]
    assert result.labels_per_annotator == {"a": 7, "b": 6, "c": 4}
    interval = annotator_agreement(values, ["a", "b", "c"], level="interval", n_resamples=0)
    assert interval.alpha.value == pytest.approx(krippendorff.alpha(overlap, level_of_measurement="interval"))
    assert interval.alpha.ci is None


def test_kappa_per_pair_is_sklearns_on_the_shared_items():
    values = np.array([[1, 2, 3, 4, 5, 2, 1],
                       [1, 3, 3, 4, 4, NAN, 5]])
    pair = annotator_agreement(values, ["a", "b"], n_resamples=0).pairs[0]
    shared_a, shared_b = [1, 2, 3, 4, 5, 1], [1, 3, 3, 4, 4, 5]
    assert pair.annotators == ("a", "b") and pair.n == 6
    assert pair.kappa == pytest.approx(cohen_kappa_score(shared_a, shared_b))
    assert pair.kappa_quadratic == pytest.approx(cohen_kappa_score(shared_a, shared_b, weights="quadratic"))
    nominal = annotator_agreement(values, ["a", "b"], level="nominal", n_resamples=0).pairs[0]
    assert nominal.kappa_quadratic is None


def test_preferences_coded_as_numbers():
    # a=1, tie=0.5, b=0: sklearn takes them as classes, alpha as nominal categories
    values = np.array([[1, 0, 0.5, 1, 0], [1, 0, 1, 1, 0.5]])
    result = annotator_agreement(values, ["x", "y"], level="nominal", n_resamples=0)
    assert result.alpha.value == pytest.approx(krippendorff.alpha(values, level_of_measurement="nominal"))
    assert result.pairs[0].kappa == pytest.approx(cohen_kappa_score(["a", "b", "t", "a", "b"], ["a", "b", "a", "a", "t"]))


def test_undefined_agreement_says_why():
    apart = annotator_agreement(np.array([[1, 2, NAN, NAN], [NAN, NAN, 3, 4]]), ["a", "b"])
    assert np.isnan(apart.alpha.value) and apart.alpha.reason == NO_OVERLAP and apart.n_overlap == 0
    assert apart.pairs[0].kappa is None and apart.pairs[0].n == 0
    same = annotator_agreement(np.array([[3, 3, 3], [3, 3, 3]]), ["a", "b"])
    assert same.alpha.reason == ONE_VALUE and same.pairs[0].reason == ONE_VALUE
    assert same.to_dict()["alpha"]["value"] is None
