"""Any OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server, Ollama, hosted APIs).

Uses the official ``openai`` async client with its own retries switched off: retries,
back-off and accounting belong to judgelab's client, so a retried call is counted once.
The API key comes from the environment and is never part of the identity, the cache or a log:
it and credentials in the URL are registered with ``judgelab.redact``, and they are not sent in
clear text (plain ``http://``) to another machine unless the user opts in. A key in the URL's
query, path or fragment is masked in the identity and messages (``redact_url``); a query is sent
with every request, after the request's own path (``split_base_url``).
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import os
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import openai
from pydantic import ValidationError

from judgelab.errors import BackendError, ConfigError, RequestError, term
from judgelab.llm.backends.base import (
    Backend,
    Capabilities,
    MalformedReplyError,
    TransientBackendError,
    sample_seed,
)
from judgelab.llm.location import check_server_url, is_this_machine, trusts_proxy_settings
from judgelab.llm.replies import bound_replies
from judgelab.llm.types import Completion, Request, TokenLogprob, TopLogprob
from judgelab.redact import redact_known, redact_url, remember_key, url_secrets

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
#: Set to 1 to send an API key or URL credentials over plain http:// to a host other than this machine.
INSECURE_HTTP_OPT_IN = "JUDGELAB_ALLOW_INSECURE_HTTP"
# Where a schema error in the reply is, in the server's words rather than Completion's field names.
_WIRE_FIELDS = {"text": "choices[0].message.content", "prompt_tokens": "usage.prompt_tokens",
                "completion_tokens": "usage.completion_tokens", "logprobs": "choices[0].logprobs",
                "model": "model"}


class OpenAICompatibleBackend(Backend):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_concurrency: int = 8,
        continue_final_message: bool = False,
        guided_regex: bool = False,
        identity: str | None = None,
        allow_insecure_http: bool | None = None,
    ):
        """``timeout``: the deadline of one attempt in seconds, from connecting to the last byte of the
        reply (a server that trickles bytes cannot hold an attempt longer); a deadline is retried like
        any transient fault. ``continue_final_message``: the server continues a trailing assistant
        message (vLLM, SGLang); ``guided_regex``: it accepts ``guided_regex`` in the body (vLLM).
        ``allow_insecure_http``: send the key or URL credentials over plain http:// to another machine
        (default: the JUDGELAB_ALLOW_INSECURE_HTTP environment variable; see ``protect_credentials``)."""
        self.allow_insecure_http = protect_credentials(base_url, api_key, allow_insecure_http)
        self.model_name = model_name
        self.base_url = base_url
        self.timeout = timeout
        shown = redact_url(base_url) if base_url else "api.openai.com"
        self.identity = identity or f"openai-compatible:{shown}:{model_name}"
        self.max_concurrency = max_concurrency
        self.continue_final_message = continue_final_message
        self.capabilities = Capabilities(
            logprobs=True, max_top_logprobs=20, assistant_prefix=continue_final_message,
            json_schema=True, regex=guided_regex, seed=True,
        )
        root, query = split_base_url(base_url)
        self._client = openai.AsyncOpenAI(
            base_url=root, api_key=api_key or "not-needed", timeout=timeout, max_retries=0, default_query=query,
            http_client=bound_replies(openai.DefaultAsyncHttpxClient(trust_env=trusts_proxy_settings(base_url))),
        )

    def _body(self, request: Request, sample_index: int) -> dict[str, Any]:
        messages = [m.model_dump() for m in request.messages]
        extra_body: dict[str, Any] = {}
        if request.assistant_prefix:
            messages.append({"role": "assistant", "content": request.assistant_prefix})
            extra_body.update(continue_final_message=True, add_generation_prompt=False)
        body: dict[str, Any] = dict(
            model=self.model_name, messages=messages, temperature=request.temperature,
            top_p=request.top_p, max_tokens=request.max_tokens, n=1,
        )
        if request.stop:
            body["stop"] = list(request.stop)
        seed = sample_seed(request, sample_index)
        if seed is not None:
            body["seed"] = seed
        if request.logprobs:
            body["logprobs"] = True
            if request.top_logprobs:
                body["top_logprobs"] = request.top_logprobs
        fmt = request.response_format
        if fmt is not None and fmt.type == "json":
            body["response_format"] = {"type": "json_object"}
        elif fmt is not None and fmt.type == "json_schema":
            body["response_format"] = {
                "type": "json_schema", "json_schema": {"name": "output", "schema": fmt.json_schema},
            }
        elif fmt is not None and fmt.type == "regex":
            extra_body["guided_regex"] = fmt.pattern
        if extra_body:
            body["extra_body"] = extra_body
        return body

    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        started = time.perf_counter()
        try:
            # httpx's timeout bounds each read, not the whole reply: the deadline of the attempt is ours.
            response = await asyncio.wait_for(
                self._client.chat.completions.create(**self._body(request, sample_index)), self.timeout)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            raise TransientBackendError(f"no complete reply from {self._where()} within {self.timeout:g} s "
                                        f"(the deadline of one attempt, {term('timeout')})") from None
        except openai.APIStatusError as exc:
            if exc.status_code in _RETRYABLE_STATUS:
                raise TransientBackendError(
                    f"HTTP {exc.status_code} from {self._where()}", _retry_after(exc.response), answered=True
                ) from exc
            if exc.status_code in (401, 403, 404):  # credentials or model name: every request would fail
                raise BackendError(f"{self._where()}: HTTP {exc.status_code}: {exc.message}") from None
            raise RequestError(f"{self._where()} rejected the request: HTTP {exc.status_code}: {exc.message}") from None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientBackendError(f"{type(exc).__name__} talking to {self._where()}: {exc}") from exc
        except ValueError as exc:  # a truncated or non-JSON body, or one past the bound on a reply (ReplyTooLarge)
            raise MalformedReplyError(f"malformed reply from {self._where()}: {exc}") from exc
        return self._completion(response, time.perf_counter() - started)

    def _completion(self, response: Any, latency: float) -> Completion:
        """The reply as a Completion. The openai client does not validate what it parses, so a reply
        that breaks the schema (an object for the text, tokens that are not numbers) shows up here: it
        is a malformed reply, retried like a cut one."""
        if not getattr(response, "choices", None):
            raise MalformedReplyError(f"malformed reply from {self._where()}: no choices")
        try:
            choice = response.choices[0]
            usage = response.usage
            return Completion(
                text=_reply_text(choice.message.content),
                logprobs=_token_logprobs(choice.logprobs),
                finish_reason="length" if choice.finish_reason == "length" else "stop",
                model=_server_text(response.model) or self.model_name,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                latency_s=latency,
            )
        except ValidationError as exc:
            problems = "; ".join(f"{_WIRE_FIELDS.get(str(error['loc'][0]), str(error['loc'][0]))}: {error['msg']}"
                                 for error in exc.errors())
            raise MalformedReplyError(f"malformed reply from {self._where()}: {problems}") from None
        except (AttributeError, TypeError, ValueError) as exc:
            raise MalformedReplyError(f"malformed reply from {self._where()}: {exc}") from None

    def _where(self) -> str:
        return redact_url(self.base_url) if self.base_url else "the OpenAI API"

    async def aclose(self) -> None:
        await self._client.close()


def protect_credentials(base_url: str | None, api_key: str | None, allow_insecure_http: bool | None = None) -> bool:
    """Register the key for redaction, check the URL (no credentials in it: ``check_server_url``), and
    refuse to send the key in clear text.

    Plain ``http://`` to a host that is not this machine (every address it resolves to loopback)
    carries the key readable to anyone on the path, so it needs an explicit opt-in:
    ``allow_insecure_http`` or the JUDGELAB_ALLOW_INSECURE_HTTP environment variable. Requests to
    this machine never go through a proxy (``trusts_proxy_settings``), so no proxy hop sees the key
    either. Returns the opt-in as resolved.
    """
    remember_key(api_key)
    if base_url is not None:
        check_server_url(base_url)
    if allow_insecure_http is None:
        allow_insecure_http = os.environ.get(INSECURE_HTTP_OPT_IN, "").strip() not in ("", "0")
    parts = urlsplit(base_url or "")
    secret = bool(api_key) or bool(url_secrets(base_url or ""))  # a key in the URL travels as clearly
    if allow_insecure_http or parts.scheme != "http" or not secret or is_this_machine(parts.hostname):
        return allow_insecure_http
    raise ConfigError(
        f"refusing to send the API key in clear text over http:// to {parts.hostname}, which is not this machine: "
        f"use https://, set {INSECURE_HTTP_OPT_IN}=1 if the network to it is trusted, or give no key if the "
        "server needs none (judgelab reads JUDGELAB_API_KEY, then OPENAI_API_KEY)")


def split_base_url(base_url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """(the URL requests are made under, the query sent with each): a base URL's query goes after each
    request's path (``/v1/chat/completions?api_key=...``), not before it, and its fragment nowhere."""
    if not base_url:
        return base_url, None
    parts = urlsplit(base_url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True)) or None
    return urlunsplit(parts._replace(query="", fragment="")), query


def _reply_text(content: Any) -> Any:
    """The reply's text (see ``_server_text``); no content is an empty reply."""
    return "" if content is None else _server_text(content)


def _server_text(value: Any) -> Any:
    """A string the server sent (reply text, model name, token) with any known secret it echoed masked:
    all of them are cached, stored and shown. Anything but text is passed on for validation to refuse."""
    return redact_known(value) if isinstance(value, str) else value


def _token_logprobs(logprobs: Any) -> tuple[TokenLogprob, ...] | None:
    if logprobs is None or not getattr(logprobs, "content", None):
        return None
    return tuple(
        TokenLogprob(
            token=_server_text(entry.token),
            logprob=entry.logprob,
            top=tuple(TopLogprob(token=_server_text(alt.token), logprob=alt.logprob) for alt in (entry.top_logprobs or [])),
        )
        for entry in logprobs.content
    )


def _retry_after(response: Any) -> float | None:
    """Seconds the server asked us to wait (Retry-After: seconds or an HTTP date; retry-after-ms), or None
    when it said nothing usable: a value that is neither (``soon-ish``), not finite, or a date out of range
    is a hint we cannot read, never an error (the back-off alone applies)."""
    headers = getattr(response, "headers", None) or {}
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is None and value:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return None if seconds is None else max(0.0, seconds)


def _number(value: str | None) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
