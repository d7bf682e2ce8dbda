"""TremaJudge four-prompts with expected grades (``grade_score: logprob``) on the real SmolLM2 model."""

from __future__ import annotations

from judgelab.data import load_items
from judgelab.judges.aggregate import SumAggregator
from judgelab.judges.trema import TremaJudge
from judgelab.llm import Client, CompletionCache
from tests.integration.test_prompted_judge import close_loop_only

CRITERIA = {"exactness", "coverage", "topicality", "contextual_fit"}


def test_four_prompts_expected_grades_end_to_end(embedded_backend, benchmarks_dir, tmp_path):
    items = load_items(benchmarks_dir / "trec_dl2019.jsonl")
    pairs = [item for item in items if item.qid == items[0].qid][:2]
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

        client.usage = type(client.usage)()  # the same run again is served by the cache
        again = judge.run(pairs, client)
        assert client.stats()["calls"] == 0
        assert [j.criteria for j in again] == [j.criteria for j in judgments]
    finally:
        close_loop_only(client)
