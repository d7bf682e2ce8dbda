"""Test doubles for unit tests of logic that is exercised end to end elsewhere with real models."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from judgelab.llm import Client, Request
from judgelab.llm.backends.base import Backend, Capabilities, TransientBackendError
from judgelab.llm.types import Completion, TokenLogprob

Reply = Callable[[Request, int], str | Completion]


class ScriptedBackend(Backend):
    """Answers with ``reply(request, sample_index)`` (default: echo the last message).

    Fails transiently ``failures`` times per distinct (prompt, sample) first; records every call.
    """

    def __init__(self, reply: Reply | None = None, failures: int = 0, retry_after: float | None = None,
                 delay: float = 0.0, max_concurrency: int = 8, capabilities: Capabilities | None = None):
        self.identity = "scripted:v1"
        self.model_name = "scripted"
        self.capabilities = capabilities or Capabilities(logprobs=True, max_top_logprobs=20, assistant_prefix=True,
                                                         json_schema=True)
        self.max_concurrency = max_concurrency
        self.reply = reply or (lambda request, i: f"{request.messages[-1].content}#{i}")
        self.failures = failures
        self.retry_after = retry_after
        self.delay = delay
        self.attempts: dict[tuple[str, int], int] = {}
        self.requests: list[Request] = []
        self.calls = 0
        self.active = 0
        self.peak = 0

    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        key = (request.messages[-1].content, sample_index)
        self.attempts[key] = self.attempts.get(key, 0) + 1
        if self.attempts[key] <= self.failures:
            raise TransientBackendError("overloaded", retry_after=self.retry_after)
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.active -= 1
        self.calls += 1
        self.requests.append(request)
        answer = self.reply(request, sample_index)
        if isinstance(answer, Completion):
            return answer
        return Completion(text=answer, prompt_tokens=10, completion_tokens=2)


def scripted_client(backend: Backend, **kwargs) -> Client:
    """A client with near-zero back-off, so retry tests run fast."""
    return Client(backend, backoff_initial=0.001, backoff_max=0.01, **kwargs)


def digit_logprobs(probabilities: dict[str, float], chosen: str) -> tuple[TokenLogprob, ...]:
    """One rating token with the given alternatives, as a backend with logprobs returns it."""
    import math

    from judgelab.llm.types import TopLogprob

    top = tuple(TopLogprob(token=t, logprob=math.log(p)) for t, p in sorted(probabilities.items(), key=lambda kv: -kv[1]))
    return (TokenLogprob(token=chosen, logprob=math.log(probabilities[chosen]), top=top),)


class FullDisk:
    """``os.write`` as on a disk with ``free`` bytes left, for files under ``folder`` (other writes go on):
    a write past what is left goes out in part and the next one fails with ENOSPC, as on a full tmpfs.
    Set ``free`` to None when space is back. Use as ``FullDisk(monkeypatch, folder, free=100)``."""

    def __init__(self, monkeypatch, folder, free: int | None):
        import os

        self.folder, self.free, self._write = str(folder), free, os.write
        monkeypatch.setattr(os, "write", self.write)

    def write(self, fd: int, data) -> int:
        import errno
        import os

        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = ""
        if self.free is None or not path.startswith(self.folder):
            return self._write(fd, data)
        if self.free == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = self._write(fd, bytes(data[: self.free]))
        self.free -= written
        return written
