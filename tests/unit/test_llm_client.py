"""Client logic: cache keys, retries, dedupe, concurrency, capabilities, accounting.

A scripted backend stands in for the model here; the same paths run against the real
embedded model and a real llama.cpp server in tests/integration.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from judgelab.errors import BackendError, CapabilityError
from judgelab.llm import CompletionCache, Price, Request
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import ResponseFormat
from tests.doubles import ScriptedBackend, scripted_client


def test_cache_key_changes_with_every_part_of_the_call():
    base = Request.of("rate this", max_tokens=10)
    key = base.cache_key("b1", 0)
    assert key == Request.of("rate this", max_tokens=10).cache_key("b1", 0)
    assert key != base.cache_key("b2", 0)
    assert key != base.cache_key("b1", 1)
    for change in ({"max_tokens": 11}, {"temperature": 0.5}, {"seed": 1}, {"stop": ("x",)},
                   {"logprobs": True}, {"assistant_prefix": "R"}):
        assert key != base.model_copy(update=change).cache_key("b1", 0), change
    # n is not part of the key: asking for more samples reuses the ones already paid for
    assert key == base.model_copy(update={"n": 3}).cache_key("b1", 0)


def test_samples_are_cached_separately_and_reused(tmp_path):
    backend = ScriptedBackend()
    with scripted_client(backend, cache=CompletionCache(tmp_path / "c.sqlite")) as client:
        one = client.complete(Request.of("p", n=1))
        three = client.complete(Request.of("p", n=3))
    assert [c.text for c in three] == ["p#0", "p#1", "p#2"]
    assert one[0].text == three[0].text and three[0].cached and not three[1].cached
    assert backend.calls == 3


def test_rerun_is_served_from_cache(tmp_path):
    requests = [Request.of(f"item {i}") for i in range(20)]
    first = ScriptedBackend()
    with scripted_client(first, cache=tmp_path / "c.sqlite") as client:
        texts = [r[0].text for r in client.complete_all(requests)]
    second = ScriptedBackend()
    with scripted_client(second, cache=tmp_path / "c.sqlite") as client:
        again = client.complete_all(requests)
        stats = client.stats()
    assert second.calls == 0 and [r[0].text for r in again] == texts
    assert stats["cache_hits"] == 20 and stats["calls"] == 0


def test_transient_errors_are_retried_and_counted_once():
    backend = ScriptedBackend(failures=2)
    with scripted_client(backend) as client:
        results = client.complete_all([Request.of(f"x{i}") for i in range(5)])
        stats = client.stats()
    assert [r[0].text for r in results] == [f"x{i}#0" for i in range(5)]
    assert backend.calls == 5 and stats["calls"] == 5 and stats["retries"] == 10
    assert stats["prompt_tokens"] == 50


def test_retry_after_is_honoured():
    backend = ScriptedBackend(failures=1, retry_after=0.3)
    with scripted_client(backend) as client:
        started = time.perf_counter()
        client.complete(Request.of("x"))
    assert time.perf_counter() - started >= 0.3


def test_gives_up_with_a_clear_error():
    backend = ScriptedBackend(failures=100)
    with scripted_client(backend, max_attempts=3) as client, pytest.raises(BackendError, match="3 attempts.*resume"):
        client.complete(Request.of("x"))


def test_identical_concurrent_requests_are_paid_once():
    backend = ScriptedBackend(delay=0.05)
    with scripted_client(backend) as client:
        results = client.complete_all([Request.of("same")] * 6)
        stats = client.stats()
    assert backend.calls == 1 and {r[0].text for r in results} == {"same#0"}
    assert stats["calls"] == 1 and stats["cache_hits"] == 5


def test_concurrency_limit_is_respected():
    backend = ScriptedBackend(delay=0.02, max_concurrency=16)
    with scripted_client(backend, max_concurrency=3) as client:
        client.complete_all([Request.of(f"x{i}") for i in range(30)])
    assert backend.peak == 3


def test_results_keep_input_order_and_report_progress():
    backend = ScriptedBackend(delay=0.001)
    seen = []
    with scripted_client(backend) as client:
        results = client.complete_all([Request.of(f"x{i}") for i in range(10)], on_done=lambda i, c: seen.append(i))
    assert [r[0].text for r in results] == [f"x{i}#0" for i in range(10)]
    assert sorted(seen) == list(range(10))


def test_missing_capabilities_fail_instead_of_falling_back():
    backend = ScriptedBackend(capabilities=Capabilities(logprobs=False))
    with scripted_client(backend) as client:
        with pytest.raises(CapabilityError, match="no logprobs"):
            client.complete(Request.of("x", logprobs=True))
        with pytest.raises(CapabilityError, match="assistant prefix"):
            client.complete(Request.of("x", assistant_prefix="Rating: "))
        with pytest.raises(CapabilityError, match="regex"):
            client.complete(Request.of("x", response_format=ResponseFormat(type="regex", pattern="[0-9]")))
    assert backend.calls == 0


def test_cost_is_accounted_when_a_price_is_known():
    backend = ScriptedBackend()
    with scripted_client(backend, price=Price(input_per_mtok=1.0, output_per_mtok=2.0)) as client:
        client.complete_all([Request.of(f"x{i}") for i in range(4)])
        assert client.usage.cost_usd == pytest.approx(4 * (10 * 1.0 + 2 * 2.0) / 1e6)
    with scripted_client(ScriptedBackend()) as client:
        client.complete(Request.of("x"))
        assert client.usage.cost_usd is None  # unknown price: no made-up zero


def test_async_api_works_from_a_foreign_loop():
    backend = ScriptedBackend()
    with scripted_client(backend) as client:
        async def main():
            one = await client.acomplete(Request.of("a"))
            many = await client.acomplete_all([Request.of("b"), Request.of("c")])
            return one, many

        one, many = asyncio.run(main())
    assert one[0].text == "a#0" and [m[0].text for m in many] == ["b#0", "c#0"]


def test_rejected_requests_can_be_returned_in_place():
    from judgelab.errors import RequestError

    def reply(request, i):
        if request.messages[-1].content == "bad":
            raise RequestError("too long")
        return "fine"

    with scripted_client(ScriptedBackend(reply)) as client:
        with pytest.raises(RequestError):
            client.complete_all([Request.of("ok"), Request.of("bad")])
        results = client.complete_all([Request.of("ok"), Request.of("bad")], errors="return")
    assert results[0][0].text == "fine" and isinstance(results[1], RequestError)


def test_an_interrupt_as_the_last_call_ends_still_hands_its_reply_to_the_caller(tmp_path):
    """Ctrl-C waits for the attempts running, then cancels. The last attempt's reply reaches ``on_done`` a few
    loop steps after the attempt ends; a cancel sent in between dropped the paid judgment from the run (it was
    cached, so the rerun did not pay again, but the interrupted run showed one judgment fewer than calls paid).
    Here the loop is held just after the attempt ends, so the stop decides in exactly that gap."""
    import threading

    from judgelab.llm.client import Client

    ended = threading.Event()

    class HeldAfterEachAttempt(Client):
        async def _attempt(self, *args, **kwargs):
            try:
                return await super()._attempt(*args, **kwargs)
            finally:
                ended.set()
                time.sleep(0.2)  # the loop thread held: the stop below runs before the reply moves on

    delivered = []
    with HeldAfterEachAttempt(ScriptedBackend(), cache=tmp_path / "cache.sqlite") as client:
        future = asyncio.run_coroutine_threadsafe(
            client._complete_many([Request.of("only one")], lambda index, result: delivered.append(index)),
            client._loop)
        assert ended.wait(10)
        client._stop_after_attempts_running(future)
        assert len(client.cache) == 1 and delivered == [0]  # paid, cached and handed to the run
