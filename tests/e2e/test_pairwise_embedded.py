"""Issue 29's end-to-end session with a real model: `judgelab judge --method pairwise` with the
embedded test model judges 16 LLMBar pairs in both orders, 14 of them are labelled (9 of 10 labelled wins sits on the edge of what a valid interval can call) (a labels file
written from the items' own labels), then `judgelab audit` and `judgelab evaluate` print their
tables and `judgelab compare` gates a planted regression.

LLMBar's items name no systems: each output is given to one of two made-up systems, the better
one (by the item's label) to ``sys-x`` on every pair but one, so that ``sys-y`` as the candidate
is the planted regression and ``sys-x`` as the candidate is none."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TEST_MODEL
from tests.e2e.cli import read_jsonl, run_cli, write_jsonl

pytestmark = pytest.mark.slow

N_PAIRS, N_LABELLED, Y_WINS_AT = 16, 14, 3  # Y_WINS_AT: the one labelled pair whose better output is sys-y's
WIDE = {"COLUMNS": "160"}  # tables unwrapped, so that a row reads as one line


@pytest.fixture(scope="module")
def session(benchmarks_dir, test_model_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairwise")
    rows = read_jsonl(benchmarks_dir / "llmbar.jsonl")
    # the shortest pairs: a quick test on a CPU
    rows = sorted(rows, key=lambda r: len(r["instruction"]) + len(r["output_a"]) + len(r["output_b"]))[:N_PAIRS]
    items = []
    for k, row in enumerate(rows):
        x_shown_first = (row["label"] == "a") == (k != Y_WINS_AT)
        items.append({**row, "system_a": "sys-x" if x_shown_first else "sys-y",
                      "system_b": "sys-y" if x_shown_first else "sys-x"})
    data = write_jsonl(folder / "items.jsonl", items)
    labels = write_jsonl(folder / "labels.jsonl", [{"item_id": item["id"], "value": item["label"]}
                                                    for item in items[:N_LABELLED]])
    judged = run_cli("judge", "--data", data, "--method", "pairwise", "--model", TEST_MODEL, "--out", folder / "run",
                     "--cache-path", folder / "cache.sqlite", timeout=900)
    assert judged.returncode == 0, judged.stderr
    return data, labels, folder / "run", items, read_jsonl(folder / "run" / "judgments.jsonl")


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_model_judged_every_pair_in_both_orders(session):
    _, _, _, items, judgments = session
    assert [j["item_id"] for j in judgments] == [item["id"] for item in items]
    for judgment in judgments:
        assert set(judgment["extra"]["verdicts"]) == {"original", "swapped"} and judgment["usage"]["calls"] == 2


def test_audit_prints_the_position_bias_from_both_orders(session):
    data, labels, run, _, judgments = session
    done = run_cli("audit", "-d", data, "-j", run, "--human", labels, "--bootstrap", "200", env=WIDE, timeout=300)
    assert done.returncode == 0, done.stderr
    both = [j["extra"]["verdicts"] for j in judgments if None not in j["extra"]["verdicts"].values()]
    flips = sum(v["original"] != v["swapped"] for v in both)
    first = sum((v["original"] == "a") + (v["swapped"] == "b") for v in both)
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.startswith("│")}
    assert f"│ {flips / len(both):.3f} │" in rows["position: flip rate"] and "both orders" in done.stdout
    assert f"│ {first / (2 * len(both)):.3f} │" in rows["position: first-position rate (both orders)"]
    assert f"│ {N_LABELLED} │" in rows["position: first-position rate, judge - humans"]


def test_evaluate_prints_the_leaderboard_with_the_labels(session):
    data, labels, run, items, _ = session
    done = run_cli("evaluate", "--data", data, "--judgments", run, "--human", labels, env=WIDE, timeout=300)
    assert done.returncode == 0, done.stderr
    text = one_line(done.stdout)
    assert f"2 systems, {N_PAIRS} comparisons, win probability (ties half); {N_LABELLED} labelled comparisons" in text
    x_wins = sum((item["system_a"] == "sys-x") == (item["label"] == "a") for item in items[:N_LABELLED])
    row = next(line for line in done.stdout.splitlines() if line.startswith("│ sys-x"))
    assert f"{x_wins / N_LABELLED:.3f} [" in row.split("│")[3]  # the human column: sys-x's labelled win rate


def test_compare_fails_the_planted_regression_and_passes_the_better_system(session, tmp_path):
    data, labels, run, _, _ = session
    args = ("compare", "--data", data, "--judgments", run, "--human", labels)
    regression = run_cli(*args, "--baseline", "sys-x", "--candidate", "sys-y", "--junit", tmp_path / "c.xml",
                         timeout=300)
    assert regression.returncode == 1, regression.stdout + regression.stderr
    text = one_line(regression.stdout)
    assert text.startswith("FAIL win rate of sys-y against sys-x - 1/2 = -0.")
    assert f"corrected, head-to-head, n={N_PAIRS}, {N_LABELLED} labelled" in text
    assert 'failures="1"' in (tmp_path / "c.xml").read_text()
    none = run_cli(*args, "--baseline", "sys-y", "--candidate", "sys-x", "--json", timeout=300)
    assert none.returncode == 0, none.stdout + none.stderr
    assert json.loads(none.stdout)["decision"] == "better"
