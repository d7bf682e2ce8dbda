"""Pairing items with judgments: counted, never zero-filled."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgelab.data import Item, Judgment
from judgelab.errors import ConfigError, DataError
from judgelab.metrics import align, meta_evaluate


def _items(n=8):
    return [Item(id=f"i{k}", output=f"o{k}", group_id=f"g{k // 4}", system_id=f"s{k % 4}",
                 scores={"coherence": float(k % 5), "fluency": 1.0}) for k in range(n)]


def _judgments():
    return [
        Judgment(item_id="i0", score=0.5),
        Judgment(item_id="i1", score=1.5),
        Judgment(item_id="i2", status="unparsable", reason="no number"),
        Judgment(item_id="i3", status="error", reason="timeout"),
        Judgment(item_id="i4", score=2.0),
        Judgment(item_id="i5", label=4),  # a label counts as the score when there is no score
        Judgment(item_id="i6"),  # ok but empty
        Judgment(item_id="zz", score=3.0),  # not in the data
    ]  # i7: missing


def test_every_unusable_item_is_counted():
    aligned = align(_items(), _judgments(), aspect="coherence")
    assert aligned.coverage.to_dict() == {"n_items": 8, "n_used": 4, "n_missing": 1, "n_unparsable": 1,
                                          "n_error": 1, "n_no_value": 1, "n_no_human": 0, "n_unknown": 1}
    assert [item.id for item in aligned.items] == ["i0", "i1", "i4", "i5"]
    assert aligned.judge.tolist() == [0.5, 1.5, 2.0, 4.0]


def test_missing_judgments_are_not_zero_filled():
    report = meta_evaluate(_items(), _judgments(), aspect="coherence", levels=["dataset"], n_resamples=0)
    used_human, used_judge = [0.0, 1.0, 4.0, 0.0], [0.5, 1.5, 2.0, 4.0]
    assert report["dataset"]["spearman"].value == stats.spearmanr(used_human, used_judge).statistic
    assert report["dataset"]["spearman"].n == 4


def test_aspect_is_inferred_only_when_unambiguous():
    with pytest.raises(ConfigError, match="choose one with aspect"):
        align(_items(), _judgments())
    items = [Item(id="a", output="x", scores={"overall": 1}), Item(id="b", output="y", scores={"overall": 2})]
    assert align(items, [Judgment(item_id="a", score=1)]).aspect == "overall"


def test_items_without_the_aspect_are_counted():
    items = _items(4) + [Item(id="extra", output="x", scores={"fluency": 2.0})]
    aligned = align(items, [Judgment(item_id=i.id, score=1.0) for i in items], aspect="coherence")
    assert aligned.coverage.n_no_human == 1


def test_judgments_for_other_aspects_and_judges_are_set_aside():
    judgments = [Judgment(item_id="i0", score=1, aspect="coherence", judge="A"),
                 Judgment(item_id="i0", score=9, aspect="fluency", judge="A"),
                 Judgment(item_id="i0", score=5, aspect="coherence", judge="B")]
    with pytest.raises(ConfigError, match="choose one with judge"):
        align(_items(), judgments, aspect="coherence")
    assert align(_items(), judgments, aspect="coherence", judge="B").judge.tolist() == [5.0]
    with pytest.raises(ConfigError, match="no judgment from judge"):
        align(_items(), judgments, aspect="coherence", judge="C")


def test_duplicates_and_non_numeric_labels_are_errors():
    with pytest.raises(DataError, match="two judgments"):
        align(_items(), [Judgment(item_id="i0", score=1), Judgment(item_id="i0", score=2)], aspect="coherence")
    with pytest.raises(DataError, match="not a number"):
        align(_items(), [Judgment(item_id="i0", label="good")], aspect="coherence")
    with pytest.raises(DataError, match="no item has both"):
        align(_items(), [Judgment(item_id="i0", status="error", reason="x")], aspect="coherence")


def test_pairwise_items_keep_their_labels():
    items = [Item(id=f"p{k}", output_a="x", output_b="y", label="a" if k % 2 else "b") for k in range(4)]
    judgments = [Judgment(item_id=f"p{k}", label="a", extra={"label_swapped": "ab"[k // 3]}) for k in range(4)]
    report = meta_evaluate(items, judgments, n_resamples=0)
    assert report["pairwise"]["accuracy"].value == 0.5
    assert report["pairwise"]["positional_consistency"].value == 0.75
    assert np.array_equal(align(items, judgments).human, np.array(["b", "a", "b", "a"], dtype=object))


def test_judgments_of_another_aspect_are_named_in_the_error():
    from judgelab.metrics.align import align as _align

    items = [Item(id=f"i{k}", output="x", scores={"faithfulness": k}) for k in range(3)]
    judged = [Judgment(item_id=f"i{k}", score=0.5, aspect="consistency") for k in range(3)]
    with pytest.raises(DataError, match="the judgments rate 'consistency', not 'faithfulness': judge 'faithfulness'"):
        _align(items, judged)
