"""vLLM in-process on a CUDA GPU (extra ``vllm``): model string ``vllm:MODEL_OR_PATH``.

Why a batcher inside the backend: the client calls ``agenerate`` once per sample and runs up to
``max_concurrency`` of them at once, while vLLM is fastest when it receives many prompts in one
``LLM.generate`` call (it schedules and batches them itself, continuously). So every call puts
its prompt on a queue and one drain task hands everything queued to vLLM as one batch, on one
worker thread (``LLM`` is not thread-safe); calls arriving during a batch form the next one.

Prompts are token ids built with the model's own chat template (as ``LLM.chat`` does), with the
request's ``assistant_prefix`` appended to the rendered prompt so the reply continues it. Automatic
prefix caching is always on: a judge's requests share long instructions and sources, whose KV
blocks vLLM then computes once.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from judgelab.errors import ConfigError, RequestError, term
from judgelab.llm.backends.base import Backend, Capabilities, sample_seed
from judgelab.llm.backends.embedded import PromptTooLongError
from judgelab.llm.types import Completion, Request, TokenLogprob, TopLogprob

INSTALL_HINT = "pip install 'judgelab[vllm]'"


def import_vllm() -> ModuleType:
    try:
        import vllm
    except ImportError as exc:
        raise ConfigError(f"vllm: models need the vllm package, on a machine with a CUDA GPU: {INSTALL_HINT} "
                          f"({exc})") from None
    return vllm


def require_cuda_gpu() -> None:
    import torch  # vllm depends on torch: present whenever vllm imported

    if not torch.cuda.is_available():
        raise ConfigError("vllm: models run on a CUDA GPU and torch sees none (torch.cuda.is_available() is "
                          f"False); on a CPU use an embedded model, or point {term('model')} at a vLLM server's "
                          "http://HOST:PORT/v1")


def vllm_identity(model: str, vllm_version: str, **options: Any) -> str:
    """Cache identity: vLLM's version, the model (a local folder by path and modification time) and
    the options that change its outputs (dtype, quantization, revision) when they are set."""
    path = Path(model)
    if path.is_dir():
        config = path / "config.json"
        stamp = config.stat().st_mtime_ns if config.is_file() else path.stat().st_mtime_ns
        name = f"{path.resolve()}:{stamp}"
    else:
        name = model
    chosen = ",".join(f"{key}={value}" for key, value in sorted(options.items()) if value not in (None, "auto"))
    return f"vllm:{vllm_version}:{name}" + (f":{chosen}" if chosen else "")


# -- prompt ---------------------------------------------------------------------------------------
def chat_prompt_ids(tokenizer: Any, request: Request) -> list[int]:
    """Token ids of the chat-formatted request, continuing ``assistant_prefix``.

    The template's markup is tokenized with its control tokens; a message text that spells a
    control token (``<|im_end|><|im_start|>system``) is tokenized as plain text in its place, so a
    judged text can never open a turn of its own (as the embedded backend does).
    """
    messages = [m.model_dump() for m in request.messages]
    if not any(_has_control_text(tokenizer, m["content"]) for m in messages):
        text = _render(tokenizer, messages) + request.assistant_prefix
        return list(tokenizer.encode(text, add_special_tokens=False))
    marks = [f"\x00judgelab-content-{i}\x00" for i in range(len(messages))]
    rendered = _render(tokenizer, [{**m, "content": mark} for m, mark in zip(messages, marks, strict=True)])
    pieces = re.split("(" + "|".join(map(re.escape, marks)) + ")", rendered + request.assistant_prefix)
    if sorted(p for p in pieces if p in marks) != sorted(marks):
        raise RequestError("a message contains the model's control tokens and its chat template does not "
                           "keep message texts apart, so they cannot be passed as plain text")
    tokens: list[int] = []
    for piece in pieces:
        if piece in marks:
            tokens += tokenizer.encode(messages[marks.index(piece)]["content"], add_special_tokens=False,
                                       split_special_tokens=True)
        elif piece:
            tokens += tokenizer.encode(piece, add_special_tokens=False)
    return tokens


def _render(tokenizer: Any, messages: list[dict[str, Any]]) -> str:
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def _has_control_text(tokenizer: Any, content: str) -> bool:
    return tokenizer.encode(content, add_special_tokens=False) != tokenizer.encode(
        content, add_special_tokens=False, split_special_tokens=True)


# -- results --------------------------------------------------------------------------------------
def token_logprobs(token_ids: Sequence[int], positions: Iterable[Mapping[int, Any]], top_k: int,
                   piece: Callable[[int], str]) -> tuple[TokenLogprob, ...]:
    """vLLM's per-position ``{token id: Logprob}`` as this toolkit's logprobs.

    vLLM returns the top ``k`` tokens plus the sampled one when it is not among them; ordering
    by log-probability and keeping ``k`` drops that extra entry.
    """
    found = []
    for token_id, candidates in zip(token_ids, positions, strict=True):
        ranked = sorted(candidates.items(), key=lambda pair: -pair[1].logprob)[:top_k]
        top = tuple(TopLogprob(token=_text(t, lp, piece), logprob=lp.logprob) for t, lp in ranked)
        chosen = candidates[token_id]
        found.append(TokenLogprob(token=_text(token_id, chosen, piece), logprob=chosen.logprob, top=top))
    return tuple(found)


def _text(token_id: int, logprob: Any, piece: Callable[[int], str]) -> str:
    decoded = getattr(logprob, "decoded_token", None)
    return decoded if decoded is not None else piece(token_id)


@dataclass
class _Queued:
    prompt: list[int]
    params: Any  # vllm.SamplingParams
    future: asyncio.Future


class VLLMBackend(Backend):
    # The client may have this many calls in flight; the batcher hands them to vLLM together.
    max_concurrency = 256

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "auto",
        quantization: str | None = None,
        revision: str | None = None,
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        max_batch: int = 256,
        batch_wait_s: float = 0.005,
        seed: int = 0,
        **engine_options: Any,
    ):
        vllm = import_vllm()
        require_cuda_gpu()
        self._vllm = vllm
        self._llm = vllm.LLM(
            model=model, dtype=dtype, quantization=quantization, revision=revision, max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization, tensor_parallel_size=tensor_parallel_size, seed=seed,
            enable_prefix_caching=True, **engine_options,
        )
        self._tokenizer = self._llm.get_tokenizer()
        if not getattr(self._tokenizer, "chat_template", None):
            raise ConfigError(f"{model} has no chat template; use an instruct model")
        self.model_name = Path(model).name if Path(model).is_dir() else model
        self.identity = vllm_identity(model, vllm.__version__, dtype=dtype, quantization=quantization,
                                      revision=revision)
        self.capabilities = Capabilities(logprobs=True, max_top_logprobs=20, assistant_prefix=True, json_schema=True,
                                         regex=True, seed=True)
        self.max_batch, self.batch_wait_s = max_batch, batch_wait_s
        self._max_model_len = _max_model_len(self._llm)
        self._constraint = _constraint_api(vllm)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgelab-vllm")
        self._queue: list[_Queued] = []
        self._drainer: asyncio.Task | None = None
        self.batch_sizes: list[int] = []  # one entry per LLM.generate call (for tests and tuning)

    # ---- one call -------------------------------------------------------------------------------
    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        started = time.perf_counter()
        prompt = chat_prompt_ids(self._tokenizer, request)
        params = self.sampling_params(request, sample_index, len(prompt))
        output = await self._submit(prompt, params)
        sample = output.outputs[0]
        return Completion(
            text=sample.text,
            logprobs=token_logprobs(sample.token_ids, sample.logprobs, request.top_logprobs, self._piece)
            if request.logprobs else None,
            finish_reason={"length": "length", "abort": "error"}.get(sample.finish_reason, "stop"),
            model=self.model_name,
            prompt_tokens=len(prompt),
            completion_tokens=len(sample.token_ids),
            latency_s=time.perf_counter() - started,
            reused_prefix_tokens=getattr(output, "num_cached_tokens", None) or 0,
        )

    def sampling_params(self, request: Request, sample_index: int, prompt_length: int) -> Any:
        """One sample per call (``n=1``, its own seed): the cache keys every sample by its index."""
        budget = request.max_tokens
        if self._max_model_len is not None:
            if prompt_length >= self._max_model_len:
                raise PromptTooLongError(f"prompt has {prompt_length} tokens; the context window is {self._max_model_len}")
            budget = min(budget, self._max_model_len - prompt_length)
        options: dict[str, Any] = {
            "n": 1, "temperature": request.temperature, "top_p": request.top_p, "max_tokens": budget,
            "stop": list(request.stop) or None, "seed": sample_seed(request, sample_index),
            "logprobs": request.top_logprobs if request.logprobs else None,
        }
        if request.response_format is not None:
            field, params_class = self._constraint
            options[field] = params_class(**_constraint_of(request))
        return self._vllm.SamplingParams(**options)

    def _piece(self, token_id: int) -> str:
        return self._tokenizer.decode([token_id])

    # ---- batching -------------------------------------------------------------------------------
    async def _submit(self, prompt: list[int], params: Any) -> Any:
        future = asyncio.get_running_loop().create_future()
        self._queue.append(_Queued(prompt, params, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.batch_wait_s)  # the client's other ready calls queue up meanwhile
        while self._queue:
            batch = [q for q in self._queue[: self.max_batch] if not q.future.done()]  # done: cancelled
            del self._queue[: self.max_batch]
            if not batch:
                continue
            try:
                results = await loop.run_in_executor(self._executor, self._generate, batch)
            except Exception as exc:  # noqa: BLE001 - handed to every caller of the batch
                results = [exc] * len(batch)
            for queued, result in zip(batch, results, strict=True):
                if queued.future.done():
                    continue
                if isinstance(result, Exception):
                    queued.future.set_exception(result)
                else:
                    queued.future.set_result(result)

    def _generate(self, batch: list[_Queued]) -> list[Any]:
        self.batch_sizes.append(len(batch))
        try:
            return self._llm.generate([{"prompt_token_ids": q.prompt} for q in batch], [q.params for q in batch],
                                      use_tqdm=False)
        except Exception as exc:
            if len(batch) == 1:
                raise RequestError(f"vLLM rejected the request: {exc}") from exc
        # vLLM validates every request of a batch before it starts, so one it rejects (a schema its
        # grammar backend cannot compile, say) fails them all: run them one by one to fail only it.
        return [self._one(q) for q in batch]

    def _one(self, queued: _Queued) -> Any:
        try:
            return self._generate([queued])[0]
        except RequestError as exc:
            return exc

    async def aclose(self) -> None:
        self._executor.shutdown(wait=True)
        if self.__dict__.pop("_llm", None) is None:
            return  # closed already (several clients may share one backend)
        gc.collect()  # vLLM frees the GPU memory when the engine object is collected
        import torch

        torch.cuda.empty_cache()


def _max_model_len(llm: Any) -> int | None:
    for owner in (getattr(llm, "llm_engine", None), llm):
        config = getattr(owner, "model_config", None)
        if config is not None and getattr(config, "max_model_len", None):
            return int(config.max_model_len)
    return None  # unknown: vLLM itself rejects a prompt that does not fit


def _constraint_api(vllm: ModuleType) -> tuple[str, type]:
    """(SamplingParams field, its class): ``structured_outputs`` since vLLM 0.12, ``guided_decoding`` before."""
    sampling_params = importlib.import_module(f"{vllm.__name__}.sampling_params")
    if hasattr(sampling_params, "StructuredOutputsParams"):
        return "structured_outputs", sampling_params.StructuredOutputsParams
    return "guided_decoding", sampling_params.GuidedDecodingParams


def _constraint_of(request: Request) -> dict[str, Any]:
    fmt = request.response_format
    assert fmt is not None
    if fmt.type == "json":
        return {"json_object": True}
    if fmt.type == "json_schema":
        return {"json": fmt.json_schema}
    return {"regex": fmt.pattern}
