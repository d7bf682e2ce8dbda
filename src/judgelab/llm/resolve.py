"""Model strings -> backends, the same for the CLI's --model and the Python API.

    qwen2.5-coder-1.5b | qwen2.5-coder-0.5b | smollm2-135m   embedded presets (default: the first)
    /path/to/model.gguf                                       any local GGUF, embedded
    openai:<model>                                            the OpenAI API, key from OPENAI_API_KEY
    http://host:port/v1  (+ model_name)                       any OpenAI-compatible server
    vllm:<hub id or folder>                                   vLLM in-process on a CUDA GPU (extra "vllm")
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from judgelab.errors import ConfigError, term
from judgelab.llm.backends.base import Backend
from judgelab.llm.cache import CompletionCache
from judgelab.llm.client import Client
from judgelab.llm.location import check_server_url, mask_userinfo, trusts_proxy_settings
from judgelab.llm.models import DEFAULT_MODEL, MODEL_STRING_HELP, PRESETS, judgelab_home
from judgelab.llm.pricing import Price
from judgelab.llm.replies import bound_replies
from judgelab.redact import redact_known, redact_url

SERVER_PREFIXES = ("openai:", "http://", "https://")  # model strings that name a server


def runs_embedded(model: str) -> bool:
    """Whether the model string names a model the embedded backend (llama.cpp in this process) runs."""
    return model in PRESETS or model.endswith(".gguf")


def make_backend(model: str | None = None, model_name: str | None = None, timeout: float | None = None,
                 **options: Any) -> Backend:
    """Build the backend a model string names. ``options`` go to the backend's constructor.

    ``timeout``: the deadline of one request attempt to a server, in seconds (default 120).
    """
    model = model or DEFAULT_MODEL
    in_process = runs_embedded(model) or model.startswith("vllm:")
    if timeout is not None and in_process:
        raise ConfigError(f"{term('timeout')} bounds requests to a server; {model} runs in this process")
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"{term('timeout')} must be a number of seconds above 0, not {timeout}")
    if runs_embedded(model):
        from judgelab.llm.backends.embedded import EmbeddedBackend  # heavy import: only when used

        if model.endswith(".gguf") and not Path(model).is_file():
            raise ConfigError(f"GGUF file not found: {model}")
        return EmbeddedBackend(model, **options)
    if model.startswith("vllm:"):
        from judgelab.llm.backends.vllm_backend import VLLMBackend  # needs the vllm extra and a CUDA GPU

        if not model.removeprefix("vllm:"):
            raise ConfigError("vllm: needs a model, e.g. vllm:Qwen/Qwen2.5-1.5B-Instruct or vllm:/path/to/folder")
        return VLLMBackend(model.removeprefix("vllm:"), **options)
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend, protect_credentials

    if timeout is not None:
        options["timeout"] = timeout
    if model.startswith("openai:"):
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("openai: models need the OPENAI_API_KEY environment variable")
        return OpenAICompatibleBackend(model.split(":", 1)[1], api_key=key, **options)
    if model.startswith(("http://", "https://")):
        base_url = check_server_url(model)
        key = os.environ.get("JUDGELAB_API_KEY") or os.environ.get("OPENAI_API_KEY")
        # Before listing the models: that request carries the key too.
        protect_credentials(base_url, key, options.get("allow_insecure_http"))
        name = model_name or _only_served_model(base_url, key, min(timeout or _LIST_TIMEOUT, _LIST_TIMEOUT))
        return OpenAICompatibleBackend(name, base_url=base_url, api_key=key, **options)
    raise ConfigError(f"unknown model {mask_userinfo(model)!r}; use {MODEL_STRING_HELP}")


_LIST_TIMEOUT = 10.0  # seconds for the whole /models answer
_NAMES_SHOWN = 10  # of a server's models, when it serves several


def _only_served_model(base_url: str, api_key: str | None, deadline: float) -> str:
    """Without --model-name, ask the server; fine when it serves exactly one model. The names are what
    the server says, so any known secret it echoed into them is masked (they end up in identities)."""
    where = redact_url(base_url)
    try:
        names = [redact_known(str(name)) for name in _served_models(base_url, api_key, deadline)]
    except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
        raise ConfigError(f"no list of models from {where}/models within {deadline:g} s; pass "
                          f"{term('model_name')}") from None
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"cannot list models at {where}/models ({exc}); pass {term('model_name')}") from exc
    if len(names) != 1:
        more = len(names) - _NAMES_SHOWN
        shown = ", ".join(names[:_NAMES_SHOWN]) + (f" and {more:,} more" if more > 0 else "")
        raise ConfigError(f"{where} serves {len(names):,} models ({shown}); pass {term('model_name')}")
    return names[0]


def _served_models(base_url: str, api_key: str | None, deadline: float) -> list[str]:
    """GET /models under one deadline for the whole answer (httpx's timeouts bound each read only),
    on an event loop of its own in a thread of its own: the caller may be running a loop (a notebook)."""
    from judgelab.llm.backends.openai_compat import split_base_url

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    root, query = split_base_url(base_url)

    async def get() -> list[str]:
        async with bound_replies(httpx.AsyncClient(timeout=deadline, trust_env=trusts_proxy_settings(base_url))) as http:
            request = http.get(f"{root.rstrip('/')}/models", headers=headers, params=query)  # type: ignore[union-attr]
            response = await asyncio.wait_for(request, deadline)
        response.raise_for_status()
        return [entry["id"] for entry in response.json().get("data", [])]

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, get()).result()


def default_cache_path() -> Path:
    return judgelab_home() / "cache.sqlite"


def make_client(
    model: str | None = None,
    model_name: str | None = None,
    cache: str | Path | None | bool = True,
    max_concurrency: int | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    price: Price | None = None,
    backend_options: dict[str, Any] | None = None,
    timeout: float | None = None,
) -> Client:
    """One call from a model string to a ready client. ``cache=True``: the shared cache; False: none.
    ``timeout``: the deadline of one request attempt to a server, in seconds (default 120).
    ``max_concurrency``: calls in flight at once; a server takes what is asked (its backend's 8 is a
    default), a model in this process no more than it serves."""
    options = dict(backend_options or {})
    if max_concurrency is not None and (model or "").startswith(SERVER_PREFIXES):
        options.setdefault("max_concurrency", max_concurrency)
    backend = make_backend(model, model_name, timeout, **options)
    if cache is True:
        cache = default_cache_path()
    store = CompletionCache(cache) if cache else None
    return Client(
        backend, cache=store, max_concurrency=max_concurrency, requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute, price=price,
    )


def client_from_options(model: str | None, model_name: str | None = None, cache: bool = True,
                        cache_path: str | Path | None = None, concurrency: int | None = None, rpm: float | None = None,
                        price_in: float | None = None, price_out: float | None = None, *,
                        uses_llm: bool = True, timeout: float | None = None, threads: int | None = None) -> Client:
    """The client the commands' model options (and the Python front door's) describe: ``price_in`` /
    ``price_out`` in USD per million tokens, ``cache_path`` (default: the shared cache) unless ``cache`` is
    False; for a judge that calls no LLM (``uses_llm`` False), one that loads no model. ``threads``: the
    embedded model's (default: ``JUDGELAB_THREADS``, else the cores other processes leave free)."""
    if not uses_llm:
        from judgelab.llm.backends.none import no_llm_client

        return no_llm_client()
    price = Price(price_in or 0.0, price_out or 0.0) if price_in is not None or price_out is not None else None
    options = None
    if threads is not None:
        name = model or DEFAULT_MODEL
        if not runs_embedded(name):
            raise ConfigError(f"{term('threads')} sets the embedded model's threads; {name} is not run by it")
        options = {"n_threads": threads}
    return make_client(model, model_name, cache=(cache_path or True) if cache else False,
                       max_concurrency=concurrency, requests_per_minute=rpm, price=price, timeout=timeout,
                       backend_options=options)
