"""`judgelab meta` as a user runs it: a subprocess, its exit code, its JSON or its tables."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl

TREMA_JUDGE = "TREMA-4prompts/llama3.3-70b"


def run_meta(*args: str) -> subprocess.CompletedProcess:
    return run_cli("meta", *args, timeout=120)


def _read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def trema_judgments(benchmarks_dir, tmp_path_factory):
    """One TREMA judge's TREC DL 2019 labels as a plain judgments file (item_id, label)."""
    rows = []
    for row in _read_jsonl(benchmarks_dir / "reference" / "trema_outputs.jsonl"):
        if row["dataset"] == "trec_dl2019" and row["judge"] == TREMA_JUDGE:
            prediction = row["prediction"]
            rows.append({"item_id": row["item_id"],
                         "label": prediction["label"] if isinstance(prediction, dict) else prediction})
    return write_jsonl(tmp_path_factory.mktemp("trema") / "judgments.jsonl", rows)


def test_llmjudge_preset_with_runs_prints_one_json_object(benchmarks_dir, trema_judgments):
    done = run_meta("--data", benchmarks_dir / "trec_dl2019.jsonl", "--judgments", trema_judgments,
                    "--runs", benchmarks_dir / "trec_dl2019_runs", "--preset", "llmjudge",
                    "--bootstrap", "200", "--seed", "3", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    agreement, board = out["agreement"], out["leaderboard"]
    for key in ("accuracy", "kappa", "kappa_cut_1", "kappa_cut_2", "kappa_cut_3", "alpha"):
        assert set(agreement[key]) >= {"value", "ci", "n"} and agreement[key]["n"] == 5353
        assert agreement[key]["ci"][0] <= agreement[key]["value"] <= agreement[key]["ci"][1]
    human = {r["id"]: r["label"] for r in _read_jsonl(benchmarks_dir / "trec_dl2019.jsonl")}
    judged = {r["item_id"]: r["label"] for r in _read_jsonl(trema_judgments)}
    ids = sorted(human)
    h, j = np.array([human[i] for i in ids]), np.array([judged[i] for i in ids])
    assert agreement["kappa"]["value"] == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
    assert agreement["kappa_cut_2"]["value"] == pytest.approx(cohen_kappa_score(h >= 2, j >= 2), abs=1e-12)
    assert len(board["runs"]) == 37 and board["measure"] == "nDCG@10"
    names = sorted(board["runs"])
    tau = stats.kendalltau([board["runs"][n]["human"] for n in names], [board["runs"][n]["judge"] for n in names])
    assert board["leaderboard_tau"]["value"] == pytest.approx(tau.statistic, abs=1e-12)
    assert board["leaderboard_tau"]["n"] == 37
    assert out["bootstrap"] == {"n_resamples": 200, "seed": 3, "confidence": 0.95, "resampling_unit": "group"}


def test_correlation_levels_json_shape(benchmarks_dir, tmp_path):
    predictions = [r for r in _read_jsonl(benchmarks_dir / "reference" / "unieval_predictions.jsonl")
                   if r["dataset"] == "topical_chat"]
    judgments = write_jsonl(tmp_path / "unieval.jsonl",
                             [{"item_id": r["item_id"], "score": r["prediction"]["overall"]} for r in predictions])
    # a second "judge": UniEval's coherence score used as a predictor of overall quality
    baseline = write_jsonl(tmp_path / "baseline.jsonl",
                            [{"item_id": r["item_id"], "score": r["prediction"]["coherence"]} for r in predictions])
    done = run_meta("-d", benchmarks_dir / "topical_chat.jsonl", "-j", judgments, "--aspect", "overall",
                    "--level", "dataset,group,system", "--bootstrap", "100", "--baseline", baseline, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for level, n in (("dataset", 252), ("group", 252), ("system", 6)):
        for statistic in ("pearson", "spearman", "kendall"):
            entry = out[level][statistic]
            assert entry["n"] == n and len(entry["ci"]) == 2
    items = {r["id"]: r["scores"]["overall"] for r in _read_jsonl(benchmarks_dir / "topical_chat.jsonl")}
    human = [items[r["item_id"]] for r in predictions]
    judge = [r["prediction"]["overall"] for r in predictions]
    assert out["dataset"]["spearman"]["value"] == pytest.approx(stats.spearmanr(human, judge).statistic, abs=1e-12)
    comparison = out["comparison"]["dataset"]["spearman"]
    coherence = [r["prediction"]["coherence"] for r in predictions]
    assert comparison["baseline"]["value"] == pytest.approx(stats.spearmanr(human, coherence).statistic, abs=1e-12)
    assert comparison["difference"] == pytest.approx(comparison["judge"]["value"] - comparison["baseline"]["value"])
    assert "a" not in comparison and "b" not in comparison
    assert 0 <= comparison["p_value"] <= 1 and set(out["comparison"]) == {"dataset", "group", "system"}


@pytest.fixture
def small_files(tmp_path):
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "output": f"text {k}", "group_id": f"g{k // 3}", "scores": {"overall": (k * 7) % 5 + 1}}
        for k in range(12)])
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": f"i{k}", "score": float((k * 7) % 5 + 1 + (k % 2))} for k in range(8)
    ] + [
        {"item_id": "i8", "status": "unparsable", "reason": "no number in the reply"},
        {"item_id": "i9", "status": "error", "reason": "timeout"},
        {"item_id": "ghost", "score": 3.0},
    ])  # i10, i11: no judgment
    return items, judgments


def test_missing_and_failed_judgments_are_counted(small_files):
    items, judgments = small_files
    done = run_meta("-d", items, "-j", judgments, "--bootstrap", "50", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["coverage"] == {"n_items": 12, "n_used": 8, "n_missing": 2, "n_unparsable": 1, "n_error": 1,
                               "n_no_value": 0, "n_no_human": 0, "n_unknown": 1}
    assert out["dataset"]["pearson"]["n"] == 8


def test_tables_by_default(small_files):
    items, judgments = small_files
    done = run_meta("-d", items, "-j", judgments, "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    assert "Agreement with humans" in done.stdout and "dataset / spearman" in done.stdout
    assert "missing 2" in done.stdout and "unparsable 1" in done.stdout


def test_user_error_exits_2_without_traceback(small_files):
    items, judgments = small_files
    done = run_meta("-d", items, "-j", judgments, "--preset", "geval")
    assert done.returncode == 2 and "unknown preset" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("extra", "message"), [
    (["--level", "corpus"], "unknown level"),
    (["--bootstrap", "-1"], "--bootstrap"),
    (["--runs", "/nonexistent/runs"], "directory"),
    (["--judge", "nobody"], "no judgment from judge"),
])
def test_other_user_errors_exit_2(capsys, small_files, extra, message):
    items, judgments = small_files
    code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", judgments, *extra)
    assert code == 2 and message in err


def test_missing_file_and_ambiguous_aspect_exit_2(capsys, benchmarks_dir, small_files, tmp_path):
    items, judgments = small_files
    assert run_main_in_process(capsys, "meta", "-d", tmp_path / "nope.jsonl", "-j", judgments)[0] == 2
    code, err = run_main_in_process(capsys, "meta", "-d", benchmarks_dir / "sfres.jsonl", "-j", judgments)
    assert code == 2 and "--aspect" in err


def test_published_judge_outputs_are_read_with_a_field_and_a_judge_name(benchmarks_dir):
    """The reference files as published: UniEval on Topical-Chat, one HANNA rater of twenty, each
    with the other as a baseline file read with its own field and judge."""
    reference = benchmarks_dir / "reference"
    done = run_meta("-d", benchmarks_dir / "topical_chat.jsonl", "-j", reference / "unieval_predictions.jsonl",
                    "--aspect", "coherence", "--bootstrap", "0", "--json")
    assert done.returncode == 2 and "--field" in done.stderr and "prediction.coherence" in done.stderr
    done = run_meta("-d", benchmarks_dir / "topical_chat.jsonl", "-j", reference / "unieval_predictions.jsonl",
                    "--field", "prediction.coherence", "--aspect", "coherence", "--bootstrap", "0", "--json")
    assert done.returncode == 0, done.stderr
    items = {r["id"]: r["scores"]["coherence"] for r in _read_jsonl(benchmarks_dir / "topical_chat.jsonl")}
    unieval = {r["item_id"]: r["prediction"]["coherence"] for r in _read_jsonl(reference / "unieval_predictions.jsonl")
               if r["item_id"] in items}
    ids = sorted(items)
    expected = stats.spearmanr([items[i] for i in ids], [unieval[i] for i in ids]).statistic
    assert json.loads(done.stdout)["dataset"]["spearman"]["value"] == pytest.approx(expected, abs=1e-12)

    ratings = reference / "hanna_llm_ratings.jsonl"
    common = ("-d", benchmarks_dir / "hanna.jsonl", "-j", ratings, "--field", "prediction.coherence",
              "--aspect", "coherence", "--level", "dataset", "--bootstrap", "50")
    done = run_meta(*common, "--judge-name", "Mistral-7B")  # a prefix naming four judges
    assert done.returncode == 2 and "4 judges" in done.stderr
    done = run_meta(*common, "--judge-name", "Mistral-7B/eval_prompt_1", "--baseline", ratings,
                    "--baseline-field", "prediction.coherence", "--baseline-judge", "Beluga-13B/eval_prompt_1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = _read_jsonl(ratings)
    human = {r["id"]: r["scores"]["coherence"] for r in _read_jsonl(benchmarks_dir / "hanna.jsonl")}
    for judge, value in ((out["comparison"]["dataset"]["spearman"]["judge"]["value"], "Mistral-7B/eval_prompt_1"),
                         (out["comparison"]["dataset"]["spearman"]["baseline"]["value"], "Beluga-13B/eval_prompt_1")):
        rated = {r["item_id"]: r["prediction"]["coherence"] for r in rows if r["judge"] == value}
        ids = sorted(rated)
        assert judge == pytest.approx(stats.spearmanr([human[i] for i in ids], [rated[i] for i in ids]).statistic,
                                      abs=1e-12)
    assert out["judge"] == "Mistral-7B/eval_prompt_1"
