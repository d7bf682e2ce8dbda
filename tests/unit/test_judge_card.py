"""A judge card and the rule that certifies a judge before it gates (judgelab.metrics.card): class recalls
with exact lower bounds, the certification error rate on judges of known TPR, the labels a plan asks for,
and the floors refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binomtest

from judgelab.errors import ConfigError
from judgelab.metrics.card import (
    CARD_VERSION,
    agreement,
    certify,
    exact_lower,
    labels_to_certify,
    parse_floors,
)


def test_class_recalls_with_exact_and_jeffreys_bounds():
    human = np.array([0] * 50 + [1] * 50)
    judge = human.copy()
    judge[:5] = 1  # 45/50 negatives right
    judge[50:60] = 0  # 40/50 positives right
    found = agreement(human, judge)
    assert found.binary and found.recall_of("tpr").hits == 40 and found.recall_of("tnr").hits == 45
    assert found.recall_of("tpr").lower == pytest.approx(binomtest(40, 50).proportion_ci(0.90, "exact").low)
    low, high = found.recall_of("tpr").jeffreys
    assert low < 0.8 < high and found.base_rate == 0.5 and found.kappa == pytest.approx(0.7)


def test_comparison_verdicts_are_classes_but_not_a_positive_and_a_negative():
    found = agreement(np.array(["a", "b", "a", "b"] * 10), np.array(["a", "b", "b", "b"] * 10))
    assert not found.binary and found.recall_of("tpr") is None and found.recall_of("a").recall == 0.5
    verdict = certify(found, {"tpr": 0.8})
    assert not verdict.certified and "floor each with recall=" in verdict.missed[0]


def test_averaged_human_scores_give_a_card_without_classes():
    found = agreement(np.array([1.33, 2.67, 4.0, 3.5]), np.array([1, 3, 4, 3]))
    assert found.classes is None and "not whole grades" in found.notes[0]
    assert not certify(found, {"recall": 0.5}).certified


def test_a_judge_below_the_floor_is_certified_at_most_alpha_of_the_time():
    rng = np.random.default_rng(0)
    human = np.repeat([0, 1], 100)
    certified = 0
    for _ in range(400):  # true TPR 0.78 under the 0.8 floor, TNR 0.95
        right = rng.random(200) < np.where(human == 1, 0.78, 0.95)
        certified += certify(agreement(human, np.where(right, human, 1 - human)), {"tpr": 0.8, "tnr": 0.8}).certified
    assert certified / 400 <= 0.05


def test_the_plan_is_the_smallest_count_that_reaches_the_floor():
    assert labels_to_certify(90, 100, 0.8, 0.05) == 100  # 90/100 already certifies: lower bound 0.840
    more = labels_to_certify(85, 100, 0.8, 0.05)  # 85/100: lower bound 0.778
    assert more > 100 and exact_lower(round(0.85 * more), more, 0.05) >= 0.8
    assert exact_lower(round(0.85 * int(0.9 * more)), int(0.9 * more), 0.05) < 0.8
    assert labels_to_certify(75, 100, 0.8, 0.05) is None  # not above the floor: no count would do


@pytest.mark.parametrize("text, message", [("tpr=1.2", "in \\(0, 1\\)"), ("precision=0.8", "choose among"),
                                           ("tpr=x", "give a number"), ("", "at least one")])
def test_bad_floors_are_refused_by_name(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_floors(text)


def test_a_run_report_warns_when_its_card_is_of_an_earlier_config(tmp_path):
    from judgelab.report.card import attach_card, card_mismatch

    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"command": "judge", "judge_digest": "abc"}))
    card_dir = tmp_path / "card"
    card_dir.mkdir()
    card = {"judgelab_card": CARD_VERSION, "identity": {"judge": None, "judge_digest": "abc"},
            "agreement": {"confidence": 0.95, "labels": 0, "classes": None}}
    (card_dir / "card.json").write_text(json.dumps(card))
    attach_card(run, card_dir)
    assert card_mismatch(run, card, set()) is None
    (run / "run.json").write_text(json.dumps({"command": "judge", "judge_digest": "def"}))  # rerun, new prompt
    assert "digest abc" in card_mismatch(run, card, set()) and "write a new card" in card_mismatch(run, card, set())
    with pytest.raises(ConfigError, match="not a run folder"):
        attach_card(tmp_path / "card", card_dir)
