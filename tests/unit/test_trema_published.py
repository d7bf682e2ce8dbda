"""Aggregators on the TREMA authors' published criterion grades reproduce their own labels where
their method is deterministic (sum with thresholds), and the CoT routes match their outputs.

Data: ../shared/benchmarks/reference/trema_outputs.jsonl (see its README for each column).
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from judgelab.judges.aggregate import SumAggregator, aggregate_grades
from judgelab.judges.trema import TremaJudge

CRITERIA = ("exactness", "coverage", "topicality", "contextual_fit")


@pytest.fixture(scope="module")
def published(benchmarks_dir):
    table = defaultdict(dict)
    with open(benchmarks_dir / "reference" / "trema_outputs.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            table[(row["dataset"], row["judge"])][row["item_id"]] = row["prediction"]
    return table


@pytest.mark.parametrize("model", ["llama3-8b", "flan-t5-large"])
def test_sum_reproduces_sumdecompose_on_dl2019(published, model):
    # README: on DL 2019 the authors' code sums with 10-12 -> 3, 7-9 -> 2, 6 -> 1, 0-5 -> 0, missing grade = 0.
    grades = published[("trec_dl2019", f"TREMA-4prompts/{model}")]
    theirs = published[("trec_dl2019", f"TREMA-sumdecompose/{model}")]
    ids = sorted(grades)
    ours = aggregate_grades(SumAggregator(thresholds=(6, 7, 10)), [grades[i] for i in ids], CRITERIA, missing="zero")
    assert len(ids) == 5353
    assert ours == [theirs[i] for i in ids]
    # the paper's Table 4 (5-6 -> 1) differs from the released code exactly on sums of 5
    table4 = aggregate_grades(SumAggregator(), [grades[i] for i in ids], CRITERIA, missing="zero")
    differ = [i for i, a, b in zip(ids, ours, table4, strict=True) if a != b]
    assert differ and all(sum(grades[i][c] or 0 for c in CRITERIA) == 5 for i in differ)


def test_sum_reproduces_sumdecompose_depth_on_llmjudge(published):
    # README: on LLMJudge an item with any missing grade gets 0: our "unparsable" (None), which they write as 0.
    names = ("exactness", "depth", "topicality", "contextual_fit")
    grades = published[("llmjudge", "TREMA-4prompts-depth/llama3-8b")]
    theirs = published[("llmjudge", "TREMA-sumdecompose-depth/llama3-8b")]
    ids = sorted(grades)
    ours = aggregate_grades(SumAggregator(thresholds=(6, 7, 10)), [grades[i] for i in ids], names)
    assert any(label is None for label in ours)
    assert [0 if label is None else label for label in ours] == [theirs[i] for i in ids]


def test_cot_routes_match_the_authors_outputs(published):
    # Which grades a CoT item has shows the route its yes/no took: always one of our two routes (or a
    # subset, when a grade was unparsable, or none when the check failed). The authors' code did not
    # check the final label against the route; judgelab makes an out-of-route label unparsable.
    judge = TremaJudge(mode="cot")
    routes = {judge.cot_relevant.criteria: judge.cot_relevant.labels,
              judge.cot_nonrelevant.criteria: judge.cot_nonrelevant.labels}
    predictions = list(published[("trec_dl2019", "TREMA-CoT/llama3-8b")].values())
    in_route = 0
    for prediction in predictions:
        graded = tuple(c for c in CRITERIA if prediction[c] is not None)
        assert not graded or graded in routes
        in_route += bool(graded) and prediction["label"] in routes[graded]
    assert len(predictions) == 5353 and in_route / len(predictions) > 0.9
