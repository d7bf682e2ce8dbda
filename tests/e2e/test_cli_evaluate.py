"""`judgelab sample` and `judgelab evaluate` as a user runs them, on published judges' outputs."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

from tests.e2e.cli import run_cli, write_jsonl

HANNA_JUDGE = "Mistral-7B/eval_prompt_1"
TREMA_JUDGE = "TREMA-4prompts/llama3-8b"


def run(*args) -> subprocess.CompletedProcess:
    return run_cli(*args, timeout=300)


def _rows(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def hanna(benchmarks_dir):
    return benchmarks_dir / "hanna.jsonl"


@pytest.fixture(scope="module")
def hanna_judge(benchmarks_dir, tmp_path_factory):
    """One published LLM rater's coherence ratings as a plain judgments file."""
    rows = [{"item_id": r["item_id"], "score": r["prediction"]["coherence"]}
            for r in _rows(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl") if r["judge"] == HANNA_JUDGE]
    return write_jsonl(tmp_path_factory.mktemp("hanna") / "judgments.jsonl", rows)


@pytest.fixture(scope="module")
def hanna_raters(benchmarks_dir, tmp_path_factory):
    """All twenty raters in one file (item_id, judge, score): their disagreement is an uncertainty."""
    rows = [{"item_id": r["item_id"], "judge": r["judge"], "score": r["prediction"]["coherence"]}
            for r in _rows(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl")]
    return write_jsonl(tmp_path_factory.mktemp("raters") / "judgments.jsonl", rows)


def test_sample_then_evaluate_shows_the_estimators_side_by_side(hanna, hanna_judge, tmp_path):
    ids = tmp_path / "ids.txt"
    drawn = run("sample", "--data", hanna, "--budget", "0.1", "--seed", "4", "--out", ids)
    assert drawn.returncode == 0, drawn.stderr
    listed = [line.split("\t") for line in ids.read_text().splitlines() if not line.startswith("#")]
    assert len(listed) == 74  # 6 or 7 of each system's 67 stories
    assert {round(float(p), 4) for _, p in listed} == {round(6 / 67, 4), round(7 / 67, 4)}
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence",
               "--human-ids", ids, "--bootstrap", "300", "--json", "--out", tmp_path / "report")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out["estimators"]) == {"judge", "human", "corrected", "shrunk"}
    assert out["recommended"]["estimator"] in ("shrunk", "corrected", "human") and out["recommended"]["splits"] == 30
    # 74 labels over 11 systems: below the 8 per system from which the recommended ranking kept up (evaluate/choose.py)
    assert out["recommended"]["labels_per_system"] == pytest.approx(74 / 11)
    assert out["recommended"]["provisional"].startswith("6.7 labels per system: below 8")
    assert "label about 2 more per system" in out["recommended"]["provisional"]
    assert len(out["systems"]) == 11 and out["labels"]["n_labelled"] == 74 and out["labels"]["design"] == "stratified"
    human = {r["id"]: r["scores"]["coherence"] for r in _rows(hanna)}
    system_of = {r["id"]: r["system_id"] for r in _rows(hanna)}
    chosen = [i for i, _ in listed]
    for system, est in out["estimators"]["human"].items():
        if system == "info":
            continue
        mine = [human[i] for i in chosen if system_of[i] == system]
        assert est["value"] == pytest.approx(np.mean(mine)) and est["n_labelled"] == len(mine)
        assert est["ci"][0] < est["value"] < est["ci"][1]
    assert len(out["pairs"]["corrected"]) == 55
    # what the judge was worth is counted over the systems with t intervals: with 6.7 labels a system every
    # one has a betting interval, so there is no count (before: "as narrow as 0 labels; 74 were labelled")
    effective = out["effective_labels"]
    assert set(effective["per_system"].values()) == {None}
    assert (effective["total"], effective["labelled"], effective["systems_counted"]) == (None, None, 0)
    page = (tmp_path / "report" / "report.html").read_text()
    assert "<h2>Systems</h2>" in page and page.count("<svg") >= 3
    assert 'id="provisional-ranking"' in page and "6.7 labels per system" in page
    assert 'id="effective-labels"' not in page
    assert {"systems.json", "systems.csv", "pairs.csv", "run.json"} <= {p.name for p in (tmp_path / "report").iterdir()}


def test_terminal_table_and_report_rewrite(hanna, hanna_judge, tmp_path):
    ids = tmp_path / "ids.txt"
    assert run("sample", "--data", hanna, "--budget", "44", "--out", ids).returncode == 0
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", ids,
               "--bootstrap", "100", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # an 80-column terminal: intervals as ± half-widths, lines wrapped
    assert "ranked by the shrunk estimate" in text and "± half-widths" in text and "Human" in text
    # HANNA's judge ranks its 11 systems well: the split-half check on the labels recommends shrunk; the board
    # ends with one reading line, the why and the legends are on the page (issue 45, item 6)
    assert text.endswith("rank: shrunk's point rank (recommended); in brackets, corrected's rank interval b: a "
                         "betting interval. Each column explained: report.html (--out DIR), --json "
                         f"report: {tmp_path / 'out' / 'report.html'}")
    assert ("provisional ranking: 4.0 labels per system, below 8; label about 4 more per system (44 in all) before "
            "relying on it") in text  # 44 labels, 11 systems
    page = " ".join((tmp_path / "out" / "report.html").read_text().split())
    assert "Recommended ranking: shrunk; on 30 random halvings" in page and "Provisional ranking: 4.0 labels" in page
    assert "else a betting interval (b: valid at any number of labels, wider" in page
    assert re.search(r"\b\d\.\d\d ±\d\.\d\d\b", text)
    rows = [line.split("│")[2:] for line in done.stdout.splitlines() if line.startswith("│")]
    assert rows and not any("…" in cell for row in rows for cell in row)  # whole numbers, nothing cut
    # intervals cut at the scale's ends print their bounds (no ± past the scale): wider cells, so at 80 columns
    # the judge and human columns are left out rather than a name cut, and the board says so
    assert "[2.25, 5.00] b" in done.stdout or re.search(r"\[\d\.\d\d, 5\.00\] b", done.stdout)
    assert "left out at 80 columns, to keep the system names whole: judge, human" in text
    # four labels per system: betting intervals, whose width the judge's variance cannot narrow (no such claim)
    assert "pairs separable after Holm" in text and "as narrow as human-only ones with" not in text
    again = run("report", tmp_path / "out")
    assert again.returncode == 0, again.stderr
    assert "<h2>Systems</h2>" in (tmp_path / "out" / "report.html").read_text()


def test_active_sample_from_disagreeing_raters_is_read_back_as_an_active_design(hanna, hanna_raters, tmp_path):
    ids = tmp_path / "active.txt"
    drawn = run("sample", "--data", hanna, "--judgments", hanna_raters, "--budget", "60", "--active", "--out", ids)
    assert drawn.returncode == 0, drawn.stderr
    assert "method=active" in ids.read_text().splitlines()[0]
    probabilities = [float(line.split("\t")[1]) for line in ids.read_text().splitlines() if not line.startswith("#")]
    assert len(set(np.round(probabilities, 6))) > 5  # unequal probabilities
    done = run("evaluate", "--data", hanna, "--judgments", hanna_raters, "--judge", HANNA_JUDGE, "--aspect",
               "coherence", "--human-ids", ids, "--bootstrap", "100", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["labels"]["design"] == "active"


def test_published_judge_outputs_are_read_with_field_and_judge(hanna, benchmarks_dir, tmp_path):
    ids = tmp_path / "ids.txt"
    assert run("sample", "--data", hanna, "--budget", "44", "--out", ids).returncode == 0
    done = run("evaluate", "--data", hanna, "--judgments", benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl",
               "--field", "prediction.coherence", "--judge", HANNA_JUDGE, "--aspect", "coherence", "--human-ids", ids,
               "--bootstrap", "50", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    ratings = [r["prediction"]["coherence"] for r in _rows(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl")
               if r["judge"] == HANNA_JUDGE and r["item_id"] in {x["id"] for x in _rows(hanna) if x["system_id"] == "Human"}]
    assert out["estimators"]["judge"]["Human"]["value"] == pytest.approx(np.mean(ratings))


def test_plan_says_how_many_labels_a_width_needs(hanna, hanna_judge, tmp_path):
    ids = tmp_path / "pilot.txt"
    assert run("sample", "--data", hanna, "--budget", "44", "--out", ids).returncode == 0
    done = run("sample", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", ids,
               "--plan", "0.5")
    assert done.returncode == 0, done.stderr
    assert "Labels for 0.5-wide intervals" in done.stdout and "total" in done.stdout
    wide = run("sample", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", ids,
               "--plan", "10")  # any 4 labels give a 10-wide interval on a 1-5 scale: the t branch's minimum rules
    assert wide.returncode == 0, wide.stderr
    assert re.search(r"total\s*│\s*737\s*│\s*110\s*│\s*110", wide.stdout), wide.stdout  # 11 systems x 10
    assert "at least 10 per system" in " ".join(wide.stdout.split())


@pytest.fixture(scope="module")
def trema_judge(benchmarks_dir, tmp_path_factory):
    rows = []
    for r in _rows(benchmarks_dir / "reference" / "trema_outputs.jsonl"):
        if r["dataset"] == "trec_dl2019" and r["judge"] == TREMA_JUDGE:
            label = r["prediction"]["label"] if isinstance(r["prediction"], dict) else r["prediction"]
            rows.append({"item_id": r["item_id"], "label": label})
    return write_jsonl(tmp_path_factory.mktemp("trema") / "judgments.jsonl", rows)


def evaluate_runs(benchmarks_dir, trema_judge, tmp_path, n_queries, *options):
    """`judgelab evaluate` of the DL 2019 runs with the first ``n_queries`` queries labelled."""
    queries = sorted({r["qid"] for r in _rows(benchmarks_dir / "trec_dl2019.jsonl")})[:n_queries]
    ids = tmp_path / "queries.txt"
    ids.write_text("\n".join(queries) + "\n")
    return run("evaluate", "--data", benchmarks_dir / "trec_dl2019.jsonl", "--judgments", trema_judge, "--runs",
               benchmarks_dir / "trec_dl2019_runs", "--human-ids", ids, "--bootstrap", "100", *options)


def test_runs_are_ranked_per_query_with_human_labels_on_a_few_queries(benchmarks_dir, trema_judge, tmp_path):
    done = evaluate_runs(benchmarks_dir, trema_judge, tmp_path, 6, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["kind"] == "queries" and out["measure"] == "nDCG@10" and len(out["systems"]) == 37
    # no shrinkage for runs sharing queries; the guided ranking instead (evaluate/guided.py)
    assert set(out["estimators"]) == {"judge", "human", "corrected", "guided"}
    assert out["labels"]["n_labelled"] == 6 and len(out["unjudged_share"]) == 37
    assert all(0 <= share <= 1 for share in out["unjudged_share"].values())
    for name in ("human", "corrected"):  # 6 labelled queries: betting intervals, valid at any number of queries
        runs = {k: v for k, v in out["estimators"][name].items() if k != "info"}
        assert all(v["value"] is not None and 0 <= v["ci"][0] <= v["ci"][1] <= 1 for v in runs.values())
        assert set(out["estimators"][name]["info"]["per_system"]) == {"betting"}
    old = json.loads(evaluate_runs(benchmarks_dir, trema_judge, tmp_path, 6, "--json", "--intervals", "t").stdout)
    runs = {k: v for k, v in old["estimators"]["corrected"].items() if k != "info"}  # the t interval: declined
    assert all(v["ci"] == [None, None] and "intervals for runs need 9 (label 3 more)" in v["reason"]
               for v in runs.values())
    guided = {k: v for k, v in out["estimators"]["guided"].items() if k != "info"}
    assert sorted(v["rank"] for v in guided.values()) == list(range(1, 38))
    assert "guided" not in out["pairs"] and out["estimators"]["guided"]["info"]["level"] == 0.05  # 6 queries: declined
    terminal = evaluate_runs(benchmarks_dir, trema_judge, tmp_path, 6)
    assert terminal.returncode == 0, terminal.stderr
    text = " ".join(terminal.stdout.split())
    assert "ranked by the guided ranking" in text and "rank: the guided ranking (recommended for runs)" in text
    assert "b: a betting interval. Each column explained: report.html" in text


def test_runs_get_intervals_from_nine_labelled_queries(benchmarks_dir, trema_judge, tmp_path):
    done = evaluate_runs(benchmarks_dir, trema_judge, tmp_path, 9, "--json")
    assert done.returncode == 0, done.stderr
    corrected = {k: v for k, v in json.loads(done.stdout)["estimators"]["corrected"].items() if k != "info"}
    assert all(v["ci"][0] is not None and v["ci"][0] <= v["value"] + 0.2 for v in corrected.values())


def test_bad_input_is_a_clear_error_or_a_named_skip(hanna, hanna_judge, benchmarks_dir, trema_judge, tmp_path):
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("hanna-0000\nnot-an-item\n")
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", unknown)
    assert done.returncode == 2 and "'not-an-item'" in done.stderr
    one = tmp_path / "one.txt"  # two labels for most systems, one for Human
    rows = _rows(hanna)
    chosen = [r["id"] for s in sorted({r["system_id"] for r in rows}) for r in [x for x in rows if x["system_id"] == s][
        : 1 if s == "Human" else 2]]
    one.write_text("\n".join(chosen) + "\n")
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", one,
               "--bootstrap", "50", "--json")
    assert done.returncode == 0, done.stderr
    human = json.loads(done.stdout)["estimators"]["corrected"]["Human"]  # one label: a betting interval, wide
    assert human["value"] is not None and "reason" not in human and human["ci"][1] - human["ci"][0] > 2
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", one,
               "--bootstrap", "50", "--json", "--intervals", "t")
    human = json.loads(done.stdout)["estimators"]["corrected"]["Human"]  # the t interval needs two
    assert human["value"] is None and human["reason"] == "1 labelled unit (an interval needs 2)"
    no_runs = run("evaluate", "--data", benchmarks_dir / "trec_dl2019.jsonl", "--judgments", trema_judge)
    assert no_runs.returncode == 2 and "--runs" in no_runs.stderr
    pairwise = run("evaluate", "--data", benchmarks_dir / "llmbar.jsonl", "--judgments", hanna_judge)
    assert pairwise.returncode == 2 and "pairwise" in pairwise.stderr
    small = run("sample", "--data", hanna, "--budget", "5", "--out", tmp_path / "x.txt")
    assert small.returncode == 2 and "give at least 22" in small.stderr
    blind = run("sample", "--data", hanna, "--judgments", hanna_judge, "--budget", "30", "--active", "--out",
                tmp_path / "y.txt")
    assert blind.returncode == 2 and "uncertainty" in blind.stderr


def test_human_labels_file_is_read_and_checked(hanna, hanna_judge, tmp_path):
    rows = _rows(hanna)
    chosen = [r for s in sorted({r["system_id"] for r in rows}) for r in [x for x in rows if x["system_id"] == s][:3]]
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {"item_id": r["id"], "aspect": "coherence", "value": r["scores"]["coherence"], "annotator": name}
        for r in chosen for name in ("ann", "bob")])
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human", labels,
               "--bootstrap", "50", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["labels"] == {"n_labelled": 33, "design": "stratified", "source": "labels file",
                             "unlabelled_sample_ids": 0, "scale": [1.0, 5.0], "scale_from": "items"}
    ten = write_jsonl(tmp_path / "ten.jsonl", [{"item_id": r["id"], "score": 2 * r["scores"]["coherence"]}
                                               for r in chosen])
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human", ten)
    assert done.returncode == 2 and "another scale" in done.stderr and "ten.jsonl" in done.stderr
    other = write_jsonl(tmp_path / "other.jsonl", [{"item_id": "sfres-0001", "score": 3.0}])
    done = run("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human", other)
    assert done.returncode == 2 and "'sfres-0001'" in done.stderr


def test_a_run_without_judged_documents_is_skipped_by_name(benchmarks_dir, trema_judge, tmp_path):
    import gzip
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(benchmarks_dir / "trec_dl2019_runs", runs)
    query = _rows(benchmarks_dir / "trec_dl2019.jsonl")[0]["qid"]
    with gzip.open(runs / "nothing-judged.run.gz", "wt") as handle:
        handle.writelines(f"{query} Q0 unknown-doc-{k} {k + 1} {10 - k} nothing\n" for k in range(10))
    done = run("evaluate", "--data", benchmarks_dir / "trec_dl2019.jsonl", "--judgments", trema_judge, "--runs", runs,
               "--bootstrap", "50", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "nothing-judged" in out["skipped"] and "no judged document" in out["skipped"]["nothing-judged"]
    assert "nothing-judged" not in out["systems"]


def test_equal_labels_give_a_value_without_an_interval_and_say_why(tmp_path):
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "system_id": "A" if k < 15 else "B", "group_id": f"g{k % 15}", "source": "s", "output": "o",
         "scale": [1, 5], "scores": {"q": 3}} for k in range(30)])
    judged = write_jsonl(tmp_path / "j.jsonl", [{"item_id": f"i{k}", "score": 3 + (k % 3) / 2} for k in range(30)])
    labels = write_jsonl(tmp_path / "labels.jsonl", [  # A: four 4s; B: 2, 3, 2, 3
        {"item_id": f"i{k}", "score": 4 if k < 15 else 2 + k % 2} for k in (0, 1, 2, 3, 15, 16, 17, 18)])
    args = ("evaluate", "--data", items, "--judgments", judged, "--human", labels, "--aspect", "q",
            "--variance", "system", "--bootstrap", "50")
    shown = run(*args, "--out", tmp_path / "out", "--intervals", "t")  # the t interval: none from equal labels
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "4.00 (no interval)" in text and "human for A: its 4 labelled values are all equal" in text
    assert "shrunk for A, B: shrinkage needs 3 systems" in text and "…" not in shown.stdout
    human = json.loads(run(*args, "--json", "--intervals", "t").stdout)["estimators"]["human"]
    assert human["A"]["value"] == 4.0 and human["A"]["ci"] == [None, None] and "all equal" in human["A"]["reason"]
    assert None not in human["B"]["ci"] and "reason" not in human["B"]
    # the default: four equal labels of 15 items on a 1-5 scale say little, and a betting interval says how little
    human = json.loads(run(*args, "--json").stdout)["estimators"]["human"]
    assert human["A"]["ci"][0] < 4.0 <= human["A"]["ci"][1] and human["A"]["ci"][1] - human["A"]["ci"][0] > 1
    assert "reason" not in human["A"]


def test_skewness_correction_can_be_turned_off(hanna, hanna_judge, tmp_path):
    ids = tmp_path / "ids.txt"
    assert run("sample", "--data", hanna, "--budget", "44", "--out", ids).returncode == 0
    base = ("evaluate", "--data", hanna, "--judgments", hanna_judge, "--aspect", "coherence", "--human-ids", ids,
            "--bootstrap", "50", "--json", "--intervals", "t", "--variance", "pooled")  # the t interval's option
    on, off = (json.loads(run(*base, *flag).stdout) for flag in ((), ("--no-skewness-correction",)))
    assert on["options"]["skewness_correction"] is True and off["options"]["skewness_correction"] is False
    for system, plain in off["estimators"]["human"].items():
        if system == "info":
            continue
        skewed = on["estimators"]["human"][system]
        assert skewed["value"] == plain["value"]  # only the interval's centre moves
        if 1 < min(skewed["ci"] + plain["ci"]) and max(skewed["ci"] + plain["ci"]) < 5:  # not cut at the scale's ends
            assert (skewed["ci"][1] - skewed["ci"][0]) == pytest.approx(plain["ci"][1] - plain["ci"][0])
    assert any(on["estimators"]["human"][s]["ci"] != off["estimators"]["human"][s]["ci"]
               for s in off["estimators"]["human"] if s != "info")


def test_the_aspect_comes_from_a_labels_file_that_rates_one_as_meta_takes_it(tmp_path):
    """Items carrying two aspects and a labels file (judgelab annotate's) rating one: evaluate takes the
    file's aspect without --aspect; a file rating two asks for --aspect in one line."""
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "system_id": "AB"[k % 2], "source": f"s{k // 2}", "output": "o", "scale": [1, 5],
         "scores": {"q": 1 + k % 5, "r": 5 - k % 5}} for k in range(24)])
    judged = write_jsonl(tmp_path / "j.jsonl", [{"item_id": f"i{k}", "score": 1 + (k * 7) % 5} for k in range(24)])
    rows = [{"item_id": f"i{k}", "aspect": "q", "value": 1 + (k * 3) % 5, "annotator": "ann"} for k in range(12)]
    labels = write_jsonl(tmp_path / "labels.jsonl", rows)
    base = ("evaluate", "--data", items, "--judgments", judged, "--bootstrap", "50", "--json")
    done = run(*base, "--human", labels)
    assert done.returncode == 0, done.stderr
    with_option = run(*base, "--human", labels, "--aspect", "q")
    assert json.loads(done.stdout) == json.loads(with_option.stdout)
    both = write_jsonl(tmp_path / "both.jsonl", rows + [{**row, "aspect": "r"} for row in rows])
    done = run(*base, "--human", both)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "the labels rate 2 aspects (q, r): choose one with --aspect" in lines[0]
