"""Label until decided (evaluate/sequential.py): confidence sequences read in the order labels were
given, the "which system is best" decision, and compare --sequential."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data import Item, Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate import evaluate
from judgelab.evaluate.sequential import decide_best, per_system_level
from judgelab.evaluate.two_systems import compare_systems


def items(means=(2.0, 3.0, 4.0), n=60, seed=0):
    rng = np.random.default_rng(seed)
    out, judged = [], []
    for s, mean in enumerate(means):
        for k in range(n):
            y = float(np.clip(np.round(rng.normal(mean, 0.6)), 1, 5))
            item = Item(id=f"s{s}-{k}", system_id=f"s{s}", group_id=f"g{k}", output="o", scale=(1, 5),
                        scores={"q": y})
            out.append(item)
            judged.append(Judgment(item_id=item.id, score=y + float(rng.normal(0, 0.8))))
    return out, judged


def test_best_is_decided_only_when_the_leader_clears_every_other_system():
    systems = ("a", "b", "c")
    value = np.array([4.0, 3.0, 2.0])
    clear = np.array([[3.6, 4.4], [2.5, 3.5], [1.5, 2.5]])
    decision = decide_best(systems, value, clear, np.array([20, 20, 20]), 0.98)
    assert decision.decided and decision.answer.startswith("a is best")
    overlapping = np.array([[3.2, 4.8], [2.5, 3.5], [1.5, 2.5]])
    open_question = decide_best(systems, value, overlapping, np.array([20, 20, 20]), 0.98)
    assert not open_question.decided and "a leads" in open_question.answer
    assert open_question.more_per_system >= 1
    assert per_system_level(0.95, 5) == pytest.approx(0.99)


def test_evaluate_until_decided_with_many_labels_and_not_with_few():
    data, judged = items()
    many = evaluate(data, judged, aspect="q", human_ids=[i.id for i in data if int(i.id.split("-")[1]) < 40],
                    until_decided="best")
    assert many.decision["decided"] and many.decision["answer"].startswith("s2 is best")
    assert many.decision["confidence_per_system"] == pytest.approx(1 - 0.05 / 3)
    few = evaluate(data, judged, aspect="q", human_ids=[i.id for i in data if int(i.id.split("-")[1]) < 3],
                   until_decided="best")
    assert not few.decision["decided"]
    with pytest.raises(ConfigError, match="until_decided 'worst'"):
        evaluate(data, judged, aspect="q", human_ids="all", until_decided="worst")
    with pytest.raises(ConfigError, match="labels so far"):
        evaluate(data, judged, aspect="q", until_decided="best")


def test_a_sequence_reads_the_labels_in_the_order_given():
    """The same labels in another order give another confidence sequence: bets are placed in turn."""
    data, judged = items(means=(3.0, 3.5), n=40)
    chosen = [i.id for i in data if int(i.id.split("-")[1]) < 15]
    forward = evaluate(data, judged, aspect="q", human_ids=chosen, intervals="sequence", target="items")
    backward = evaluate(data, judged, aspect="q", human_ids=chosen[::-1], intervals="sequence", target="items")
    h_forward, h_backward = (r.estimates["human"] for r in (forward, backward))
    assert set(h_forward.info["per_system"]) == {"sequence"}
    assert np.allclose(h_forward.value, h_backward.value) and not np.allclose(h_forward.ci, h_backward.ci)


def test_compare_sequential_is_a_confidence_sequence_and_needs_labels():
    data, judged = items(means=(3.0, 2.2), n=50)
    for item in data:
        item.system_id = "base" if item.system_id == "s0" else "cand"
    ids = [i.id for i in data if int(i.id.split("-")[1]) < 30]
    fixed = compare_systems(data, judged, baseline="base", candidate="cand", human_ids=ids, aspect="q")
    sequence = compare_systems(data, judged, baseline="base", candidate="cand", human_ids=ids, aspect="q",
                               sequential=True)
    assert sequence.interval == "confidence-sequence" and sequence.paired
    assert sequence.high - sequence.low > fixed.high - fixed.low
    assert sequence.decision == "worse"  # 0.8 worse on average: clear even after looking at every label
    with pytest.raises(ConfigError, match="sequential reads human labels"):
        compare_systems(data, judged, baseline="base", candidate="cand", aspect="q", sequential=True)
