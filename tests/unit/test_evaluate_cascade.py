"""The cascade of judges (evaluate/cascade.py, issue 46): thresholds by fixed-sequence binomial tests, the
guarantee on new items, agreement as confidence, and what bad input gets."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate.cascade import Stage, agreement_confidence, calibrate, cascade_judgments


def simulated(n=4000, seed=0):
    """A cheap judge right with probability 0.5 + 0.45 x its confidence, and a strong one right 85% of the time."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n).astype(float)
    confidence = rng.random(n)
    cheap = np.where(rng.random(n) < 0.5 + 0.45 * confidence, human, 1 - human)
    strong = np.where(rng.random(n) < 0.85, human, 1 - human)
    return human, [Stage("cheap", list(cheap), confidence), Stage("strong", list(strong), np.ones(n))]


def test_the_guarantee_holds_on_new_items_in_at_least_one_minus_delta_of_calibrations():
    human, stages = simulated()
    held, answered, cheap = [], [], []
    rng = np.random.default_rng(1)
    for _ in range(300):
        labelled = np.zeros(len(human), dtype=bool)
        labelled[rng.choice(len(human), 400, replace=False)] = True
        result = calibrate(stages, list(human), labelled, agreement=0.8, delta=0.1)
        new = ~labelled & (result.by >= 0)
        held.append(not new.any() or np.mean([result.verdict[i] == human[i] for i in np.flatnonzero(new)]) >= 0.8)
        answered.append(new.sum() / (~labelled).sum())
        cheap.append(result.stages[0].answered > 0)
    assert np.mean(held) >= 0.9
    # the cheap judge answers its confident items; the strong one (85%) the rest when the labels that reach it
    # show it above 80% (with ~100 of them, often not: those go to people)
    assert np.mean(answered) > 0.6 and np.mean(cheap) > 0.7  # its top 37 err 7%: four errors stop it (a quarter)


def test_a_stage_that_cannot_reach_the_agreement_answers_nothing():
    human, stages = simulated()
    labelled = np.ones(len(human), dtype=bool)
    result = calibrate(stages[1:], list(human), labelled, agreement=0.9, delta=0.1)  # 85% < 90%
    assert result.stages[0].answered == 0 and np.isinf(result.stages[0].threshold)
    assert result.to_people == len(human)


def test_agreement_confidence_is_the_share_of_judges_so_far_that_agree():
    first, second, third = ["a", "a", "b", None], ["a", "b", "b", "a"], ["a", "b", "a", "a"]
    found = agreement_confidence([first, second, third])
    assert list(found[0][:3]) == [1, 1, 1] and np.isnan(found[0][3])
    assert list(found[1]) == [1, 0.5, 1, 1]
    assert list(found[2]) == pytest.approx([1, 2 / 3, 1 / 3, 1])


def test_bad_input_is_named():
    human, stages = simulated(n=50)
    labelled = np.ones(50, dtype=bool)
    with pytest.raises(ConfigError, match="agreement 0.4: the agreement with people to guarantee, between 0.5"):
        calibrate(stages, list(human), labelled, agreement=0.4)
    with pytest.raises(ConfigError, match="delta 1.5"):
        calibrate(stages, list(human), labelled, agreement=0.8, delta=1.5)
    with pytest.raises(ConfigError, match="calibrated on human labels"):
        calibrate(stages, list(human), np.zeros(50, dtype=bool), agreement=0.8)


def test_from_comparison_items_and_judgments_with_a_confidence_field():
    items = [Item(id=f"c{k}", system_a="x", system_b="y", label="a" if k % 3 else "b") for k in range(300)]
    sure = [Judgment(item_id=i.id, label=i.label if k % 10 else "tie", judge="cheap",
                     extra={"confidence": 0.9 if k % 10 else 0.55}) for k, i in enumerate(items)]
    strong = [Judgment(item_id=i.id, label=i.label, judge="strong", extra={"confidence": 1.0}) for i in items]
    result, ids = cascade_judgments(items, {"cheap.jsonl": sure, "strong.jsonl": strong}, agreement=0.9,
                                    confidence="extra.confidence", human_ids=[i.id for i in items[::2]])
    assert ids == [i.id for i in items]
    assert result.stages[0].threshold == pytest.approx(0.9)  # its unsure ties go on to the strong judge
    # 15 labelled items reach the strong judge: too few to show 90% (a set must pass with errors half as
    # often as allowed: 48 at 90%), so its 30 go to people
    assert result.stages[0].answered == 270 and result.stages[1].answered == 0 and result.to_people == 30


def test_a_stage_on_another_scale_is_refused_naming_it():
    items = [Item(id=f"r{k}", qid="q", docid=f"d{k}", label=k % 4) for k in range(60)]
    grades = [Judgment(item_id=i.id, label=i.label, judge="grader") for i in items]
    tens = [Judgment(item_id=i.id, score=float(3 * i.label + 1), judge="tens") for i in items]
    with pytest.raises(ConfigError, match=r"tens.jsonl: judge 'tens' gives verdicts from 1 to 10, people's run from "
                                          r"0 to 3"):
        cascade_judgments(items, {"grades.jsonl": grades, "tens.jsonl": tens}, agreement=0.8, human_ids="all")
