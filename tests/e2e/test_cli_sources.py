"""Other tools' output files through `evaluate`, `audit` and `meta` (--from, or detected), as a user
runs them; the files are real ones (tests/data/sources/README.md). Expected figures are counted from
the files themselves, or come from the tool's own summary (lm-eval's results file, promptfoo's grades).

Which command applies where: `audit` measures a pairwise judge, so it reads AlpacaEval, Arena-Hard
and MT-Bench pairwise files and refuses the pointwise ones (Inspect, promptfoo, lm-eval, MT-Bench
single ratings) with one line; `meta` needs human labels, which none of these files carries, so it
runs with a labels file (--human) as annotate writes one."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.e2e.cli import run_main_captured, write_jsonl

SOURCES = Path(__file__).resolve().parents[1] / "data" / "sources"
INSPECT, PROMPTFOO, LM_EVAL, DEEPEVAL = (SOURCES / "inspect", SOURCES / "promptfoo", SOURCES / "lm-eval",
                                        SOURCES / "deepeval")
ALPACA, ARENA, MT_BENCH = SOURCES / "alpaca-eval", SOURCES / "arena-hard", SOURCES / "mt-bench"


run = run_main_captured


def evaluate_json(capsys, *args) -> dict:
    code, out, err = run(capsys, "evaluate", *args, "--json", "--bootstrap", "100")
    assert code == 0, err
    return json.loads(out)


def judge_values(report: dict) -> dict[str, float]:
    judge = report["estimators"]["judge"]
    return {system: judge[system]["value"] for system in report["systems"]}


def audit_rows(capsys, *args) -> tuple[dict, dict]:
    code, out, err = run(capsys, "audit", *args, "--json", "--bootstrap", "50")
    assert code == 0, err
    report = json.loads(out)["audit"]
    return {row["name"]: row for row in report["rows"]}, report


def meta_json(capsys, *args) -> dict:
    code, out, err = run(capsys, "meta", *args, "--json", "--bootstrap", "50")
    assert code == 0, err
    return json.loads(out)


def labels_file(path: Path, values: dict[str, object]) -> Path:
    return write_jsonl(path, [{"item_id": k, "annotator": "me", "value": v} for k, v in values.items()])


# -- Inspect AI ----------------------------------------------------------------------------------------
QUESTIONS = {"q1": "4", "q2": "Paris", "q3": "8", "q4": "blue", "q5": "5", "q6": "Mars"}
ANSWERS = {"mockllm/careful": ["4", "Paris", "8", "blue", "5", "Mars"],
           "mockllm/sloppy": ["5", "Paris", "6", "blue", "2", "Venus"]}
# the mock grader's grades (make_logs.py); P is no grade model_graded_qa accepts: that sample is unscored
GRADES = {"mockllm/careful": "CCCCPC", "mockllm/sloppy": "ICICII"}


def test_inspect_eval_logs_every_scorer_a_judge(capsys):
    graded = judge_values(evaluate_json(capsys, "--data", INSPECT / "eval", "--judge", "model_graded_qa"))
    for model, grades in GRADES.items():
        scored = [g == "C" for g in grades if g != "P"]
        assert graded[model] == pytest.approx(sum(scored) / len(scored))
    matched = judge_values(evaluate_json(capsys, "--data", INSPECT / "eval", "--from", "inspect", "--judge", "match"))
    for model, answers in ANSWERS.items():
        assert matched[model] == pytest.approx(sum(a == t for a, t in zip(answers, QUESTIONS.values(),
                                                                            strict=True)) / 6)
    _, _, err = run(capsys, "evaluate", "--data", INSPECT / "eval", "--judge", "model_graded_qa", "--json")
    assert "1 score(s) without a value (NaN or null) kept as unparsable" in err  # counted, never a 0


def test_inspect_json_log_reads_as_its_eval_archive(capsys):
    from_json = judge_values(evaluate_json(capsys, "--data", INSPECT / "json", "--judge", "model_graded_qa"))
    assert from_json == {"mockllm/careful": pytest.approx(1.0)}


def test_inspect_meta_against_a_labels_file(capsys, tmp_path):
    human = labels_file(tmp_path / "labels.jsonl", {
        f"{model}/quiz/{q}/1": float(a == QUESTIONS[q])
        for model, answers in ANSWERS.items() for q, a in zip(QUESTIONS, answers, strict=True)})
    report = meta_json(capsys, "--data", INSPECT / "eval", "--judge", "model_graded_qa", "--human", human,
                       "--aspect", "correct")
    assert report["coverage"]["n_items"] == 12 and report["coverage"]["n_used"] == 11  # the unscored sample
    assert report["agreement"]["accuracy"]["value"] == pytest.approx(1.0)


def test_audit_refuses_pointwise_sources_in_one_line(capsys):
    for data in (INSPECT / "eval", PROMPTFOO / "results.json", LM_EVAL, DEEPEVAL / "runs",
                 MT_BENCH / "gpt-4_single.jsonl"):
        code, _, err = run(capsys, "audit", "--data", data)
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1 and "pointwise" in errors[0], err


# -- promptfoo -----------------------------------------------------------------------------------------
def test_promptfoo_graders_per_provider(capsys):
    results = json.loads((PROMPTFOO / "results.json").read_text())["results"]["results"]
    expected: dict[str, list[float]] = {}
    for row in results:
        rubric = [c for c in row["gradingResult"]["componentResults"] if c["assertion"]["type"] == "llm-rubric"]
        expected.setdefault(row["provider"]["label"], []).append(rubric[0]["score"])
    values = judge_values(evaluate_json(capsys, "--data", PROMPTFOO / "results.json", "--judge", "llm-rubric"))
    assert values == {name: pytest.approx(sum(s) / len(s)) for name, s in expected.items()}
    whole = judge_values(evaluate_json(capsys, "--data", PROMPTFOO / "results.json", "--judge", "promptfoo"))
    for name in expected:  # the test's own score: promptfoo's mean over its assertions
        rows = [r for r in results if r["provider"]["label"] == name]
        assert whole[name] == pytest.approx(sum(r["score"] for r in rows) / len(rows))


def test_promptfoo_meta_pass_fail_against_labels(capsys, tmp_path):
    results = json.loads((PROMPTFOO / "results.json").read_text())["results"]["results"]
    human = labels_file(tmp_path / "labels.jsonl", {
        f"test{r['testIdx']}/prompt{r['promptIdx']}/{r['provider']['label']}": float(r["testIdx"] in (0, 2))
        for r in results})
    report = meta_json(capsys, "--data", PROMPTFOO / "results.json", "--from", "promptfoo", "--judge", "llm-rubric",
                       "--human", human, "--aspect", "names_a_capital")
    assert report["coverage"]["n_used"] == len(results)
    assert report["dataset"]["pearson"]["value"] > 0.5


# -- lm-evaluation-harness -----------------------------------------------------------------------------
def test_lm_eval_samples_reproduce_its_own_accuracy(capsys):
    values = judge_values(evaluate_json(capsys, "--data", LM_EVAL, "--judge", "jl_quiz_mc/acc"))
    own = {}
    for results in LM_EVAL.rglob("results_*.json"):
        record = json.loads(results.read_text())
        own[record["model_name"]] = record["results"]["jl_quiz_mc"]["acc,none"]
    assert values == {name: pytest.approx(acc) for name, acc in own.items()}


def test_lm_eval_meta_against_labels(capsys, tmp_path):
    samples = sorted(LM_EVAL.rglob("samples_jl_quiz_gen_*.jsonl"))
    human = {}
    for path in samples:
        model = path.parent.name
        for line in path.read_text().splitlines():
            row = json.loads(line)
            human[f"{model}/jl_quiz_gen/{row['doc_id']}"] = 0.0  # "lol" answers nothing
    report = meta_json(capsys, "--data", LM_EVAL, "--judge", "jl_quiz_gen/exact_match",
                       "--human", labels_file(tmp_path / "labels.jsonl", human), "--aspect", "correct")
    assert report["coverage"]["n_used"] == len(human)
    assert report["agreement"]["accuracy"]["value"] == pytest.approx(1.0)


# -- DeepEval ------------------------------------------------------------------------------------------
def test_deepeval_runs_reproduce_its_own_metric_scores(capsys, tmp_path):
    runs = [json.loads(path.read_text()) for path in sorted((DEEPEVAL / "runs").glob("test_run_*.json"))]
    for metric in ("Correctness [GEval]", "Exact Match"):
        values = judge_values(evaluate_json(capsys, "--data", DEEPEVAL / "runs", "--judge", metric))
        own = {run["hyperparameters"]["model"]: next(m["scores"] for m in run["metricsScores"] if m["metric"] == metric)
               for run in runs}
        assert values == {model: pytest.approx(sum(s) / len(s)) for model, s in own.items()}
    human = labels_file(tmp_path / "labels.jsonl", {
        f"{run['hyperparameters']['model']}/{case['name']}": float(case["actualOutput"] == case["expectedOutput"])
        for run in runs for case in run["testCases"]})
    meta = meta_json(capsys, "--data", DEEPEVAL / "runs", "--from", "deepeval", "--judge", "Correctness [GEval]",
                     "--human", human, "--aspect", "correct")
    assert meta["dataset"]["spearman"]["value"] == pytest.approx(1.0)


# -- AlpacaEval ----------------------------------------------------------------------------------------
def test_alpaca_eval_win_rate_length_control_and_meta(capsys, tmp_path):
    rows = json.loads((ALPACA / "alpaca-7b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json").read_text())
    report = evaluate_json(capsys, "--data", ALPACA, "--from", "alpaca-eval")
    wins = [r["preference"] > 1.5 for r in rows]  # AlpacaEval's discrete win rate (ties: none here)
    assert judge_values(report)["alpaca-7b"] == pytest.approx(sum(wins) / len(wins))
    audited, whole = audit_rows(capsys, "--data", ALPACA, "--baseline", "gpt4_1106_preview")
    assert whole["judge"] == "weighted_alpaca_eval_gpt4_turbo" and not whole["both_orders"]
    assert "alpaca-7b vs gpt4_1106_preview: length-controlled" in audited
    assert audited["alpaca-7b vs gpt4_1106_preview: win rate"]["value"] == pytest.approx(sum(wins) / len(wins))
    from judgelab.data.sources import read_source

    read = read_source(ALPACA)
    human = labels_file(tmp_path / "labels.jsonl", {item.id: "a" for item in read.items})
    meta = meta_json(capsys, "--data", ALPACA, "--human", human, "--aspect", "preference")
    assert meta["pairwise"]["accuracy"]["value"] == pytest.approx(1.0)
    # AlpacaEval's own win_rate: the mean of P(model wins) = preference - 1
    assert [j.score for j in read.judgments] == pytest.approx([r["preference"] - 1 for r in rows])


# -- Arena-Hard-Auto -----------------------------------------------------------------------------------
def test_arena_hard_both_games_position_and_bradley_terry(capsys, tmp_path):
    lines = [json.loads(line) for path in sorted(ARENA.rglob("*.jsonl")) for line in path.read_text().splitlines()]
    rows, report = audit_rows(capsys, "--data", ARENA)
    assert report["both_orders"] and report["judge"] == "gpt-4-1106-preview"
    mirror = {"A>B": "B>A", "A>>B": "B>>A", "B>A": "A>B", "B>>A": "A>>B", "A=B": "A=B"}
    flips = [mirror[g["games"][1]["score"]] != g["games"][0]["score"] for g in lines]
    assert rows["flip rate"]["value"] == pytest.approx(sum(flips) / len(flips))
    result = evaluate_json(capsys, "--data", ARENA, "--from", "arena-hard", "--estimand", "bradley-terry")
    assert set(result["systems"]) == {"gpt-4-0314", "gpt-4-0613", "gpt-3.5-turbo-0125"}
    human = labels_file(tmp_path / "labels.jsonl", {f"{g['model']}/{g['uid']}": "a" for g in lines})
    meta = meta_json(capsys, "--data", ARENA, "--human", human, "--aspect", "preference")
    assert meta["coverage"]["n_items"] == len(lines)


def test_arena_hard_game_without_a_verdict_is_counted(capsys, tmp_path):
    line = json.loads((ARENA / "gpt-4-1106-preview" / "gpt-4-0613.jsonl").read_text())
    line["games"][1]["score"] = None  # as Arena-Hard writes an unparsed judgment
    folder = tmp_path / "gpt-4-1106-preview"
    folder.mkdir()
    write_jsonl(folder / "gpt-4-0613.jsonl", [line])
    shutil.copy(ARENA / "gpt-4-1106-preview" / "gpt-3.5-turbo-0125.jsonl", folder)
    code, _, err = run(capsys, "audit", "--data", folder, "--json")
    assert code == 0 and "1 question(s) with a game without a verdict kept as unparsable" in err


# -- MT-Bench ------------------------------------------------------------------------------------------
def test_mt_bench_single_ratings_and_meta(capsys, tmp_path):
    lines = [json.loads(line) for line in (MT_BENCH / "gpt-4_single.jsonl").read_text().splitlines()]
    values = judge_values(evaluate_json(capsys, "--data", MT_BENCH / "gpt-4_single.jsonl"))
    assert values == {"phi-3-dpo": pytest.approx(sum(r["score"] for r in lines) / len(lines))}
    human = labels_file(tmp_path / "labels.jsonl", {f"phi-3-dpo/{r['question_id']}/1": 9 for r in lines})
    meta = meta_json(capsys, "--data", MT_BENCH / "gpt-4_single.jsonl", "--from", "mt-bench", "--human", human,
                     "--aspect", "quality")
    assert meta["coverage"]["n_used"] == len(lines)


def test_mt_bench_pairwise_both_games(capsys, tmp_path):
    line = json.loads((MT_BENCH / "gpt-4_pair.jsonl").read_text())
    rows, report = audit_rows(capsys, "--data", MT_BENCH / "gpt-4_pair.jsonl", "--from", "mt-bench")
    assert report["both_orders"] and rows["flip rate"]["value"] == float(line["g1_winner"] != line["g2_winner"])
    result = evaluate_json(capsys, "--data", MT_BENCH / "gpt-4_pair.jsonl")
    assert set(result["systems"]) == {"phi-3", "phi-3-dpo"}
    meta = meta_json(capsys, "--data", MT_BENCH / "gpt-4_pair.jsonl", "--aspect", "preference", "--human",
                     labels_file(tmp_path / "labels.jsonl", {"phi-3/phi-3-dpo/82/1": "a"}))
    assert meta["pairwise"]["accuracy"]["value"] == pytest.approx(0.5)  # the judge's two games tie


# -- detection and --judgments -------------------------------------------------------------------------
def test_an_ambiguous_folder_asks_for_from(capsys, tmp_path):
    shutil.copy(ARENA / "gpt-4-1106-preview" / "gpt-4-0613.jsonl", tmp_path)
    shutil.copy(MT_BENCH / "gpt-4_pair.jsonl", tmp_path)
    code, _, err = run(capsys, "evaluate", "--data", tmp_path)
    assert code == 2 and "looks like the output of arena-hard and of mt-bench: say which with --from" in err
    code, _, err = run(capsys, "evaluate", "--data", tmp_path / "gpt-4-0613.jsonl", "--json")
    assert code == 0, err


def test_judgelab_items_without_judgments_or_from_say_what_is_missing(capsys, tmp_path):
    data = write_jsonl(tmp_path / "items.jsonl", [{"id": "1", "output": "x", "system_id": "s"}])
    code, _, err = run(capsys, "evaluate", "--data", data)
    assert code == 2 and "give --judgments" in err and "--from" in err


def test_judgments_file_replaces_the_tools_verdicts(capsys, tmp_path):
    from judgelab.data.sources import read_source

    items = read_source(MT_BENCH / "gpt-4_single.jsonl").items
    mine = write_jsonl(tmp_path / "mine.jsonl", [{"item_id": item.id, "score": 3} for item in items])
    values = judge_values(evaluate_json(capsys, "--data", MT_BENCH / "gpt-4_single.jsonl", "--from", "mt-bench",
                                        "--judgments", mine))
    assert values == {"phi-3-dpo": pytest.approx(3.0)}


# -- bad input: exit 2, one line naming the file, the record and what was expected, nothing written ------
def _altered_json(source: Path, target: Path, change) -> Path:
    document = json.loads(source.read_text())
    change(document)
    target.write_text(json.dumps(document))
    return target


def _altered_lines(source: Path, target: Path, change) -> Path:
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    change(rows)
    return write_jsonl(target, rows)


def _inspect_json() -> Path:
    return next((INSPECT / "json").glob("*.json"))


def _newer_eval_archive(target: Path) -> Path:
    """The .eval log with its header claiming format version 3 (stored uncompressed)."""
    source = next((INSPECT / "eval").glob("*.eval"))
    from judgelab.data.sources.inspect import _archive

    members = _archive(source)
    members["header.json"]["version"] = 3
    with zipfile.ZipFile(target, "w") as archive:
        for name, value in members.items():
            archive.writestr(name, json.dumps(value))
    return target


BAD = {
    "inspect newer format": (lambda d: _altered_json(_inspect_json(), d / "log.json",
                                                     lambda doc: doc.update(version=3)),
                             ["log.json", "log format version 3", "version 2"]),
    "inspect .eval newer format": (lambda d: _newer_eval_archive(d / "log.eval"),
                                   ["log.eval", "log format version 3"]),
    "inspect sample without scores field": (
        lambda d: _altered_json(_inspect_json(), d / "log.json", lambda doc: doc["samples"][2].pop("scores")),
        ["log.json", "sample 'q3' epoch 1: no 'scores'", "Inspect AI eval log"]),
    "inspect log with no scores": (lambda d: next((INSPECT / "noscore").glob("*.eval")),
                                   ["sample 'q1' epoch 1: no scores", "scored by at least one scorer"]),
    "promptfoo failed rows": (lambda d: PROMPTFOO / "failed-rows.json",
                              ["failed-rows.json", "result 0 (test 0, prompt 0, provider 'offline-server')",
                               "4 of 12 results failed", "expected graded results"]),
    "promptfoo newer format": (
        lambda d: _altered_json(PROMPTFOO / "results.json", d / "results.json",
                                lambda doc: doc["results"].update(version=9)),
        ["results.json", "results format version 9", "versions 2, 3, 4"]),
    "deepeval metric error": (lambda d: DEEPEVAL / "errors",
                              ["test case 'test_case_2', metric 'Flaky Check'", "1 of 8 metric results failed",
                               "expected scored metrics"]),
    "deepeval test case without output": (
        lambda d: _altered_json(next((DEEPEVAL / "runs").glob("*.json")), d / "test_run_1.json",
                                lambda doc: doc["testCases"][1].pop("actualOutput")),
        ["test_run_1.json", "test case 'test_case_1': no 'actualOutput'", "DeepEval test run"]),
    "lm-eval line without metrics": (
        lambda d: _altered_lines(next(LM_EVAL.rglob("samples_jl_quiz_mc_*.jsonl")),
                                 d / "samples_jl_quiz_mc_2026-01-01T00-00-00.0.jsonl",
                                 lambda rows: rows[1].pop("metrics")),
        ["samples_jl_quiz_mc_2026-01-01T00-00-00.0.jsonl:2", "no 'metrics'", "--log_samples records"]),
    "alpaca-eval record without preference": (
        lambda d: _altered_json(ALPACA / "alpaca-7b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
                                d / "annotations.json", lambda rows: rows[1].pop("preference")),
        ["annotations.json:1", "no 'preference'", "AlpacaEval annotations"]),
    "arena-hard one game": (
        lambda d: _altered_lines(ARENA / "gpt-4-1106-preview" / "gpt-4-0613.jsonl", d / "gpt-4-0613.jsonl",
                                 lambda rows: rows[0]["games"].pop()),
        ["gpt-4-0613.jsonl:1", "games", "expected two games"]),
    "arena-hard unknown verdict": (
        lambda d: _altered_lines(ARENA / "gpt-4-1106-preview" / "gpt-4-0613.jsonl", d / "gpt-4-0613.jsonl",
                                 lambda rows: rows[0]["games"][0].update(score="A>>>B")),
        ["gpt-4-0613.jsonl:1", "game 1's verdict is 'A>>>B'"]),
    "mt-bench rating without score": (
        lambda d: _altered_lines(MT_BENCH / "gpt-4_single.jsonl", d / "gpt-4_single.jsonl",
                                 lambda rows: rows[1].pop("score")),
        ["gpt-4_single.jsonl:2", "no 'score'", "MT-Bench single ratings"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_2_in_one_line_and_writes_nothing(capsys, tmp_path, case):
    make, expected = BAD[case]
    data = make(tmp_path)
    out = tmp_path / "report"
    code, stdout, err = run(capsys, "evaluate", "--data", data, "--out", out, "--judge", "x")
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for part in expected:
        assert part in err, err
    assert stdout == "" and not out.exists()


def test_the_python_call_gives_items_judgments_and_notes():
    from judgelab.data.sources import read_source

    read = read_source(INSPECT / "eval")
    assert read.source == "inspect" and read.items.kind == "pointwise" and len(read.items) == 12
    assert read.judges() == ["match", "model_graded_qa"]
    grader = next(j for j in read.judgments if j.judge == "model_graded_qa")
    assert grader.extra["grader"] == "mockllm/grader"
    assert len(read.notes) == 1  # careful's ungraded sample (sloppy's grades are all C or I)
