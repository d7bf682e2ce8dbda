"""What the reliability tests and benchmarks share: small items, a fast judge, a client for a server."""

from __future__ import annotations

import json
from pathlib import Path

from judgelab.data.item import Item
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend
from judgelab.llm.client import Client
from judgelab.strategy import Strategy

_TOPICS = ("a bike lane plan", "a library opening", "a flood warning", "a school budget", "a bus strike",
           "a new park", "a bridge repair", "a water price rise", "a museum exhibit", "a storm clean-up")


def make_items(n: int) -> list[Item]:
    """``n`` distinct short summaries with a human coherence score (so prompts and answers stay short)."""
    return [Item(id=f"it-{i:04d}", source=f"News item {i}: the council discussed {_TOPICS[i % len(_TOPICS)]}.",
                 output=f"Summary {i}: the council talked about {_TOPICS[(i * 7) % len(_TOPICS)]}.",
                 scores={"coherence": 1 + i % 5}, group_id=f"g{i % 7}")
            for i in range(n)]


def fast_judge(max_tokens: int = 8) -> PromptedJudge:
    """Rate first, no explanation, a short reply: one cheap call per item."""
    return PromptedJudge(aspect="coherence", family="summarisation",
                         criteria="Coherence (1-5): the summary is well organised and reads as one whole.",
                         strategy=Strategy(scale=5, cot="none"), max_tokens=max_tokens)


def server_client(base_url: str, cache: Path | None, *, timeout: float = 4.0, concurrency: int = 2,
                  max_attempts: int = 12, api_key: str | None = None) -> Client:
    """A client for the llama.cpp server (through the proxy) with short back-off, so faulty runs stay fast.

    The timeout is well above one call's latency so that only the proxy's stalls time out (a
    call the server finishes after the client gave up is paid at the server but never received).
    The call deadline leaves room for every attempt (these runs measure retries, not the deadline:
    a request that meets three stalls must still be retried to its answer).
    """
    backend = OpenAICompatibleBackend("smollm", base_url=base_url, timeout=timeout, max_concurrency=concurrency,
                                      api_key=api_key)
    return Client(backend, cache=cache, max_attempts=max_attempts, backoff_initial=0.05, backoff_max=0.5,
                  call_deadline=timeout * (max_attempts + 1))


def calibrated_timeout(base_url: str, floor: float = 4.0, samples: int = 3) -> float:
    """A client timeout well above what one judge call takes on this machine right now (a shared CI
    machine can be slow): eight times the median of ``samples`` calls made after one warm-up call
    (the first call pays for loading and is not typical), at least ``floor`` seconds. Stalls last
    longer than this."""
    import statistics
    import time

    judge = fast_judge()
    with server_client(base_url, None, timeout=600, concurrency=1) as client:
        judge.run(make_items(1), client)
        durations = []
        for item in make_items(samples + 1)[1:]:
            started = time.perf_counter()
            judge.run([item], client)
            durations.append(time.perf_counter() - started)
    return max(floor, 8 * statistics.median(durations))


def judged_ids(run_dir: Path) -> list[str]:
    """Item ids in the order of the lines of judgments.jsonl (duplicates kept, so they can be caught)."""
    lines = (run_dir / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["item_id"] for line in lines if line.strip()]
