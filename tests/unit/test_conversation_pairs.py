"""Two assistants' whole conversations compared (``messages_a``, ``messages_b``; docs/conversations.md): the
items' validation and derived texts, every file format, the prompt in both orders, and the pairwise judge
run on them with a scripted model."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import pandas as pd
import pytest

from judgelab.data import DataError, Item, load_items, save_items
from judgelab.data.conversation import MAX_MESSAGES
from judgelab.errors import ConfigError
from judgelab.judges.base import load_judge
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.llm import Request
from judgelab.metrics import meta_evaluate
from judgelab.prompts import render_checklist_prompt, render_pairwise_prompt, render_reference_prompt
from judgelab.prompts.render import has_unrendered_markup
from tests.doubles import ScriptedBackend, scripted_client

EXAMPLES = files("judgelab") / "examples"
SYSTEM = {"role": "system", "content": "You help people plan trips."}
OPENING = [SYSTEM, {"role": "user", "content": "I am Ana and I travel with a dog. Book me a hotel in Lyon."}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "search_hotels", "arguments": '{"city": "Lyon"}'}}
SIDE_A = OPENING + [{"role": "assistant", "content": None, "tool_calls": [CALL]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "Hotel Rhone (dogs welcome)"},
                    {"role": "assistant", "content": "Hotel Rhone takes dogs. Shall I book it, Ana?"},
                    {"role": "user", "content": "Yes."},
                    {"role": "assistant", "content": "Booked Hotel Rhone for you and your dog."}]
SIDE_B = OPENING + [{"role": "assistant", "content": "Hotel Soie is lovely. Book it?"},
                    {"role": "user", "content": "Do they take dogs?"},
                    {"role": "assistant", "content": "What is your name, please?"}]
ROW = {"id": "trip", "group_id": "trip", "system_a": "good", "system_b": "bad", "messages_a": SIDE_A,
       "messages_b": SIDE_B, "label": "a"}


def _refused(tmp_path: Path, **changes) -> DataError:
    """The error loading a JSON-lines file whose second item is ROW with ``changes`` (None: a field left out)."""
    row = {k: v for k, v in (ROW | changes).items() if v is not None}
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"id": "plain", "output_a": "x", "output_b": "y"}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError) as info:
        load_items(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    return info.value


# ---------------------------------------------------------------------------------------- the item


def test_each_sides_last_reply_is_its_output_and_the_shared_opening_its_source():
    item = Item.model_validate(ROW)
    assert item.kind == "pairwise"
    assert (item.output_a, item.output_b) == ("Booked Hotel Rhone for you and your dog.", "What is your name, please?")
    assert item.shared_opening == 2
    assert item.source == f"system: {SYSTEM['content']}\nuser: {OPENING[1]['content']}"
    assert item.grouped_by == "group_id" and item.messages is None


def test_the_opening_stops_before_either_sides_last_reply():
    same = OPENING + [{"role": "assistant", "content": "Done."}]
    item = Item(id="same", messages_a=same, messages_b=same)
    assert item.shared_opening == 2 and item.output_a == item.output_b == "Done."
    longer = Item(id="longer", messages_a=same, messages_b=same + [{"role": "user", "content": "And?"},
                                                                  {"role": "assistant", "content": "More."}])
    assert longer.shared_opening == 2 and longer.output_b == "More."
    apart = Item(id="apart", instruction="Book a hotel.", messages_a=SIDE_A[1:], messages_b=SIDE_B)
    assert apart.shared_opening == 0 and apart.source is None and apart.prompt == "Book a hotel."


def test_a_given_output_must_be_its_sides_last_reply_and_a_given_source_is_kept():
    kept = Item.model_validate(ROW | {"output_a": SIDE_A[-1]["content"], "source": "Book a dog-friendly hotel."})
    assert kept.output_a == SIDE_A[-1]["content"] and kept.source == "Book a dog-friendly hotel."


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"messages_b": None}, "messages_b", "needs both messages_a and messages_b"),
    ({"messages_a": None}, "messages_a", "needs both messages_a and messages_b"),
    ({"messages_a": OPENING}, "messages_a", "conversation a has no assistant reply"),
    ({"messages_b": []}, "messages_b", "conversation b has no assistant reply"),
    ({"messages_b": [SIDE_B[1], {"role": "tool", "tool_call_id": "call_9", "content": "x"}, SIDE_B[-1]]},
     "messages_b.1.tool_call_id", "'call_9' names no call"),
    ({"messages_a": [SIDE_A[1], {"role": "user", "content": None}, SIDE_A[-1]]}, "messages_a.1.content",
     "needs content"),
    ({"messages_a": [{"content": "hi"}, SIDE_A[-1]]}, "messages_a.0.role", "required field is missing"),
    ({"messages_b": [{"role": "robot", "content": "hi"}]}, "messages_b.0.role", "'system', 'user', 'assistant'"),
    ({"messages_a": [SIDE_A[2], SIDE_A[2], SIDE_A[-1]]}, "messages_a.1.tool_calls.0.id", "used twice"),
    ({"messages_b": "hello"}, "messages_b", "valid list"),
    ({"output_b": "Something else."}, "output_b", "last assistant reply of messages_b"),
    ({"messages": SIDE_A}, "messages", "not both"),
    ({"qid": "q1", "docid": "d1"}, "messages_a", "compares no conversations"),
    ({"system_b": "good"}, "system_b", "compared with itself"),
    ({"label": "left"}, "label", "not a verdict"),
])
def test_bad_pairs_of_conversations_are_refused_naming_file_line_and_field(tmp_path, changes, field, words):
    error = _refused(tmp_path, **changes)
    assert error.field == field and words in error.detail, str(error)


def test_a_side_of_more_messages_than_the_bound_is_refused_unread(tmp_path):
    error = _refused(tmp_path, messages_a=[{"role": "user", "content": "hi"}] * (MAX_MESSAGES + 1))
    assert error.field == "messages_a" and f"{MAX_MESSAGES + 1:,} messages: at most" in error.detail


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "tsv", "parquet"])
def test_every_format_round_trips_both_conversations(tmp_path, fmt):
    items = [Item.model_validate(ROW), Item(id="plain", instruction="i", output_a="x", output_b="y", label="b")]
    back = list(load_items(save_items(items, tmp_path / f"pairs.{fmt}")))
    assert back == items  # the derived outputs written back equal the replies they came from
    assert back[0].messages_a[2].tool_calls[0].function.name == "search_hotels"


def test_a_csv_and_a_dataframe_take_json_cells_and_name_a_bad_one(tmp_path):
    path = tmp_path / "pairs.csv"
    pd.DataFrame([{"id": "c1", "messages_a": json.dumps(SIDE_A), "messages_b": json.dumps(SIDE_B)}]).to_csv(
        path, index=False)
    assert load_items(path)[0].output_b == SIDE_B[-1]["content"]
    path.write_text('id,messages_a,messages_b\nc1,"[{""role"": ""user""}",[]\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_items(path)
    assert (info.value.line, info.value.field) == (2, "messages_a") and "not valid JSON" in info.value.detail
    frame = pd.DataFrame([{"id": "c1", "messages_a": SIDE_A, "messages_b": json.dumps(SIDE_B)},
                          {"id": "c2", "messages_a": SIDE_A, "messages_b": [{"content": "no role"}]}])
    with pytest.raises(DataError) as info:
        load_items(frame)
    assert (info.value.path, info.value.line, info.value.field) == ("<DataFrame>", 2, "messages_b.0.role")
    assert load_items(frame.iloc[:1]).to_pandas()["messages_b"][0][-1]["content"] == SIDE_B[-1]["content"]


# ---------------------------------------------------------------------------------------- the prompt


def _section(prompt: str, letter: str) -> str:
    return prompt.split(f"[The Start of Conversation ({letter})]\n", 1)[1].split(
        f"\n[The End of Conversation ({letter})]", 1)[0]


def test_the_prompt_shows_the_opening_once_and_each_side_with_its_roles_and_tool_calls():
    item = Item.model_validate(ROW)
    prompt = render_pairwise_prompt(item).prompt
    assert prompt.count(OPENING[1]["content"]) == 1 and "# The opening both conversations share:\n" in prompt
    assert _section(prompt, "a") == ('assistant: [calls search_hotels({"city": "Lyon"})]\n'
                                     "tool: Hotel Rhone (dogs welcome)\n"
                                     "assistant: Hotel Rhone takes dogs. Shall I book it, Ana?\n"
                                     "user: Yes.\n"
                                     "assistant: Booked Hotel Rhone for you and your dog.")
    assert _section(prompt, "b") == ("assistant: Hotel Soie is lovely. Book it?\n"
                                     "user: Do they take dogs?\n"
                                     "assistant: What is your name, please?")
    assert "goal completion" in prompt.lower() and "Knowledge retention" in prompt and "Coherence with the history" in prompt
    assert "# The user's goal:" not in prompt  # the derived source is the opening, not shown twice
    assert prompt.rstrip().endswith('either "Output (a)" or "Output (b)":')
    assert not has_unrendered_markup(prompt) and "\n\n\n" not in prompt


def test_the_swapped_order_exchanges_the_conversations_and_keeps_the_opening():
    item = Item.model_validate(ROW)
    original, swapped = render_pairwise_prompt(item), render_pairwise_prompt(item, swap=True)
    assert swapped.swapped and not original.swapped
    assert _section(swapped.prompt, "a") == _section(original.prompt, "b")
    assert _section(swapped.prompt, "b") == _section(original.prompt, "a")
    opening = original.prompt.split("# Output (a):")[0]
    assert swapped.prompt.split("# Output (a):")[0] == opening


def test_options_reach_the_conversations_prompt_and_plain_pairs_are_rendered_as_before():
    item = Item.model_validate(ROW | {"instruction": "Book Ana a hotel that takes her dog."})
    rendered = render_pairwise_prompt(item, cot="prefix", rules=False, checklist=["Does it take dogs?"], system=None)
    prompt = rendered.prompt
    assert [m["role"] for m in rendered.messages] == ["user"] and "rules of the evaluation" not in prompt
    assert "# The user's goal:\nBook Ana a hotel that takes her dog." in prompt
    assert "1. Does it take dogs?" in prompt and prompt.rstrip().endswith("refer to the two conversations respectively.):")
    apart = render_pairwise_prompt(Item(id="apart", messages_a=SIDE_A[1:], messages_b=SIDE_B)).prompt
    assert "# The opening both conversations share:" not in apart and _section(apart, "a").startswith("user: I am Ana")
    plain = render_pairwise_prompt(Item(id="p", instruction="Say hi.", output_a="hi", output_b="bye")).prompt
    assert "# Output (a):\nhi\n\n# Output (b):\nbye" in plain and "Conversation (a)" not in plain


def test_the_checklist_reads_the_shared_part_and_a_self_reference_is_refused():
    item = Item.model_validate(ROW)
    checklist = render_checklist_prompt("pairwise", "", item)[-1]["content"]
    assert "# The conversation's opening:\n" in checklist and OPENING[1]["content"] in checklist
    assert "Booked Hotel Rhone" not in checklist and "What is your name" not in checklist
    with pytest.raises(ConfigError, match="reference: self is not available for two assistants' conversations"):
        render_reference_prompt("pairwise", item)
    with pytest.raises(ConfigError, match="has neither"):
        render_checklist_prompt("pairwise", "", Item(id="apart", messages_a=SIDE_A[2:], messages_b=SIDE_B[2:]))


# ---------------------------------------------------------------------------------------- the judge


def _conversation_shown(request: Request, letter: str) -> str:
    return _section(request.messages[-1].content, letter)


def _knows_the_winner(items: list[Item]):
    """A scripted judge that picks the conversation holding the labelled winner's last reply, wherever it is
    shown; on a tie it says "Output (a)" in both orders (an order-dependent verdict, which becomes a tie)."""
    winners = {item.output_a if item.label == "a" else item.output_b for item in items if item.label in ("a", "b")}

    def reply(request: Request, _: int) -> str:
        first = _conversation_shown(request, "a")
        second = _conversation_shown(request, "b")
        for winner in winners:
            if first.endswith(winner) != second.endswith(winner):
                return "Output (a)" if first.endswith(winner) else "Output (b)"
        return "Output (a)"
    return reply


def test_the_example_pairs_are_judged_in_both_orders_and_read_back_as_verdicts():
    items = list(load_items(EXAMPLES / "conversation_pairs.jsonl"))
    assert sorted({item.label for item in items}) == ["a", "b", "tie"] and 4 <= len(items) <= 6
    judge = load_judge(EXAMPLES / "conversation_pairwise.yaml")
    backend = ScriptedBackend(_knows_the_winner(items))
    with scripted_client(backend) as client:
        judgments = judge.run(items, client)
    assert len(backend.requests) == 2 * len(items)
    assert all("[The Start of Conversation (a)]" in r.messages[-1].content for r in backend.requests)
    assert [j.label for j in judgments] == [item.label for item in items]
    assert [j.extra["consistent"] for j in judgments] == [item.label != "tie" for item in items]
    report = meta_evaluate(items, judgments, n_resamples=0)["pairwise"]
    assert report["accuracy"].value == 1.0
    assert report["positional_consistency"].value == pytest.approx(4 / 5)


def test_a_position_biased_judge_gets_ties_and_a_reference_stage_fails_each_pair_alone():
    items = [Item.model_validate(ROW), Item(id="plain", instruction="Say hi.", output_a="hi", output_b="bye")]
    backend = ScriptedBackend(lambda request, _: "Output (a)")
    with scripted_client(backend) as client:
        assert [j.label for j in PairwiseJudge().run(items, client)] == ["tie", "tie"]
        judgments = PairwiseJudge(reference="self").run(items, client)
    assert [j.status for j in judgments] == ["error", "ok"]
    assert "reference: self is not available" in judgments[0].reason


def test_the_checklist_stage_feeds_the_conversations_prompt():
    def staged(request: Request, _: int) -> str:
        if "propose at most three" in request.messages[-1].content:
            return "1. Does the hotel take dogs?\n2. Was it booked?"
        return "Output (a)" if "Booked" in _conversation_shown(request, "a") else "Output (b)"

    backend = ScriptedBackend(staged)
    with scripted_client(backend) as client:
        [judgment] = PairwiseJudge(metrics=True).run([Item.model_validate(ROW)], client)
    assert judgment.label == "a" and judgment.extra["checklist"] == ["Does the hotel take dogs?", "Was it booked?"]
    judged = [r.messages[-1].content for r in backend.requests if "[The Start of Conversation" in r.messages[-1].content]
    assert len(judged) == 2 and all(re.search(r"1\. Does the hotel take dogs\?\n2\. Was it booked\?", p) for p in judged)


# ---------------------------------------------------------------------------------------- the page


def test_the_page_shows_a_shipped_pair_and_the_errors_the_code_gives(tmp_path):
    page = (Path(__file__).resolve().parents[2] / "docs" / "conversations.md").read_text(encoding="utf-8")
    section = page.split("## Two assistants' conversations", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```json\n", 1)[1].split("```", 1)[0].strip()
    assert shown in (EXAMPLES / "conversation_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    documented = section.split("```\nerror: ", 1)[1].split("```", 1)[0]
    rows = [json.loads(line) for line in (EXAMPLES / "conversation_pairs.jsonl").read_text().splitlines()[:2]]
    broken = [rows[1] | {"messages_b": None}, rows[1] | {"messages_a": rows[1]["messages_a"][:2]},
              rows[1] | {"output_b": "Open every day."}]
    broken.append(json.loads(json.dumps(rows[1])))
    broken[-1]["messages_b"].insert(2, {"role": "tool", "tool_call_id": "call_7", "content": "Closed on Mondays."})
    for row in broken:
        path = tmp_path / "pairs.jsonl"
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n"
                                for r in (rows[0], row)))
        with pytest.raises(DataError) as info:
            load_items(path)
        assert str(info.value).replace(str(path), "pairs.jsonl").removeprefix("error: ") in documented, str(info.value)


def test_an_item_whose_outputs_were_changed_after_it_was_read_is_refused_not_judged_on_other_texts():
    item = Item.model_validate(ROW)
    swapped = item.model_copy(update={"output_a": item.output_b, "output_b": item.output_a})  # not via with_outputs
    with pytest.raises(ConfigError, match="output_a is not the last reply of messages_a"):
        render_pairwise_prompt(swapped)
    padded = item.model_copy(update={"output_b": item.output_b + " Indeed."})
    backend = ScriptedBackend(lambda request, _: "Output (a)")
    with scripted_client(backend) as client:
        [judgment] = PairwiseJudge().run([padded], client)
    assert judgment.status == "error" and "output_b is not the last reply of messages_b" in judgment.reason
    assert backend.requests == []


def test_a_change_in_the_middle_of_one_side_changes_the_items_digest():
    from judgelab.data.digest import content_digest

    edited = [dict(message) for message in SIDE_A]
    edited[3] = {**edited[3], "content": "Hotel Rhone (no dogs)"}  # the tool's result, not a last reply
    before, after = Item.model_validate(ROW), Item.model_validate({**ROW, "messages_a": edited})
    assert before.output_a == after.output_a and before.shared_opening == after.shared_opening
    assert content_digest(before) != content_digest(after)
