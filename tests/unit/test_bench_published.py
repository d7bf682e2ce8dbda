"""bench.bench_published: each published table's computation on made-up files in each tool's format
(tests/data/published/), checked against the tool's own rule written out independently here."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from bench import bench_published as bp
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score

from judgelab.data.sources import detect_source, read_source
from judgelab.errors import DataError

HERE = Path(__file__).resolve().parents[1] / "data" / "published"


# -- LLMBar -------------------------------------------------------------------------------------
def llmbar_own_code(labels, first, second) -> dict[str, float]:
    """LLMBar's LLMEvaluator/evaluate.py (lines 524-552) on winners "1" / "2" / other, as shares."""
    n = len(labels)
    right = [[str(w) == str(lab) for w, lab in zip(ws, labels, strict=True)] for ws in (first, second)]
    code = [[int(w) if w in ("0", "1") else 0 for w in ws] for ws in (first, second)]
    kappas = [cohen_kappa_score(c, labels) for c in code]
    return {"correct_False": sum(right[0]) / n, "correct_True": sum(right[1]) / n,
            "correct_average": (sum(right[0]) + sum(right[1])) / 2 / n,
            "correct_both": sum(a and b for a, b in zip(*right, strict=True)) / n,
            "equal": sum(a == b for a, b in zip(first, second, strict=True)) / n,
            "kappa_False": kappas[0], "kappa_True": kappas[1], "kappa_average": sum(kappas) / 2,
            "kappa_agreement": cohen_kappa_score(code[0], code[1])}


@pytest.mark.parametrize("seed", range(5))
def test_llmbar_statistics_are_llmbar_s_own_on_random_verdicts_with_null_ones(seed):
    rng = np.random.default_rng(seed)
    labels = rng.choice([1, 2], 40).tolist()
    # LLMBar's files write an unparsable verdict as null (134 of them in the repository)
    first, second = ([[None, "1", "2"][k] for k in rng.choice(3, 40, p=[0.1, 0.45, 0.45])] for _ in range(2))
    name = {"1": "a", "2": "b"}
    ours = bp.llmbar_statistics([name[str(v)] for v in labels], [name.get(w) for w in first],
                                [name.get(w) for w in second])
    expected = llmbar_own_code(labels, first, second)
    assert ours == pytest.approx(expected, abs=1e-12)


def test_llmbar_reproduced_reads_each_subset_and_matches_its_statistics_file():
    rows = bp.llmbar_reproduced(HERE / "llmbar")
    assert [(r["subset"], r["evaluator"], r["n"]) for r in rows] == [
        ("Adversarial/Manual", "Toy/Vanilla", 4), ("Natural", "Toy/Vanilla", 6)]
    natural = rows[1]
    assert natural["published"]["correct_True"] == pytest.approx(4 / 6)
    assert natural["ours"] == pytest.approx(natural["published"], abs=1e-12)
    text, worst, _ = bp.llmbar_section(HERE / "llmbar", HERE / "llmbar" / "shared" / "llmbar_evaluator_results.jsonl",
                                    HERE / "llmbar" / "shared" / "llmbar.jsonl")
    assert worst < 1e-12
    assert "10 of the repository's 10 items) holds the repository's verdicts on 9 of them" in text  # one altered


def test_llmbar_number_reads_each_form_statistics_json_writes():
    assert bp.llmbar_number("90 / 100 = 90.0%") == pytest.approx(0.9)
    assert bp.llmbar_number("94.5%") == pytest.approx(0.945)
    assert bp.llmbar_number(0.25) == 0.25


# -- AlpacaEval ----------------------------------------------------------------------------------
def test_alpaca_columns_follow_alpaca_eval_s_definitions():
    folder = HERE / "alpaca_eval" / "results"
    found = sorted(folder.glob("*/weighted_alpaca_eval_gpt4_turbo/annotations.json"))
    costs = {f: bp.alpaca_costs(f) for f in found}
    files = [f for f in found if costs[f]]
    assert [f.parts[-3] for f in files] == ["toy-model"]  # the reference's own file compares it with itself
    got = bp.alpaca_columns([read_source(f, "alpaca-eval") for f in files], costs[files[0]])
    # prefer longer: rows 1 and 2 pick the longer output, row 4 the shorter; row 3's outputs are 3 characters apart
    assert got["Proba. prefer longer"] == pytest.approx(2 / 3)
    assert got["Proba. prefer 1"] == pytest.approx(2 - (1.9 + 1.2 + 1.7 + 1.6) / 4)
    assert got["Price [$/1000 examples]"] == pytest.approx(4.25)
    assert got["Time [seconds/1000 examples]"] == pytest.approx(212.5)
    assert got["# parsed"] == 4


def test_alpaca_section_says_nothing_is_reproduced_and_shows_the_leaderboard_value():
    text, gap, _ = bp.alpaca_section(HERE / "alpaca_eval")
    assert math.isnan(gap) and "no column is reproduced" in text
    assert "| Price [$/1000 examples] | 4.300 | 4.250 |" in text


# -- Arena-Hard-Auto -----------------------------------------------------------------------------
def arena_hard_own(folder: Path, baseline: str = "toy-baseline") -> dict[str, float]:
    """Arena-Hard-Auto's show_result.py: battles from both games (>> three times), compute_mle_elo
    (scikit-learn's logistic regression, each battle twice, a tie one win each way), predict_win_rate."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for k, game in enumerate(record["games"]):
                a, b = (baseline, record["model"]) if k == 0 else (record["model"], baseline)
                score = game["score"]
                winner = "tie" if "=" in score else "model_a" if score in ("A>B", "A>>B") else "model_b"
                rows += [(a, b, winner)] * (3 if ">>" in score or "<<" in score else 1)
    models = sorted({m for a, b, _ in rows for m in (a, b)})
    battles = rows + rows
    x = np.zeros((len(battles), len(models)))
    y = np.zeros(len(battles))
    for k, (a, b, winner) in enumerate(battles):
        x[k, models.index(a)], x[k, models.index(b)] = math.log(10), -math.log(10)
        y[k] = winner == "model_a" or (winner == "tie" and k < len(rows))
    coef = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-10).fit(x, y).coef_[0]
    elo = 400 * coef + 1000
    base = elo[models.index(baseline)]
    return {m: 100 / (1 + 10 ** ((base - elo[k]) / 400)) for k, m in enumerate(models)}


def test_arena_scores_are_arena_hard_s_bradley_terry_win_rates():
    judgments = HERE / "arena-hard" / "data" / "arena-hard-v0.1" / "model_judgment" / "toy-judge"
    ours = bp.arena_scores(read_source(judgments, "arena-hard"))
    theirs = arena_hard_own(judgments)
    assert ours == pytest.approx(theirs, abs=1e-3)
    assert ours["toy-baseline"] == pytest.approx(50) and ours["toy-strong"] > 50 > ours["toy-weak"]


def test_arena_section_compares_with_the_published_csv_or_says_the_judgments_are_missing(tmp_path):
    text, gap, _ = bp.arena_section(HERE / "arena-hard", None)
    assert "| toy-strong | 70.0 |" in text and np.isfinite(gap)
    ours = bp.arena_scores(read_source(HERE / "arena-hard" / "data" / "arena-hard-v0.1" / "model_judgment",
                                       "arena-hard"))
    assert gap == pytest.approx(max(abs(70 - ours["toy-strong"]), abs(20 - ours["toy-weak"]), 0.0))
    shutil.copytree(HERE / "arena-hard" / "leaderboard", tmp_path / "leaderboard")
    text, gap, _ = bp.arena_section(tmp_path, None)
    assert math.isnan(gap) and "judgments are not reachable" in text


# -- JudgeBench ----------------------------------------------------------------------------------
OUTPUTS = HERE / "judgebench" / "outputs"


def test_judgebench_reader_reads_both_games_in_the_item_s_names():
    assert detect_source(OUTPUTS) == "judgebench"
    read = read_source(OUTPUTS)
    assert len(read.items) == 4 and read.judges() == ["arena_hard/toy-judge", "reward_model/toy/rm"]
    arena = {j.item_id: j for j in read.judgments if j.judge == "arena_hard/toy-judge"}
    # p1: game 2's B>A names the swapped order, so both games vote for the item's output a
    assert arena["toy-writer/p1"].extra["verdicts"] == {"original": "a", "swapped": "a"}
    assert arena["toy-writer/p2"].label == "b"  # a tie and a vote for b
    assert arena["toy-writer/p3"].label == "b"  # one game only
    assert arena["toy-writer/p4"].status == "unparsable"  # the call failed (null) and no decision
    assert {one.id: one.label for one in read.items}["toy-writer/p2"] == "b"
    assert any("1 pair(s) without a verdict" in note for note in read.notes)


def test_judgebench_scores_are_judgebench_s_rule():
    scores = bp.judgebench_scores(read_source(OUTPUTS, "judgebench"))
    assert scores["arena_hard/toy-judge"] == pytest.approx(
        {"overall": 50, "knowledge": 100, "reasoning": 0, "math": 100, "coding": 0})
    assert scores["reward_model/toy/rm"] == pytest.approx(
        {"overall": 75, "knowledge": 100, "reasoning": 100, "math": 0, "coding": 100})
    text, gap, _ = bp.judgebench_section(HERE / "judgebench")
    assert math.isnan(gap) and "no `utils/metrics.py`" in text


def _variant(tmp_path: Path, change) -> Path:
    rows = [json.loads(line) for line in (OUTPUTS / sorted(p.name for p in OUTPUTS.iterdir())[0]).open()]
    change(rows)
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "says"), [
    (lambda rows: rows[1]["judgments"][0].update(decision="A>>B"), ":2: field 'judgments.0.decision'"),
    (lambda rows: rows[0].update(label="A=B"), ":1: field 'label'"),
    (lambda rows: rows[2].update(judgments=[]), ":3: field 'judgments'"),
    (lambda rows: rows[3].pop("question"), ":4: field 'question'"),
    (lambda rows: rows.append(dict(rows[0])), "judged the pair 'toy-writer/p1' twice"),
])
def test_judgebench_reader_refuses_bad_input_naming_the_file_line_and_field(tmp_path, change, says):
    path = _variant(tmp_path, change)
    with pytest.raises(DataError) as raised:
        read_source(path, "judgebench")
    assert says in str(raised.value) and str(path) in str(raised.value)


def test_judgebench_reader_refuses_a_pair_that_differs_between_judges_and_a_pairs_file(tmp_path):
    shutil.copytree(OUTPUTS, tmp_path / "outputs")
    first = sorted((tmp_path / "outputs").iterdir())[0]
    rows = [json.loads(line) for line in first.open()]
    rows[0]["response_A"] = "another text"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match="differs between"):
        read_source(tmp_path / "outputs", "judgebench")
    shutil.rmtree(tmp_path / "outputs")
    shutil.copytree(OUTPUTS, tmp_path / "outputs")
    (tmp_path / "outputs" / "pairs.jsonl").write_text('{"pair_id": "p1", "label": "A>B"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="not a JudgeBench output file"):
        read_source(tmp_path / "outputs", "judgebench")


def test_the_bench_prints_each_table_s_largest_difference_and_writes_nothing_without_write(capsys, monkeypatch):
    monkeypatch.setattr(bp, "write_doc_section", lambda *a, **k: pytest.fail("wrote without --write"))
    shared = HERE / "llmbar" / "shared"
    bp.main(["--llmbar", str(HERE / "llmbar"), "--llmbar-verdicts", str(shared / "llmbar_evaluator_results.jsonl"),
             "--llmbar-items", str(shared / "llmbar.jsonl"), "--alpaca-eval", str(HERE / "alpaca_eval"),
             "--arena-hard", str(HERE / "arena-hard"), "--judgebench", str(HERE / "judgebench")])
    out = capsys.readouterr().out
    rows = {line.split(" | ")[0].strip("| "): line.rsplit(" | ", 1)[1].strip(" |") for line in out.splitlines()
            if line.startswith(("| LLMBar", "| AlpacaEval", "| Arena", "| JudgeBench"))}
    assert float(rows["LLMBar"]) < 1e-12 and rows["AlpacaEval evaluators"] == "-" and rows["JudgeBench"] == "-"
    assert float(rows["Arena-Hard-Auto"]) > 0  # the made-up published scores are round numbers


def test_the_cli_reads_judgebench_outputs_and_refuses_a_bad_line_with_exit_2(tmp_path, capsys):
    from tests.e2e.cli import run_main_captured

    code, out, _ = run_main_captured(capsys, "meta", "--data", OUTPUTS, "--judge", "reward_model/toy/rm",
                                     "--ties", "wrong", "--bootstrap", "0", "--json")
    assert code == 0 and json.loads(out)["pairwise"]["accuracy"]["value"] == 0.75
    bad = _variant(tmp_path, lambda rows: rows[1]["judgments"][1].update(decision="B>>A"))
    report = tmp_path / "report"
    code, _, err = run_main_captured(capsys, "meta", "--data", bad, "--from", "judgebench", "--out", report)
    assert code == 2 and f"{bad}:2: field 'judgments.1.decision'" in err and not report.exists()
