"""The LLM layer: one client, several backends, a cache that makes every rerun a resume.

The names below load on first use (``judgelab.lazy``): ``import judgelab.llm.models`` (the presets,
which ``judgelab --help`` prints) then loads no HTTP client, cache or backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgelab.lazy import lazy_exports

if TYPE_CHECKING:
    from judgelab.llm.cache import CompletionCache
    from judgelab.llm.client import Client
    from judgelab.llm.pricing import Price
    from judgelab.llm.resolve import make_backend, make_client
    from judgelab.llm.types import (
        Completion,
        Message,
        Request,
        ResponseFormat,
        TokenLogprob,
        TopLogprob,
        Usage,
    )

__all__ = [
    "Client", "CompletionCache", "Completion", "Message", "Price", "Request", "ResponseFormat",
    "TokenLogprob", "TopLogprob", "Usage", "make_backend", "make_client",
]
__getattr__, __dir__ = lazy_exports(__name__, {
    "CompletionCache": "cache", "Client": "client", "Price": "pricing", "make_backend": "resolve",
    "make_client": "resolve", **dict.fromkeys(
        ("Completion", "Message", "Request", "ResponseFormat", "TokenLogprob", "TopLogprob", "Usage"), "types"),
})
