"""Any OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server, Ollama, hosted APIs).

Uses the official ``openai`` async client with its own retries switched off: retries,
back-off and accounting belong to judgelab's client, so a retried call is counted once.
The API key comes from the environment and is never part of the identity, the cache or a log.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from judgelab.errors import BackendError, RequestError
from judgelab.llm.backends.base import Backend, Capabilities, TransientBackendError, sample_seed
from judgelab.llm.types import Completion, Request, TokenLogprob, TopLogprob

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


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
    ):
        """``continue_final_message``: the server continues a trailing assistant message (vLLM,
        SGLang); ``guided_regex``: it accepts ``guided_regex`` in the body (vLLM)."""
        self.model_name = model_name
        self.base_url = base_url
        self._secrets = [secret for secret in (api_key, *_userinfo(base_url)) if secret and len(secret) >= 4]
        self.identity = identity or f"openai-compatible:{_without_userinfo(base_url) or 'api.openai.com'}:{model_name}"
        self.max_concurrency = max_concurrency
        self.continue_final_message = continue_final_message
        self.capabilities = Capabilities(
            logprobs=True, max_top_logprobs=20, assistant_prefix=continue_final_message,
            json_schema=True, regex=guided_regex, seed=True,
        )
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
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
            response = await self._client.chat.completions.create(**self._body(request, sample_index))
        except openai.APIStatusError as exc:
            if exc.status_code in _RETRYABLE_STATUS:
                raise TransientBackendError(
                    f"HTTP {exc.status_code} from {self._where()}", _retry_after(exc.response)
                ) from exc
            if exc.status_code in (401, 403, 404):  # credentials or model name: every request would fail
                raise BackendError(self._redact(f"{self._where()}: HTTP {exc.status_code}: {exc.message}")) from None
            raise RequestError(self._redact(
                f"{self._where()} rejected the request: HTTP {exc.status_code}: {exc.message}")) from None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientBackendError(self._redact(f"{type(exc).__name__} talking to {self._where()}: {exc}")) from exc
        except ValueError as exc:  # a truncated or non-JSON body
            raise TransientBackendError(f"malformed response from {self._where()}: {exc}") from exc
        return self._completion(response, time.perf_counter() - started)

    def _completion(self, response: Any, latency: float) -> Completion:
        if not getattr(response, "choices", None):
            raise TransientBackendError(f"response from {self._where()} has no choices")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            logprobs=_token_logprobs(choice.logprobs),
            finish_reason="length" if choice.finish_reason == "length" else "stop",
            model=response.model or self.model_name,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_s=latency,
        )

    def _where(self) -> str:
        return _without_userinfo(self.base_url) or "the OpenAI API"

    def _redact(self, message: str) -> str:
        """Servers echo keys in errors ("Incorrect API key provided: sk-..."): never pass one on."""
        for secret in self._secrets:
            message = message.replace(secret, "***")
        return message

    async def aclose(self) -> None:
        await self._client.close()


def _userinfo(url: str | None) -> tuple[str, ...]:
    parts = urlsplit(url or "")
    return tuple(part for part in (parts.username, parts.password) if part)


def _without_userinfo(url: str | None) -> str | None:
    """``http://user:key@host/v1`` -> ``http://host/v1``: credentials stay out of identities (cache keys, run.json)."""
    if not url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _token_logprobs(logprobs: Any) -> tuple[TokenLogprob, ...] | None:
    if logprobs is None or not getattr(logprobs, "content", None):
        return None
    return tuple(
        TokenLogprob(
            token=entry.token,
            logprob=entry.logprob,
            top=tuple(TopLogprob(token=alt.token, logprob=alt.logprob) for alt in (entry.top_logprobs or [])),
        )
        for entry in logprobs.content
    )


def _retry_after(response: Any) -> float | None:
    """Seconds the server asked us to wait (Retry-After: seconds or an HTTP date; retry-after-ms)."""
    headers = getattr(response, "headers", None) or {}
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None
