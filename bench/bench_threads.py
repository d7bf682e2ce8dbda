"""The embedded model on a busy machine: tokens/s by thread count at load 0, 2 and 4, and Ctrl-C to exit.

    .venv/bin/python -m bench.bench_threads --calls 3 --write          # ~25 min, alone on the machine
    .venv/bin/python -m bench.bench_threads --part stop --write        # Ctrl-C only, ~10 min
    .venv/bin/python -m bench.bench_threads --quick                    # one model, fewer calls, prints only

A busy laptop is simulated by ``--loads`` processes spinning on the CPU at the benchmark's own
priority (``load 2`` on 2 cores: every core has another runnable process). At each load, each
thread count in ``--threads`` (``auto`` is the backend's default, :func:`default_threads`) loads the
model once and makes ``--calls`` judge-like calls (a ~300-token prompt, 48 generated tokens, greedy),
the thread counts interleaved call by call so that they see the same moments of the machine. The
figures: prompt and generation tokens/s (medians over the calls) and each count's ratio to one
thread at the same load.

Ctrl-C (``--part stop``): ``judgelab judge`` on the demo data with the demo judge and ``cot=prefix``
(an explanation before its rating, so a call is a long generation) gets SIGINT once its first
judgment is written; the figure is the seconds from the signal to the process's exit, at each load.

Nothing here is a pass/fail test: these machines are noisy, so only ratios within one run are read.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Threads on a busy machine (`bench/bench_threads.py`)"
STOP_SECTION = "## Ctrl-C on a busy machine (`bench/bench_threads.py --part stop`)"
DIALOGUE = " ".join(
    f"A: I read that {topic} changed a lot last year. B: Yes, mostly because of new rules and prices."
    for topic in ("football", "chess", "cooking", "jazz", "sailing", "astronomy", "gardening", "painting",
                  "cycling", "poetry"))
#: The demo judge with an explanation before the rating: each call is a long generation to interrupt.
LONG_GENERATION = ("--strategy", "cot=prefix", "--score", "parsed")
PROMPT = (f"Rate how natural the last response is, from 1 to 5, then explain in two sentences.\n\n{DIALOGUE}\n\n"
          "Response: B: I did not know that, what changed for the players?")


@contextmanager
def spinning(n: int):
    """``n`` processes that keep a core busy each until the block ends."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0 if n else 0.0)  # let the scheduler see them
        yield
    finally:
        for process in spinners:
            process.kill()
            process.wait()


def tokens_per_second(model: str, threads: list[str], loads: list[int], calls: int) -> list[dict]:
    from judgelab.llm.backends.embedded import EmbeddedBackend, default_threads

    rows = []
    for load in loads:
        with spinning(load):
            backends = {t: EmbeddedBackend(model, n_ctx=2048, n_threads=None if t == "auto" else int(t),
                                           prefix_reuse=False) for t in threads}
            chosen = {t: (default_threads() if t == "auto" else int(t)) for t in threads}
            times = {t: {"prompt": [], "generation": []} for t in threads}
            for _ in range(calls):
                for t, backend in backends.items():
                    prompt, generation = _one_call(backend)
                    times[t]["prompt"].append(prompt)
                    times[t]["generation"].append(generation)
            observed = load_avg(1)
            for backend in backends.values():
                backend._llm.close()
        for t in threads:
            rows.append({"model": model, "load": load, "threads": t, "n_threads": chosen[t], "load_avg": observed,
                         "prompt": statistics.median(times[t]["prompt"]),
                         "generation": statistics.median(times[t]["generation"])})
            log(f"{model} load {load} threads {t}: prompt {rows[-1]['prompt']:.0f} tok/s, "
                f"generation {rows[-1]['generation']:.1f} tok/s")
    return rows


def _one_call(backend) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s) of one greedy call, timed by llama.cpp's own phases."""
    llm = backend._llm
    tokens = llm.tokenize(PROMPT.encode("utf-8"))
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    prompt_seconds = time.perf_counter() - started
    started = time.perf_counter()
    generated = 0
    for token in llm.generate(tokens, temp=0.0, reset=False):
        generated += 1
        if generated >= 48 or token == llm.token_eos():
            break
    return len(tokens) / prompt_seconds, generated / (time.perf_counter() - started)


def ctrl_c_seconds(model: str, loads: list[int]) -> list[dict]:
    rows = []
    for load in loads:
        with spinning(load), tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            examples = ROOT / "src/judgelab/examples"
            args = [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(examples / "demo_summaries.jsonl"),
                    "--config", str(examples / "demo_judge.yaml"), *LONG_GENERATION,
                    "--model", model, "--out", str(run), "--cache-path", str(Path(tmp) / "cache.sqlite")]
            process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            judgments = run / "judgments.jsonl"
            deadline = time.monotonic() + 1800
            while process.poll() is None and time.monotonic() < deadline and not (
                    judgments.exists() and judgments.stat().st_size > 0):
                time.sleep(0.05)
            if process.poll() is not None:
                last = (process.stderr.read().strip().splitlines() or ["no output"])[-1]
                rows.append({"model": model, "load": load, "seconds": None,
                             "note": f"exited {process.returncode} before the signal: {last}"})
                log(f"{model} load {load}: {rows[-1]['note']}")
                continue
            process.send_signal(signal.SIGINT)
            signalled = time.monotonic()
            process.communicate(timeout=1800)
            rows.append({"model": model, "load": load, "seconds": time.monotonic() - signalled,
                         "code": process.returncode})
            log(f"{model} load {load}: Ctrl-C to exit {rows[-1]['seconds']:.2f} s (exit {process.returncode})")
    return rows


def speed_doc(speed: list[dict], command: str) -> str:
    out = [f"Machine: {describe_machine()}. Command: `{command}`. Load: that many processes spinning on the CPU "
           "at the benchmark's priority; `auto` is the embedded backend's default thread count, "
           "`judgelab.llm.backends.embedded.default_threads` (the number it chose in brackets). Medians over "
           "the calls; the ratio is to one thread at the same load.", "",
           "| model | load | threads | prompt tok/s | generation tok/s | generation vs 1 thread |",
           "|---|---|---|---|---|---|"]
    for row in speed:
        one = next(r for r in speed if r["model"] == row["model"] and r["load"] == row["load"] and r["threads"] == "1")
        name = f"auto ({row['n_threads']})" if row["threads"] == "auto" else row["threads"]
        out.append(f"| {row['model']} | {row['load']} | {name} | {row['prompt']:.0f} | {row['generation']:.1f} | "
                   f"{row['generation'] / one['generation']:.2f} |")
    return "\n".join(out)


def stop_doc(stops: list[dict], command: str) -> str:
    out = [f"Machine: {describe_machine()}. Command: `{command}`. `judgelab judge` on the demo summaries with the "
           f"demo judge and `{' '.join(LONG_GENERATION)}` (an explanation before the rating: every call is a long "
           "generation), default threads, at each load (processes spinning on the CPU); SIGINT once the first "
           "judgment is written, so a call is in flight. Seconds from the signal to the process's exit:", "",
           "| model | load | seconds | exit code |", "|---|---|---|---|"]
    for row in stops:
        seconds = "-" if row["seconds"] is None else f"{row['seconds']:.2f}"
        out.append(f"| {row['model']} | {row['load']} | {seconds} | {row.get('code', row.get('note'))} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=["qwen2.5-coder-1.5b"])  # what make setup installs
    parser.add_argument("--threads", nargs="*", default=["1", "2", "auto"])
    parser.add_argument("--loads", nargs="*", type=int, default=[0, 2, 4])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the first model, 2 calls, no Ctrl-C")
    parser.add_argument("--part", choices=("speed", "stop", "both"), default="both",
                        help="tokens/s by thread count, seconds from Ctrl-C to exit, or both (each its own section)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if "1" not in args.threads:
        parser.error("--threads must include 1 (the ratios are to one thread)")
    models = args.models[:1] if args.quick else args.models
    calls = 2 if args.quick else args.calls
    command = command_line("bench.bench_threads")
    log(f"machine load before: {load_avg()} ({os.cpu_count()} cores)")
    if args.part in ("speed", "both"):
        speed = [row for model in models for row in tokens_per_second(model, args.threads, args.loads, calls)]
        body = speed_doc(speed, command)
        print(body)
        if args.write:
            write_doc_section("bench_threads", body, heading=SECTION)
    if args.part in ("stop", "both") and not args.quick:
        body = stop_doc(ctrl_c_seconds(models[0], args.loads), command)
        print(body)
        if args.write:
            write_doc_section("bench_threads_stop", body, heading=STOP_SECTION)


if __name__ == "__main__":
    main()
