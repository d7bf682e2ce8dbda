"""The spend planner (evaluate/spend.py, issue 46): which judges to run and how many labels a budget buys,
and whether the width it predicts is the width a plan carried out gets."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judgelab.errors import ConfigError
from judgelab.evaluate import draw, from_items
from judgelab.evaluate.estimators import corrected
from judgelab.evaluate.spend import plan_spend, resolve_costs


def panel(seed=0, n_per_system=120, systems=5):
    """Human = system effect + item quality; 'sharp' sees the quality well, 'blind' not at all."""
    rng = np.random.default_rng(seed)
    system = np.repeat(np.arange(systems), n_per_system)
    quality = rng.normal(0, 1, len(system))
    human = np.clip(np.round(3 + 0.3 * system + quality), 1, 5)
    ids = [f"i{k}" for k in range(len(system))]
    problem = from_items(ids, system.astype(str), ids, quality + rng.normal(0, 0.3, len(system)), human,
                         scale=(1, 5))
    blind = np.full(problem.judge.shape, np.nan)
    blind[np.arange(problem.n_units), problem.strata] = rng.normal(0, 1, len(system))
    return problem.with_judges(np.stack([problem.judge, blind], axis=-1), ["sharp", "blind"])


def test_a_cheap_judge_that_predicts_the_labels_is_bought_and_a_blind_one_is_not():
    problem = panel()
    pilot = draw(problem, 0.2, seed=1).design
    plan = plan_spend(problem, pilot, budget=100, judge_costs={"sharp": 0.01, "blind": 0.01}, label_cost=0.5)
    assert plan.best.judges == ("sharp",)
    humans = next(o for o in plan.options if not o.judges)
    assert plan.best.width < 0.8 * humans.width  # the sharp judge is worth far more than the 12 labels it costs
    blind = next(o for o in plan.options if o.judges == ("blind",))
    assert blind.width >= 0.99 * humans.width


def test_an_expensive_judge_is_left_out_when_its_cost_buys_more_in_labels():
    problem = panel()
    pilot = draw(problem, 0.2, seed=1).design
    plan = plan_spend(problem, pilot, budget=100, judge_costs={"sharp": 0.15, "blind": 0.0}, label_cost=0.5)
    # the sharp judge on 600 items costs 90: 20 labels are left, fewer than 10 a system
    assert "sharp" not in plan.best.judges and any("sharp" in name for name in plan.left_out)


def test_the_predicted_width_is_the_width_the_plan_gets():
    problem = panel(seed=2)
    pilot = draw(problem, 0.25, seed=3).design
    plan = plan_spend(problem, pilot, budget=120, judge_costs={"sharp": 0.01, "blind": 0.01}, label_cost=0.5)
    chosen = replace(problem, judge=problem.judges[..., 0], judges=None, judge_names=())
    widths = []
    for k in range(60):
        design = draw(chosen, plan.best.labels, seed=100 + k).design
        known = chosen.with_human(np.where(design.labelled[:, None], chosen.human, np.nan))
        est = corrected(known, design, seed=k)
        widths.append(np.mean(est.ci[:, 1] - est.ci[:, 0]))
    assert np.mean(widths) == pytest.approx(plan.best.width, rel=0.15)


def test_costs_are_named_by_judge_or_a_prefix_of_one_and_every_judge_needs_one():
    names = ("gpt-4o-2024", "claude-3-opus")
    assert resolve_costs(names, {"gpt": 1.0, "claude-3-opus": 2.0}) == {"gpt-4o-2024": 1.0, "claude-3-opus": 2.0}
    with pytest.raises(ConfigError, match="judge_costs llama=1: matches no judge"):
        resolve_costs(names, {"llama": 1.0})
    problem = panel()
    pilot = draw(problem, 0.2, seed=1).design
    with pytest.raises(ConfigError, match="no cost for judge blind"):
        plan_spend(problem, pilot, budget=100, judge_costs={"sharp": 0.01}, label_cost=0.5)
    with pytest.raises(ConfigError, match="label_cost: the cost of one human label, above 0"):
        plan_spend(problem, pilot, budget=100, judge_costs={"sharp": 0.01, "blind": 0.0}, label_cost=0.0)


def test_a_budget_short_of_ten_labels_a_system_plans_nothing():
    problem = panel()
    pilot = draw(problem, 0.2, seed=1).design
    plan = plan_spend(problem, pilot, budget=20, judge_costs={"sharp": 0.0, "blind": 0.0}, label_cost=0.5)
    assert plan.best is None and plan.options == [] and "humans alone" in plan.left_out


# -- comparisons between systems ---------------------------------------------------------------------------
def arena(seed=0, n=6000, systems=6):
    """Comparisons whose human preference follows a latent quality difference; 'sharp' sees it, 'blind' not."""
    from judgelab.evaluate.comparisons import comparisons

    rng = np.random.default_rng(seed)
    a = rng.integers(0, systems, n)
    b = (a + rng.integers(1, systems, n)) % systems
    edge = 0.25 * (a - b) + rng.normal(0, 1.5, n)  # per comparison: which answer is better, and by how much
    human = (rng.random(n) < 1 / (1 + np.exp(-3 * edge))).astype(float)
    sharp = np.where(edge + rng.normal(0, 0.4, n) > 0, 1.0, 0.0)
    blind = rng.integers(0, 2, n).astype(float)
    data = comparisons(a.astype(str), b.astype(str), sharp, human)
    return replace(data, judges=np.column_stack([sharp, blind]), judge_names=("sharp", "blind"))


def pilot_of(data, size, seed):
    mask = np.zeros(data.n, dtype=bool)
    mask[np.random.default_rng(seed).choice(data.n, size, replace=False)] = True
    return replace(data, human=np.where(mask, data.human, np.nan))


def test_comparisons_a_judge_that_sees_the_better_answer_is_bought_and_a_coin_is_not():
    from judgelab.evaluate.spend import plan_spend_comparisons

    full = arena()
    plan = plan_spend_comparisons(pilot_of(full, 400, 1), budget=600, judge_costs={"sharp": 0.01, "blind": 0.001},
                                  label_cost=0.5)
    assert plan.best.judges == ("sharp",)
    humans = next(o for o in plan.options if not o.judges)
    assert plan.best.width < 0.85 * humans.width
    coin = next(o for o in plan.options if o.judges == ("blind",))
    assert coin.width >= 0.99 * humans.width
    costly = plan_spend_comparisons(pilot_of(full, 400, 1), budget=600, judge_costs={"sharp": 0.09, "blind": 0.0},
                                    label_cost=0.5)  # 540 of the 600 on the judge: 120 labels, under 10 a system
    assert "sharp" not in costly.best.judges


def test_comparisons_the_predicted_width_is_the_width_the_plan_gets():
    from judgelab.evaluate.preferences import estimate
    from judgelab.evaluate.spend import plan_spend_comparisons

    full = arena(seed=3)
    plan = plan_spend_comparisons(pilot_of(full, 300, 4), budget=500, judge_costs={"sharp": 0.01, "blind": 0.01},
                                  label_cost=0.5)
    chosen = replace(full, judges=None, judge_names=())  # the judge column is 'sharp'
    assert plan.best.judges == ("sharp",)
    widths = [np.mean(np.diff(estimate(pilot_of(chosen, plan.best.labels, 100 + k), "corrected", seed=k).ci))
              for k in range(40)]
    assert abs(np.mean(widths) / plan.best.width - 1) < 0.15


def test_a_spend_plan_on_comparison_items_reads_their_judges_and_relevance_items_need_runs(tmp_path):
    from judgelab.data import Item, Judgment
    from judgelab.evaluate.spend import plan_spend_for

    full = arena(n=3000)
    names = full.systems
    items = [Item(id=f"c{k}", system_a=names[full.a[k]], system_b=names[full.b[k]], instruction="q",
                  output_a="x", output_b="y", label="a" if full.human[k] == 1 else "b") for k in range(full.n)]
    judged = [Judgment(item_id=f"c{k}", judge="sharp", label="a" if full.judges[k, 0] == 1 else "b")
              for k in range(full.n)]
    ids = [f"c{k}" for k in range(0, full.n, 10)]
    plan = plan_spend_for(items, judged, budget=400, judge_costs={"sharp": 0.01}, label_cost=0.5, human_ids=ids)
    assert plan.best is not None and plan.best.judges == ("sharp",)
    with pytest.raises(ConfigError, match="pilot"):
        plan_spend_for(items, judged, budget=400, judge_costs={"sharp": 0.01}, label_cost=0.5)
    queries = [Item(id="r1", qid="q1", docid="d1", query="q", passage="p", label=1)]
    with pytest.raises(ConfigError, match="relevance items is for the runs they rank: give runs"):
        plan_spend_for(queries, [], budget=10, judge_costs={}, label_cost=0.5, human_ids="all")
    with pytest.raises(ConfigError, match="runs scores TREC runs and needs relevance items"):
        plan_spend_for([Item(id="i", system_id="s", output="x", scores={"q": 1})], [], budget=10,
                       judge_costs={}, label_cost=0.5, human_ids="all", runs=str(tmp_path))
