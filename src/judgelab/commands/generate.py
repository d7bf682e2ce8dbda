"""`judgelab generate`: send one prompt to a model and print the reply (and logprobs)."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from judgelab.commands._common import TIMEOUT_HELP
from judgelab.commands._numbers import checked
from judgelab.llm.models import MODEL_STRING_HELP


def register(app: typer.Typer) -> None:
    app.command("generate")(generate)


def generate(
    prompt: str = typer.Argument(..., help="The user message."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP),
    model_name: str | None = typer.Option(None, "--model-name", help="Model name on an OpenAI-compatible server."),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    system: str | None = typer.Option(None, "--system", help="A system message."),
    prefix: str = typer.Option("", "--prefix", help="Force the reply to start with this text."),
    max_tokens: int = typer.Option(128, "--max-tokens", callback=checked("MaxTokens")),
    temperature: float = typer.Option(0.0, "--temperature", callback=checked("Temperature")),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed")),
    n: int = typer.Option(1, "--n", callback=checked("Samples"), help="Number of samples."),
    top_logprobs: int = typer.Option(0, "--top-logprobs", callback=checked("TopLogprobs"), help="Show this many alternatives per token (0: no logprobs)."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Use the shared completion cache."),
    as_json: bool = typer.Option(False, "--json", help="Print the completions as JSON."),
) -> None:
    """Check a backend: one prompt in, completion(s) and logprobs out."""
    from judgelab.commands._common import console
    from judgelab.llm.resolve import make_client
    from judgelab.llm.types import Request

    request = Request.of(
        prompt, system=system, assistant_prefix=prefix, max_tokens=max_tokens, temperature=temperature,
        seed=seed, n=n, logprobs=top_logprobs > 0, top_logprobs=top_logprobs,
    )
    with make_client(model, model_name, cache=cache, timeout=timeout) as client:
        completions = client.complete(request)
        stats = client.stats()
    if as_json:
        console.print_json(json.dumps({"completions": [c.model_dump(mode="json") for c in completions],
                                       "usage": stats}))
        return
    for index, completion in enumerate(completions):
        console.print(f"[bold]sample {index}[/] ({completion.finish_reason}, "
                      f"{'cached' if completion.cached else f'{completion.latency_s:.2f}s'}):")
        console.print(prefix + completion.text, highlight=False, markup=False)
        if completion.logprobs:
            console.print(_logprob_table(completion))
    console.print(f"[dim]{stats['calls']} calls, {stats['cache_hits']} cache hits, "
                  f"{stats['prompt_tokens']}+{stats['completion_tokens']} tokens, backend {stats['backend']}[/]")


def _logprob_table(completion) -> Table:
    table = Table("token", "logprob", "alternatives")
    for entry in completion.logprobs:
        alternatives = "  ".join(f"{alt.token!r} {alt.logprob:.2f}" for alt in entry.top[1:6])
        table.add_row(repr(entry.token), f"{entry.logprob:.3f}", alternatives)
    return table
