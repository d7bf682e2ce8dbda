"""`judgelab evaluate` on comparisons between systems (a slice of Chatbot Arena), as a user runs it."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from tests.e2e.cli import read_jsonl, run_cli, run_main_in_process, write_jsonl

N_COMPARISONS = 3000
GPT4 = "gpt-4-0125-preview"


def run(*args) -> subprocess.CompletedProcess:
    return run_cli(*args, timeout=300)


@pytest.fixture(scope="module")
def arena(benchmarks_dir, tmp_path_factory):
    """Every sixth comparison (3,000 among all 20 systems), GPT-4's verdicts on them, and 400 of them drawn to count as labelled."""
    folder = tmp_path_factory.mktemp("arena")
    comparisons = read_jsonl(benchmarks_dir / "chatbot_arena" / "comparisons.jsonl")[::6][:N_COMPARISONS]
    ids = {row["id"] for row in comparisons}
    judgments = [row for row in read_jsonl(benchmarks_dir / "chatbot_arena" / "judgments.jsonl")
                 if row["item_id"] in ids]
    drawn = np.random.default_rng(0).choice(sorted(ids), 400, replace=False)
    (folder / "sample.txt").write_text("".join(f"{i}\n" for i in drawn))
    return (write_jsonl(folder / "comparisons.jsonl", comparisons), write_jsonl(folder / "judgments.jsonl", judgments),
            folder / "sample.txt", comparisons, judgments)


def _evaluate(arena, *extra):
    data, judgments, sample, *_ = arena
    done = run("evaluate", "--data", data, "--judgments", judgments, "--field", "prediction", "--judge", "gpt-4",
               "--human-ids", sample, *extra)
    assert done.returncode == 0, done.stderr
    return done


def test_win_probability_table_with_simultaneous_rank_sets(arena, tmp_path):
    shown = " ".join(_evaluate(arena, "--out", tmp_path / "board").stdout.split())
    assert "win probability (ties half); 400 labelled comparisons" in shown
    out = json.loads(_evaluate(arena, "--json").stdout)
    methods = out["rank_sets"]  # max-t where every system has a t interval; Bonferroni with a betting one
    for name in ("human", "corrected"):
        betting = "betting" in out["estimators"][name]["info"]["per_system"]
        assert methods[name]["method"] == ("bonferroni" if betting else "max-t")
    page = " ".join((tmp_path / "board" / "report.html").read_text().split())  # the legends live on the page
    assert (f"rank sets that hold for every system at once (auto: judge max-t, human {methods['human']['method']}, "
            f"corrected {methods['corrected']['method']})") in page
    assert set(out["estimators"]) == {"judge", "human", "corrected", "shrunk", "guided"} and len(out["systems"]) == 20
    # the recommended point ranking (shrunk, checked on halves of the labels) with corrected's rank sets in
    # brackets: one rank column, as for pointwise items (issue 45, item 6)
    assert out["recommended"]["estimator"] in ("shrunk", "corrected") and out["recommended"]["splits"] == 30
    if out["recommended"]["estimator"] == "shrunk":
        assert "rank: shrunk's point rank (recommended); in brackets, corrected's rank interval" in shown
        assert "point rank" not in shown.split("rank: shrunk's")[0]  # no second rank column
        assert "Recommended ranking: shrunk; on 30 random halvings" in page
    corrected = out["estimators"]["corrected"]
    assert 0 < corrected["info"]["judge_weight"] <= 1
    for system in out["systems"]:
        low, high = corrected[system]["ci"]
        best, worst = corrected[system]["rank_interval"]
        assert low < corrected[system]["value"] < high and best <= corrected[system]["rank"] <= worst
    # the judge-only values are GPT-4's own means over all 3,000 comparisons
    _, _, _, comparisons, judgments = arena
    verdict = {j["item_id"]: j["prediction"] for j in judgments if j["judge"] == GPT4}
    score = {"a": 1.0, "tie": 0.5, "b": 0.0}
    wins = [score[verdict[c["id"]]] for c in comparisons if c["system_a"] == "gpt-4"]
    wins += [1 - score[verdict[c["id"]]] for c in comparisons if c["system_b"] == "gpt-4"]
    assert out["estimators"]["judge"]["gpt-4"]["value"] == pytest.approx(np.mean(wins))


def test_bradley_terry_and_baseline_win_rate_write_the_report_folder(arena, tmp_path):
    strengths = json.loads(_evaluate(arena, "--estimand", "bradley-terry", "--json").stdout)
    assert strengths["measure"].startswith("Bradley-Terry")
    corrected, human = strengths["estimators"]["corrected"], strengths["estimators"]["human"]
    taken = set(corrected["info"].get("labels_own_narrower") or ())
    if not taken:  # the strengths are centred
        assert abs(sum(corrected[s]["value"] for s in strengths["systems"])) < 1e-6
    for system in taken:  # a system whose corrected interval was wider takes the human-only strength
        assert corrected[system]["value"] == human[system]["value"] and corrected[system]["ci"] == human[system]["ci"]
    assert all(corrected[s]["ci"][1] - corrected[s]["ci"][0] <= human[s]["ci"][1] - human[s]["ci"][0] + 1e-12
               for s in strengths["systems"] if None not in corrected[s]["ci"] + human[s]["ci"])
    done = _evaluate(arena, "--estimand", "baseline-win-rate", "--baseline", "vicuna-13b", "--rank-method", "holm",
                     "--out", tmp_path / "report")
    assert "win rate against vicuna-13b" in done.stdout
    assert "the baseline (vicuna-13b)" in done.stdout
    written = json.loads((tmp_path / "report" / "systems.json").read_text())
    assert written["baseline"] == "vicuna-13b" and written["rank_sets"]["corrected"]["method"] == "holm"
    assert {"systems.csv", "pairs.csv", "report.html"} <= {p.name for p in (tmp_path / "report").iterdir()}


def test_bradley_terry_bootstrap_intervals_agree_with_the_sandwich_ones(arena, tmp_path):
    """--bt-intervals bootstrap (--bootstrap refits of resampled comparisons): the same strengths, and
    per system an interval within 20% of the sandwich one's width (judge-only). With 400 labels
    among 20 systems one has 2 labelled comparisons: the label-based estimates keep their t
    intervals, and say why (a percentile bootstrap of 2 labels covers far less than it says)."""
    sandwich = json.loads(_evaluate(arena, "--estimand", "bradley-terry", "--json").stdout)
    boot = json.loads(_evaluate(arena, "--estimand", "bradley-terry", "--bt-intervals", "bootstrap",
                                "--bootstrap", "400", "--json").stdout)
    assert boot["options"]["intervals"] == "bootstrap" and boot["options"]["n_resamples"] == 400
    for system in boot["systems"]:
        shown, usual = boot["estimators"]["judge"][system], sandwich["estimators"]["judge"][system]
        assert shown["value"] == pytest.approx(usual["value"])
        ratio = (shown["ci"][1] - shown["ci"][0]) / (usual["ci"][1] - usual["ci"][0])
        assert 0.8 < ratio < 1.2, (system, ratio)
    table = _evaluate(arena, "--estimand", "bradley-terry", "--bt-intervals", "bootstrap", "--bootstrap", "200",
                      "--out", tmp_path / "bt").stdout
    page = " ".join((tmp_path / "bt" / "report.html").read_text().split())
    assert "95% bootstrap intervals" in table and "percentiles of 200 resamples" in page
    assert boot["estimators"]["corrected"]["info"]["intervals"] == "sandwich"
    assert "corrected: a system has 2 labelled comparison(s): percentile bootstrap intervals" in " ".join(table.split())
    refused = run("evaluate", "--data", arena[0], "--judgments", arena[1], "--field", "prediction", "--judge", "gpt-4",
                  "--bt-intervals", "bootstrap")
    assert refused.returncode == 2 and "bootstrap intervals are for the bradley-terry estimand" in refused.stderr


def test_labels_file_and_judgelab_pairwise_judge_output(arena, tmp_path):
    """--human with a labels file equals the items' own labels for the same ids; judgments in the
    pairwise judge's layout (label, both orders in extra.verdicts) count as the mean of the two."""
    data, judgments, sample, comparisons, published = arena
    wanted = set(sample.read_text().split())
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": c["id"], "value": c["label"].split(" ")[0]}
                                                       for c in comparisons if c["id"] in wanted])
    own = json.loads(_evaluate(arena, "--json").stdout)
    from_file = json.loads(run("evaluate", "--data", data, "--judgments", judgments, "--field", "prediction",
                               "--judge", "gpt-4", "--human", labels, "--json").stdout)
    assert from_file["estimators"]["human"]["gpt-4"]["value"] == pytest.approx(own["estimators"]["human"]["gpt-4"]["value"])
    swapped = {"a": "b", "b": "a", "tie": "tie"}
    ours = [{"item_id": j["item_id"], "judge": "pairwise", "label": j["prediction"],
             "extra": {"verdicts": {"original": j["prediction"], "swapped": swapped[j["prediction"]]}}}
            for j in published if j["judge"] == GPT4]
    both = write_jsonl(tmp_path / "ours.jsonl", ours)
    done = run("evaluate", "--data", data, "--judgments", both, "--human-ids", sample, "--json")
    assert done.returncode == 0, done.stderr
    judged = json.loads(done.stdout)["estimators"]["judge"]
    # each verdict averaged with its opposite: every comparison a tie, every win probability one half
    assert {judged[s]["value"] for s in judged if s != "info"} == {0.5}


def _bad(capsys, tmp_path, *args):
    code, err = run_main_in_process(capsys, "evaluate", *args, "--out", tmp_path / "never")
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "never").exists()
    return err


def test_bad_input_exits_2_with_one_line_and_writes_nothing(arena, tmp_path, capsys):
    data, judgments, sample, comparisons, published = arena
    rows = [dict(j) for j in published if j["judge"] == GPT4]
    rows[6]["prediction"] = "both"
    bad_verdicts = write_jsonl(tmp_path / "bad_verdicts.jsonl", rows)
    err = _bad(capsys, tmp_path, "--data", data, "--judgments", bad_verdicts, "--field", "prediction")
    assert "bad_verdicts.jsonl:7" in err and "'both' is not a verdict" in err
    itself = [dict(c) for c in comparisons]
    itself[3]["system_b"] = itself[3]["system_a"]
    err = _bad(capsys, tmp_path, "--data", write_jsonl(tmp_path / "itself.jsonl", itself), "--judgments",
               judgments, "--field", "prediction", "--judge", "gpt-4")
    assert "itself.jsonl:4" in err and "compared with itself" in err
    unknown = [dict(c) for c in comparisons]
    unknown[9]["label"] = "draw"
    err = _bad(capsys, tmp_path, "--data", write_jsonl(tmp_path / "draw.jsonl", unknown), "--judgments",
               judgments, "--field", "prediction", "--judge", "gpt-4")
    assert "draw.jsonl:10" in err and "'draw' is not a verdict" in err
    err = _bad(capsys, tmp_path, "--data", data, "--judgments", judgments, "--field", "prediction", "--judge",
               "gpt-4", "--estimand", "baseline-win-rate", "--baseline", "gpt-5")
    assert "baseline 'gpt-5' is not a system of the data" in err
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": "arena-99999", "value": "a"}])
    err = _bad(capsys, tmp_path, "--data", data, "--judgments", judgments, "--field", "prediction", "--judge",
               "gpt-4", "--human", labels)
    assert "arena-99999" in err and "not in the data" in err
    apart = [c for c in comparisons if ({c["system_a"], c["system_b"]} <= {"gpt-4", "claude-v1"})
             or not ({c["system_a"], c["system_b"]} & {"gpt-4", "claude-v1"})]
    err = _bad(capsys, tmp_path, "--data", write_jsonl(tmp_path / "apart.jsonl", apart), "--judgments", judgments,
               "--field", "prediction", "--judge", "gpt-4")
    assert "do not connect the systems: 2 separate groups ({claude-v1, gpt-4} | {" in err
