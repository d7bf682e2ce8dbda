"""The pieces of bench/bench_ensemble_embedded.py that decide what is measured: the group-wise dev/test
split, the members' rating scale, the similarity member's out-of-fold dev verdicts on the judges' scale.
(The script itself runs the real models; tests/integration/test_ensemble_judge.py votes over real
members' judgments files.)"""

from __future__ import annotations

import pytest
from bench import bench_ensemble_embedded as bench

from judgelab.data import load_items
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError


@pytest.fixture
def shared(benchmarks_dir, monkeypatch):
    monkeypatch.setattr(bench, "SHARED", benchmarks_dir.parent)


def test_split_keeps_groups_whole_and_close_to_the_asked_sizes(shared):
    dev, test = bench.dev_test_split("sfres", "naturalness", 40, 30, seed=0)
    assert set(dev.groups()).isdisjoint(test.groups())
    assert abs(len(dev) - 40) <= 3 and abs(len(test) - 30) <= 3
    assert all(len(outputs) >= 2 for part in (dev, test) for outputs in part.groups().values())
    again, _ = bench.dev_test_split("sfres", "naturalness", 40, 30, seed=0)
    other, _ = bench.dev_test_split("sfres", "naturalness", 40, 30, seed=1)
    assert again.ids == dev.ids and other.ids != dev.ids


def test_split_refuses_more_items_than_usable(shared):
    with pytest.raises(ConfigError, match="usable"):
        bench.dev_test_split("topical_chat", "coherence", 200, 100, seed=0)


def test_judges_rate_on_the_native_scale_when_the_strategy_space_has_it(benchmarks_dir):
    assert bench.judge_scale(load_items(benchmarks_dir / "topical_chat.jsonl"), "coherence") == 3
    assert bench.judge_scale(load_items(benchmarks_dir / "sfres.jsonl"), "naturalness") == 5  # 1-6 is not in it


def test_member_names_are_distinct_for_repeated_models():
    assert bench.member_names(["a", "b", "a", "a"]) == ["a", "b", "a#2", "a#3"]


def test_scores_move_onto_the_judges_scale_and_failures_stay_failures():
    moved = bench._on_scale(Judgment(item_id="x", score=6.0), (1.0, 6.0), (1.0, 5.0))
    assert moved.score == 5.0 and moved.extra["native_score"] == 6.0
    assert bench._on_scale(Judgment(item_id="x", score=3.5), (1.0, 6.0), (1.0, 5.0)).score == pytest.approx(3.0)
    failed = Judgment(item_id="x", status="error", reason="no peers")
    assert bench._on_scale(failed, (1.0, 6.0), (1.0, 5.0)) is failed


def test_similarity_member_predicts_dev_out_of_fold(shared, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    dev, test = bench.dev_test_split("sfres", "naturalness", 24, 8, seed=0)
    run = bench.similarity_member("naturalness", "static", dev, test, (1.0, 5.0), 3, 0, tmp_path)
    judged = {j.item_id: j for j in bench.load_judgments(run.path)}
    assert set(judged) == set(dev.ids) | set(test.ids) and run.model is None
    scored = [j for j in judged.values() if j.ok]
    assert scored and all(1.0 <= j.score <= 5.0 and 1.0 <= j.extra["native_score"] <= 6.0 for j in scored)
    # Out of fold: a dev item's verdict comes from a fit that never saw its group, so it differs from
    # the in-sample verdict of the scorer fitted on all of dev (which predicts the test items).
    in_sample = bench._fitted_or_errors(bench.SimilarityJudge(aspect="naturalness", predict="expected"),
                                        dev, list(dev), tmp_path / "w")
    differing = [j for j in in_sample if j.ok and judged[j.item_id].ok
                 and abs(judged[j.item_id].extra["native_score"] - j.score) > 1e-9]
    assert len(differing) > len(dev) // 2


def test_a_fold_that_cannot_be_fitted_gives_error_judgments(shared, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    dev, _ = bench.dev_test_split("sfres", "naturalness", 24, 8, seed=0)
    scorer = bench.SimilarityJudge(aspect="naturalness", predict="expected")
    # Training scores all in one class cannot train a classifier: every judged item says why.
    judged = bench._fitted_or_errors(scorer, _with_score(dev, 3.0), list(dev), tmp_path / "w")
    assert len(judged) == len(dev)
    assert all(j.status == "error" and "similarity fit failed" in j.reason for j in judged)


def _with_score(dataset, value: float):
    from judgelab.data.dataset import Dataset

    return Dataset([item.model_copy(update={"scores": {**item.scores, "naturalness": value}}) for item in dataset])
