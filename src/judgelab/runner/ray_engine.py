"""``engine="ray"``: judge shards of items on Ray workers, each with its own backend.

The driver keeps everything a run folder needs (resume, the appended judgments.jsonl, run.json,
the progress display); workers only turn a shard of items into judgments. A shard holds whole
groups, so a source's items share one worker's prompt-prefix cache. Each worker process builds
its client once from a ``ClientSpec`` (the same backend identity as the driver's client, hence
the same cache keys) and reuses it for every shard it is given.

Failures: a worker that dies mid-shard is restarted by Ray and the shard is run again
(``max_retries``); every LLM call the dead worker finished is in the shared SQLite cache, so
the retry pays only for the unfinished ones. A driver that dies is a rerun into the same
folder: finished judgments are kept and the rest come from the cache or the model.

The cache is one SQLite file: workers on one machine share it directly; on a multi-machine
cluster give ``cache_path`` on a shared filesystem (SQLite over NFS is slow but correct), or
accept that each node pays for its own calls. For GPU clusters, Ray Data's LLM batch
processing with vLLM (``ray.data.llm``) is the tool; point judgelab at the vLLM server instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, flags_named, name_flags
from judgelab.judges.base import JudgeConfig, judge_from_dict
from judgelab.llm.client import Client
from judgelab.llm.types import Usage

#: Shards per worker: several, so fast workers take more and results stream back as they finish.
SHARDS_PER_WORKER = 4
MAX_RETRIES = 3


@dataclass(frozen=True)
class ClientSpec:
    """How a worker rebuilds the driver's client: backend kind and options, cache file, limits."""

    backend: str  # "embedded", "openai" or "none" (judges that call no model)
    options: dict[str, Any] = field(default_factory=dict)
    cache_path: str | None = None
    max_concurrency: int | None = None
    price: tuple[float, float] | None = None

    def build(self) -> Client:
        from judgelab.llm.cache import CompletionCache
        from judgelab.llm.pricing import Price

        if self.backend == "none":
            from judgelab.llm.backends.none import no_llm_client

            return no_llm_client()
        if self.backend == "embedded":
            from judgelab.llm.backends.embedded import EmbeddedBackend

            backend = EmbeddedBackend(**self.options)
        else:
            from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend

            key = os.environ.get("JUDGELAB_API_KEY") or os.environ.get("OPENAI_API_KEY")
            backend = OpenAICompatibleBackend(api_key=key, **self.options)
        return Client(backend, cache=CompletionCache(self.cache_path) if self.cache_path else None,
                      max_concurrency=self.max_concurrency, price=Price(*self.price) if self.price else None)


def spec_of(client: Client, threads_per_worker: int = 1) -> ClientSpec:
    """The spec of a client built by ``make_client`` (embedded model or OpenAI-compatible server)."""
    from judgelab.llm.backends.embedded import EmbeddedBackend
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend

    backend = client.backend
    if backend.identity == "none":  # a judge that calls no model (e.g. the similarity scorer)
        return ClientSpec("none")
    price = (client.price.input_per_mtok, client.price.output_per_mtok) if client.price else None
    cache = str(client.cache.path) if client.cache is not None else None
    if isinstance(backend, EmbeddedBackend):
        preset = backend.identity.startswith("embedded:") and not backend.identity.startswith("embedded:gguf:")
        options = {"model": backend.model_name if preset else str(backend.path), "n_ctx": backend._llm.n_ctx(),
                   "n_threads": threads_per_worker, "prefix_reuse": backend.prefix_reuse}
        return ClientSpec("embedded", options, cache, client.max_concurrency, price)
    if isinstance(backend, OpenAICompatibleBackend):
        options = {"model_name": backend.model_name, "base_url": backend.base_url,
                   "max_concurrency": backend.max_concurrency, "identity": backend.identity,
                   "continue_final_message": backend.continue_final_message,
                   "guided_regex": backend.capabilities.regex, "timeout": backend.timeout,
                   "allow_insecure_http": backend.allow_insecure_http}
        return ClientSpec("openai", options, cache, client.max_concurrency, price)
    raise ConfigError(f"the ray engine rebuilds the client on each worker; it cannot rebuild {backend.identity!r}")


def shard_by_group(items: list[Item], shards: int) -> list[list[Item]]:
    """About ``shards`` lists of whole groups, largest groups first onto the emptiest shard (input order inside)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    bins: list[list[Item]] = [[] for _ in range(max(1, min(shards, len(groups))))]
    for members in sorted(groups.values(), key=len, reverse=True):
        min(bins, key=len).extend(members)
    return [b for b in bins if b]


# Per worker process: the client built for a spec, reused by every shard the worker runs.
_WORKER_CLIENTS: dict[str, Client] = {}


def judge_shard(judge_data: dict[str, Any], items: list[dict[str, Any]], spec: ClientSpec, identity: str,
                run_options: dict[str, Any], flags: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Runs on a worker: the shard's judgments (as dicts) and the usage they cost this worker. ``flags``: the
    driver's naming of parameters (a worker is another process: the CLI's ``--flag`` naming is not inherited),
    so that a reason a judgment records reads the same as on one machine."""
    naming = name_flags(flags)
    try:
        return _judged_shard(judge_data, items, spec, identity, run_options)
    finally:
        name_flags(naming)  # a worker process runs shards of later runs too


def _judged_shard(judge_data: dict[str, Any], items: list[dict[str, Any]], spec: ClientSpec, identity: str,
                  run_options: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    key = repr(asdict(spec))
    if key not in _WORKER_CLIENTS:
        _WORKER_CLIENTS[key] = spec.build()
    client = _WORKER_CLIENTS[key]
    if client.backend.identity != identity:
        raise ConfigError(f"worker backend {client.backend.identity!r} differs from the driver's {identity!r}")
    before = client.usage
    judge = judge_from_dict(judge_data, "ray shard")
    judgments = judge.run([Item.model_validate(i) for i in items], client, **run_options)
    spent = client.usage
    delta = Usage(calls=spent.calls - before.calls, cache_hits=spent.cache_hits - before.cache_hits,
                  prompt_tokens=spent.prompt_tokens - before.prompt_tokens,
                  completion_tokens=spent.completion_tokens - before.completion_tokens,
                  cost_usd=None if spent.cost_usd is None else spent.cost_usd - (before.cost_usd or 0.0),
                  latency_s=spent.latency_s - before.latency_s)
    return [j.model_dump(mode="json") for j in judgments], delta.model_dump()


class RayEngine:
    """Submits shards as Ray tasks (at most two per worker in flight) and records results as they return."""

    def __init__(self, client: Client, workers: int | None = None, address: str | None = None,
                 threads_per_worker: int = 1):
        try:
            import ray
        except ImportError as exc:
            raise ConfigError("the ray engine needs Ray: pip install 'judgelab[ray]'") from exc
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), num_cpus=None if address else workers,
                     include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        available = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, min(workers or available, available // threads_per_worker or 1))
        self.spec = spec_of(client, threads_per_worker)
        self.identity = client.backend.identity
        self._usage = Usage(cost_usd=0.0 if client.price else None)
        self._remote = ray.remote(num_cpus=threads_per_worker, max_retries=MAX_RETRIES)(judge_shard)

    def shard_count(self, n_items: int) -> int:
        return max(1, min(n_items, self.workers * SHARDS_PER_WORKER))

    def usage(self) -> Usage:
        return self._usage

    def judge(self, judge: JudgeConfig, batches: Iterable[list[Item]], on_judgment, run_options: dict) -> None:
        if "examples_pool" in run_options:
            run_options = {**run_options, "examples_pool": list(run_options["examples_pool"])}
        judge_data = judge.model_dump(mode="json")
        pending: list[Any] = []
        try:
            for batch in batches:
                if batch:
                    pending.append(self._submit(judge_data, batch, run_options))
                while len(pending) >= 2 * self.workers:
                    pending = self._collect(pending, on_judgment)
            while pending:
                pending = self._collect(pending, on_judgment)
        except BaseException:
            for ref in pending:  # Ctrl-C or a failed shard: stop the rest rather than leave them running
                self._ray.cancel(ref, force=True)
            raise

    def _submit(self, judge_data: dict, batch: list[Item], run_options: dict) -> Any:
        items = [item.model_dump(mode="json", exclude_defaults=True) for item in batch]
        return self._remote.remote(judge_data, items, self.spec, self.identity, run_options, flags_named())

    def _collect(self, pending: list[Any], on_judgment) -> list[Any]:
        ready, rest = self._ray.wait(pending, num_returns=1)
        judgments, usage = self._ray.get(ready[0])
        self._usage = self._usage + Usage.model_validate(usage)
        for data in judgments:
            on_judgment(Judgment.model_validate(data))
        return rest
