"""judgelab vs a bare asyncio + openai loop vs DeepEval's G-Eval, one llama.cpp server, same items, one run.

    # once: DeepEval in its own venv, so it cannot disturb judgelab's dependencies
    python3 -m venv ~/.cache/judgelab/peer-venv
    ~/.cache/judgelab/peer-venv/bin/pip install deepeval openai

    nice -n 10 .venv/bin/python -m bench.bench_peers --model qwen2.5-coder-0.5b --items 60 --repeats 2
    nice -n 15 .venv/bin/python -m bench.bench_peers --model smollm2-135m --items 8     # tiny proof

One ``LlamaServer`` (``python -m llama_cpp.server``) on 127.0.0.1 serves three judges of the same
items, one aspect, the same criteria text, greedy, the same ``--max-tokens`` and ``--concurrency``:

(a) judgelab: a ``PromptedJudge`` (rating first, then an explanation) through ``run_judge`` with an
    OpenAI-compatible ``Client`` and no cache, so it pays every call;
(b) bare: the very prompts (a) sends, rendered with judgelab's templates, sent by an
    ``openai.AsyncOpenAI`` loop with an ``asyncio.Semaphore`` (``bench.common.bare_chat_loop``), the rating read by
    one regex;
(c) DeepEval: ``GEval`` with the criteria text as its evaluation step and a custom ``DeepEvalBaseLLM``
    calling the server, run by ``deepeval.evaluate`` (async, ``max_concurrent`` = concurrency) in a
    subprocess with the peer venv's interpreter (``bench/peers/deepeval_driver.py``); skipped, with the
    reason printed, when that interpreter or DeepEval is missing.

The systems run one after another in an order rotated every repeat (the machine is noisy); each
figure is the wall time of the judging call alone (for DeepEval, ``evaluate``; its interpreter start
and imports are reported apart). Prints the table and writes its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import openai
from scipy.stats import spearmanr

from bench.bench_judge_quality import benchmarks_dir
from bench.common import DOC, bare_chat_loop, command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Item, load_items
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm import models
from judgelab.llm.client import Client
from judgelab.llm.resolve import make_backend
from judgelab.llm.server import LlamaServer
from judgelab.llm.types import Completion, Request
from judgelab.prompts import AuxiliaryTexts, RenderedPrompt, criteria_text, render_judge_prompt
from judgelab.runner.run import run_judge
from judgelab.strategy import Strategy

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench_peers"
DRIVER = Path(__file__).resolve().parent / "peers" / "deepeval_driver.py"
PEER_PYTHON = Path.home() / ".cache" / "judgelab" / "peer-venv" / "bin" / "python"
SYSTEMS = ("judgelab", "bare", "deepeval")
ALIAS = "local"
# The rating comes first ("Rating: [[4]]"): a hand-written loop reads the first such marker.
BARE_RATING = re.compile(r"\[\[\s*(\d+)\s*\]\]|Rating:\s*(\d+)")


@dataclass
class Outcome:
    """One system's pass over the items: per-item status and score, and the time it took."""

    system: str
    wall_s: float
    cpu_s: float  # the client process's CPU time (all threads) during the judging call
    status: dict[str, str]  # item id -> ok / unparsable / error
    scores: dict[str, float]
    calls: int | None = None  # None: not counted (the bare loop)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    process_s: float | None = None  # DeepEval: the whole subprocess, interpreter start and imports included
    unparsable_raw: list[str] = field(default_factory=list)
    replies: dict[str, str] = field(default_factory=dict)  # item id -> reply (judgelab and bare)
    load: str = ""  # load average (1m) before -> after this pass

    def count(self, status: str) -> int:
        return sum(1 for value in self.status.values() if value == status)

    @property
    def per_minute(self) -> float:
        return 60 * len(self.status) / self.wall_s


@dataclass
class Setup:
    items: list[Item]
    aspect: str
    criteria: str
    judge: PromptedJudge
    prompts: list[RenderedPrompt]  # in item order, as judgelab renders them for this backend
    max_tokens: int
    concurrency: int
    timeout: float  # per request, for all three clients


# =============================================================================================
# The shared inputs
# =============================================================================================
def pick_items(dataset: str, n: int, seed: int) -> list[Item]:
    """``n`` items drawn with ``seed``, kept in file order (the order every system receives them in)."""
    items = list(load_items(benchmarks_dir() / f"{dataset}.jsonl"))
    chosen = set(random.Random(seed).sample(range(len(items)), min(n, len(items))))
    return [item for index, item in enumerate(items) if index in chosen]


def make_setup(dataset: str, aspect: str, n_items: int, seed: int, max_tokens: int, concurrency: int,
               cot: str = "suffix", timeout: float = 600.0) -> Setup:
    items = pick_items(dataset, n_items, seed)
    # Default cot "suffix": the rating first, then an explanation (G-Eval writes a reason too).
    strategy = Strategy(scale=5, cot=cot)
    criteria = criteria_text(aspect, strategy.scale, dataset=dataset)
    judge = PromptedJudge(aspect=aspect, strategy=strategy, criteria=criteria, max_tokens=max_tokens)
    family = judge.resolve_family(items)
    # use_prefix=False: an OpenAI-compatible backend without continue_final_message (llama.cpp's
    # server) cannot start the reply, so judgelab renders without an assistant prefix too.
    prompts = [render_judge_prompt(strategy, family, aspect, item, AuxiliaryTexts(criteria=criteria),
                                   use_prefix=False) for item in items]
    return Setup(items, aspect, criteria, judge, prompts, max_tokens, concurrency, timeout)


def input_text(item: Item) -> str:
    """What G-Eval sees as the test case's input: the source (and its knowledge fact, if any)."""
    if item.context and item.context != "_nofact":
        return f"{item.context}\n\n{item.source}"
    return item.source or ""


# =============================================================================================
# The three systems
# =============================================================================================
def record_prompts(client: Client, sent: list[str]) -> None:
    """Keep the user message of every request judgelab sends (to check it sends the bare loop's prompts)."""
    inner = client.backend.agenerate

    async def agenerate(request: Request, sample_index: int) -> Completion:
        sent.append(request.messages[-1].content)
        return await inner(request, sample_index)

    client.backend.agenerate = agenerate  # type: ignore[method-assign]


def run_judgelab(setup: Setup, base_url: str, work: Path, sent: list[str]) -> Outcome:
    backend = make_backend(base_url, model_name=ALIAS, timeout=setup.timeout)
    with Client(backend, cache=None, max_concurrency=setup.concurrency) as client:
        record_prompts(client, sent)
        started, cpu = time.perf_counter(), time.process_time()
        result = run_judge(setup.judge, setup.items, client, work / "judgelab-run")
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        usage = client.usage
    status = {j.item_id: j.status for j in result.judgments}
    scores = {j.item_id: j.score for j in result.judgments if j.score is not None}
    raws = [j.raw or "" for j in result.judgments if j.status == "unparsable"]
    replies = {j.item_id: j.raw or "" for j in result.judgments}
    return Outcome("judgelab", wall, cpu, status, scores, calls=usage.calls, prompt_tokens=usage.prompt_tokens,
                   completion_tokens=usage.completion_tokens, unparsable_raw=raws, replies=replies)


def bare_rating(reply: str, bounds: tuple[int, int]) -> float | None:
    match = BARE_RATING.search(reply)
    if match is None:
        return None
    value = int(match.group(1) or match.group(2))
    return float(value) if bounds[0] <= value <= bounds[1] else None


def run_bare(setup: Setup, base_url: str) -> Outcome:
    texts = [p.prompt for p in setup.prompts]
    wall, cpu, replies = asyncio.run(bare_chat_loop(base_url, ALIAS, texts, [], setup.max_tokens, setup.concurrency,
                                                    timeout=setup.timeout))
    status, scores, raws = {}, {}, []
    for item, prompt, reply in zip(setup.items, setup.prompts, replies, strict=True):
        score = bare_rating(reply, prompt.bounds)
        status[item.id] = "ok" if score is not None else "unparsable"
        if score is None:
            raws.append(reply)
        else:
            scores[item.id] = score
    replies = {item.id: reply for item, reply in zip(setup.items, replies, strict=True)}
    return Outcome("bare", wall, cpu, status, scores, unparsable_raw=raws, replies=replies)


def deepeval_missing(python: Path) -> str | None:
    """Why the DeepEval part cannot run with ``python``, or None."""
    if not python.exists():
        return f"{python} not found (create the peer venv: see bench/bench_peers.py's docstring)"
    probe = subprocess.run([str(python), "-c", "import deepeval, openai"], capture_output=True, text=True,
                           check=False)
    if probe.returncode != 0:
        return f"{python} cannot import deepeval and openai: {probe.stderr.strip().splitlines()[-1:]}"
    return None


def run_deepeval(setup: Setup, base_url: str, python: Path, work: Path) -> tuple[Outcome, str]:
    job = {"base_url": base_url, "model": ALIAS, "aspect": setup.aspect, "criteria": setup.criteria,
           "max_tokens": setup.max_tokens, "concurrency": setup.concurrency, "timeout": setup.timeout,
           "items": [{"id": item.id, "input": input_text(item), "output": item.output or ""}
                     for item in setup.items]}
    work.mkdir(parents=True, exist_ok=True)
    job_path, out_path = work / "deepeval-job.json", work / "deepeval-out.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    # cwd: DeepEval writes a .deepeval/ folder where it runs; HOME likewise keeps its settings out of ours.
    env = {**os.environ, "HOME": str(work)}
    started = time.perf_counter()
    done = subprocess.run([str(python), str(DRIVER), str(job_path), str(out_path)], cwd=work, env=env,
                          capture_output=True, text=True, check=False)
    process_s = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the DeepEval driver failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report = json.loads(out_path.read_text(encoding="utf-8"))
    results = report["results"]
    status = {r["id"]: r["status"] for r in results}
    scores = {r["id"]: r["score"] for r in results if r["score"] is not None}
    raws = [r["raw"] if r["raw"] is not None else f"(no reply recorded; {r['error']})"
            for r in results if r["status"] == "unparsable"]
    errors = sorted({r["error"] for r in results if r["status"] == "error"})
    if errors:
        log(f"deepeval errors: {errors[:3]}")
    outcome = Outcome("deepeval", report["wall_s"], report["cpu_s"], status, scores, calls=report["calls"],
                      prompt_tokens=report["prompt_tokens"], completion_tokens=report["completion_tokens"],
                      process_s=process_s, unparsable_raw=raws)
    return outcome, report["deepeval"]


# =============================================================================================
# The run
# =============================================================================================
@dataclass
class Results:
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    orders: list[list[str]] = field(default_factory=list)
    same_prompts: str = ""
    deepeval_version: str | None = None
    deepeval_skipped: str | None = None
    server_load_s: float = 0.0
    load: str = ""


def warm_up(base_url: str, prompt: str, timeout: float = 600.0) -> None:
    """One untimed call: the server's first pays for paging in the weights, and no system should pay it.
    A long timeout: on a busy machine the first call can take minutes; the timed calls wait far less."""
    client = openai.OpenAI(base_url=base_url, api_key="not-needed", timeout=timeout, max_retries=0)
    try:
        client.chat.completions.create(model=ALIAS, messages=[{"role": "user", "content": prompt}], max_tokens=4,
                                       temperature=0.0)
    except openai.APITimeoutError as exc:
        raise SystemExit(f"the server did not answer one 4-token request in {timeout:.0f} s (load {load_avg()}): "
                         "the machine is too busy to measure anything; run again when it is quieter") from exc
    finally:
        client.close()


def rotated(systems: Sequence[str], repeat: int) -> list[str]:
    shift = repeat % len(systems)
    return list(systems[shift:]) + list(systems[:shift])


def run_all(setup: Setup, model: str, repeats: int, server_threads: int, deepeval_python: Path) -> Results:
    results = Results()
    results.deepeval_skipped = deepeval_missing(deepeval_python)
    if results.deepeval_skipped:
        log(f"DeepEval skipped: {results.deepeval_skipped}")
    systems = [s for s in SYSTEMS if s != "deepeval" or not results.deepeval_skipped]
    load_before = load_avg()
    with tempfile.TemporaryDirectory(prefix="judgelab-bench-peers-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        with LlamaServer(models.model_path(model), model_alias=ALIAS, n_threads=server_threads,
                         log_path=work / "server.log") as server:
            results.server_load_s = time.perf_counter() - started
            # Untimed: the server's first call pays for paging in the weights; no system should pay it.
            warm_up(server.base_url, setup.prompts[0].prompt, setup.timeout)
            for repeat in range(repeats):
                order = rotated(systems, repeat)
                results.orders.append(order)
                for system in order:
                    before = load_avg(1)
                    outcome = run_one(system, setup, server.base_url, work / f"r{repeat}-{system}", deepeval_python,
                                      results)
                    outcome.load = f"{before} -> {load_avg(1)}"
                    results.outcomes.setdefault(system, []).append(outcome)
                    log(f"repeat {repeat + 1}/{repeats} {system}: {outcome.wall_s:.1f} s, "
                        f"{outcome.per_minute:.1f}/min, unparsable {outcome.count('unparsable')}, "
                        f"errors {outcome.count('error')}, scores {[outcome.scores.get(i.id) for i in setup.items[:8]]}")
    results.load = f"{load_before} -> {load_avg()}"
    return results


def run_one(system: str, setup: Setup, base_url: str, work: Path, python: Path, results: Results) -> Outcome:
    if system == "judgelab":
        sent: list[str] = []
        outcome = run_judgelab(setup, base_url, work, sent)
        expected = [p.prompt for p in setup.prompts]
        results.same_prompts = f"{sum(a == b for a, b in zip(sorted(sent), sorted(expected), strict=False))} " \
                               f"of {len(expected)} (judgelab sent {len(sent)} requests)"
        return outcome
    if system == "bare":
        return run_bare(setup, base_url)
    outcome, version = run_deepeval(setup, base_url, python, work)
    results.deepeval_version = version
    return outcome


# =============================================================================================
# Report
# =============================================================================================
def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spearman(outcome: Outcome, items: Sequence[Item], aspect: str) -> tuple[float, int]:
    pairs = [(outcome.scores[i.id], i.scores[aspect]) for i in items if i.id in outcome.scores and aspect in i.scores]
    if len(pairs) < 3 or len({p[0] for p in pairs}) < 2:  # undefined: too few, or one score for all
        return float("nan"), len(pairs)
    rho = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return float(rho), len(pairs)


def fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


COT_WORDS = {"suffix": "rating first as `Rating: [[X]]`, then an explanation", "none": "the rating alone",
             "prefix": "an explanation, then the rating"}
LABELS = {"judgelab": "judgelab `PromptedJudge` via `run_judge`", "bare": "bare `AsyncOpenAI` + `Semaphore` + regex",
          "deepeval": "DeepEval `GEval` via `evaluate`"}


def table(results: Results, setup: Setup) -> str:
    ours = median([o.per_minute for o in results.outcomes.get("judgelab", [])])
    lines = ["| System | Items | Wall s (median) | Judgments/min (median) | Ratio vs judgelab | Unparsable share "
             "| Errors | Client CPU ms per judgment | Calls | Prompt / generated tokens per judgment | Spearman rho vs human (n) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for system in SYSTEMS:
        runs = results.outcomes.get(system)
        if not runs:
            continue
        n = sum(len(o.status) for o in runs)
        unparsable = sum(o.count("unparsable") for o in runs)
        errors = sum(o.count("error") for o in runs)
        rate = median([o.per_minute for o in runs])
        rho, parsed = spearman(runs[-1], setup.items, setup.aspect)
        lines.append(f"| {LABELS[system]} | {len(setup.items)} x {len(runs)} | {fmt(median([o.wall_s for o in runs]), 1)} "
                     f"| {fmt(rate, 1)} | {fmt(rate / ours)} | {unparsable}/{n} = {unparsable / n:.0%} | {errors} "
                     f"| {fmt(median([1000 * o.cpu_s / len(o.status) for o in runs]), 0)} "
                     f"| {tokens(runs[-1])} | {fmt(rho)} ({parsed}) |")
    return "\n".join(lines)


def tokens(outcome: Outcome) -> str:
    """Calls and mean tokens per judgment of one pass; the bare loop does not count them."""
    if outcome.calls is None or outcome.prompt_tokens is None or outcome.completion_tokens is None:
        return "not counted | not counted"
    n = len(outcome.status)
    return f"{outcome.calls} | {outcome.prompt_tokens / n:.0f} / {outcome.completion_tokens / n:.0f}"


def same_replies(results: Results) -> str:
    """How many items got the very same reply in judgelab's and the bare loop's last pass (greedy, same prompts)."""
    if not results.outcomes.get("judgelab") or not results.outcomes.get("bare"):
        return "n/a"
    ours, bare = results.outcomes["judgelab"][-1].replies, results.outcomes["bare"][-1].replies
    return f"{sum(ours[i] == bare.get(i) for i in ours)} of {len(ours)}"


def details(results: Results) -> list[str]:
    lines = []
    for repeat, order in enumerate(results.orders):
        walls = ", ".join(f"{s} {results.outcomes[s][repeat].wall_s:.1f} s (load {results.outcomes[s][repeat].load})"
                          for s in order)
        lines.append(f"- repeat {repeat + 1}: {walls}")
    deepeval = results.outcomes.get("deepeval", [])
    if deepeval:
        lines.append(f"- DeepEval subprocess in all (interpreter start, imports, `evaluate`): "
                     f"{', '.join(f'{o.process_s:.1f} s' for o in deepeval)}")
    return lines


def samples(results: Results) -> list[str]:
    lines = []
    for system in SYSTEMS:
        raws = [raw for o in results.outcomes.get(system, [])[-1:] for raw in o.unparsable_raw]
        if raws:
            shown = raws[0].strip().replace("\n", " ")[:200]
            lines.append(f"- {system}: {len(raws)} unparsable in the last repeat, e.g. {json.dumps(shown)}")
    return lines


def section(results: Results, setup: Setup, args: argparse.Namespace, command: str, started: dt.datetime,
            took_s: float) -> str:
    version = f" (deepeval {results.deepeval_version})" if results.deepeval_version else ""
    parts = [
        f"Command: `{command}` — run {started:%Y-%m-%d %H:%M} UTC, took {took_s / 60:.1f} min.",
        "",
        f"Machine: {describe_machine()}. Load average (1m/5m/15m) before -> after: {results.load}. "
        "The machine is shared and noisy: compare the ratios measured in this run, not absolute rates across runs.",
        "",
        f"One `LlamaServer` (`python -m llama_cpp.server`, {args.model}, `n_threads={args.server_threads}`, so the "
        f"server has one core and the clients the other; started in {results.server_load_s:.1f} s) on 127.0.0.1. "
        f"{len(setup.items)} {args.dataset} items (seed {args.seed}), aspect {setup.aspect}, criteria "
        f"\"{setup.criteria}\"; greedy, `max_tokens={setup.max_tokens}`, concurrency {setup.concurrency}, no cache "
        f"anywhere, a {setup.timeout:.0f} s timeout per request in every client; {args.repeats} repeat(s), the order of "
        "the systems rotated each repeat. The server runs at the benchmark's nice level.",
        "",
        table(results, setup),
        "",
        f"- **judgelab**: `PromptedJudge(strategy=Strategy(scale=5, cot=\"{setup.judge.strategy.cot}\"))` "
        f"({COT_WORDS[setup.judge.strategy.cot]}) run by `run_judge` (run folder, metrics, report.html included in "
        "the time) with `Client(make_backend(base_url), cache=None, max_concurrency=...)`; an unparsable reply is "
        "a judgment with `status=\"unparsable\"`.",
        "- **bare**: the same rendered prompts (judgelab's templates; judgelab sent exactly these: "
        f"{results.same_prompts}) sent by `openai.AsyncOpenAI` with `asyncio.Semaphore` and `gather` "
        "(`bench.common.bare_chat_loop`, `bench/bench_llm.py`'s loop), the rating read with one regex (`[[X]]` or `Rating: X`, in 1-5). "
        f"Identical replies to judgelab's (last repeat): {same_replies(results)}.",
        f"- **DeepEval**{version}: `GEval(evaluation_steps=[criteria], evaluation_params=[INPUT, ACTUAL_OUTPUT])` "
        "(its own prompt: a JSON object with a reason, then a 0-10 score) with a `DeepEvalBaseLLM` subclass "
        "calling the same server through `openai.AsyncOpenAI`, run by `deepeval.evaluate` with "
        "`AsyncConfig(max_concurrent=concurrency)`, cache and telemetry off, `ignore_errors=True`; a reply G-Eval "
        "cannot read as that JSON counts as unparsable. It runs in a separate venv, in a subprocess: "
        "`python3 -m venv ~/.cache/judgelab/peer-venv && ~/.cache/judgelab/peer-venv/bin/pip install deepeval "
        "openai` (`--deepeval-python` points elsewhere).",
        "",
        "Wall time per repeat (the judging call only) and the 1-minute load average around it:",
        "",
        *details(results),
    ]
    if results.deepeval_skipped:
        parts += ["", f"DeepEval was skipped: {results.deepeval_skipped}."]
    if samples(results):
        parts += ["", "Unparsable replies:", "", *samples(results)]
    parts += ["", "judgelab and the bare loop do the same work (same prompts, same greedy replies), so their ratio is "
              "the runtime's cost or gain. DeepEval sends its own prompt and asks for a reason before the score, so "
              "its rate moves with its prompt and reply lengths: read it next to its tokens per judgment (as the "
              "server reports them; the bare loop's equal judgelab's where the replies are identical). Client CPU is "
              "the client process's CPU time (all threads) during the judging call, per judgment: what each runtime "
              "itself costs, which the server's speed and the machine's load move much less than the wall time. "
              "Spearman rho is over the items each system parsed, against the human score; with few items it is "
              "only a sanity check that the judges read the items (n/a: fewer than 3 parsed, or one score for all)."]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_peers", description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="judge model preset (also smollm2-135m)")
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--dataset", default="sfres", help="benchmark file under ../shared/benchmarks")
    parser.add_argument("--aspect", default="naturalness")
    parser.add_argument("--seed", type=int, default=0, help="which items are drawn")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--cot", choices=("suffix", "none", "prefix"), default="suffix",
                        help="judgelab's (and the bare loop's) prompt: where the explanation goes")
    parser.add_argument("--repeats", type=int, default=1, help="passes of all systems, order rotated")
    parser.add_argument("--server-threads", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per request, all three clients (a busy machine makes calls slow)")
    parser.add_argument("--deepeval-python", type=Path, default=PEER_PYTHON)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    # `kill PID` unwinds like Ctrl-C, so the server's context manager stops it before the bench exits.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not models.is_installed(args.model):
        raise SystemExit(f"model {args.model} is not installed: judgelab models install {args.model}")
    command = command_line("bench.bench_peers", argv)
    started, t0 = dt.datetime.now(dt.timezone.utc), time.perf_counter()
    setup = make_setup(args.dataset, args.aspect, args.items, args.seed, args.max_tokens, args.concurrency, args.cot,
                       args.timeout)
    results = run_all(setup, args.model, args.repeats, args.server_threads, args.deepeval_python)
    body = section(results, setup, args, command, started, time.perf_counter() - t0)
    heading = "## Peers: judgelab vs a bare openai loop vs DeepEval G-Eval (`bench/bench_peers.py`)"
    print(f"{heading}\n\n{body}")
    if not args.no_write:
        write_doc_section(SECTION, body, heading=heading)
        log(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
