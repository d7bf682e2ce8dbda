"""What every benchmark records: the machine it ran on, the load while it ran, timestamped logs, and its
section of docs/benchmarks.md."""

from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
_NEXT_SECTION = re.compile(r"^(?:## |<!-- [\w.-]+:start -->)", re.M)


def machine_facts() -> dict[str, str]:
    """Cores, CPU model, RAM, Python and the versions of the runtimes being measured."""
    cpu = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        cpu = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), cpu)
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    facts = {"nproc": str(os.cpu_count()), "cpu": cpu, "ram": ram, "arch": platform.machine(),
             "python": platform.python_version()}
    for module, key in (("llama_cpp", "llama_cpp_python"), ("openai", "openai")):
        try:
            facts[key] = __import__(module).__version__
        except ImportError:
            pass
    return facts


def describe_machine(facts: dict[str, str] | None = None) -> str:
    facts = facts or machine_facts()
    llama = f", llama-cpp-python {facts['llama_cpp_python']}" if "llama_cpp_python" in facts else ""
    return (f"{facts['nproc']} cores ({facts['cpu']}), {facts['ram']} RAM, {facts['arch']}, "
            f"Python {facts['python']}{llama}")


def load_avg(periods: int = 3) -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg()[:periods])


def log(message: str, periods: int = 3) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {load_avg(periods)}] {message}", file=sys.stderr, flush=True)


def write_doc_section(name: str, body: str, doc: Path = DOC, *, heading: str | None = None,
                      markers: bool = True) -> None:
    """Replace benchmark `name`'s section of `doc` (docs/benchmarks.md), else append it at the end; the other
    sections are left alone, whoever wrote them.

    The section is `body` between the lines `<!-- name:start -->` and `<!-- name:end -->`. A `heading`
    ("## ...") goes on the line above the start marker, outside the markers, so that writers which cut a
    section at the next "## " heading stop before ours; `markers=False` writes `heading` and `body` alone.
    The old section is found by its start marker (with the heading line just above it), else by its heading
    line, and ends at its end marker or, if that is lost, at the next "## " heading or start marker. One blank
    line follows the section. The file is replaced atomically (a temporary file, then os.replace).
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}" if markers else body.rstrip()
    block = (f"{heading}\n{block}" if heading else block) + "\n"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    title = heading or body.lstrip().partition("\n")[0]
    marker = re.search(rf"^{re.escape(start)}$", text, re.M) if markers else None
    if marker:
        begin = marker.start()
        above = re.search(r"^#{2,6} .*\n\s*\Z", text[:begin], re.M) if heading else None
        begin = above.start() if above else begin
    elif title.startswith("## ") and (found := re.search(rf"^{re.escape(title)}$", text, re.M)):
        begin = found.start()
    else:
        begin = None
    if begin is None:
        text = text.rstrip("\n") + "\n\n" + block
    else:
        finish = text.find(end, begin) if markers else -1
        if finish >= 0:
            finish += len(end)
        else:  # no end marker: the section runs to the next one, past its own heading and start marker
            own = [r"(?:#{2,6} .*\n)?", rf"(?:{re.escape(start)}\n)?"]
            cursor = re.compile("".join(own if heading or not markers else own[::-1])).match(text, begin).end()
            following = _NEXT_SECTION.search(text, cursor)
            finish = following.start() if following else len(text)
        tail = text[finish:].lstrip("\n")
        text = text[:begin] + block + ("\n" + tail if tail else "")
    doc.parent.mkdir(parents=True, exist_ok=True)
    tmp = doc.with_name(f"{doc.name}.tmp-{name}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, doc)


async def bare_chat_loop(base_url: str, alias: str, prompts: list[str], warm: list[str], max_tokens: int,
                         concurrency: int, timeout: float = 120.0) -> tuple[float, float, list[str]]:
    """The hand-written baseline a runtime is compared with: one ``openai.AsyncOpenAI`` (no retries), an
    ``asyncio.Semaphore(concurrency)`` and ``gather``; one user message per prompt, greedy, seed 0.

    The ``warm`` prompts go first, untimed. Returns the wall and process-CPU seconds of the timed batch
    and the reply texts in prompt order (bench_llm's client-overhead figure and bench_peers use it).
    """
    import asyncio

    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", timeout=timeout, max_retries=0)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(prompt: str) -> str:
        async with semaphore:
            response = await client.chat.completions.create(
                model=alias, messages=[{"role": "user", "content": prompt}], temperature=0.0, top_p=1.0,
                max_tokens=max_tokens, n=1, seed=0,
            )
            return response.choices[0].message.content or ""

    try:
        await asyncio.gather(*(one(p) for p in warm))
        started, cpu = time.perf_counter(), time.process_time()
        outputs = await asyncio.gather(*(one(p) for p in prompts))
        return time.perf_counter() - started, time.process_time() - cpu, list(outputs)
    finally:
        await client.close()


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command that reproduces this run, with ``nice`` only if this process really ran niced."""
    args = sys.argv[1:] if argv is None else list(argv)
    niceness = os.nice(0)
    prefix = [f"nice -n {niceness}"] if niceness else []
    return " ".join([*prefix, ".venv/bin/python", "-m", module, *(shlex.quote(a) for a in args)])


def table_row(cells) -> str:
    """One markdown table row."""
    return "| " + " | ".join(map(str, cells)) + " |"


def table_head(head) -> list[str]:
    """A markdown table's header and its rule."""
    return [table_row(head), "|" + "---|" * len(head)]
