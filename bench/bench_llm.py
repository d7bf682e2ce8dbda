"""The LLM layer: embedded tokens/s with and without prefix reuse, cache hits/s, client overhead.

    .venv/bin/python -m bench.bench_llm            # full run (~15 min), writes docs/benchmarks.md
    .venv/bin/python -m bench.bench_llm --quick    # fewer repetitions (< 3 min), prints only

1. Embedded models: per-call latency, prompt-eval and generation tokens/s on a ~800-token judge
   prompt, with and without prefix reuse (two backends loaded side by side, calls interleaved).
2. Cache hits: 10,000 distinct cached requests served by ``Client.complete_all`` and by a loop of
   ``Client.complete`` (goal >= 20,000 calls/s); a stage breakdown + cProfile of the hit path.
3. Client overhead: ``Client`` against a local llama.cpp server at concurrency 8, divided by a bare
   ``openai.AsyncOpenAI`` loop with ``Semaphore(8)`` on the same requests (goal >= 0.97).

These 2-core machines are noisy (and other jobs may run at the same time), so every comparison is
a ratio of figures measured in the same run, interleaved, and summarised by medians.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime as dt
import io
import pstats
import random
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import DOC, bare_chat_loop, load_avg, machine_facts, write_doc_section
from bench.common import log as common_log
from judgelab.llm import models
from judgelab.llm.backends.base import Backend, Capabilities
from judgelab.llm.cache import CompletionCache
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Message, Request, TokenLogprob, TopLogprob, Usage

ROOT = Path(__file__).resolve().parent.parent
PRESET_ORDER = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")
CACHE_GOAL = 20_000.0
N_TURNS = 23  # dialogue length: ~800 prompt tokens with the Qwen tokenizer
OVERHEAD_GOAL = 0.97


# =============================================================================================
# A realistic judge prompt: instructions + criteria + output format, then a ~500-token dialogue
# and the ~60-token response being judged, at the end (Topical-Chat style, G-Eval style steps).
# =============================================================================================
JUDGE_SYSTEM = """You are an impartial expert evaluator of dialogue systems. You will see a conversation \
between A and B, then a candidate next response for B. Rate only the candidate response.

Criteria: naturalness (would a person say this here?), coherence (does it follow from the history and \
stay on topic?), engagingness (does it add a fact, opinion or question?), groundedness (are its facts \
correct and consistent with the conversation?). A wrong or off-topic response cannot score above 2.

Output format: "Justification:" followed by one or two sentences, then on the last line "Rating: [[X]]" \
with X an integer from 1 (very poor) to 5 (excellent)."""

TURNS = (
    "Did you know that the Great Barrier Reef is the largest living structure on Earth? You can even see it from space.",
    "I had heard that, yes. It is sad that so much of it has been bleached by warmer water over the last few decades.",
    "I have been reading about octopuses lately. They have three hearts and blue blood, which sounds like science fiction.",
    "That is wild. I also read that they can taste things with their arms, because the suckers have chemical receptors.",
    "Do you follow basketball at all? I was surprised to learn that the first game was played with a peach basket.",
    "A little. I remember that they had to climb a ladder to get the ball out of the basket after every single score.",
    "Speaking of sports, a golf ball has around three hundred and thirty six dimples, which help it fly farther.",
    "I never thought about why they have dimples. I guess the turbulence makes the drag smaller, which is counterintuitive.",
    "Have you ever been to Iceland? I read that there are no mosquitoes there at all, even though the neighbours have them.",
    "No, but I would love to go. The hot springs and the northern lights are both on my list for the next few years.",
    "Music is another thing I have been thinking about. Did you know that the piano was originally called the pianoforte?",
    "I did not know that. It makes sense though, because it can play both soft and loud, unlike the harpsichord before it.",
    "I watched a documentary about honeybees. A single colony can visit millions of flowers to make one jar of honey.",
    "Honey never spoils, right? Archaeologists found pots of it in Egyptian tombs that were still perfectly edible.",
    "Yes, that is one of my favourite facts. It is acidic and has very little water, so bacteria cannot grow in it.",
    "I am more of a movie person myself. The first feature film ever released with synchronised dialogue was in 1927.",
    "That was The Jazz Singer, I think. It is amazing how quickly the whole industry changed after that one film.",
    "Right, and a lot of silent film stars lost their careers because their voices did not match their screen image.",
    "Do you read much science fiction? Some authors predicted video calls and tablets decades before they existed.",
    "I love that. Arthur C. Clarke wrote about satellites for communication before any satellite had been launched.",
    "On a different note, I read that bananas are berries but strawberries are not, at least botanically speaking.",
    "Botanists have strange definitions. Apparently a pumpkin and a cucumber are berries too, which I find funny.",
    "Have you heard about the city in Switzerland where it is illegal to own just one guinea pig because they get lonely?",
    "Yes! I think that shows how seriously some places take animal welfare. I wish more countries did the same.",
    "Space is my favourite topic. A day on Venus is longer than a year on Venus, because it rotates so slowly.",
    "I find that hard to picture. The sun would rise in the west there too, since it spins in the opposite direction.",
    "Do you play any board games? Chess has more possible games than there are atoms in the observable universe.",
    "I play a bit. It is impressive that computers beat the world champion back in 1997 with Deep Blue.",
    "I read that the shortest war in history lasted only about thirty eight minutes, between Britain and Zanzibar.",
    "That is astonishing. I wonder how anyone even measured the time so precisely back then in the nineteenth century.",
    "Cooking is my weekend hobby. Did you know that carrots were originally purple before the orange variety was bred?",
    "I had no idea. I think the orange ones became popular in the Netherlands, maybe for patriotic reasons.",
)
CANDIDATES = (
    "That is a great point about the reef. I think it is worrying, and I wonder whether the coral can recover if the "
    "oceans cool down again. Have you read anything about the restoration projects that try to regrow it?",
    "I actually prefer cats to dogs. They are much easier to look after and they do not need to be walked every day, "
    "which suits my schedule since I work long hours during the week.",
    "Yes, and I read that the dimples reduce drag by about half compared with a smooth ball. Do you play golf "
    "yourself, or do you just watch the big tournaments on television?",
    "The peach basket story is true, but the ladder part is a myth; they used a long pole to push the ball out. "
    "Either way, it is funny to imagine how slow those early games must have been.",
    "Honey does last a very long time. I keep a jar in my kitchen that is at least five years old and it still "
    "tastes fine, although it has crystallised a little. Do you cook with honey often?",
    "Venus is fascinating. I also read that its surface is hot enough to melt lead, even though Mercury is closer "
    "to the sun, because its thick atmosphere traps so much heat.",
    "I think the Jazz Singer was released in 1935, and it was mostly silent anyway. But I agree that sound changed "
    "everything for the actors of that time, especially the ones with strong accents.",
    "Purple carrots sound delicious. I should look for them at the farmers market this weekend. Do you have a "
    "favourite recipe that uses carrots, maybe a soup or a cake?",
)


def dialogue(seed: int, n_turns: int) -> str:
    """A conversation of ``n_turns`` turns drawn from the pool; different seeds differ from the first turn."""
    rng = random.Random(seed)
    order = list(range(len(TURNS)))
    rng.shuffle(order)
    order = order[:n_turns] if n_turns <= len(order) else (order * 2)[:n_turns]
    return "\n".join(f"{'AB'[i % 2]}: {TURNS[t]}" for i, t in enumerate(order))


def judge_request(source_seed: int, candidate: int, max_tokens: int = 32, n_turns: int = N_TURNS,
                  **params: Any) -> Request:
    user = (
        "Conversation history:\n"
        f"{dialogue(source_seed, n_turns)}\n\n"
        f"Candidate response:\nB: {CANDIDATES[candidate % len(CANDIDATES)]}\n\n"
        "Rate the candidate response following the evaluation steps, then give the rating in the required format."
    )
    # The reply is forced to start with "Justification:" (assistant_prefix), as judges do to pin the
    # format; without it qwen2.5-coder-0.5b answers "Rating: 4" in 4 tokens and there is no generation
    # speed to measure.
    params.setdefault("assistant_prefix", "Justification:")
    return Request(
        messages=(Message(role="system", content=JUDGE_SYSTEM), Message(role="user", content=user)),
        temperature=0.0, max_tokens=max_tokens, **params,
    )


# =============================================================================================
# Small helpers
# =============================================================================================
def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine() -> dict[str, str]:
    return machine_facts()


def load() -> str:
    return load_avg(2)


def log(message: str) -> None:
    common_log(message, periods=2)


def fmt(value: float, digits: int = 2) -> str:
    if value != value:  # NaN
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


# =============================================================================================
# 1. Embedded models: latency, tokens/s, prefix reuse
# =============================================================================================
@dataclass
class CallStats:
    wall_s: float
    prompt_tokens: int
    reused: int
    completion_tokens: int
    p_eval_ms: float  # llama.cpp perf counters: time and tokens of the batched prompt evaluation
    n_p_eval: int
    eval_ms: float  # ... and of the one-token generation steps
    n_eval: int


@dataclass
class ModelResult:
    model: str
    prompt_tokens: int
    load_s: float
    # (scenario, reuse flag) -> calls
    calls: dict[tuple[str, bool], list[CallStats]] = field(default_factory=dict)
    load_avg: str = ""


SCENARIOS = {
    "items": "different items, same instructions",
    "outputs": "several outputs of one source",
}


def _perf_reset(backend: Any) -> None:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(backend._llm._ctx.ctx)


def _perf_read(backend: Any) -> tuple[float, int, float, int]:
    import llama_cpp

    data = llama_cpp.llama_perf_context(backend._llm._ctx.ctx)
    return data.t_p_eval_ms, data.n_p_eval, data.t_eval_ms, data.n_eval


def _timed_call(client: Client, request: Request) -> CallStats:
    backend = client.backend
    _perf_reset(backend)
    started = time.perf_counter()
    completion = client.complete(request)[0]
    wall = time.perf_counter() - started
    p_ms, n_p, e_ms, n_e = _perf_read(backend)
    return CallStats(wall, completion.prompt_tokens, completion.reused_prefix_tokens,
                     completion.completion_tokens, p_ms, n_p, e_ms, n_e)


def scenario_requests(scenario: str, n_calls: int, max_tokens: int, offset: int) -> list[Request]:
    """n_calls + 1 requests; the first primes the KV cache and is not timed."""
    if scenario == "items":  # same instructions, a different dialogue and response each time
        return [judge_request(1000 + offset + i, offset + i, max_tokens) for i in range(n_calls + 1)]
    # several outputs (candidate responses) of the same source dialogue
    return [judge_request(500 + offset, offset + i, max_tokens) for i in range(n_calls + 1)]


def bench_embedded(preset: str, n_calls: int, max_tokens: int) -> ModelResult:
    from judgelab.llm.backends.embedded import EmbeddedBackend

    log(f"embedded {preset}: loading two instances (prefix_reuse False / True)")
    started = time.perf_counter()
    plain = Client(EmbeddedBackend(preset, prefix_reuse=False), cache=None)
    load_s = time.perf_counter() - started
    reuse = Client(EmbeddedBackend(preset, prefix_reuse=True), cache=None)
    clients = {False: plain, True: reuse}
    probe = judge_request(0, 0, max_tokens)
    result = ModelResult(preset, len(plain.backend.prompt_tokens(probe)), load_s)
    load_before = load()
    try:
        for client in clients.values():  # warm-up, not timed: pages in the weights, allocates buffers
            client.complete(Request.of("Say OK.", max_tokens=2))
        for s_index, scenario in enumerate(SCENARIOS):
            requests = scenario_requests(scenario, n_calls, max_tokens, offset=10 * s_index)
            # Not timed: the reuse backend now holds a previous request, as in a run (the other one resets
            # its KV cache on every call, so it needs no priming).
            reuse.complete(requests[0])
            for i, request in enumerate(requests[1:]):
                # Interleave the two backends call by call, alternating which goes first.
                order = (False, True) if i % 2 == 0 else (True, False)
                for flag in order:
                    stats = _timed_call(clients[flag], request)
                    result.calls.setdefault((scenario, flag), []).append(stats)
            log(f"  {preset} {scenario}: done")
    finally:
        plain.close()
        reuse.close()
    result.load_avg = f"{load_before} -> {load()}"
    return result


def embedded_tables(results: list[ModelResult]) -> str:
    lines = [
        "**Per call, no prefix reuse** (the full prompt evaluated every call; greedy; medians over all "
        "no-reuse calls of both scenarios)",
        "",
        "| Model | Prompt tokens | Generated tokens | Latency (s) | Prompt eval (s) | Prompt eval tok/s | "
        "Generation tok/s | Load avg (1m/5m) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        calls = r.calls.get(("items", False), []) + r.calls.get(("outputs", False), [])
        lines.append(
            f"| {r.model} | {r.prompt_tokens} | {median([c.completion_tokens for c in calls]):.0f} "
            f"| {fmt(median([c.wall_s for c in calls]))} "
            f"| {fmt(median([c.p_eval_ms / 1000 for c in calls]))} "
            f"| {fmt(median([c.n_p_eval / (c.p_eval_ms / 1000) for c in calls if c.p_eval_ms]), 0)} "
            f"| {fmt(median([c.n_eval / (c.eval_ms / 1000) for c in calls if c.eval_ms]), 1)} | {r.load_avg} |"
        )
    lines += [
        "",
        "**Prefix reuse** (`EmbeddedBackend(prefix_reuse=True)` vs `False`, same requests, calls interleaved; "
        "speed-up = median latency without / median latency with; paired: latency without / with for the "
        "same request)",
        "",
        "| Model | Consecutive requests share | Prompt tokens | Reused tokens | Latency without (s) | "
        "Latency with (s) | Speed-up | Paired speed-up (median, range) | Prompt eval without (s) | "
        "Prompt eval with (s) |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in results:
        for scenario, label in SCENARIOS.items():
            without = r.calls.get((scenario, False), [])
            with_ = r.calls.get((scenario, True), [])
            if not without or not with_:
                continue
            lat_without = median([c.wall_s for c in without])
            lat_with = median([c.wall_s for c in with_])
            paired = [a.wall_s / b.wall_s for a, b in zip(without, with_, strict=True)]  # same request
            lines.append(
                f"| {r.model} | {label} | {median([c.prompt_tokens for c in with_]):.0f} "
                f"| {median([c.reused for c in with_]):.0f} | {fmt(lat_without)} | {fmt(lat_with)} "
                f"| **{lat_without / lat_with:.2f}x** | {median(paired):.2f}x ({min(paired):.2f}-{max(paired):.2f}) "
                f"| {fmt(median([c.p_eval_ms / 1000 for c in without]))} "
                f"| {fmt(median([c.p_eval_ms / 1000 for c in with_]))} |"
            )
    return "\n".join(lines)


# =============================================================================================
# 2. Cache-hit throughput
# =============================================================================================
class NeverCalledBackend(Backend):
    """Stands in for a model: the cache benchmark must never reach it."""

    identity = "bench:never-called:v1"
    model_name = "never-called"
    capabilities = Capabilities(logprobs=True, max_top_logprobs=20, assistant_prefix=True, json_schema=True)
    max_concurrency = 8

    def __init__(self) -> None:
        self.calls = 0

    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        self.calls += 1
        raise AssertionError("the cache benchmark reached the backend: a cache miss")


def cached_completion(i: int, with_logprobs: bool) -> Completion:
    text = f"The response stays on topic and adds a relevant fact, but repeats an earlier turn. Rating: [[{1 + i % 5}]]"
    logprobs = None
    if with_logprobs:  # a logprob-scored judge: one rating token with its top-20 alternatives
        top = tuple(TopLogprob(token=str(d), logprob=-0.1 * d - 0.01 * (i % 7)) for d in range(1, 21))
        logprobs = (TokenLogprob(token=str(1 + i % 5), logprob=-0.2, top=top),)
    return Completion(text=text, logprobs=logprobs, finish_reason="stop", model="qwen2.5-coder-1.5b",
                      prompt_tokens=812, completion_tokens=24, latency_s=3.2)


@dataclass
class CacheResult:
    label: str
    n: int
    fill_s: float
    request_bytes: int
    payload_bytes: int
    all_runs: list[float]  # complete_all, seconds per run
    loop_runs: list[float]  # per-call complete loop
    stages: dict[str, float]  # seconds for n requests, stage by stage
    whatif: dict[str, tuple[float, str | None]]  # per-call loop costs -> (seconds for n calls, unused)
    profile: str = ""
    load_avg: str = ""


def _fill_cache(path: Path, backend: Backend, requests: list[Request], with_logprobs: bool) -> float:
    started = time.perf_counter()
    with CompletionCache(path) as cache:
        for i, request in enumerate(requests):
            cache.put(request.cache_key(backend.identity, 0), backend.identity, request.canonical_json(),
                      cached_completion(i, with_logprobs))
        assert len(cache) == len(requests)
    return time.perf_counter() - started


def _check_results(results: list[list[Completion]], n: int) -> None:
    assert len(results) == n
    for i, samples in enumerate(results):
        assert len(samples) == 1 and samples[0].cached, f"request {i} was not served from the cache"
        assert samples[0].text.endswith(f"[[{1 + i % 5}]]"), f"request {i} got another request's completion"


def _best(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Fastest of ``repeat`` timings of ``fn()`` (micro-stages: the minimum is the least noisy estimate)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _stage_breakdown(path: Path, backend: Backend, requests: list[Request]
                     ) -> tuple[dict[str, float], dict[str, tuple[float, str | None]]]:
    """The hit path of ``complete_all`` cut into its stages through the public API, each timed alone on
    this thread (best of 3, seconds for all requests); plus what-ifs (not current code) for the per-call
    ``complete`` loop."""
    stages: dict[str, float] = {}
    whatif: dict[str, tuple[float, str | None]] = {}
    client = Client(backend, cache=None)  # for check() and the thread hop; the cache is driven directly
    try:
        stages["Client.check"] = _best(lambda: [client.check(r) for r in requests])

        async def noop() -> None:
            return None

        hop = _best(lambda: [asyncio.run_coroutine_threadsafe(noop(), client._loop).result() for _ in requests], 1)
    finally:
        client.close()
    canonical = _best(lambda: [r.canonical_json() for r in requests])
    stages["Request.canonical_json"] = canonical
    keyed = _best(lambda: [r.cache_key(backend.identity, 0) for r in requests])
    stages["Request.cache_key minus canonical_json (format, encode, sha256)"] = max(0.0, keyed - canonical)
    keys = [r.cache_key(backend.identity, 0) for r in requests]
    with CompletionCache(path) as cache:
        found = cache.get_many(keys)
        assert len(found) == len(keys)
        get_many = _best(lambda: cache.get_many(keys))
        payloads = [c.model_dump_json(exclude={"cached"}) for c in found.values()]
        parse = _best(lambda: [Completion.model_validate_json(p) for p in payloads])
        stages["CompletionCache.get_many: SQLite query + fetch (get_many minus parsing)"] = max(0.0, get_many - parse)
        stages["CompletionCache.get_many: Completion.model_validate_json"] = parse

        def mark() -> None:  # what Client._from_cache does per hit
            usage = Usage()
            for key in keys:
                found[key].cached = True
                usage.cache_hits += 1

        stages["Client._from_cache (mark cached, count hit)"] = _best(mark)
        # The per-call loop: every Client.complete hops to the client's loop thread and makes its own query.
        single = _best(lambda: [cache.get_many([k]) for k in keys], 1)
    whatif["Client.complete loop: thread hop per call (run_coroutine_threadsafe(noop).result())"] = (hop, None)
    whatif["Client.complete loop: one get_many([key]) query per call, parsing included"] = (single, None)
    return stages, whatif


def _profile_complete_all(client: Client, requests: list[Request]) -> str:
    """cProfile of one ``complete_all`` on the client's own loop thread (where the work happens)."""
    profiler = cProfile.Profile()

    async def run() -> None:
        profiler.enable()
        try:
            await client.acomplete_all(requests)  # awaited directly: we are on the client's loop
        finally:
            profiler.disable()

    asyncio.run_coroutine_threadsafe(run(), client._loop).result()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(14)
    text = out.getvalue()
    # Keep the table only, with paths shortened.
    text = text[text.find("ncalls"):] if "ncalls" in text else text
    return re.sub(r"\S*/(site-packages|src|lib/python3\.\d+)/", "", text).rstrip()


def bench_cache(n: int, reps: int, loop_reps: int, with_logprobs: bool, profile: bool) -> CacheResult:
    label = "judge text completion" if not with_logprobs else "logprob judge (1 token, top-20 logprobs)"
    log(f"cache: building {n:,} distinct requests ({label})")
    backend = NeverCalledBackend()
    requests = [judge_request(i, i, max_tokens=64, logprobs=with_logprobs,
                              top_logprobs=20 if with_logprobs else 0) for i in range(n)]
    assert len({r.canonical_json() for r in requests}) == n, "requests must be distinct"
    load_before = load()
    with tempfile.TemporaryDirectory(prefix="judgelab-bench-cache-") as tmp:
        path = Path(tmp) / "cache.sqlite"
        fill_s = _fill_cache(path, backend, requests, with_logprobs)
        payload_bytes = len(cached_completion(0, with_logprobs).model_dump_json(exclude={"cached"}))
        all_runs: list[float] = []
        loop_runs: list[float] = []
        # Alternate complete_all and the per-call loop; each run opens the cache afresh, as a rerun would.
        for rep in range(max(reps, loop_reps)):
            if rep < reps:
                with Client(backend, cache=CompletionCache(path)) as client:
                    t = time.perf_counter()
                    results = client.complete_all(requests)
                    all_runs.append(time.perf_counter() - t)
                    _check_results(results, n)
                    assert client.usage.cache_hits == n and client.usage.calls == 0
            if rep < loop_reps:
                with Client(backend, cache=CompletionCache(path)) as client:
                    t = time.perf_counter()
                    results = [client.complete(r) for r in requests]
                    loop_runs.append(time.perf_counter() - t)
                    _check_results(results, n)
        stages, whatif = _stage_breakdown(path, backend, requests)
        profile_text = ""
        if profile:
            with Client(backend, cache=CompletionCache(path)) as client:
                profile_text = _profile_complete_all(client, requests)
    assert backend.calls == 0, f"the backend was called {backend.calls} times"
    return CacheResult(label, n, fill_s, len(requests[0].canonical_json()), payload_bytes, all_runs, loop_runs,
                       stages, whatif, profile_text, f"{load_before} -> {load()}")


def cache_tables(results: list[CacheResult]) -> str:
    lines = [
        "| Cached completion | Requests | Request JSON (bytes) | `complete_all` calls/s (median) | runs (calls/s) "
        "| `complete` loop calls/s (median) | Goal (>= 20,000/s) |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for r in results:
        rate_all = [r.n / s for s in r.all_runs]
        rate_loop = [r.n / s for s in r.loop_runs]
        ok = "met" if median(rate_all) >= CACHE_GOAL else "**missed**"
        lines.append(
            f"| {r.label} | {r.n:,} | {r.request_bytes:,} | **{fmt(median(rate_all))}** "
            f"| {', '.join(fmt(x) for x in rate_all)} | {fmt(median(rate_loop))} | {ok} (complete_all) |"
        )
    for r in results:
        total = sum(r.stages.values())
        lines += [
            "",
            f"Where the time of one cache hit goes ({r.label}): the hit path of `complete_all` cut into its "
            f"stages, each timed alone over the {r.n:,} requests on one thread without the event loop (best of 3):",
            "",
            "| Stage | µs per call | Share |",
            "|---|---:|---:|",
        ]
        for name, seconds in sorted(r.stages.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {name} | {seconds / r.n * 1e6:.1f} | {seconds / total:.0%} |")
        lines.append(f"| **sum** (=> at most {fmt(r.n / total)} calls/s) | {total / r.n * 1e6:.1f} | |")
        loop = {name: seconds for name, (seconds, _) in r.whatif.items()}
        if loop:
            per_call = (sum(loop.values()) + total - sum(v for k, v in r.stages.items() if "get_many" in k)) / r.n
            lines += [
                "",
                "The per-call `Client.complete` loop replaces the batched lookup by one query per call and adds a "
                "hop to the client's loop thread (each measured alone, same run):",
                "",
                "| Per-call cost | µs per call |",
                "|---|---:|",
            ]
            for name, seconds in loop.items():
                lines.append(f"| {name} | {seconds / r.n * 1e6:.1f} |")
            lines.append(f"| **sum with check, key and marking** (=> at most {fmt(1 / per_call)} calls/s) "
                         f"| {per_call * 1e6:.1f} |")
    return "\n".join(lines)


# =============================================================================================
# 3. Client overhead against a real llama.cpp server
# =============================================================================================
SENTENCES = (
    "The committee postponed its decision until more evidence could be gathered.",
    "She reads two newspapers every morning before going to work.",
    "Him and me was going to the store yesterday for buy some bread.",
    "The river flooded the lower fields after three days of heavy rain.",
    "Colourless green ideas sleep furiously on the quiet hill.",
    "Our train were late because of a signal failure near the station.",
    "A good summary keeps the facts and leaves out the details.",
    "The children played in the garden until it got dark outside.",
)


def short_prompt(i: int) -> str:
    return (f"Rate the fluency of this sentence from 1 to 5. Answer with one digit.\n"
            f"Sentence {i}: {SENTENCES[i % len(SENTENCES)]}")


@dataclass
class OverheadResult:
    model: str
    n_requests: int
    concurrency: int
    bare_s: list[float]
    ours_s: list[float]
    pair_ratios: list[float]
    bare_cpu_s: list[float]  # client-process CPU time (all threads) during the timed batch
    ours_cpu_s: list[float]
    same_outputs: str
    order: list[str]
    load_avg: str = ""


def _ours_run(base_url: str, alias: str, prompts: list[str], warm: list[str], max_tokens: int,
              concurrency: int) -> tuple[float, float, list[str]]:
    from judgelab.llm.resolve import make_backend

    backend = make_backend(base_url, model_name=alias)
    with Client(backend, cache=None, max_concurrency=concurrency) as client:
        client.complete_all([Request.of(p, max_tokens=max_tokens) for p in warm])
        requests = [Request.of(p, max_tokens=max_tokens) for p in prompts]  # temperature 0, seed 0
        started, cpu = time.perf_counter(), time.process_time()
        results = client.complete_all(requests)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert client.usage.calls == len(prompts) + len(warm)
    return elapsed, cpu, [r[0].text for r in results]


def bench_overhead(pairs: int, n_requests: int, max_tokens: int, concurrency: int = 8) -> OverheadResult:
    from judgelab.llm.server import LlamaServer

    model = "smollm2-135m"
    path = models.resolve_preset_path(model)
    prompts = [short_prompt(i) for i in range(n_requests)]
    warm = [short_prompt(10_000 + i) for i in range(concurrency)]
    bare: list[float] = []
    ours: list[float] = []
    ratios: list[float] = []
    bare_cpu: list[float] = []
    ours_cpu: list[float] = []
    order: list[str] = []
    matches = []
    log(f"overhead: starting llama.cpp server with {model}")
    load_before = load()
    with tempfile.TemporaryDirectory(prefix="judgelab-bench-server-") as tmp, \
            LlamaServer(path, n_threads=SERVER_THREADS, log_path=Path(tmp) / "server.log") as server:
        for pair in range(pairs):
            # ABBA: bare first in even pairs, ours first in odd ones, so drift does not favour either.
            sequence = ("bare", "ours") if pair % 2 == 0 else ("ours", "bare")
            outputs: dict[str, list[str]] = {}
            times: dict[str, float] = {}
            cpus: dict[str, float] = {}
            for who in sequence:
                if who == "bare":
                    times[who], cpus[who], outputs[who] = asyncio.run(bare_chat_loop(
                        server.base_url, server.model_alias, prompts, warm, max_tokens, concurrency))
                else:
                    times[who], cpus[who], outputs[who] = _ours_run(
                        server.base_url, server.model_alias, prompts, warm, max_tokens, concurrency)
                order.append(who)
            bare.append(times["bare"])
            ours.append(times["ours"])
            bare_cpu.append(cpus["bare"])
            ours_cpu.append(cpus["ours"])
            ratios.append(times["bare"] / times["ours"])  # throughput ours / throughput bare
            matches.append(sum(a == b for a, b in zip(outputs["bare"], outputs["ours"], strict=True)))
            log(f"  pair {pair + 1}/{pairs}: bare {n_requests / times['bare']:.1f}/s, "
                f"ours {n_requests / times['ours']:.1f}/s, ratio {ratios[-1]:.3f}")
    same = f"{min(matches)}-{max(matches)} of {n_requests}" if min(matches) != max(matches) else f"{matches[0]} of {n_requests}"
    return OverheadResult(model, n_requests, concurrency, bare, ours, ratios, bare_cpu, ours_cpu, same, order,
                          f"{load_before} -> {load()}")


def overhead_table(r: OverheadResult) -> str:
    bare_rate = [r.n_requests / s for s in r.bare_s]
    ours_rate = [r.n_requests / s for s in r.ours_s]
    ratio_of_medians = median(ours_rate) / median(bare_rate)
    ok = "met" if ratio_of_medians >= OVERHEAD_GOAL else "**missed**"
    return "\n".join([
        "| Setting | Bare `AsyncOpenAI` + `Semaphore(8)` req/s (median) | judgelab `Client` req/s (median) "
        "| Ratio of medians | Median of per-pair ratios | Per-pair ratios | Goal (>= 0.97) |",
        "|---|---:|---:|---:|---:|---|---|",
        f"| {r.model} via `python -m llama_cpp.server`, {r.n_requests} requests x {len(r.bare_s)} pairs, "
        f"concurrency {r.concurrency} | {fmt(median(bare_rate))} | {fmt(median(ours_rate))} "
        f"| **{ratio_of_medians:.3f}** | {median(r.pair_ratios):.3f} "
        f"| {', '.join(f'{x:.3f}' for x in r.pair_ratios)} | {ok} |",
        "",
        f"Client-process CPU time per request (all threads, timed batch; median): bare "
        f"{median(r.bare_cpu_s) / r.n_requests * 1e3:.2f} ms, judgelab {median(r.ours_cpu_s) / r.n_requests * 1e3:.2f} ms. "
        f"Identical outputs (bare vs ours, same greedy requests) per pair: {r.same_outputs}. "
        f"Run order: {', '.join(r.order)}. Load average (1m/5m) before -> after: {r.load_avg}.",
    ])


# =============================================================================================
# Report
# =============================================================================================
@dataclass
class Settings:
    quick: bool
    presets: tuple[str, ...]
    n_calls: int
    max_tokens: int
    cache_n: int
    cache_reps: int
    cache_loop_reps: int
    pairs: int
    n_requests: int


def settings(args: argparse.Namespace) -> Settings:
    presets = tuple(args.models.split(",")) if args.models else PRESET_ORDER
    if args.quick:
        return Settings(True, presets, n_calls=1, max_tokens=32, cache_n=10_000, cache_reps=2,
                        cache_loop_reps=1, pairs=2, n_requests=32)
    return Settings(False, presets, n_calls=6, max_tokens=32, cache_n=10_000, cache_reps=7,
                    cache_loop_reps=3, pairs=6, n_requests=64)


def render(s: Settings, command: str, info: dict[str, str], started: dt.datetime, duration_s: float,
           embedded: list[ModelResult], caches: list[CacheResult], overhead: OverheadResult | None) -> str:
    parts = [
        "## LLM layer (`bench/bench_llm.py`)",
        "",
        f"Command: `{command}` — run {started:%Y-%m-%d %H:%M} UTC, took {duration_s / 60:.1f} min"
        f"{' (quick: fewer repetitions)' if s.quick else ''}.",
        "",
        f"Machine: {info['nproc']} cores ({info['cpu']}), {info['ram']} RAM, no GPU; Python {info['python']}, "
        f"llama-cpp-python {info['llama_cpp_python']} (portable build, `GGML_NATIVE=OFF`), openai {info['openai']}.",
        "",
        "These 2-core virtual machines are noisy, and other jobs (test suites, package builds) may have been "
        "running during the measurement: the load averages are printed next to each figure. Compare the "
        "**ratios** (measured in the same run, interleaved, medians), not absolute numbers across runs.",
        "",
    ]
    if embedded:
        prompt_counts = ", ".join(f"{r.model}: {r.prompt_tokens}" for r in embedded)
        parts += [
            "### Embedded models: latency, tokens/s, prefix reuse",
            "",
            f"A judge prompt (system: instructions, four criteria, output format; "
            f"user: a dialogue of {N_TURNS} turns and the candidate response to rate, at the end; the reply is "
            f"forced to start with `Justification:`), {s.max_tokens} tokens generated greedily, no cache, through `Client.complete`; prompt tokens by each model's tokenizer "
            f"({prompt_counts}). {s.n_calls} timed calls per configuration and scenario after an untimed "
            "warm-up and an untimed priming call of the reuse backend; the two backends (`prefix_reuse=False` / `True`) are loaded side by side and called "
            "alternately with the same requests. Prompt-eval and generation times are llama.cpp's own perf "
            "counters for each call; latency is wall time of `Client.complete`.",
            "",
            embedded_tables(embedded),
            "",
            "\"Different items, same instructions\": each request has its own dialogue and response, so only the "
            "system prompt and chat-template header are shared. \"Several outputs of one source\": the same "
            "dialogue with different candidate responses (several systems' outputs for one source), so "
            "everything up to the candidate is shared. Ordering work so that such requests are consecutive is "
            "what the prefix-reuse speed-up pays for.",
            "",
        ]
    if caches:
        parts += [
            "### Cache-hit throughput",
            "",
            f"{s.cache_n:,} distinct judge requests (~800-token prompts) stored with `CompletionCache.put` in an "
            "SQLite file on disk; every run opens the cache afresh (as a rerun would) and serves all requests "
            "from it. The backend is a stub that fails if called, and the benchmark asserts it was called 0 "
            f"times. `complete_all`: {s.cache_reps} runs; per-call `Client.complete` loop: {s.cache_loop_reps} "
            f"run(s). Load average (1m/5m) before -> after: {caches[0].load_avg}.",
            "",
            cache_tables(caches),
            "",
        ]
        prof = next((c.profile for c in caches if c.profile), "")
        if prof:
            parts += [
                f"<details><summary>cProfile of one <code>complete_all</code> over {s.cache_n:,} cached requests "
                "(on the client's loop thread, by own time)</summary>",
                "",
                "```",
                prof,
                "```",
                "</details>",
                "",
            ]
    if overhead is not None:
        parts += [
            "### Client overhead against a local llama.cpp server",
            "",
            f"`LlamaServer` (`python -m llama_cpp.server`, {overhead.model}, `n_threads={SERVER_THREADS}` so the "
            "server has one core and the client the other; the server answers one request at a time) on "
            f"127.0.0.1; {overhead.n_requests} "
            f"short requests (a one-line rating prompt, `max_tokens={SHORT_MAX_TOKENS}`, temperature 0, seed 0) "
            f"at concurrency {overhead.concurrency}. judgelab: `Client(make_backend(base_url, model_name=...), "
            "cache=None, max_concurrency=8).complete_all`; bare: one `openai.AsyncOpenAI` (`max_retries=0`) with "
            "`asyncio.Semaphore(8)` and `gather`, same request bodies. Each run makes a fresh client and sends "
            f"{overhead.concurrency} warm-up requests before the timed batch; runs alternate ABBA. "
            "Ratio = judgelab throughput / bare throughput. The server's own compute time per request varies by "
            "several percent from run to run on a shared 2-core machine, which is the spread of the per-pair ratios "
            "(in either direction); the client-process CPU time per request is the direct measure of what the "
            "layer adds.",
            "",
            overhead_table(overhead),
            "",
        ]
    return "\n".join(parts).rstrip() + "\n"


SHORT_MAX_TOKENS = 8
# The server gets one core, the clients the other: on 2 cores a 2-thread server and its clients would
# fight over the same cores (ggml threads spin-wait), which measures scheduling luck, not overhead.
SERVER_THREADS = 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_llm", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 3 minutes); prints only")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md even with --quick")
    parser.add_argument("--no-write", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--models", help="comma-separated presets (default: all three)")
    parser.add_argument("--only", choices=("embedded", "cache", "overhead"), action="append",
                        help="run only these parts (repeatable)")
    args = parser.parse_args(argv)
    s = settings(args)
    parts = set(args.only or ("embedded", "cache", "overhead"))
    command = ".venv/bin/python -m bench.bench_llm" + (" " + shlex.join(argv if argv is not None else sys.argv[1:])
                                                       if (argv if argv is not None else sys.argv[1:]) else "")
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    info = machine()
    log(f"machine: {info}")

    missing = [p for p in s.presets if not models.is_installed(p)]
    if "embedded" in parts and missing:
        log(f"presets not installed, skipped: {', '.join(missing)} (judgelab models install NAME)")
    embedded = []
    if "embedded" in parts:
        for preset in s.presets:
            if preset in missing:
                continue
            embedded.append(bench_embedded(preset, s.n_calls, s.max_tokens))
    caches = []
    if "cache" in parts:
        caches.append(bench_cache(s.cache_n, s.cache_reps, s.cache_loop_reps, with_logprobs=False, profile=True))
        if not s.quick:
            caches.append(bench_cache(s.cache_n, max(3, s.cache_reps // 2), 1, with_logprobs=True, profile=False))
    overhead = None
    if "overhead" in parts:
        if models.is_installed("smollm2-135m"):
            overhead = bench_overhead(s.pairs, s.n_requests, SHORT_MAX_TOKENS)
        else:
            log("smollm2-135m not installed: client-overhead benchmark skipped")

    section = render(s, command, info, started, time.perf_counter() - t0, embedded, caches, overhead)
    print(section)
    if (not s.quick or args.write) and not args.no_write:
        heading, body = section.split("\n", 1)  # the heading above the markers: see write_doc_section
        write_doc_section("bench_llm", body, heading=heading)
        log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
