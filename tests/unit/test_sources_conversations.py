"""Conversations read from other tools' files (tests/data/sources/README.md says how each was made): DeepEval's
conversational test cases and retrieval contexts, and Inspect samples whose input is a chat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.data.sources import detect_source, read_source
from judgelab.errors import DataError

HERE = Path(__file__).resolve().parents[1] / "data" / "sources"
CONVERSATIONS = HERE / "deepeval" / "conversations"
RUN = HERE / "deepeval" / "runs" / "test_run_20261127_193842.json"
CHAT_LOG = HERE / "inspect" / "chat"


def _altered(tmp_path: Path, original: Path, change) -> Path:
    """A copy of a DeepEval run with ``change`` applied to its JSON."""
    run = json.loads(original.read_text(encoding="utf-8"))
    change(run)
    copy = tmp_path / original.name
    copy.write_text(json.dumps(run), encoding="utf-8")
    return copy


def test_deepeval_conversational_test_cases_are_read_as_conversations():
    read = read_source(CONVERSATIONS, "deepeval")
    paris, oslo = read.items
    assert (paris.id, oslo.id, paris.system_id) == ("weather-bot/paris", "weather-bot/oslo", "weather-bot")
    assert [m.role for m in paris.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    call = paris.messages[1].tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_forecast", {"city": "Paris"})
    assert paris.messages[2].tool_call_id == call.id and paris.messages[2].content == "Paris: 18 C and sunny on Monday."
    # the judged reply is the last assistant turn, after the conversation before it
    assert paris.output == "Yes. It will be 18 C and sunny." and paris.source.endswith("user: Are you sure?")
    assert [p.text for p in paris.contexts] == ["Paris: 18 C and sunny on Monday."]
    assert paris.context == "[1] Paris: 18 C and sunny on Monday." and paris.reference == "18 C"
    assert paris.group_id != oslo.group_id  # one group per scenario
    verdicts = {(j.item_id, j.judge): (j.score, j.label) for j in read.judgments}
    assert verdicts[("weather-bot/paris", "Answered")] == (1.0, "pass")
    assert verdicts[("weather-bot/oslo", "Answered")] == (0.0, "fail")
    assert verdicts[("weather-bot/oslo", "deepeval/pass")] == (0.0, "fail")


def test_a_deepeval_test_case_keeps_its_retrieval_context_as_passages(tmp_path):
    def retrieved(run):
        run["testCases"][0]["retrievalContext"] = ["Two plus two is four.", "Arithmetic basics."]

    first = read_source(_altered(tmp_path, RUN, retrieved), "deepeval").items[0]
    assert [(p.id, p.text) for p in first.contexts] == [("1", "Two plus two is four."), ("2", "Arithmetic basics.")]
    assert first.context == "Two plus two is four.\n\nArithmetic basics."  # as before: the texts joined
    assert read_source(RUN, "deepeval").items[0].contexts is None


@pytest.mark.parametrize(("change", "field"), [
    (lambda run: run["conversationalTestCases"][0]["turns"][0].pop("role"), "messages.0.role"),
    (lambda run: run["conversationalTestCases"][1]["turns"][1]["toolsCalled"][0].pop("name"),
     "messages.1.tool_calls.0.function.name"),
])
def test_a_bad_deepeval_turn_is_refused_naming_the_file_and_field(tmp_path, change, field):
    path = _altered(tmp_path, next(CONVERSATIONS.glob("*.json")), change)
    with pytest.raises(DataError) as info:
        read_source(path, "deepeval")
    assert (info.value.path, info.value.field) == (str(path), field)


def test_an_inspect_chat_input_keeps_its_roles_and_tool_calls():
    read = read_source(CHAT_LOG, "inspect")
    paris = next(item for item in read.items if item.group_id == "weather/paris")
    assert [m.role for m in paris.messages] == ["system", "user", "assistant", "tool", "assistant", "user"]
    call = paris.messages[2].tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_paris", "get_weather", {"city": "Paris"})
    assert (paris.messages[3].tool_call_id, paris.messages[3].name) == ("call_paris", "get_weather")
    # as before: the source is the chat's texts joined, the output the completion
    assert paris.source.startswith("You answer questions about the weather.\n\nWhat is the weather in Paris?")
    assert paris.output == "18" and paris.reference == "18"
    assert all(j.score == 1.0 for j in read.judgments)


def test_an_inspect_text_input_has_no_messages():
    assert all(item.messages is None for item in read_source(HERE / "inspect" / "json", "inspect").items)


def test_an_inspect_tool_result_without_its_call_is_refused_by_field(tmp_path):
    log = next(CHAT_LOG.glob("*.json"))
    data = json.loads(log.read_text(encoding="utf-8"))
    data["samples"][0]["input"][3]["tool_call_id"] = "call_elsewhere"
    copy = tmp_path / log.name
    copy.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as info:
        read_source(copy, "inspect")
    assert (info.value.path, info.value.field) == (str(copy), "messages.3.tool_call_id")


@pytest.mark.parametrize(("fixture", "source"), [(CONVERSATIONS, "deepeval"), (CHAT_LOG, "inspect")])
def test_the_conversation_fixtures_are_detected_as_their_tools(fixture, source):
    assert detect_source(fixture) == source
