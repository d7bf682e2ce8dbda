"""A RAG system's retrievals split into query-passage pairs (data/passages.py, `judgelab passages`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.data import DataError, Item, load_items
from judgelab.data.passages import run_lines, split_passages, write_runs
from judgelab.metrics.ir import read_runs
from tests.e2e.cli import run_main_captured

DATA = Path(__file__).resolve().parents[1] / "data" / "rag" / "retrievals.jsonl"
EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples" / "rag.jsonl"


def rag(id="q1-a", contexts=({"id": "p1", "text": "Open at 10."},), **fields) -> Item:
    return Item(id=id, source=fields.pop("source", "When?"), output="At 10.", contexts=list(contexts), **fields)


def test_each_passage_becomes_a_relevance_item_of_its_question():
    pairs = split_passages(load_items(DATA))
    assert [p.id for p in pairs] == ["q1-a#passage:m-hours", "q1-a#passage:m-shop", "q1-b#passage:m-shop",
                                     "q1-b#passage:m-cafe", "q2-a#passage:m-free"]
    assert all(p.kind == "relevance" for p in pairs)
    first = pairs[0]
    assert (first.qid, first.docid, first.group_id, first.system_id) == ("q1", "m-hours", "q1", "a")
    assert first.query == "When does the museum open?" and first.passage == "Hours\nThe museum opens at 10:00."
    assert first.extra == {"item": "q1-a", "rank": 1, "passages": 2}
    # both systems' retrievals for q1 are one query: their runs are scored on it
    assert {p.qid for p in pairs if p.extra["item"] in ("q1-a", "q1-b")} == {"q1"}


def test_the_question_of_a_conversation_is_its_last_user_message():
    (pair,) = [p for p in split_passages(load_items(DATA)) if p.extra["item"] == "q2-a"]
    assert pair.query == "Is the museum free?" and pair.qid == "q2"


def test_passage_labels_become_the_pairs_grades_and_leave_extra():
    pairs = {p.id: p for p in split_passages(load_items(DATA))}
    assert pairs["q1-a#passage:m-hours"].label == 3 and pairs["q1-a#passage:m-shop"].label == 0
    assert pairs["q1-b#passage:m-cafe"].label is None  # not labelled
    assert pairs["q1-a#passage:m-hours"].human_score("relevance") == 3.0
    assert all("passage_labels" not in p.extra for p in pairs.values())


def test_an_item_without_group_id_is_its_own_question_and_a_plain_list_is_numbered():
    (pair,) = split_passages([Item(id="x", source="Q?", output="A.", contexts=["The answer."])])
    assert (pair.qid, pair.docid, pair.passage) == ("x", "1", "The answer.")


@pytest.mark.parametrize(("item", "message"), [
    (Item(id="plain", source="q", output="a"), "item 'plain' has no contexts"),
    (Item(id="one", source="q", output="a", context="a text"), "its 'context' is one text"),
    (rag(source=None, messages=[{"role": "assistant", "content": "At 10."}]), "item 'q1-a' has no question"),
    (rag(extra={"passage_labels": [3]}), "field 'extra.passage_labels': an object of passage id: grade"),
    (rag(extra={"passage_labels": {"p9": 1}}), "'p9' names no passage of the item"),
    (rag(extra={"passage_labels": {"p1": "high"}}), "passage 'p1': a grade is a whole number"),
    (rag(extra={"passage_labels": {"p1": 2.5}}), "a grade is a whole number"),
    (rag(extra={"passage_labels": {"p1": True}}), "a grade is a whole number"),
])
def test_hostile_items_are_refused_naming_the_item(item, message):
    with pytest.raises(DataError, match=message):
        split_passages([item])


def test_a_passage_without_an_id_is_refused_when_the_item_is_read():
    with pytest.raises(ValueError, match="contexts.0.id"):
        Item(id="x", source="q", output="a", contexts=[{"text": "no id"}])


def test_one_passage_id_with_two_texts_in_one_question_is_refused():
    a = rag(id="q-a", group_id="q", contexts=["Open at 10."])
    b = rag(id="q-b", group_id="q", contexts=["Closed on Monday."])  # both numbered "1"
    with pytest.raises(DataError, match="passage id '1' holds two different texts \\(items 'q-a' and 'q-b'\\)"):
        split_passages([a, b])


def test_runs_rank_each_systems_passages_in_retrieved_order(tmp_path):
    pairs = split_passages(load_items(DATA))
    paths = write_runs(pairs, tmp_path / "runs")
    assert sorted(p.name for p in paths) == ["a.run", "b.run"]
    runs = read_runs(tmp_path / "runs")
    ranked = sorted((d for d in runs["b"] if d.query_id == "q1"), key=lambda d: -d.score)
    assert [d.doc_id for d in ranked] == ["m-shop", "m-cafe"]


def test_a_runs_folder_holding_other_systems_runs_is_refused(tmp_path):
    (tmp_path / "old.run").write_text("q Q0 d 1 1 old\n", encoding="utf-8")
    with pytest.raises(DataError, match="holds runs of other systems \\(old.run\\)"):
        write_runs(split_passages(load_items(DATA)), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.run"]


def test_a_system_retrieving_one_passage_twice_for_a_question_makes_no_run():
    twice = [rag(id="x1", group_id="q", system_id="s"), rag(id="x2", group_id="q", system_id="s")]
    with pytest.raises(DataError, match="system 's' retrieves passage 'p1' for question 'q' twice"):
        run_lines(split_passages(twice))


def test_the_command_writes_pairs_and_runs(tmp_path, capsys):
    out = tmp_path / "pairs.jsonl"
    code, text, err = run_main_captured(capsys, "passages", "--data", EXAMPLE, "--out", out,
                                        "--runs", tmp_path / "runs")
    assert code == 0, text + err
    assert "8 item(s) -> 24 passage(s) of 4 question(s)" in text and "24 with grades" in text
    assert len(load_items(out)) == 24 and sorted(read_runs(tmp_path / "runs")) == ["bm25", "dense"]


@pytest.mark.parametrize("row", [
    {"id": "n", "source": "q", "output": "a"},  # no contexts
    {"id": "s", "group_id": "q 1", "source": "q", "output": "a", "contexts": ["x"]},  # a qid a run cannot hold
])
def test_the_command_writes_nothing_on_error(tmp_path, capsys, row):
    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps({"id": "ok", "source": "q", "output": "a", "contexts": ["x"]}) + "\n"
                    + json.dumps(row) + "\n", encoding="utf-8")
    code, text, err = run_main_captured(capsys, "passages", "--data", data, "--out", tmp_path / "pairs.jsonl",
                                        "--runs", tmp_path / "runs")
    assert code == 2, text + err
    assert "item 'n' has no contexts" in err or "qid 'q 1' holds white space" in err
    assert not (tmp_path / "pairs.jsonl").exists() and not (tmp_path / "runs").exists()


def test_the_command_writes_no_pairs_when_the_runs_folder_holds_other_runs(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "old.run").write_text("q Q0 d 1 1 old\n", encoding="utf-8")
    code, text, err = run_main_captured(capsys, "passages", "--data", EXAMPLE, "--out", tmp_path / "pairs.jsonl",
                                        "--runs", tmp_path / "runs")
    assert code == 2 and "holds runs of other systems (old.run)" in err, text + err
    assert not (tmp_path / "pairs.jsonl").exists() and [p.name for p in (tmp_path / "runs").iterdir()] == ["old.run"]
