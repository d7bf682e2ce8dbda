"""The conversation family: a judge of the assistant over a whole conversation (prompts/conversation)."""

from __future__ import annotations

from pathlib import Path

from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.prompts import AuxiliaryTexts, render_judge_prompt, render_reference_prompt
from judgelab.strategy import Strategy

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples"


def test_every_turn_is_shown_between_the_conversation_marks_and_the_task_says_so():
    order = next(item for item in load_items(EXAMPLES / "conversations.jsonl") if item.id == "order-v1")
    prompt = render_judge_prompt(Strategy.mt_bench(), "conversation", "helpfulness", order,
                                 AuxiliaryTexts(criteria="Helpfulness over the conversation.")).prompt
    shown = prompt[prompt.index("[The Start of the Conversation]"):prompt.index("[The End of the Conversation]")]
    assert "user: Can I order a birthday cake for tomorrow morning?" in shown
    assert 'assistant: [calls search_notes({"query": "cake orders"})]' in shown  # the tool call, as history shows it
    assert shown.rstrip().endswith("by phone or in the shop.")  # the last reply closes the conversation
    assert "evaluate the assistant in the conversation" in prompt and "not only its last reply" in prompt


def test_the_reference_writer_sees_the_history_but_not_the_last_reply():
    order = next(item for item in load_items(EXAMPLES / "conversations.jsonl") if item.id == "order-v1")
    text = render_reference_prompt("conversation", order)[-1]["content"]
    assert "Can I order a birthday cake" in text and order.output not in text


def test_the_shipped_config_is_a_conversation_judge():
    judge = load_judge(EXAMPLES / "conversation.yaml")
    assert judge.family == "conversation" and judge.aspect == "helpfulness"
