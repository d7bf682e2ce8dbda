"""The audit's counterfactual probes on two assistants' conversations (``messages_a``, ``messages_b``;
docs/audit.md, docs/conversations.md): the swap exchanges the conversations, pad and reformat rewrite the
last reply inside its conversation (``judgelab.data.item.with_outputs``), every probed copy is a valid item,
and ``judgelab audit --probe`` runs end to end on the shipped example with a scripted judge. Plain pairs are
probed as before."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from judgelab.audit.probes import PAD_TEXT, load_probe_items, padded, reformatted, run_probes, swapped
from judgelab.data import DataError, Item, load_items
from judgelab.data.item import with_outputs
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.llm import Request
from judgelab.prompts import render_pairwise_prompt
from tests.doubles import ScriptedBackend, scripted_client
from tests.e2e.cli import run_main_captured
from tests.unit.test_conversation_pairs import ROW, SIDE_B

EXAMPLE = files("judgelab") / "examples" / "conversation_pairs.jsonl"
PAD_MARK = PAD_TEXT.strip()


def _shown(prompt: str, letter: str) -> str:
    """The conversation the prompt shows as ``letter``, between its start and end markers."""
    return prompt.split(f"[The Start of Conversation ({letter})]\n", 1)[1].split(
        f"\n[The End of Conversation ({letter})]", 1)[0]


def _valid(item: Item) -> Item:
    """The item read back as from a file: raises if its outputs are not its conversations' last replies."""
    again = Item.model_validate(item.model_dump())
    assert again == item
    render_pairwise_prompt(item)  # the judge's own check (an output that is not the reply is refused there)
    return again


# ---------------------------------------------------------------------------------------- the probed items


def test_the_swap_exchanges_the_conversations_with_their_outputs_systems_and_label():
    item = Item.model_validate(ROW)
    turned = _valid(swapped(item))
    assert (turned.messages_a, turned.messages_b) == (item.messages_b, item.messages_a)
    assert (turned.output_a, turned.output_b) == (item.output_b, item.output_a)
    assert (turned.system_a, turned.system_b, turned.label) == ("bad", "good", "b")
    assert turned.shared_opening == item.shared_opening and turned.source == item.source
    original, shown = render_pairwise_prompt(item).prompt, render_pairwise_prompt(turned).prompt
    assert (_shown(shown, "a"), _shown(shown, "b")) == (_shown(original, "b"), _shown(original, "a"))
    assert swapped(turned) == item


@pytest.mark.parametrize("rewrite", [padded, reformatted])
@pytest.mark.parametrize("side", ["a", "b"])
def test_pad_and_reformat_rewrite_the_last_reply_inside_its_conversation(rewrite, side):
    item = Item.model_validate(ROW)
    field, other = f"messages_{side}", f"messages_{'b' if side == 'a' else 'a'}"
    text = rewrite(getattr(item, f"output_{side}"))
    probed = _valid(with_outputs(item, **{f"output_{side}": text}))
    before, after = getattr(item, field), getattr(probed, field)
    assert getattr(probed, f"output_{side}") == text and after[-1].content == text
    assert after[:-1] == before[:-1] and getattr(probed, other) == getattr(item, other)
    assert before[-1].content != text  # the original item is untouched
    assert text in _shown(render_pairwise_prompt(probed).prompt, side)  # the judge sees the change


def test_the_rewrite_finds_the_last_reply_wherever_it_is_and_refuses_an_empty_one():
    trailing = SIDE_B + [{"role": "user", "content": "Hello?"}]  # the user spoke last: the reply is before
    item = Item.model_validate(ROW | {"messages_b": trailing})
    probed = _valid(with_outputs(item, output_b=padded(item.output_b)))
    assert probed.messages_b[-2].content == padded(SIDE_B[-1]["content"]) and probed.messages_b[-1].content == "Hello?"
    with pytest.raises(ValueError, match="output_a is the last reply of messages_a, which needs text"):
        with_outputs(item, output_a="")


def test_plain_pairs_are_probed_as_before():
    plain = Item(id="p", instruction="Say hi.", output_a="hi", output_b="bye", label="a")
    assert with_outputs(plain, output_b="bye!") == plain.model_copy(update={"output_b": "bye!"})
    assert with_outputs(plain) == plain
    assert swapped(plain) == plain.model_copy(update={"output_a": "bye", "output_b": "hi", "label": "b"})
    named = Item(id="n", instruction="Say hi.", system_a="x", system_b="y", output_a="hi", output_b="bye")
    assert (swapped(named).system_a, swapped(named).system_b) == ("y", "x")  # the names follow their texts


# ---------------------------------------------------------------------------------------- the probes run


def _judge(items: list[Item]):
    """A scripted judge: the conversation ending in the padding if one side does, else the one ending in the
    labelled winner's reply, else the first shown (so the tie's verdict follows the order)."""
    winners = [item.output_a if item.label == "a" else item.output_b for item in items if item.label in ("a", "b")]

    def reply(request: Request, _: int) -> str:
        prompt = request.messages[-1].content
        first, second = _shown(prompt, "a"), _shown(prompt, "b")
        if (PAD_MARK in first) != (PAD_MARK in second):
            return "Output (a)" if PAD_MARK in first else "Output (b)"
        for winner in winners:
            if first.endswith(winner) != second.endswith(winner):
                return "Output (a)" if first.endswith(winner) else "Output (b)"
        return "Output (a)"
    return reply


def _check_results(results: dict, n: int) -> None:
    """What the scripted judge must give on the example: every copy judged (none failed); the swap flips only
    the tie (the first shown wins it); padding the loser wins every pair over; reformatting moves nothing."""
    for name in ("swap", "pad", "reformat"):
        assert results[name]["failed"] == 0 and results[name]["flip_rate"]["n"] == n, name
    assert results["swap"]["flip_rate"]["value"] == pytest.approx(1 / n)
    assert results["pad"]["flip_rate"]["value"] == 1.0 and results["pad"]["toward_perturbed"]["value"] == 1.0
    assert results["reformat"]["flip_rate"]["value"] == 0.0


def test_every_probe_judges_the_example_pairs_with_no_failures():
    items = load_probe_items(str(EXAMPLE))
    assert all(item.messages_a and item.messages_b for item in items) and sorted({i.label for i in items}) == [
        "a", "b", "tie"]
    backend = ScriptedBackend(_judge(items))
    with scripted_client(backend) as client:
        results = run_probes(items, PairwiseJudge(swap=False, cot="none"), client, ["swap", "pad", "reformat"])
    _check_results({name: result.to_dict() for name, result in results.items()}, len(items))
    judged = [r.messages[-1].content for r in backend.requests]
    assert all("[The Start of Conversation (a)]" in prompt for prompt in judged)
    assert any("## Answer\n\n- " in _shown(p, "a") + _shown(p, "b") for p in judged)  # the reformatted reply, shown


def test_audit_probe_runs_end_to_end_on_the_example(tmp_path, capsys, monkeypatch):
    items = list(load_items(str(EXAMPLE)))
    monkeypatch.setattr("judgelab.llm.resolve.client_from_options",
                        lambda **_: scripted_client(ScriptedBackend(_judge(items))))
    config = tmp_path / "probe_judge.yaml"
    config.write_text("kind: pairwise\nswap: false\ncot: none\n", encoding="utf-8")
    code, out, err = run_main_captured(capsys, "audit", "-d", EXAMPLE, "--probe", "swap,pad,reformat",
                                       "--config", config, "--json")
    assert code == 0, err
    _check_results(json.loads(out)["probes"], len(items))


def test_a_row_with_one_conversation_is_refused_with_its_line(tmp_path):
    rows = EXAMPLE.read_text(encoding="utf-8").splitlines()
    one = {key: value for key, value in json.loads(rows[1]).items() if key != "messages_b"}
    path = tmp_path / "pairs.jsonl"
    path.write_text(rows[0] + "\n" + json.dumps(one) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="messages_a and messages_b\\); this item has one") as info:
        load_probe_items(path)
    assert info.value.line == 2
    assert [item.id for item in load_probe_items(EXAMPLE, limit=2)] == [json.loads(r)["id"] for r in rows[:2]]


def test_the_verbosity_rows_read_each_sides_last_reply_of_a_conversation_pair(tmp_path):
    from judgelab.audit.inputs import read_comparisons

    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    pair = read_comparisons(path)["trip"]
    item = Item.model_validate(ROW)
    assert (pair.output_a, pair.output_b) == (item.output_a, item.output_b) and pair.output_b == SIDE_B[-1]["content"]
