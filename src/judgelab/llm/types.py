"""Request / Completion: the only currency between judges and backends.

A ``Request`` is a frozen value: its canonical JSON is what the cache hashes, so two
requests that would produce the same call are the same key and nothing else is.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str


class ResponseFormat(BaseModel):
    """Constrained output. ``json``: any JSON object; ``json_schema``: that schema; ``regex``: that pattern."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["json", "json_schema", "regex"]
    json_schema: dict[str, Any] | None = None
    pattern: str | None = None


class Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[Message, ...] = Field(min_length=1)
    # Text the assistant's reply is forced to start with (e.g. "Rating: [["), so a rating can be
    # read at a known position. Backends that cannot continue a prefix say so (capabilities).
    assistant_prefix: str = ""
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    stop: tuple[str, ...] = ()
    seed: int | None = 0
    n: int = Field(default=1, ge=1)
    logprobs: bool = False
    top_logprobs: int = Field(default=0, ge=0, le=20)
    response_format: ResponseFormat | None = None
    # Score the reply instead of writing one: the backend returns the log-probability of each
    # token of ``assistant_prefix`` given the messages (``Completion.prefix_logprobs``) and
    # generates nothing. What likelihood judges (GPTScore) read.
    score_prefix: bool = False

    @field_validator("messages", mode="before")
    @classmethod
    def _coerce_messages(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (Message(role="user", content=value),)
        return tuple(value)

    @classmethod
    def of(cls, prompt: str, system: str | None = None, **params: Any) -> Request:
        """Shorthand: a user prompt with an optional system message."""
        messages = [Message(role="system", content=system)] if system else []
        messages.append(Message(role="user", content=prompt))
        return cls(messages=tuple(messages), **params)

    def canonical_json(self) -> str:
        """The request as compact JSON in field order (fixed by the class), without ``n``.

        pydantic's serializer writes it directly (3x faster than dump + json.dumps, which
        matters for cache-served reruns); user dicts such as a JSON schema keep their own order.
        """
        # score_prefix is left out when False, so requests written before it existed keep their keys
        return self.model_dump_json(exclude={"n"} if self.score_prefix else {"n", "score_prefix"})

    def cache_key(self, backend_identity: str, sample_index: int) -> str:
        """Content address of one sample of this request on one backend+model.

        ``n`` is left out and the sample index put in, so asking for 3 samples after 1
        reuses the first and pays for two more, and self-consistency never collapses.
        """
        payload = f"{backend_identity}\x00{sample_index}\x00{self.canonical_json()}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class TopLogprob(BaseModel):
    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float


class TokenLogprob(BaseModel):
    """One generated token, its log-probability, and the most likely alternatives at that position."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float
    top: tuple[TopLogprob, ...] = ()


class Usage(BaseModel):
    """Accounting for one call or a sum of calls. ``cost_usd`` is None when no price is known."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=sum(costs) if costs else None,
            latency_s=self.latency_s + other.latency_s,
        )


FinishReason = Literal["stop", "length", "error"]
# Token counts a server reports for one call: beyond a billion no context window reaches; a larger
# or negative count is a reply to refuse (malformed, retried), not a number to add to the accounting.
TokenCount = Annotated[int, Field(ge=0, le=10**9)]


class Completion(BaseModel):
    """One sample. ``text`` excludes the request's ``assistant_prefix``."""

    text: str
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: FinishReason = "stop"
    model: str = ""
    prompt_tokens: TokenCount = 0
    completion_tokens: TokenCount = 0
    latency_s: float = 0.0
    cached: bool = False
    # Tokens of the prompt whose KV state was reused from the previous call (embedded backend).
    reused_prefix_tokens: TokenCount = 0
    # With ``Request.score_prefix``: each token of the assistant prefix and its log-probability.
    prefix_logprobs: tuple[TokenLogprob, ...] | None = None
