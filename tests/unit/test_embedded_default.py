"""The embedded models' default strategy (issue 41, item 8): a prompted judge built from options and run on
an embedded model rates first and scores the expected rating under its probabilities, unless the user chose
the chain of thought or the score, gave a config file, or runs on a server (bench/bench_default_strategy.py
measured the choice; the end-to-end run is tests/e2e/test_cli.py::test_judge_on_the_embedded_default)."""

from __future__ import annotations

import pytest

from judgelab.judges.options import judge_config_from_options, with_embedded_default


def built(*, model="qwen2.5-coder-1.5b", config=None, method=None, strategy=None, score=None):
    aspect = None if config or method == "pairwise" else "coherence"
    judge = judge_config_from_options(config, method, aspect, strategy=strategy, score=score)
    return with_embedded_default(judge, model, from_options=config is None, strategy=strategy, score=score)


@pytest.mark.parametrize("model", ["qwen2.5-coder-1.5b", "smollm2-135m", "/models/mine.gguf", None])
def test_an_embedded_model_with_nothing_chosen_rates_first_from_probabilities(model):
    judge, applied = built(model=model)
    assert applied and judge.strategy.cot == "none" and judge.score == "logprob"


def test_other_factors_the_user_chose_are_kept():
    judge, applied = built(strategy="scale=10,order=TD-IC-ER")
    assert applied and judge.strategy.scale == 10 and judge.strategy.order == "TD-IC-ER"
    assert judge.strategy.cot == "none" and judge.score == "logprob"


@pytest.mark.parametrize("options", [{"strategy": "cot=prefix"}, {"strategy": "scale=3,cot=suffix"},
                                     {"score": "parsed"}, {"model": "http://127.0.0.1:8000/v1"},
                                     {"model": "openai:gpt-4o-mini"}, {"method": "pairwise"}])
def test_a_choice_of_the_user_a_server_or_another_kind_is_left_alone(options):
    judge, applied = built(**options)
    assert not applied
    if judge.kind == "prompted":
        assert (judge.strategy.cot, judge.score) != ("none", "logprob")


def test_a_config_file_is_taken_as_written(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text("kind: prompted\naspect: coherence\n", encoding="utf-8")
    judge, applied = built(config=path)
    assert not applied and judge.strategy.cot == "prefix" and judge.score == "parsed"


def test_the_default_changes_the_judge_digest_so_cached_verdicts_are_not_mixed():
    mt_bench, _ = built(strategy="cot=prefix")
    embedded, _ = built()
    assert mt_bench.digest() != embedded.digest()
