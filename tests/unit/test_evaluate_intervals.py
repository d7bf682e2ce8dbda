"""One interval per system (evaluate/intervals.py): the rule that picks t or betting, its guard, and
what it does to the estimators, the differences between systems, rank sets and compare."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from judgelab.data import Item, Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate import draw, from_items, pairwise
from judgelab.evaluate.comparisons import comparisons
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.intervals import T_GUARD, T_MIN_LABELS, guarded_t, rule
from judgelab.evaluate.preferences import estimate
from judgelab.evaluate.rank_sets import rank_sets
from judgelab.evaluate.two_systems import compare_systems


def ratings(n_per_system=60, means=(2.0, 3.0, 4.6), seed=0, scale=(1.0, 5.0)):
    """Systems whose 1-5 ratings have the given means (the last near the top of the scale: skewed)."""
    rng = np.random.default_rng(seed)
    ids, systems, sources, judge, human = [], [], [], [], []
    for s, mean in enumerate(means):
        for k in range(n_per_system):
            y = float(np.clip(np.round(rng.normal(mean, 0.8)), 1, 5))
            ids.append(f"s{s}-{k}")
            systems.append(f"s{s}")
            sources.append(f"g{k}")
            human.append(y)
            judge.append(y + rng.normal(0, 0.7))
    return from_items(ids, systems, sources, judge, human, scale)


def labelled(problem, design):
    return problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))


def test_the_rule_takes_t_only_with_enough_labels_away_from_the_scale_ends():
    middle = np.array([2, 3, 3, 4, 2, 3, 4, 3, 2, 3.0])
    assert rule(middle, (1, 5), spread=True) == "t"
    assert rule(middle[:9], (1, 5), spread=True) == "betting"  # under T_MIN_LABELS
    near_top = np.array([5, 5, 5, 5, 5, 4, 5, 5, 5, 5.0])  # mean 4.9: 10 * 0.1 / 4 = 0.25 labels' worth of room
    assert rule(near_top, (1, 5), spread=True) == "betting"
    assert rule(middle, (1, 5), spread=False) == "betting"
    assert rule(middle, None, spread=True) == "t"  # no scale: only the t interval exists


def test_the_guard_spends_part_of_alpha():
    low, high = guarded_t(0.0, 1.0, 20, 0.95)
    assert high == pytest.approx(stats.t.ppf(1 - T_GUARD * 0.05 / 2, 20))
    assert high > stats.t.ppf(0.975, 20) and low == -high


def test_each_system_gets_its_own_construction_and_stays_on_the_scale():
    problem = ratings()
    design = draw(problem, 12 / 60, seed=1).design  # 12 labels per system
    for estimator in (human_only, corrected):
        est = estimator(labelled(problem, design), design, target="items")
        assert est.info["per_system"][:2] == ("t", "t") and est.info["per_system"][2] == "betting"
        assert np.all((est.ci >= 1) & (est.ci <= 5)) and np.all(est.ci[:, 1] > est.ci[:, 0])
        assert est.info["interval_rule"] == "auto"
    always = human_only(labelled(problem, design), design, target="items", intervals="betting")
    assert set(always.info["per_system"]) == {"betting"}
    unscaled = replace(labelled(problem, design), scale=None)
    with pytest.raises(ConfigError, match="scale"):
        human_only(unscaled, design, intervals="betting")
    assert set(human_only(unscaled, design).info["per_system"]) == {"t"}  # no scale: the t interval only


def test_per_system_coverage_holds_for_a_system_at_the_top_of_the_scale():
    """39 fives and one four: most samples of 10 hold only fives, where a t interval has no width (and so
    no interval); its own betting interval covers the true 4.975 every time it is asked."""
    rng = np.random.default_rng(0)
    human = np.concatenate([rng.permutation([5.0] * 39 + [4.0]), np.round(rng.uniform(1, 5, 40))])
    systems = ["top"] * 40 + ["mid"] * 40
    problem = from_items([f"i{k}" for k in range(80)], systems, [f"g{k % 40}" for k in range(80)],
                         human + rng.normal(0, 0.5, 80), human, (1.0, 5.0))
    truth = np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)
    top = problem.systems.index("top")
    hits = t_hits = 0
    for seed in range(200):
        design = draw(problem, 20, seed=seed).design  # 10 per system
        known = labelled(problem, design)
        est = human_only(known, design, target="items", seed=seed)
        old = human_only(known, design, target="items", intervals="t", variance="system", skewness_correction=False)
        hits += est.ci[top, 0] <= truth[top] <= est.ci[top, 1]
        t_hits += old.ci[top, 0] <= truth[top] <= old.ci[top, 1]  # NaN (no spread): no interval, not a cover
    assert hits == 200 and t_hits < 100


def test_differences_with_a_betting_system_come_from_the_curves():
    problem = ratings(means=(1.8, 2.2, 4.7))
    design = draw(problem, 10 / 60, seed=3).design  # 10 per system: betting for the first and the last
    est = human_only(labelled(problem, design), design, target="items")
    assert est.info["per_system"] == ("betting", "t", "betting")
    pairs = pairwise(est)
    assert pairs.p_value[0, 2] < 0.05 and pairs.p_value[0, 1] > 0.05  # far apart: separable; close: not
    assert pairs.low[2, 0] > 0 and -4 <= pairs.low[0, 1] and pairs.high[0, 1] <= 4  # on the scale's length
    assert pairs.low[0, 2] == pytest.approx(-pairs.high[2, 0])


def arena_like(n=2000, strengths=(1.0, 0.6, 0.2, -0.2, -0.6, -1.0), seed=0):
    rng = np.random.default_rng(seed)
    k = len(strengths)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(np.array(strengths)[a] - np.array(strengths)[b])))
    human = (rng.random(n) < p).astype(float)
    judge = np.where(rng.random(n) < 0.8, human, 1 - human)
    return [f"m{i}" for i in a], [f"m{i}" for i in b], judge, human


def few_labels_for(system: str, verdicts: list[float], seed: int = 1, strengths=(1.0, 0.6, 0.2, -0.2, -0.6, -1.0)):
    """600 labelled comparisons, except that ``system`` appears in labelled ones only with ``verdicts``
    (its preference in each)."""
    a, b, judge, human = arena_like(strengths=strengths)
    rng = np.random.default_rng(seed)
    labels = np.full(len(a), np.nan)
    chosen = rng.choice(len(a), 600, replace=False)
    labels[chosen] = human[chosen]
    mine = np.flatnonzero((np.array(a) == system) | (np.array(b) == system))
    labels[mine] = np.nan
    for k, verdict in zip(mine, verdicts, strict=False):
        labels[k] = verdict if a[k] == system else 1 - verdict
    return comparisons(a, b, judge, labels)


def test_a_strong_system_with_two_labelled_losses_is_not_placed_at_the_bottom():
    """The Arena finding: guanaco-33b, two labelled losses, entered the rank sets with zero variance
    (rank set 17-20, true rank 6). Here m0 is the strongest of six and lost both its labelled comparisons."""
    data = few_labels_for("m0", [0.0, 0.0])
    zero = data.systems.index("m0")
    est = estimate(data, "human", target="items")
    assert est.n_labelled[zero] == 2 and est.info["per_system"][zero] == "betting"
    assert est.ci[zero, 1] - est.ci[zero, 0] > 0.5  # two labels: a wide interval, not a zero-width one
    new = rank_sets(est)
    assert new.best[zero] == 1  # its true rank stays possible
    old = rank_sets(estimate(data, "human", target="items", system_intervals="t"))
    assert old.best[zero] > 1  # before: the zero-variance system was placed below others with confidence


def test_a_strength_without_an_interval_takes_the_whole_rank_range():
    data = few_labels_for("m2", [1.0, 0.0])  # one win, one loss: a finite strength from two labels
    two = data.systems.index("m2")
    est = estimate(data, "human", estimand="bradley-terry", target="items")
    assert est.n_labelled[two] == 2 and np.isnan(est.ci[two]).all() and "needs 10" in est.reason[two]
    assert np.isfinite(est.value[two])
    sets = rank_sets(est)
    assert (sets.best[two], sets.worst[two]) == (1, 6)


def test_win_rate_intervals_are_betting_with_few_labels_and_never_leave_the_scale():
    a, b, judge, human = arena_like(n=400)
    labels = np.where(np.arange(400) < 40, human, np.nan)  # 40 labels: about 13 sides per system
    est = estimate(comparisons(a, b, judge, labels), "corrected", target="items")
    assert "betting" in est.info["per_system"]
    assert np.all((est.ci >= 0) & (est.ci <= 1)) and np.all((est.value >= 0) & (est.value <= 1))


def pointwise_items(n_inputs=40, gap=-0.5, seed=0):
    rng = np.random.default_rng(seed)
    items, judgments = [], []
    for g in range(n_inputs):
        difficulty = rng.normal(0, 0.7)
        for system, shift in (("base", 0.0), ("cand", gap)):
            y = float(np.clip(np.round(3 + difficulty + shift + rng.normal(0, 0.6)), 1, 5))
            item = Item(id=f"{system}-{g}", system_id=system, group_id=f"g{g}", output="o", scale=(1, 5),
                        scores={"q": y})
            items.append(item)
            judgments.append(Judgment(item_id=item.id, score=y + rng.normal(0, 0.5)))
    return items, judgments


def test_compare_plans_labels_for_a_regression():
    items, judgments = pointwise_items()
    ids = [i.id for i in items if int(i.id.split("-")[1]) < 12]  # 12 inputs, both outputs labelled
    result = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids, aspect="q")
    assert result.paired and result.se is not None and result.se > 0
    plan = result.plan(0.3)
    assert plan["labels"] >= T_MIN_LABELS and plan["so_far"] == 12 and "80% power" in plan["text"]
    assert result.plan(0.6)["labels"] < plan["labels"]  # a larger regression needs fewer labels
    with pytest.raises(ConfigError, match="margin"):
        result.plan(0.0)
    judged_only = compare_systems(items, judgments, baseline="base", candidate="cand", aspect="q")
    with pytest.raises(ConfigError, match="pilot"):
        judged_only.plan(0.3)


def test_compare_on_comparisons_goes_via_the_others_when_the_pair_rarely_meets():
    a, b, judge, human = arena_like(n=3000)
    pairs = set(zip(a, b, strict=True))
    assert ("m0", "m1") in pairs or ("m1", "m0") in pairs
    items, judgments = [], []
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        labels = {1.0: "a", 0.0: "b"}
        items.append(Item(id=f"c{k}", system_a=x, system_b=y, output_a="x", output_b="y", label=labels[human[k]]))
        judgments.append(Judgment(item_id=f"c{k}", label=labels[judge[k]]))
    ids = [f"c{k}" for k in range(200)]  # 200 labels among 15 pairs: about 13 per pair, 67 per system
    result = compare_systems(items, judgments, baseline="m0", candidate="m1", human_ids=ids)
    assert result.basis == "via others" and "via the others" in result.pairing_reason
    assert -1 <= result.low <= result.difference <= result.high <= 1
    head = compare_systems(items, judgments, baseline="m0", candidate="m1", human_ids=ids, pairing="paired")
    assert head.basis == "head-to-head" and -0.5 <= head.low <= head.high <= 0.5
