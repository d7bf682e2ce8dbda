"""TremaJudge logic with a scripted model: stages, routing, parsing, fallbacks, aggregators, fit.

The same judge runs against the real embedded model in tests/integration/test_trema.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from judgelab.data import Item
from judgelab.errors import ConfigError, DataError
from judgelab.judges.aggregate import (
    LogisticAggregator,
    NaiveBayesAggregator,
    OrdinalAggregator,
    PromptAggregator,
    SumAggregator,
    aggregate_grades,
    fit_aggregator,
)
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.trema import RELEVANCE_CRITERIA, TremaJudge, _yes_no
from tests.doubles import ScriptedBackend, scripted_client

CRITERIA = [c.key for c in RELEVANCE_CRITERIA]


def items(n: int = 4) -> list[Item]:
    return [Item(id=f"p{k}", qid=f"q{k // 2}", docid=f"d{k}", query=f"query {k // 2}", passage=f"passage text {k}",
                 label=k % 4) for k in range(n)]


def user(request) -> str:
    return request.messages[-1].content


def criterion_of(request) -> str | None:
    match = re.search(r"meets the (.+?) criterion", user(request))
    return match.group(1) if match else None


def grades_reply(grades: dict[str, str], label: str = "2", check: str = "Yes"):
    """Replies (after the forced 'Score: '/'Answer: ') by stage: criterion grades, yes/no, label."""
    def reply(request, i):
        text = user(request)
        if criterion_of(request):
            return grades[criterion_of(request)]
        if "Yes\" or \"No\"" in text:
            return check
        return label
    return reply


def run(judge: TremaJudge, reply, data=None):
    backend = ScriptedBackend(reply)
    with scripted_client(backend) as client:
        return judge.run(data or items(), client), backend


ALL_TWO = {"Exactness": "2", "Coverage": "2", "Topicality": "3", "Contextual Fit": "1"}


def test_four_prompts_grades_each_criterion_then_asks_for_the_label():
    judgments, backend = run(TremaJudge(), grades_reply(ALL_TWO, label="3"))
    assert backend.calls == 4 * 5
    for judgment in judgments:
        assert judgment.ok and judgment.label == 3 and judgment.score == 3.0
        assert judgment.criteria == {"exactness": 2, "coverage": 2, "topicality": 3, "contextual_fit": 1}
        assert "[exactness] Score: 2" in judgment.raw
    aggregation = [r for r in backend.requests if "based on the given scores" in user(r)]
    assert len(aggregation) == 4
    assert "Exactness: 2\nTopicality: 3" not in user(aggregation[0])  # criteria in the configured order
    assert "Exactness: 2\nCoverage: 2\nTopicality: 3\nContextual Fit: 1" in user(aggregation[0])


def test_shared_text_comes_first_and_one_item_s_prompts_are_consecutive():
    judgments, backend = run(TremaJudge(aggregator=SumAggregator()), grades_reply(ALL_TWO))
    grading = backend.requests
    assert [criterion_of(r) for r in grading[:4]] == [c.name for c in RELEVANCE_CRITERIA]
    first = {user(r).split("\n\n")[0] for r in grading[:4]}
    assert first == {"Query: query 0\nPassage: passage text 0"}
    assert all(r.assistant_prefix == "Score: " for r in grading)


def test_sum_aggregator_uses_table_4_thresholds_by_default():
    judgments, _ = run(TremaJudge(aggregator=SumAggregator()), grades_reply(ALL_TWO))
    assert {j.label for j in judgments} == {2}  # 2+2+3+1 = 8 -> 7-9 -> 2
    strict, _ = run(TremaJudge(aggregator=SumAggregator(thresholds=(5, 9, 11))), grades_reply(ALL_TWO))
    assert {j.label for j in strict} == {1}


def test_an_invalid_grade_makes_the_judgment_unparsable_with_the_raw_replies():
    bad = {**ALL_TWO, "Coverage": "high"}
    judgments, backend = run(TremaJudge(), grades_reply(bad))
    assert backend.calls == 4 * 4  # no aggregation prompt without every grade
    for judgment in judgments:
        assert judgment.status == "unparsable" and judgment.score is None and judgment.label is None
        assert "coverage" in judgment.reason and judgment.criteria["coverage"] is None
        assert "[coverage] Score: high" in judgment.raw


def test_out_of_range_or_fractional_grades_are_not_grades():
    for text in ("7", "2.5"):
        judgments, _ = run(TremaJudge(aggregator=SumAggregator()), grades_reply({**ALL_TWO, "Exactness": text}))
        assert all(j.status == "unparsable" for j in judgments)


def test_zero_fallback_only_when_asked_and_noted():
    bad = {**ALL_TWO, "Coverage": "high"}
    judgments, _ = run(TremaJudge(aggregator=SumAggregator(), on_invalid="zero"), grades_reply(bad))
    for judgment in judgments:
        assert judgment.ok and judgment.criteria["coverage"] == 0 and judgment.label == 1  # 2+0+3+1 = 6
        assert judgment.extra["fallbacks"] == ["coverage"]


def test_an_unparsable_label_reply_is_unparsable():
    judgments, _ = run(TremaJudge(), grades_reply(ALL_TWO, label="relevant"))
    assert all(j.status == "unparsable" and "label" in j.reason for j in judgments)


@pytest.mark.parametrize("check, route, label", [("Yes", {"exactness", "coverage"}, "3"),
                                                 ("No, it does not", {"topicality", "contextual_fit"}, "1")])
def test_cot_routes_on_the_binary_check(check, route, label):
    judgments, backend = run(TremaJudge(mode="cot"), grades_reply(ALL_TWO, label=label, check=check))
    assert backend.calls == 4 * 4  # check + 2 grades + label
    for judgment in judgments:
        assert judgment.ok and judgment.label == int(label) and set(judgment.criteria) == route
        assert judgment.extra["binary_check"] == ("yes" if check == "Yes" else "no")
    final = [user(r) for r in backend.requests if "Score:" in user(r) and not criterion_of(r)]
    assert all(("2 or 3" in text) == (check == "Yes") for text in final)


def test_cot_label_outside_the_route_is_unparsable():
    judgments, _ = run(TremaJudge(mode="cot"), grades_reply(ALL_TWO, label="1", check="Yes"))
    assert all(j.status == "unparsable" and "2-3" in j.reason for j in judgments)


def test_cot_without_yes_or_no_is_unparsable_or_zero_when_asked():
    judgments, backend = run(TremaJudge(mode="cot"), grades_reply(ALL_TWO, check="Maybe."))
    assert backend.calls == 4 and all(j.status == "unparsable" for j in judgments)
    zero, _ = run(TremaJudge(mode="cot", on_invalid="zero"), grades_reply(ALL_TWO, check="Maybe."))
    assert all(j.ok and j.label == 0 and j.criteria == {} and j.extra["fallbacks"] == ["binary_check"] for j in zero)


def test_cot_needs_prompt_aggregation_and_known_route_criteria():
    with pytest.raises(ValueError, match="cot"):
        TremaJudge(mode="cot", aggregator=SumAggregator())
    with pytest.raises(ValueError, match="not among the criteria"):
        TremaJudge(mode="cot", criteria="Exactness: is it exact")


def test_query_generation_grades_the_similarity_of_the_generated_query():
    def reply(request, i):
        if "identify the search query" in user(request):
            return "\"generated query\"\nmore text"
        return "2"
    judgments, backend = run(TremaJudge(mode="query-generation"), reply)
    for judgment in judgments:
        assert judgment.ok and judgment.label == 2 and judgment.criteria == {"similarity": 2}
        assert judgment.extra["generated_query"] == "generated query"
    similarity = [user(r) for r in backend.requests if "similarity between the following" in user(r)]
    assert similarity[0].startswith("Please rate the similarity") and "generated query\nand\nquery 0" in similarity[0]


def test_query_generation_with_no_query_is_unparsable():
    judgments, _ = run(TremaJudge(mode="query-generation"), lambda r, i: "   ")
    assert all(j.status == "unparsable" and "no query" in j.reason for j in judgments)


def test_item_without_passage_is_an_error_naming_the_field():
    data = [*items(2), Item(id="nopassage", qid="q9", docid="d9", query="q", label=0)]
    judgments, _ = run(TremaJudge(aggregator=SumAggregator()), grades_reply(ALL_TWO), data)
    assert [j.status for j in judgments] == ["ok", "ok", "error"]
    assert "passage" in judgments[2].reason


def test_own_criteria_for_another_task_as_text():
    judge = TremaJudge(criteria="Fluency: Is the text fluent.\nFaithfulness: Does the output stay true to the input.",
                       aggregator=SumAggregator(thresholds=(2, 4)), labels=(0, 2))
    data = [Item(id="s1", source="An article.", output="A summary.")]
    judgments, backend = run(judge, lambda r, i: "2" if "Fluency" in user(r) else "1", data)
    assert judgments[0].criteria == {"fluency": 2, "faithfulness": 1} and judgments[0].label == 1
    assert user(backend.requests[0]).startswith("Input: An article.\nOutput: A summary.")
    with pytest.raises(ValueError, match="line 1"):
        TremaJudge(criteria="no colon here")


def test_yes_no_reads_the_first_answer_word():
    assert _yes_no("Answer: Yes, it does") is True
    assert _yes_no("Answer: no.") is False
    assert _yes_no("Answer: the passage is nonsense") is None  # "no" inside a word is not an answer


def test_config_round_trips_with_a_trained_aggregator(tmp_path):
    trained = fit_aggregator(NaiveBayesAggregator(), *training_grades(), CRITERIA)
    judge = TremaJudge(aggregator=trained)
    path = judge.save(tmp_path / "trema.yaml")
    again = load_judge(path)
    assert again == judge and again.fitted
    assert judge_from_dict({"kind": "trema", "aggregator": {"method": "ordinal"}}).fitted is False


def training_grades(n: int = 200, seed: int = 0):
    """Grades that track the label with noise: label 0 -> grades near 0, label 3 -> near 3."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    rows = [{c: int(np.clip(label + rng.integers(-1, 2), 0, 3)) for c in CRITERIA} for label in labels]
    return rows, labels.tolist()


@pytest.mark.parametrize("aggregator", [NaiveBayesAggregator(), LogisticAggregator(), OrdinalAggregator()])
def test_learned_aggregators_recover_a_learnable_label(aggregator):
    rows, labels = training_grades()
    trained = fit_aggregator(aggregator, rows, labels, CRITERIA)
    test_rows, test_labels = training_grades(seed=1)
    predicted = aggregate_grades(trained, test_rows)
    assert np.mean(np.array(predicted) == np.array(test_labels)) > 0.6
    assert aggregate_grades(trained, [{c: 3 for c in CRITERIA}, {c: 0 for c in CRITERIA}]) == [3, 0]
    assert aggregate_grades(trained, [{"exactness": None, "coverage": 3, "topicality": 3, "contextual_fit": 3}]) == [None]


def test_learned_aggregator_must_be_fitted_and_learn_from_two_labels():
    with pytest.raises(ConfigError, match="not trained"):
        aggregate_grades(LogisticAggregator(), [{c: 1 for c in CRITERIA}], CRITERIA)
    with pytest.raises(DataError, match="2 distinct labels"):
        fit_aggregator(LogisticAggregator(), [{c: 1 for c in CRITERIA}] * 3, [1, 1, 1], CRITERIA)
    with pytest.raises(DataError, match="constant grades"):  # a judge that always wrote "2"
        fit_aggregator(NaiveBayesAggregator(), [{c: 2 for c in CRITERIA}] * 4, [0, 1, 2, 3], CRITERIA)
    with pytest.raises(ConfigError, match="nothing to learn"):
        fit_aggregator(SumAggregator(), [], [], CRITERIA)
    with pytest.raises(ConfigError, match="asks the LLM"):
        aggregate_grades(PromptAggregator(), [], CRITERIA)


def test_fit_grades_the_training_items_and_trains_the_aggregator():
    rows, labels = training_grades(40)
    data = [Item(id=f"t{k}", qid="q", docid=f"d{k}", query="q", passage=f"p{k}", label=label)
            for k, label in enumerate(labels)]
    by_passage = {f"p{k}": row for k, row in enumerate(rows)}

    def reply(request, i):
        passage = re.search(r"Passage: (p\d+)", user(request)).group(1)
        key = criterion_of(request).lower().replace(" ", "_")
        return str(by_passage[passage][key])

    judge = TremaJudge(aggregator=LogisticAggregator())
    assert not judge.fitted and judge.trainable
    with scripted_client(ScriptedBackend(reply)) as client:
        with pytest.raises(ConfigError, match="not trained"):
            judge.run(data, client)
        fitted = judge.fit(data, client)
        judgments = fitted.run(data, client)
    assert fitted.fitted and fitted.aggregator.features == tuple(CRITERIA)
    assert np.mean([j.label == item.label for j, item in zip(judgments, data, strict=True)]) > 0.6
    with pytest.raises(ConfigError, match="nothing to learn"):
        TremaJudge(aggregator=SumAggregator()).fit(data, None)
