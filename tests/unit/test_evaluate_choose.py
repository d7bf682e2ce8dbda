"""The recommended ranking of systems (evaluate/choose.py): shrunk where the labels show the judge's
system means to be trustworthy, the labels' own (corrected) where a held-out half says otherwise."""

from __future__ import annotations

import numpy as np

from judgelab.evaluate import from_items
from judgelab.evaluate.choose import choose_ranking
from judgelab.evaluate.design import Design, stratified_design


def problem(judge_of_system, n_per_system=40, labels_per_system=8, seed=0):
    rng = np.random.default_rng(seed)
    truth = np.linspace(1.0, 3.0, len(judge_of_system))
    systems = np.repeat(np.arange(len(truth)), n_per_system)
    human = truth[systems] + rng.normal(0, 0.8, len(systems))
    judge = np.asarray(judge_of_system)[systems] + rng.normal(0, 0.3, len(systems))
    ids = [f"i{k}" for k in range(len(systems))]
    built = from_items(ids, systems.astype(str), ids, judge, human)
    labelled = np.zeros(len(systems), dtype=bool)
    for system in range(len(truth)):
        labelled[rng.choice(np.flatnonzero(systems == system), labels_per_system, replace=False)] = True
    design = stratified_design(built, labelled)
    judge_means = np.array([judge[systems == s].mean() for s in range(len(truth))])
    order = [built.systems.index(str(s)) for s in range(len(truth))]
    return built.with_human(np.where(labelled[:, None], built.human, np.nan)), design, judge_means[np.argsort(order)]


def test_a_judge_that_orders_systems_like_the_humans_is_trusted():
    labelled, design, judge_means = problem([1.0, 1.4, 1.8, 2.2, 2.6, 3.0, 3.4, 3.8])
    choice = choose_ranking(labelled, design, judge_means)
    assert choice.estimator == "shrunk" and choice.tau_shrunk >= choice.tau_labels
    assert "shrunk ranking of one half agreed better" in choice.reason


def test_a_judge_that_reverses_the_order_inside_two_groups_is_not():
    # two groups the judge separates, each ordered backwards: a line through its means fits the groups
    labelled, design, judge_means = problem([1.6, 1.4, 1.2, 1.0, 3.6, 3.4, 3.2, 3.0], labels_per_system=12)
    choice = choose_ranking(labelled, design, judge_means)
    assert choice.estimator == "corrected" and choice.tau_labels > choice.tau_shrunk


def test_an_active_design_or_too_few_labels_is_not_checked():
    labelled, design, judge_means = problem([1.0, 2.0, 3.0, 4.0])
    active = Design(design.labelled, design.probability, "active")
    assert choose_ranking(labelled, active, judge_means).reason.startswith("not checked: the labels were drawn")
    one_each = problem([1.0, 2.0, 3.0, 4.0], labels_per_system=1)
    assert choose_ranking(*one_each).reason == "not checked: fewer than three systems have two labels"
