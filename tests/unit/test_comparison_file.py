"""Comparisons read from files in one pass (evaluate/comparison_file.py): the same report as the objects
give, the same refusals, and the routes taken by the CLI and ``jl.evaluate``."""

from __future__ import annotations

import json
import random

import pytest

from judgelab.data.io import load_items, load_judgments
from judgelab.errors import ConfigError, DataError
from judgelab.evaluate import evaluate
from judgelab.evaluate.comparison_file import ComparisonRow, ComparisonTable, read_comparison_table


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def comparisons(n=400, k=5, labelled=120, seed=0):
    rng = random.Random(seed)
    items, judged = [], []
    for i in range(n):
        a, b = rng.sample(range(k), 2)
        record = {"id": f"c{i}", "system_a": f"s{a}", "system_b": f"s{b}"}
        if i < labelled:
            record["label"] = "a" if a < b or rng.random() < 0.3 else rng.choice(["b", "tie"])
        items.append(record)
        if i % 7:  # some comparisons without a verdict
            judged.append({"item_id": f"c{i}", "judge": "gpt", "label": record.get("label") or rng.choice("ab")})
    return items, judged


def both_routes(tmp_path, items, judged, **options):
    data, verdicts = write(tmp_path / "items.jsonl", items), write(tmp_path / "judged.jsonl", judged)
    table = read_comparison_table(data, verdicts, judge=options.get("judge"))
    assert isinstance(table, ComparisonTable)
    whole = evaluate(load_items(data), load_judgments(verdicts, labels=("a", "b", "tie")), **options).to_dict()
    return whole, evaluate(table, [], **options).to_dict()


@pytest.mark.parametrize("options", [{"human_ids": "all"}, {}, {"human_ids": "all", "estimand": "bradley-terry"},
                                     {"human_ids": "all", "judge": "gp"}])
def test_the_table_gives_the_report_the_objects_give(tmp_path, options):
    whole, table = both_routes(tmp_path, *comparisons(), **options)
    assert json.dumps(whole, sort_keys=True) == json.dumps(table, sort_keys=True)
    assert table["coverage"]["without_verdict"] > 0


def test_a_row_is_small_and_system_names_are_shared(tmp_path):
    import sys

    items, judged = comparisons(n=50)
    table = read_comparison_table(write(tmp_path / "i.jsonl", items), write(tmp_path / "j.jsonl", judged))
    assert sys.getsizeof(table.rows[0]) < 100  # an Item is about 1.3 KB with its dicts
    assert len({id(row.system_a) for row in table.rows}) <= 5


@pytest.mark.parametrize(("line", "bad", "message"), [
    (3, {"id": "c0", "system_a": "x", "system_b": "y"}, r"duplicate id 'c0' \(first used on line 1\)"),
    (2, {"id": "p", "source": "s", "output": "o", "system_id": "x"}, "a pointwise item among comparisons"),
    (2, {"id": "n", "output_a": "x", "output_b": "y"}, "names no systems"),
    (2, {"id": "q", "system_a": "x", "system_b": "y", "label": "maybe"}, "label"),
])
def test_a_bad_comparison_is_refused_naming_its_file_and_line(tmp_path, line, bad, message):
    items, judged = comparisons(n=4)
    items.insert(line - 1, bad)
    data = write(tmp_path / "items.jsonl", items)
    with pytest.raises(DataError, match=message) as caught:
        read_comparison_table(data, write(tmp_path / "judged.jsonl", judged))
    assert f"items.jsonl:{line}" in str(caught.value)


def test_verdicts_are_chosen_and_refused_as_the_objects_do(tmp_path):
    items, judged = comparisons(n=20)
    data = write(tmp_path / "items.jsonl", items)
    other = [{**j, "judge": "claude"} for j in judged]
    with pytest.raises(ConfigError, match="come from 2 judges"):
        read_comparison_table(data, write(tmp_path / "two.jsonl", judged + other))
    with pytest.raises(ConfigError, match="no judgment from judge 'llama'"):
        read_comparison_table(data, write(tmp_path / "two.jsonl", judged + other), judge="llama")
    assert read_comparison_table(data, tmp_path / "two.jsonl", judge="claude").unknown_judgments == 0
    with pytest.raises(DataError, match="two judgments for item 'c1'"):
        read_comparison_table(data, write(tmp_path / "twice.jsonl", judged + judged[:1]))
    unnamed = [{k: v for k, v in j.items() if k != "judge"} for j in judged[:1]]  # the same comparison, no judge
    with pytest.raises(DataError, match="two judgments for item 'c1'"):
        read_comparison_table(data, write(tmp_path / "mixed.jsonl", judged + unnamed))
    with pytest.raises(DataError, match="judged.jsonl:2"):
        read_comparison_table(data, write(tmp_path / "judged.jsonl", [judged[0], {"item_id": "c2", "label": "x"}]))
    extra = read_comparison_table(data, write(tmp_path / "more.jsonl", judged + [{"item_id": "zz", "label": "a"}]))
    assert extra.unknown_judgments == 1


def test_other_inputs_take_the_object_route(tmp_path):
    items, judged = comparisons(n=10)
    verdicts = write(tmp_path / "judged.jsonl", judged)
    pointwise = write(tmp_path / "p.jsonl", [{"id": "1", "output": "o", "system_id": "x"}])
    assert read_comparison_table(pointwise, verdicts) is None
    assert read_comparison_table(write(tmp_path / "c.jsonl", items), [verdicts, verdicts]) is None
    assert read_comparison_table(tmp_path / "c.jsonl", verdicts, judge=["gpt", "claude"]) is None
    csv = tmp_path / "c.csv"
    csv.write_text("id,system_a,system_b\n1,x,y\n")
    assert read_comparison_table(csv, verdicts) is None


def test_a_labels_file_reads_the_rows_as_items(tmp_path):
    """``--human labels.jsonl`` is checked against the rows as against items: an unknown id is refused."""
    from judgelab.data.labels import values_for_items

    items, judged = comparisons(n=10)
    table = read_comparison_table(write(tmp_path / "c.jsonl", items), write(tmp_path / "j.jsonl", judged))
    labels = write(tmp_path / "labels.jsonl", [{"item_id": "c3", "value": "b"}])
    assert values_for_items(labels, table.rows)[0] == {"c3": 0.0}
    with pytest.raises(DataError, match="not in the data"):
        values_for_items(write(tmp_path / "bad.jsonl", [{"item_id": "zz", "value": "b"}]), table.rows)
    assert ComparisonRow("x", "a", "b", None).aspect_scale("preference") is None


def test_the_cli_and_the_front_door_take_the_table(tmp_path, monkeypatch):
    import judgelab as jl
    from judgelab.evaluate import comparison_file

    items, judged = comparisons()
    data, verdicts = write(tmp_path / "items.jsonl", items), write(tmp_path / "judged.jsonl", judged)
    read = []
    original = comparison_file.read_comparison_table

    def spy(*args, **kwargs):
        read.append(result := original(*args, **kwargs))
        return result

    monkeypatch.setattr(comparison_file, "read_comparison_table", spy)
    evaluation = jl.evaluate(data, verdicts, human_ids="all")
    assert isinstance(read[-1], ComparisonTable)
    whole = evaluate(load_items(data), load_judgments(verdicts, labels=("a", "b", "tie")), human_ids="all")
    assert evaluation.to_dict() == whole.to_dict()
    from tests.e2e.cli import run_cli

    done = run_cli("evaluate", "--data", data, "--judgments", verdicts, "--human-ids", "all", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["coverage"] == whole.to_dict()["coverage"]
