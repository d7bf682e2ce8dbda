"""The pairwise judge's ``score: logprob`` with the real SmolLM2 model on the shipped comparisons."""

from __future__ import annotations

from importlib.resources import files

import pytest

from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.llm import Client, CompletionCache
from judgelab.parse import MIN_LETTER_MASS, parse_preference
from judgelab.runner.run import run_judge
from tests.integration.test_prompted_judge import close_loop_only

EXAMPLES = files("judgelab") / "examples"


def test_the_shipped_pairwise_config_scored_by_logprob(embedded_backend, tmp_path):
    config = tmp_path / "pairwise_logprob.yaml"
    config.write_text((EXAMPLES / "pairwise.yaml").read_text() + "score: logprob\n")
    judge = load_judge(config)
    items = load_items(str(EXAMPLES / "comparisons.jsonl"))[:4]
    client = Client(embedded_backend, cache=CompletionCache(tmp_path / "cache.sqlite"))
    try:
        result = run_judge(judge, items, client, tmp_path / "run")
    finally:
        close_loop_only(client)
    assert result.usage["calls"] == 2 * len(items)
    for judgment in result.judgments:
        extra = judgment.extra
        assert set(extra["p_a"]) == set(extra["letter_mass"]) == {"original", "swapped"}
        for order, mass in extra["letter_mass"].items():
            assert 0.0 <= mass <= 1.0
            p_a = extra["p_a"][order]
            # a probability where the letters carry the reply, else none and why
            if p_a is None:
                assert mass < MIN_LETTER_MASS and extra["p_a_unparsable"][order]
            else:
                assert 0.0 <= p_a <= 1.0 and mass >= MIN_LETTER_MASS
        if None not in extra["p_a"].values():
            assert extra["preference"] == pytest.approx(sum(extra["p_a"].values()) / 2)
            assert extra["confidence"] == pytest.approx(max(extra["preference"], 1 - extra["preference"]))
        # the reply was forced to open at the letter, and the label is read from it as before
        assert judgment.raw.startswith("Output (") and extra["raw_swapped"].startswith("Output (")
        assert extra["verdicts"]["original"] == parse_preference(judgment.raw).label
    assert any(j.extra["preference"] is not None for j in result.judgments)
