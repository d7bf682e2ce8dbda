"""Several judges in one estimate (issue 46): which verdicts are whose (evaluate/panel.py), the stacked
weights (evaluate/calibrate.py), and what the panel's corrected intervals are worth and whether they hold."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate import evaluate, from_items, stratified_design
from judgelab.evaluate.calibrate import stack_weights
from judgelab.evaluate.estimators import corrected
from judgelab.evaluate.panel import panel


def verdicts(judge: str | None, scores: dict[str, float]) -> list[Judgment]:
    return [Judgment(item_id=i, score=s, judge=judge) for i, s in scores.items()]


def test_a_mapping_a_list_of_lists_and_names_picked_from_one_list_give_the_same_panel():
    a, b = verdicts("a", {"i1": 1.0}), verdicts("b", {"i1": 2.0})
    by_mapping = panel({"a.jsonl": a, "b.jsonl": b}, None, None)
    by_list = panel([a, b], None, None)
    by_names = panel(a + b, ["a", "b"], None)
    assert [p.name for p in by_mapping] == [p.name for p in by_list] == [p.name for p in by_names] == ["a", "b"]
    assert by_mapping[0].where == "a.jsonl"
    unnamed = panel({"x.jsonl": verdicts(None, {"i1": 1.0}), "y.jsonl": verdicts(None, {"i1": 2.0})}, None, None)
    assert [p.name for p in unnamed] == ["x.jsonl", "y.jsonl"]  # no judge field: named by their files


def test_a_file_of_several_judges_needs_judge_and_one_judge_in_two_files_is_refused():
    mixed = verdicts("a", {"i1": 1.0}) + verdicts("b", {"i2": 1.0})
    with pytest.raises(ConfigError, match=r"mixed.jsonl: .*2 judges \(a, b\); choose one with judge"):
        panel({"mixed.jsonl": mixed, "c.jsonl": verdicts("c", {"i1": 1.0})}, None, None)
    with pytest.raises(ConfigError, match=r"two sets of verdicts for judge 'a' \(one.jsonl and two.jsonl\)"):
        panel({"one.jsonl": verdicts("a", {"i1": 1.0}), "two.jsonl": verdicts("a", {"i1": 2.0})}, None, None)
    with pytest.raises(ConfigError, match="no judgment from judge 'z'"):
        panel(mixed, ["a", "z"], None)


def synthetic(n_per_system=60, systems=4, seed=0, judges=("signal", "noise")):
    """Human = system effect + item quality; 'signal' sees the quality, 'noise' sees nothing, 'half1'/'half2'
    each see a different half of it (so together they see it all)."""
    rng = np.random.default_rng(seed)
    system = np.repeat(np.arange(systems), n_per_system)
    first, second = rng.normal(0, 1, len(system)), rng.normal(0, 1, len(system))
    human = system * 0.3 + first + second
    seen = {"signal": first + second + rng.normal(0, 0.5, len(system)), "noise": rng.normal(0, 1, len(system)),
            "half1": first + rng.normal(0, 0.3, len(system)), "half2": 3 * second + rng.normal(0, 0.9, len(system))}
    ids = [f"i{k}" for k in range(len(system))]
    problem = from_items(ids, system.astype(str), ids, seen[judges[0]], human)
    return problem.with_judges(np.stack([_placed(problem, seen[j]) for j in judges], axis=-1), list(judges))


def _placed(problem, values):
    out = np.full(problem.judge.shape, np.nan)
    out[np.arange(problem.n_units), problem.strata] = values
    return out


def one_judge(problem, j):
    from dataclasses import replace

    return replace(problem, judge=problem.judges[..., j], judges=None, judge_names=())


def widths(problem, budget=0.5, draws=30):
    """Mean corrected width per judge alone and for the panel, over the same label draws."""
    out = {"panel": []} | {name: [] for name in problem.judge_names}
    rng = np.random.default_rng(1)
    for _ in range(draws):
        labelled = rng.random(problem.n_units) < budget
        design = stratified_design(problem, labelled)
        known = problem.with_human(np.where(labelled[:, None], problem.human, np.nan))
        found = corrected(known, design, calibration="stack", intervals="t")
        out["panel"].append(np.mean(found.ci[:, 1] - found.ci[:, 0]))
        for j, name in enumerate(problem.judge_names):
            alone = corrected(one_judge(known, j), design, calibration="linear", intervals="t")
            out[name].append(np.mean(alone.ci[:, 1] - alone.ci[:, 0]))
    return {k: float(np.mean(v)) for k, v in out.items()}


def test_a_judge_that_adds_nothing_gets_a_weight_near_zero_and_costs_little():
    problem = synthetic()
    units, systems = np.nonzero(problem.present)
    _, beta = stack_weights(problem.judges[units, systems], problem.human[units, systems], np.ones(len(units)),
                            systems)
    assert abs(beta[1]) < 0.1 * abs(beta[0])
    found = widths(problem)
    assert found["panel"] <= 1.02 * found["signal"] and found["signal"] < 0.8 * found["noise"]


def test_two_judges_that_each_see_half_are_worth_more_together():
    found = widths(synthetic(judges=("half1", "half2")))
    assert found["panel"] < 0.85 * min(found["half1"], found["half2"])


def test_the_panel_interval_holds_for_each_system():
    problem = synthetic(n_per_system=40, judges=("half1", "half2", "noise"))
    truth = np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)
    rng = np.random.default_rng(2)
    hits = []
    for _ in range(600):
        labelled = np.zeros(problem.n_units, dtype=bool)
        for s in range(len(problem.systems)):
            labelled[rng.choice(np.flatnonzero(problem.present[:, s]), 15, replace=False)] = True
        design = stratified_design(problem, labelled)
        known = problem.with_human(np.where(labelled[:, None], problem.human, np.nan))
        found = corrected(known, design, calibration="stack", target="items", intervals="t")
        hits.append((found.ci[:, 0] <= truth) & (truth <= found.ci[:, 1]))
    assert np.mean(hits, axis=0).min() >= 0.93


def items_with_two_judges():
    items = [Item(id=f"s{s}-{k}", system_id=f"s{s}", group_id=f"q{k}", source=f"q{k}", output="x",
                  scores={"quality": float((k + s) % 5 + 1)}, scale=(1, 5)) for s in range(3) for k in range(30)]
    good = verdicts("good", {i.id: i.scores["quality"] + 0.5 * ((hash(i.id) % 3) - 1) for i in items})
    partial = verdicts("partial", {i.id: i.scores["quality"] for i in items[::3]})  # a third of the items
    return items, good, partial


def test_evaluate_reports_each_judge_its_weight_worth_and_coverage():
    items, good, partial = items_with_two_judges()
    report = evaluate(items, {"good.jsonl": good, "partial.jsonl": partial}, aspect="quality",
                      human_ids=[i.id for i in items[::2]])
    assert report.coverage["judges"]["partial"]["judged"] == 30 and report.coverage["judges"]["good"]["judged"] == 90
    assert set(report.judges) == {"good", "partial"}
    for name in ("good", "partial"):
        assert {"weight", "alone", "added", "per_system"} <= set(report.judges[name])
    assert report.to_dict()["judges"]["good"]["weight"] is not None
    one = evaluate(items, good, aspect="quality", human_ids=[i.id for i in items[::2]])
    assert one.judges is None and "judges" not in one.coverage


def test_identity_or_isotonic_calibration_cannot_combine_judges():
    items, good, partial = items_with_two_judges()
    with pytest.raises(ConfigError, match="maps one judge; several judges are combined by 'stack'"):
        evaluate(items, [good, partial], aspect="quality", human_ids="all", calibration="isotonic")


def test_a_soft_verdict_is_read_as_the_judges_preference():
    from judgelab.evaluate.comparison_file import judge_preference as _judge_preference

    soft = Judgment(item_id="c", label="a", extra={"preference": 0.62, "verdicts": {"original": "a", "swapped": "b"}})
    plain = Judgment(item_id="c", label="tie", extra={"verdicts": {"original": "a", "swapped": "b"}})
    assert _judge_preference(soft) == 0.62 and _judge_preference(plain) == 0.5
