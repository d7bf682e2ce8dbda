"""`judgelab audit` as a user runs it: published judges' verdicts, the probes with a real model,
and bad input (exit 2, one line, nothing written)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _audit_json(*args):
    done = run_cli("audit", *args, "--json", "--bootstrap", "50", timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["audit"]
    return {row["name"]: row for row in report["rows"]}, report


def test_llmbar_evaluator_both_orders_against_a_count_from_the_file(benchmarks_dir):
    results = benchmarks_dir / "reference" / "llmbar_evaluator_results.jsonl"
    rows, report = _audit_json("-d", benchmarks_dir / "llmbar.jsonl", "-j", results,
                               "--field", "prediction.swap_false", "--swapped-field", "prediction.swap_true",
                               "--judge", "ChatGPT/Vanilla")
    mine = [r["prediction"] for r in _rows(results) if r["judge"] == "ChatGPT/Vanilla"]
    both = [p for p in mine if p["swap_false"] and p["swap_true"]]
    flips = sum(p["swap_false"] != p["swap_true"] for p in both)
    first_picks = sum((p["swap_false"] == "a") + (p["swap_true"] == "b") for p in both)
    assert report["both_orders"] and report["judge"] == "ChatGPT/Vanilla"
    assert rows["flip rate"]["value"] == pytest.approx(flips / len(both)) and rows["flip rate"]["n"] == len(both)
    assert rows["first-position rate (both orders)"]["value"] == pytest.approx(first_picks / (2 * len(both)))
    low, high = rows["flip rate"]["ci"]
    assert low < flips / len(both) < high
    assert "length coefficient" in rows and rows["length coefficient"]["ci"] is not None


def test_arena_judge_one_order_against_the_human_votes(benchmarks_dir):
    arena = benchmarks_dir / "chatbot_arena"
    rows, report = _audit_json("-d", arena / "comparisons.jsonl", "-j", arena / "judgments.jsonl",
                               "--field", "prediction", "--judge", "gpt-3.5-turbo", "--family", "gpt-3.5")
    verdicts = [r["prediction"] for r in _rows(arena / "judgments.jsonl") if r["judge"] == "gpt-3.5-turbo"]
    humans = [r["label"] for r in _rows(arena / "comparisons.jsonl")]
    judge_first = verdicts.count("a") / sum(v in ("a", "b") for v in verdicts)
    human_first = humans.count("a") / sum(v in ("a", "b") for v in humans)
    assert rows["first-position rate, judge"]["value"] == pytest.approx(judge_first)
    assert rows["first-position rate, humans"]["value"] == pytest.approx(human_first)
    difference = rows["first-position rate, judge - humans"]
    assert difference["value"] == pytest.approx(judge_first - human_first) and difference["ci"][0] > 0.3
    assert rows["tie rate, humans"]["value"] == pytest.approx(sum(h.startswith("tie") for h in humans) / len(humans))
    assert "gpt-3.5 win share, judge - humans" in rows
    assert any("no output_a/output_b texts" in line for line in report["not_measured"])


def test_tables_fit_80_columns(benchmarks_dir):
    arena = benchmarks_dir / "chatbot_arena"
    done = run_cli("audit", "-d", arena / "comparisons.jsonl", "-j", arena / "judgments.jsonl", "--field",
                   "prediction", "--judge", "gpt-4-0125", "--bootstrap", "50", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "first-position rate, judge - humans" in done.stdout.replace("\n│", "")
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


@pytest.fixture
def small(tmp_path):
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"c{i}", "system_a": "x", "system_b": "y", "label": "ab"[i % 2],
         "output_a": "short" * (1 + i), "output_b": "long text " * (5 - i % 3)} for i in range(6)])
    judgments = write_jsonl(tmp_path / "judgments.jsonl",
                            [{"item_id": f"c{i}", "label": "a"} for i in range(6)])
    return tmp_path, items, judgments


def _refused(capsys, *args) -> str:
    code, err = run_main_in_process(capsys, "audit", *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_verdict_outside_a_b_tie_is_named_with_file_and_line(capsys, small):
    folder, items, _ = small
    bad = write_jsonl(folder / "bad.jsonl", [{"item_id": "c0", "label": "a"}, {"item_id": "c1", "label": "A>B"}])
    assert "bad.jsonl:2" in _refused(capsys, "-d", items, "-j", bad)


@pytest.mark.parametrize(("change", "message"), [
    ("self", "compared with itself"),
    ("human", "not in the data"),
    ("human-score", "a pairwise verdict is 'a', 'b' or 'tie'"),
    ("baseline", "is not a system in the data"),
    ("unknown-item", "not in the data"),
    ("probe", "choose among"),
    ("model-without-probe", "--probe"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(capsys, small, change, message):
    folder, items, judgments = small
    args = ["-d", items, "-j", judgments]
    if change == "self":
        args[1] = write_jsonl(folder / "self.jsonl", [{"id": "c0", "system_a": "x", "system_b": "x", "label": "a"}])
    elif change == "human":
        args += ["--human", write_jsonl(folder / "labels.jsonl", [{"item_id": "zz", "label": "a"}])]
    elif change == "human-score":
        args += ["--human", write_jsonl(folder / "labels.jsonl", [{"item_id": "c0", "value": 4}])]
    elif change == "baseline":
        args += ["--baseline", "nobody"]
    elif change == "unknown-item":
        args[3] = write_jsonl(folder / "more.jsonl", [{"item_id": "c9", "label": "a"}])
    elif change == "probe":
        args += ["--probe", "shuffle"]
    else:
        args += ["--model", "smollm2-135m"]
    before = sorted(p.name for p in folder.iterdir())
    assert message in _refused(capsys, *args)
    assert sorted(p.name for p in folder.iterdir()) == before


def test_probes_refuse_items_without_texts(capsys, benchmarks_dir):
    line = _refused(capsys, "-d", benchmarks_dir / "chatbot_arena" / "comparisons.jsonl", "--probe", "pad")
    assert "comparisons.jsonl:1" in line and "output_a and output_b" in line


def test_probes_with_the_small_model_on_llmbar_pairs(tmp_path, benchmarks_dir, test_model_path):
    rows = sorted(_rows(benchmarks_dir / "llmbar.jsonl"),
                  key=lambda r: len(r["instruction"]) + len(r["output_a"]) + len(r["output_b"]))[:4]
    items = write_jsonl(tmp_path / "pairs.jsonl", rows)
    config = tmp_path / "judge.yaml"
    # One order (the swap probe then sees the raw order effect); no rules: shorter prompts, a quicker test.
    config.write_text(yaml.safe_dump({"kind": "pairwise", "swap": False, "rules": False}))
    cache = tmp_path / "cache.sqlite"
    args = ("audit", "-d", items, "--probe", "swap,pad,reformat", "--config", config, "--model", test_model_path,
            "--cache-path", cache, "--json")
    done = run_cli(*args, timeout=600)
    assert done.returncode == 0, done.stderr
    probes = json.loads(done.stdout)["probes"]
    assert set(probes) == {"swap", "pad", "reformat"}
    for name, result in probes.items():
        flip = result["flip_rate"]
        assert flip["n"] + result["failed"] == 4
        if flip["n"]:
            assert 0 <= flip["value"] <= 1 and flip["ci"][0] <= flip["value"] <= flip["ci"][1], name
    assert probes["swap"]["toward_perturbed"] is None and probes["pad"]["toward_perturbed"] is not None
    again = run_cli(*args, timeout=600)  # every request cached: the same figures
    assert again.returncode == 0 and json.loads(again.stdout)["probes"] == probes


def test_a_pairwise_run_folder_is_audited_from_its_verdicts_of_both_orders(small):
    # As PairwiseJudge writes them: the final label (a flip is a tie) and each order's verdict.
    folder, items, _ = small
    orders = [("a", "a"), ("a", "b"), ("b", "b"), ("a", "b"), (None, "a"), ("b", "a")]
    judgments = [{"item_id": f"c{i}", "label": None if first is None else first if first == second else "tie",
                  "status": "ok" if first else "unparsable", "reason": None if first else "original order: no verdict",
                  "judge": "pairwise/abc", "extra": {"verdicts": {"original": first, "swapped": second}}}
                 for i, (first, second) in enumerate(orders)]
    run = folder / "run"
    run.mkdir()
    write_jsonl(run / "judgments.jsonl", judgments)
    rows, report = _audit_json("-d", items, "-j", run)
    assert report["both_orders"] and report["judge"] == "pairwise/abc"
    assert rows["flip rate"]["value"] == pytest.approx(3 / 5) and rows["flip rate"]["n"] == 5
    # first-shown picks: original 'a' on c0, c1, c3 and swapped 'b' on c1, c2, c3: 6 of 10 decisive verdicts
    assert rows["first-position rate (both orders)"]["value"] == pytest.approx(6 / 10)


def test_human_labels_from_several_annotators_replace_the_items_labels(small):
    folder, items, judgments = small  # the judge always says "a"
    labels = write_jsonl(folder / "labels.jsonl", [
        {"item_id": "c0", "value": "b", "annotator": "x"}, {"item_id": "c0", "value": "b", "annotator": "y"},
        {"item_id": "c1", "value": "a", "annotator": "x"}, {"item_id": "c1", "value": "b", "annotator": "y"},
        {"item_id": "c2", "value": "a", "annotator": "x"}])
    rows, _ = _audit_json("-d", items, "-j", judgments, "--human", labels)
    # humans: c0 b, c1 tie (a and b), c2 a; c3-c5 unlabelled. Decisive: c0, c2 -> first-position rate 1/2
    assert rows["first-position rate, humans"]["value"] == pytest.approx(0.5)
    assert rows["tie rate, humans"]["value"] == pytest.approx(1 / 3) and rows["tie rate, humans"]["n"] == 3
