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


def test_stacked_judge_is_saved_as_one_folder_that_judge_config_reuses(topical30, tmp_path):
    from judgelab.judges.ensemble import EnsembleJudge

    out = tmp_path / "stacked"
    trained = run_cli("train", "--data", topical30, "--aspect", "coherence", "--out", out, *FAST,
                      "--val-fraction", "0.4", "--stack", timeout=900)
    assert trained.returncode == 0, trained.stderr + trained.stdout
    assert "stacked judge, fitted on the validation groups" in trained.stdout
    assert "stacker penalty" in trained.stdout  # chosen by group-wise CV, or the default with too few groups
    record = json.loads((out / "cross-encoder" / "training.json").read_text())
    # the stacker is fitted on the validation groups: no checkpoint was chosen there (docs/training.md)
    assert load_judge(out / "cross-encoder" / "judge.yaml").select_on_validation is False
    assert record["config"]["select_on_validation"] is False
    judge = load_judge(out / "judge.yaml")
    assert isinstance(judge, EnsembleJudge) and judge.aggregate == "stack" and judge.fitted
    assert [m.name for m in judge.members] == ["cross-encoder", "similarity"]
    assert len(judge.learned["coef"]) == 2 and min(judge.learned["coef"]) >= 0
    moved = tmp_path / "moved"
    out.rename(moved)  # members are referenced relative to the folder: it can be moved as a whole
    run = run_cli("judge", "--config", moved / "judge.yaml", "--data", topical30, "--out", tmp_path / "run", timeout=600)
    assert run.returncode == 0, run.stderr + run.stdout
    judgments = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert len(judgments) == 30 and all(j.ok for j in judgments)
    assert np.ptp([j.score for j in judgments]) > 0
    members = {j.item_id: j.extra["members"] for j in judgments}
    for item_id, score in record["validation_predictions"].items():  # the cross-encoder member is the saved scorer
        assert members[item_id]["cross-encoder"] == pytest.approx(score, abs=1e-5)
    # the stacker is the ridge over the two members' scores, as fitted: recompute one verdict by hand
    learned = {k: np.asarray(v, dtype=float) for k, v in load_judge(moved / "judge.yaml").learned.items()}
    first = judgments[0]
    row = np.array([members[first.item_id]["cross-encoder"], members[first.item_id]["similarity"]])
    assert first.score == pytest.approx(float((row - learned["mean"]) / learned["scale"] @ learned["coef"]
                                              + learned["intercept"][0]))


def test_frozen_bottom_cache_gives_exactly_the_full_forward():
    """Training reuses the frozen layers' outputs; they must be the encoder's own, item for item."""
    import torch

    from judgelab.data import Item
    from judgelab.judges.scorer_model import encode, feature_batches
    from judgelab.train.model import new_scorer
    from judgelab.train.trainer import hidden_below, predict_from_below

    items = [Item(id=f"i{i}", group_id="g", source="a \n b " * (i + 1), output="word " * (3 * i + 1)) for i in range(5)]
    spec = TrainedJudge(aspect="x", max_length=48, batch_size=2)
    scorer, tokenizer = new_scorer(spec.base_model, "regression", [1.0, 3.0], (1.0, 3.0))
    scorer.eval()
    features = encode(items, tokenizer, spec)
    with torch.no_grad():
        full = np.concatenate([scorer.scores(scorer(b)) for _, b in feature_batches(features, tokenizer, 2, range(5))])
    for n_frozen in (0, 3, 6):
        below = hidden_below(scorer, tokenizer, items, spec, n_frozen)
        assert [len(rows) for rows in below] == [len(f["input_ids"]) for f in features]  # padding cut off, in order
        reordered = predict_from_below(scorer, below[::-1], n_frozen, batch_size=5)[::-1]  # other batching, same scores
        np.testing.assert_allclose(reordered, full, atol=1e-5)


def test_scorer_can_overfit_a_tiny_training_set(topical30):
    """A model that cannot memorise 12 items is broken (a mis-aligned target, a frozen head, a wrong sign)."""
    import torch
    from scipy import stats

    from judgelab.train import human_targets, train_scorer

    targets = human_targets(list(islice(load_items(topical30), 12)), "coherence")
    spec = TrainedJudge(aspect="coherence", max_length=32, batch_size=6, epochs=30, train_layers=1,
                        learning_rate=2e-4, val_fraction=0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny batches: one thread is as fast, and does not spin on a busy machine
    try:
        trained = train_scorer(spec, targets)
    finally:
        torch.set_num_threads(threads)
    assert trained.history[-1]["train_loss"] < trained.history[0]["train_loss"] / 5
    assert stats.spearmanr(trained.predict(list(targets.items)), targets.labels).statistic > 0.9


def test_graded_labels_from_a_cross_encoder_become_qrels(benchmarks_dir, tmp_path):
    """`train --labels ordinal` on TREC query-passage pairs: cut points learnt on the validation
    queries, a label in every judgment, and `judgelab qrels` writes them."""
    by_query: dict[str, list] = {}
    for item in load_items(benchmarks_dir / "trec_dl2019.jsonl"):
        if len(by_query) < 6 or item.qid in by_query:
            by_query.setdefault(item.qid, []).append(item)
    pairs = [item for items in by_query.values() for item in items[:40]]
    data = tmp_path / "pairs.jsonl"
    save_items(pairs, data)
    out = tmp_path / "relevance"
    trained = run_cli("train", "--data", data, "--aspect", "relevance", "--inputs", "source", "--labels", "ordinal",
                      "--val-fraction", "0.34", "--out", out, *FAST, timeout=900)
    assert trained.returncode == 0, trained.stderr + trained.stdout
    judge = load_judge(out / "judge.yaml")
    assert isinstance(judge, TrainedJudge) and judge.label_aggregator.fitted
    assert set(judge.label_aggregator.classes) <= {0, 1, 2, 3} and len(judge.label_aggregator.classes) >= 2

    run = run_cli("judge", "--config", out / "judge.yaml", "--data", data, "--out", tmp_path / "run", timeout=600)
    assert run.returncode == 0, run.stderr + run.stdout
    judgments = load_judgments(tmp_path / "run" / "judgments.jsonl")
    labels = [j.label for j in judgments]
    assert len(labels) == len(pairs) and all(label in judge.label_aggregator.classes for label in labels)
    assert len(set(labels)) >= 2  # the balanced cut points use more than one grade
    assert judge.labels_of([j.score for j in judgments]) == labels

    qrels = run_cli("qrels", tmp_path / "run", "--out", tmp_path / "qrels.txt", timeout=120)
    assert qrels.returncode == 0, qrels.stderr + qrels.stdout
    lines = (tmp_path / "qrels.txt").read_text().splitlines()
    assert len(lines) == len(pairs) and {line.split()[3] for line in lines} == {str(label) for label in set(labels)}


def test_judgelab_fit_fine_tunes_a_trained_judge_through_fit_judge(topical30, tmp_path):
    """`judgelab fit --method trained` goes through judgelab.train.fit_judge (the judge itself no
    longer imports the trainer): weights written next to the config, and the config runs."""
    out = tmp_path / "fitted" / "judge.yaml"
    fitted = run_cli("fit", "--method", "trained", "--aspect", "coherence", "--data", topical30, "--out", out,
                     timeout=900)
    assert fitted.returncode == 0, fitted.stderr + fitted.stdout
    judge = load_judge(out)
    assert isinstance(judge, TrainedJudge) and judge.fitted and judge.trained_on == "human"
    assert (out.parent / "weights" / "model.safetensors").is_file()
    scores = [j.score for j in judge.run(list(load_items(topical30))[:6])]
    assert all(s is not None for s in scores)
