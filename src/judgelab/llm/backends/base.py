"""What the client needs from a backend, and nothing more."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from judgelab.llm.types import Completion, Request


@dataclass(frozen=True)
class Capabilities:
    logprobs: bool = False
    max_top_logprobs: int = 0
    assistant_prefix: bool = False  # can continue a forced start of the reply
    json_schema: bool = False
    regex: bool = False
    seed: bool = False
    prefix_scoring: bool = False  # can return the logprobs of a given reply (Request.score_prefix)


class TransientBackendError(Exception):
    """A failure worth retrying (overload, 5xx, reset, timeout). ``retry_after`` in seconds if the server said;
    ``answered``: the server did answer (a 5xx, a 429), as opposed to no reply at all (a timeout, a reset)."""

    answered = False

    def __init__(self, message: str, retry_after: float | None = None, *, answered: bool | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        if answered is not None:
            self.answered = answered


class MalformedReplyError(TransientBackendError):
    """A reply that arrived but is no usable completion (cut JSON, a body that breaks the schema, one
    over the bound on a reply's size).

    Retried like any transient fault; when every attempt gets one, only that request fails (the client
    raises ``RequestError``, a per-item error): the server is up, it answers this request badly.
    """

    answered = True


class Backend(ABC):
    #: Stable name of what answers: part of every cache key. Never contains secrets.
    identity: str
    #: The model name reported in completions and used for pricing.
    model_name: str
    capabilities: Capabilities
    #: How many calls this backend can usefully serve at once.
    max_concurrency: int = 8

    @abstractmethod
    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        """One sample. Raise TransientBackendError for retryable failures, anything else for fatal ones."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections / model memory."""


def sample_seed(request: Request, sample_index: int) -> int | None:
    """Each of n samples gets its own seed, so samples differ yet reruns reproduce them."""
    return None if request.seed is None else request.seed + sample_index
