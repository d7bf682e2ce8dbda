"""A conversation split into turns (data/turns.py): one item per assistant reply, judged as any item is."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.data import DataError, Item, load_items, save_items
from judgelab.data.turns import split_turns

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples" / "conversations.jsonl"


def chat(*texts, **fields):
    """user / assistant messages alternating, from the texts."""
    roles = ("user", "assistant")
    return Item(id=fields.pop("id", "c1"), messages=[{"role": roles[k % 2], "content": t} for k, t in enumerate(texts)],
                **fields)


def test_each_reply_becomes_an_item_whose_history_is_its_source():
    turns = split_turns([chat("hi", "Hello!", "open Monday?", "No, closed.", group_id="g", system_id="v1")])
    assert [t.id for t in turns] == ["c1#turn1", "c1#turn2"]
    assert [t.group_id for t in turns] == ["g#turn1", "g#turn2"]  # the same turn of two systems is paired
    assert turns[1].source == "user: hi\nassistant: Hello!\nuser: open Monday?" and turns[1].output == "No, closed."
    assert turns[0].system_id == "v1" and turns[0].extra == {"conversation": "c1", "turn": 1, "turns": 2}
    # what a judge reads: the same texts as an item written with source and output
    twin = Item(id="x", source="user: hi\nassistant: Hello!\nuser: open Monday?", output="No, closed.")
    assert (turns[1].source, turns[1].output) == (twin.source, twin.output)


def test_a_reply_given_as_output_beside_its_history_is_the_last_turn():
    item = Item(id="c", messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"},
                                  {"role": "user", "content": "bye?"}], output="Goodbye.")
    turns = split_turns([item])
    assert [t.output for t in turns] == ["Hello!", "Goodbye."]


def test_tool_calls_stay_in_the_history_and_a_call_without_text_is_no_turn():
    item = Item(id="c", messages=[
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "k1", "type": "function", "function": {"name": "forecast", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "k1", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."}])
    (turn,) = split_turns([item])
    assert turn.output == "Sunny." and "[calls forecast({})]" in turn.source and "tool: sunny" in turn.source


def test_turn_scores_label_the_turns_and_the_conversation_scores_stay_aside():
    item = chat("a", "b", "c", "d", scores={"helpfulness": 4}, extra={"turn_scores": [{"helpfulness": 5}, None]})
    first, second = split_turns([item])
    assert first.scores == {"helpfulness": 5} and second.scores == {}
    assert first.extra["conversation_scores"] == {"helpfulness": 4} and "turn_scores" not in first.extra


@pytest.mark.parametrize(("extra", "message"), [
    ({"turn_scores": [{"helpfulness": 5}]}, "one entry per assistant reply \\(2\\) is needed, got 1 entries"),
    ({"turn_scores": {"helpfulness": 5}}, "got dict"),
    ({"turn_scores": [{"helpfulness": "good"}, None]}, "entry 1: an object of aspect: number"),
])
def test_turn_scores_that_do_not_fit_the_replies_are_refused_naming_item_and_field(extra, message):
    with pytest.raises(DataError, match=f"item 'c1', field 'extra.turn_scores'.*{message}"):
        split_turns([chat("a", "b", "c", "d", extra=extra)])


def test_an_item_without_messages_is_refused_by_name():
    with pytest.raises(DataError, match="item 'plain' has no messages"):
        split_turns([Item(id="plain", source="q", output="a")])


def test_the_shipped_conversations_round_trip_as_turns(tmp_path):
    turns = split_turns(load_items(EXAMPLES))
    assert len(turns) > len(load_items(EXAMPLES))  # some conversations have several replies
    path = save_items(turns, tmp_path / "turns.jsonl")
    again = load_items(path)
    assert [t.model_dump() for t in again] == [t.model_dump() for t in turns]
