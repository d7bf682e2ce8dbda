"""One bound on the bytes a server's reply may bring in, counted as the reply streams in.

A server decides how much it sends, whatever ``max_tokens`` asked: one that answered 150 MB had its
reply cached whole and written as one judgments.jsonl line too long to read back. Every response the
LLM layer's HTTP clients receive (chat completions, error bodies, the ``/models`` list) is counted as
its body is decoded (a compressed reply counts unpacked) and refused once past the bound, before more
is read: the attempt is a malformed reply (retried, then that request's error) and nothing is cached.

The bound is a 32nd of the bound on one input (``JUDGELAB_MAX_INPUT_BYTES``; 4 MiB of the default
128 MiB), so a judgment holding a reply, and the reply's text escaped again as JSON, reads back under
the input bound. 4 MiB is about a million tokens of text, or some thousands with 20 top logprobs each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from judgelab.limits import MAX_INPUT_BYTES_VARIABLE, max_input_bytes, size_text

#: The reply bound's share of the input bound.
REPLY_SHARE = 32


class ReplyTooLarge(ValueError):
    """A reply past the bound (a ValueError, as any reply that is no usable answer)."""


def max_reply_bytes() -> int:
    return max(1, max_input_bytes() // REPLY_SHARE)


def bound_replies(client: Any) -> Any:
    """``client`` (an httpx-style ``AsyncClient``: httpx, or the httpx2 the openai client uses) with every
    response's body bounded as it is read."""
    hooks = client.event_hooks
    client.event_hooks = {**hooks, "response": [*hooks.get("response", []), _bound]}
    return client


async def _bound(response: Any) -> None:
    """A response hook: runs once the headers are in, before the body is read. A body announced past the
    bound is refused unread; any other is read through a counting ``aiter_bytes``, which ``aread`` (hence
    ``json`` and ``text``) reads by."""
    bound = max_reply_bytes()
    announced = response.headers.get("content-length", "")
    if announced.isdigit() and int(announced) > bound:
        raise ReplyTooLarge(_too_large(bound, f"{int(announced):,} bytes announced; "))
    decoded = response.aiter_bytes

    async def counted(chunk_size: int | None = None) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in decoded(chunk_size):
            seen += len(chunk)
            if seen > bound:
                raise ReplyTooLarge(_too_large(bound))
            yield chunk

    response.aiter_bytes = counted


def _too_large(bound: int, announced: str = "") -> str:
    return (f"the reply is over the {size_text(bound)} limit on one reply ({announced}a 32nd of "
            f"{MAX_INPUT_BYTES_VARIABLE}: set it higher to allow more)")
