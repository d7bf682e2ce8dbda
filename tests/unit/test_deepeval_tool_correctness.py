"""A round trip on test runs the real DeepEval wrote (tests/data/sources/deepeval/tools/, deepeval 4.3.1,
``make_tools.py``): two agents (careful-agent, hasty-agent) on six tasks, each test case's ``toolsCalled`` and
``expectedTools`` scored by DeepEval's own ``ToolCorrectnessMetric`` in four configurations. judgelab reads the
runs (``read_source(..., "deepeval")``), judges them with ``kind: tool_calls`` in the matching setting, and
its score per test case is checked against the one DeepEval recorded:

==============================  ======================================  ==========================
DeepEval metric (in the file)   judgelab ``tool_calls``                 agreement (of 12 cases)
==============================  ======================================  ==========================
Tool Correctness (default)      ``match: name, order: any``             11 (hasty-agent/task_5 not)
[arguments] INPUT_PARAMETERS    ``match: arguments, order: any``        9 (hasty task_0, 2, 3 not)
[ordering] consider_ordering    ``match: name, order: sequence``        12
[exact] should_exact_match      ``match: name, order: exact``           12
==============================  ======================================  ==========================

Extra calls are ignored by both (``extra_calls: ignore``) except in exact mode, where both give 0.

Where they differ, DeepEval's definition (deepeval/metrics/tool_correctness/tool_correctness.py,
class ``ToolCorrectnessMetric``) is not judgelab's, and the test asserts each side's own number:

1. Partial credit for arguments. With ``evaluation_params=[ToolCallParams.INPUT_PARAMETERS]``,
   ``_calculate_non_exact_match_score`` scores each expected call by the best unmatched call of its name,
   weighted by ``_compare_dicts(expected.input_parameters, called.input_parameters)``: 1 when the dicts are
   equal, else the number of keys (of the union of both dicts' keys) whose values are equal (nested dicts
   scored recursively, over that same union) divided by the union's size; the score is the sum over the
   number expected. judgelab's ``match: arguments`` is all or nothing (the arguments equal as JSON, key order
   aside). hasty-agent/task_0: forecast(lat 59.9, lon 10.7, day tomorrow) for forecast(lat 59.91, lon 10.75,
   day tomorrow), geocode missing: DeepEval (1/3 + 0) / 2 = 0.1667, judgelab 0. task_2: get_rate(USD, GBP)
   for get_rate(USD, EUR), the calculator's expression different: DeepEval (1/2 + 0) / 2 = 0.25, judgelab
   0. task_3: send_email with the wrong address (subject right), find_contact missing: DeepEval 0.25,
   judgelab 0. (The same weights enter ``_compute_weighted_lcs`` when ordering and arguments are combined.)
2. Identical calls count once. ``_calculate_non_exact_match_score`` keeps the calls already matched in a
   ``set`` of ``ToolCall``, whose ``__eq__``/``__hash__`` (deepeval/test_case/llm_test_case.py) compare
   name, input parameters and output: a second call equal to one already matched is skipped as matched.
   hasty-agent/task_5 called forecast(Bergen) twice for the expected forecast(Bergen), forecast(Oslo): by
   name DeepEval scores 1/2 = 0.5, judgelab 1.0 (each call matched by its place, at most once). With
   arguments both give 0.5; DeepEval's ordering mode (a dynamic programme, no set) gives 1.0 as judgelab.

Differences of definition not met by these runs (from the same source, checked on deepeval 4.3.1 by hand):
an empty ``expectedTools`` with calls made scores 0 in DeepEval in every mode, 1 in judgelab with
``extra_calls: ignore`` (0 with ``count``); an expected call without ``inputParameters`` matches any
arguments in judgelab, while with INPUT_PARAMETERS DeepEval's ``_compare_dicts(None, {...})`` raises
(AttributeError) in the default and ordering modes and exact mode scores it 0 (``None != {...}``); DeepEval also compares a call's
``type`` (the reader does not keep it) and, with ``ToolCallParams.OUTPUT``, its output (judgelab never
does); judgelab's ``extra_calls: count`` (matched / (expected + extra)) has no DeepEval counterpart.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judgelab as jl
from judgelab.data.sources import read_source
from judgelab.judges.base import judge_from_dict
from judgelab.judges.requirements import tool_calls_of

RUNS = Path(__file__).resolve().parents[1] / "data" / "sources" / "deepeval" / "tools"
CASES = [f"{agent}/task_{t}" for agent in ("careful-agent", "hasty-agent") for t in range(6)]

#: DeepEval's metric (its name in the file) and the tool_calls setting that reproduces it
SETTINGS = {
    "Tool Correctness": {"match": "name", "order": "any"},
    "Tool Correctness [arguments]": {"match": "arguments", "order": "any"},
    "Tool Correctness [ordering]": {"match": "name", "order": "sequence"},
    "Tool Correctness [exact]": {"match": "name", "order": "exact"},
}
#: where the definitions differ (module docstring): (DeepEval's score, judgelab's)
DIFFERENT = {
    ("Tool Correctness", "hasty-agent/task_5"): (0.5, 1.0),
    ("Tool Correctness [arguments]", "hasty-agent/task_0"): (1 / 6, 0.0),
    ("Tool Correctness [arguments]", "hasty-agent/task_2"): (0.25, 0.0),
    ("Tool Correctness [arguments]", "hasty-agent/task_3"): (0.25, 0.0),
}
#: the scores both give, DeepEval's as it recorded them
AGREED = {
    "Tool Correctness": [1, 1, 1, 1, 1, 1, 0.5, 1, 1, 0.5, 0, None],
    "Tool Correctness [arguments]": [1, 1, 1, 1, 1, 1, None, 1, None, None, 0, 0.5],
    "Tool Correctness [ordering]": [1, 1, 1, 1, 1, 1, 0.5, 0.5, 1, 0.5, 0, 1],
    "Tool Correctness [exact]": [1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1],
}


@pytest.fixture(scope="module")
def read():
    return read_source(RUNS, "deepeval")


def _tool_calls(read, setting):
    return judge_from_dict({"kind": "tool_calls", **setting}).run(list(read.items))


def test_the_runs_are_read_with_their_calls_and_expected_tools(read):
    assert read.source == "deepeval" and sorted(item.id for item in read.items) == CASES
    assert {item.system_id for item in read.items} == {"careful-agent", "hasty-agent"}  # hyperparameters.model
    items = {item.id: item for item in read.items}
    weather = items["careful-agent/task_0"]
    assert [(tool, json.loads(arguments), result) for tool, arguments, result in tool_calls_of(weather)] == [
        ("geocode", {"city": "Oslo"}, '{"lat": 59.91, "lon": 10.75}'),
        ("forecast", {"lat": 59.91, "lon": 10.75, "day": "tomorrow"}, "Rain, 9 C")]
    assert weather.messages[0].content == "What will the weather be in Oslo tomorrow?"
    assert weather.output == "Rain and 9 C tomorrow in Oslo."
    assert weather.extra["expected_tools"] == [
        {"name": "geocode", "arguments": {"city": "Oslo"}},
        {"name": "forecast", "arguments": {"lat": 59.91, "lon": 10.75, "day": "tomorrow"}}]
    assert [tool for tool, _, _ in tool_calls_of(items["careful-agent/task_3"])] == [
        "find_contact", "spell_check", "send_email"]  # the extra call
    assert [tool for tool, _, _ in tool_calls_of(items["hasty-agent/task_1"])] == [
        "book_flight", "search_flights"]  # out of order
    unaided = items["hasty-agent/task_4"]  # no tool called: a plain question and answer
    assert not tool_calls_of(unaided) and unaided.output == "About 40."
    assert unaided.extra["expected_tools"] == [{"name": "calculator", "arguments": {"expression": "0.17*240"}}]
    # DeepEval's verdicts come along: each configuration's score and pass, no model behind them
    assert set(SETTINGS) | {f"{m}/pass" for m in SETTINGS} | {"deepeval/pass"} == set(read.judges())
    assert all(j.extra.get("evaluation_model") == "no-model" for j in read.judgments if j.judge in SETTINGS)


@pytest.mark.parametrize("metric", SETTINGS)
def test_tool_calls_scores_each_case_as_deepeval_where_the_definitions_agree(read, metric):
    deepeval = {j.item_id: j.score for j in read.judgments if j.judge == metric}
    judged = {j.item_id: j for j in _tool_calls(read, SETTINGS[metric])}
    assert sorted(deepeval) == sorted(judged) == CASES and all(j.status == "ok" for j in judged.values())
    agreed = 0
    for case, expected in zip(CASES, AGREED[metric], strict=True):
        if (metric, case) in DIFFERENT:
            theirs, ours = DIFFERENT[metric, case]
            assert expected is None
            assert deepeval[case] == pytest.approx(theirs), case
            assert judged[case].score == pytest.approx(ours), case
        else:
            assert deepeval[case] == pytest.approx(expected), case
            assert judged[case].score == pytest.approx(deepeval[case]), case
            agreed += 1
    assert agreed == {"Tool Correctness": 11, "Tool Correctness [arguments]": 9}.get(metric, 12)


def test_the_judgments_say_what_was_missing_or_extra(read):
    judged = {j.item_id: j for j in _tool_calls(read, SETTINGS["Tool Correctness [exact]"])}
    extra = judged["careful-agent/task_3"]
    assert extra.score == 0 and extra.extra["not_expected"] == ['spell_check({"text": "Report"})']
    missing = {j.item_id: j for j in _tool_calls(read, {"extra_calls": "count"})}["hasty-agent/task_0"]
    assert missing.extra["missing"] == ['geocode({"city": "Oslo"})'] and missing.score == pytest.approx(0.5)
    # counted against it, the careful agent's extra call costs it a third (no DeepEval configuration does so)
    assert {j.item_id: j.score for j in _tool_calls(read, {"extra_calls": "count"})}["careful-agent/task_3"] == (
        pytest.approx(2 / 3))


@pytest.mark.parametrize("metric", SETTINGS)
def test_the_leaderboard_ranks_the_careful_agent_first(read, metric):
    board = jl.evaluate(list(read.items), _tool_calls(read, SETTINGS[metric]), bootstrap=200).to_dict()
    judge = board["estimators"]["judge"]
    assert judge["careful-agent"]["rank"] == 1 and judge["hasty-agent"]["rank"] == 2
    assert judge["careful-agent"]["value"] == pytest.approx(sum(AGREED[metric][:6]) / 6)
    assert judge["careful-agent"]["value"] > judge["hasty-agent"]["value"]
