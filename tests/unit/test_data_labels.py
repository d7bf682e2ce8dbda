"""Human-label files: annotate's labels.jsonl, plain score tables and labelled items, read as labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.data import Item
from judgelab.data.judgment import Judgment
from judgelab.data.labels import (
    human_values,
    label_matrix,
    labels_aspect,
    load_labels,
    read_labels,
    with_human_labels,
)
from judgelab.errors import ConfigError, DataError
from judgelab.metrics import meta_evaluate


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _items(n=4, scale=(1, 5)):
    return [Item(id=f"i{k}", group_id=f"g{k // 2}", output=f"out {k}", scale=scale, scores={"coherence": 3.0})
            for k in range(n)]


def test_a_later_answer_replaces_an_earlier_one_and_a_skip_is_recorded_but_no_label(tmp_path):
    path = _jsonl(tmp_path / "labels.jsonl", [
        {"item_id": "i0", "aspect": "coherence", "value": 2, "annotator": "ann", "seconds": 3.5},
        {"item_id": "i1", "aspect": "coherence", "value": None, "skipped": True, "annotator": "ann"},
        {"item_id": "i0", "aspect": "coherence", "value": 4, "annotator": "ann", "note": "changed my mind"},
        {"item_id": "i2", "aspect": "coherence", "value": 5, "annotator": "ann"},
        {"item_id": "i2", "aspect": "coherence", "value": None, "skipped": True, "annotator": "ann"},
        {"item_id": "i0", "aspect": "coherence", "value": 1, "annotator": "bob"},
    ])
    assert len(read_labels(path)) == 6
    current = {(label.item_id, label.annotator): label.value for label in load_labels(path)}
    assert current == {("i0", "ann"): 4.0, ("i0", "bob"): 1.0}  # i1 and i2 end as skips
    assert [label.note for label in load_labels(path)] == ["changed my mind", None]
    assert human_values(load_labels(path), "coherence") == {"i0": 2.5}


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_any_table_with_item_id_and_score_or_label(tmp_path, suffix):
    frame = pd.DataFrame({"item_id": ["i0", "i1", "i2"], "score": [1, 3, 5], "annotator": ["a", "a", "b"]})
    path = tmp_path / f"scores{suffix}"
    if suffix == ".jsonl":
        _jsonl(path, frame.to_dict("records"))
    elif suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    labels = load_labels(path)
    assert [(label.item_id, label.value, label.annotator, label.aspect) for label in labels] == [
        ("i0", 1.0, "a", None), ("i1", 3.0, "a", None), ("i2", 5.0, "b", None)]
    assert human_values(labels, "coherence") == {"i0": 1.0, "i1": 3.0, "i2": 5.0}  # no aspect named: any aspect
    graded = tmp_path / "graded.csv"
    graded.write_text("item_id,label\nq1-d1,2\nq1-d2,0\n")
    assert [label.value for label in load_labels(graded)] == [2.0, 0.0]


def test_items_with_scores_are_labels_per_aspect(tmp_path):
    rows = [{"id": "i0", "output": "x", "scores": {"coherence": 4, "fluency": 5}},
            {"id": "i1", "output": "y", "scores": {"coherence": 2}}, {"id": "i2", "output": "z"}]
    labels = load_labels(_jsonl(tmp_path / "items.jsonl", rows))
    assert human_values(labels, "coherence") == {"i0": 4.0, "i1": 2.0}
    assert human_values(labels, "fluency") == {"i0": 5.0}
    flat = tmp_path / "items.csv"
    flat.write_text("id,output,scores.coherence\ni0,x,4\ni1,y,\n")
    assert human_values(load_labels(flat), "coherence") == {"i0": 4.0}
    pairs = _jsonl(tmp_path / "pairs.jsonl", [{"id": "p0", "output_a": "a", "output_b": "b", "label": "B"}])
    assert [label.value for label in load_labels(pairs)] == ["b"]


@pytest.mark.parametrize(("row", "field"), [
    ({"item_id": "i0", "value": "good"}, "value"),
    ({"item_id": "i0", "score": True}, "score"),
    ({"item_id": "i0", "value": "nan"}, "value"),
    ({"item_id": "i0", "annotator": "a"}, "value"),
    ({"item": "i0", "value": 3}, "item_id"),
    ({"item_id": "", "value": 3}, "item_id"),
    ({"item_id": "i0", "value": 3, "seconds": "slow"}, "seconds"),
    ({"id": "i0", "output": "x", "scores": {"coherence": "high"}}, "scores.coherence"),
])
def test_a_malformed_row_names_file_line_and_field(tmp_path, row, field):
    path = _jsonl(tmp_path / "labels.jsonl", [{"item_id": "ok", "value": 1}, row])
    with pytest.raises(DataError) as caught:
        read_labels(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 2, field)


def test_a_malformed_csv_cell_names_its_line(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("item_id,score\ni0,3\ni1,three\n")
    with pytest.raises(DataError, match=r"labels.csv:3: field 'score'"):
        load_labels(path)


def test_preferences_average_over_annotators_and_give_pairwise_items_their_label(tmp_path):
    path = _jsonl(tmp_path / "labels.jsonl", [
        {"item_id": "p0", "aspect": "preference", "value": "a", "annotator": "x", "order": "ba"},
        {"item_id": "p0", "aspect": "preference", "value": "a", "annotator": "y"},
        {"item_id": "p1", "aspect": "preference", "value": "a", "annotator": "x"},
        {"item_id": "p1", "aspect": "preference", "value": "b", "annotator": "y"},
        {"item_id": "p2", "aspect": "preference", "value": "b", "annotator": "x"},
    ])
    items = [Item(id=f"p{k}", output_a="A", output_b="B", label="a") for k in range(4)]
    labels = load_labels(path)
    assert human_values(labels, "preference", items) == {"p0": 1.0, "p1": 0.5, "p2": 0.0}
    assert [item.label for item in with_human_labels(items, labels, "preference")] == ["a", "tie", "b", None]


def test_labels_from_another_data_set_are_refused_naming_the_ids(tmp_path):
    path = _jsonl(tmp_path / "labels.jsonl", [{"item_id": f"other-{k}", "aspect": "coherence", "value": 3}
                                              for k in range(8)] + [{"item_id": "i0", "aspect": "coherence", "value": 3}])
    with pytest.raises(DataError) as caught:
        human_values(load_labels(path), "coherence", _items())
    message = str(caught.value)
    assert "8 labelled item ids are not in the data" in message and "'other-0'" in message and "another data set" in message
    assert caught.value.path == str(path) and caught.value.field == "item_id"


def test_values_off_the_items_scale_are_refused(tmp_path):
    ten = _jsonl(tmp_path / "ten.jsonl", [{"item_id": "i0", "aspect": "coherence", "value": 8}])
    with pytest.raises(DataError, match=r"ten.jsonl:1: field 'value': value 8 for item 'i0' is outside the scale \[1, 5\]"):
        human_values(load_labels(ten), "coherence", _items())
    declared = _jsonl(tmp_path / "declared.jsonl", [{"item_id": "i0", "aspect": "coherence", "value": 3,
                                                     "scale": [0, 10]}])
    with pytest.raises(DataError, match="another scale"):
        human_values(load_labels(declared), "coherence", _items())
    assert human_values(load_labels(ten), "coherence", _items(scale=None)) == {"i0": 8.0}  # no declared scale


def test_numbers_for_pairwise_items_and_preferences_for_scored_ones_are_refused(tmp_path):
    numbers = _jsonl(tmp_path / "numbers.jsonl", [{"item_id": "p0", "aspect": "preference", "value": 1}])
    with pytest.raises(DataError, match="pairwise item but its label is a number"):
        human_values(load_labels(numbers), "preference", [Item(id="p0", output_a="A", output_b="B")])
    mixed = _jsonl(tmp_path / "mixed.jsonl", [{"item_id": "i0", "aspect": "x", "value": 1},
                                              {"item_id": "i1", "aspect": "x", "value": "tie"}])
    with pytest.raises(DataError, match="mixes numbers and pairwise preferences"):
        human_values(load_labels(mixed), "x")


def test_with_human_labels_replaces_the_aspect_and_leaves_unlabelled_items_without_one(tmp_path):
    items = [item.model_copy(update={"scores": {"coherence": 3.0, "fluency": 2.0}}) for item in _items()]
    path = _jsonl(tmp_path / "labels.jsonl", [
        {"item_id": "i0", "aspect": "coherence", "value": 5, "annotator": "a"},
        {"item_id": "i0", "aspect": "coherence", "value": 4, "annotator": "b"},
        {"item_id": "i2", "aspect": "coherence", "value": 1, "annotator": "a"}])
    relabelled = with_human_labels(items, load_labels(path), "coherence")
    assert [item.scores for item in relabelled] == [{"fluency": 2.0, "coherence": 4.5}, {"fluency": 2.0},
                                                    {"fluency": 2.0, "coherence": 1.0}, {"fluency": 2.0}]
    assert items[1].scores["coherence"] == 3.0  # copies: the caller's items are untouched
    judgments = [Judgment(item_id=f"i{k}", score=float(k)) for k in range(4)]
    report = meta_evaluate(relabelled, judgments, aspect="coherence", n_resamples=0)
    assert report.coverage.n_used == 2 and report.coverage.n_no_human == 2


def test_relevance_items_lose_their_graded_label_when_nobody_labelled_them(tmp_path):
    items = [Item(id=f"q-d{k}", qid="q", docid=f"d{k}", passage="text", label=3) for k in range(2)]
    path = _jsonl(tmp_path / "labels.jsonl", [{"item_id": "q-d0", "aspect": "relevance", "value": 1}])
    relabelled = with_human_labels(items, load_labels(path), "relevance")
    assert [item.human_score("relevance") for item in relabelled] == [1.0, None]


def test_the_aspect_is_the_one_the_file_names_or_must_be_given(tmp_path):
    one = load_labels(_jsonl(tmp_path / "one.jsonl", [{"item_id": "i0", "aspect": "coherence", "value": 1}]))
    assert labels_aspect(one) == "coherence" and labels_aspect(one, "fluency") == "fluency"
    two = load_labels(_jsonl(tmp_path / "two.jsonl", [{"item_id": "i0", "aspect": "a", "value": 1},
                                                       {"item_id": "i0", "aspect": "b", "value": 1}]))
    with pytest.raises(ConfigError, match="2 aspects"):
        labels_aspect(two)
    with pytest.raises(ConfigError, match="no human labels for aspect 'c'"):
        human_values(two, "c")


def test_label_matrix_has_one_row_per_annotator(tmp_path):
    path = _jsonl(tmp_path / "labels.jsonl", [
        {"item_id": "i0", "aspect": "c", "value": 1, "annotator": "a"},
        {"item_id": "i1", "aspect": "c", "value": 2, "annotator": "b"},
        {"item_id": "i0", "aspect": "c", "value": 3, "annotator": "b"}])
    annotators, ids, matrix = label_matrix(load_labels(path), "c")
    assert annotators == ["a", "b"] and ids == ["i0", "i1"]
    assert np.array_equal(np.array(matrix, dtype=float), np.array([[1, np.nan], [3, 2]]), equal_nan=True)
