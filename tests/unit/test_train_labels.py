"""Training targets and heads: human vs teacher labels, bad input, ordinal levels, head algebra."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError
from judgelab.train.labels import (
    check_trainable,
    human_targets,
    ordinal_levels,
    read_teacher,
    scale_of,
    teacher_targets,
)


def items(n: int, groups: int = 5, score=lambda i: 1 + i % 3) -> list[Item]:
    return [Item(id=f"i{i}", group_id=f"g{i % groups}", source="s", output=f"o{i}", scores={"coherence": score(i)})
            for i in range(n)]


def test_unseen_aspect_is_a_config_error_naming_the_known_ones():
    with pytest.raises(ConfigError, match=r"'fluency'.*aspects in the data: coherence"):
        human_targets(items(12), "fluency", "data.jsonl")


def test_too_few_constant_or_single_group_labels_are_data_errors():
    with pytest.raises(DataError, match="only 9 labelled items; training needs at least 10"):
        check_trainable(human_targets(items(9), "coherence"), "d.jsonl")
    with pytest.raises(DataError, match="every label is 2: constant labels"):
        check_trainable(human_targets(items(12, score=lambda i: 2), "coherence"), "d.jsonl")
    with pytest.raises(DataError, match="share one group"):
        check_trainable(human_targets(items(12, groups=1), "coherence"), "d.jsonl")
    check_trainable(human_targets(items(12), "coherence"), "d.jsonl")  # enough, varied, 5 groups


def test_items_without_the_aspect_are_left_out_of_human_targets():
    data = items(12) + [Item(id="unlabelled", output="x")]
    targets = human_targets(data, "coherence")
    assert len(targets.items) == 12 and "unlabelled" not in {i.id for i in targets.items}
    assert np.array_equal(targets.labels, targets.humans)


def test_teacher_targets_keep_human_scores_for_comparison():
    data = items(12)
    teacher = {f"i{i}": float(i) for i in range(0, 12, 2)}
    targets = teacher_targets(data, "coherence", teacher)
    assert [i.id for i in targets.items] == [f"i{i}" for i in range(0, 12, 2)]
    assert targets.labels.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert targets.humans.tolist() == [1 + i % 3 for i in range(0, 12, 2)]
    with pytest.raises(DataError, match="rated none of the 12 items"):
        teacher_targets(data, "coherence", {"other-1": 1.0})


def test_ordinal_levels_are_distinct_values_or_even_steps():
    assert ordinal_levels(np.array([1, 2, 2, 3, 1.5])) == [1.0, 1.5, 2.0, 3.0]
    continuous = np.linspace(0, 1, 50)
    assert ordinal_levels(continuous, max_levels=5) == pytest.approx([0, 0.25, 0.5, 0.75, 1])


def test_scale_is_the_declared_one_widened_to_the_labels():
    data = [Item(id="a", output="x", scores={"c": 2}, scale=(1, 5)), Item(id="b", output="y", scores={"c": 6})]
    assert scale_of(data, "c", np.array([2.0, 6.0])) == (1.0, 6.0)


def test_read_teacher_published_ratings_filter_and_average(tmp_path):
    path = tmp_path / "ratings.jsonl"
    rows = [{"item_id": "i1", "judge": "A/p1", "prediction": {"coherence": 2.0}},
            {"item_id": "i1", "judge": "A/p2", "prediction": {"coherence": 4.0}},
            {"item_id": "i1", "judge": "B/p1", "prediction": {"coherence": 5.0}},
            {"item_id": "i2", "judge": "A/p1", "prediction": {"empathy": 1.0}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_teacher(path, "coherence") == {"i1": pytest.approx(11 / 3)}
    assert read_teacher(path, "coherence", judge="A") == {"i1": 3.0}
    assert read_teacher(path, "coherence", judge="B/p1") == {"i1": 5.0}
    with pytest.raises(ConfigError, match="no judge named 'C'"):
        read_teacher(path, "coherence", judge="C")
    with pytest.raises(DataError, match="no usable teacher score for aspect 'surprise'"):
        read_teacher(path, "surprise")


def test_read_teacher_judgments_skip_failures_and_other_aspects(tmp_path):
    path = tmp_path / "judgments.jsonl"
    rows = [{"item_id": "i1", "score": 3.0, "aspect": "coherence"},
            {"item_id": "i2", "score": None, "status": "unparsable", "reason": "no number", "raw": "hmm"},
            {"item_id": "i3", "score": 1.0, "aspect": "fluency"},
            {"item_id": "i4", "score": 2.0}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_teacher(path, "coherence") == {"i1": 3.0, "i4": 2.0}
    with pytest.raises(ConfigError, match="not found"):
        read_teacher(tmp_path / "missing.jsonl", "coherence")


def test_a_broken_published_row_names_its_line(tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_text(json.dumps({"item_id": "i1", "prediction": {"c": 1}}) + "\n{not json\n")
    with pytest.raises(DataError, match=r"ratings.jsonl:2"):
        read_teacher(path, "c")


# -- heads: the algebra between labels, head outputs and scores (a tiny random BERT, no weights) ---

@pytest.fixture(scope="module")
def tiny_encoder():
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=64))


def test_regression_head_maps_the_scale_to_0_1_and_back(tiny_encoder):
    import torch

    from judgelab.judges.scorer_model import CrossEncoderScorer

    scorer = CrossEncoderScorer(tiny_encoder, "regression", [1.0, 5.0], (1.0, 5.0))
    assert scorer.targets(np.array([1.0, 3.0, 5.0]))[:, 0].tolist() == [0.0, 0.5, 1.0]
    assert scorer.scores(torch.tensor([[0.0], [0.5], [1.0]])).tolist() == [1.0, 3.0, 5.0]


def test_ordinal_head_targets_and_expected_level(tiny_encoder):
    import torch

    from judgelab.judges.scorer_model import CrossEncoderScorer

    scorer = CrossEncoderScorer(tiny_encoder, "ordinal", [1.0, 2.0, 4.0], (1.0, 4.0))
    assert scorer.head.out_features == 2
    assert scorer.targets(np.array([1.0, 2.0, 4.0, 3.5])).tolist() == [[0, 0], [1, 0], [1, 1], [1, 1]]
    sure = torch.tensor([[-50.0, -50.0], [50.0, -50.0], [50.0, 50.0]])
    assert scorer.scores(sure) == pytest.approx([1.0, 2.0, 4.0])
    assert scorer.scores(torch.zeros(1, 2)) == pytest.approx([1.0 + 0.5 * 1 + 0.5 * 2])


@pytest.mark.parametrize("n_frozen", [0, 2, 3])
def test_frozen_bottom_then_trained_top_equals_the_whole_encoder(tiny_encoder, n_frozen):
    import torch

    from judgelab.judges.scorer_model import CrossEncoderScorer

    scorer = CrossEncoderScorer(tiny_encoder, "regression", [0.0, 1.0], (0.0, 1.0)).eval()
    batch = {"input_ids": torch.tensor([[2, 5, 7, 9, 3], [2, 6, 3, 0, 0]]),
             "token_type_ids": torch.tensor([[0, 0, 0, 1, 1], [0, 0, 1, 0, 0]]),
             "attention_mask": torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])}
    with torch.no_grad():
        whole = scorer(batch)
        split = scorer.above(scorer.below(batch, n_frozen), batch["attention_mask"], n_frozen)
    torch.testing.assert_close(split, whole, rtol=1e-5, atol=1e-6)


def test_trained_judge_config_refuses_to_run_unfitted_or_fit_without_a_folder(tmp_path):
    from judgelab.judges.base import judge_from_dict
    from judgelab.judges.trained import TrainedJudge

    judge = judge_from_dict({"kind": "trained", "aspect": "coherence"})
    assert isinstance(judge, TrainedJudge) and judge.trainable and not judge.uses_llm and not judge.fitted
    with pytest.raises(ConfigError, match="no weights yet"):
        judge.run(items(3))
    from judgelab.train import fit_judge

    with pytest.raises(ConfigError, match="needs out_dir"):
        fit_judge(judge, items(12))
    with pytest.raises(ConfigError, match=r"fit_judge\(judge, items, out_dir=FOLDER\)"):
        judge.fit(items(12), out_dir=tmp_path)  # fine-tuning lives in judgelab.train, above judges/
    missing = judge.model_copy(update={"weights": tmp_path / "nowhere"})
    with pytest.raises(ConfigError, match="no trained scorer here"):
        missing.run(items(3))
    with pytest.raises(ConfigError, match="field 'max_length'"):
        judge_from_dict({"kind": "trained", "aspect": "c", "max_length": 4})
