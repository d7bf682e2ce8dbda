"""DevAI judgment folders read as items (``--from devai``): the made-up benchmark folder in
tests/data/sources/devai (its README says what it holds), and altered copies a reader must refuse naming
the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import judgelab as jl
from judgelab.data.sources import detect_source, read_source
from judgelab.errors import DataError, JudgelabError, SourceNote

HERE = Path(__file__).resolve().parents[1] / "data" / "sources" / "devai" / "benchmark"
TASK = "01_Word_Count_Toy"
HUMAN_A = Path("judgment/agent-a/human_as_a_judge") / f"{TASK}.json"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "benchmark"
    shutil.copytree(HERE, target)
    return target


def _edit(path: Path, change) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_text(json.dumps(record), encoding="utf-8")


def test_a_clone_its_benchmark_and_its_judgment_folder_are_claimed_as_devai():
    assert detect_source(HERE.parent) == "devai" and len(read_source(HERE.parent).items) == 6
    assert detect_source(HERE) == "devai"
    assert detect_source(HERE / "judgment") == "devai"


def test_one_item_per_requirement_per_agent_with_the_human_value():
    read = read_source(HERE)
    items = {item.id: item for item in read.items}
    assert sorted(items) == [f"{agent}/{TASK}/{k}" for agent in ("agent-a", "agent-b") for k in range(3)]
    one = items[f"agent-a/{TASK}/1"]
    assert one.system_id == "agent-a" and one.group_id == f"{TASK}/1"
    assert one.source.startswith("Please write a script `src/count.py`")
    assert one.extra["requirements"] == [{"id": "1", "criteria": "The word count is saved in `results/count.txt`."}]
    assert one.extra["prerequisites"] == [0] and one.extra["category"] == "Other"
    # agent-a: the consensus file; agent-b: the majority of ann1-ann3 (T,T,F / F,F,F / F,T,T)
    assert [items[f"agent-a/{TASK}/{k}"].scores["satisfied"] for k in range(3)] == [1.0, 1.0, 0.0]
    assert [items[f"agent-b/{TASK}/{k}"].scores["satisfied"] for k in range(3)] == [1.0, 0.0, 1.0]
    assert items[f"agent-b/{TASK}/2"].extra["human"]["evaluators"] == {
        "human_as_a_judge/ann1": False, "human_as_a_judge/ann2": True, "human_as_a_judge/ann3": True}
    assert any("the file's name is read as the task" in note for note in read.notes)


def test_each_judge_and_each_human_evaluator_is_a_judgment():
    read = read_source(HERE)
    assert read.judges() == ["agent_as_a_judge/black_box", "agent_as_a_judge/gray_box", "human_as_a_judge/ann1",
                             "human_as_a_judge/ann2", "human_as_a_judge/ann3"]
    gray = {j.item_id: (j.label, j.score) for j in read.judgments if j.judge == "agent_as_a_judge/gray_box"}
    assert gray == {f"agent-a/{TASK}/0": ("satisfied", 1.0), f"agent-a/{TASK}/1": ("unsatisfied", 0.0),
                    f"agent-a/{TASK}/2": ("unsatisfied", 0.0)}
    unjudged = [j for j in read.judgments if j.judge == "agent_as_a_judge/black_box" and not j.ok]
    assert [(j.item_id, j.status) for j in unjudged] == [(f"agent-b/{TASK}/1", "unparsable")]
    assert any("not judged (satisfied: null)" in note for note in read.notes)


def test_the_run_gives_the_trajectory_and_the_workspace_without_the_judges_cache():
    items = {item.id: item for item in read_source(HERE).items}
    run = items[f"agent-a/{TASK}/0"]
    assert [step.tool for step in run.trajectory] == ["CodeActAgent"] * 3
    assert run.trajectory[1].arguments == "Running command: python src/count.py"
    assert run.trajectory[1].observation.startswith("Traceback") and run.trajectory[2].arguments is None
    assert "- results/top10.png (" in run.output and "=== src/count.py ===" in run.output
    assert "judge/" not in run.output and "tree_structure" not in run.output
    assert [c.id for c in run.contexts] == ["results/count.txt", "src/count.py"]  # the PNG is binary: listed only
    assert items[f"agent-b/{TASK}/0"].output == "" and items[f"agent-b/{TASK}/0"].trajectory is None


def test_meta_measures_a_published_judge_against_the_humans():
    with pytest.warns(SourceNote):  # the reader's notes (an unjudged requirement, a majority) come as warnings
        result = jl.meta(HERE, source="devai", judge="agent_as_a_judge/gray_box", aspect="satisfied", bootstrap=0)
    rows = result.to_pandas().set_index("statistic")
    assert rows.loc["accuracy", "value"] == pytest.approx(2 / 3) and rows.loc["accuracy", "n"] == 3


def test_a_requirement_without_its_id_is_refused_naming_the_file_and_field(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / HUMAN_A, lambda r: r["requirements"][1].pop("requirement_id"))
    with pytest.raises(DataError) as raised:
        read_source(folder, "devai")
    assert HUMAN_A.name in str(raised.value) and raised.value.field == "requirements[1].requirement_id"


@pytest.mark.parametrize("verdict", ["yes", 1, [True]])
def test_a_verdict_of_the_wrong_type_is_refused_naming_the_file_and_field(tmp_path, verdict):
    folder = _copy(tmp_path)
    judged = Path("judgment/agent-b/agent_as_a_judge/black_box") / f"{TASK}.json"
    _edit(folder / judged, lambda r: r["requirements"][2].update(satisfied=verdict))
    with pytest.raises(DataError) as raised:
        read_source(folder, "devai")
    assert str(folder / judged) in str(raised.value) and raised.value.field == "requirements[2].satisfied"
    assert "expected true, false or null" in str(raised.value)


@pytest.mark.parametrize(("change", "field"), [
    (lambda r: r.update(requirements={"0": {}}), None),
    (lambda r: r["requirements"].__setitem__(0, "a text"), None),
    (lambda r: r["requirements"][0].update(criteria=None), None),
    (lambda r: r.pop("query"), "query"),
])
def test_a_file_of_the_wrong_shape_is_refused_naming_it(tmp_path, change, field):
    folder = _copy(tmp_path)
    _edit(folder / HUMAN_A, change)
    with pytest.raises(DataError) as raised:
        read_source(folder, "devai")
    assert HUMAN_A.name in str(raised.value)
    assert field is None or raised.value.field == field


@pytest.mark.parametrize("content", [b"", b"not json", b"[1, 2]", b'{"name": "x", "query": "q", "requi'])
def test_a_hostile_judgment_file_is_a_judgelab_error_naming_it(tmp_path, content):
    folder = _copy(tmp_path)
    (folder / HUMAN_A).write_bytes(content)
    with pytest.raises(JudgelabError) as raised:
        read_source(folder, "devai")
    assert HUMAN_A.name in str(raised.value)


def test_a_bad_trajectory_step_is_refused_naming_the_file_and_step(tmp_path):
    folder = _copy(tmp_path)
    trajectory = folder / "trajectories" / "agent-a" / f"{TASK}.json"
    steps = json.loads(trajectory.read_text(encoding="utf-8"))
    steps[1]["agent"]["action"] = {"cmd": "python"}
    trajectory.write_text(json.dumps(steps), encoding="utf-8")
    with pytest.raises(DataError, match=r"\[1\]\.agent\.action is an object") as raised:
        read_source(folder, "devai")
    assert trajectory.name in str(raised.value)


def test_a_requirement_reworded_in_another_judges_file_is_read_and_noted(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / HUMAN_A, lambda r: r["requirements"][2].update(criteria="A plot of the top words is saved."))
    read = read_source(folder, "devai")
    item = next(i for i in read.items if i.id == f"agent-a/{TASK}/2")
    assert item.extra["criteria_variants"] == {"A plot of the top words is saved.": HUMAN_A.as_posix()}
    assert any("worded differently" in note for note in read.notes)


def test_a_folder_without_judgment_files_is_not_claimed(tmp_path):
    (tmp_path / "agent-a" / "notes").mkdir(parents=True)
    assert detect_source(tmp_path) is None
