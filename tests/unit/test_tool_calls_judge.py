"""The tool-call judges' logic: ``tool_calls`` (no model) matching the calls made against the expected ones in
any order, as a subsequence or exactly, by name or with arguments, extra calls ignored or counted, and its
refusals; ``tool_use`` with a scripted model: what it is shown, reading verdicts (a missing one is unparsable,
never scored; "not correct" is never correct), one call per run or per tool call, and its bounds.

``tool_use`` runs end to end with the real embedded model in tests/integration/test_tool_use_judge.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import judgelab
from judgelab.data import load_items
from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.tool_calls import ToolCallsJudge, ToolUseJudge, call_verdict
from judgelab.llm.types import Request
from tests.doubles import ScriptedBackend, scripted_client

EXAMPLES = Path(judgelab.__file__).parent / "examples"


def run_of(tools: list, expected=None, **fields) -> Item:
    """A run whose steps call ``tools`` (names, or (name, arguments))."""
    steps = [{"tool": t, "arguments": {"q": 1}} if isinstance(t, str) else {"tool": t[0], "arguments": t[1]}
             for t in tools]
    extra = {} if expected is None else {"expected_tools": expected}
    return Item.model_validate({"id": "r", "source": "Do the task.", "output": "Done.", "trajectory": steps}
                               | extra | fields)


def score(item: Item, **options) -> float | None:
    return ToolCallsJudge(**options).run([item])[0].score


# -- tool_calls: no model ---------------------------------------------------------------------------------------
def test_any_order_counts_each_expected_call_once():
    item = run_of(["search", "search", "open"], ["search", "open", "search", "summarise"])
    assert score(item) == pytest.approx(3 / 4)
    judgment = ToolCallsJudge().run([item])[0]
    assert judgment.extra["missing"] == ["summarise"] and judgment.extra["not_expected"] == []
    assert judgment.explanation == "1 of 4 expected call(s) not made: summarise."


def test_sequence_is_the_longest_common_subsequence_and_exact_needs_the_very_calls():
    item = run_of(["open", "search", "noise", "open"], ["search", "open", "close"])
    assert score(item, order="any") == pytest.approx(2 / 3)
    assert score(item, order="sequence") == pytest.approx(2 / 3)  # search, open in order
    assert score(run_of(["open", "search"], ["search", "open"]), order="sequence") == pytest.approx(1 / 2)
    assert score(run_of(["search", "open"], ["search", "open"]), order="exact") == 1.0
    assert score(run_of(["search", "open", "open"], ["search", "open"]), order="exact") == 0.0
    assert score(run_of(["open", "search"], ["search", "open"]), order="exact") == 0.0


def test_arguments_match_as_json_and_a_name_only_expectation_leaves_the_precise_call_free():
    made = [("get", {"city": "Lyon", "day": "tomorrow"}), ("get", {"city": "Paris"})]
    item = run_of(made, ["get", {"name": "get", "arguments": {"day": "tomorrow", "city": "Lyon"}}])
    assert score(item, match="arguments") == 1.0  # the name-only one takes Paris, not the Lyon call
    assert score(run_of(made, [{"name": "get", "arguments": {"city": "Rome"}}]), match="arguments") == 0.0
    assert score(run_of(made, [{"name": "get", "arguments": {"city": "Rome"}}]), match="name") == 1.0
    deepeval = {"name": "get", "inputParameters": {"city": "Paris"}}  # DeepEval's ToolCall keys
    assert score(run_of(made, [deepeval]), match="arguments") == 1.0


def test_extra_calls_lower_the_score_only_when_counted():
    item = run_of(["search", "search", "delete"], ["search"])
    assert score(item) == 1.0
    assert score(item, extra_calls="count") == pytest.approx(1 / 3)
    judgment = ToolCallsJudge(extra_calls="count").run([item])[0]
    assert "2 call(s) not expected" in judgment.explanation
    assert score(run_of([], []), extra_calls="count") == 1.0  # nothing expected, nothing made
    assert score(run_of(["x"], []), extra_calls="count") == 0.0
    assert score(run_of(["search"], ["search"]), scale=[1, 5]) == 5.0


def test_calls_are_read_from_messages_and_a_run_without_calls_missed_them_all():
    messages = [{"role": "user", "content": "Weather in Lyon?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "function": {"name": "get", "arguments": '{"city": "Lyon"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "Rain"},
                {"role": "assistant", "content": "Rain."}]
    chat = Item.model_validate({"id": "m", "messages": messages, "expected_tools": ["get"]})
    judgment = ToolCallsJudge().run([chat])[0]
    assert judgment.score == 1.0 and judgment.extra["from"] == "messages"
    plain = Item.model_validate({"id": "p", "source": "Weather?", "output": "Rain.", "expected_tools": ["get"]})
    judgment = ToolCallsJudge().run([plain])[0]
    assert judgment.score == 0.0 and judgment.extra["from"] is None and judgment.extra["made"] == []


@pytest.mark.parametrize(("expected", "says"), [
    (None, "no extra.expected_tools"), ({"name": "x"}, "must be a list"), ([{"arguments": {}}], "expected_tools.0"),
    ([""], "expected_tools.0"), ("[not json", "not valid JSON")])
def test_missing_or_malformed_expectations_are_that_items_error(expected, says):
    item = run_of(["search"], expected)
    judgment = ToolCallsJudge().run([item])[0]
    assert judgment.status == "error" and judgment.score is None and says in judgment.reason


def test_expectations_as_a_csv_cell_and_the_shipped_example():
    assert score(run_of(["search"], json.dumps(["search"]))) == 1.0
    items = load_items(EXAMPLES / "agent_runs.jsonl")
    judgments = load_judge(EXAMPLES / "tool_calls.yaml").run(items)
    assert {j.item_id: j.score for j in judgments}["csv-b"] == pytest.approx(2 / 3)  # it never read sales.csv
    assert all(j.status == "ok" for j in judgments)


def test_bad_options_are_refused():
    with pytest.raises(ConfigError, match="field 'order'"):
        judge_from_dict({"kind": "tool_calls", "order": "sorted"})
    with pytest.raises(ConfigError, match="field 'max_calls'"):
        judge_from_dict({"kind": "tool_use", "max_calls": 0})


# -- tool_use: one model ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "verdict"), [
    ("correct", "correct"), ("Correct.", "correct"), ("yes", "correct"), ("not correct", "not correct"),
    ("Incorrect", "not correct"), ("wrong tool", "not correct"), ("unnecessary", "not correct"),
    ("It was not needed.", "not correct"), ("redundant", "not correct"), ("no", "not correct"),
    ("correct tool but not correct arguments", None), ("maybe", None), ("", None)])
def test_a_verdict_is_read_negations_first(text, verdict):
    assert call_verdict(text) == verdict


def use(items: list[Item], reply: str | Callable[[Request], str], **options) -> tuple[list, ScriptedBackend]:
    backend = ScriptedBackend(lambda request, _: reply(request) if callable(reply) else reply)
    with scripted_client(backend) as client:
        return ToolUseJudge(**options).run(items, client), backend


def test_batch_shows_the_run_and_lists_every_call_once():
    item = run_of([("get", {"city": "Lyon"}), ("get", {"city": "Lyon"})], observation=None)
    judgments, backend = use([item], "1. correct\n2. not correct: a repeat")
    [judgment] = judgments
    assert judgment.score == 0.5 and judgment.status == "ok"
    assert judgment.explanation == '1 of 2 tool call(s) judged not correct:\n- 2. get({"city": "Lyon"})'
    assert backend.calls == 1
    assert [c["verdict"] for c in judgment.extra["calls"]] == ["correct", "not correct"]
    prompt = backend.requests[0].messages[-1].content
    assert prompt.startswith("Task given to the agent:\nDo the task.\n\nAgent's steps:\nStep 1: get(")
    assert '1. get({"city": "Lyon"})\n2. get({"city": "Lyon"})\n' in prompt
    assert backend.requests[0].stop == ("\n3.",)  # the reply stops where a third line would start


def test_each_asks_once_per_call_and_a_missing_verdict_is_unparsable():
    item = run_of(["a", "b", "c"])
    judgments, backend = use([item], lambda r: "correct" if "Tool call 2:" not in r.messages[-1].content else "hmm",
                             verify="each")
    assert backend.calls == 3
    assert judgments[0].status == "unparsable" and judgments[0].score is None
    assert judgments[0].reason == "no verdict (correct / not correct) for call 2 of 3"


def test_a_run_without_calls_or_with_too_many_is_an_error_without_a_call():
    none = Item.model_validate({"id": "n", "source": "Say hi.", "output": "Hi."})
    many = run_of(["x"] * 6)
    judgments, backend = use([none, many], "1. correct", max_calls=5)
    assert backend.calls == 0
    assert [j.status for j in judgments] == ["error", "error"]
    assert "no tool calls" in judgments[0].reason and "6 tool calls" in judgments[1].reason
