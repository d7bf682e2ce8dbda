"""Style-controlled Bradley-Terry and Davidson's tie model (judgelab.evaluate.style)."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError
from judgelab.evaluate.preferences import comparisons
from judgelab.evaluate.style import (
    comparison_texts,
    davidson,
    outcome_weights,
    style_board,
    style_counts,
    style_covariates,
    style_estimate,
)

K = 6
BETA = np.linspace(-1, 1, K) - np.linspace(-1, 1, K).mean()
NAMES = np.array([f"s{k}" for k in range(K)], dtype=object)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _pairs(rng, n):
    a = rng.integers(0, K, n)
    return a, (a + rng.integers(1, K, n)) % K


def _order(data):
    return [data.systems.index(f"s{k}") for k in range(K)]


def test_counts_follow_arena_hard_markdown_rules():
    text = ("# Title\n## Part\nSome **bold** and __also bold__ words.\n1. first\n2. second\n- item\n  * nested\n"
            "```python\n# a comment, no header\n- not a list\n**not bold**\n```\n#not a header (no space)\n")
    tokens, headers, lists, bold = style_counts(text)
    assert (headers, lists, bold) == (2, 4, 2)
    assert style_counts("Hello, world! **Yes**")[0] == 9  # a token is a word or a punctuation mark


def test_covariates_are_normalised_differences_standardised():
    long, short = "word " * 30, "word " * 10
    cov = style_covariates([long, short, long, "**a** **b**"], [short, long, long, "plain"])
    raw_length = np.array([(30 - 10) / 41, (10 - 30) / 41, 0.0, (10 - 1) / 12])  # "**a** **b**": 10 tokens
    expected = (raw_length - raw_length.mean()) / raw_length.std()
    assert np.allclose(cov.values[:, cov.features.index("length")], expected)
    assert cov.dropped == ("headers", "lists")  # no response has any: nothing to standardise
    assert "bold" in cov.features
    repeated = style_covariates(["- **a**\n- **b** c", "x", "- **y**"], ["z", "- **q** r s", "t u"])
    assert repeated.features == ("length", "lists") and repeated.dropped == ("headers", "bold")  # bold = lists
    # swapping the two responses flips the covariate's sign around its mean
    swapped = style_covariates([short, long, long, "plain"], [long, short, long, "**a** **b**"])
    assert np.allclose(swapped.values[:, 0], -cov.values[:, 0])


def test_judge_fit_recovers_the_strengths_and_the_style_coefficient():
    rng = np.random.default_rng(3)
    a, b = _pairs(rng, 6000)
    z = rng.normal(size=(6000, 2))
    verdict = (rng.random(6000) < _sigmoid(BETA[a] - BETA[b] + z @ [0.7, -0.3])).astype(float)
    data = comparisons(NAMES[a], NAMES[b], verdict)
    fit = style_estimate(data, z, "judge", features=["length", "bold"])
    for name, true in (("length", 0.7), ("bold", -0.3)):
        c = fit.coefficients[name]
        assert c["low"] < true < c["high"] and c["high"] - c["low"] < 0.2
    assert np.allclose(fit.strengths.value[_order(data)], BETA, atol=0.12)
    # and it is the logistic regression statsmodels fits (one system's column left out, then centred)
    import statsmodels.api as sm

    x = np.zeros((6000, K))
    x[np.arange(6000), data.a], x[np.arange(6000), data.b] = 1.0, -1.0
    glm = sm.GLM(verdict, np.column_stack([x[:, 1:], z]), family=sm.families.Binomial()).fit()
    strengths = np.concatenate([[0.0], glm.params[: K - 1]])
    assert np.allclose(fit.strengths.value, strengths - strengths.mean(), atol=1e-6)
    assert np.allclose([fit.coefficients["length"]["value"], fit.coefficients["bold"]["value"]], glm.params[-2:],
                       atol=1e-6)


def _human_and_judge(rng, n, labelled):
    a, b = _pairs(rng, n)
    z = rng.normal(size=(n, 1))
    u = rng.random(n)
    human = (u < _sigmoid(BETA[a] - BETA[b] + 0.5 * z[:, 0])).astype(float)
    shared = np.where(rng.random(n) < 0.8, u, rng.random(n))
    judge = (shared < _sigmoid(0.7 * (BETA[a] - BETA[b]) + 1.2 * z[:, 0])).astype(float)
    mask = np.zeros(n, dtype=bool)
    mask[rng.choice(n, labelled, replace=False)] = True
    return comparisons(NAMES[a], NAMES[b], judge, np.where(mask, human, np.nan)), z


def test_corrected_fit_targets_the_humans_coefficient_not_the_judges():
    data, z = _human_and_judge(np.random.default_rng(5), 4000, 600)
    judge = style_estimate(data, z, "judge", features=["length"])
    corrected = style_estimate(data, z, "corrected", features=["length"])
    human = style_estimate(data, z, "human", features=["length"])
    assert judge.coefficients["length"]["low"] > 0.9  # the judge's taste for length, 1.2
    c = corrected.coefficients["length"]
    assert c["low"] < 0.5 < c["high"]
    assert 0 < corrected.judge_weight <= 1
    # the judge's verdicts narrow the strengths' intervals against the labels alone
    width = lambda fit: np.mean(np.diff(fit.strengths.ci, axis=1))  # noqa: E731
    assert width(corrected) < width(human)
    order = _order(data)
    ci = corrected.strengths.ci[order]
    assert np.mean((ci[:, 0] <= BETA) & (BETA <= ci[:, 1])) >= 4 / 6


def test_davidson_recovers_strengths_and_the_tie_parameter():
    rng = np.random.default_rng(7)
    a, b = _pairs(rng, 8000)
    d = BETA[a] - BETA[b]
    nu = 1.2
    total = np.exp(d / 2) + np.exp(-d / 2) + nu
    u = rng.random(8000)
    win, tie = np.exp(d / 2) / total, nu / total
    data = comparisons(NAMES[a], NAMES[b], np.where(u < win, "a", np.where(u < win + tie, "tie", "b")))
    fit = davidson(data)
    assert fit.tie["low"] < nu < fit.tie["high"]
    assert np.allclose(fit.strengths.value[_order(data)], BETA, atol=0.12)
    # "ties half" shrinks the strengths: Davidson's spread is the wider one
    spread = lambda values: np.ptp(values[np.isfinite(values)])  # noqa: E731
    from judgelab.evaluate.preferences import estimate

    assert spread(fit.strengths.value) > spread(estimate(data, "judge", estimand="bradley-terry").value)
    # labels in a and b only: no human tie parameter, and the board says so
    human = np.where(np.arange(8000) < 300, np.where(d > 0, "a", "b"), None)
    labelled = comparisons(NAMES[a], NAMES[b], data.judge, human)
    board = style_board(labelled, style_control=False, ties="davidson")
    assert set(board.davidson) == {"judge"} and not board.fits and "no human verdict is a tie" in board.notes[0]


def test_outcome_weights_split_soft_preferences_between_neighbouring_outcomes():
    w = outcome_weights(np.array([1.0, 0.75, 0.5, 0.25, 0.0]))
    assert np.allclose(w, [[1, 0, 0], [0.5, 0.5, 0], [0, 1, 0], [0, 0.5, 0.5], [0, 0, 1]])
    assert np.allclose(w @ [1, 0.5, 0], [1.0, 0.75, 0.5, 0.25, 0.0])  # the mean stays the preference


def test_missing_texts_name_the_file_and_the_field():
    items = [Item(id="c1", system_a="x", system_b="y", output_a="one", output_b="two", label="a"),
             Item(id="c2", system_a="x", system_b="y", source="no texts", label="b")]
    with pytest.raises(DataError) as caught:
        comparison_texts(items, "pairs.jsonl")
    message = str(caught.value)
    assert "pairs.jsonl" in message and "field 'output_a'" in message and "'c2'" in message and "1 of 2" in message


def test_a_system_without_a_judged_comparison_gets_no_strength_and_says_why():
    rng = np.random.default_rng(11)
    a, b = _pairs(rng, 3000)
    z = rng.normal(size=(3000, 1))
    verdict = np.where(rng.random(3000) < _sigmoid(BETA[a] - BETA[b] + 0.5 * z[:, 0]), 1.0, 0.0)
    verdict[(a == 5) | (b == 5)] = np.nan  # s5's comparisons were never judged
    data = comparisons(NAMES[a], NAMES[b], verdict)
    fit = style_estimate(data, z, "judge", features=["length"])
    s5 = data.systems.index("s5")
    assert np.isnan(fit.strengths.value[s5]) and "no comparison with a verdict" in fit.strengths.reason[s5]
    others = np.delete(np.arange(K), s5)
    assert np.isfinite(fit.strengths.value[others]).all() and abs(fit.strengths.value[others].sum()) < 1e-8


def test_bad_inputs_are_refused_with_a_reason():
    rng = np.random.default_rng(2)
    a, b = _pairs(rng, 200)
    data = comparisons(NAMES[a], NAMES[b], rng.integers(0, 2, 200).astype(float))
    with pytest.raises(ConfigError, match="labelled comparison"):
        style_estimate(data, rng.normal(size=(200, 1)), "corrected")
    with pytest.raises(ConfigError, match="for 200 comparisons"):
        style_estimate(data, rng.normal(size=(150, 1)), "judge")
    bad = rng.normal(size=(200, 1))
    bad[4, 0] = np.nan
    with pytest.raises(ConfigError, match="comparison 4 is not a finite number"):
        style_estimate(data, bad, "judge")
    with pytest.raises(ConfigError, match="no judge verdict is a tie"):
        davidson(data)
    with pytest.raises(ConfigError, match="choose half, davidson"):
        style_board(data, style_control=False, ties="rao-kupper")
    with pytest.raises(ConfigError, match="choose among length"):
        style_covariates(["a"], ["b"], features=["emoji"])


def test_a_covariate_that_decides_every_comparison_gives_nan_not_huge_numbers():
    rng = np.random.default_rng(4)
    a, b = _pairs(rng, 600)
    z = rng.normal(size=(600, 1))
    data = comparisons(NAMES[a], NAMES[b], np.where(z[:, 0] > 0, "a", "b"))  # the longer answer always wins
    fit = style_estimate(data, z, "judge", features=["length"])
    assert np.isnan(fit.strengths.value).all() and "a covariate decides them" in fit.strengths.reason[0]
    assert np.isnan(fit.coefficients["length"]["value"])


def test_human_only_fit_leaves_out_a_system_without_labels():
    data, z = _human_and_judge(np.random.default_rng(8), 3000, 500)
    s0 = data.systems.index("s0")
    human = np.where((data.a == s0) | (data.b == s0), np.nan, data.human)  # nobody labelled s0's comparisons
    names = np.asarray(data.systems, dtype=object)
    unlabelled = comparisons(names[data.a], names[data.b], data.judge, human)
    fit = style_estimate(unlabelled, z, "human", features=["length"])
    assert np.isnan(fit.strengths.value[s0]) and "0 labelled comparison(s)" in fit.strengths.reason[s0]
    assert np.isfinite(np.delete(fit.strengths.value, s0)).all()
    corrected = style_estimate(unlabelled, z, "corrected", features=["length"])
    assert np.isnan(corrected.strengths.value[s0])  # the corrected value needs the system's own labels too


# -- rank sets, clustered and bootstrap intervals ------------------------------------------------------------
def _texts(rng, n):
    """Responses of random lengths (the length covariate varies; no markdown)."""
    return (["word " * int(k) for k in rng.integers(5, 60, n)], ["word " * int(k) for k in rng.integers(5, 60, n)])


def test_rank_sets_put_a_clearly_best_system_alone_at_1_and_overlap_the_close_ones():
    rng = np.random.default_rng(21)
    strength = np.array([2.5, 0.05, 0.0, -0.05])
    a = rng.integers(0, 4, 3000)
    b = (a + rng.integers(1, 4, 3000)) % 4
    verdict = (rng.random(3000) < _sigmoid(strength[a] - strength[b])).astype(float)
    names = np.array(["top", "x", "y", "w"], dtype=object)
    board = style_board(comparisons(names[a], names[b], verdict), _texts(rng, 3000))
    fit = board.fits["judge"]
    best, worst = fit.ranks.best, fit.ranks.worst
    top = board.systems.index("top")
    assert (best[top], worst[top]) == (1, 1)
    close = [board.systems.index(s) for s in ("x", "y", "w")]
    assert all(best[k] <= 3 and worst[k] >= 3 and worst[k] - best[k] >= 1 for k in close)  # they share rank 3
    shown = board.to_dict()["style_controlled"]["judge"]
    assert shown["strengths"]["top"]["rank_set"] == [1, 1] and shown["rank_sets"]["method"] == "max-t"


def _question_effect(rng, n, questions, rho):
    """Comparisons whose outcomes share each question's draw (a Gaussian copula per question and system: a system
    that does well on a question wins its comparisons there together); each outcome alone stays
    Bernoulli(sigmoid(beta_a - beta_b + 0.5 z)), so the logistic model holds and only the independence breaks."""
    from scipy.stats import norm

    q = rng.integers(0, questions, n)
    a, b = _pairs(rng, n)
    z = rng.normal(size=(n, 1))
    w = rng.normal(size=(questions, K))
    u = norm.cdf(np.sqrt(rho) * (w[q, a] - w[q, b]) / np.sqrt(2) + np.sqrt(1 - rho) * rng.normal(size=n))
    verdict = (u < _sigmoid(BETA[a] - BETA[b] + 0.5 * z[:, 0])).astype(float)
    return comparisons(NAMES[a], NAMES[b], verdict), z, q


def test_clustered_intervals_widen_under_a_question_effect_and_not_without_one():
    width = lambda fit: np.mean(np.diff(fit.strengths.ci, axis=1))  # noqa: E731
    ratios = {}
    for rho in (0.0, 0.7):
        data, z, q = _question_effect(np.random.default_rng(31), 6000, 200, rho)
        naive = style_estimate(data, z, "judge", features=["length"])
        clustered = style_estimate(data, z, "judge", features=["length"], groups=q)
        assert clustered.strengths.info["clusters"] == 200 and naive.strengths.info["clusters"] is None
        ratios[rho] = width(clustered) / width(naive)
    assert 0.9 < ratios[0.0] < 1.1
    assert ratios[0.7] > 1.5
    # the corrected fit too: its judge term and its labels, summed by question
    data, z, q = _question_effect(np.random.default_rng(32), 6000, 200, 0.7)
    names = np.asarray(data.systems, dtype=object)
    human = np.where(np.random.default_rng(33).random(6000) < 0.15, 1 - data.judge, data.judge)  # people differ
    labelled = comparisons(names[data.a], names[data.b], data.judge, np.where(np.arange(6000) % 5 == 0, human, np.nan))
    naive = style_estimate(labelled, z, "corrected", features=["length"])
    clustered = style_estimate(labelled, z, "corrected", features=["length"], groups=q)
    assert width(clustered) > 1.1 * width(naive) and 0 < clustered.judge_weight < 1
    # every comparison its own question: nothing to cluster
    alone = style_estimate(data, z, "judge", features=["length"], groups=np.arange(6000))
    assert alone.strengths.info["clusters"] is None


def test_bootstrap_intervals_are_close_to_the_sandwich_on_independent_comparisons():
    rng = np.random.default_rng(41)
    a, b = _pairs(rng, 4000)
    z = rng.normal(size=(4000, 1))
    verdict = (rng.random(4000) < _sigmoid(BETA[a] - BETA[b] + 0.5 * z[:, 0])).astype(float)
    data = comparisons(NAMES[a], NAMES[b], verdict)
    sandwich = style_estimate(data, z, "judge", features=["length"])
    boot = style_estimate(data, z, "judge", features=["length"], intervals="bootstrap", n_resamples=400, seed=1)
    assert boot.strengths.info["intervals"] == "bootstrap" and boot.strengths.info["not_converged"] == 0
    ratio = np.diff(boot.strengths.ci, axis=1) / np.diff(sandwich.strengths.ci, axis=1)
    assert np.all((ratio > 0.8) & (ratio < 1.2)), ratio
    assert np.allclose(boot.strengths.value, sandwich.strengths.value)  # the point estimates stay
    assert 0.8 < boot.coefficients["length"]["se"] / sandwich.coefficients["length"]["se"] < 1.2
    # with few labels per system a label-based fit keeps its sandwich intervals, and says why
    few, zf = _human_and_judge(np.random.default_rng(42), 2000, 60)
    kept = style_estimate(few, zf, "corrected", features=["length"], intervals="bootstrap", n_resamples=50)
    assert kept.strengths.info["intervals"] == "sandwich" and "need 30 per system" in kept.strengths.info[
        "intervals_reason"]


def test_bad_interval_choices_are_refused_before_fitting():
    data, z = _human_and_judge(np.random.default_rng(9), 500, 100)
    with pytest.raises(ConfigError, match="0 bootstrap resample"):
        style_estimate(data, z, "judge", intervals="bootstrap", n_resamples=0)
    with pytest.raises(ConfigError, match="choose sandwich, bootstrap"):
        style_estimate(data, z, "judge", intervals="jackknife")
    with pytest.raises(ConfigError, match="target population"):
        style_board(data, _texts(np.random.default_rng(1), 500), target="items", intervals="bootstrap")
    with pytest.raises(ConfigError, match="group labels for 500"):
        style_estimate(data, z, "judge", groups=np.zeros(10))


def test_a_weak_judge_never_widens_a_style_controlled_interval_beyond_the_labels_own():
    """A judge right 70% of the time: before the guard its corrected style-controlled interval came out wider
    than the human-only one for some systems on most draws; now those systems take the labels' own."""
    taken = 0
    for seed in range(2, 6):
        rng = np.random.default_rng(seed)
        n = 2000
        a, b = _pairs(rng, n)
        z = rng.normal(size=n)
        human = (rng.random(n) < _sigmoid(BETA[a] - BETA[b] + 0.4 * z)).astype(float)
        judge = np.where(rng.random(n) < 0.7, human, 1 - human)
        labelled = np.zeros(n, dtype=bool)
        labelled[rng.choice(n, 300, replace=False)] = True
        data = comparisons(NAMES[a], NAMES[b], judge, human, labelled=labelled)
        own = style_estimate(data, z, "human").strengths
        fixed = style_estimate(data, z, "corrected").strengths
        assert np.all(fixed.ci[:, 1] - fixed.ci[:, 0] <= own.ci[:, 1] - own.ci[:, 0] + 1e-12)
        named = np.isin(data.systems, fixed.info.get("labels_own_narrower") or [])
        taken += int(named.sum())
        np.testing.assert_array_equal(fixed.ci[named], own.ci[named])
        given = style_estimate(data, z, "corrected", labels_own=own).strengths
        np.testing.assert_array_equal(given.ci, fixed.ci)
    assert taken >= 3


def test_several_judges_are_corrected_through_their_stacked_combination():
    """A panel of a noise judge (first) and a judge that mostly agrees with people: the corrected style fit
    uses their cross-fitted combination, so it is narrower than with the first judge alone; the judge-only fit
    stays the first judge's."""
    from dataclasses import replace

    rng = np.random.default_rng(5)
    n = 3000
    a, b = _pairs(rng, n)
    z = rng.normal(size=n)
    human = (rng.random(n) < _sigmoid(BETA[a] - BETA[b] + 0.4 * z)).astype(float)
    noise = (rng.random(n) < 0.5).astype(float)
    good = np.where(rng.random(n) < 0.9, human, 1 - human)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, 400, replace=False)] = True
    first = comparisons(NAMES[a], NAMES[b], noise, human, labelled=labelled)
    panel = replace(first, judges=np.column_stack([noise, good]), judge_names=("noise", "good"))
    alone = style_estimate(first, z, "corrected").strengths
    stacked = style_estimate(panel, z, "corrected").strengths
    width = lambda est: np.mean(est.ci[:, 1] - est.ci[:, 0])  # noqa: E731
    assert width(stacked) < 0.8 * width(alone)
    np.testing.assert_array_equal(style_estimate(panel, z, "judge").strengths.value,
                                  style_estimate(first, z, "judge").strengths.value)


def test_a_human_only_fit_that_leaves_a_system_out_is_not_mixed_into_the_corrected_one():
    """With a system never labelled the human-only fit is centred over the others: its strengths are on another
    reference than the corrected fit's, so none is taken (taking them shifted a system by ~0.17 here)."""
    rng = np.random.default_rng(1)
    n = 2000
    a, b = _pairs(rng, n)
    z = rng.normal(size=n)
    human = (rng.random(n) < _sigmoid(BETA[a] - BETA[b])).astype(float)
    judge = np.where(rng.random(n) < 0.7, human, 1 - human)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, 300, replace=False)] = True
    labelled &= (a != K - 1) & (b != K - 1)
    data = comparisons(NAMES[a], NAMES[b], judge, human, labelled=labelled)
    own = style_estimate(data, z, "human").strengths
    fixed = style_estimate(data, z, "corrected").strengths
    assert own.info["centred_over"] != fixed.info["centred_over"]
    assert "labels_own_narrower" not in fixed.info
    shown = np.isfinite(own.value) & np.isfinite(fixed.value)
    assert not np.any(own.value[shown] == fixed.value[shown])
