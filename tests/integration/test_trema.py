"""TremaJudge end to end with the real SmolLM2 model on DL 2019 pairs: every mode, qrels from its labels."""

from __future__ import annotations

import ir_measures
import pytest

from judgelab.data import load_items
from judgelab.data.trec import write_qrels
from judgelab.judges.aggregate import SumAggregator
from judgelab.judges.trema import TremaJudge
from judgelab.llm import Client, CompletionCache
from tests.integration.test_prompted_judge import close_loop_only

CRITERIA = {"exactness", "coverage", "topicality", "contextual_fit"}


@pytest.fixture(scope="module")
def dl2019_pairs(benchmarks_dir):
    items = load_items(benchmarks_dir / "trec_dl2019.jsonl")
    first_query = items[0].qid
    same = [item for item in items if item.qid == first_query][:2]
    other = next(item for item in items if item.qid != first_query)
    return [*same, other]


def assert_honest(judgments, expected_criteria):
    for judgment in judgments:
        assert judgment.raw and judgment.extra["replies"]
        if judgment.ok:
            assert judgment.label in (0, 1, 2, 3) and judgment.score == judgment.label
            assert set(judgment.criteria) <= expected_criteria and all(v is not None for v in judgment.criteria.values())
        else:
            assert judgment.status == "unparsable" and judgment.score is None and judgment.reason


@pytest.fixture(scope="module")
def cache_path(tmp_path_factory):
    """One cache for the module: cot reuses the four-prompt grades (identical prompts), as in real use."""
    return tmp_path_factory.mktemp("trema") / "cache.sqlite"


@pytest.mark.parametrize("options, criteria, calls_per_pair", [
    ({"mode": "four-prompts", "aggregator": SumAggregator(), "on_invalid": "zero"}, CRITERIA, 4),
    ({"mode": "cot"}, CRITERIA, None),
    ({"mode": "query-generation"}, {"similarity"}, None),
])
def test_each_mode_end_to_end(embedded_backend, dl2019_pairs, cache_path, tmp_path, options, criteria, calls_per_pair):
    judge = TremaJudge(**options)
    client = Client(embedded_backend, cache=CompletionCache(cache_path))
    try:
        judgments = judge.run(dl2019_pairs, client)
        assert [j.item_id for j in judgments] == [item.id for item in dl2019_pairs]
        assert_honest(judgments, criteria)
        paid = client.stats()["calls"]
        if calls_per_pair:  # first test: sum with the zero fallback labels every pair after its four grades
            assert paid == calls_per_pair * len(dl2019_pairs) and all(j.ok for j in judgments)
        assert all(j.usage.calls + j.usage.cache_hits >= 1 for j in judgments)
        written = write_qrels(judgments, dl2019_pairs, tmp_path / "qrels.txt")
        qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
        assert len(qrels) == written.written == sum(j.ok for j in judgments)

        assert_rerun_is_cached(judge, dl2019_pairs, client, judgments)
    finally:
        close_loop_only(client)


def assert_rerun_is_cached(judge, pairs, client, judgments):
    """The same run again is served by the cache, with the same labels and grades."""
    client.usage = type(client.usage)()
    again = judge.run(pairs, client)
    assert client.stats()["calls"] == 0
    assert [(j.label, j.criteria) for j in again] == [(j.label, j.criteria) for j in judgments]


def test_four_prompts_expected_grades_end_to_end(embedded_backend, dl2019_pairs, tmp_path):
    """``grade_score: logprob``: each grade is the expected grade under the model's distribution."""
    pairs = dl2019_pairs[:2]
    judge = TremaJudge(grade_score="logprob", aggregator=SumAggregator())
    client = Client(embedded_backend, cache=CompletionCache(tmp_path / "cache.sqlite"))
    try:
        judgments = judge.run(pairs, client)
        assert client.stats()["calls"] == 4 * len(pairs)  # sum aggregation: only the four grading calls
        for judgment in judgments:
            assert judgment.extra["replies"] and set(judgment.extra["grade_mass"]) == CRITERIA
            if not judgment.ok:  # a grade without logprob mass on 0-3 is reported, never a silent score
                assert judgment.status == "unparsable" and "no valid grade" in judgment.reason
                continue
            assert judgment.label in (0, 1, 2, 3) and set(judgment.criteria) == CRITERIA
            assert all(isinstance(g, float) and 0.0 <= g <= 3.0 for g in judgment.criteria.values())
            assert all(0.0 < m <= 1.0 for m in judgment.extra["grade_mass"].values())
            assert set(judgment.extra["parsed_grades"]) == CRITERIA
        grades = [g for j in judgments if j.ok for g in j.criteria.values()]
        assert grades, "the model gave no grade at all"
        assert any(not g.is_integer() for g in grades)  # an expectation, not the written number
        assert_rerun_is_cached(judge, pairs, client, judgments)
    finally:
        close_loop_only(client)
