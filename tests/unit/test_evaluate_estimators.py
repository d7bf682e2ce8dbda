"""System estimators: agreement with ppi-python where the models coincide, interval coverage on
simulated data, Holm's correction against statsmodels, rank intervals, shrinkage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgelab.errors import ConfigError
from judgelab.evaluate import draw, from_items, from_queries, holm, pairwise, stratified_design
from judgelab.evaluate.estimators import corrected, human_only, judge_only
from judgelab.evaluate.shrinkage import fay_herriot, shrunk
from judgelab.evaluate.system_estimates import SystemEstimates


def synthetic(n_sources=40, n_systems=5, bias_sd=0.3, seed=0, judge_noise=0.5):
    """Sources x systems; human 1-5 ratings; a judge on another scale with a per-system bias."""
    rng = np.random.default_rng(seed)
    bias = rng.normal(0, bias_sd, n_systems)
    ids, systems, sources, judge, human = [], [], [], [], []
    for g in range(n_sources):
        difficulty = rng.normal(0, 0.5)
        for s in range(n_systems):
            y = float(np.clip(np.round(3 + 0.25 * s + difficulty + rng.normal(0, 0.6)), 1, 5))
            ids.append(f"{g}-{s}")
            systems.append(f"s{s}")
            sources.append(f"g{g}")
            human.append(y)
            judge.append(2 * y + bias[s] + rng.normal(0, judge_noise))
    return from_items(ids, systems, sources, judge, human)


def truth(problem):
    return np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)


def labelled(problem, design):
    return problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))


def test_identity_calibration_equals_ppi_python_for_one_system():
    ppi = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    n_items, n = 200, 30
    human = rng.normal(3, 1, n_items)
    judge = human + rng.normal(0.4, 0.7, n_items)
    problem = from_items([f"i{k}" for k in range(n_items)], [None] * n_items, [f"g{k}" for k in range(n_items)],
                         judge, human)
    chosen = np.zeros(n_items, dtype=bool)
    chosen[rng.choice(n_items, n, replace=False)] = True
    design = stratified_design(problem, chosen)
    ours = corrected(labelled(problem, design), design, calibration="identity", target="population",
                     intervals="t")  # the design-based t interval, which ppi-python's normal one is compared to
    y, f = human[chosen], judge[chosen]
    theirs_value = ppi.ppi_mean_pointestimate(y, f, judge, lam=1)
    assert ours.value[0] == pytest.approx(float(np.squeeze(theirs_value)), rel=1e-12)
    low, high = ppi.ppi_mean_ci(y, f, judge, alpha=0.05, lam=1)
    rectifier, imputed = np.std(y - f) ** 2 / n, np.std(judge) ** 2 / n_items  # ppi-python's (ddof 0) variances
    z = stats.norm.ppf(0.975)
    assert float(np.squeeze(high - low)) / 2 == pytest.approx(z * np.sqrt(rectifier + imputed), rel=1e-9)
    # ours: the same two terms with ddof 1, plus their covariance, which ppi-python leaves out because it
    # takes the judged items to be other items than the labelled ones (here they include them: the mean of
    # the human values over every item is the sum of both terms); Student's t with Welch-Satterthwaite
    # degrees of freedom (n - 1 for the labels' term, N - 1 for the judge term's)
    labels_term, judge_term = rectifier * n / (n - 1), imputed * n_items / (n_items - 1)
    r = y - f
    cross = 2 * float(np.sum((f - judge.mean()) * (r - r.mean()))) / (n * (n_items - 1))
    judge_term += cross
    df = (labels_term + judge_term) ** 2 / (labels_term ** 2 / (n - 1) + judge_term ** 2 / (n_items - 1))
    expected = stats.t.ppf(0.975, df) * np.sqrt(labels_term + judge_term)
    assert (ours.ci[0, 1] - ours.ci[0, 0]) / 2 == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("variance", ["pooled", "system"])
def test_label_based_intervals_cover_the_all_human_value(variance):
    problem = synthetic()
    target = truth(problem)
    hits = {"human": [], "corrected": []}
    for draw_seed in range(150):
        design = draw(problem, 0.15, seed=draw_seed).design
        known = labelled(problem, design)
        for name, est in (("human", human_only(known, design, target="items", variance=variance)),
                          ("corrected", corrected(known, design, target="items", variance=variance, seed=draw_seed))):
            hits[name].append((est.ci[:, 0] <= target) & (target <= est.ci[:, 1]))
    for name, h in hits.items():
        assert 0.91 <= np.mean(h) <= 0.99, (name, np.mean(h))


def test_an_informative_judge_narrows_the_interval_and_a_useless_one_does_not_widen_it_much():
    good = synthetic(judge_noise=0.3, bias_sd=0.0)
    design = draw(good, 0.2, seed=1).design
    known = labelled(good, design)
    ratio = corrected(known, design, variance="pooled").se / human_only(known, design, variance="pooled").se
    assert np.all(ratio < 0.75)
    rng = np.random.default_rng(0)
    useless = good.with_human(good.human)
    useless = type(good)(**{**useless.__dict__, "judge": np.where(good.present, rng.normal(size=good.judge.shape), np.nan)})
    known = labelled(useless, design)
    ratio = corrected(known, design, target="items").se / human_only(known, design, target="items").se
    assert np.all(ratio < 1.15)


def test_corrected_is_unbiased_under_an_active_design():
    from judgelab.evaluate.sampling import inclusion_probabilities

    problem = synthetic(n_sources=60, n_systems=3, seed=5)
    target = truth(problem)
    uncertainty = np.abs(problem.judge[problem.present] - 6) + 0.1  # favours some items strongly
    estimates = []
    for seed in range(300):
        design = draw(problem, 0.2, uncertainty=uncertainty, seed=seed).design
        estimates.append(corrected(labelled(problem, design), design, target="items", seed=seed).value)
    spread = np.std(estimates, axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(np.mean(estimates, axis=0) - target) < 4 * spread)
    assert inclusion_probabilities(uncertainty[:10], 3).sum() == pytest.approx(3)


def test_fewer_than_two_labels_is_a_named_skip_not_a_number():
    problem = synthetic(n_sources=10, n_systems=3)
    chosen = np.zeros(problem.n_units, dtype=bool)
    for s, count in enumerate((3, 3, 1)):
        chosen[np.flatnonzero(problem.strata == s)[:count]] = True
    design = stratified_design(problem, chosen)
    for est in (human_only(labelled(problem, design), design), corrected(labelled(problem, design), design)):
        assert np.isnan(est.value[2]) and np.isnan(est.ci[2]).all()
        assert est.reason[2] == "1 labelled unit (an interval needs 2)"
        assert np.isfinite(est.value[:2]).all()


def test_judge_only_bootstraps_sources_and_pairs_are_paired():
    problem = synthetic(n_sources=30, n_systems=3)
    est = judge_only(problem, n_resamples=400)
    assert est.replicates.shape == (400, 3)
    assert np.allclose(est.value, np.nanmean(np.where(problem.present, problem.judge, np.nan), axis=0))
    pairs = pairwise(est)
    diff_sd = np.std(est.replicates[:, 0] - est.replicates[:, 1])
    independent_sd = np.sqrt(np.var(est.replicates[:, 0]) + np.var(est.replicates[:, 1]))
    assert diff_sd < independent_sd  # a shared source difficulty cancels in the difference
    assert pairs.p_value[0, 1] == pairs.p_value[1, 0]


def test_holm_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(0)
    size = 6
    p = np.full((size, size), np.nan)
    upper = np.triu_indices(size, 1)
    values = rng.uniform(0, 0.2, len(upper[0]))
    p[upper] = values
    p.T[upper] = values
    expected = multitest.multipletests(values, method="holm")[1]
    assert np.allclose(holm(p)[upper], expected)
    assert np.allclose(holm(p).T[upper], expected)


def test_rank_intervals_follow_the_significant_pairs():
    problem = from_queries(["q1", "q2", "q3", "q4"], ["a", "b", "c"],
                           np.array([[0.9, 0.5, 0.49], [0.8, 0.4, 0.41], [0.85, 0.45, 0.44], [0.95, 0.5, 0.52]]),
                           np.full((4, 3), np.nan))
    est = judge_only(problem, n_resamples=500)
    rank, best, worst = pairwise(est).rank_intervals(est.value)
    assert list(rank) == [1, 2, 3] or list(rank) == [1, 3, 2]
    assert best[0] == worst[0] == 1  # a is above both
    assert (best[1], worst[1]) == (2, 3) and (best[2], worst[2]) == (2, 3)  # b and c are not separable


def test_shrinkage_leans_on_the_judge_when_its_biases_do_not_vary():
    problem = synthetic(n_sources=40, n_systems=8, bias_sd=0.0, judge_noise=0.8, seed=2)
    design = draw(problem, 0.1, seed=0).design
    fixed = corrected(labelled(problem, design), design, calibration="linear")
    judge_means = judge_only(problem, n_resamples=0).value
    pulled = shrunk(fixed, judge_means)
    line = np.polyval(np.polyfit(judge_means, truth(problem), 1), judge_means)
    assert np.mean(np.abs(pulled.value - line)) < np.mean(np.abs(fixed.value - line))
    assert set(pulled.info["weight_on_labels"]) == set(problem.systems)
    unbiased_weight = np.mean(list(pulled.info["weight_on_labels"].values()))
    biased = synthetic(n_sources=40, n_systems=8, bias_sd=3.0, seed=2)
    fixed = corrected(labelled(biased, design), design, calibration="linear")
    weights = shrunk(fixed, judge_only(biased, n_resamples=0).value).info["weight_on_labels"]
    assert min(weights.values()) > 0.8 > unbiased_weight  # biases the judge's mean does not explain: labels dominate


def _fixed(d, v):
    """Corrected estimates d with variances v, as shrunk receives them."""
    size = len(d)
    return SystemEstimates("corrected", tuple(f"s{k}" for k in range(size)), np.asarray(d, dtype=float),
                           np.full((size, 2), np.nan), np.full(size, 40), np.full(size, 4), (None,) * size, 0.95,
                           cov=np.diag(v), df=np.full((size, size), 20.0))


def test_shrinkage_does_not_rank_like_a_judge_the_labels_contradict():
    # six systems whose judge means are unrelated to their human means, labels as noisy as the systems
    # differ: the old moment estimate of tau^2 is 0 in a quarter of the draws, and the estimate is then
    # the judge's line (its ranking, or the reverse); the posterior over tau^2 never trusts the judge so far
    rng = np.random.default_rng(0)
    taus = {"moments": [], "posterior": [], "labels": []}
    zero_old, zero_new = 0, 0
    for _ in range(200):
        theta, judge_means, v = rng.normal(0, 0.3, 6), rng.normal(0, 1, 6), np.full(6, 0.09)
        d = theta + rng.normal(0, 0.3, 6)
        old = fay_herriot(d, v, judge_means, rule="moments")
        new = shrunk(_fixed(d, v), judge_means)
        zero_old += old.tau2 == 0
        zero_new += new.info["tau2"] <= 1e-6 or min(new.info["weight_on_labels"].values()) < 0.05
        taus["moments"].append(stats.kendalltau(old.value, theta).statistic)
        taus["posterior"].append(stats.kendalltau(new.value, theta).statistic)
        taus["labels"].append(stats.kendalltau(d, theta).statistic)
    mean = {k: float(np.mean(v)) for k, v in taus.items()}
    assert zero_old > 30 and zero_new == 0
    assert mean["moments"] < mean["labels"] - 0.04  # the old rule: clearly worse than the labels alone
    assert mean["posterior"] > mean["labels"] - 0.03  # the new one: not clearly worse


def test_shrinkage_intervals_cover_under_the_model():
    # theta = 1 + 0.5 x + u, u ~ N(0, 0.2^2), d = theta + e with e ~ N(0, v): the posterior's intervals
    # (mixtures over tau^2) hold about 95% of the time over systems and draws
    rng = np.random.default_rng(1)
    covered = []
    for _ in range(150):
        x = rng.normal(0, 1, 11)
        theta = 1 + 0.5 * x + rng.normal(0, 0.2, 11)
        v = rng.uniform(0.01, 0.09, 11)
        fit = shrunk(_fixed(theta + rng.normal(0, np.sqrt(v)), v), x)
        assert np.isnan(fit.ci).all()  # not confidence intervals for each system: kept as posterior intervals
        posterior = np.array(fit.info["posterior_interval"])
        assert np.all(posterior[:, 0] < fit.value) and np.all(fit.value < posterior[:, 1])
        covered.append(np.mean((posterior[:, 0] <= theta) & (theta <= posterior[:, 1])))
    assert 0.93 <= np.mean(covered) <= 0.975


def test_fay_herriot_rules():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, 8)
    d, v = 2 + x + rng.normal(0, 0.3, 8), np.full(8, 0.05)
    fits = {rule: fay_herriot(d, v, x, rule=rule) for rule in ("posterior", "moments", "adjusted")}
    smooth = fay_herriot(d, v, x, rule="smooth")  # a curve in the judge's means: here close to the line
    assert np.corrcoef(smooth.value, fits["posterior"].value)[0, 1] > 0.95
    assert np.all(smooth.ci[:, 0] < smooth.value) and np.all(smooth.value < smooth.ci[:, 1])
    assert fits["adjusted"].tau2 > 0  # Li-Lahiri's adjustment: never 0
    assert all(np.allclose(f.beta, [2, 1], atol=0.4) for f in fits.values())
    with pytest.raises(ConfigError, match="choose posterior"):
        fay_herriot(d, v, x, rule="reml")
    flat = fay_herriot(d, v, np.zeros(8))  # a judge that says nothing: shrink toward the mean of the labels
    assert flat.beta.shape == (1,) and np.all(np.abs(flat.value - d.mean()) <= np.abs(d - d.mean()) + 1e-12)


def _one_system(human, judge=None, n_items=None):
    n_items = n_items or len(human)
    judge = np.zeros(n_items) if judge is None else judge
    padded = np.full(n_items, np.nan)
    padded[: len(human)] = human
    return from_items([f"i{k}" for k in range(n_items)], [None] * n_items, [f"g{k}" for k in range(n_items)],
                      judge, padded)


def test_skewness_correction_moves_the_centre_by_johnsons_term():
    # one rare high label among nine: positive skew, so the mean is more likely under- than over-estimated
    labels = np.array([0.0] * 8 + [1.0])
    problem = _one_system(np.concatenate([labels, np.zeros(991)]), n_items=1000)
    chosen = np.zeros(1000, dtype=bool)
    chosen[:9] = True
    design = stratified_design(problem, chosen)
    plain = human_only(labelled(problem, design), design, target="population", skewness_correction=False,
                       variance="pooled", intervals="t")
    skewed = human_only(labelled(problem, design), design, target="population", variance="pooled", intervals="t")
    n, variance = 9, np.var(labels, ddof=1) / 9
    expected = stats.kstat(labels, 3) / n ** 2 / (6 * variance)  # kappa3 of the mean / (6 var of the mean)
    assert expected > 0
    assert skewed.value[0] == plain.value[0] == pytest.approx(1 / 9)  # the estimate itself is unchanged
    assert skewed.ci.mean(axis=1)[0] - plain.ci.mean(axis=1)[0] == pytest.approx(expected, rel=1e-9)
    assert np.diff(skewed.ci[0]) == pytest.approx(np.diff(plain.ci[0]))


def test_equal_labels_give_no_interval_unless_every_item_is_labelled():
    problem = _one_system(np.full(50, 4.0))
    some = np.zeros(50, dtype=bool)
    some[:6] = True
    design = stratified_design(problem, some)
    estimate = human_only(labelled(problem, design), design, target="items")
    assert estimate.value[0] == 4.0
    assert np.isnan(estimate.ci[0]).all()
    assert "all equal" in estimate.reason[0]
    everything = stratified_design(problem, np.ones(50, dtype=bool))  # the mean over these items is known exactly
    exact = human_only(labelled(problem, everything), everything, target="items")
    assert exact.ci[0].tolist() == [4.0, 4.0] and exact.reason[0] is None


def test_shrunk_leaves_out_a_system_whose_variance_is_at_rounding_level():
    """A corrected estimate from labels without spread can carry a variance like 4e-34 (seen on Chatbot
    Arena with 200 labels): the posterior's information matrix was then singular and shrunk raised."""
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 0.15, 20)
    v = rng.uniform(0.003, 0.02, 20)
    v[10] = 3.8e-34
    fit = shrunk(_fixed(d, v), d + rng.normal(0, 0.05, 20))
    assert np.isnan(fit.value[10]) and np.isfinite(np.delete(fit.value, 10)).all()


@pytest.mark.parametrize("size", [3, 6, 11, 50])
def test_the_smooth_curve_estimates_alone_equal_the_full_fit(size):
    # the checks of evaluate/choose.py fit the estimates alone, skipping the intervals' inverse;
    # they must be the full fit's, whatever the systems' count and the labels' variances
    rng = np.random.default_rng(size)
    x = rng.normal(size=size)
    d, v = 0.7 * x + rng.normal(0, 0.5, size), rng.uniform(0.001, 0.5, size)
    full, alone = fay_herriot(d, v, x, rule="smooth"), fay_herriot(d, v, x, rule="smooth", interval=False)
    assert alone.value == pytest.approx(full.value, rel=1e-9, abs=1e-12)
    assert alone.tau2 == pytest.approx(full.tau2) and alone.beta == pytest.approx(full.beta)
    assert np.isnan(alone.ci).all() and np.isnan(alone.variance).all()
