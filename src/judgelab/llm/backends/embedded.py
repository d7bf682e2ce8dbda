"""The default backend: a GGUF model run in-process by llama-cpp-python. No server, no key.

Why our own token loop instead of ``create_chat_completion``: llama-cpp-python only returns
logprobs when the model is loaded with ``logits_all=True``, which keeps a vocabulary-sized row
for every prompt token (150k floats x 1,000 tokens for a judge prompt). We read the logits
of the last position only, right after each token is sampled, which is all a logprob needs.

``Llama.generate`` keeps the KV cache of the longest prefix shared with the previous call,
so consecutive requests that share a prompt prefix (same instructions, same source) only
evaluate their new suffix. ``prefix_reuse=False`` turns that off (for measuring it).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.errors import BackendError, ConfigError, RequestError
from judgelab.limits import MAX_THREADS
from judgelab.llm.backends.base import Backend, Capabilities, sample_seed
from judgelab.llm.models import PRESETS, get_preset, resolve_preset_path
from judgelab.llm.types import Completion, Request, TokenLogprob, TopLogprob


class PromptTooLongError(RequestError):
    """The prompt does not fit the model's context window."""


class EmbeddedBackend(Backend):
    max_concurrency = 1  # one model, one context: calls are serialised on one worker thread

    def __init__(
        self,
        model: str = "qwen2.5-coder-1.5b",
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        prefix_reuse: bool = True,
        verbose: bool = False,
    ):
        from llama_cpp import Llama  # imported here: optional dependency (extra "embedded")

        if model in PRESETS:
            path = resolve_preset_path(model)
            self.model_name = model
            self.identity = f"embedded:{model}:{get_preset(model).sha256[:16]}"
        else:
            path = Path(model).resolve()
            if not path.is_file():
                raise ConfigError(f"GGUF file not found: {model}")
            stat = path.stat()
            self.model_name = path.stem
            self.identity = f"embedded:gguf:{path}:{stat.st_size}:{stat.st_mtime_ns}"
        self.path = path
        self.prefix_reuse = prefix_reuse
        self.capabilities = Capabilities(
            logprobs=True, max_top_logprobs=20, assistant_prefix=True, json_schema=True, regex=False, seed=True,
            prefix_scoring=True,
        )
        threads = n_threads or configured_threads() or default_threads()
        # n_threads_batch too: llama-cpp-python otherwise evaluates prompts (most of a judge call) on
        # every core whatever n_threads says, so two 1-thread workers would fight over both cores.
        self._llm = Llama(
            model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, n_batch=n_batch,
            logits_all=False, verbose=verbose,
        )
        self._formatter = self._chat_formatter()
        self._longest_token: int | None = None  # bytes; measured on the first long prompt
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgelab-embedded")
        # set by aclose: the decode loop stops at the next token instead of running to max_tokens, so
        # Ctrl-C ends a run in about one token's time, not one generation's
        self._closing = threading.Event()

    def _chat_formatter(self) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ConfigError(f"{self.path} has no chat template in its metadata; use an instruct model")
        model = self._llm._model  # the GGUF's own special tokens, as llama-cpp-python does
        eos, bos = self._llm.token_eos(), self._llm.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
        )

    # ---- prompt -----------------------------------------------------------------------------
    def prompt_tokens(self, request: Request) -> list[int]:
        messages = [m.model_dump() for m in request.messages]
        self._refuse_beyond_context(sum(len(m["content"]) for m in messages) + len(request.assistant_prefix))
        if any(self._has_control_text(m["content"]) for m in messages):
            return self._tokens_with_plain_contents(messages, request.assistant_prefix)
        rendered = self._formatter(messages=messages)
        text = rendered.prompt + request.assistant_prefix
        return self._llm.tokenize(text.encode("utf-8"), add_bos=not rendered.added_special, special=True)

    def _refuse_beyond_context(self, characters: int) -> None:
        """Refuse, before tokenising, a prompt whose length alone proves it cannot fit the context.

        Each token of a byte-level BPE or SentencePiece vocabulary stands for at most
        ``_longest_token`` bytes of the text (they drop nothing), and a character is at least one
        byte, so a text has at least ``characters / _longest_token`` tokens. Tokenising a 200 MB
        text only to learn that took minutes and gigabytes of memory; this takes no time.
        """
        n_ctx = self._llm.n_ctx()
        if characters <= n_ctx:  # every token is at least one byte long: nothing to prove
            return
        from llama_cpp import LLAMA_VOCAB_TYPE_BPE, LLAMA_VOCAB_TYPE_SPM

        if self._llm._model.vocab_type() not in (LLAMA_VOCAB_TYPE_BPE, LLAMA_VOCAB_TYPE_SPM):
            return  # other tokenizers normalise the text (a run of spaces may become one token)
        if self._longest_token is None:
            self._longest_token = max(len(self._llm.detokenize([token], special=True))
                                      for token in range(self._llm.n_vocab()))
        least = characters // max(1, self._longest_token)
        if least > n_ctx:
            raise PromptTooLongError(
                f"prompt has at least {least} tokens ({characters} characters; no token of this model is longer "
                f"than {self._longest_token} bytes); the context window is {n_ctx}")

    def _has_control_text(self, content: str) -> bool:
        """Does this text spell one of the model's control tokens (``<|im_start|>``, ``</s>``)?"""
        if "<" not in content:  # every chat model's control tokens are written <...>: a cheap first test
            return False
        data = content.encode("utf-8")
        return self._llm.tokenize(data, add_bos=False, special=True) != self._llm.tokenize(
            data, add_bos=False, special=False)

    def _tokens_with_plain_contents(self, messages: list[dict[str, Any]], assistant_prefix: str) -> list[int]:
        """The chat template's own markup as control tokens, message contents as plain text.

        A judged text that contains ``<|im_end|><|im_start|>system`` must not open a real system
        turn: the template is rendered around placeholders, and each content is tokenized with
        ``special=False`` in its place, so the model sees those characters as characters.
        """
        marks = [f"\x00judgelab-content-{i}\x00" for i in range(len(messages))]
        rendered = self._formatter(messages=[{**m, "content": mark} for m, mark in zip(messages, marks, strict=True)])
        pieces = re.split("(" + "|".join(map(re.escape, marks)) + ")", rendered.prompt + assistant_prefix)
        if sorted(p for p in pieces if p in marks) != sorted(marks):
            raise RequestError("a message contains the model's control tokens and its chat template does not "
                               "keep message texts apart, so they cannot be passed as plain text")
        tokens: list[int] = []
        for piece in pieces:
            plain = piece in marks
            text = messages[marks.index(piece)]["content"] if plain else piece
            tokens += self._llm.tokenize(text.encode("utf-8"), add_bos=not tokens and not rendered.added_special,
                                         special=not plain)
        return tokens

    # ---- generation -------------------------------------------------------------------------
    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._generate, request, sample_index)

    def _generate(self, request: Request, sample_index: int) -> Completion:
        if request.score_prefix:
            return self._score_prefix(request)
        started = time.perf_counter()
        tokens = self.prompt_tokens(request)
        budget = self._llm.n_ctx() - len(tokens)
        if budget < 1:
            raise PromptTooLongError(
                f"prompt has {len(tokens)} tokens; the context window is {self._llm.n_ctx()}"
            )
        reused = self._reusable_prefix(tokens)
        seed = sample_seed(request, sample_index)
        self._llm.set_seed(seed if seed is not None else int.from_bytes(os.urandom(4), "little"))
        generated, logprobs, finish = self._decode(tokens, request, min(request.max_tokens, budget))
        text = self._llm.detokenize(generated).decode("utf-8", errors="replace")
        text, stopped = _cut_at_stop(text, request.stop)
        return Completion(
            text=text,
            logprobs=tuple(logprobs) if request.logprobs else None,
            finish_reason="stop" if stopped else finish,
            model=self.model_name,
            prompt_tokens=len(tokens),
            completion_tokens=len(generated),
            latency_s=time.perf_counter() - started,
            reused_prefix_tokens=reused,
        )

    # ---- scoring a given reply (likelihood judges) ---------------------------------------------
    def _score_prefix(self, request: Request) -> Completion:
        """The log-probability of each token of ``assistant_prefix`` given the messages.

        Hand-written on llama.cpp's batch API because llama-cpp-python offers prompt logprobs only
        with ``logits_all=True``, which keeps a vocabulary-sized row for every position of the
        context (2.4 GB for Qwen2.5 at 4096 tokens) and computes the output layer for every prompt
        token; here only the reply's positions get logits, and the prompt's KV state is reused.
        """
        started = time.perf_counter()
        tokens = self.prompt_tokens(request)
        if len(tokens) > self._llm.n_ctx():
            raise PromptTooLongError(f"prompt and reply have {len(tokens)} tokens; the context window is {self._llm.n_ctx()}")
        head = _shared_length(self.prompt_tokens(request.model_copy(update={"assistant_prefix": ""})), tokens)
        if head >= len(tokens):
            raise RequestError("the reply to score has no tokens")
        head = max(head, 1)  # a template that renders nothing before the reply: its first token goes unscored
        reused = self._reusable_prefix(tokens)
        self._llm.n_tokens = min(reused, head - 1)
        if self._llm.n_tokens < head - 1:
            self._llm.eval(tokens[self._llm.n_tokens:head - 1])
        rows = self._eval_with_logits(tokens[head - 1:])
        scored = [self._logprob_entry(row, token, top_k=0) for row, token in zip(rows, tokens[head:], strict=False)]
        return Completion(text="", prefix_logprobs=tuple(scored), model=self.model_name, prompt_tokens=len(tokens),
                          completion_tokens=0, latency_s=time.perf_counter() - started, reused_prefix_tokens=reused)

    def _eval_with_logits(self, tokens: list[int]) -> list[np.ndarray]:
        """Evaluate ``tokens`` after the current state (as ``Llama.eval`` does), keeping every position's logits."""
        llm, rows = self._llm, []
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        for start in range(0, len(tokens), llm.n_batch):
            chunk = tokens[start:start + llm.n_batch]
            llm._batch.set_batch(batch=chunk, n_past=llm.n_tokens, logits_all=True)
            llm._ctx.decode(llm._batch)
            rows += [self._logits_row(i) for i in range(len(chunk))]
            llm.input_ids[llm.n_tokens:llm.n_tokens + len(chunk)] = chunk
            llm.n_tokens += len(chunk)
        return rows

    def _reusable_prefix(self, tokens: list[int]) -> int:
        if not self.prefix_reuse:
            self._llm.reset()
            return 0
        shared = _shared_length(list(self._llm.input_ids[: self._llm.n_tokens]), tokens)
        return min(shared, len(tokens) - 1)  # the last prompt token is always re-evaluated

    def _decode(self, tokens: list[int], request: Request, max_tokens: int):
        import llama_cpp

        generator = self._llm.generate(
            tokens, temp=request.temperature, top_p=request.top_p, top_k=0, min_p=0.0,
            typical_p=1.0, repeat_penalty=1.0, grammar=self._grammar(request),
        )
        generated: list[int] = []
        logprobs: list[TokenLogprob] = []
        finish = "length"
        vocab = self._llm._model.vocab
        text_so_far = b""
        for token in generator:
            if self._closing.is_set():
                generator.close()
                raise BackendError("the embedded model was stopped mid-generation (the run is ending); this "
                                   "call was not finished and is not cached")
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            if request.logprobs:
                logprobs.append(self._token_logprob(token, request.top_logprobs))
            generated.append(token)
            text_so_far += self._llm.detokenize([token], prev_tokens=tokens + generated[:-1])
            if request.stop and _cut_at_stop(text_so_far.decode("utf-8", errors="ignore"), request.stop)[1]:
                finish = "stop"
                break
            if len(generated) >= max_tokens:
                break
        generator.close()
        return generated, logprobs, finish

    def _token_logprob(self, token: int, top_k: int) -> TokenLogprob:
        """Log-softmax of the logits that produced ``token`` (the last position's row)."""
        return self._logprob_entry(self._logits_row(-1), token, top_k)

    def _logits_row(self, index: int) -> np.ndarray:
        """The logits at position ``index`` of the last decoded batch (a copy, in float64)."""
        return np.ctypeslib.as_array(self._llm._ctx.get_logits_ith(index), shape=(self._llm.n_vocab(),)).astype(np.float64)

    def _logprob_entry(self, logits: np.ndarray, token: int, top_k: int) -> TokenLogprob:
        """``token``'s log-softmax under ``logits``, with the ``top_k`` most likely alternatives."""
        log_norm = logits.max() + np.log(np.exp(logits - logits.max()).sum())
        top: tuple[TopLogprob, ...] = ()
        if top_k:
            best = np.argpartition(-logits, top_k)[:top_k]
            best = best[np.argsort(-logits[best])]
            top = tuple(TopLogprob(token=self._piece(int(t)), logprob=float(logits[t] - log_norm)) for t in best)
        return TokenLogprob(token=self._piece(token), logprob=float(logits[token] - log_norm), top=top)

    def _piece(self, token: int) -> str:
        return self._llm.detokenize([token]).decode("utf-8", errors="replace")

    def _grammar(self, request: Request) -> Any:
        fmt = request.response_format
        if fmt is None:
            return None
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        if fmt.type == "json":
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        if fmt.type == "json_schema":
            return LlamaGrammar.from_json_schema(json.dumps(fmt.json_schema), verbose=False)
        raise ConfigError("the embedded backend supports JSON and JSON-schema constraints, not regex")

    async def aclose(self) -> None:
        self._closing.set()  # a generation in flight stops at its next token
        self._executor.shutdown(wait=True)
        self._llm.close()


def default_threads() -> int:
    """The threads llama.cpp gets when neither ``n_threads`` nor ``JUDGELAB_THREADS`` says: the cores
    this process may use that other processes leave free right now, at least one.

    llama.cpp's threads meet at a barrier after every layer, so one thread descheduled by another
    process stalls all the others (issue 41: the demo ran 15 times slower on a loaded 2-core machine
    with a thread per core; bench/bench_threads.py measures it, docs/benchmarks.md "Threads on a
    busy machine"). Measured when the model loads, over a quarter of a second in which this process
    sleeps: the load average would count this process's own last minute (a second run right after a
    first would get one thread on an idle machine).
    """
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    busy = _busy_cores(cores)
    return max(1, min(len(cores), int(len(cores) - busy + 0.5)))


def _busy_cores(cores: list[int], window: float = 0.25) -> float:
    """How many of ``cores`` other processes keep busy, from two readings of /proc/stat ``window``
    seconds apart (0 where there is no /proc/stat: the machine is taken to be ours). Hand-written:
    psutil would do it, but this one reading is all judgelab needs of it."""
    def idle_and_total() -> tuple[float, float]:
        idle = total = 0.0
        with open("/proc/stat", encoding="ascii") as stat:
            for line in stat:
                name, *fields = line.split()
                if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
                    ticks = [float(f) for f in fields[:8]]  # user nice system idle iowait irq softirq steal
                    idle, total = idle + ticks[3] + ticks[4], total + sum(ticks)
        return idle, total

    try:
        idle0, total0 = idle_and_total()
        time.sleep(window)
        idle1, total1 = idle_and_total()
    except (OSError, ValueError, IndexError):
        return 0.0
    elapsed = total1 - total0
    return 0.0 if elapsed <= 0 else len(cores) * (1.0 - (idle1 - idle0) / elapsed)


def configured_threads() -> int | None:
    """``JUDGELAB_THREADS``: the threads llama.cpp uses (default: :func:`default_threads`), the same
    range as ``--threads`` (``limits.Threads``)."""
    value = os.environ.get("JUDGELAB_THREADS", "").strip()
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= MAX_THREADS:
        raise ConfigError(f"JUDGELAB_THREADS={value!r}: give a whole number of threads from 1 to {MAX_THREADS}")
    return int(value)


def _shared_length(a: list[int], b: list[int]) -> int:
    """How many leading tokens two token lists share (where the prompt ends and the reply starts,
    even when the tokenizer merges the prompt's last characters with the reply's first)."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared


def _cut_at_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    positions = [text.find(s) for s in stops if s and s in text]
    if not positions:
        return text, False
    return text[: min(positions)], True
