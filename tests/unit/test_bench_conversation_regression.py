"""bench.bench_conversation_regression: Topical-Chat rows turned into chats, judged both ways and compared,
on made-up rows in the benchmark's format (history turns joined by " \\n ", the fact or "_nofact\\n")."""

from __future__ import annotations

import json

import pytest
from bench import bench_conversation_regression as bcr
from scipy.stats import spearmanr

from judgelab.data import Item
from judgelab.llm.types import Completion
from judgelab.prompts.render import AuxiliaryTexts, render_judge_prompt
from tests.doubles import ScriptedBackend, digit_logprobs, scripted_client


def row(k: int, source: str, context: str, output: str, group: str = "topical_chat-c00", **scores: float) -> Item:
    return Item.model_validate({
        "id": f"topical_chat-{k:03d}", "dataset": "topical_chat", "group_id": group, "system_id": f"sys{k}",
        "source": source, "context": context, "output": output,
        "scores": scores or {"coherence": 2.0, "engagingness": 1.5}, "scale": [0, 5],
        "extra": {"aspect_scales": {"coherence": [1, 3]}, "hpss_split": "valid"},
    })


FOUR_TURNS = "have you been to the zoo ? \n yes , last week . \n did you see the pandas ? \n no , they were asleep . \n\n"


def test_turns_alternate_and_the_response_is_the_last_assistant_reply():
    item = row(0, FOUR_TURNS, "pandas sleep 10 hours a day .\n", "that is a lot of sleep ! ")
    chat = bcr.to_conversation(item)
    assert [m.role for m in chat.messages] == ["system", "assistant", "user", "assistant", "user", "assistant"]
    assert [m.content for m in chat.messages[1:5]] == ["have you been to the zoo ?", "yes , last week .",
                                                       "did you see the pandas ?", "no , they were asleep ."]
    assert chat.messages[0].content == "Fact the next reply may draw on: pandas sleep 10 hours a day ."
    assert chat.messages[-1].content == item.output == chat.output  # word for word, trailing space included
    assert (chat.id, chat.group_id, chat.system_id, chat.scores, chat.extra) == (
        item.id, item.group_id, item.system_id, item.scores, item.extra)
    assert chat.source.splitlines()[-1] == "user: no , they were asleep ."  # derived: the history before the reply


def test_an_item_without_a_fact_gets_no_system_message_and_an_odd_history_opens_with_the_user():
    item = row(1, "hi , do you like jazz ? \n not really . \n why not ? \n\n", "_nofact\n", "it is too loud for me .")
    chat = bcr.to_conversation(item)
    assert [m.role for m in chat.messages] == ["user", "assistant", "user", "assistant"]
    assert "_nofact" not in chat.source and chat.context is None
    assert chat.output == "it is too loud for me ."


def test_one_turn_and_a_missing_history():
    chat = bcr.to_conversation(row(2, "what is your favourite film ? \n\n", "_nofact\n", "spirited away ."))
    assert [(m.role, m.content) for m in chat.messages] == [("user", "what is your favourite film ?"),
                                                            ("assistant", "spirited away .")]
    with pytest.raises(ValueError, match="topical_chat-003.*source"):
        bcr.to_conversation(Item(id="topical_chat-003", output="hello"))
    with pytest.raises(ValueError, match="topical_chat-004.*no turn"):
        bcr.to_conversation(row(4, " \n  \n ", "_nofact\n", "hello"))


def test_the_conversation_judge_sees_every_turn_and_the_fact():
    item = row(0, FOUR_TURNS, "pandas sleep 10 hours a day .\n", "that is a lot of sleep !")
    judge = bcr.make_judge("conversation", "coherence")
    assert (judge.family, judge.strategy.cot, judge.score) == ("conversation", "none", "logprob")
    prompt = render_judge_prompt(judge.strategy, "conversation", "coherence", bcr.to_conversation(item),
                                 AuxiliaryTexts(criteria="Coherence: on topic.")).messages[-1]["content"]
    conversation = prompt.split("[The Start of the Conversation]\n")[1].split("\n[The End of the Conversation]")[0]
    assert conversation.splitlines() == [
        "system: Fact the next reply may draw on: pandas sleep 10 hours a day .",
        "assistant: have you been to the zoo ?", "user: yes , last week .", "assistant: did you see the pandas ?",
        "user: no , they were asleep .", "assistant: that is a lot of sleep !"]


def test_the_turn_way_is_the_dialogue_judge_on_the_chat_with_the_fact_a_passage():
    item = row(0, FOUR_TURNS, "pandas sleep 10 hours a day .\n", "that is a lot of sleep !")
    chat = bcr.to_conversation(item, "passage")
    assert [m.role for m in chat.messages] == ["assistant", "user", "assistant", "user", "assistant"]
    assert [(p.id, p.text) for p in chat.contexts] == [("fact", "pandas sleep 10 hours a day .")]
    assert bcr.to_conversation(row(1, FOUR_TURNS, "_nofact\n", "ok")).contexts is None
    judge = bcr.make_judge("turn", "coherence")
    assert judge.family == "dialogue" and judge.digest() == bcr.make_judge("source", "coherence").digest()
    prompt = render_judge_prompt(judge.strategy, "dialogue", "coherence", chat,
                                 AuxiliaryTexts(criteria="Coherence: on topic.")).messages[-1]["content"]
    given = render_judge_prompt(judge.strategy, "dialogue", "coherence", item,
                                AuxiliaryTexts(criteria="Coherence: on topic.")).messages[-1]["content"]
    history = prompt.split("[Conversation History]\n")[1].split("\n\n[Corresponding Fact]")[0]
    assert history.splitlines() == ["assistant: have you been to the zoo ?", "user: yes , last week .",
                                     "assistant: did you see the pandas ?", "user: no , they were asleep ."]
    assert "[Corresponding Fact]\n[fact] pandas sleep 10 hours a day ." in prompt
    assert prompt.split("[The Start of the Response]")[1] == given.split("[The Start of the Response]")[1]
    assert prompt.split("[Conversation History]")[0] == given.split("[Conversation History]")[0]  # the same task
    with pytest.raises(ValueError, match="fact_as"):
        bcr.to_conversation(item, "note")


def _items() -> list[Item]:
    """Four dialogues of three responses, coherence 1-3 rising with k within each."""
    return [row(3 * g + k, FOUR_TURNS, "_nofact\n", f"reply {k} of {g}", group=f"topical_chat-c{g:02d}",
                coherence=1.0 + 0.9 * k + 0.05 * g) for g in range(4) for k in range(3)]


def _rating(request, i) -> Completion:
    # the dialogue family (source and turn ways) rates by the reply's number (as people do), the conversation way
    # against it
    prompt = request.messages[-1].content
    k = int(prompt.split("reply ")[-1][0])
    rating = str(k + 1) if "[The Start of the Response]" in prompt else str(3 - k)
    probabilities = {"1": 0.1, "2": 0.1, "3": 0.1, rating: 0.7}
    return Completion(text=f"{rating}]]", logprobs=digit_logprobs(probabilities, rating), prompt_tokens=5,
                      completion_tokens=2)


def test_every_way_is_judged_resumably_and_compared_paired(tmp_path):
    items = _items()
    backend = ScriptedBackend(_rating)
    with scripted_client(backend) as client:
        ways = bcr.judge_aspect(items, "coherence", client, tmp_path, "qwen2.5-coder-1.5b")
    assert backend.calls == 3 * len(items)
    with scripted_client(backend) as client:  # a rerun reads the records and calls nothing
        again = bcr.judge_aspect(items, "coherence", client, tmp_path, "qwen2.5-coder-1.5b")
    assert backend.calls == 3 * len(items) and again.keys() == ways.keys()
    files = sorted(p.name.split("-")[0] for p in (tmp_path / "qwen2.5-coder-1.5b").glob("*.jsonl"))
    assert files == ["messages", "source", "turn"]  # "messages": the conversation way's records, as before

    rows = {r["level"]: r for r in bcr.figures(items, "coherence", ways, resamples=200)}
    human = [item.scores["coherence"] for item in items]
    source = [ways["source"][item.id]["logprob"] for item in items]
    conversation = [ways["conversation"][item.id]["logprob"] for item in items]
    expected = spearmanr(human, conversation).statistic - spearmanr(human, source).statistic
    dataset = rows["dataset"]
    assert dataset["differences"]["conversation"]["value"] == pytest.approx(expected) and expected < -1
    assert dataset["differences"]["turn"]["value"] == pytest.approx(0.0)
    assert dataset["source"]["n"] == 12 and dataset["source"]["n_groups"] == 4
    assert bcr.verdict(dataset["differences"]["conversation"]) == "**worse**"
    assert rows["group"]["source"]["value"] == pytest.approx(1.0) == rows["group"]["turn"]["value"]
    assert rows["group"]["conversation"]["value"] == pytest.approx(-1.0)
    json.dumps(list(rows.values()))  # figures.json holds them
    assert "| coherence | dataset | 12 (4) |" in bcr.doc(list(rows.values()), 12, 4, "m", "cmd", "0")


def test_figures_use_only_items_judged_both_ways(tmp_path):
    items = _items()
    backend = ScriptedBackend(_rating)
    with scripted_client(backend) as client:
        ways = bcr.judge_aspect(items, "coherence", client, tmp_path, "qwen2.5-coder-1.5b")
    del ways["conversation"][items[0].id]
    [dataset, _] = bcr.figures(items, "coherence", ways, resamples=200)
    assert dataset["source"]["n"] == dataset["turn"]["n"] == dataset["conversation"]["n"] == 11
    assert bcr.figures(items, "coherence", {"source": ways["source"], "turn": ways["turn"], "conversation": {}},
                       resamples=200) == []


def test_verdict_reads_the_interval():
    assert bcr.verdict({"ci": [-0.1, 0.2]}) == "spans zero"
    assert bcr.verdict({"ci": [0.05, 0.2]}) == "better"
    assert bcr.verdict({"ci": [-0.2, -0.05]}) == "**worse**"
    assert bcr.verdict({"ci": None}) == "no interval"
