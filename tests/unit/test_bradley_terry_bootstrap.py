"""Bradley-Terry intervals by bootstrap (resample the comparisons, refit, percentiles): the batched
refits agree with the single fit, the intervals agree with the sandwich ones and cover."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from judgelab.errors import JudgelabError
from judgelab.evaluate.bradley_terry import bootstrap_bt
from judgelab.evaluate.comparisons import Comparisons
from judgelab.evaluate.preferences import estimate, rank_systems
from judgelab.metrics.bradley_terry import fit_bradley_terry, fit_many

STRENGTH = np.array([0.8, 0.3, 0.0, -0.4, -0.7])


def simulate(n, *, seed=0, labelled=0.2, judge_noise=0.3):
    """``n`` comparisons among five systems from Bradley-Terry strengths; the judge is the human
    verdict except, with ``judge_noise``, a coin biased toward the first shown."""
    rng = np.random.default_rng(seed)
    k = len(STRENGTH)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    human = (rng.random(n) < expit(STRENGTH[a] - STRENGTH[b])).astype(float)
    judge = np.where(rng.random(n) < judge_noise, (rng.random(n) < 0.7).astype(float), human)
    human = np.where(rng.random(n) < labelled, human, np.nan)
    return Comparisons(tuple(f"s{s}" for s in range(k)), a, b, judge, human)


def test_batched_refits_equal_one_fit_each():
    rng = np.random.default_rng(1)
    k, i, j = 6, *np.triu_indices(6, 1)
    weight = rng.uniform(0.5, 2, (7, len(i)))
    mass = weight * rng.uniform(0.2, 0.8, (7, len(i)))
    many, converged = fit_many(k, i, j, weight, mass, np.zeros(k))
    assert converged.all()
    for row in range(7):
        one = fit_bradley_terry(k, i, j, weight[row], mass[row])
        assert many[row] == pytest.approx(one.strength, abs=1e-7)


@pytest.mark.parametrize("estimator", ["judge", "human", "corrected"])
def test_bootstrap_and_sandwich_intervals_agree(estimator):
    data = simulate(6000, seed=2)
    sandwich = estimate(data, estimator, estimand="bradley-terry", system_intervals="t")  # unguarded, as before
    boot = estimate(data, estimator, estimand="bradley-terry", intervals="bootstrap", n_resamples=600, seed=3)
    assert boot.value == pytest.approx(sandwich.value)  # the point estimate is the full data's fit
    ratio = (boot.ci[:, 1] - boot.ci[:, 0]) / (sandwich.ci[:, 1] - sandwich.ci[:, 0])
    assert np.all((0.85 < ratio) & (ratio < 1.15)), ratio
    assert np.diag(boot.cov) == pytest.approx(np.diag(sandwich.cov), rel=0.25)
    assert boot.info["intervals"] == "bootstrap" and boot.info["resamples_not_converged"] == 0
    if estimator == "corrected":
        assert boot.info["judge_weight"] == sandwich.info["judge_weight"]
    again = bootstrap_bt(data, sandwich, n_resamples=600, seed=3)
    assert np.array_equal(again.ci, boot.ci)  # a seed fixes the resamples


def test_corrected_bootstrap_intervals_cover_the_human_strengths():
    """150 data sets, 2,000 comparisons with 20% labelled each: the corrected percentile intervals
    cover the strengths the humans' verdicts follow (centred) about 95% of the time."""
    truth = STRENGTH - STRENGTH.mean()
    hits = []
    for seed in range(150):
        est = estimate(simulate(2000, seed=100 + seed), "corrected", estimand="bradley-terry",
                       intervals="bootstrap", n_resamples=300, seed=seed)
        hits.append((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1]))
    coverage = np.mean(hits)
    assert 0.92 <= coverage <= 0.98, coverage


def test_the_leaderboard_takes_bootstrap_intervals_for_bradley_terry_only():
    data = simulate(3000, seed=4)
    names = np.array(data.systems)
    args = (names[data.a], names[data.b], data.judge, data.human)
    board = rank_systems(*args, estimand="bradley-terry", intervals="bootstrap", n_resamples=200)
    assert board.options["intervals"] == "bootstrap" and board.options["n_resamples"] == 200
    assert all(est.info["intervals"] == "bootstrap" for name, est in board.estimates.items() if name not in ("shrunk", "guided"))
    with pytest.raises(JudgelabError, match="bootstrap intervals are for the bradley-terry estimand"):
        rank_systems(*args, intervals="bootstrap")
    with pytest.raises(JudgelabError, match="need target population and a uniform sample"):
        rank_systems(*args, estimand="bradley-terry", intervals="bootstrap", target="items")
    with pytest.raises(JudgelabError, match="intervals 'jackknife': choose sandwich, bootstrap"):
        rank_systems(*args, estimand="bradley-terry", intervals="jackknife")
    with pytest.raises(JudgelabError, match="1 bootstrap resample"):
        rank_systems(*args, estimand="bradley-terry", intervals="bootstrap", n_resamples=1)


def test_label_based_estimates_with_few_labels_per_system_keep_their_t_intervals_and_say_why():
    data = simulate(3000, seed=5, labelled=0.02)  # ~60 labels: ~24 per system
    boot = estimate(data, "corrected", estimand="bradley-terry", intervals="bootstrap", n_resamples=100)
    sandwich = estimate(data, "corrected", estimand="bradley-terry")
    assert np.array_equal(boot.ci, sandwich.ci) and boot.info["intervals"] == "sandwich"
    assert "labelled comparison(s): percentile bootstrap intervals of the label-based estimates need 30 per system" \
        in boot.info["intervals_reason"]
    judge = estimate(data, "judge", estimand="bradley-terry", intervals="bootstrap", n_resamples=100)
    assert judge.info["intervals"] == "bootstrap"
