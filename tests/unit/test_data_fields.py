"""Files in their own vocabulary (issue 41, item 1): columns judgelab does not know load into ``extra``,
where nothing reads them, so the loader says which judgelab field each most likely means."""

from __future__ import annotations

import json
import time
import warnings

import pytest

from judgelab.data import DataError, DataWarning, Item, load_items
from judgelab.data.fields import suggest
from judgelab.data.stream import head
from judgelab.metrics.align import align, require_human_values

ITEMS = [{"id": f"i{k}", "input": f"What is {k} + {k}?", "output": str(2 * k), "human_score": k % 5 + 1,
          "system": f"v{k % 2}", "question_id": f"q{k // 2}"} for k in range(6)]
COMPARISONS = [{"id": f"cmp{k:02d}", "question": f"Say {k}.", "output_a": str(k), "output_b": "no", "verdict": "a"}
               for k in range(3)]


def write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def one_warning(caught) -> str:
    [warning] = [w for w in caught if issubclass(w.category, DataWarning)]
    return str(warning.message)


def test_natural_field_names_warn_once_naming_the_file_and_the_renames(tmp_path):
    data = write(tmp_path / "mine.jsonl", ITEMS)
    with pytest.warns(DataWarning) as caught:
        items = load_items(data)
    message = one_warning(caught)
    assert message.startswith(f"{data}: 4 columns judgelab does not know (input, human_score, system, question_id) went "
                              "to 'extra', where nothing reads them")
    assert ("did you mean input -> source, human_score -> scores.ASPECT, system -> system_id, "
            "question_id -> group_id?") in message
    assert '{"scores": {"helpfulness": 4}}' in message and "\n" not in message
    assert items[0].extra["input"] == "What is 0 + 0?"  # still kept, as before


def test_comparisons_are_told_instruction_and_label(tmp_path):
    with pytest.warns(DataWarning) as caught:
        load_items(write(tmp_path / "cmp.jsonl", COMPARISONS))
    assert "did you mean question -> instruction, verdict -> label?" in one_warning(caught)


def test_csv_columns_and_near_misses(tmp_path):
    data = tmp_path / "mine.csv"
    data.write_text("id,Source,ouptut,sytem_id,helpfulness_score\na,the text,an answer,v1,4\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"did you mean Source -> source, ouptut -> output, sytem_id -> system_id, "
                                        r"helpfulness_score -> scores.helpfulness\?"):
        load_items(data)  # no 'output': refused, and the error says which column it probably is
    data.write_text("id,output,sytem_id,helpfulness_score\na,an answer,v1,4\n", encoding="utf-8")
    with pytest.warns(DataWarning, match=r"sytem_id -> system_id, helpfulness_score -> scores.helpfulness"):
        load_items(data)


def test_a_missing_output_names_the_column_that_holds_it(tmp_path):
    data = write(tmp_path / "answers.jsonl", [{"id": "a", "question": "Why?", "response": "Because."}])
    with pytest.raises(DataError, match=r"answers.jsonl:1: field 'output': required field is missing: .*; did you "
                                        r"mean question -> source, response -> output\?"):
        load_items(data)
    with pytest.raises(DataError, match=r"did you mean response_a -> output_a, response_b -> output_b\?"):
        load_items(write(tmp_path / "pairs.jsonl", [{"id": "p", "response_a": "x", "response_b": "y"}]))


def test_no_warning_when_the_fields_are_used_or_the_columns_are_bookkeeping(tmp_path):
    used = [{"id": "a", "source": "s", "input": "the raw input", "output": "o", "scores": {"c": 3},
             "system_id": "v1", "system": "v1", "annotators": 3, "notes": "checked twice"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_items(write(tmp_path / "used.jsonl", used))
        load_items(write(tmp_path / "plain.jsonl", [{"id": "a", "output": "o", "batch": 2, "comment": "fine"}]))


def test_streamed_runs_read_the_same_warning_from_the_first_lines(tmp_path):
    data = write(tmp_path / "mine.jsonl", ITEMS)
    with pytest.warns(DataWarning, match="input -> source"):
        assert [item.id for item in head(data, 2)] == ["i0", "i1"]


@pytest.mark.parametrize(("column", "pointwise", "pairwise"), [
    ("input", "source", "instruction"), ("prompt", "source", "instruction"), ("question", "source", "instruction"),
    ("system", "system_id", "system_id"), ("model", "system_id", "system_id"), ("question_id", "group_id", "group_id"),
    ("verdict", "label", "label"), ("winner", "label", "label"), ("preference", "label", "label"),
    ("human_score", "scores.ASPECT", "label"), ("rating", "scores.ASPECT", "label"),
    ("response", "output", "output"), ("answer", "output", "output"), ("fluency_rating", "scores.fluency", None),
    ("annotator", None, None), ("judge_score", None, None), ("context_id", None, None), ("length", None, None),
])
def test_the_did_you_mean_table(column, pointwise, pairwise):
    assert suggest(column) == pointwise
    if pairwise is not None:
        assert suggest(column, "pairwise") == pairwise


@pytest.mark.parametrize("column", ["scores.helpfulness", "scores.fluency", "output", "system_id"])
def test_a_column_is_never_told_to_rename_to_itself(column):
    assert suggest(column) is None and suggest(column, "pairwise") is None  # was "scores.helpfulness -> scores.helpfulness"


def test_meta_without_human_values_names_the_file_and_where_they_go(tmp_path):
    items = [Item.model_validate(row) for row in ITEMS]
    with pytest.raises(DataError, match=r"^mine.jsonl: field 'scores.helpfulness': no item has a human value for "
                                        r"aspect 'helpfulness': human values go in each item's scores.helpfulness"):
        require_human_values(items, "helpfulness", "mine.jsonl")
    with pytest.raises(DataError, match=r"no item has a human value: human values go in each item's scores.ASPECT"):
        require_human_values(items, None, "mine.jsonl")
    pairs = [Item(id="p", instruction="i", output_a="a", output_b="b")]
    with pytest.raises(DataError, match=r"each item's label \(\"a\", \"b\" or \"tie\"\)"):
        require_human_values(pairs, None, "cmp.jsonl")
    # the library's own message (no file to name) says where they go too, not "<data>"
    with pytest.raises(DataError, match=r"^field 'scores.helpfulness': no item has a human value"):
        align(items, [], aspect="helpfulness")
    labelled = [Item(id="a", output="o", scores={"coherence": 3})]
    with pytest.raises(DataError, match="the items carry scores for coherence"):
        require_human_values(labelled, "helpfulness", "x.jsonl")
    require_human_values(labelled, None, "x.jsonl")  # the one aspect they carry


def test_loading_stays_fast(tmp_path):
    """The check costs a set comparison per row and one pass over the names at the end."""
    rows = [{"id": f"i{k}", "source": "s", "output": "o", "scores": {"c": 3}, "extra_col": k} for k in range(20000)]
    data = write(tmp_path / "big.jsonl", rows)
    started = time.perf_counter()
    load_items(data)
    loaded = time.perf_counter() - started
    records = [json.loads(line) for line in data.read_text().splitlines()]
    started = time.perf_counter()
    for record in records:
        Item.model_validate(record)
    validated = time.perf_counter() - started
    assert loaded < 3 * validated + 1.0  # reading + validating dominate; the names cost next to nothing
