"""The count of JSON values that bounds what a parsed input may take (``files.JsonBudget``, issue 50
item 8): exact outside strings whatever the strings hold, spent across the documents of one input."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import files
from judgelab.errors import DataError

_TEXT = st.text(alphabet=st.sampled_from(list('{[,:]}"\\ aé\u2028\n')), max_size=12)
_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | _TEXT,
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                       max_leaves=30)


def _marks(value) -> int:
    """``{[,:`` a JSON text of ``value`` holds outside its strings, from the value itself."""
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(map(_marks, value))
    if isinstance(value, dict):
        return 1 + max(len(value) - 1, 0) + len(value) + sum(map(_marks, value.values()))
    return 0


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, ascii_only=st.booleans(), chunk=st.integers(1, 9))
def test_the_count_outside_strings_is_exact_across_chunks(value, ascii_only, chunk):
    text = json.dumps(value, ensure_ascii=ascii_only)
    with mock.patch.object(files, "_SCAN_CHUNK", chunk):  # a string's quotes in different chunks
        assert files._outside_strings(text.encode()) == _marks(value)
        assert files._json_values(text, most=-1) == _marks(value)  # the exact count, from a str too


def test_marks_inside_strings_count_only_when_the_quick_count_is_past_the_budget():
    text = json.dumps({"a": "{[,:" * 10})
    assert files._json_values(text, most=100) == 42  # within: the quick count stands
    assert files._json_values(text, most=10) == 2  # past it: recounted outside the strings


def test_a_budget_is_spent_across_documents_and_names_the_place(monkeypatch):
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "80")  # 10 values
    budget = files.JsonBudget()
    budget.spend(b"[1,2,3,4,5]", "log.eval")
    budget.spend('{"a": "x,y,z,w,v,u"}', "log.eval")  # 2 outside the string
    with pytest.raises(DataError) as refused:
        budget.spend("[1,2,3,4]", "items.csv", 4, "extra")  # 4 more: 11
    assert str(refused.value).startswith("items.csv:4: field 'extra': holds more than 10 JSON values")
    assert "JUDGELAB_MAX_INPUT_BYTES" in str(refused.value)


def test_read_json_refuses_more_values_than_its_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1K")
    path = tmp_path / "systems.json"
    path.write_text("[" + ",".join(["{}"] * 200) + "]")
    with pytest.raises(DataError, match=r"systems.json: holds more than 128 JSON values"):
        files.read_json(path)
    path.write_text(json.dumps({"note": "," * 900}))
    assert files.read_json(path) == {"note": "," * 900}
