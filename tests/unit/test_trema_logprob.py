"""TremaJudge with ``grade_score="logprob"``: expected criterion grades from a scripted model's logprobs.

The same judge runs against the real embedded model in tests/integration/test_trema.py (test_four_prompts_expected_grades_end_to_end).
"""

from __future__ import annotations

import re

import pytest

from judgelab.commands.judge import judge_config_from_options
from judgelab.data import Item
from judgelab.errors import CapabilityError, ConfigError
from judgelab.judges.aggregate import LogisticAggregator, NaiveBayesAggregator, SumAggregator
from judgelab.judges.base import load_judge
from judgelab.judges.trema import TremaJudge
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import Completion
from tests.doubles import ScriptedBackend, digit_logprobs, scripted_client
from tests.unit.test_trema import criterion_of, items, user

#: Per criterion: the grade token the model writes and the top alternatives at that position.
DISTRIBUTIONS = {
    "Exactness": ({"0": 0.1, "1": 0.2, "2": 0.5, "3": 0.1, "The": 0.1}, "2"),  # 1.5 / 0.9
    "Coverage": ({"1": 0.3, "2": 0.6, "3": 0.1}, "2"),                          # 1.8
    "Topicality": ({"2": 0.2, "3": 0.8}, "3"),                                  # 2.8
    "Contextual Fit": ({"0": 0.5, "1": 0.5}, "1"),                              # 0.5
}
EXPECTED = {"exactness": 1.5 / 0.9, "coverage": 1.8, "topicality": 2.8, "contextual_fit": 0.5}


def graded(request, label: str = "2", check: str = "Yes") -> Completion:
    """A grade reply with logprobs for a criterion prompt; a plain label / yes-no reply otherwise."""
    name = criterion_of(request)
    if name is None:
        return Completion(text=check if "Yes\" or \"No\"" in user(request) else label)
    probabilities, chosen = DISTRIBUTIONS[name]
    return Completion(text=chosen, logprobs=digit_logprobs(probabilities, chosen), completion_tokens=1)


def run(judge: TremaJudge, reply, data=None, capabilities: Capabilities | None = None):
    backend = ScriptedBackend(reply, capabilities=capabilities)
    with scripted_client(backend) as client:
        return judge.run(data or items(2), client), backend


def test_grades_are_the_expected_grade_and_the_sum_uses_them():
    judgments, backend = run(TremaJudge(grade_score="logprob", aggregator=SumAggregator()), lambda r, i: graded(r))
    assert all(r.logprobs and r.top_logprobs == 20 for r in backend.requests)
    for judgment in judgments:
        assert judgment.criteria == pytest.approx(EXPECTED)
        assert judgment.label == 1  # 1.67 + 1.8 + 2.8 + 0.5 = 6.77: Table 4 gives 1 from 5, 2 from 7
        assert judgment.extra["parsed_grades"] == {"exactness": 2, "coverage": 2, "topicality": 3, "contextual_fit": 1}
        assert judgment.extra["grade_mass"] == pytest.approx(
            {"exactness": 0.9, "coverage": 1.0, "topicality": 1.0, "contextual_fit": 1.0})
    parsed, _ = run(TremaJudge(aggregator=SumAggregator()), lambda r, i: graded(r))
    assert {j.label for j in parsed} == {2}  # the written grades: 2 + 2 + 3 + 1 = 8
    assert all("parsed_grades" not in j.extra for j in parsed)


def test_prompt_aggregation_shows_expected_grades_to_one_decimal():
    judgments, backend = run(TremaJudge(grade_score="logprob"), lambda r, i: graded(r, label="3"))
    assert all(j.ok and j.label == 3 and j.score == 3.0 for j in judgments)
    [aggregation, *_] = [r for r in backend.requests if "based on the given scores" in user(r)]
    assert "Exactness: 1.7\nCoverage: 1.8\nTopicality: 2.8\nContextual Fit: 0.5" in user(aggregation)
    assert not aggregation.logprobs  # the label is the whole number written


def test_parsed_grades_request_no_logprobs_so_their_cache_keys_stay():
    _, backend = run(TremaJudge(aggregator=SumAggregator()), lambda r, i: graded(r))
    assert not any(r.logprobs or r.top_logprobs for r in backend.requests)


def test_missing_logprobs_make_the_judgment_unparsable_with_the_raw_replies():
    judgments, _ = run(TremaJudge(grade_score="logprob", aggregator=SumAggregator()), lambda r, i: "2")
    for judgment in judgments:
        assert judgment.status == "unparsable" and judgment.score is None and judgment.label is None
        assert "no logprobs" in judgment.reason and "[exactness] Score: 2" in judgment.raw
        assert judgment.criteria == dict.fromkeys(EXPECTED) and judgment.extra["parsed_grades"]["coverage"] == 2


def test_a_reply_without_a_grade_is_unparsable_with_the_parser_s_reason():
    def reply(request, i):
        if criterion_of(request) == "Coverage":
            return Completion(text="high", logprobs=digit_logprobs({"high": 0.9, "2": 0.1}, "high"))
        return graded(request)

    judgments, _ = run(TremaJudge(grade_score="logprob", aggregator=SumAggregator()), reply)
    for judgment in judgments:
        assert judgment.status == "unparsable" and judgment.criteria["coverage"] is None
        assert re.search(r"coverage \(no rating found\)", judgment.reason)


@pytest.mark.parametrize("grade_score", ["parsed", "logprob"])
def test_each_reply_is_parsed_once(monkeypatch, grade_score):
    """Both grade paths and the label read a reply through one parse (no second reading to drift)."""
    import judgelab.judges.trema as trema

    read: list[str] = []
    parse = trema.parse_rating
    monkeypatch.setattr(trema, "parse_rating", lambda text, *args, **kw: read.append(text) or parse(text, *args, **kw))
    judgments, backend = run(TremaJudge(grade_score=grade_score), lambda r, i: graded(r, label="3"))
    assert all(j.ok and j.label == 3 for j in judgments)
    assert len(read) == len(backend.requests) == 2 * (4 + 1)  # per item: four criterion grades, one label


def test_zero_fallback_for_missing_logprobs_only_when_asked_and_noted():
    def reply(request, i):
        return "2" if criterion_of(request) == "Coverage" else graded(request)

    judge = TremaJudge(grade_score="logprob", aggregator=SumAggregator(), on_invalid="zero")
    judgments, _ = run(judge, reply)
    for judgment in judgments:
        assert judgment.ok and judgment.criteria["coverage"] == 0.0 and judgment.extra["fallbacks"] == ["coverage"]
        assert judgment.label == 0  # 1.67 + 0 + 2.8 + 0.5 = 4.97 < 5


def test_a_backend_without_logprobs_is_refused_before_any_call():
    no_logprobs = Capabilities(logprobs=False, assistant_prefix=True)
    with pytest.raises(CapabilityError, match="no logprobs"):
        run(TremaJudge(grade_score="logprob"), lambda r, i: "2", capabilities=no_logprobs)
    judgments, _ = run(TremaJudge(aggregator=SumAggregator()), lambda r, i: "2", capabilities=no_logprobs)
    assert all(j.ok for j in judgments)  # parsed grades need no logprobs


def test_cot_grades_its_route_by_logprob_and_shows_them_in_the_label_prompt():
    judgments, backend = run(TremaJudge(mode="cot", grade_score="logprob"), lambda r, i: graded(r, label="3"))
    for judgment in judgments:
        assert judgment.ok and judgment.label == 3 and judgment.extra["binary_check"] == "yes"
        assert judgment.criteria == pytest.approx({"exactness": EXPECTED["exactness"], "coverage": 1.8})
    grades = [r for r in backend.requests if criterion_of(r)]
    others = [r for r in backend.requests if not criterion_of(r)]  # the yes/no checks and the label prompts
    assert len(grades) == 4 and all(r.logprobs for r in grades) and not any(r.logprobs for r in others)
    assert "Exactness: 1.7\nCoverage: 1.8" in user(others[-1])


def test_learned_aggregator_trains_on_expected_grades_where_greedy_grades_are_constant():
    """The motivating case: the model always writes "2", but its distribution follows the label."""
    data = [Item(id=f"t{k}", qid=f"q{k}", docid=f"d{k}", query="q", passage=f"passage {k % 4}", label=k % 4)
            for k in range(12)]

    def reply(request, i):
        label = int(re.search(r"Passage: passage (\d)", user(request)).group(1))
        probabilities = {"2": 0.9} if label == 2 else {"2": 0.5, str(label): 0.4}
        return Completion(text="2", logprobs=digit_logprobs({**probabilities, "The": 0.1}, "2"))

    with scripted_client(ScriptedBackend(reply)) as client:
        by_logprob = TremaJudge(grade_score="logprob", aggregator=NaiveBayesAggregator()).fit(data, client)
        logprob_labels = [j.label for j in by_logprob.run(data, client)]
        by_parsed = TremaJudge(aggregator=LogisticAggregator()).fit(data, client)
        parsed_labels = [j.label for j in by_parsed.run(data, client)]
    assert logprob_labels == [item.label for item in data]
    assert len(set(parsed_labels)) == 1  # constant grades: one label for everything
    assert by_logprob.grade_score == "logprob" and by_logprob.aggregator.fitted


def test_config_default_dump_is_unchanged_and_logprob_round_trips(tmp_path):
    assert "grade_score" not in TremaJudge().model_dump()
    judge = TremaJudge(grade_score="logprob", aggregator=SumAggregator())
    assert judge.digest() != TremaJudge(aggregator=SumAggregator()).digest()
    assert load_judge(judge.save(tmp_path / "trema.yaml")) == judge
    (tmp_path / "own.yaml").write_text("kind: trema\nmode: cot\ngrade_score: logprob\n")
    assert load_judge(tmp_path / "own.yaml").grade_score == "logprob"
    with pytest.raises(ValueError, match="query-generation"):
        TremaJudge(mode="query-generation", grade_score="logprob")


def test_the_judge_command_s_score_option_reaches_the_trema_judge():
    judge = judge_config_from_options(None, "trema", None, score="logprob", criteria=None)
    assert isinstance(judge, TremaJudge) and judge.grade_score == "logprob"
    with pytest.raises(ConfigError, match="grade_score|score"):
        judge_config_from_options(None, "trema", None, score="weighted")
