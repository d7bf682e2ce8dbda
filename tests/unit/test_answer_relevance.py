"""The answer_relevance aspect (examples/answer_relevance.yaml): whether the answer addresses the question."""

from __future__ import annotations

from pathlib import Path

from judgelab.annotate.task import ANCHORS, DEFINITIONS
from judgelab.data import load_items
from judgelab.judges import load_judge
from judgelab.llm.types import Completion
from tests.doubles import ScriptedBackend, digit_logprobs, scripted_client

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples"


def test_the_prompt_asks_whether_the_answer_addresses_the_question_not_whether_it_is_true():
    items = load_items(EXAMPLES / "rag.jsonl")[:2]
    reply = Completion(text="4]]", logprobs=digit_logprobs({"4": 0.5, "5": 0.5}, "4"), prompt_tokens=5,
                       completion_tokens=2)
    backend = ScriptedBackend(lambda request, i: reply)
    with scripted_client(backend) as client:
        judgments = load_judge(EXAMPLES / "answer_relevance.yaml").run(items, client)
    assert [j.score for j in judgments] == [4.5, 4.5] and [j.aspect for j in judgments] == ["answer_relevance"] * 2
    prompt = backend.requests[0].messages[-1].content
    assert "on its answer_relevance" in prompt
    assert "how directly the answer addresses the question asked" in prompt
    assert "Do not judge whether the answer is correct or supported" in prompt
    assert "[Question]\nWhen is the town library open?" in prompt and items[0].output in prompt


def test_the_conversations_example_is_judged_on_its_last_reply():
    items = load_items(EXAMPLES / "conversations.jsonl")
    backend = ScriptedBackend(lambda request, i: Completion(text="3]]", logprobs=digit_logprobs({"3": 1.0}, "3")))
    with scripted_client(backend) as client:
        judgments = load_judge(EXAMPLES / "answer_relevance.yaml").run(items, client)
    assert all(j.ok for j in judgments) and len(backend.requests) == len(items)


def test_annotators_see_a_definition_of_the_aspect():
    assert "addresses the question" in DEFINITIONS["answer_relevance"] and len(ANCHORS["answer_relevance"]) == 2
