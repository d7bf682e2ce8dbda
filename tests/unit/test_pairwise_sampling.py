"""Drawing comparisons to label (stratified by pair of systems, or active) and weighting them back.

The simulations are seeded and small (a few hundred draws on 1,200 synthetic comparisons, seconds):
the corrected win probability's intervals must keep their coverage under either design, and
ignoring an active design's inclusion probabilities must visibly break it."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate.comparisons import comparisons
from judgelab.evaluate.preferences import estimate
from judgelab.evaluate.sampling import comparison_problem, comparison_uncertainty, draw

NAMES = ("s0", "s1", "s2", "s3")
STRENGTH = np.array([0.8, 0.3, -0.2, -0.9])


def _world(n: int = 1200, seed: int = 1):
    """Human verdicts from a Bradley-Terry model; a judge that favours s2 and says "tie" on most upsets
    (where the weaker system won), so its doubt is tied to the labels: an active draw over-samples upsets."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    human = (rng.random(n) < 1 / (1 + np.exp(-(STRENGTH[a] - STRENGTH[b])))).astype(float)
    bias = 0.8 * (a == 2) - 0.8 * (b == 2)
    judge = (rng.random(n) < 1 / (1 + np.exp(-(STRENGTH[a] - STRENGTH[b] + bias)))).astype(float)
    upset = (human == 1) != (STRENGTH[a] > STRENGTH[b])
    judge = np.where(rng.random(n) < np.where(upset, 0.7, 0.05), 0.5, judge)
    items = [Item(id=f"c{k}", system_a=NAMES[a[k]], system_b=NAMES[b[k]]) for k in range(n)]
    return items, [NAMES[k] for k in a], [NAMES[k] for k in b], judge, human


def _coverage(active: bool, weighted: bool, estimand: str = "win-prob", draws: int = 200) -> np.ndarray:
    items, a, b, judge, human = _world()
    truth = estimate(comparisons(a, b, judge, human), "human", estimand=estimand, target="items").value
    problem = comparison_problem(items)
    doubt = 1 - np.abs(2 * judge - 1) if active else None
    hits = []
    for seed in range(draws):
        design = draw(problem, 120, uncertainty=doubt, seed=seed).design
        data = comparisons(a, b, judge, human, labelled=design.labelled,
                           probability=design.probability if weighted else None)
        est = estimate(data, "corrected", estimand=estimand, target="items")
        hits.append((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1]))
    return np.mean(hits, axis=0)


@pytest.mark.parametrize("active", [False, True], ids=["stratified", "active"])
def test_weighted_designs_keep_the_corrected_win_probability_coverage(active):
    coverage = _coverage(active, weighted=True)
    assert coverage.mean() >= 0.92 and coverage.min() >= 0.89, coverage  # 95% nominal, 200 draws x 4 systems


def test_an_active_sample_read_as_uniform_misses():
    coverage = _coverage(active=True, weighted=False)
    assert coverage.mean() < 0.6, coverage  # upsets over-sampled pull every estimate toward 0.5


def test_weighted_bradley_terry_keeps_coverage_under_an_active_design():
    coverage = _coverage(active=True, weighted=True, estimand="bradley-terry", draws=120)
    assert coverage.mean() >= 0.9, coverage


def test_uniform_probabilities_give_the_unweighted_estimate():
    items, a, b, judge, human = _world(400)
    labelled = np.zeros(400, dtype=bool)
    labelled[::5] = True
    plain = estimate(comparisons(a, b, judge, human, labelled=labelled), "corrected")
    weighted = estimate(comparisons(a, b, judge, human, labelled=labelled, probability=np.full(400, 0.2)), "corrected")
    np.testing.assert_allclose(weighted.value, plain.value)
    np.testing.assert_allclose(weighted.cov, plain.cov)


def test_stratified_draw_allocates_by_pair_and_records_each_pairs_probability():
    items, *_ = _world(600)
    problem = comparison_problem(items)
    assert len(problem.systems) == 6 and problem.systems[0] == "s0 vs s1"  # unordered pairs
    drawn = draw(problem, 60, seed=3)
    for stratum in range(6):
        members = problem.strata == stratum
        chosen = drawn.design.labelled[members].sum()
        np.testing.assert_allclose(drawn.design.probability[members], chosen / members.sum())
    assert drawn.design.n_labelled == 60


def test_comparisons_without_system_names_cannot_be_stratified():
    with pytest.raises(ConfigError, match="'x1' names no systems"):
        comparison_problem([Item(id="x1", output_a="one", output_b="two")])


def test_budget_below_two_per_pair_is_refused():
    items, *_ = _world(300)
    with pytest.raises(ConfigError, match="6 pairs of systems fewer than 2 labels; give at least 12"):
        draw(comparison_problem(items), 10, strata_name="pairs of systems")


def test_uncertainty_from_both_orders_and_several_judges():
    ids = ("c1", "c2", "c3", "c4")
    both = [Judgment(item_id="c1", label="a", extra={"verdicts": {"original": "a", "swapped": "b"}}),
            Judgment(item_id="c2", label="a", extra={"verdicts": {"original": "a", "swapped": "a"}}),
            Judgment(item_id="c3", label="tie")]
    doubt = comparison_uncertainty(both, ids)
    assert doubt.tolist() == [1.0, 0.0, 1.0, 1.0]  # c4 has no verdict: the median
    sure = [Judgment(item_id=i, label="a") for i in ids]
    with pytest.raises(ConfigError, match="equally sure"):
        comparison_uncertainty(sure, ids)


def test_a_pair_stratified_sample_is_reweighted_by_the_labels_at_hand():
    from judgelab.evaluate.comparison_items import _sample_probabilities
    from judgelab.evaluate.sample_file import SampleFile

    items = [Item(id=f"c{k}", system_a="x" if k < 4 else "y", system_b="z") for k in range(8)]
    sample = SampleFile(("c0", "c1", "c4", "c5"), (0.5, 0.5, 0.5, 0.5), "stratified",
                        {"method": "stratified", "strata": "pair"})
    labelled = [1.0, None, None, None, 0.0, 1.0, None, None]  # c1 was drawn but never labelled
    probability, design = _sample_probabilities(items, sample, labelled)
    assert design == "stratified by pair"
    np.testing.assert_allclose(probability[[0, 4, 5]], [0.25, 0.5, 0.5])
    active = SampleFile(("c0", "c4"), (0.3, 0.7), "active", {"method": "active", "strata": "pair"})
    probability, design = _sample_probabilities(items, active, labelled)
    assert design == "active within pairs" and probability[0] == 0.3 and np.isnan(probability[1])
