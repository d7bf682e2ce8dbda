"""`judgelab compare` on comparisons between systems, as a CI job runs it: a slice of Chatbot Arena
(four systems, every comparison among them), GPT-4's published verdicts as the judge and the human
votes of a random 40% as the labels. vicuna-13b beats oasst-pythia-12b in 69% of the humans' votes:
oasst as the candidate is the planted regression."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import numpy as np
import pytest

from tests.e2e.cli import read_jsonl, run_cli, run_main_in_process, write_jsonl

SYSTEMS = ("vicuna-13b", "koala-13b", "oasst-pythia-12b", "alpaca-13b")
BETTER, WORSE = "vicuna-13b", "oasst-pythia-12b"
GPT4 = "gpt-4-0125-preview"


@pytest.fixture(scope="module")
def arena(benchmarks_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("arena")
    comparisons = [row for row in read_jsonl(benchmarks_dir / "chatbot_arena" / "comparisons.jsonl")
                   if row["system_a"] in SYSTEMS and row["system_b"] in SYSTEMS]
    ids = {row["id"] for row in comparisons}
    judgments = [row for row in read_jsonl(benchmarks_dir / "chatbot_arena" / "judgments.jsonl")
                 if row["item_id"] in ids and row["judge"] == GPT4]
    rng = np.random.default_rng(0)
    labelled = sorted(i for i in ids if rng.random() < 0.4)
    (folder / "labelled.txt").write_text("".join(f"{i}\n" for i in labelled), encoding="utf-8")
    write_jsonl(folder / "comparisons.jsonl", comparisons)
    write_jsonl(folder / "judgments.jsonl", judgments)
    return folder, comparisons, set(labelled)


def compare(data, judgments, *args):
    return run_cli("compare", "--data", data, "--judgments", judgments, "--field", "prediction", *args, timeout=300)


def human_win_rate(comparisons, labelled, system, opponent):
    score = {"a": 1.0, "b": 0.0}
    wins = [score.get(r["label"], 0.5) if r["system_a"] == system else 1 - score.get(r["label"], 0.5)
            for r in comparisons if {r["system_a"], r["system_b"]} == {system, opponent} and r["id"] in labelled]
    return np.mean(wins), len(wins)


def test_the_worse_system_fails_head_to_head_and_the_better_one_passes(arena, tmp_path):
    folder, comparisons, labelled = arena
    data, judged, ids = folder / "comparisons.jsonl", folder / "judgments.jsonl", folder / "labelled.txt"
    junit, summary = tmp_path / "ci" / "compare.xml", tmp_path / "ci" / "summary.md"
    worse = compare(data, judged, "--baseline", BETTER, "--candidate", WORSE, "--human-ids", ids,
                    "--margin", "0.05", "--junit", junit, "--markdown", summary)
    assert worse.returncode == 1, worse.stdout + worse.stderr
    text = " ".join(worse.stdout.split())
    assert text.startswith(f"FAIL win rate of {WORSE} against {BETTER} - 1/2 = -0.")
    assert "corrected, head-to-head, n=347," in text and "comparisons: head-to-head: the 347 comparisons" in text
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "1"
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["basis"] == "head-to-head" and properties["decision"] == "worse"
    assert "| comparisons | head-to-head: the 347 comparisons" in summary.read_text()

    # the human-only estimate is the labelled votes' win rate, counted here
    human = json.loads(compare(data, judged, "--baseline", BETTER, "--candidate", WORSE, "--human-ids", ids,
                               "--estimator", "human", "--json").stdout)
    rate, n_labelled = human_win_rate(comparisons, labelled, WORSE, BETTER)
    assert human["difference"] == pytest.approx(rate - 0.5) and human["n_labelled"] == n_labelled
    corrected = json.loads(compare(data, judged, "--baseline", BETTER, "--candidate", WORSE, "--human-ids", ids,
                                   "--json").stdout)
    # the judge's verdicts on all 347 narrow the interval of the 40% labelled
    assert corrected["ci"][1] - corrected["ci"][0] < human["ci"][1] - human["ci"][0]

    better = compare(data, judged, "--baseline", WORSE, "--candidate", BETTER, "--human-ids", ids, "--json")
    assert better.returncode == 0, better.stderr
    assert json.loads(better.stdout)["decision"] == "better"


def test_systems_that_never_meet_are_compared_through_the_others(arena, tmp_path):
    """With their head-to-head comparisons removed, the gate compares the two systems' win
    probabilities, as `judgelab evaluate` estimates them on the same comparisons, and says so."""
    folder, comparisons, labelled = arena
    kept = [r for r in comparisons if {r["system_a"], r["system_b"]} != {BETTER, WORSE}]
    apart = write_jsonl(tmp_path / "apart.jsonl", kept)
    ids = tmp_path / "labelled.txt"
    ids.write_text("".join(r["id"] + "\n" for r in kept if r["id"] in labelled), encoding="utf-8")
    args = ("--judgments", folder / "judgments.jsonl", "--field", "prediction", "--human-ids", ids)
    worse = run_cli("compare", "--data", apart, *args, "--baseline", BETTER, "--candidate", WORSE, timeout=300)
    assert worse.returncode == 1, worse.stdout + worse.stderr
    text = " ".join(worse.stdout.split())
    assert f"win probability of {WORSE} - that of {BETTER} = -0." in text and "via others" in text
    assert f"{WORSE} and {BETTER} meet in 0 comparison(s)" in text
    shown = json.loads(run_cli("compare", "--data", apart, *args, "--baseline", BETTER, "--candidate", WORSE,
                               "--json", timeout=300).stdout)
    board = json.loads(run_cli("evaluate", "--data", apart, *args, "--json", timeout=300).stdout)
    corrected = board["estimators"]["corrected"]
    assert shown["difference"] == pytest.approx(corrected[WORSE]["value"] - corrected[BETTER]["value"])
    assert run_cli("compare", "--data", apart, *args, "--baseline", WORSE, "--candidate", BETTER,
                   timeout=300).returncode == 0


def test_systems_that_never_connect_exit_2_with_one_line_and_write_nothing(arena, tmp_path, capsys):
    folder, comparisons, _ = arena
    split = write_jsonl(tmp_path / "split.jsonl", [
        r for r in comparisons if {r["system_a"], r["system_b"]} in ({BETTER, "koala-13b"}, {WORSE, "alpaca-13b"})])
    out = tmp_path / "out"
    code, err = run_main_in_process(capsys, "compare", "--data", split, "--judgments", folder / "judgments.jsonl",
                                    "--field", "prediction", "--baseline", BETTER, "--candidate", WORSE,
                                    "--junit", out / "c.xml", "--markdown", out / "s.md")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"'{WORSE}' and '{BETTER}' never meet, directly or through other systems" in " ".join(err.split())
    assert not out.exists()


def test_a_candidate_that_lost_every_labelled_comparison_exits_1_and_names_its_interval(tmp_path):
    """The clearest evidence there is: the humans preferred the baseline in all 8 labelled
    comparisons (the judge sees some ties). The t interval has no width there; the gate uses
    Clopper-Pearson's exact one and fails (it exited 2, "no interval", before)."""
    rows = [{"id": f"c{k}", "system_a": "new" if k % 2 else "old", "system_b": "old" if k % 2 else "new",
             "label": ("b" if k % 2 else "a") if k < 8 else None} for k in range(20)]
    data = write_jsonl(tmp_path / "comparisons.jsonl", rows)
    judged = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": r["id"], "label": "tie" if k % 3 == 0 else ("b" if k % 2 else "a")} for k, r in enumerate(rows)])
    ids = tmp_path / "labelled.txt"
    ids.write_text("".join(f"c{k}\n" for k in range(8)), encoding="utf-8")
    summary = tmp_path / "summary.md"
    result = run_cli("compare", "--data", data, "--judgments", judged, "--human-ids", ids, "--baseline", "old",
                     "--candidate", "new", "--margin", "0.05", "--markdown", summary)
    assert result.returncode == 1, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert text.startswith("FAIL win rate of new against old - 1/2 = -0.5 [-0.5, -0.1306] (95% Clopper-Pearson "
                           "interval, corrected, head-to-head, n=20, 8 labelled;"), text
    assert "its 8 labelled verdicts are all losses of new: no spread for a t interval" in text
    assert "Clopper-Pearson interval)" in summary.read_text()
    shown = json.loads(run_cli("compare", "--data", data, "--judgments", judged, "--human-ids", ids, "--baseline",
                               "old", "--candidate", "new", "--estimator", "human", "--json").stdout)
    assert shown["interval"] == "Clopper-Pearson" and shown["decision"] == "worse"
    assert shown["ci"] == pytest.approx([-0.5, 1 - 0.025 ** (1 / 8) - 0.5])
    assert run_cli("compare", "--data", data, "--judgments", judged, "--human-ids", ids, "--baseline", "new",
                   "--candidate", "old").returncode == 0
