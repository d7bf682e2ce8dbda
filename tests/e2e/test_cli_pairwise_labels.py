"""Labels for comparisons between systems, as a user gets them: `judgelab sample` draws comparisons
(stratified by pair, or active where the judge's two orders disagree), `judgelab annotate --pairwise`
(the real server, answers posted over HTTP) writes a/b/tie labels, `judgelab evaluate --human` and
`judgelab audit --human` read them with the sample's design."""

from __future__ import annotations

import html
import json
import re

import httpx
import numpy as np
import pytest

from judgelab.data.labels import read_labels
from tests.e2e.annotate_server import AnnotateServer
from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl

pytest.importorskip("starlette", reason="needs the annotate extra")

SYSTEMS = ("alpha", "beta", "gamma", "delta")
QUALITY = {"alpha": 0.9, "beta": 0.6, "gamma": 0.4, "delta": 0.1}


@pytest.fixture(scope="module")
def made_up(tmp_path_factory):
    """120 comparisons with texts among four systems, and a judge's verdicts in both orders."""
    folder = tmp_path_factory.mktemp("pairs")
    rng = np.random.default_rng(0)
    rows, judged = [], []
    for k in range(120):
        a, b = rng.choice(SYSTEMS, 2, replace=False)
        better = a if rng.random() < 0.5 + (QUALITY[a] - QUALITY[b]) / 2 else b
        rows.append({"id": f"c{k:03d}", "system_a": str(a), "system_b": str(b), "instruction": f"Question {k}?",
                     "output_a": f"{a} answers question {k}", "output_b": f"{b} answers question {k}",
                     "label": "a" if better == a else "b"})
        original = "a" if rng.random() < 0.5 + (QUALITY[a] - QUALITY[b]) / 2 else "b"
        swapped = original if rng.random() < 0.7 else ("b" if original == "a" else "a")
        judged.append({"item_id": f"c{k:03d}", "judge": "toy", "label": original,
                       "extra": {"verdicts": {"original": original, "swapped": swapped}}})
    return write_jsonl(folder / "comparisons.jsonl", rows), write_jsonl(folder / "judgments.jsonl", judged), rows


def _drawn(path) -> list[tuple[str, float]]:
    return [(line.split("\t")[0], float(line.split("\t")[1])) for line in path.read_text().splitlines()
            if not line.startswith("#")]


def test_sample_stratified_by_pair_and_active_where_the_orders_disagree(made_up, tmp_path):
    data, judgments, rows = made_up
    stratified = tmp_path / "stratified.txt"
    done = run_cli("sample", "--data", data, "--budget", "24", "--out", stratified)
    assert done.returncode == 0, done.stderr
    assert "24 comparisons drawn (stratified, 6 strata (pairs of systems)" in " ".join(done.stdout.split())
    pair_of = {r["id"]: frozenset((r["system_a"], r["system_b"])) for r in rows}
    sizes = {pair: sum(1 for r in rows if pair_of[r["id"]] == pair) for pair in set(pair_of.values())}
    for item_id, probability in _drawn(stratified):  # n_h / N_h of its pair
        chosen = sum(1 for i, _ in _drawn(stratified) if pair_of[i] == pair_of[item_id])
        assert probability == pytest.approx(chosen / sizes[pair_of[item_id]])
    active = tmp_path / "active.txt"
    done = run_cli("sample", "--data", data, "--judgments", judgments, "--budget", "24", "--active", "--out", active)
    assert done.returncode == 0, done.stderr
    verdicts = {j["item_id"]: j["extra"]["verdicts"] for j in map(json.loads, judgments.read_text().splitlines())}
    unsure = [p for i, p in _drawn(active) if len(set(verdicts[i].values())) == 2]
    sure = [p for i, p in _drawn(active) if len(set(verdicts[i].values())) == 1]
    assert unsure and sure and min(unsure) > max(sure)  # within a pair, disagreeing orders are likelier


def test_annotate_pairwise_labels_feed_evaluate_and_audit(made_up, tmp_path):
    data, judgments, rows = made_up
    sample = tmp_path / "sample.txt"
    assert run_cli("sample", "--data", data, "--judgments", judgments, "--budget", "24", "--active",
                   "--out", sample).returncode == 0
    out = tmp_path / "labels.jsonl"
    truth = {r["id"]: r for r in rows}
    with AnnotateServer("--data", data, "--aspect", "preference", "--pairwise", "--ids", sample, "--out", out,
                        "--annotator", "ann") as server, httpx.Client(base_url=server.url) as client:
        for _ in range(24):
            page = client.get("/").text
            form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
            left = html.unescape(re.search(r'<div class="text" id="left">(.*?)</div>', page, re.S)[1])
            item = truth[form["item_id"]]
            assert item["instruction"] in page and 'data-key="a"' in page and 'data-key="t"' in page
            winner = item["output_a"] if item["label"] == "a" else item["output_b"]
            answer = client.post("/answer", data={**form, "value": "left" if left == winner else "right"},
                                 headers={"origin": server.url.rstrip("/")}, follow_redirects=False)
            assert answer.status_code == 303
    labels = read_labels(out)
    assert len(labels) == 24 and all(truth[label.item_id]["label"] == label.value for label in labels)
    done = run_cli("evaluate", "--data", data, "--judgments", judgments, "--human", out, "--human-ids", sample,
                   "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["labels"]["n_labelled"] == 24 and report["labels"]["design"] == "active within pairs"
    assert report["labels"]["source"] == "labels file" and set(report["estimators"]) >= {"human", "corrected"}
    audited = run_cli("audit", "--data", data, "--judgments", judgments, "--human", out)
    assert audited.returncode == 0, audited.stderr


def test_bad_input_is_one_line_and_exit_2(made_up, tmp_path, capsys):
    data, _, rows = made_up
    out = tmp_path / "ids.txt"
    code, err = run_main_in_process(capsys, "sample", "--data", data, "--budget", "500", "--out", out)
    assert code == 2 and "--budget 500 is more than the 120 comparisons there are" in err
    unnamed = write_jsonl(tmp_path / "unnamed.jsonl", [{"id": f"u{k}", "output_a": "x", "output_b": "y"}
                                                       for k in range(4)])
    code, err = run_main_in_process(capsys, "sample", "--data", unnamed, "--budget", "2", "--out", out)
    assert code == 2 and "comparison 'u0' names no systems" in err
    arena_like = write_jsonl(tmp_path / "votes.jsonl", [{"id": f"v{k}", "system_a": "x", "system_b": "y",
                                                         "label": "a"} for k in range(3)])
    labels = tmp_path / "labels.jsonl"
    code, err = run_main_in_process(capsys, "annotate", "--data", arena_like, "--aspect", "preference",
                                    "--pairwise", "--out", labels)
    assert code == 2 and "3 comparisons have no texts to show (output_a, output_b)" in err
    pointwise = write_jsonl(tmp_path / "points.jsonl", [{"id": "p0", "output": "text"}])
    code, err = run_main_in_process(capsys, "annotate", "--data", pointwise, "--aspect", "preference",
                                    "--pairwise", "--out", labels)
    assert code == 2 and "--pairwise needs pairwise items" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() and not labels.exists()
