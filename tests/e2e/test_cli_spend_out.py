"""``judgelab sample --spend B --out FILE``: the plan's draw written for ``judgelab annotate --ids``, the judges
to run named with their command; runs planned by labelled query; and bad input refused with nothing written."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.data import Item, Judgment
from judgelab.data.io import save_items, save_judgments
from judgelab.evaluate.sample_file import read_sample
from tests.e2e.cli import run_main_captured
from tests.unit.test_spend_runs import DOCS, trec


@pytest.fixture()
def items(tmp_path):
    """Three systems' items rated 1-5 by people, a judge 'sharp' near the rating, and a pilot of 45 ids."""
    rng = np.random.default_rng(0)
    rows, judged = [], []
    for s in range(3):
        for k in range(80):
            human = int(rng.integers(1, 6))
            rows.append(Item(id=f"s{s}-{k}", system_id=f"s{s}", output="x", scores={"q": human}))
            judged.append(Judgment(item_id=f"s{s}-{k}", judge="sharp",
                                   score=float(np.clip(human + rng.choice([-1, 0, 0, 0, 1]), 1, 5))))
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("".join(f"s{s}-{k}\n" for s in range(3) for k in range(0, 80, 5)))
    return save_items(rows, tmp_path / "items.jsonl"), save_judgments(judged, tmp_path / "sharp.jsonl"), pilot


def spend(capsys, data, judgments, pilot, *more):
    return run_main_captured(capsys, "sample", "--data", data, "-j", judgments, "--aspect", "q", "--human-ids", pilot,
                             "--label-cost", "0.5", *more)


def test_spend_out_writes_the_ids_to_label_and_names_the_judges_to_run(capsys, items, tmp_path):
    data, judgments, pilot = items
    out = tmp_path / "draw.txt"
    code, stdout, stderr = spend(capsys, data, judgments, pilot, "--spend", "60", "--judge-cost", "sharp=0.001",
                                 "--out", out)
    assert code == 0, stderr
    text = " ".join(stdout.split())
    assert "* the plan: sharp on every item" in text
    assert f"run sharp: judgelab judge --data {data} --config <sharp's config> --out runs/sharp" in text
    drawn = read_sample(out)
    listed = {line.strip() for line in pilot.read_text().splitlines()}
    assert drawn.ids and not set(drawn.ids) & listed  # the pilot's items are labelled already
    assert f"{len(drawn.ids)} new items to label -> {out}" in text and f"--ids {out}" in text
    assert drawn.header["plan"] == "spend" and int(drawn.header["pilot"]) == len(listed)
    assert int(drawn.header["labelled"]) == len(drawn.ids) + len(listed)


@pytest.mark.parametrize(("args", "message"), [
    (["--spend", "60", "--judge-cost", "sharp=0.001", "--out", "{tmp}/missing/draw.txt"], "no folder"),
    (["--spend", "60", "--judge-cost", "sharp=0.001", "--budget", "20", "--out", "{tmp}/draw.txt"],
     "--out with --spend writes the plan's draw"),
    (["--spend", "0.3", "--judge-cost", "sharp=0", "--out", "{tmp}/draw.txt"],
     "--spend 0.3 buys no plan with 10 labels a system"),
    (["--spend", "60", "--judge-cost", "sharp=0", "--judge-cost", "gpt=1", "--out", "{tmp}/draw.txt"],
     "--judge-cost gpt=1: matches no judge"),
])
def test_bad_input_is_refused_and_nothing_is_written(capsys, items, tmp_path, args, message):
    data, judgments, pilot = items
    code, _, stderr = spend(capsys, data, judgments, pilot, *[a.format(tmp=tmp_path) for a in args])
    assert code == 2 and message in " ".join(stderr.split())
    assert not (tmp_path / "draw.txt").exists() and not (tmp_path / "missing").exists()


@pytest.fixture()
def trec_files(tmp_path):
    rows, judged, runs = trec(tmp_path / "runs")
    sharp = [j for j in judged if j.judge == "sharp"]
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("".join(f"q{q}\n" for q in range(0, 120, 10)))
    return rows, save_judgments(sharp, tmp_path / "sharp.jsonl"), runs, pilot


def test_runs_plan_labelled_queries_and_the_draw_lists_their_pairs(capsys, trec_files, tmp_path):
    rows, judgments, runs, pilot = trec_files
    data = save_items(rows, tmp_path / "trec.jsonl")
    out = tmp_path / "pairs.txt"
    code, stdout, stderr = run_main_captured(
        capsys, "sample", "--data", data, "-j", judgments, "--runs", runs, "--human-ids", pilot, "--spend", "100",
        "--judge-cost", "sharp=0.001", "--label-cost", "0.25", "--out", out)
    assert code == 0, stderr
    text = " ".join(stdout.split())
    assert "mean interval width over runs" in text
    assert "sharp on every query-document pair, 19 labelled queries (about 380 pairs), each serving every run" in text
    drawn = read_sample(out)
    queries = {unit.split("-")[0] for unit in drawn.ids}
    assert len(queries) == 19 - 12 and len(drawn.ids) == DOCS * len(queries)
    assert f"{len(drawn.ids)} query-document pairs of 7 new queries to label -> {out}" in text
    assert "--aspect relevance" in text


def test_runs_whose_pilot_has_no_labelled_query_are_refused(capsys, trec_files, tmp_path):
    rows, judgments, runs, pilot = trec_files
    listed = {f"q{q}" for q in range(0, 120, 10)}
    unlabelled = [row.model_copy(update={"label": None}) if row.qid in listed else row for row in rows]
    data = save_items(unlabelled, tmp_path / "trec.jsonl")
    out = tmp_path / "pairs.txt"
    code, _, stderr = run_main_captured(
        capsys, "sample", "--data", data, "-j", judgments, "--runs", runs, "--human-ids", pilot, "--spend", "100",
        "--judge-cost", "sharp=0.001", "--label-cost", "0.25", "--out", out)
    assert code == 2 and "no query of the runs has a human label" in " ".join(stderr.split())
    assert not out.exists()
