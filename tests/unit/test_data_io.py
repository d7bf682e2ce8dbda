"""Loaders and writers: round trips in every format, and a corpus of malformed files."""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.data import (
    DataError,
    Dataset,
    DataWarning,
    Item,
    JsonlAppender,
    Judgment,
    load_items,
    load_judgments,
    save_items,
    save_judgments,
)
from judgelab.data.item import MAX_SCORE
from judgelab.data.stream import head, iter_items
from judgelab.errors import ConfigError
from judgelab.llm.types import Usage
from judgelab.train.labels import read_teacher

FORMATS = ["jsonl", "json", "csv", "tsv", "parquet", "jsonl.gz", "csv.gz"]

POINTWISE = {"id": "p1", "dataset": "toy", "group_id": "g1", "system_id": "sys", "source": "src",
             "context": None, "output": "out", "reference": "ref", "scores": {"coherence": 3.5, "fluency": 2.0},
             "scale": [1, 5], "extra": {"aspect_scales": {"coherence": [1, 5]}, "note": "x"}}
PAIRWISE = {"id": "w1", "dataset": "toy", "subset": "Natural", "instruction": "do it", "output_a": "A",
            "output_b": "B", "label": "a"}
RELEVANCE = {"id": "r1", "qid": "19335", "docid": "1017759", "query": "q", "passage": " p ", "label": 2,
             "extra": {"corpus": "msmarco"}}


def _write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _error(source, **kwargs) -> DataError:
    with pytest.raises(DataError) as info:
        load_items(source, **kwargs)
    return info.value


# ------------------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips_all_three_kinds(tmp_path, fmt):
    dataset = Dataset([Item.model_validate(r) for r in (POINTWISE, PAIRWISE, RELEVANCE)], name="toy")
    path = save_items(dataset, tmp_path / f"toy.{fmt}")
    back = load_items(path)
    assert list(back) == list(dataset)
    assert back.name == "toy"
    assert [i.kind for i in back] == ["pointwise", "pairwise", "relevance"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp file left behind"


def test_dataframe_round_trip_and_flat_layout():
    dataset = Dataset([Item.model_validate(r) for r in (POINTWISE, PAIRWISE, RELEVANCE)])
    frame = dataset.to_pandas()
    assert {"scores.coherence", "scores.fluency", "output_a", "qid", "extra"} <= set(frame.columns)
    assert frame["scores.coherence"].dtype == float and math.isnan(frame["scores.coherence"][1])
    assert Dataset.from_pandas(frame) == dataset


def test_csv_is_flat_and_reads_json_cells_too(tmp_path):
    path = save_items([Item.model_validate(POINTWISE)], tmp_path / "x.csv")
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "scores.coherence" in header and "scores" not in header
    # the nested form: a JSON cell per dict field, and an empty cell is None
    nested = _write(tmp_path / "nested.csv",
                    'id,output,scores,scale,extra,reference\n'
                    'a,hi,"{""coherence"": 4}","[1, 5]","{""k"": [1, 2]}",\n')
    item = load_items(nested)[0]
    assert item.scores == {"coherence": 4.0} and item.scale == (1.0, 5.0)
    assert item.extra == {"k": [1, 2]} and item.reference is None


def test_unknown_columns_go_to_extra_and_ids_are_text(tmp_path):
    path = _write(tmp_path / "u.csv", "id,output,annotator,label\n7,hi,ann-3,2\n")
    item = load_items(path)[0]
    assert item.id == "7" and item.extra == {"annotator": "ann-3"} and item.label == 2
    frame = pd.DataFrame({"id": [1, 2], "output": ["a", "b"], "scores.q": [1.0, np.nan],
                          "n_tokens": [np.int64(3), np.int64(4)]})
    ds = Dataset.from_pandas(frame)
    assert ds.ids == ["1", "2"] and ds[1].scores == {} and ds[0].extra == {"n_tokens": 3}
    assert type(ds[0].extra["n_tokens"]) is int


def test_json_array_file_and_bom_at_start(tmp_path):
    array = _write(tmp_path / "a.json", "\ufeff" + json.dumps([POINTWISE, RELEVANCE], indent=2))
    assert load_items(array).ids == ["p1", "r1"]
    bom_csv = _write(tmp_path / "b.csv", "\ufeffid,output\na,hi\n")
    assert load_items(bom_csv).ids == ["a"]


def test_blank_lines_are_skipped_and_kind_filter(tmp_path):
    path = _write(tmp_path / "b.jsonl", "\n" + json.dumps(POINTWISE) + "\n\n  \n" + json.dumps(
        {**POINTWISE, "id": "p2"}) + "\n")
    assert load_items(path, kind="pointwise").ids == ["p1", "p2"]
    err = _error(path, kind="pairwise")
    assert str(err).startswith(f"{path}:2: field 'output_a'") and "expected a pairwise item" in str(err)


def test_null_dicts_read_as_empty(tmp_path):
    path = _write(tmp_path / "n.jsonl", _jsonl({"id": "a", "output": "o", "scores": None, "extra": None}))
    item = load_items(path)[0]
    assert item.scores == {} and item.extra == {}


# hypothesis: random items survive every format ------------------------------------------------------

_text = st.text(max_size=12)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_text, children, max_size=3),
    max_leaves=6,
)
_finite = st.floats(-MAX_SCORE, MAX_SCORE, width=64)
# a qid or docid is any text but control characters, which TREC files and the C scorer cannot hold (issue 50)
_trec_id = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=12)


@st.composite
def _items(draw) -> Item:
    kind = draw(st.sampled_from(["pointwise", "pairwise", "relevance"]))
    opt = st.none() | _text
    data = {
        "id": draw(st.text(min_size=1, max_size=10)),
        "dataset": draw(opt), "group_id": draw(opt), "system_id": draw(opt),
        "extra": draw(st.dictionaries(_text.filter(lambda key: key != "aspect_scales"), _json_value, max_size=3)),
    }
    scores = _finite
    if draw(st.booleans()):
        low = draw(st.floats(-100, 100))
        data["scale"] = (low, low + draw(st.floats(0.5, 100)))
        scores = st.floats(*data["scale"])  # a score lies on the item's scale
    data["scores"] = draw(st.dictionaries(_text, scores, max_size=3))
    if kind == "pointwise":
        data.update(source=draw(opt), context=draw(opt), output=draw(_text), reference=draw(opt))
    elif kind == "pairwise":
        data.update(instruction=draw(opt), subset=draw(opt), output_a=draw(_text), output_b=draw(_text),
                    label=draw(st.none() | st.sampled_from(["a", "b", "tie"])))
    else:
        data.update(qid=draw(_trec_id), docid=draw(_trec_id), query=draw(opt),
                    passage=draw(opt), label=draw(st.none() | st.integers(-5, 5)))
    return Item.model_validate(data)


def _unique(items: list[Item]) -> list[Item]:
    return list({item.id: item for item in items}.values())


def _csv_view(item: Item) -> Item:
    """What CSV can say: it cannot tell an empty string from no value."""
    fields = {k: (None if v == "" else v) for k, v in item.model_dump().items()}
    return Item.model_validate(fields)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(_items(), min_size=1, max_size=6).map(_unique))
def test_random_items_round_trip_in_every_format(tmp_path, items):
    dataset = Dataset(items)
    for fmt in ("jsonl", "json", "parquet", "csv"):
        if fmt == "csv" and any("" in (i.output, i.output_a, i.output_b, i.qid, i.docid) for i in items):
            with pytest.raises(DataError, match="empty string"):
                save_items(dataset, tmp_path / "r.csv")
            continue
        path = save_items(dataset, tmp_path / f"r.{fmt}")
        back = list(load_items(path))
        expected = [_csv_view(i) for i in items] if fmt == "csv" else items
        assert back == expected, fmt
    assert list(Dataset.from_pandas(dataset.to_pandas())) == items


# ------------------------------------------------------------------------------------------ malformed

GOOD = json.dumps({"id": "a", "output": "fine"})

# name, file name, content, expected line, expected field (None: no field), message fragment
MALFORMED = [
    ("missing id", "f.jsonl", f'{GOOD}\n{{"output": "x"}}\n', 2, "id", "required field is missing"),
    ("empty id", "f.jsonl", f'{GOOD}\n{{"id": "", "output": "x"}}\n', 2, "id", "at least 1 character"),
    ("missing output", "f.jsonl", f'{GOOD}\n{{"id": "b", "source": "s"}}\n', 2, "output", "missing"),
    ("pairwise without output_b", "f.jsonl", '{"id": "b", "output_a": "x"}\n', 1, "output_b", "pairwise"),
    ("relevance without docid", "f.jsonl", '{"id": "b", "qid": "q1"}\n', 1, "docid", "relevance"),
    ("output not text", "f.jsonl", f'{GOOD}\n{{"id": "b", "output": 5}}\n', 2, "output", "valid string"),
    ("score not a number", "f.jsonl", '{"id": "b", "output": "x", "scores": {"coherence": "high"}}\n', 1,
     "scores.coherence", "valid number"),
    ("scores not an object", "f.jsonl", '{"id": "b", "output": "x", "scores": [1, 2]}\n', 1, "scores",
     "dictionary"),
    ("extra not an object", "f.jsonl", '{"id": "b", "output": "x", "extra": "e", "k": 1}\n', 1, "extra",
     "dictionary"),
    ("label fractional", "f.jsonl", '{"id": "b", "qid": "q", "docid": "d", "label": 2.5}\n', 1, "label",
     "integer"),
    ("NaN score", "f.jsonl", f'{GOOD}\n{{"id": "b", "output": "x", "scores": {{"coherence": NaN}}}}\n', 2,
     "scores.coherence", "finite"),
    ("infinite score", "f.jsonl", '{"id": "b", "output": "x", "scores": {"overall": -Infinity}}\n', 1,
     "scores.overall", "finite"),
    ("inverted scale", "f.jsonl", '{"id": "b", "output": "x", "scale": [5, 1]}\n', 1, "scale", "min < max"),
    ("NaN in scale", "f.jsonl", '{"id": "b", "output": "x", "scale": [NaN, 5]}\n', 1, "scale.0", "finite"),
    ("scale of three", "f.jsonl", '{"id": "b", "output": "x", "scale": [1, 2, 3]}\n', 1, "scale", "2 items"),
    ("bad JSON", "f.jsonl", f'{GOOD}\n{{"id": "b", "output": "x",}}\n', 2, None, "bad JSON"),
    ("bad JSON after a blank line", "f.jsonl", f'{GOOD}\n\n{GOOD[:-1]}\n', 3, None, "bad JSON"),
    ("truncated last line", "f.jsonl", f'{GOOD}\n{GOOD[:9]}', 2, None, "interrupted write"),
    ("not an object", "f.jsonl", f'{GOOD}\n[1, 2]\n', 2, None, "expected a JSON object"),
    ("a bare string", "f.jsonl", '"text"\n', 1, None, "got a string"),
    ("duplicate id", "f.jsonl", f'{GOOD}\n{{"id": "b", "output": "x"}}\n{GOOD}\n', 3, "id",
     "duplicate id 'a' (first used on line 1)"),
    ("non-UTF-8 byte", "f.jsonl", GOOD.encode() + b'\n{"id": "b", "output": "caf\xe9"}\n', 2, "output",
     "not valid UTF-8: byte 0xe9"),
    ("BOM in the middle", "f.jsonl", f'{GOOD}\n\ufeff{{"id": "b", "output": "x"}}\n', 2, None,
     "byte-order mark"),
    ("UTF-16 file", "f.jsonl", f"{GOOD}\n".encode("utf-16"), 1, None, "UTF-16"),
    ("json array element", "f.json", '[\n  {"id": "a", "output": "x"},\n  {"id": "b"}\n]\n', 3, "output",
     "missing"),
    ("json array bad syntax", "f.json", '[\n  {"id": "a", "output": "x"}\n  {"id": "b"}\n]\n', 3, None,
     "bad JSON"),
    ("csv missing output cell", "f.csv", "id,output\na,x\nb,\n", 3, "output", "missing"),
    ("csv score not a number", "f.csv", "id,output,scores.coherence\na,x,4\nb,y,high\n", 3,
     "scores.coherence", "valid number"),
    ("csv line after a multi-line cell", "f.csv", 'id,output\na,"two\nlines"\n,z\n', 4, "id", "missing"),
    ("csv wrong number of cells", "f.csv", "id,output\na,x\nb,y,z\n", 3, None, "3 cells but the header has 2"),
    ("csv bad JSON cell", "f.csv", 'id,output,extra\na,x,"{bad"\n', 2, "extra", "not valid JSON"),
    ("csv inverted scale", "f.csv", 'id,output,scale\na,x,"[5, 1]"\n', 2, "scale", "min < max"),
    ("csv NaN score", "f.csv", "id,output,scores.q\na,x,nan\n", 2, "scores.q", "finite"),
    ("csv duplicate id", "f.csv", "id,output\na,x\nb,y\na,z\n", 4, "id", "duplicate id"),
    ("csv duplicate column", "f.csv", "id,output,id\na,x,b\n", 1, "id", "duplicate column"),
    ("csv non-UTF-8 byte", "f.csv", b"id,output,source\na,x,s\nb,y,caf\xe9\n", 3, "source", "UTF-8"),
    ("tsv missing id", "f.tsv", "id\toutput\n\tx\n", 2, "id", "missing"),
    ("gzip jsonl", "f.jsonl.gz", None, 2, "output", "valid string"),
]


@pytest.mark.parametrize(("name", "filename", "content", "line", "field", "fragment"), MALFORMED,
                         ids=[m[0] for m in MALFORMED])
def test_malformed_file_names_file_line_and_field(tmp_path, name, filename, content, line, field, fragment):
    if content is None:  # gzip: compress a JSONL body
        import gzip
        content = gzip.compress(f'{GOOD}\n{{"id": "b", "output": ["x"]}}\n'.encode())
    path = _write(tmp_path / filename, content)
    err = _error(path)
    message = str(err)
    assert message.startswith(f"{path}:{line}:"), message
    assert (err.path, err.line, err.field) == (str(path), line, field), message
    if field is not None:
        assert f"field '{field}'" in message
    assert fragment in message
    # converting a bad file writes nothing
    out = tmp_path / "converted.parquet"
    with pytest.raises(DataError):
        save_items(load_items(path), out)
    assert not out.exists()


DOTTED = [{"id": "a", "output": "o", "scores.helpfulness": 4, "extra.note": "n"},
          {"id": "b", "output": "o", "scores": {"fluency": 2}, "scores.helpfulness": 5, "extra": {"k": 1},
           "extra.note": "m"},
          {"id": "c", "output": "o", "scores": {"helpfulness": 3}, "scores.helpfulness": 3.0}]  # the same value twice


def test_dotted_keys_in_json_are_the_nested_fields_as_in_csv(tmp_path):
    jsonl = _write(tmp_path / "d.jsonl", _jsonl(*DOTTED))
    array = _write(tmp_path / "d.json", json.dumps(DOTTED, indent=1))
    frame = pd.DataFrame([{"id": "a", "output": "o", "scores.helpfulness": 4, "extra.note": "n"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # nothing went to extra, so there is nothing to rename
        for items in (load_items(jsonl), load_items(array), list(iter_items(jsonl)), head(jsonl, 3)):
            assert [i.scores for i in items] == [{"helpfulness": 4.0}, {"fluency": 2.0, "helpfulness": 5.0},
                                                 {"helpfulness": 3.0}]
            assert [i.extra for i in items] == [{"note": "n"}, {"k": 1, "note": "m"}, {}]
        assert list(load_items(frame)) == list(load_items(jsonl))[:1]


@pytest.mark.parametrize(("filename", "content", "line", "field", "fragment"), [
    ("c.jsonl", f'{GOOD}\n{{"id": "b", "output": "x", "scores": {{"q": 1}}, "scores.q": 2}}\n', 2, "scores.q",
     "given twice, as 1 in 'scores' and as 2 in 'scores.q'"),
    ("c.json", f'[\n{GOOD},\n{{"id": "b", "output": "x", "extra": {{"k": 1}}, "extra.k": 2}}\n]\n', 3, "extra.k",
     "given twice"),
    ("c.jsonl", '{"id": "b", "output": "x", "scores": [1], "scores.q": 2}\n', 1, "scores", "not an object"),
    ("c.csv", 'id,output,scores,scores.q\na,x,"{""q"": 1}",2\n', 2, "scores.q", "given twice"),
])
def test_a_field_given_twice_with_two_values_is_named(tmp_path, filename, content, line, field, fragment):
    path = _write(tmp_path / filename, content)
    err = _error(path)
    assert (err.path, err.line, err.field) == (str(path), line, field) and fragment in str(err), str(err)
    if filename.endswith(".jsonl"):  # a streamed run reads it the same way
        with pytest.raises(DataError, match=fragment):
            list(iter_items(path))


def test_dotted_keys_in_judgment_json_are_the_nested_fields(tmp_path):
    path = _write(tmp_path / "j.jsonl", _jsonl({"item_id": "x", "score": 3, "criteria": {"clarity": 5},
                                                "criteria.accuracy": 4, "usage.calls": 2, "extra.k": "v"}))
    [judgment] = load_judgments(path)
    assert judgment.criteria == {"clarity": 5.0, "accuracy": 4.0} and judgment.usage.calls == 2
    assert judgment.extra == {"k": "v"}
    conflict = _write(tmp_path / "k.jsonl", _jsonl({"item_id": "x", "score": 3, "usage": {"calls": 1}, "usage.calls": 2}))
    with pytest.raises(DataError, match=r"k\.jsonl:1: field 'usage\.calls': given twice"):
        load_judgments(conflict)


def test_parquet_and_dataframe_errors_name_the_row(tmp_path):
    frame = pd.DataFrame({"id": ["a", "b", "c"], "output": ["x", None, "z"]})
    frame.to_parquet(tmp_path / "bad.parquet")
    err = _error(tmp_path / "bad.parquet")
    assert str(err).startswith(f"{tmp_path / 'bad.parquet'}:2: field 'output'")
    err = _error(pd.DataFrame({"id": ["a", np.nan], "output": ["x", "y"]}))
    assert str(err).startswith("<DataFrame>:2: field 'id'")
    err = _error(pd.DataFrame({"id": ["a"], "output": ["x"], "scores.q": [np.inf]}))
    assert str(err).startswith("<DataFrame>:1: field 'scores.q'") and "finite" in str(err)


@pytest.mark.parametrize("content", ["", "\n\n  \n", "id,output\n"])
def test_empty_file_has_no_items(tmp_path, content):
    path = _write(tmp_path / ("e.csv" if "," in content else "e.jsonl"), content)
    assert str(_error(path)) == f"{path}: no items"


def test_unreadable_sources(tmp_path):
    assert "no such file" in str(_error(tmp_path / "absent.jsonl"))
    assert "unknown file format" in str(_error(_write(tmp_path / "x.xlsx", "")))
    assert "gzip" in str(_error(_write(tmp_path / "x.jsonl.gz", "plain")))
    assert "Parquet" in str(_error(_write(tmp_path / "x.parquet", "plain")))
    with pytest.raises(TypeError):
        load_items(42)  # type: ignore[arg-type]


def test_errors_are_never_raw(tmp_path):
    """No pydantic ValidationError, UnicodeDecodeError or JSONDecodeError escapes a loader."""
    for i, content in enumerate([b"\xff\xfe\x00", b'{"id": 1.5, "output": "x"}', b'{"id": {}}', b"nul\x00l",
                                 b'{"id": "a", "output": "x", "extra": [1]}', b"\x80"]):
        with pytest.raises(DataError):
            load_items(_write(tmp_path / f"x{i}.jsonl", content))


# ------------------------------------------------------------------------------------------ writers


def test_failed_save_writes_nothing_and_keeps_the_old_file(tmp_path):
    good = Item(id="a", output="x")
    bad = Item(id="b", output="y", extra={"obj": object()})
    for fmt in ("jsonl", "csv", "parquet"):
        path = tmp_path / f"out.{fmt}"
        with pytest.raises(DataError) as info:
            save_items([good, bad], path)
        assert info.value.field == "extra" and "'b'" in str(info.value)
        assert not path.exists()
        save_items([good], path)
        before = path.read_bytes()
        with pytest.raises(DataError):
            save_items([good, bad], path)
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.jsonl", "out.parquet"]


def test_nan_inside_extra_is_written_as_standard_json_null(tmp_path):
    path = save_items([Item(id="c", output="z", extra={"v": float("nan")})], tmp_path / "nan.jsonl")
    assert path.read_text() == '{"id": "c", "output": "z", "extra": {"v": null}}\n'


def test_save_rejects_unknown_suffix_and_duplicate_ids(tmp_path):
    with pytest.raises(DataError, match="unknown file format"):
        save_items([Item(id="a", output="x")], tmp_path / "out.xlsx")
    with pytest.raises(DataError, match="duplicate id"):
        save_items([Item(id="a", output="x"), Item(id="a", output="y")], tmp_path / "out.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_jsonl_output_is_compact_and_readable(tmp_path):
    path = save_items([Item(id="a", output="héllo")], tmp_path / "x.jsonl")
    assert path.read_text(encoding="utf-8") == '{"id": "a", "output": "héllo"}\n'


# ------------------------------------------------------------------------------------------ judgments

JUDGMENTS = [
    Judgment(item_id="a", score=4.0, criteria={"accuracy": 3.0, "style": 2.5}, explanation="ok", raw="4",
             aspect="coherence", judge="j1", usage=Usage(calls=1, prompt_tokens=10, completion_tokens=2),
             extra={"k": [1]}, item_digest="k7qz2m4xw3vb6nta"),
    Judgment(item_id="b", status="unparsable", reason="no number", raw="hmm", criteria={"accuracy": 1.0}),
    Judgment(item_id="b", label="a", judge="j2"),
    Judgment(item_id="c", label=3, usage=Usage(cost_usd=0.25, latency_s=1.5)),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_judgments_round_trip(tmp_path, fmt):
    path = save_judgments(JUDGMENTS, tmp_path / f"j.{fmt}")
    assert load_judgments(path) == JUDGMENTS


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_judgments_round_trip(tmp_path, fmt):
    assert load_judgments(save_judgments([], tmp_path / f"j.{fmt}")) == []


def test_a_run_folder_reads_as_its_judgments_file(tmp_path):
    save_judgments(JUDGMENTS, tmp_path / "run" / "judgments.jsonl")
    assert load_judgments(tmp_path / "run") == JUDGMENTS
    assert read_teacher(tmp_path / "run", "coherence") == {"a": 4.0}
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"empty[/\\]judgments\.jsonl: no such file"):
        load_judgments(tmp_path / "empty")


def test_judgments_csv_is_flat(tmp_path):
    path = save_judgments(JUDGMENTS, tmp_path / "j.csv")
    header = path.read_text().splitlines()[0].split(",")
    assert {"item_id", "score", "criteria.accuracy", "usage.calls"} <= set(header)
    frame = pd.read_csv(path)
    assert load_judgments(frame) == JUDGMENTS


def test_foreign_judgment_files(tmp_path):
    jsonl = _write(tmp_path / "f.jsonl", _jsonl({"item_id": "x", "score": 2, "judge": "mine", "prompt": "p2"},
                                                 {"item_id": 7, "score": None, "model": "m"}))
    first, second = load_judgments(jsonl)
    assert first.score == 2.0 and first.judge == "mine" and first.extra == {"prompt": "p2"}
    assert second.item_id == "7" and second.score is None and second.extra == {"model": "m"}
    csv_path = _write(tmp_path / "f.csv", "item_id,label,annotator\nx,2,ann\ny,,ann\n")
    a, b = load_judgments(csv_path)
    assert (a.label, a.extra, b.label) == (2, {"annotator": "ann"}, None)
    frame = pd.DataFrame({"item_id": ["x"], "score": [0.5], "run": [np.int64(3)]})
    assert load_judgments(frame)[0].extra == {"run": 3}


def test_bad_judgment_files(tmp_path):
    def error(name: str, content: str) -> str:
        with pytest.raises(DataError) as info:
            load_judgments(_write(tmp_path / name, content))
        return str(info.value)

    assert error("a.jsonl", '{"item_id": "x", "score": 1}\n{"item_id": "y", "verdict": 2}\n').startswith(
        f"{tmp_path / 'a.jsonl'}:2: field 'score': a judgment needs a 'score' and/or a 'label'")
    assert error("b.csv", "item_id,verdict\nx,1\n").startswith(f"{tmp_path / 'b.csv'}:1: field 'score'")
    assert error("c.jsonl", '{"score": 1}\n').startswith(f"{tmp_path / 'c.jsonl'}:1: field 'item_id'")
    assert "finite" in error("d.jsonl", '{"item_id": "x", "score": NaN}\n')
    assert error("e.csv", "item_id,score\nx,1\ny,bad\n").startswith(f"{tmp_path / 'e.csv'}:3: field 'score'")
    assert "cannot carry a score" in error("f.jsonl", '{"item_id": "x", "score": 1, "status": "error", '
                                                     '"reason": "boom"}\n')
    assert load_judgments(_write(tmp_path / "empty.jsonl", "")) == []


# ------------------------------------------------------------------------------------------ appender


def test_appender_appends_and_drops_a_partial_last_line(tmp_path):
    path = tmp_path / "run" / "judgments.jsonl"
    with JsonlAppender(path) as out:
        out.append(JUDGMENTS[0])
        out.extend(JUDGMENTS[1:3])
    assert load_judgments(path) == JUDGMENTS[:3]
    with open(path, "ab") as fh:  # a crash in the middle of a write
        fh.write(b'{"item_id": "c", "sco')
    with pytest.raises(DataError, match="interrupted write"):
        load_judgments(path)
    with pytest.warns(DataWarning, match="partial last line"), JsonlAppender(path) as out:
        assert out.dropped_bytes == len(b'{"item_id": "c", "sco')
        out.append(JUDGMENTS[3])
    assert load_judgments(path) == JUDGMENTS


def test_appender_survives_sigkill(tmp_path):
    """A writer killed mid-stream leaves only whole lines (plus at most one fragment dropped on reopen)."""
    path = tmp_path / "j.jsonl"
    code = (
        "import sys\n"
        "from judgelab.data import JsonlAppender, Judgment\n"
        f"out = JsonlAppender({str(path)!r})\n"
        "i = 0\n"
        "while True:\n"
        "    out.append(Judgment(item_id=f'i{i}', score=float(i), raw='x' * 5000))\n"
        "    print(i, flush=True)\n"
        "    i += 1\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        acknowledged = -1
        deadline = time.monotonic() + 30
        while acknowledged < 20 and time.monotonic() < deadline:
            acknowledged = int(proc.stdout.readline())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    with JsonlAppender(path):  # may warn if the kill landed mid-write
        pass
    judgments = load_judgments(path)
    assert len(judgments) >= acknowledged + 1
    assert [j.item_id for j in judgments] == [f"i{i}" for i in range(len(judgments))]


# ------------------------------------------------------------------------------ published judge outputs


PUBLISHED = [
    {"item_id": "i1", "judge": "Mistral-7B/p1", "prediction": {"coherence": 3.5, "verdict": "a"}, "raw": None},
    {"item_id": "i2", "judge": "Mistral-7B/p1", "prediction": {"coherence": None}, "raw": "no rating"},
    {"item_id": "i1", "judge": "Mistral-7B/p2", "prediction": {"coherence": 2}},
    {"item_id": "i1", "judge": "Beluga", "status": "error", "prediction": {"coherence": 4}},
]


def test_a_field_reads_published_verdicts_and_keeps_what_failed(tmp_path):
    path = _write(tmp_path / "ratings.jsonl", "".join(json.dumps(r) + "\n" for r in PUBLISHED))
    first, missing, second, failed = load_judgments(path, field="prediction.coherence")
    assert (first.score, first.label, first.judge, first.ok) == (3.5, None, "Mistral-7B/p1", True)
    assert first.extra["prediction"] == {"coherence": 3.5, "verdict": "a"}
    assert missing.status == "unparsable" and "prediction.coherence" in missing.reason and missing.raw == "no rating"
    assert second.score == 2.0
    assert failed.status == "error" and failed.score is None and failed.reason  # a failure is never a value
    assert load_judgments(path, field="prediction.verdict")[0].label == "a"  # a string is a label
    with pytest.raises(DataError, match=r"ratings.jsonl:1: .*prediction\.coherence"):
        load_judgments(path)  # without the field: located, and the error names the field to give


def test_a_judge_is_picked_by_name_else_by_prefix(tmp_path):
    path = _write(tmp_path / "ratings.jsonl", "".join(json.dumps(r) + "\n" for r in PUBLISHED))
    assert [j.score for j in load_judgments(path, field="prediction.coherence", judge="Mistral-7B/p2")] == [2.0]
    assert [j.judge for j in load_judgments(path, field="prediction.coherence", judge="Mistral-7B")] == [
        "Mistral-7B/p1", "Mistral-7B/p1", "Mistral-7B/p2"]
    with pytest.raises(ConfigError, match="no judge named 'GPT'.*judges: Beluga, Mistral-7B/p1, Mistral-7B/p2"):
        load_judgments(path, field="prediction.coherence", judge="GPT")


def test_a_field_works_in_tables_and_rejects_what_is_neither_score_nor_label(tmp_path):
    csv_path = _write(tmp_path / "ratings.csv", "item_id,prediction.coherence\ni1,3.5\ni2,\n")
    one, two = load_judgments(csv_path, field="prediction.coherence")
    assert float(one.label) == 3.5 and two.status == "unparsable"  # a CSV cell is text: graded label 3.5
    rows = [{"item_id": "i1", "prediction": {"coherence": True}}]
    path = _write(tmp_path / "bool.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"bool.jsonl:1: field 'prediction.coherence': expected a number"):
        load_judgments(path, field="prediction.coherence")


def test_a_write_that_fills_the_disk_leaves_no_partial_line(tmp_path, monkeypatch):
    """Issue 50, item 16: a write cut by ENOSPC left part of a line, and the next line, once space was back,
    was glued onto it (a line no reader could read). Now the file is cut back to before the failed write."""
    from tests.doubles import FullDisk

    path = tmp_path / "judgments.jsonl"
    out = JsonlAppender(path)
    out.extend(JUDGMENTS[:2])
    before = path.read_bytes()
    disk = FullDisk(monkeypatch, tmp_path, free=10)  # room for 10 bytes of the next line
    with pytest.raises(OSError) as failed:
        out.append(JUDGMENTS[2])
    assert failed.value.errno == errno.ENOSPC
    assert path.read_bytes() == before
    disk.free = None  # space is back
    out.append(JUDGMENTS[3])
    out.close()
    assert load_judgments(path) == [*JUDGMENTS[:2], JUDGMENTS[3]]


def test_a_partial_tail_the_failed_write_could_not_cut_is_cut_before_the_next(tmp_path, monkeypatch):
    from tests.doubles import FullDisk

    path = tmp_path / "judgments.jsonl"
    out = JsonlAppender(path)
    out.append(JUDGMENTS[0])
    disk = FullDisk(monkeypatch, tmp_path, free=10)
    real_truncate = os.ftruncate
    monkeypatch.setattr(os, "ftruncate", lambda fd, size: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with pytest.raises(OSError):
        out.append(JUDGMENTS[1])
    assert not path.read_bytes().endswith(b"\n")  # the part that went out is still there
    monkeypatch.setattr(os, "ftruncate", real_truncate)
    disk.free = None
    with pytest.warns(DataWarning, match="partial last line"):
        out.append(JUDGMENTS[2])
    out.close()
    assert load_judgments(path) == [JUDGMENTS[0], JUDGMENTS[2]]
