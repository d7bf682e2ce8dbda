"""Spend plans over TREC runs (a labelled query serves every run; judges and people are paid per
query-document pair), and a plan's draw: the ids people label to carry it out (``SpendPlan.draw``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from judgelab.api import verbs
from judgelab.data import Item, Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate.estimators import corrected
from judgelab.evaluate.sample_file import read_sample
from judgelab.evaluate.sampling import allocate
from judgelab.evaluate.spend import plan_spend_for

QUERIES, DOCS, RUNS = 120, 20, 5


def trec(folder: Path, seed: int = 0):
    """Made-up relevance items (24 queries, 8 judged documents each, graded 0-3 by people), two judges ('sharp'
    gives 4 in 5 documents the human grade, the rest one off; 'blind' grades at random) and five runs in TREC run format,
    each ranking a query's documents by relevance blurred by its own noise (a worse run: more noise)."""
    rng = np.random.default_rng(seed)
    items, judged, truth = [], [], {}
    for q in range(QUERIES):
        easy = rng.beta(1, 1)  # queries differ in how many relevant documents they have: the runs' nDCG with them
        for d in range(DOCS):
            label = int(rng.binomial(3, easy))
            item_id = f"q{q}-d{d}"
            truth[(q, d)] = label
            items.append(Item(id=item_id, qid=f"q{q}", docid=f"d{d}", query="a question", passage="a passage",
                              label=label))
            near = int(np.clip(label + rng.choice([-1, 0, 0, 0, 0, 0, 0, 0, 0, 1]), 0, 3))
            judged.append(Judgment(item_id=item_id, judge="sharp", label=str(near), score=near))
            blind = int(rng.integers(0, 4))
            judged.append(Judgment(item_id=item_id, judge="blind", label=str(blind), score=blind))
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(RUNS):
        lines = []
        for q in range(QUERIES):
            noisy = [truth[(q, d)] + rng.normal(0, 1 + r) for d in range(DOCS)]
            for rank, d in enumerate(np.argsort(noisy)[::-1]):
                lines.append(f"q{q} Q0 d{d} {rank + 1} {DOCS - rank} run{r}\n")
        (folder / f"run{r}.run").write_text("".join(lines))
    return items, judged, folder


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return trec(tmp_path_factory.mktemp("trec") / "runs")


PILOT = [f"q{q}" for q in range(0, QUERIES, 10)]  # 12 labelled queries
BOTH = ["sharp", "blind"]


def test_a_labelled_query_serves_every_run_and_costs_its_pairs(data):
    items, judged, runs = data
    plan = plan_spend_for(items, judged, budget=1500, judge_costs={"sharp": 0.01, "blind": 0.01}, label_cost=0.5,
                          human_ids=PILOT, runs=runs, judge=BOTH)
    assert plan.unit == "queries" and len(plan.systems) == RUNS and set(plan.pilot) == set(PILOT)
    pairs = QUERIES * DOCS
    for option in plan.options:
        # a judge runs once per query-document pair; a labelled query costs its 8 documents' labels
        assert option.judge_cost == pytest.approx(0.01 * pairs * len(option.judges))
        assert option.label_cost == pytest.approx(option.labels * DOCS * 0.5)
        assert option.human_labels == option.labels * DOCS and option.cost <= 1500 + 1e-9
        # 1,452-1,500 buys 145-150 queries' labels; there are 120: every plan labels them all, and with every
        # query labelled each run's estimate is its labels' own, whatever the judges (as evaluate takes it)
        assert option.labels == QUERIES and option.per_system == plan.options[0].per_system
    assert plan.least_spend == pytest.approx(10 * DOCS * 0.5)
    assert plan.best.judges == ()  # of plans as narrow, the one with the fewest judges


def test_runs_buy_the_judge_that_predicts_the_labels_and_its_width_is_the_width_the_plan_gets(data):
    items, judged, runs = data
    costs = {"sharp": 0.001, "blind": 0.001}
    plan = plan_spend_for(items, judged, budget=100, judge_costs=costs, label_cost=0.25, human_ids=PILOT, runs=runs,
                          judge=BOTH)
    assert plan.best.judges == ("sharp",) and plan.best.labels == 19  # (100 - 2.4) / (20 x 0.25) = 19.5 queries
    humans = next(o for o in plan.options if not o.judges)
    assert humans.labels == 20 and plan.best.width < 0.8 * humans.width
    blind = next(o for o in plan.options if o.judges == ("blind",))
    assert blind.width >= humans.width  # a judge that predicts nothing only costs labels
    # the width carried out: from a pilot of 30 queries (from 12, the ratio ranged 0.84-1.15 over seven pilots:
    # a dozen queries' residual variance is that noisy)
    plan = plan_spend_for(items, judged, budget=250, judge_costs=costs, label_cost=0.25,
                          human_ids=[f"q{q}" for q in range(1, QUERIES, 4)], runs=runs, judge=BOTH)
    assert plan.best.judges == ("sharp",) and plan.best.labels == 49
    from judgelab.evaluate import draw
    from judgelab.evaluate.systems import _query_problem

    problem = _query_problem(items, [j for j in judged if j.judge == "sharp"], None, None, "all", runs, "nDCG@10",
                             "condense").problem
    widths = []
    for k in range(40):  # the plan carried out: fresh random queries, the corrected estimate of every run
        design = draw(problem, plan.best.labels, seed=100 + k).design
        known = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        est = corrected(known, design, seed=k)
        widths.append(np.mean(est.ci[:, 1] - est.ci[:, 0]))
    assert np.mean(widths) == pytest.approx(plan.best.width, rel=0.15)


def test_runs_refuse_a_pilot_without_a_labelled_query_missing_runs_and_costs_for_judges_not_given(data):
    items, judged, runs = data
    costs = {"sharp": 0.01, "blind": 0.01}
    with pytest.raises(ConfigError, match="no query of the runs has a human label"):
        plan_spend_for(items, judged, budget=100, judge_costs=costs, label_cost=0.5, human_ids=[], runs=runs, judge=BOTH)
    with pytest.raises(ConfigError, match="relevance items is for the runs they rank: give runs"):
        plan_spend_for(items, judged, budget=100, judge_costs=costs, label_cost=0.5, human_ids=PILOT, judge=BOTH)
    with pytest.raises(ConfigError, match="judge_costs gpt=1: matches no judge"):
        plan_spend_for(items, judged, budget=100, judge_costs={**costs, "gpt": 1.0}, label_cost=0.5,
                       human_ids=PILOT, runs=runs, judge=BOTH)
    with pytest.raises(ConfigError, match="no cost for judge blind"):
        plan_spend_for(items, judged, budget=100, judge_costs={"sharp": 0.01}, label_cost=0.5, human_ids=PILOT,
                       runs=runs, judge=BOTH)


def test_a_budget_below_one_label_buys_no_plan(data):
    items, judged, runs = data
    with pytest.raises(ConfigError, match=r"budget 0.3 buys no plan with 10 labelled queries \(a query's pairs at "
                                          r"label_cost 0.5: at least 100 in labels alone\)"):
        verbs.plan_spend(items, judged, 0.3, judge_costs={"sharp": 0, "blind": 0}, label_cost=0.5, human_ids=PILOT,
                         runs=runs, judge=BOTH)
    pointwise = [Item(id=f"i{k}", system_id="ab"[k % 2], output="x", scores={"q": 1 + k % 5}) for k in range(60)]
    scored = [Judgment(item_id=f"i{k}", judge="j", score=float(1 + k % 5)) for k in range(60)]
    with pytest.raises(ConfigError, match=r"budget 0.3 buys no plan with 10 labels a system \(2 systems: at least 10"):
        verbs.plan_spend(pointwise, scored, 0.3, judge_costs={"j": 0}, label_cost=0.5, human_ids="all")


def test_the_draw_of_runs_lists_the_pairs_of_new_queries_only(data, tmp_path):
    items, judged, runs = data
    plan = verbs.plan_spend(items, judged, 100, judge_costs={"sharp": 0.001, "blind": 0.001}, label_cost=0.25,
                            human_ids=PILOT, runs=runs, judge=BOTH)
    drawn = plan.draw(seed=1)
    queries = {unit.split("-")[0] for unit in drawn.ids}
    assert len(queries) == plan.best.labels - len(PILOT) and not queries & set(PILOT)
    assert len(drawn.ids) == DOCS * len(queries) and set(drawn.strata) == queries
    assert drawn.header["units"] == "pairs" and drawn.header["pilot"] == len(PILOT)
    assert np.allclose(drawn.probabilities, plan.best.labels / QUERIES)
    assert drawn.ids != plan.draw(seed=2).ids and drawn.ids == plan.draw(seed=1).ids
    written = read_sample(drawn.write(tmp_path / "draw.txt"))
    assert written.ids == drawn.ids


def test_the_draw_of_items_tops_each_systems_pilot_up_to_its_share(tmp_path):
    rng = np.random.default_rng(0)
    items, judged = [], []
    for s, size in enumerate((50, 70, 90)):
        for k in range(size):
            human = int(rng.integers(1, 6))
            items.append(Item(id=f"s{s}-{k}", system_id=f"s{s}", output="x", scores={"q": human}))
            judged.append(Judgment(item_id=f"s{s}-{k}", judge="j", score=float(human)))
    pilot = [f"s{s}-{k}" for s, size in enumerate((50, 70, 90)) for k in range(0, size, 6)]
    plan = verbs.plan_spend(items, judged, 60, judge_costs={"j": 0.01}, label_cost=0.5, human_ids=pilot)
    drawn = plan.draw(seed=0)
    assert not set(drawn.ids) & set(pilot)
    kept = Counter(unit.split("-")[0] for unit in pilot)
    share = dict(zip(("s0", "s1", "s2"), allocate(np.array([50, 70, 90]), plan.best.labels), strict=True))
    assert {s: kept[s] + drawn.sizes.get(s, 0) for s in share} == share
    assert drawn.header["labelled"] == plan.best.labels and len(drawn.ids) == plan.best.labels - len(pilot)
