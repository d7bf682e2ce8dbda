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
    ({"mode": "four-prompts", "aggregator": SumAggregator(), "on_invalid": "zero"},
     {"exactness", "coverage", "topicality", "contextual_fit"}, 4),
    ({"mode": "cot"}, {"exactness", "coverage", "topicality", "contextual_fit"}, None),
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

        client.usage = type(client.usage)()  # the same run again is served by the cache
        again = judge.run(dl2019_pairs, client)
        assert client.stats()["calls"] == 0
        assert [j.label for j in again] == [j.label for j in judgments]
    finally:
        close_loop_only(client)
