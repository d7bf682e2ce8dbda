"""The one client every judge and optimiser calls.

Per sample, in order: cache lookup -> concurrency limit -> rate limits -> retries with
back-off (honouring Retry-After), all within the call's deadline -> backend -> cache write -> accounting.

Ctrl-C (or SIGTERM, which the CLI turns into the same KeyboardInterrupt) lets the calls the backend
is already working on finish, up to ``interrupt_grace`` seconds, so their replies reach the cache:
a call already paid for is not paid again on the rerun. ``halt`` stops a run the same way for what it
cannot go on without (a full disk under the cache or the run folder): the attempts running finish, no
new one starts, and the calls left raise the error.

The client owns a private event loop on a background thread. Backends (the openai async
client, the embedded model's worker thread) are bound to that loop, so the same client works
from plain scripts, from notebooks that already run a loop, and from async code alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from judgelab.errors import BackendError, CapabilityError, JudgelabError, RequestError, StorageError, term
from judgelab.limits import max_input_bytes, over_limit
from judgelab.llm.backends.base import Backend, MalformedReplyError, TransientBackendError
from judgelab.llm.cache import CompletionCache, gc_paused
from judgelab.llm.pricing import Price, price_for
from judgelab.llm.types import Completion, Request, Usage

T = TypeVar("T")
#: ``on_done(index, completions)``; with ``errors="return"`` a rejected request gets its RequestError instead.
OnDone = Callable[[int, "list[Completion] | RequestError"], None]

#: Seconds Ctrl-C / SIGTERM waits for calls already sent before it stops them (a second Ctrl-C stops at once).
#: Under the 10 s that ``docker stop`` and most supervisors give between SIGTERM and SIGKILL.
INTERRUPT_GRACE = 5.0
SETTLE_STEPS = 10  # loop steps a finished call's reply is given to reach on_done (a few gathers deep)
#: The default deadline of one call across all its attempts, in timeouts of one attempt (3 x 120 s = 360 s).
DEADLINE_IN_TIMEOUTS = 3
#: Calls in a row that miss their deadline (none answered in between) before the server is taken as not
#: answering at all: the run stops instead of recording one late item after another.
DEADLINE_STREAK = 3


class Client:
    def __init__(
        self,
        backend: Backend,
        cache: CompletionCache | str | Path | None = None,
        max_concurrency: int | None = None,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_attempts: int = 6,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 120.0,
        price: Price | None = None,
        call_deadline: float | None = None,
        interrupt_grace: float = INTERRUPT_GRACE,
    ):
        """``call_deadline``: the most one call may take in seconds, from the start of its first attempt
        to its reply, back-off waits and retries included (default: 3 x the backend's ``timeout`` of one
        attempt for a server, none for a model in this process; ``math.inf``: none). Past it the call
        fails alone (``RequestError``: the judge records that item's error and goes on), unless
        ``DEADLINE_STREAK`` calls in a row missed theirs: then the server is not answering and the run
        stops (``BackendError``). ``interrupt_grace``: see the module docstring."""
        if call_deadline is not None and not call_deadline > 0:
            raise ValueError(f"call_deadline must be a number of seconds above 0, not {call_deadline}")
        self.backend = backend
        self.cache = CompletionCache(cache) if isinstance(cache, (str, Path)) else cache
        self.max_concurrency = max(1, min(max_concurrency or backend.max_concurrency, backend.max_concurrency))
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.price = price if price is not None else price_for(backend)
        self.call_deadline = call_deadline if call_deadline is not None else _default_deadline(backend)
        self.interrupt_grace = interrupt_grace
        self.usage = Usage(cost_usd=0.0 if self.price else None)
        self.retries = 0
        self._started = time.perf_counter()
        self._rpm = requests_per_minute
        self._tpm = tokens_per_minute
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._attempts_running = 0  # attempts the backend is working on (changed on the loop's thread only)
        # Ctrl-C arrives on another thread: "is it stopping? then count this attempt as running" must be one
        # step, or an attempt that checked just before the stop starts unseen, and is cancelled after it paid.
        self._start_lock = threading.Lock()
        self._missed_deadlines = 0  # calls in a row that missed their deadline
        self._stopping = threading.Event()  # set by Ctrl-C: no new attempt starts
        self._halted: JudgelabError | None = None  # set by ``halt``: the run stops once the attempts running end
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="judgelab-llm", daemon=True)
        self._thread.start()
        self._run(self._init_on_loop())
        self._closed = False

    async def _init_on_loop(self) -> None:
        # Created on the client's loop: asyncio primitives belong to the loop that made them.
        self._semaphore = asyncio.Semaphore(self.max_concurrency)
        self._request_limiter = AsyncLimiter(self._rpm, 60) if self._rpm else None
        self._token_limiter = AsyncLimiter(self._tpm, 60) if self._tpm else None

    # ---- public API -------------------------------------------------------------------------
    def complete(self, request: Request) -> list[Completion]:
        """All ``request.n`` samples of one request."""
        return self._run(self._complete_one(request))

    def complete_all(self, requests: Sequence[Request], on_done: OnDone | None = None,
                     errors: str = "raise") -> list[list[Completion]]:
        """Many requests concurrently; results in input order. ``on_done(i, completions)`` as each finishes.

        ``errors="return"``: a request the backend rejects (``RequestError``: too long, invalid, or
        answered with a malformed reply until the last attempt) takes that error's place in the
        results instead of stopping the batch. A backend that is unreachable still stops everything
        (``BackendError``).
        """
        return self._run(self._complete_many(list(requests), on_done, errors))

    async def acomplete(self, request: Request) -> list[Completion]:
        return await self._await_on_loop(self._complete_one(request))

    async def acomplete_all(self, requests: Sequence[Request], on_done: OnDone | None = None,
                            errors: str = "raise") -> list[list[Completion]]:
        return await self._await_on_loop(self._complete_many(list(requests), on_done, errors))

    def halt(self, error: JudgelabError) -> None:
        """Stop paying for calls, keeping those already paid for: no new attempt starts, the attempts
        running finish (their replies reach the cache and the caller), then every call waiting raises
        ``error``. For what the run cannot go on without, such as a disk to write its results on (a
        call cancelled in flight was paid for all the same, and a rerun would pay it again)."""
        self._halted = self._halted or error

    def check(self, request: Request) -> None:
        """Raise CapabilityError if the backend cannot serve ``request`` as asked (no silent fallback)."""
        caps = self.backend.capabilities
        name = self.backend.identity
        if request.logprobs and not caps.logprobs:
            raise CapabilityError(f"{name} returns no logprobs; use a parsed score instead")
        if request.top_logprobs > caps.max_top_logprobs:
            raise CapabilityError(f"{name} returns at most {caps.max_top_logprobs} top logprobs")
        if request.score_prefix and not caps.prefix_scoring:
            raise CapabilityError(f"{name} cannot score a given reply (likelihood judges need the embedded "
                                  f"backend: {term('model')} qwen2.5-coder-1.5b or a GGUF file)")
        if request.score_prefix and not request.assistant_prefix:
            raise CapabilityError("score_prefix needs the reply to score in assistant_prefix")
        if request.assistant_prefix and not caps.assistant_prefix:
            raise CapabilityError(f"{name} cannot continue an assistant prefix")
        fmt = request.response_format
        if fmt is not None and fmt.type == "regex" and not caps.regex:
            raise CapabilityError(f"{name} does not support regex-constrained output")
        if fmt is not None and fmt.type in ("json", "json_schema") and not caps.json_schema:
            raise CapabilityError(f"{name} does not support JSON-constrained output")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._run(self._aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        if self.cache is not None:
            self.cache.close()

    async def _aclose(self) -> None:
        # Tasks an interrupted call left cancelling end first (as asyncio.run does), so closing the
        # loop destroys no pending task ("Task was destroyed but it is pending!" on stderr).
        leftovers = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)
        await self.backend.aclose()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- loop plumbing ----------------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            self._stop_after_attempts_running(future)
            raise

    def _stop_after_attempts_running(self, future: Future) -> None:
        """Ctrl-C or SIGTERM: an attempt the backend is working on is paid for whatever happens, so let it
        finish (up to ``interrupt_grace`` s) and its reply reach the cache and the caller's ``on_done``;
        no other attempt starts meanwhile. Then everything left is cancelled. A second Ctrl-C lands in
        the wait and cancels at once."""
        with self._start_lock:
            self._stopping.set()
        try:
            ends = time.monotonic() + self.interrupt_grace
            while self._attempts_running and not future.done() and time.monotonic() < ends:
                time.sleep(0.01)
            if not future.done() and not self._attempts_running:
                self._let_replies_reach_callers(ends)
        finally:
            future.cancel()
            self._stopping.clear()

    def _let_replies_reach_callers(self, ends: float) -> None:
        """The last attempt has ended and its reply is cached, but it reaches the caller's ``on_done`` a few
        loop steps later (each gather above it wakes on the next step): a cancel sent now could land first
        and drop a paid judgment from the run (the rerun would find it in the cache). Let the loop take
        those steps."""
        async def steps() -> None:
            for _ in range(SETTLE_STEPS):
                await asyncio.sleep(0)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(steps(), self._loop).result(timeout=max(0.0, ends - time.monotonic()))

    async def _await_on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        if asyncio.get_running_loop() is self._loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    # ---- the pipeline -----------------------------------------------------------------------
    def _keys(self, request: Request) -> list[str]:
        return [request.cache_key(self.backend.identity, i) for i in range(request.n)]

    async def _complete_one(self, request: Request) -> list[Completion]:
        self.check(request)
        keys = self._keys(request)
        cached = self.cache.get_many(keys) if self.cache is not None else {}
        return await self._samples(request, keys, cached)

    async def _complete_many(self, requests: list[Request], on_done: OnDone | None,
                             errors: str = "raise") -> list[list[Completion]]:
        if errors not in ("raise", "return"):
            raise ValueError(f"errors must be 'raise' or 'return', not {errors!r}")
        # The hit path allocates objects for every request and key (see gc_paused).
        with gc_paused():
            for request in requests:
                self.check(request)
            all_keys = [self._keys(r) for r in requests]
            # One batched lookup for the whole set: a rerun served from cache never makes a task per call.
            cached = self.cache.get_many(k for keys in all_keys for k in keys) if self.cache is not None else {}
            results: list[list[Completion] | None] = [None] * len(requests)
            pending = []
            for index, (request, keys) in enumerate(zip(requests, all_keys, strict=True)):
                if all(k in cached for k in keys):
                    results[index] = self._from_cache(keys, cached)
                    if on_done:
                        on_done(index, results[index])
                else:
                    pending.append(self._settle(index, request, keys, cached, results, on_done, errors == "return"))
        if pending:
            await _gather_or_cancel(pending)
        return results  # type: ignore[return-value]

    async def _settle(self, index, request, keys, cached, results, on_done, keep_errors) -> None:
        try:
            results[index] = await self._samples(request, keys, cached)
        except RequestError as exc:
            if not keep_errors:
                raise
            results[index] = exc
        if on_done:
            on_done(index, results[index])

    def _from_cache(self, keys: list[str], cached: dict[str, Completion]) -> list[Completion]:
        # Each cached object was parsed for this call alone, so it can be marked in place.
        out = [cached[key] for key in keys]
        for completion in out:
            completion.cached = True
        self.usage.cache_hits += len(out)
        return out

    async def _samples(self, request: Request, keys: list[str], cached: dict[str, Completion]) -> list[Completion]:
        if any(key not in cached for key in keys):
            _within_bound(request)

        async def one(i: int, key: str) -> Completion:
            if key in cached:
                return self._from_cache([key], cached)[0]
            return await self._call_once(request, i, key)

        return list(await _gather_or_cancel([one(i, k) for i, k in enumerate(keys)]))

    async def _call_once(self, request: Request, sample_index: int, key: str) -> Completion:
        """Exactly one paid call per distinct key, even when several tasks ask for it at once."""
        if key in self._inflight:
            completion = await asyncio.shield(self._inflight[key])
            self.usage = self.usage + Usage(cache_hits=1)
            return completion.model_copy(update={"cached": True})
        future: asyncio.Future[Completion] = self._loop.create_future()
        self._inflight[key] = future
        try:
            completion = await self._call_with_retries(request, sample_index)
            self._missed_deadlines = 0
            if self.cache is not None:
                try:
                    self.cache.put(key, self.backend.identity, request.canonical_json(), completion)
                except StorageError as exc:  # held in memory by the cache: the caller still gets the reply
                    self.halt(exc)
            self._account(completion)
            future.set_result(completion)
            return completion
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._inflight[key]

    async def _call_with_retries(self, request: Request, sample_index: int) -> Completion:
        deadline = _Deadline(self.call_deadline)

        def back_off(state: RetryCallState) -> float:
            return deadline.back_off(state, self._wait)

        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientBackendError),
            # No back-off that would reach the deadline: the call ends on what the last attempt got.
            stop=stop_after_attempt(self.max_attempts) | (lambda state: back_off(state) >= deadline.remaining()),
            wait=back_off,
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    async with self._semaphore:
                        await self._respect_rate_limits(request)
                        return await self._attempt(deadline, request, sample_index)
        except (_DeadlinePassed, TransientBackendError):
            raise self._failed(deadline) from deadline.last_error
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(self, deadline: _Deadline, request: Request, sample_index: int) -> Completion:
        if self._halted is not None:
            while self._attempts_running:  # let every attempt paid for end first: cancelling loses it
                await asyncio.sleep(0.01)
            raise self._halted
        with self._start_lock:
            stopping = self._stopping.is_set()
            self._attempts_running += not stopping
        if stopping:  # interrupted: start nothing new; cancelled once the attempts running end
            await asyncio.Event().wait()
        try:
            return await deadline.run(self.backend.agenerate(request, sample_index))
        finally:
            self._attempts_running -= 1

    def _failed(self, deadline: _Deadline) -> JudgelabError:
        """Why a call failed: its attempts spent, or its deadline reached with no reply (the last attempt cut,
        or only timeouts and resets before), or with no time left to retry an answer (a malformed reply, a
        503): that call was answered, so it is no missed deadline."""
        error = deadline.last_error
        if error is None or not (error.answered or deadline.attempts >= self.max_attempts):
            return self._missed_deadline(deadline.attempts)
        return self._gave_up(error, deadline)

    def _gave_up(self, error: TransientBackendError, deadline: _Deadline) -> JudgelabError:
        """The error of a call whose retries ended on ``error`` (its attempts spent, or no time left before
        its deadline). A malformed reply fails that request alone (``RequestError``): the server is up and
        answers it badly. Anything else is the server's (``BackendError``): the run stops."""
        attempts = f"{deadline.attempts} attempt{'s' if deadline.attempts != 1 else ''}"
        if deadline.attempts < self.max_attempts:
            attempts += f" (no time left for more within {self.call_deadline:g} s, the deadline of one call)"
        gave_up = f"{self.backend.identity}: gave up after {attempts}: {error}"
        if isinstance(error, MalformedReplyError):
            self._missed_deadlines = 0  # answered: the server is not silent
            return RequestError(gave_up)
        return BackendError(f"{gave_up}. Finished calls are cached: rerun the same command to resume.")

    def _missed_deadline(self, attempts: int) -> JudgelabError:
        """The error of a call past its deadline: its own (``RequestError``), or, after ``DEADLINE_STREAK`` such
        calls in a row, the server's (``BackendError``: nothing it is asked gets an answer, stop the run)."""
        self._missed_deadlines += 1
        message = (f"{self.backend.identity}: no reply within {self.call_deadline:g} s, the deadline of one call "
                   f"across its attempts ({attempts} made; by default 3 x {term('timeout')})")
        if self._missed_deadlines >= DEADLINE_STREAK:
            return BackendError(f"{message}; {self._missed_deadlines} calls in a row missed their deadline, so the "
                                "server is not answering. Finished calls are cached: rerun the same command to resume.")
        return RequestError(message)

    def _wait(self, state: RetryCallState) -> float:
        """Exponential back-off with full jitter; a server's Retry-After wins when it asks for longer."""
        exc = state.outcome.exception() if state.outcome else None
        ceiling = min(self.backoff_max, self.backoff_initial * 2 ** (state.attempt_number - 1))
        delay = random.uniform(0, ceiling)
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after))
        return delay

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1

    async def _respect_rate_limits(self, request: Request) -> None:
        if self._request_limiter:
            await self._request_limiter.acquire()
        if self._token_limiter:
            # Estimate: ~4 characters per token for the prompt, plus the completion budget.
            estimate = sum(len(m.content) for m in request.messages) / 4 + request.max_tokens
            await self._token_limiter.acquire(min(estimate, self._token_limiter.max_rate))

    def _account(self, completion: Completion) -> None:
        cost = self.price.cost(completion.prompt_tokens, completion.completion_tokens) if self.price else None
        self.usage = self.usage + Usage(
            calls=1, prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens, cost_usd=cost, latency_s=completion.latency_s,
        )

    def stats(self) -> dict[str, Any]:
        return {
            **self.usage.model_dump(), "retries": self.retries, "backend": self.backend.identity,
            "wall_s": time.perf_counter() - self._started,
        }


def _default_deadline(backend: Backend) -> float:
    """``DEADLINE_IN_TIMEOUTS`` timeouts of one attempt for a backend that has one (a server); else none."""
    timeout = getattr(backend, "timeout", None)
    return DEADLINE_IN_TIMEOUTS * timeout if isinstance(timeout, (int, float)) else math.inf


class _DeadlinePassed(Exception):
    """Raised inside the retry loop when a call's deadline has passed (never retried)."""


class _Deadline:
    """The deadline of one call, counted from the start of its first attempt (time queued behind other
    calls for a slot does not count; back-off waits and later attempts do)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.attempts = 0  # attempts started
        self.last_error: TransientBackendError | None = None  # how the last attempt started failed, if it ended
        self._ends: float | None = None
        self._back_off: tuple[int, float] = (0, 0.0)  # (after attempt N, seconds)

    def remaining(self) -> float:
        if self._ends is None:
            self._ends = time.monotonic() + self.seconds
        return self._ends - time.monotonic()

    def back_off(self, state: RetryCallState, wait: Callable[[RetryCallState], float]) -> float:
        """The wait after attempt N, drawn once: tenacity asks for it and, through ``stop``, whether to wait at
        all (which of the two it asks first differs across its versions)."""
        if self._back_off[0] != state.attempt_number:
            self._back_off = (state.attempt_number, wait(state))
        return self._back_off[1]

    async def run(self, attempt: Coroutine[Any, Any, T]) -> T:
        remaining = self.remaining()
        if remaining <= 0:
            attempt.close()
            raise _DeadlinePassed
        self.attempts += 1
        self.last_error = None
        try:
            return await (attempt if math.isinf(remaining) else asyncio.wait_for(attempt, remaining))
        except asyncio.TimeoutError:  # the attempt was cut by the call's deadline
            raise _DeadlinePassed from None
        except TransientBackendError as exc:
            self.last_error = exc
            raise


def _within_bound(request: Request) -> None:
    """A request larger than ``max_input_bytes()`` (its JSON, as sent) is not sent: that request fails
    alone (RequestError), as one too long for the model's context does."""
    bound = max_input_bytes()
    size = len(request.canonical_json().encode("utf-8"))  # what the cache key hashes: microseconds for a prompt
    if size > bound:
        raise RequestError("not sent: " + over_limit(f"this request ({size:,} bytes of JSON)", bound))


async def _gather_or_cancel(coros: list[Coroutine[Any, Any, T]]) -> list[T]:
    """gather, but a failure or a cancel stops the siblings instead of leaving them running."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
