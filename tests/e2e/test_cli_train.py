"""`judgelab train` on bad input: a clear message, exit code 2, and nothing written."""

from __future__ import annotations

import json

import pytest

from tests.e2e.cli import run_cli


def _items(path, n, score=lambda i: 1 + i % 3, groups=4):
    rows = [{"id": f"i{i}", "group_id": f"g{i % groups}", "source": "s", "output": f"o {i}",
             "scores": {"coherence": score(i)}} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("case", "message"), [
    ("constant", "every label is 2: constant labels teach nothing"),
    ("few", "only 5 labelled items; training needs at least 10"),
    ("aspect", "no item has a human score for aspect 'fluency'"),
    ("teacher", "the teacher rated none of the 12 items"),
    ("stack", "--stack fits its stacker on human scores; it cannot be combined with --teacher"),
    ("labels-stack", "--labels gives the cross-encoder graded labels; a --stack judge gives scores only"),
    ("labels-fraction", "graded labels need whole-number 'coherence' scores (e.g. relevance 0-3); got 4 such as 1.5"),
    ("labels-no-val", "graded labels are learnt on the validation groups: give a --val-fraction above 0"),
])
def test_bad_training_input_is_refused_before_anything_is_written(tmp_path, case, message):
    data = {"constant": lambda p: _items(p, 12, score=lambda i: 2), "few": lambda p: _items(p, 5),
            "labels-fraction": lambda p: _items(p, 12, score=lambda i: 1.5 if i % 3 == 0 else 2)}.get(
        case, lambda p: _items(p, 12))(tmp_path / "items.jsonl")
    args = ["train", "--data", data, "--aspect", "fluency" if case == "aspect" else "coherence",
            "--out", tmp_path / "out"]
    if case == "stack":
        args += ["--stack", "--teacher", data]
    if case.startswith("labels"):
        args += ["--labels", "ordinal"] + {"labels-stack": ["--stack"], "labels-no-val": ["--val-fraction", "0"]}.get(case, [])
    if case == "teacher":
        teacher = tmp_path / "teacher.jsonl"
        teacher.write_text(json.dumps({"item_id": "elsewhere-1", "score": 3.0}) + "\n")
        args += ["--teacher", teacher]
    result = run_cli(*args, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in " ".join((result.stdout + result.stderr).split())
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out.*"))


def test_existing_output_folder_is_not_overwritten(tmp_path):
    data = _items(tmp_path / "items.jsonl", 12)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    result = run_cli("train", "--data", data, "--aspect", "coherence", "--out", tmp_path / "out", timeout=120)
    assert result.returncode == 2 and "exists and is not empty" in result.stdout + result.stderr
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
