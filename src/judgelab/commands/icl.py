"""`judgelab icl-train`: train the in-context example retriever from LLM feedback (PanguIR 3.3).

Writes ``OUT/retriever/`` (the fine-tuned MiniLM towers, ``icl.json``, ``feedback.jsonl``) and
``OUT/judge.yaml``: the prompted judge set to draw its examples through the retriever, which
``judgelab judge --config OUT/judge.yaml --examples-from DEV.jsonl`` reuses.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgelab.commands._common import TIMEOUT_HELP, client_from_options
from judgelab.commands._numbers import checked
from judgelab.commands.judge import judge_config_from_options
from judgelab.errors import ConfigError
from judgelab.llm.models import MODEL_STRING_HELP


def register(app: typer.Typer) -> None:
    app.command("icl-train")(icl_train)


def icl_train(
    data: Path = typer.Option(..., "--data", "-d", help="Labelled training items (JSONL, CSV, Parquet)."),
    aspect: str | None = typer.Option(None, "--aspect", "-a", help="The human score the examples should help predict."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the retriever and judge.yaml."),
    config: Path | None = typer.Option(None, "--config", "-c", help="The prompted judge to give feedback (default: MT-Bench strategy)."),
    strategy: str | None = typer.Option(None, "--strategy", help="HPSS factors laid over the judge, e.g. 'cot=none,examples=3'."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP),
    model_name: str | None = typer.Option(None, "--model-name", help="Model name on an OpenAI-compatible server."),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    pool: Path | None = typer.Option(None, "--pool", help="Labelled candidate examples (default: --data)."),
    candidates: int = typer.Option(8, "--candidates", callback=checked("Count"), help="Candidate examples judged per training item (LLM calls = items x this)."),
    epochs: int = typer.Option(1, "--epochs", callback=checked("Count"), help="Passes over the training items."),
    lr: float = typer.Option(1e-4, "--lr", callback=checked("Positive"), help="AdamW learning rate (the seed's 1e-4)."),
    batch_size: int = typer.Option(4, "--batch-size", callback=checked("Count"), help="Training items per optimiser step."),
    scale: float = typer.Option(20.0, "--scale", callback=checked("Positive"), help="Multiplier of the cosine similarity inside the loss."),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed"), help="Seeds candidate draws, batch order and torch."),
    examples: int | None = typer.Option(None, "--examples", callback=checked("ExampleCount"), help="In-context examples of the saved judge: 3, 5 or 10 (default: the judge's, else 5)."),
    source: str = typer.Option("diverse", "--source", help="Example source of the saved judge: diverse (semantic + trained, by band) or trained."),
    base_model: Path | None = typer.Option(None, "--base-model", help="sentence-transformers folder to start from (default: the shipped MiniLM)."),
    limit: int | None = typer.Option(None, "--limit", callback=checked("Count"), help="Train on the first N items only (candidates still come from all of --data)."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Use the completion cache."),
    cache_path: Path | None = typer.Option(None, "--cache-path", help="Cache file (default ~/.cache/judgelab/cache.sqlite)."),
) -> None:
    """Train an in-context example retriever from the judge's feedback and save a judge that uses it."""
    from judgelab.commands._common import console
    from judgelab.data import load_items
    from judgelab.judges.prompted import PromptedJudge
    from judgelab.optimize.icl import TrainingOptions, fit_example_retriever

    if source not in ("diverse", "trained"):
        raise ConfigError(f"--source {source!r}: use 'diverse' or 'trained'")
    judge = judge_config_from_options(config, None, aspect, strategy=strategy)
    if not isinstance(judge, PromptedJudge):
        raise ConfigError(f"--config: in-context examples are for prompted judges, not {judge.kind!r}")
    labelled = list(load_items(data))
    items = labelled[:limit] if limit else labelled
    candidate_pool = list(load_items(pool)) if pool else labelled  # --limit bounds the items, not the pool
    options = TrainingOptions(epochs=epochs, lr=lr, batch_size=batch_size, scale=scale, seed=seed)
    with client_from_options(model or judge.model, model_name, cache, cache_path, timeout=timeout) as client:
        result = fit_example_retriever(judge, items, client, out, pool=candidate_pool, candidates=candidates,
                                       options=options, source=source, examples=examples,  # type: ignore[arg-type]
                                       base_model=base_model, show_progress=True)
        usage = client.usage
    path = result.judge.save(out / "judge.yaml")
    dropped = sum(entry.dropped for entry in result.feedback)
    console.print(f"feedback: {result.training.pairs} ranked (item, example) pairs over {result.training.queries} items, "
                  f"{dropped} unparsable/failed; {usage.calls} LLM calls, {usage.cache_hits} cache hits")
    losses = result.training.losses
    console.print(f"trained {len(losses)} steps in {result.training.seconds:.1f}s "
                  f"(loss {losses[0]:.4f} -> {losses[-1]:.4f}): {result.training.folder}")
    console.print(f"judge using it: {path}")
