"""TREC qrels from judgments: only labelled ok judgments become lines; the file reads back with ir_measures."""

from __future__ import annotations

import ir_measures
import pytest

from judgelab.data import Item, Judgment
from judgelab.data.io import save_judgments
from judgelab.data.trec import read_qrels, write_qrels
from judgelab.errors import DataError
from tests.e2e.cli import run_main_in_process


def relevance_items() -> list[Item]:
    return [Item(id=f"i{k}", qid=f"q{k % 2}", docid=f"d{k}", query="q", passage="p", label=k % 4) for k in range(4)]


def test_qrels_round_trip_through_ir_measures(tmp_path):
    judgments = [
        Judgment(item_id="i0", score=3.0, label=3, criteria={"exactness": 3}),
        Judgment(item_id="i1", score=0.0),  # a score without a label is used when whole
        Judgment(item_id="i2", status="unparsable", reason="no grade", raw="hmm"),
        Judgment(item_id="i3", score=1.5),
        Judgment(item_id="other", score=1.0, label=1),
    ]
    written = write_qrels(judgments, relevance_items(), tmp_path / "qrels.txt")
    assert written.written == 2
    assert set(written.skipped) == {"i2", "i3", "other"} and "unparsable" in written.skipped["i2"]
    assert (tmp_path / "qrels.txt").read_text() == "q0 0 d0 3\nq1 0 d1 0\n"
    by_ir_measures = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    expected = [ir_measures.Qrel("q0", "d0", 3), ir_measures.Qrel("q1", "d1", 0)]
    assert by_ir_measures == expected and read_qrels(tmp_path / "qrels.txt") == expected


def test_bad_qrels_lines_are_named(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("q1 0 d1 2\nq1 0 d2\n")
    with pytest.raises(DataError, match=r"bad.txt:2: expected 4 columns"):
        read_qrels(path)
    path.write_text("q1 0 d1 high\n")
    with pytest.raises(DataError, match=r"bad.txt:1: field 'label'"):
        read_qrels(path)


def test_ids_with_spaces_cannot_be_written(tmp_path):
    items = [Item(id="x", qid="q 1", docid="d1", query="q", passage="p")]
    with pytest.raises(DataError, match="whitespace"):
        write_qrels([Judgment(item_id="x", score=1.0, label=1)], items, tmp_path / "q.txt")


def test_a_run_folder_with_a_corrupt_run_json_is_named_with_exit_2(tmp_path, capsys):
    """Without --data, qrels reads the items' path from run.json: a broken one is a located error."""
    run = tmp_path / "run"
    save_judgments([Judgment(item_id="i0", score=3.0, label=3)], run / "judgments.jsonl")
    (run / "run.json").write_text('{"data": "items.jsonl"')
    code, err = run_main_in_process(capsys, "qrels", run, "--out", tmp_path / "qrels.txt")
    assert code == 2 and "run.json:1: bad JSON" in err
    assert not (tmp_path / "qrels.txt").exists()
