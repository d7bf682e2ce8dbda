"""Tool calls in the shapes other tools write them: promptfoo's replies from its Anthropic (content blocks, which
promptfoo writes as one text), Google AI Studio / Vertex (Gemini's parts) and Ollama providers, read into the
OpenAI shape; DeepEval's single-turn ``toolsCalled`` and its ``expectedTools`` (``extra.expected_tools``).
The promptfoo rows are hand-written copies of the conversations fixture with the reply replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.data.sources import read_source
from judgelab.errors import DataError
from tests.unit.test_sources_conversations import _altered

HERE = Path(__file__).resolve().parents[1] / "data" / "sources"
PROMPTFOO = HERE / "promptfoo" / "conversations.json"
RUN = HERE / "deepeval" / "runs" / "test_run_20261127_193842.json"
CONVERSATIONS = HERE / "deepeval" / "conversations"
OUTPUT = "results.results.3.response.output"

# promptfoo's Anthropic provider joins the blocks' texts (a tool_use block as its JSON) with blank lines
ANTHROPIC = ('Let me look that up.\n\n'
             '{"type":"tool_use","id":"toolu_01","name":"get_forecast","input":{"city":"oslo","days":2}}')
GEMINI = [{"text": "Checking "}, {"text": "Oslo."},
          {"functionCall": {"name": "get_forecast", "args": {"city": "oslo"}}, "thoughtSignature": "c2ln"},
          {"functionCall": {"name": "get_time"}}]
OLLAMA = [{"function": {"name": "get_forecast", "arguments": '{"city": "oslo"}'}}]


def _promptfoo(tmp_path: Path, output) -> Path:
    document = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    document["results"]["results"][3]["response"]["output"] = output
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _reply(tmp_path: Path, output):
    one = read_source(_promptfoo(tmp_path, output), "promptfoo").items[3]
    assert [m.role for m in one.messages] == ["user", "assistant"]  # the rendered prompt, then the reply
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in one.messages[-1].tool_calls]
    return one.output, calls


def test_anthropic_tool_use_blocks_written_as_text_are_calls(tmp_path):
    assert _reply(tmp_path, ANTHROPIC) == (
        "Let me look that up.", [("toolu_01", "get_forecast", {"city": "oslo", "days": 2})])


def test_anthropic_content_blocks_as_a_list_are_calls(tmp_path):
    blocks = [{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "One moment."},
              {"type": "tool_use", "id": "toolu_02", "name": "get_forecast", "input": {"city": "oslo"}},
              {"type": "tool_use", "name": "get_time", "input": {}}]
    # a block without an id gets one made up from its place among the calls
    assert _reply(tmp_path, blocks) == ("One moment.", [("toolu_02", "get_forecast", {"city": "oslo"}),
                                                        ("call_1", "get_time", {})])


def test_gemini_function_call_parts_are_calls(tmp_path):
    assert _reply(tmp_path, GEMINI) == ("Checking Oslo.", [("call_0", "get_forecast", {"city": "oslo"}),
                                                           ("call_1", "get_time", {})])
    # one part alone, no text: the output is empty, as for OpenAI's calls alone
    assert _reply(tmp_path, {"functionCall": {"name": "get_time", "args": {}}}) == ("", [("call_0", "get_time", {})])


def test_ollama_calls_without_ids_are_calls(tmp_path):
    assert _reply(tmp_path, OLLAMA) == ("", [("call_0", "get_forecast", {"city": "oslo"})])
    message = {"content": "Sure.", "tool_calls": [{"function": {"name": "get_forecast", "arguments": {"city": "oslo"}}}]}
    assert _reply(tmp_path, message) == ("Sure.", [("call_0", "get_forecast", {"city": "oslo"})])


@pytest.mark.parametrize("output", [
    "Here is a JSON example:\n\n{\"type\": \"tool_use\", cut",  # not JSON: a text
    [{"text": "a"}, {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}],  # no call among the parts
    [{"type": "text", "text": "no call"}],
])
def test_outputs_without_calls_stay_text(tmp_path, output):
    one = read_source(_promptfoo(tmp_path, output), "promptfoo").items[3]
    assert one.messages is None and one.output == (output if isinstance(output, str) else json.dumps(output))


@pytest.mark.parametrize(("output", "field"), [
    ('Sure.\n\n{"type":"tool_use","id":"toolu_01","input":{}}', OUTPUT),  # read out of the text: the output named
    ([{"type": "tool_use", "id": "toolu_01", "name": "get_forecast", "input": ["oslo"]}], f"{OUTPUT}.0.input"),
    ([{"type": "text", "text": 3}, {"type": "tool_use", "name": "f", "input": {}}], f"{OUTPUT}.0.text"),
    ([{"text": "a"}, {"functionCall": {"args": {"city": "oslo"}}}], f"{OUTPUT}.1.functionCall.name"),
    ([{"functionCall": "get_forecast"}], f"{OUTPUT}.0.functionCall"),
    ({"functionCall": {"name": "get_time", "args": "oslo"}}, f"{OUTPUT}.functionCall.args"),
    ([{"function": {"name": "", "arguments": "{}"}}], f"{OUTPUT}.0.function.name"),
    ({"content": "Sure.", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]},
     f"{OUTPUT}.tool_calls.0.function.arguments"),
])
def test_a_malformed_call_is_refused_naming_its_field(tmp_path, output, field):
    path = _promptfoo(tmp_path, output)
    with pytest.raises(DataError) as info:
        read_source(path, "promptfoo")
    assert (info.value.path, info.value.field) == (str(path), field), str(info.value)


def test_an_openai_call_without_its_id_is_still_refused(tmp_path):
    path = _promptfoo(tmp_path, [{"type": "function", "function": {"name": "f", "arguments": "{}"}}])
    with pytest.raises(DataError) as info:
        read_source(path, "promptfoo")
    assert info.value.field == f"{OUTPUT}.0.id"


# -- DeepEval ------------------------------------------------------------------------------------------------

TOOLS = [{"name": "calculator", "inputParameters": {"expression": "2 + 2"}, "output": 4,
          "description": "adds", "reasoning": "to be sure"}]


def test_a_single_turn_case_with_tools_called_is_a_conversation(tmp_path):
    def called(run):
        run["testCases"][0]["toolsCalled"] = TOOLS

    first, second = read_source(_altered(tmp_path, RUN, called), "deepeval").items[:2]
    assert [m.role for m in first.messages] == ["user", "assistant", "tool", "assistant"]
    (call,) = first.messages[1].tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_0", "calculator", {"expression": "2 + 2"})
    assert (first.messages[2].tool_call_id, first.messages[2].content) == ("call_0", "4")
    assert first.output == "4" and first.source.startswith("user: What is 2 + 2?")
    assert second.messages is None  # no tools called: as before
    before = read_source(RUN, "deepeval").items[0]
    assert before.messages is None and before.source == "What is 2 + 2?" and "expected_tools" not in before.extra


def test_expected_tools_are_kept_for_the_tool_calls_judge(tmp_path):
    def expected(run):
        run["testCases"][0]["expectedTools"] = TOOLS + [{"name": "search"}]
        run["testCases"][1]["expectedTools"] = []

    first, second = read_source(_altered(tmp_path, RUN, expected), "deepeval").items[:2]
    assert first.extra["expected_tools"] == [{"name": "calculator", "arguments": {"expression": "2 + 2"}},
                                             {"name": "search", "arguments": None}]
    assert first.messages is None and second.extra["expected_tools"] == []


def test_a_conversational_case_keeps_its_expected_tools(tmp_path):
    def expected(run):
        run["conversationalTestCases"][0]["expectedTools"] = [{"name": "get_forecast",
                                                               "inputParameters": {"city": "Paris"}}]

    paris, oslo = read_source(_altered(tmp_path, next(CONVERSATIONS.glob("*.json")), expected), "deepeval").items
    assert paris.extra["expected_tools"] == [{"name": "get_forecast", "arguments": {"city": "Paris"}}]
    assert "expected_tools" not in oslo.extra


@pytest.mark.parametrize(("change", "field"), [
    (lambda run: run["testCases"][0].update(expectedTools=["calculator"]), "testCases.0.expectedTools.0"),
    (lambda run: run["testCases"][1].update(expectedTools=[{"inputParameters": {}}]), "testCases.1.expectedTools.0.name"),
    (lambda run: run["testCases"][0].update(expectedTools={"name": "calculator"}), "testCases.0.expectedTools"),
    (lambda run: run["testCases"][0].update(expectedTools=[{"name": "calculator", "inputParameters": "2 + 2"}]),
     "testCases.0.expectedTools.0.inputParameters"),
    (lambda run: run["testCases"][0].update(toolsCalled=[{"inputParameters": {}}]), "messages.1.tool_calls.0.function.name"),
])
def test_a_malformed_deepeval_tool_is_refused_naming_the_file_and_field(tmp_path, change, field):
    path = _altered(tmp_path, RUN, change)
    with pytest.raises(DataError) as info:
        read_source(path, "deepeval")
    assert (info.value.path, info.value.field) == (str(path), field), str(info.value)


def test_a_malformed_conversational_expected_tool_is_refused(tmp_path):
    def bad(run):
        run["conversationalTestCases"][1]["expectedTools"] = [{"name": ""}]

    path = _altered(tmp_path, next(CONVERSATIONS.glob("*.json")), bad)
    with pytest.raises(DataError) as info:
        read_source(path, "deepeval")
    assert (info.value.path, info.value.field) == (str(path), "conversationalTestCases.1.expectedTools.0.name")


def test_a_single_turn_case_with_tools_called_and_no_output_keeps_an_empty_output(tmp_path):
    def silent(run):
        run["testCases"][0].update(toolsCalled=TOOLS, actualOutput="")

    first = read_source(_altered(tmp_path, RUN, silent), "deepeval").items[0]
    assert [m.role for m in first.messages] == ["user", "assistant", "tool"] and first.output == ""
