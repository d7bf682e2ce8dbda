"""Runs with a few labelled queries: no interval below the minimum (and how many more queries it
needs); the guided ranking keeps the judge's order unless the labels significantly contradict it."""

from __future__ import annotations

import numpy as np
from scipy import stats

from judgelab.evaluate import from_queries, pairwise, stratified_design
from judgelab.evaluate.compare import ranks_of, t_tests
from judgelab.evaluate.estimators import MIN_LABELLED_QUERIES, corrected, human_only, judge_only
from judgelab.evaluate.guided import LEVEL, LEVEL_FEW, guided_ranking
from judgelab.evaluate.plan import plan_labels  # noqa: F401  (plan imports the minimum: importable)


def runs_problem(n_queries=20, run_means=(0.6, 0.55, 0.5, 0.45), noise=0.15, judge_shift=0.2, seed=0):
    """Queries x runs of nDCG-like values: a query difficulty shared by all runs, the judge = human + a
    shift + noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 0.15, (n_queries, 1))
    human = np.clip(np.array(run_means)[None, :] + difficulty + rng.normal(0, noise, (n_queries, len(run_means))), 0, 1)
    judge = human + judge_shift + rng.normal(0, noise, human.shape)
    queries = [f"q{k}" for k in range(n_queries)]
    return from_queries(queries, [f"r{k}" for k in range(len(run_means))], judge, human)


def labelled_design(problem, n):
    mask = np.zeros(problem.n_units, dtype=bool)
    mask[:n] = True
    design = stratified_design(problem, mask)
    return problem.with_human(np.where(mask[:, None], problem.human, np.nan)), design


def test_three_labelled_queries_get_betting_intervals_where_the_t_interval_is_declined():
    problem, design = labelled_design(runs_problem(), 3)
    for estimator in (human_only, corrected):
        est = estimator(problem, design, target="items")  # intervals="auto": betting below 10 queries
        assert np.isfinite(est.value).all() and np.isfinite(est.ci).all() and all(r is None for r in est.reason)
        assert set(est.info["per_system"]) == {"betting"} and est.info["few_labelled_queries"]
        assert np.all((est.ci[:, 0] >= 0) & (est.ci[:, 1] <= 1) & (est.ci[:, 1] > est.ci[:, 0]))
        old = estimator(problem, design, target="items", intervals="t")  # the t interval: declined below 9
        assert np.isnan(old.ci).all()
        assert all("3 labelled queries: intervals for runs need 9 (label 6 more)" in r for r in old.reason)
        assert old.info["intervals_declined"] and old.info["min_labelled_queries"] == MIN_LABELLED_QUERIES
        pairs = pairwise(old)  # no test of a difference either: p-values unknown, nothing separable
        assert np.isnan(pairs.p_value).all() and not pairs.significant.any()
        plain = estimator(problem, design, target="items", intervals="t", min_queries=0)  # a t interval
        assert np.isfinite(plain.ci).all() and all(r is None for r in plain.reason)
        # the same values, but where the judge would widen a shown interval the labels' own estimate is taken
        kept = [s not in plain.info.get("labels_own_narrower", []) for s in plain.systems]
        assert any(kept) and np.allclose(plain.value[kept], old.value[kept])


def test_from_the_minimum_on_runs_get_intervals_and_items_are_unaffected():
    problem, design = labelled_design(runs_problem(), MIN_LABELLED_QUERIES)
    est = corrected(problem, design, target="items")
    assert np.isfinite(est.ci).all() and all(r is None for r in est.reason) and "intervals_declined" not in est.info


def test_guided_ranking_is_the_judges_when_no_difference_is_significant():
    problem = runs_problem(n_queries=30, run_means=(0.5, 0.5, 0.5, 0.5, 0.5), noise=0.3, seed=8)
    labelled, design = labelled_design(problem, MIN_LABELLED_QUERIES)
    fixed = corrected(labelled, design, target="items")
    judge = judge_only(problem, n_resamples=0)
    difference = fixed.value[:, None] - fixed.value[None, :]
    p, _ = t_tests(difference, fixed.cov, fixed.df)  # the ranking's own (unguarded) paired test
    assert not (p < LEVEL).any()  # the premise: the labels separate no pair
    guided = guided_ranking(fixed, judge)
    assert list(ranks_of(guided.value)) == list(ranks_of(judge.value))
    assert guided.info["significant_pairs"] == 0 and guided.info["overruled_judge_pairs"] == 0
    assert np.isnan(guided.ci).all() and guided.estimator == "guided" and guided.info["level"] == LEVEL


def test_guided_ranking_follows_a_planted_significant_contradiction_and_nothing_else():
    problem = runs_problem(n_queries=30, run_means=(0.7, 0.6, 0.5, 0.4), noise=0.02, seed=4)
    judge_values = problem.judge.copy()
    judge_values[:, 3] += 0.5  # the judge puts r3 first; the humans, on every query, last
    problem = from_queries(problem.units, problem.systems, judge_values, problem.human)
    labelled, design = labelled_design(problem, 3)  # intervals declined, yet a 0.3 gap on every query is clear
    fixed = corrected(labelled, design, target="items")
    judge = judge_only(problem, n_resamples=0)
    assert ranks_of(judge.value)[3] == 1
    guided = guided_ranking(fixed, judge)
    rank = ranks_of(guided.value)
    p = stats.ttest_rel(labelled.human[:3, 0], labelled.human[:3, 3]).pvalue
    assert p < 0.05 and rank[3] > rank[0]  # r3 below r0, as the labels say
    assert guided.info["overruled_judge_pairs"] >= 1 and guided.info["level"] == LEVEL_FEW  # intervals declined
    others = [k for k in range(3)]
    assert list(np.argsort(rank[others])) == list(np.argsort(ranks_of(judge.value)[others]))  # the rest: the judge's


def test_guided_ranking_leaves_a_run_without_a_judge_value_unranked():
    problem = runs_problem(n_queries=12)
    judge_values = problem.judge.copy()
    judge_values[:, 1] = np.nan
    problem = from_queries(problem.units, problem.systems, judge_values, problem.human)
    labelled, design = labelled_design(problem, MIN_LABELLED_QUERIES)
    guided = guided_ranking(corrected(labelled, design, target="items"), judge_only(problem, n_resamples=0))
    assert np.isnan(guided.value[1]) and guided.reason[1] == "no judge verdict"
    assert sorted(guided.value[[0, 2, 3]]) == [0, 1, 2]
