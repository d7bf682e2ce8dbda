"""compare_systems on comparisons between systems (system_a/system_b, verdicts a/b/tie): head-to-head
win rates, the difference via other systems where the two never meet, and the gate's refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import JudgelabError
from judgelab.evaluate.preferences import rank_systems
from judgelab.evaluate.two_systems import compare_systems
from judgelab.testing import assert_not_worse

VERDICT = {1.0: "a", 0.5: "tie", 0.0: "b"}
STRENGTH = {"base": 0.5, "cand": 0.0, "x": 0.2, "y": -0.3}


def simulate(pairs, n_each=150, *, seed=0, strength=STRENGTH, first_bias=1.0, judge_noise=0.3):
    """``n_each`` comparisons per system pair (the order shown drawn at random), the human vote from
    Bradley-Terry strengths with ties, a judge that is right unless noisy and then favours the first
    shown. Items carry the human vote as their label."""
    rng = np.random.default_rng(seed)
    items, judgments = [], []
    for first, second in pairs:
        for k in range(n_each):
            a, b = (first, second) if rng.random() < 0.5 else (second, first)
            human = 0.5 if rng.random() < 0.1 else float(rng.random() < expit(strength[a] - strength[b]))
            noisy = rng.random() < judge_noise
            judge = float(rng.random() < expit(first_bias)) if noisy else human
            item_id = f"{first}-{second}-{k}"
            items.append(Item(id=item_id, system_a=a, system_b=b, label=VERDICT[human]))
            judgments.append(Judgment(item_id=item_id, label=VERDICT[judge]))
    return items, judgments


def labelled_ids(items, fraction, seed=1):
    rng = np.random.default_rng(seed)
    return [item.id for item in items if rng.random() < fraction]


def win_rate(items, verdicts, system, opponent):
    """The system's win rate against the opponent over their comparisons, ties half, counted by hand."""
    scores = []
    for item in items:
        if {item.system_a, item.system_b} == {system, opponent} and item.id in verdicts:
            preference = {"a": 1.0, "tie": 0.5, "b": 0.0}[verdicts[item.id]]
            scores.append(preference if item.system_a == system else 1 - preference)
    return np.mean(scores), len(scores)


def test_head_to_head_is_the_win_rate_minus_one_half_ignoring_other_opponents():
    items, judgments = simulate([("base", "cand"), ("base", "x"), ("cand", "x")])
    judge = compare_systems(items, judgments, baseline="base", candidate="cand")
    expected, n = win_rate(items, {j.item_id: j.label for j in judgments}, "cand", "base")
    assert judge.basis == "head-to-head" and judge.estimator == "judge" and judge.n == n == 150
    assert judge.difference == pytest.approx(expected - 0.5)
    assert judge.low < judge.difference < judge.high and "judge-only has no bias correction" in judge.warnings[0]
    ids = labelled_ids(items, 0.5)
    human = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids, estimator="human")
    own, n_labelled = win_rate(items, {i.id: i.label for i in items if i.id in set(ids)}, "cand", "base")
    assert human.difference == pytest.approx(own - 0.5) and human.n_labelled == n_labelled
    # swapping the roles mirrors the difference and its interval
    mirrored = compare_systems(items, judgments, baseline="cand", candidate="base", human_ids=ids, estimator="human")
    assert mirrored.difference == pytest.approx(-human.difference)
    assert (mirrored.low, mirrored.high) == pytest.approx((-human.high, -human.low))


def test_corrected_is_preferences_ppi_on_the_head_to_head_comparisons():
    items, judgments = simulate([("base", "cand"), ("base", "x")], seed=3)
    ids = labelled_ids(items, 0.3, seed=4)
    result = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids)
    head = [k for k, item in enumerate(items) if {item.system_a, item.system_b} == {"base", "cand"}]
    chosen = set(ids)
    report = rank_systems([items[k].system_a for k in head], [items[k].system_b for k in head],
                          [judgments[k].label for k in head],
                          [items[k].label if items[k].id in chosen else None for k in head],
                          estimand="baseline-win-rate", baseline="base")
    corrected = report.estimates["corrected"]
    c = corrected.systems.index("cand")
    assert result.estimator == "corrected" and "prediction-powered" in result.estimator_reason
    assert result.difference == pytest.approx(corrected.value[c] - 0.5)
    assert (result.low, result.high) == pytest.approx(tuple(corrected.ci[c] - 0.5))


def test_decision_at_the_margin():
    items, judgments = simulate([("base", "cand")], n_each=400, seed=5)
    ids = labelled_ids(items, 0.5, seed=6)
    first = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids)
    assert first.decision == "worse" and first.high < 0 and first.summary().startswith(
        "win rate of cand against base - 1/2 = -0.")
    at = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids, margin=-first.high)
    assert at.high == first.high and at.decision == "not worse"
    inside = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids,
                             margin=-first.high * 0.99)
    assert inside.decision == "worse"
    other_way = compare_systems(items, judgments, baseline="cand", candidate="base", human_ids=ids)
    assert other_way.decision == "better" and other_way.passed
    # a non-inferiority gate: the margin just inside the interval, so it still holds worse differences
    strict = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids,
                             margin=-(first.low + first.high) / 2, fail_undecided=True)
    assert strict.decision == "undecided" and not strict.passed and any("undecided" in w for w in strict.warnings)
    clear = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids,
                            margin=-first.low * 1.01, fail_undecided=True)
    assert clear.decision == "not worse" and clear.passed


def test_without_head_to_head_the_win_probabilities_are_compared_via_others():
    items, judgments = simulate([("base", "x"), ("base", "y"), ("cand", "x"), ("cand", "y")], seed=7)
    ids = labelled_ids(items, 0.4, seed=8)
    result = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids)
    report = rank_systems([i.system_a for i in items], [i.system_b for i in items], [j.label for j in judgments],
                          [i.label if i.id in set(ids) else None for i in items])
    pairs = report.pairs["corrected"]
    c, b = report.systems.index("cand"), report.systems.index("base")
    assert result.basis == "via others" and not result.paired
    assert (result.difference, result.low, result.high) == pytest.approx(
        (pairs.difference[c, b], pairs.low[c, b], pairs.high[c, b]))
    assert result.n == len(items) and result.measure == "win probability of cand - that of base"
    assert "cand and base meet in 0 comparison(s), 0 labelled, too few for head-to-head" in result.pairing_reason
    assert "via others" in result.summary() and "| comparisons | via others:" in result.markdown()


def test_pairing_chooses_head_to_head_or_via_others_on_request():
    items, judgments = simulate([("base", "cand"), ("base", "x"), ("cand", "x")], seed=9)
    via = compare_systems(items, judgments, baseline="base", candidate="cand", pairing="unpaired")
    assert via.basis == "via others" and via.pairing_reason.startswith("chosen with --pairing unpaired")
    apart, apart_judgments = simulate([("base", "x"), ("cand", "x")], seed=10)
    with pytest.raises(JudgelabError, match=r"pairing paired \(head-to-head\): cand and base meet in 0"):
        compare_systems(apart, apart_judgments, baseline="base", candidate="cand", pairing="paired")


@pytest.mark.parametrize(("options", "message"), [
    ({"baseline": "base", "candidate": "y"},
     "'y' and 'base' never meet, directly or through other systems: the comparisons split them into separate "
     "groups ({base, cand} and {x, y})"),
    ({"baseline": "base", "candidate": "nope"}, "system 'nope' is not in the data (systems come from each item's system_id, or system_a/system_b of comparisons; here: base, cand, x, y)"),
    ({"baseline": "base", "candidate": "cand", "higher_is_better": False}, "higher_is_better=False is for scores"),
    ({"baseline": "base", "candidate": "cand", "estimator": "human"}, "estimator human needs human labels"),
    ({"baseline": "base", "candidate": "cand", "human_ids": ["base-cand-0"]},
     "the human estimate of win probability of cand - that of base has no interval: 1 labelled comparison(s): an "
     "interval needs 2 (cand and base meet in 20 comparison(s), 1 labelled, too few for head-to-head)"),
    ({"baseline": "base", "candidate": "cand", "human_ids": ["zzz"]}, "not comparisons of the data: 'zzz'"),
])
def test_bad_input_is_one_clear_error(options, message):
    items, judgments = simulate([("base", "cand"), ("x", "y")], n_each=20, seed=11)
    if "estimator" in options or "human_ids" in options and options["human_ids"] != ["zzz"]:
        options = {"estimator": "human", **options}
    with pytest.raises(JudgelabError) as caught:
        compare_systems(items, judgments, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_items_without_systems_are_refused():
    items = [Item(id="p1", output_a="x", output_b="y", instruction="i", label="a")]
    with pytest.raises(JudgelabError, match="compare two outputs, not systems"):
        compare_systems(items, [], baseline="a", candidate="b")


def test_assert_not_worse_on_comparisons():
    items, judgments = simulate([("base", "cand")], n_each=400, seed=12)
    with pytest.raises(AssertionError) as caught:
        assert_not_worse(items, judgments, baseline="base", candidate="cand", human_ids="all")
    text = str(caught.value)
    assert text.startswith("win rate of cand against base - 1/2 = -0.") and "head-to-head" in text
    assert assert_not_worse(items, judgments, baseline="cand", candidate="base", human_ids="all").decision == "better"


def test_via_others_weights_a_sample_stratified_by_pair_as_evaluate_does():
    """A pair-stratified sample labels some pairs more densely; via others, each labelled comparison
    counts by its pair's inclusion probability, exactly as `evaluate` weights the same sample."""
    from judgelab.evaluate.comparison_items import evaluate_comparisons
    from judgelab.evaluate.sample_file import SampleFile

    items, judgments = simulate([("base", "x"), ("base", "y"), ("cand", "x"), ("cand", "y")], seed=11)
    rng = np.random.default_rng(12)
    dense = {"base|x", "cand|y"}  # 60% of these pairs' comparisons labelled, 10% of the others
    ids = [item.id for item in items
           if rng.random() < (0.6 if f"{item.id.split('-')[0]}|{item.id.split('-')[1]}" in dense else 0.1)]
    sample = SampleFile(tuple(ids), tuple(0.5 for _ in ids), "stratified", {"strata": "pair"})
    weighted = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids, sample=sample)
    plain = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids=ids)
    report = evaluate_comparisons(items, judgments, human_ids=ids, sample=sample)
    c, b = report.systems.index("cand"), report.systems.index("base")
    pairs = report.pairs["corrected"]
    assert weighted.basis == "via others"
    assert (weighted.difference, weighted.low, weighted.high) == pytest.approx(
        (pairs.difference[c, b], pairs.low[c, b], pairs.high[c, b]))
    assert weighted.difference != pytest.approx(plain.difference)  # the unweighted answer was another one


def one_sided(n, *, cand_wins=0, ties=0, judge_spread=True):
    """``n`` comparisons of cand (shown first) with base, every one labelled: ``cand_wins`` won by cand,
    ``ties`` tied, the rest lost. The judge says base wins each, but sees a tie in every other one
    with ``judge_spread`` (its verdicts have spread where the labels have none)."""
    outcomes = ["a"] * cand_wins + ["tie"] * ties + ["b"] * (n - cand_wins - ties)
    items = [Item(id=f"c{k}", system_a="cand", system_b="base", label=label) for k, label in enumerate(outcomes)]
    judgments = [Judgment(item_id=f"c{k}", label="tie" if judge_spread and k % 2 else "b") for k in range(n)]
    return items, judgments


@pytest.mark.parametrize("estimator", ["human", "corrected", "judge"])
def test_a_candidate_that_lost_every_comparison_fails_with_an_exact_interval(estimator):
    """All losses leave the t interval without width; the gate decides with Clopper-Pearson's."""
    items, judgments = one_sided(8, judge_spread=estimator != "judge")
    result = compare_systems(items, judgments, baseline="base", candidate="cand", human_ids="all",
                             estimator=estimator)
    upper = 1 - 0.025 ** (1 / 8)  # Clopper-Pearson's upper bound with 0 successes in 8 at 95%
    assert result.difference == -0.5 and result.low == pytest.approx(-0.5)
    assert result.high == pytest.approx(upper - 0.5) and result.decision == "worse" and not result.passed
    assert result.interval == "Clopper-Pearson" and result.to_dict()["interval"] == "Clopper-Pearson"
    who = "judged" if estimator == "judge" else "labelled"
    assert f"its 8 {who} verdicts are all losses of cand: no spread for a t interval" in result.pairing_reason
    assert "(95% Clopper-Pearson interval," in result.summary()
    assert "Clopper-Pearson interval)" in result.markdown()
    mirrored = compare_systems(items, judgments, baseline="cand", candidate="base", human_ids="all",
                               estimator=estimator)
    assert (mirrored.low, mirrored.high) == pytest.approx((0.5 - upper, 0.5)) and mirrored.decision == "better"


def test_the_exact_interval_needs_six_losses_to_fail_at_95_percent():
    """1 - 0.025^(1/n) < 1/2 from n = 6: five straight losses are not yet evidence at this level."""
    five = compare_systems(*one_sided(5), baseline="base", candidate="cand", human_ids="all")
    six = compare_systems(*one_sided(6), baseline="base", candidate="cand", human_ids="all")
    assert five.decision == "not worse" and five.high == pytest.approx(1 - 0.025 ** 0.2 - 0.5)
    assert six.decision == "worse"


def test_ties_count_against_the_candidate_for_the_lower_bound_and_for_it_for_the_upper():
    from scipy.stats import binomtest

    ties = compare_systems(*one_sided(10, ties=10), baseline="base", candidate="cand",
                           human_ids="all", estimator="human")
    assert ties.difference == 0 and (ties.low, ties.high) == pytest.approx((-0.5, 0.5))
    assert "all ties of cand" in ties.pairing_reason and ties.decision == "not worse"
    # with spread (a win among losses) the usual t interval is back
    spread = compare_systems(*one_sided(10, cand_wins=1), baseline="base", candidate="cand",
                             human_ids="all", estimator="human")
    assert spread.interval is None and "Clopper-Pearson" not in spread.summary()
    assert spread.high != pytest.approx(binomtest(1, 10).proportion_ci(method="exact").high - 0.5)
