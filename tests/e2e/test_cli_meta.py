"""`judgelab meta` as a user runs it: a subprocess, its exit code, its JSON or its tables."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl

TREMA_JUDGE = "TREMA-4prompts/llama3.3-70b"


def run_meta(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_cli("meta", *args, timeout=120, env=env)


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


def _llmbar_run(benchmarks_dir, path, judge):
    """One published LLMBar evaluator as a pairwise judge's judgments: the two orders' verdicts,
    a tie where they disagree (as the pairwise judge records them, with extra.label_swapped)."""
    rows = []
    for r in _read_jsonl(benchmarks_dir / "reference" / "llmbar_evaluator_results.jsonl"):
        first, second = r["prediction"].get("swap_false"), r["prediction"].get("swap_true")
        if r["judge"] == judge and first in ("a", "b") and second in ("a", "b"):
            rows.append({"item_id": r["item_id"], "label": first if first == second else "tie",
                         "extra": {"label_swapped": second}})
    return write_jsonl(path, rows)


def test_pairwise_judges_get_a_paired_comparison_with_the_tie_rule_stated(benchmarks_dir, tmp_path):
    judge = _llmbar_run(benchmarks_dir, tmp_path / "gpt4.jsonl", "GPT-4/Vanilla")
    baseline = _llmbar_run(benchmarks_dir, tmp_path / "chatgpt.jsonl", "ChatGPT-0301/Vanilla")
    common = ("-d", benchmarks_dir / "llmbar.jsonl", "-j", judge, "--baseline", baseline, "--bootstrap", "300")
    done = run_meta(*common, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    human = {r["id"]: r["label"] for r in _read_jsonl(benchmarks_dir / "llmbar.jsonl")}
    mine, theirs = ({r["item_id"]: r["label"] for r in _read_jsonl(path)} for path in (judge, baseline))
    both = [i for i in mine if i in theirs]

    def credit(verdicts, ids):
        return np.mean([1.0 if verdicts[i] == human[i] else 0.5 if verdicts[i] == "tie" else 0.0 for i in ids])

    assert out["pairwise"]["accuracy"]["value"] == pytest.approx(credit(mine, mine))
    assert out["pairwise"]["accuracy"]["rule"] == "ties count half"
    accuracy = out["comparison"]["pairwise"]["accuracy"]
    assert accuracy["baseline"]["value"] == pytest.approx(credit(theirs, both))
    assert accuracy["difference"] == pytest.approx(credit(mine, both) - credit(theirs, both))
    assert accuracy["ci"][0] <= accuracy["difference"] <= accuracy["ci"][1] and accuracy["judge"]["n"] == len(both)
    consistency = out["comparison"]["pairwise"]["positional_consistency"]
    assert consistency["judge"]["value"] == pytest.approx(np.mean([mine[i] != "tie" for i in both]))

    wrong = json.loads(run_meta(*common, "--ties", "wrong", "--json").stdout)
    assert wrong["pairwise"]["accuracy"]["value"] == pytest.approx(np.mean([mine[i] == human[i] for i in mine]))
    assert wrong["pairwise"]["accuracy"]["rule"] == "ties count wrong"
    table = run_meta(*common, "--ties", "wrong", env={"COLUMNS": "80"}).stdout
    assert "accuracy (ties count wrong)" in " ".join(table.split())  # the rule, in every table that has accuracy
    assert f"{wrong['comparison']['pairwise']['accuracy']['difference']:.4f}" in table


def test_groups_left_out_are_reported_loudly_and_the_baseline_is_compared_on_the_same_groups(tmp_path):
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, size=60).astype(float)
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "output": "x", "group_id": f"g{k // 4}", "scores": {"q": h}} for k, h in enumerate(human)])
    coarse = [3.0 if k < 40 else h + rng.integers(0, 2) for k, h in enumerate(human)]  # constant in 10 of 15 groups
    judgments = write_jsonl(tmp_path / "coarse.jsonl", [{"item_id": f"i{k}", "score": v} for k, v in enumerate(coarse)])
    baseline = write_jsonl(tmp_path / "fine.jsonl", [{"item_id": f"i{k}", "score": h + rng.normal()}
                                                     for k, h in enumerate(human)])
    common = ("-d", items, "-j", judgments, "--baseline", baseline, "--level", "group", "--bootstrap", "100")
    out = json.loads(run_meta(*common, "--json").stdout)
    group = out["group"]["spearman"]
    assert group["n_groups"] + group["n_groups_skipped"] == 15 and group["skipped"]["constant judge"]
    [dropped] = out["dropped_groups"]
    assert dropped["figure"] == "group" and dropped["n_groups"] == 15 and dropped["n_dropped"] >= 10
    assert dropped["share_dropped"] == pytest.approx(dropped["n_dropped"] / 15, abs=1e-4)
    compared = out["comparison"]["group"]["spearman"]
    assert compared["judge"]["n_groups"] == compared["baseline"]["n_groups"] == group["n_groups"]
    assert compared["note"].startswith(f"on the {group['n_groups']} groups both judges can score")
    table = " ".join(run_meta(*common, env={"COLUMNS": "80"}).stdout.split())
    assert f"group: {dropped['n_dropped']} of 15 groups ({dropped['share_dropped']:.0%}) left out" in table
    assert f"{group['n_groups']}/15" in table and "groups both judges can score" in table
    folder = tmp_path / "report"
    assert run_meta(*common, "--out", folder).returncode == 0
    page = (folder / "report.html").read_text()
    assert re.search(rf'<p class="warning" id="dropped-1"><b>group: {dropped["n_dropped"]} of 15 groups', page)
    assert "groups both judges can score" in page


def test_an_80_column_table_keeps_every_number_whole(small_files):
    items, judgments = small_files
    out = json.loads(run_meta("-d", items, "-j", judgments, "--baseline", judgments, "--bootstrap", "50",
                              "--json").stdout)
    table = run_meta("-d", items, "-j", judgments, "--baseline", judgments, "--bootstrap", "50",
                     env={"COLUMNS": "80"}).stdout
    rows = [line for line in table.splitlines() if line.startswith(" ")]  # tables; prose lines wrap softly
    assert len(rows) > 10 and max(map(len, rows)) <= 80 and "…" not in table
    for section in ("dataset", "group"):
        for estimate in out[section].values():
            assert f"{estimate['value']:.4f}" in table
            assert f"[{estimate['ci'][0]:.4f}, {estimate['ci'][1]:.4f}]" in table
