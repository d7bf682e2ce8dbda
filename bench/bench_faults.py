"""Fault-injection benchmark: a judge run through the fault proxy in front of a real llama.cpp server.

    .venv/bin/python -m bench.bench_faults --items 200        # the issue's figure
    .venv/bin/python -m bench.bench_faults --items 40         # quick

Prints the faults injected and survived and the checks of tests/reliability/test_faults.py:
every item judged exactly once, paid calls = distinct requests, tokens accounted exactly.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tests.reliability.fault_proxy import FAULTS, FaultProxy, FaultRates
from tests.reliability.scenario import calibrated_timeout, fast_judge, judged_ids, make_items, server_client

from bench.common import describe_machine, load_avg, log
from judgelab.llm import models
from judgelab.llm.server import LlamaServer
from judgelab.runner.run import run_judge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--errors", type=float, default=0.20)
    parser.add_argument("--resets", type=float, default=0.05)
    parser.add_argument("--stalls", type=float, default=0.05)
    parser.add_argument("--truncations", type=float, default=0.05)
    parser.add_argument("--model", default="smollm2-135m")
    args = parser.parse_args()
    rates = FaultRates(args.errors, args.resets, args.stalls, args.truncations)
    items = make_items(args.items)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp, \
            LlamaServer(models.model_path(args.model), model_alias="smollm", n_ctx=2048) as server:
        timeout = calibrated_timeout(server.base_url)
        log(f"client timeout {timeout:.1f}s; judging {len(items)} items through the proxy")
        with FaultProxy(server.base_url, rates, seed=args.seed, stall_s=timeout + 1, retry_after=0.5) as proxy, \
                server_client(proxy.base_url, Path(tmp) / "cache.sqlite", timeout=timeout) as client:
            result = run_judge(fast_judge(), items, client, Path(tmp) / "run")
            usage = client.usage
            ids = judged_ids(Path(tmp) / "run")
        stats = proxy.stats
    checks = {
        "every item judged exactly once": sorted(ids) == sorted(i.id for i in items),
        "no item ended in error": result.counts["error"] == 0,
        "paid calls == distinct requests": usage.calls == len(items) == len(stats.answers),
        "tokens accounted exactly": (usage.prompt_tokens, usage.completion_tokens)
        == (sum(a[1] for a in stats.answers.values()), sum(a[2] for a in stats.answers.values())),
        "judgments hold the delivered replies": sorted(j.raw for j in result.judgments)
        == sorted(a[0] for a in stats.answers.values()),
    }
    report = {
        "command": f"python -m bench.bench_faults --items {args.items} --seed {args.seed}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": describe_machine(),
        "load": load_avg(), "wall_s": round(time.time() - started, 1), "items": len(items),
        "rates": vars(rates), "injected": {f: stats.injected.get(f, 0) for f in FAULTS},
        "faults_total": sum(stats.injected.values()), "retries": result.usage["retries"],
        "late_deliveries": stats.delivered - len(stats.answers), "forwarded_upstream": stats.forwarded,
        "counts": result.counts, "checks": checks,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
