"""`judgelab fit`: teach a trainable judge from labelled items and save the fitted config.

The fitted config (plus any weight files beside it) is what `judgelab judge --config` reuses,
so learning (task inference, aggregator training, a scorer's weights) is paid for once.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgelab.commands._common import HUMAN_HELP, TIMEOUT_HELP, client_from_options, human_labelled
from judgelab.commands._numbers import checked
from judgelab.commands.judge import judge_config_from_options
from judgelab.errors import ConfigError
from judgelab.llm.models import MODEL_STRING_HELP


def register(app: typer.Typer) -> None:
    app.command("fit")(fit)


def fit(
    data: Path = typer.Option(..., "--data", "-d", help="Labelled items to learn from (JSONL, CSV, Parquet)."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the fitted config (YAML); weights go beside it."),
    method: str | None = typer.Option(None, "--method", help="Judge kind to fit, when no --config is given."),
    config: Path | None = typer.Option(None, "--config", "-c", help="A judge config (YAML/JSON) to fit."),
    aspect: str | None = typer.Option(None, "--aspect", "-a", help="The human score the judge learns (e.g. coherence)."),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_STRING_HELP + " (for judges that call an LLM while fitting)."),
    model_name: str | None = typer.Option(None, "--model-name", help="Model name on an OpenAI-compatible server."),
    human: Path | None = typer.Option(None, "--human", help=HUMAN_HELP + " Only labelled items are used."),
    timeout: float | None = typer.Option(None, "--timeout", callback=checked("Seconds"), help=TIMEOUT_HELP),
    limit: int | None = typer.Option(None, "--limit", callback=checked("Count"), help="Learn from the first N items only."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Use the completion cache."),
    cache_path: Path | None = typer.Option(None, "--cache-path", help="Cache file (default ~/.cache/judgelab/cache.sqlite)."),
) -> None:
    """Fit a trainable judge (e.g. an aggregator, a similarity scorer, an inferred protocol) on labelled items."""
    from judgelab.commands._common import console
    from judgelab.data import load_items
    from judgelab.judges.base import judge_kinds
    from judgelab.train.fit import fit_judge

    if not config and not method:
        raise ConfigError(f"say what to fit: --config FILE or --method KIND (kinds: {', '.join(judge_kinds())})")
    items, aspect = human_labelled(list(load_items(data)), human, aspect, labelled_only=True)
    judge = judge_config_from_options(config, method, aspect)
    if not judge.trainable:
        trainable = judge_kinds(trainable_only=True)
        raise ConfigError(f"judges of kind {judge.kind!r} learn nothing from labelled items; "
                          f"trainable kinds: {', '.join(trainable) or 'none'}")
    if limit:
        items = items[:limit]
    from judgelab.metrics.align import require_human_values

    require_human_values(items, aspect or getattr(judge, "aspect", None), human or data)  # before the model loads
    if out.suffix not in (".yaml", ".yml", ".json"):
        raise ConfigError(f"--out {out}: the fitted config is a file ending in .yaml or .json")
    with client_from_options(model or judge.model, model_name, cache, cache_path, uses_llm=judge.uses_llm,
                             timeout=timeout) as client:
        fitted = fit_judge(judge, items, client, out_dir=out.parent)
    fitted.save(out)
    console.print(f"fitted {fitted.kind} judge on {len(items)} items: {out}")

