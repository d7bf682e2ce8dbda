"""Items that carry a conversation, retrieved passages or an agent's run (docs/conversations.md): their
validation and bounds, the texts derived from them, every file format, and a judge's prompt from them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab.data import DataError, Item, load_items, save_items
from judgelab.data.conversation import MAX_STEPS, max_text_chars
from judgelab.data.digest import content_digest
from judgelab.data.fields import unused_names
from judgelab.data.given import as_items
from judgelab.judges.base import load_judge
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.types import Completion
from judgelab.prompts import AuxiliaryTexts, render_judge_prompt
from judgelab.prompts.render import PromptContext
from judgelab.strategy import Strategy
from tests.doubles import ScriptedBackend, digit_logprobs, scripted_client

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
CHAT = [{"role": "system", "content": "You answer questions about the weather."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"},
        {"role": "assistant", "content": "It is 18 C and sunny in Paris."}]
ROW = {"id": "c1", "system_id": "bot", "messages": CHAT, "contexts": ["Paris: 18 C.", "Oslo: -3 C."],
       "trajectory": [{"tool": "get_weather", "arguments": {"city": "Paris"}, "observation": "18 C, sunny",
                       "thought": "I need the forecast."}, {"tool": "answer", "arguments": None, "observation": None}],
       "scores": {"helpfulness": 4}}


def _jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _refused(tmp_path: Path, **changes) -> DataError:
    """The error loading a JSON-lines file whose second item is ROW with ``changes``."""
    path = _jsonl(tmp_path / "chat.jsonl", {"id": "plain", "output": "x"}, ROW | {"id": "c2"} | changes)
    with pytest.raises(DataError) as info:
        load_items(path)
    assert info.value.path == str(path) and info.value.line == 2
    return info.value


# ---------------------------------------------------------------------------------------- derived texts


def test_a_messages_only_item_rates_the_last_assistant_reply_after_the_conversation():
    item = Item.model_validate(ROW)
    assert item.output == "It is 18 C and sunny in Paris."
    assert item.source == ("system: You answer questions about the weather.\n"
                           "user: What is the weather in Paris?\n"
                           'assistant: [calls get_weather({"city": "Paris"})]\n'
                           "tool: 18 C, sunny")
    assert item.context == "[1] Paris: 18 C.\n\n[2] Oslo: -3 C."
    assert item.kind == "pointwise" and item.grouped_by == "text"


def test_a_given_output_answers_the_whole_conversation_and_given_texts_are_kept():
    item = Item(id="c", messages=CHAT[:2], output="Sunny.", contexts=[{"id": "a", "text": "t", "title": "T"}])
    assert item.output == "Sunny." and item.source.endswith("user: What is the weather in Paris?")
    assert item.context == "[a] T\nt"
    kept = Item(id="k", messages=CHAT, source="my source", context="my context")
    assert (kept.source, kept.context, kept.output) == ("my source", "my context", CHAT[-1]["content"])


def test_a_pairwise_item_keeps_its_outputs_and_its_instruction():
    item = Item(id="p", messages=CHAT[:2], output_a="A", output_b="B", instruction="Answer the user")
    assert (item.output, item.source, item.prompt) == (None, None, "Answer the user")


def test_a_conversation_without_an_assistant_reply_needs_an_output(tmp_path):
    error = _refused(tmp_path, messages=CHAT[:2])
    assert error.field == "output" and "'messages' ending in an assistant reply" in error.detail


def test_existing_items_are_unchanged_and_keep_their_digest():
    item = Item(id="x", source="s", output="o", scale=(1, 5))
    assert (item.messages, item.contexts, item.trajectory) == (None, None, None)
    assert content_digest(item) == content_digest(Item(id="y", source="s", output="o", scale=(1, 5)))
    # the conversation is read by templates, so it is part of what a rerun compares
    assert content_digest(Item(id="z", messages=CHAT[:2], output="o")) != content_digest(
        Item(id="z", messages=CHAT[:1] + [{"role": "user", "content": "Oslo?"}], output="o"))


# ---------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"messages": [{"content": "hi"}, CHAT[-1]]}, "messages.0.role", "required field is missing"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages.0.role", "'system', 'user', 'assistant'"),
    ({"messages": [CHAT[1], {"role": "tool", "tool_call_id": "call_9", "content": "18 C"}, CHAT[-1]]},
     "messages.1.tool_call_id", "'call_9' names no call"),
    ({"messages": [CHAT[1], {"role": "tool", "content": "18 C"}, CHAT[-1]]},
     "messages.1.tool_call_id", "no tool_call_id"),
    ({"messages": [CHAT[3], CHAT[2], CHAT[-1]]}, "messages.0.tool_call_id", "a tool call made earlier"),
    ({"messages": [{"role": "user", "content": None}, CHAT[-1]]}, "messages.0.content", "needs content"),
    ({"messages": [{"role": "user", "content": "x", "tool_calls": [CALL]}, CHAT[-1]]}, "messages.0.tool_calls",
     "only an assistant"),
    ({"messages": [CHAT[2], CHAT[2], CHAT[-1]]}, "messages.1.tool_calls.0.id", "used twice"),
    ({"messages": [{"role": "user", "content": "x", "mood": "happy"}, CHAT[-1]]}, "messages.0.mood", "not permitted"),
    ({"contexts": ["a", {"id": "1", "text": "b"}]}, "contexts.1.id", "duplicate passage id '1'"),
    ({"contexts": [{"id": "x"}]}, "contexts.0.text", "required field is missing"),
    ({"trajectory": [{"arguments": {}}]}, "trajectory.0.tool", "required field is missing"),
    ({"trajectory": [{"tool": "t", "observation": 3}]}, "trajectory.0.observation", "valid string"),
])
def test_bad_conversations_passages_and_runs_are_refused_naming_file_line_and_field(tmp_path, changes, field, words):
    error = _refused(tmp_path, **changes)
    assert error.field == field and words in error.detail, str(error)


def test_a_trajectory_of_a_hundred_thousand_steps_is_refused_unread(tmp_path):
    error = _refused(tmp_path, trajectory=[{"tool": "t"}] * 100_000)
    assert error.field == "trajectory" and f"100,000 steps: at most {MAX_STEPS:,} are read" in error.detail
    assert len(Item(id="ok", output="o", trajectory=[{"tool": "t"}] * MAX_STEPS).trajectory) == MAX_STEPS


def test_a_message_of_a_hundred_thousand_tool_calls_is_refused_unread(tmp_path):
    call = {"id": "c", "function": {"name": "f", "arguments": "{}"}}
    many = [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [call] * 100_000}]
    error = _refused(tmp_path, messages=many)
    assert error.field == "messages.1.tool_calls" and f"100,000 tool calls: at most {MAX_STEPS:,} are read" in error.detail


def test_a_fifty_megabyte_message_is_refused_by_name_and_the_bound_follows_the_input_bound(tmp_path, monkeypatch):
    huge = "x" * (50 * 2**20)
    with pytest.raises(DataError) as info:
        as_items([{"id": "big", "messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": huge}]}])
    assert info.value.field == "messages.1.content" and "52,428,800 characters" in info.value.detail
    assert "JUDGELAB_MAX_INPUT_BYTES" in info.value.detail
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1M")
    assert max_text_chars() == 2**17
    error = _refused(tmp_path, contexts=["y" * (2**17 + 1)])
    assert error.field == "contexts.0" and "over the 131,072" in error.detail
    assert Item(id="fits", output="o", contexts=["y" * 2**17]).contexts[0].text == "y" * 2**17


# ---------------------------------------------------------------------------------------- files and frames


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "tsv", "parquet", "csv.gz"])
def test_every_format_round_trips_conversations_passages_and_runs(tmp_path, fmt):
    items = [Item.model_validate(ROW), Item(id="plain", source="s", output="o"),
             Item(id="mixed", output="o", trajectory=[{"tool": "search", "arguments": "text"},
                                                      {"tool": "add", "arguments": [1, 2.5, {"deep": True}]}])]
    back = list(load_items(save_items(items, tmp_path / f"chat.{fmt}")))
    assert back == items
    assert back[0].messages[2].tool_calls[0].function.name == "get_weather"


def test_a_csv_takes_json_cells_and_names_a_bad_one(tmp_path):
    path = tmp_path / "chat.csv"
    frame = pd.DataFrame([{"id": "c1", "messages": json.dumps(CHAT), "contexts": json.dumps(["p"])}])
    frame.to_csv(path, index=False)
    item = load_items(path)[0]
    assert item.output == CHAT[-1]["content"] and item.context == "[1] p"
    path.write_text('id,messages\nc1,"[{""role"": ""user""}"\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_items(path)
    assert (info.value.line, info.value.field) == (2, "messages") and "not valid JSON" in info.value.detail


def test_a_dataframe_of_python_objects_or_json_text_is_read_and_a_bad_row_named():
    frame = pd.DataFrame([{"id": "c1", "messages": CHAT}, {"id": "c2", "messages": json.dumps(CHAT)}])
    assert [item.output for item in load_items(frame)] == [CHAT[-1]["content"]] * 2
    bad = pd.DataFrame([{"id": "c1", "messages": CHAT}, {"id": "c2", "messages": [{"content": "no role"}]}])
    with pytest.raises(DataError) as info:
        load_items(bad)
    assert (info.value.path, info.value.line, info.value.field) == ("<DataFrame>", 2, "messages.0.role")


# ---------------------------------------------------------------------------------------- prompts


def test_an_existing_judge_renders_a_prompt_from_a_messages_only_item():
    item = Item(id="c1", messages=CHAT, contexts=["Paris: 18 C."])
    backend = ScriptedBackend(lambda request, i: "Rating: [[4]]")
    with scripted_client(backend) as client:
        judgments = PromptedJudge(aspect="helpfulness", family="generic", criteria="Helps the user.").run([item],
                                                                                                         client)
    prompt = backend.requests[0].messages[-1].content
    assert judgments[0].score == 4.0
    assert "[Input]\nsystem: You answer questions about the weather.\nuser: What is the weather in Paris?" in prompt
    assert "[Context]\n[1] Paris: 18 C." in prompt
    assert "[The Start of the Output]\nIt is 18 C and sunny in Paris.\n[The End of the Output]" in prompt


def test_the_default_prompt_of_an_item_is_the_same_with_or_without_its_conversation():
    plain = Item(id="a", source="user: hi", output="Hello!")
    chat = Item(id="a", messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}])
    strategy, aux = Strategy(), AuxiliaryTexts(criteria="Coherent with the history.")
    assert (render_judge_prompt(strategy, "dialogue", "coherence", plain, aux).messages
            == render_judge_prompt(strategy, "dialogue", "coherence", chat, aux).messages)


def test_templates_read_the_conversation_passages_and_run_as_text():
    context = PromptContext(aspect="helpfulness", item=Item.model_validate(ROW))
    assert context.conversation.splitlines()[-1] == "assistant: It is 18 C and sunny in Paris."
    assert context.contexts == "[1] Paris: 18 C.\n\n[2] Oslo: -3 C."
    assert context.trajectory == ('Step 1: get_weather({"city": "Paris"})\nThought: I need the forecast.\n'
                                  "Observation: 18 C, sunny\n\nStep 2: answer()")
    bare = PromptContext(aspect="x", item=Item(id="b", output="o"))
    assert (bare.conversation, bare.contexts, bare.trajectory) == (None, None, None)


def test_the_example_conversations_are_judged_by_the_shipped_helpfulness_judge():
    examples = Path(judgelab.__file__).parent / "examples"
    items = load_items(examples / "conversations.jsonl")
    reply = Completion(text="4]]", logprobs=digit_logprobs({"3": 0.5, "4": 0.5}, "4"), prompt_tokens=5,
                       completion_tokens=2)
    backend = ScriptedBackend(lambda request, i: reply)
    with scripted_client(backend) as client:
        judgments = load_judge(examples / "helpfulness.yaml").run(list(items), client)
    assert [j.score for j in judgments] == [3.5] * 6 and len(backend.requests) == 6
    assert all("[Input]\nsystem: You are the support assistant" in r.messages[-1].content for r in backend.requests)
    assert len({item.group for item in items}) == 3


def test_other_names_of_the_three_fields_are_suggested():
    items = [Item(id="a", output="o", extra={"turns": [], "retrieval_context": ["p"], "steps": []})]
    assert unused_names(["turns", "retrieval_context", "steps"], items) == [
        ("turns", "messages"), ("retrieval_context", "contexts"), ("steps", "trajectory")]


def test_the_page_shows_the_example_file_and_valid_items():
    page = (Path(__file__).resolve().parents[2] / "docs" / "conversations.md").read_text(encoding="utf-8")
    lines = page.split("```json\n", 1)[1].split("```", 1)[0].strip().splitlines()
    shipped = (Path(judgelab.__file__).parent / "examples" / "conversations.jsonl").read_text(encoding="utf-8")
    assert lines[0] in shipped.splitlines()
    assert [Item.model_validate(json.loads(line)).output for line in lines[1:]] == ["18 C and sunny.", "On Mondays."]
