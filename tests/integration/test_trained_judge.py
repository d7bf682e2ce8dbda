"""The trained scorer for real: fine-tune the shipped MiniLM on a few benchmark items (1 epoch,
short window), save it, reload it through `judgelab judge --config`, and distil a teacher."""

from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest

from judgelab.data import load_items, load_judgments, save_items
from judgelab.judges.base import load_judge
from judgelab.judges.trained import TrainedJudge
from tests.e2e.cli import run_cli

FAST = ["--epochs", "1", "--max-length", "64", "--batch-size", "8", "--train-layers", "2"]


@pytest.fixture(scope="module")
def topical30(benchmarks_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("trained") / "topical30.jsonl"
    save_items(list(islice(load_items(benchmarks_dir / "topical_chat.jsonl"), 30)), path)
    return path


def test_train_save_and_reload_through_judge_config_gives_the_same_scores(topical30, tmp_path):
    out = tmp_path / "scorer"
    trained = run_cli("train", "--data", topical30, "--aspect", "coherence", "--out", out, *FAST,
                      "--curve", "12,all", "--folds", "2", timeout=900)
    assert trained.returncode == 0, trained.stderr + trained.stdout
    record = json.loads((out / "training.json").read_text())
    assert record["format"] == "judgelab.training/1" and record["n_items"] == 30
    assert record["n_train"] + record["n_val"] == 30 and record["n_val"] > 0
    assert record["history"] and record["config"]["weights"] == "weights"
    assert set(record["validation_predictions"]) and "with_targets" in record["validation"]
    assert (out / "weights" / "model.safetensors").is_file() and (out / "weights" / "head.pt").is_file()
    small, everything = record["learning_curve"]
    assert small["train_sizes"] == [12, 12] and sorted(everything["train_sizes"]) == [12, 18]  # whole groups of 6
    assert small["n_predicted"] == everything["n_predicted"] == 30  # every item predicted out of fold
    assert everything["with_targets"]["dataset"]["spearman"]["value"] is not None

    run = run_cli("judge", "--config", out / "judge.yaml", "--data", topical30, "--out", tmp_path / "run", timeout=600)
    assert run.returncode == 0, run.stderr + run.stdout
    cli_scores = {j.item_id: j.score for j in load_judgments(tmp_path / "run" / "judgments.jsonl")}
    assert len(cli_scores) == 30 and np.ptp(list(cli_scores.values())) > 0  # it discriminates

    judge = load_judge(out / "judge.yaml")
    assert isinstance(judge, TrainedJudge) and judge.fitted and judge.scale == (1.0, 3.0)
    in_process = {j.item_id: j.score for j in judge.run(list(load_items(topical30)))}
    assert in_process == cli_scores  # same weights, same batches: bit-identical
    for item_id, score in record["validation_predictions"].items():  # the in-memory model before saving
        assert cli_scores[item_id] == pytest.approx(score, abs=1e-5)


def test_distil_published_llm_ratings_with_an_ordinal_head(benchmarks_dir):
    from judgelab.train import check_trainable, read_teacher, teacher_targets, train_scorer
    from judgelab.train.save import training_record

    hanna = list(islice(load_items(benchmarks_dir / "hanna.jsonl"), 40))
    teacher = read_teacher(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl", "coherence", judge="Mistral")
    targets = teacher_targets(hanna, "coherence", teacher)
    check_trainable(targets, "teacher")
    spec = TrainedJudge(aspect="coherence", head="ordinal", epochs=1, max_length=48, batch_size=8, train_layers=1,
                        max_levels=5)
    trained = train_scorer(spec, targets)
    assert trained.spec.levels is not None and len(trained.spec.levels) == 5
    record = training_record(trained, targets)
    assert {"with_targets", "with_humans"} <= set(record["validation"])
    predicted = trained.predict(list(targets.items[:8]))
    low, high = trained.spec.levels[0], trained.spec.levels[-1]
    assert ((predicted >= low) & (predicted <= high)).all()  # an expected level stays inside the levels
