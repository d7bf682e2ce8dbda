"""The embedded backend end to end with the real SmolLM2-135M model."""

from __future__ import annotations

import json
import math

import pytest

from judgelab.errors import ConfigError
from judgelab.llm import Client, Request, ResponseFormat
from judgelab.llm.resolve import make_backend

PROMPT = "Rate how fluent this sentence is, from 1 to 5: 'The cat sat on the mat.'"


@pytest.fixture(scope="module")
def client(embedded_backend):
    client = Client(embedded_backend)
    yield client
    # the session-scoped backend stays open for other modules: only stop the loop
    client._loop.call_soon_threadsafe(client._loop.stop)


def test_greedy_generation_is_deterministic(client):
    request = Request.of(PROMPT, max_tokens=24)
    first, second = client.complete(request)[0], client.complete(request)[0]
    assert first.text.strip() and first.text == second.text
    assert first.prompt_tokens > 20 and 0 < first.completion_tokens <= 24


def test_seeds_reproduce_samples_and_samples_differ(client):
    request = Request.of("Write one word.", temperature=1.2, max_tokens=8, seed=7, n=4)
    samples = [c.text for c in client.complete(request)]
    assert samples == [c.text for c in client.complete(request)]
    assert len(set(samples)) > 1


def test_logprobs_are_a_distribution(client):
    completion = client.complete(Request.of(PROMPT, max_tokens=6, logprobs=True, top_logprobs=10))[0]
    assert completion.logprobs and len(completion.logprobs) == completion.completion_tokens
    for entry in completion.logprobs:
        mass = sum(math.exp(alt.logprob) for alt in entry.top)
        assert 0 < mass <= 1 + 1e-6
        assert entry.top[0].logprob >= entry.top[-1].logprob
        # greedy decoding picks the most likely token
        assert entry.logprob == pytest.approx(entry.top[0].logprob, abs=1e-6)


def test_assistant_prefix_puts_the_rating_at_a_known_position(client):
    instruction = " Reply with the rating in double brackets, for example: Rating: [[4]]"
    request = Request.of(PROMPT + instruction, assistant_prefix="Rating: [[",
                         max_tokens=1, logprobs=True, top_logprobs=20)
    completion = client.complete(request)[0]
    digits = {str(d) for d in range(1, 6)}
    mass = sum(math.exp(a.logprob) for a in completion.logprobs[0].top if a.token.strip() in digits)
    assert mass > 0.5  # the model puts most of its mass on ratings right after the prefix


def test_json_schema_constrains_the_output(client):
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    completion = client.complete(Request.of(PROMPT + " Reply in JSON.", max_tokens=20,
                                            response_format=ResponseFormat(type="json_schema", json_schema=schema)))[0]
    assert isinstance(json.loads(completion.text)["score"], int)


def test_stop_strings_cut_the_text(client):
    completion = client.complete(Request.of("Count from 1 to 10 separated by commas.", max_tokens=40, stop=("5",)))[0]
    assert "5" not in completion.text and completion.finish_reason == "stop"


def test_prefix_reuse_skips_the_shared_prompt(client, embedded_backend):
    shared = "You are a careful judge. " * 20
    client.complete(Request.of(shared + "Item A.", max_tokens=2))
    second = client.complete(Request.of(shared + "Item B.", max_tokens=2))[0]
    assert second.reused_prefix_tokens > 0.8 * second.prompt_tokens


def test_unknown_model_strings_list_the_valid_ones():
    with pytest.raises(ConfigError, match="qwen2.5-coder-1.5b.*smollm2-135m.*openai:"):
        make_backend("gpt-nonsense")
    with pytest.raises(ConfigError, match="not found"):
        make_backend("/no/such/model.gguf")


def test_closing_stops_a_generation_at_the_next_token(test_model_path):
    """Ctrl-C closes the backend: a generation in flight stops within a token or so, not at max_tokens
    (issue 41: one SIGINT took a whole 512-token generation, 16 s quiet and 8 minutes on a loaded machine)."""
    import asyncio
    import time

    from judgelab.errors import BackendError
    from judgelab.llm.backends.embedded import EmbeddedBackend

    # one thread: two at a barrier can stall for seconds on a loaded machine (a matter for the thread count)
    backend = EmbeddedBackend(str(test_model_path), n_ctx=2048, n_threads=1)
    # a grammar that cannot end before 600 numbers: a generation of well over a thousand tokens
    long = Request(messages=({"role": "user", "content": "List numbers."},), max_tokens=1900,
                   response_format=ResponseFormat(type="json_schema", json_schema={
                       "type": "array", "items": {"type": "integer"}, "minItems": 600}))

    async def run() -> tuple[float, BaseException | None]:
        task = asyncio.ensure_future(backend.agenerate(long, 0))
        await asyncio.sleep(2.0)  # well into the generation
        assert not task.done(), "the generation ended before the test could stop it"
        started = time.monotonic()
        await backend.aclose()
        closed_in = time.monotonic() - started
        try:
            await task
        except BaseException as exc:  # noqa: BLE001 - what the generation raised is the point
            return closed_in, exc
        return closed_in, None

    closed_in, raised = asyncio.run(run())
    assert isinstance(raised, BackendError) and "stopped mid-generation" in str(raised)
    assert closed_in < 10, closed_in
