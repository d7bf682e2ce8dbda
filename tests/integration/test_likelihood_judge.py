"""The likelihood judge with the real embedded model: the scored tokens are the output's, at the
right positions, a fluent sentence is more probable than its scramble, and reruns come from the cache."""

from __future__ import annotations

import pytest

from judgelab.data.item import Item
from judgelab.errors import CapabilityError
from judgelab.judges.likelihood import LikelihoodJudge
from judgelab.llm import Client, Request
from judgelab.llm.resolve import make_backend

PROMPT = "Write one sentence about cats."


def test_scored_tokens_are_the_reply_and_line_up_with_generation(embedded_backend):
    client = Client(embedded_backend)
    written = client.complete(Request.of(PROMPT, max_tokens=8, logprobs=True))[0]
    scored = client.complete(Request.of(PROMPT, assistant_prefix=written.text, score_prefix=True, max_tokens=1))[0]
    assert scored.text == "" and scored.completion_tokens == 0
    assert "".join(t.token for t in scored.prefix_logprobs) == written.text
    # The first reply token is predicted from the same prompt either way: same logprob up to
    # llama.cpp's batch-size-dependent rounding (later tokens drift a little more, see docs/likelihood.md).
    assert scored.prefix_logprobs[0].logprob == pytest.approx(written.logprobs[0].logprob, abs=0.1)
    assert all(t.logprob <= 0 for t in scored.prefix_logprobs)


def test_fluent_output_outscores_its_scramble_and_rerun_is_cached(embedded_backend, tmp_path):
    fluent = "Cats are small furry animals that many people keep as pets."
    scrambled = "pets keep Cats animals furry many small people that are as."
    items = [Item(id=name, source="cats", output=text, dataset="demo", group_id="g")
             for name, text in [("fluent", fluent), ("scrambled", scrambled)]]
    judge = LikelihoodJudge(aspect="fluency", family="generic", task="Write one sentence about the topic below.")
    client = Client(embedded_backend, cache=tmp_path / "cache.sqlite")  # not closed: the backend is shared
    first = judge.run(items, client)
    again = judge.run(items, client)
    stats = client.stats()
    by_id = {j.item_id: j for j in first}
    assert all(j.status == "ok" for j in first)
    assert by_id["fluent"].score > by_id["scrambled"].score
    assert by_id["fluent"].extra["tokens"] >= 10 and by_id["fluent"].score == by_id["fluent"].extra["logprob_mean"]
    assert [j.score for j in again] == [j.score for j in first]
    assert stats["calls"] == 2 and stats["cache_hits"] == 2


def test_query_likelihood_prefers_the_passage_that_answers_the_query(embedded_backend, tmp_path):
    """likelihood_of: input on relevance pairs (UPR): the query is the scored reply, and a passage
    about the query's topic makes it more probable than an unrelated passage does."""
    query = "what do cats eat"
    passages = {"answers": "Cats are carnivores: what cats eat is mostly meat, such as fish, chicken and mice.",
                "unrelated": "The city council approved a new budget for road repairs on Tuesday evening."}
    pairs = [Item(id=name, qid="q1", docid=name, query=query, passage=text) for name, text in passages.items()]
    client = Client(embedded_backend, cache=tmp_path / "cache.sqlite")
    judgments = {j.item_id: j for j in LikelihoodJudge(aspect="relevance", likelihood_of="input").run(pairs, client)}
    assert all(j.status == "ok" for j in judgments.values())
    assert judgments["answers"].extra["tokens"] == judgments["unrelated"].extra["tokens"]  # the same reply: the query
    assert judgments["answers"].score > judgments["unrelated"].score


def test_a_server_backend_is_refused_before_any_call(llama_server):
    item = Item(id="a", source="cats", output="Cats purr.", dataset="demo")
    with Client(make_backend(llama_server.base_url, model_name="smollm")) as client:
        with pytest.raises(CapabilityError, match="cannot score a given reply"):
            LikelihoodJudge(aspect="fluency").run([item], client)
        assert client.stats()["calls"] == 0
