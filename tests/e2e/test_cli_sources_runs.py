"""Other tools' runs as they really end up on disk (issue 50): an Inspect run killed mid-way, epochs
reduced by the log's reducer, yes/no grades, an lm-eval task with two filters, promptfoo's and
DeepEval's pass rates, a log folder holding a rerun, and hostile files (wrong field types, deep nesting,
a FIFO, escape sequences in names). The files are real ones (tests/data/sources/README.md); the figures
expected are the tools' own (Inspect's results, lm-eval's results file, promptfoo's and DeepEval's counts).
Altered copies are written into a temporary folder, as in test_cli_sources.py."""

from __future__ import annotations

import csv
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.e2e.cli import run_cli, run_main_captured, write_jsonl

SOURCES = Path(__file__).resolve().parents[1] / "data" / "sources"
INSPECT, PROMPTFOO, DEEPEVAL = SOURCES / "inspect", SOURCES / "promptfoo", SOURCES / "deepeval"
FILTERS = SOURCES / "lm-eval-filters"
run = run_main_captured


def evaluate_json(capsys, *args) -> tuple[dict, str]:
    code, out, err = run(capsys, "evaluate", *args, "--json", "--bootstrap", "50")
    assert code == 0, err
    return json.loads(out), err


def judge_values(report: dict) -> dict[str, float]:
    return {system: report["estimators"]["judge"][system]["value"] for system in report["systems"]}


def one_error(code: int, out: str, err: str) -> str:
    """The single line a refusal prints (exit 2, nothing on stdout)."""
    assert code == 2 and out == "", err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def members(log: Path) -> dict:
    from judgelab.data.sources.inspect import _archive

    return _archive(log)


def write_eval(target: Path, contents: dict) -> Path:
    """An .eval archive of these members (stored uncompressed: the reader reads either)."""
    with zipfile.ZipFile(target, "w") as archive:
        for name, value in contents.items():
            archive.writestr(name, value if isinstance(value, str) else json.dumps(value))
    return target


def inspect_results(log: Path) -> dict[str, float]:
    """Inspect's own figure per scorer (and reducer, when the log has several): its results' first metric."""
    scores = members(log)["header.json"]["results"]["scores"]
    several = len({score.get("reducer") for score in scores}) > 1
    return {f"{s['name']}:{s['reducer']}" if several else s["name"]: next(iter(s["metrics"].values()))["value"]
            for s in scores}


# -- 1: a killed Inspect run ------------------------------------------------------------------------------
KILLED = next((INSPECT / "killed").glob("*.eval"))


def test_a_killed_inspect_run_is_refused_unless_read_partial(capsys, tmp_path):
    held = members(KILLED)
    assert "header.json" not in held and "_journal/start.json" in held  # Inspect: status 'started'
    code, out, err = run(capsys, "evaluate", "--data", KILLED.parent, "--judge", "match", "--out", tmp_path / "r")
    line = one_error(code, out, err)
    assert KILLED.name in line and "did not finish" in line and "4 of 8 samples" in line and "--partial" in line
    assert not (tmp_path / "r").exists()
    report, err = evaluate_json(capsys, "--data", KILLED.parent, "--judge", "match", "--partial")
    samples = [held[name] for name in held if name.startswith("samples/")]
    correct = [s["scores"]["match"]["value"] == "C" for s in samples]
    assert judge_values(report) == {"mockllm/model": pytest.approx(sum(correct) / len(correct))}
    assert "it holds 4 of 8 samples: read as it is (--partial)" in err
    code, _, err = run(capsys, "meta", "--data", KILLED, "--judge", "match", "--human", tmp_path / "none.jsonl")
    assert code == 2 and "--partial" in err  # meta and audit take it too


def test_python_reads_a_killed_run_with_partial():
    import judgelab as jl
    from judgelab.data.sources import read_source
    from judgelab.errors import DataError

    with pytest.raises(DataError, match="partial=True"):
        read_source(KILLED)
    read = read_source(KILLED, partial=True)
    assert len(read.items) == 4 and any("4 of 8 samples" in note for note in read.notes)
    with pytest.warns(UserWarning, match="4 of 8 samples"):
        assert len(jl.load(KILLED, partial=True).items) == 4


# -- 2 and 5: lm-eval filters, values that are no number -------------------------------------------------
def test_lm_eval_each_filter_is_its_own_judge(capsys):
    results = json.loads(next(FILTERS.rglob("results_*.json")).read_text())
    model, own = results["model_name"], results["results"]["jl_quiz_filters"]
    for name in ("exact_match,strict-match", "exact_match,loose"):
        report, err = evaluate_json(capsys, "--data", FILTERS, "--judge", f"jl_quiz_filters/{name}")
        assert judge_values(report) == {model: pytest.approx(own[name])}  # 0.6 and 0.0
        assert report["coverage"]["units"] == 5  # one item per document
    assert "bleu,loose 5, bleu,strict-match 5" in err  # BLEU's per-document pairs: counted per metric
    code, out, err = run(capsys, "evaluate", "--data", FILTERS)
    line = one_error(code, out, err.split("\n", 1)[1])  # after the note
    for name in ("bleu,loose", "bleu,strict-match", "exact_match,loose", "exact_match,strict-match"):
        assert f"jl_quiz_filters/{name}" in line


def test_lm_eval_item_keeps_each_filters_response():
    from judgelab.data.sources import read_source

    read = read_source(FILTERS)
    first = read.items[0]
    assert first.output == "lol" and first.extra["filtered"] == {"strict-match": "lol", "loose": "[invalid]"}


# -- 3: epochs reduced as the log says ----------------------------------------------------------------------
@pytest.mark.parametrize("case", ["epochs", "reducers"])
def test_inspect_epochs_reduced_by_the_logs_reducer(capsys, case):
    log = next((INSPECT / case).glob("*.eval"))
    own = inspect_results(log)
    assert len(own) == (2 if case == "epochs" else 12)  # max alone; six reducers x two scorers
    for judge, value in own.items():
        report, _ = evaluate_json(capsys, "--data", log, "--judge", judge)
        assert judge_values(report) == {"mockllm/model": pytest.approx(value)}, judge
        assert report["coverage"]["units"] == 4  # one item per sample, not per epoch


def test_an_unknown_reducer_is_refused_by_name(capsys, tmp_path):
    contents = members(next((INSPECT / "epochs").glob("*.eval")))
    contents["header.json"]["eval"]["config"]["epochs_reducer"] = ["trimmed_mean"]
    log = write_eval(tmp_path / "log.eval", contents)
    line = one_error(*run(capsys, "evaluate", "--data", log, "--judge", "match"))
    assert "log.eval" in line and "'trimmed_mean'" in line and "at_least_<k>" in line


# -- 4: values as the tool reads them; every refusal names its file -------------------------------------
def test_inspect_yes_no_grades_read_as_inspect_reads_them(capsys, tmp_path):
    log = next((INSPECT / "yesno").glob("*.eval"))
    report, _ = evaluate_json(capsys, "--data", log, "--judge", "says_yes")
    assert judge_values(report) == {"mockllm/model": pytest.approx(inspect_results(log)["says_yes"])}
    contents = members(log)
    sample = next(name for name in contents if name.startswith("samples/"))
    contents[sample]["scores"]["says_yes"]["value"] = "maybe"  # Inspect warns and counts it 0
    from judgelab.data.sources import read_source

    read = read_source(write_eval(tmp_path / "log.eval", contents))
    unread = [j for j in read.judgments if j.status == "unparsable"]
    assert len(unread) == 1 and "'maybe' is not a value Inspect reads as a number" in unread[0].reason
    assert any("1 score(s) that are not a value Inspect reads" in note for note in read.notes)


def _altered(source: Path, target: Path, change) -> Path:
    document = json.loads(source.read_text())
    change(document)
    target.write_text(json.dumps(document))
    return target


def _set_score(path: list, value):
    def change(document):
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


DEEPEVAL_RUN = sorted((DEEPEVAL / "runs").glob("*.json"))[1]  # sloppy: scores below 1


def test_a_score_that_is_no_number_is_refused_naming_the_file_and_record(capsys, tmp_path):
    component = ["results", "results", 3, "gradingResult", "componentResults", 1, "score"]
    results = _altered(PROMPTFOO / "results.json", tmp_path / "results.json", _set_score(component, "0.8"))
    line = one_error(*run(capsys, "evaluate", "--data", results, "--judge", "llm-rubric"))
    assert "results.json" in line and "results.results.3" in line and "'score' is a string" in line
    run_file = _altered(DEEPEVAL_RUN, tmp_path / "test_run_1.json",
                        _set_score(["testCases", 1, "metricsData", 0, "score"], "high"))
    line = one_error(*run(capsys, "evaluate", "--data", run_file, "--judge", "Correctness [GEval]"))
    assert "test_run_1.json" in line and "'Correctness [GEval]'" in line and "'score' is a string" in line


def test_deepeval_reads_a_number_written_as_text_as_its_models_do(capsys, tmp_path):
    document = json.loads(DEEPEVAL_RUN.read_text())
    scores = [case["metricsData"][0]["score"] for case in document["testCases"]]
    run_file = _altered(DEEPEVAL_RUN, tmp_path / "test_run_1.json",
                        _set_score(["testCases", 0, "metricsData", 0, "score"], str(scores[0])))
    report, _ = evaluate_json(capsys, "--data", run_file, "--judge", "Correctness [GEval]")
    assert list(judge_values(report).values()) == [pytest.approx(sum(scores) / len(scores))]


# -- 5: pass rates, --field with --from ----------------------------------------------------------------
def test_promptfoo_pass_rate_is_a_judge(capsys):
    document = json.loads((PROMPTFOO / "results.json").read_text())
    rows, stats = document["results"]["results"], document["results"]["stats"]
    report, _ = evaluate_json(capsys, "--data", PROMPTFOO / "results.json", "--judge", "promptfoo/pass")
    for provider, value in judge_values(report).items():
        mine = [row["success"] for row in rows if row["provider"]["label"] == provider]
        assert value == pytest.approx(sum(mine) / len(mine))
    from judgelab.data.sources import read_source

    passed = [j.score for j in read_source(PROMPTFOO / "results.json").judgments if j.judge == "promptfoo/pass"]
    assert sum(passed) / len(passed) == pytest.approx(stats["successes"] / (stats["successes"] + stats["failures"]))
    rubric, _ = evaluate_json(capsys, "--data", PROMPTFOO / "results.json", "--judge", "llm-rubric/pass")
    assert set(judge_values(rubric)) == set(judge_values(report))


def test_deepeval_pass_rates_are_judges(capsys):
    runs = {json.loads(p.read_text())["hyperparameters"]["model"]: json.loads(p.read_text())
            for p in (DEEPEVAL / "runs").glob("*.json")}
    report, _ = evaluate_json(capsys, "--data", DEEPEVAL / "runs", "--judge", "deepeval/pass")
    assert judge_values(report) == {model: pytest.approx(r["testPassed"] / (r["testPassed"] + r["testFailed"]))
                                    for model, r in runs.items()}
    for metric in ("Correctness [GEval]", "Exact Match"):
        report, _ = evaluate_json(capsys, "--data", DEEPEVAL / "runs", "--judge", f"{metric}/pass")
        own = {model: next(m for m in r["metricsScores"] if m["metric"] == metric) for model, r in runs.items()}
        assert judge_values(report) == {model: pytest.approx(m["passes"] / (m["passes"] + m["fails"]))
                                        for model, m in own.items()}


@pytest.mark.parametrize("command", ["evaluate", "meta", "audit"])
def test_field_with_a_tools_output_is_refused_in_one_line(capsys, command):
    line = one_error(*run(capsys, command, "--data", PROMPTFOO / "results.json", "--from", "promptfoo",
                          "--field", "label"))
    assert "--field" in line and "--judge" in line


# -- 6: what -o records; a folder holding a rerun ------------------------------------------------------
def test_out_folder_keeps_the_chosen_judge_and_names_the_tool(capsys, tmp_path):
    code, _, err = run(capsys, "evaluate", "--data", INSPECT / "eval", "--judge", "match", "--bootstrap", "50",
                       "--out", tmp_path / "r")
    assert code == 0, err
    judged = [json.loads(line) for line in (tmp_path / "r" / "judgments.jsonl").read_text().splitlines()]
    assert len(judged) == 12 and {row["judge"] for row in judged} == {"match"}  # not model_graded_qa's too
    record = json.loads((tmp_path / "r" / "run.json").read_text())
    assert record["options"]["from"] == "inspect" and record["backend"] == "inspect output eval"
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": row["item_id"], "annotator": "me", "value": 1.0}
                                                    for row in judged])
    code, _, err = run(capsys, "meta", "--data", INSPECT / "eval", "--judge", "match", "--human", labels,
                       "--aspect", "correct", "--bootstrap", "50", "--out", tmp_path / "m")
    assert code == 0, err
    record = json.loads((tmp_path / "m" / "run.json").read_text())
    assert record["options"]["from"] == "inspect" and record["backend"] == "inspect output eval"


def test_a_log_folder_holding_a_rerun_reads_the_newer_run(capsys):
    older, newer = sorted((INSPECT / "rerun").glob("*.eval"), key=lambda p: members(p)["header.json"]["eval"]["created"])
    report, err = evaluate_json(capsys, "--data", INSPECT / "rerun", "--judge", "match")
    assert judge_values(report) == {"mockllm/model": pytest.approx(inspect_results(newer)["match"])}
    assert f"{older.name}: 4 of its 4 records are in the newer {newer.name} too (a rerun)" in err


def test_a_record_in_two_files_names_both(capsys, tmp_path):
    log = next((INSPECT / "yesno").glob("*.eval"))
    for name in ("a.eval", "b.eval"):  # the same run twice: neither is the newer
        shutil.copy(log, tmp_path / name)
    line = one_error(*run(capsys, "evaluate", "--data", tmp_path, "--judge", "match"))
    assert str(tmp_path / "a.eval") in line and str(tmp_path / "b.eval") in line
    folder = tmp_path / "arena"
    folder.mkdir()
    for name in ("x.jsonl", "y.jsonl"):
        shutil.copy(SOURCES / "arena-hard" / "gpt-4-1106-preview" / "gpt-4-0613.jsonl", folder / name)
    line = one_error(*run(capsys, "audit", "--data", folder))
    assert "x.jsonl" in line and "y.jsonl" in line


# -- 9: hostile files ------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_like_a_log_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo.eval"
    os.mkfifo(fifo)
    for extra in ((), ("--from", "inspect")):
        done = run_cli("evaluate", "--data", fifo, *extra, timeout=120)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.count("\n") == 1 and "fifo.eval" in done.stderr and "FIFO" in done.stderr


def test_deep_nesting_in_an_eval_member_is_refused(capsys, tmp_path):
    contents = members(next((INSPECT / "yesno").glob("*.eval")))
    sample = next(name for name in contents if name.startswith("samples/"))
    contents[sample] = "[" * 100_000 + "]" * 100_000
    line = one_error(*run(capsys, "evaluate", "--data", write_eval(tmp_path / "log.eval", contents)))
    assert "log.eval" in line and sample in line


def test_a_member_whose_bytes_lie_about_its_checksum_is_refused(capsys, tmp_path):
    log = write_eval(tmp_path / "log.eval", members(next((INSPECT / "yesno").glob("*.eval"))))
    data = bytearray(log.read_bytes())
    data[data.find(b'"scores"') + 1] = ord("S")  # the member's bytes change, its CRC-32 does not
    log.write_bytes(bytes(data))
    line = one_error(*run(capsys, "evaluate", "--data", log))
    assert "log.eval" in line and "samples/" in line


def _eval_with(change):
    def make(folder: Path) -> Path:
        contents = members(next((INSPECT / "yesno").glob("*.eval")))
        change(contents, next(name for name in contents if name.startswith("samples/")))
        return write_eval(folder / "log.eval", contents)
    return make


def _json_with(source: Path, name: str, path: list, value):
    return lambda folder: _altered(source, folder / name, _set_score(path, value))


LM_SAMPLES = next(FILTERS.rglob("samples_*.jsonl"))


def _lm_eval_with(key: str, value):
    def make(folder: Path) -> Path:
        rows = [json.loads(line) for line in LM_SAMPLES.read_text().splitlines()]
        rows[2][key] = value
        return write_jsonl(folder / LM_SAMPLES.name, rows)
    return make


# a field of another type than the tool writes: (make the file, what the line says)
WRONG_TYPES = {
    "inspect scores a number": (_eval_with(lambda c, s: c[s].update(scores=7)), ["log.eval", "'scores' is a number"]),
    "inspect scores a list": (_eval_with(lambda c, s: c[s].update(scores=[1])), ["log.eval", "'scores' is an array"]),
    "inspect a score a number": (_eval_with(lambda c, s: c[s]["scores"].update(match=7)),
                                 ["log.eval", "scorer 'match' is a number"]),
    "inspect input a number": (_eval_with(lambda c, s: c[s].update(input=7)), ["log.eval", "'input' is a number"]),
    "inspect output a list": (_eval_with(lambda c, s: c[s].update(output=[1])), ["log.eval", "'output' is an array"]),
    "inspect eval a number": (_eval_with(lambda c, s: c["header.json"].update(eval=7)),
                              ["log.eval", "'eval' is a number"]),
    "inspect header a list": (_eval_with(lambda c, s: c.update({"header.json": [1]})),
                              ["log.eval", "header.json is an array"]),
    "promptfoo response a number": (
        _json_with(PROMPTFOO / "results.json", "results.json", ["results", "results", 0, "response"], 7),
        ["results.json", "'response' is a number"]),
    "promptfoo components an object": (
        _json_with(PROMPTFOO / "results.json", "results.json",
                   ["results", "results", 0, "gradingResult", "componentResults"], {"a": 1}),
        ["results.json", "'componentResults' is an object"]),
    "promptfoo pass null": (
        _json_with(PROMPTFOO / "results.json", "results.json",
                   ["results", "results", 0, "gradingResult", "componentResults", 0, "pass"], None),
        ["results.json", "'pass' is null"]),
    "deepeval metrics a string": (
        _json_with(DEEPEVAL_RUN, "test_run_1.json", ["testCases", 0, "metricsData"], "x"),
        ["test_run_1.json", "'metricsData' is a string"]),
    "deepeval score null": (
        _json_with(DEEPEVAL_RUN, "test_run_1.json", ["testCases", 0, "metricsData", 0, "score"], None),
        ["test_run_1.json", "'score' is null"]),
    "deepeval hyperparameters a number": (
        _json_with(DEEPEVAL_RUN, "test_run_1.json", ["hyperparameters"], 7),
        ["test_run_1.json", "'hyperparameters' is a number"]),
    "lm-eval metrics a number": (_lm_eval_with("metrics", 7), [f"{LM_SAMPLES.name}:3", "'metrics' is a number"]),
    "lm-eval filter a list": (_lm_eval_with("filter", [1]), [f"{LM_SAMPLES.name}:3", "'filter' is an array"]),
    "alpaca-eval instruction a number": (
        _json_with(SOURCES / "alpaca-eval" / "alpaca-7b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
                   "annotations.json", [0, "instruction"], 7), ["annotations.json:1", "'instruction' is a number"]),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_field_of_another_type_exits_2_naming_the_file_and_field(capsys, tmp_path, case):
    make, expected = WRONG_TYPES[case]
    data = make(tmp_path)
    line = one_error(*run(capsys, "evaluate", "--data", data, "--judge", "x", "--out", tmp_path / "r"))
    for part in expected:
        assert part in line, line
    assert not (tmp_path / "r").exists()


# -- 10: control characters from a provider's name ------------------------------------------------------
def test_escape_sequences_in_a_name_reach_no_file_raw(capsys, tmp_path):
    hostile = "echo\x1b]0;pwned\x07\x1b[2J\x9b"
    document = json.loads((PROMPTFOO / "results.json").read_text())
    for row in document["results"]["results"]:
        if row["provider"]["label"] == "echo-plain":
            row["provider"]["label"] = hostile
    results = tmp_path / "results.json"
    results.write_text(json.dumps(document))
    code, out, err = run(capsys, "evaluate", "--data", results, "--judge", "llm-rubric", "--bootstrap", "50",
                         "--out", tmp_path / "r")
    assert code == 0, err
    for name in ("systems.csv", "pairs.csv", "report.html", "run.json"):
        text = (tmp_path / "r" / name).read_text(encoding="utf-8")
        assert not any(char in text for char in "\x1b\x07\x9b"), name
    with open(tmp_path / "r" / "systems.csv", newline="", encoding="utf-8") as handle:
        names = {row[0] for row in csv.reader(handle)}
    assert "echo\\x1b]0;pwned\\x07\\x1b[2J\\x9b" in names
    assert "\\x1b]0;pwned" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "\x1b" not in out


# -- 11: no warnings from libraries on real files --------------------------------------------------------
def test_a_constant_judge_and_constant_labels_print_no_warning(capsys, tmp_path):
    from judgelab.data.sources import read_source

    loose = "jl_quiz_filters/exact_match,loose"  # lm-eval's loose filter: 0 on every document
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": item.id, "annotator": "me", "value": 0.0}
                                                    for item in read_source(FILTERS).items])
    code, _, err = run(capsys, "meta", "--data", FILTERS, "--judge", loose, "--human", labels, "--aspect", "correct",
                       "--bootstrap", "50", "--out", tmp_path / "m")
    assert code == 0 and "warning" not in err, err
    alpaca = SOURCES / "alpaca-eval"
    labels = write_jsonl(tmp_path / "pairs.jsonl", [{"item_id": item.id, "annotator": "me", "value": "a"}
                                                   for item in read_source(alpaca).items])
    code, _, err = run(capsys, "meta", "--data", alpaca, "--human", labels, "--aspect", "preference",
                       "--bootstrap", "50", "--out", tmp_path / "p")
    assert code == 0 and "warning" not in err, err
