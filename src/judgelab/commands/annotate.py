"""`judgelab annotate`: label items in the browser; `judgelab agreement`: how far the annotators agree
(docs/annotate.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from judgelab.commands._ids import ids_file
from judgelab.commands._numbers import checked
from judgelab.errors import ConfigError

CHECK_IDS = ids_file("--ids")  # --ids 5 names the forms --ids takes, not only "5: no such file"


def register(app: typer.Typer) -> None:
    app.command("annotate")(annotate)
    app.command("agreement")(agreement)


def annotate(
    data: Path = typer.Option(..., "--data", "-d", help="Items to label (JSONL, CSV, Parquet)."),
    aspect: str = typer.Option(..., "--aspect", "-a", help="What to rate (coherence, relevance, preference, ...); "
                               "several separated by commas are rated on one page, each its own label "
                               "(e.g. naturalness,informativeness)."),
    out: Path = typer.Option(..., "--out", "-o", help="labels.jsonl: answers are appended; rerun to continue."),
    scale: str | None = typer.Option(None, "--scale", help="Whole-number scale LOW-HIGH, e.g. 1-5 (default: the "
                                     "items' declared scale per aspect; relevance items 0-3 with TREC's grades; "
                                     "else 1-5)."),
    labels: str | None = typer.Option(None, "--labels", help="Label values instead of a range, e.g. 0,1,2,3 or "
                                      "0=irrelevant,1=related,2=relevant,3=perfect."),
    pairwise: bool = typer.Option(False, "--pairwise", help="Pairwise items: which of two responses is better "
                                  "(shown in random order per item; the default for pairwise items)."),
    ids: Path | None = typer.Option(None, "--ids", callback=CHECK_IDS,
                                    help="Label only these items: a file with one id per line."),
    sample: int | None = typer.Option(None, "--sample", callback=checked("Count"), help="Label a random sample of N items (see --seed)."),
    criteria: list[str] | None = typer.Option(None, "--criteria", help="What the aspect means, shown beside each "
                                              "item: TEXT or @FILE (default: built-in criteria for common aspects); "
                                              "with several aspects, once per aspect in their order."),
    annotator: str | None = typer.Option(None, "--annotator", help="Your name (else each person enters one)."),
    overlap: float = typer.Option(1.0, "--overlap", callback=checked("Fraction"), help="Share of items every annotator labels; the others go to "
                                  "one annotator each (1: everyone labels everything; e.g. 0.2)."),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed"), help="Seed of --sample, of the overlap and of the pairwise order."),
    show_judge: Path | None = typer.Option(None, "--show-judge", help="Show this judge's score beside each item "
                                           "(judgments file or run folder), for adjudication."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; another than 127.0.0.1 asks for a "
                             "random token in the URL."),
    port: int = typer.Option(8765, "--port", "-p", callback=checked("Port"), help="Port (0: any free one)."),
    until_decided: str | None = typer.Option(
        None, "--until-decided", help="Stop asking once the labels decide a question: 'best' (items of several "
        "systems: which is best) or 'worse:BASELINE,CANDIDATE[,MARGIN]' (comparisons: is the candidate worse "
        "head-to-head); items come in random order, and confidence sequences keep the answer valid."),
) -> None:
    """Label items in your browser: a local web app, keyboard first, every answer saved at once."""
    try:
        from judgelab.annotate.server import serve
    except ImportError as exc:
        raise ConfigError(f"judgelab annotate needs the annotate extra ({exc.name} is missing): "
                          "pip install 'judgelab[annotate]'") from None
    from judgelab.annotate.task import build_task

    task = build_task(data, aspect, out, scale=scale, labels=labels, pairwise=pairwise, ids=ids, sample=sample,
                      criteria=criteria, annotator=annotator, overlap=overlap, seed=seed, show_judge=show_judge,
                      until_decided=until_decided)
    serve(task, host=host, port=port, announce=lambda line: typer.echo(line))


def agreement(
    labels: Path = typer.Argument(..., help="Labels with several annotators (annotate's labels.jsonl, or any file "
                                  "with item_id, annotator and value)."),
    aspect: str | None = typer.Option(None, "--aspect", "-a", help="Aspect to compare (default: the only one)."),
    data: Path | None = typer.Option(None, "--data", "-d", help="The items: checks the labels belong to them and "
                                     "to their scale."),
    level: str | None = typer.Option(None, "--level", help="Krippendorff's alpha level: ordinal (default), "
                                     "interval or nominal (default for pairwise preferences)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", callback=checked("Resamples"), help="Resamples of items for alpha's interval (0: none)."),
    seed: int = typer.Option(0, "--seed", callback=checked("Seed"), help="Seed of the bootstrap."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Inter-annotator agreement: Krippendorff's alpha and Cohen's kappa on the items several people labelled."""
    from judgelab.data.io import load_items
    from judgelab.data.labels import check_against_items, for_aspect, label_matrix, labels_aspect, load_labels
    from judgelab.metrics.annotators import annotator_agreement

    if level not in (None, "ordinal", "interval", "nominal"):
        raise ConfigError(f"--level {level!r}: choose ordinal, interval or nominal")
    if bootstrap:  # 0: no interval
        from judgelab.metrics.bootstrap import check_resamples

        check_resamples(bootstrap, 0.95, "bootstrap")
    read = load_labels(labels)
    aspect = labels_aspect(read, aspect)
    if data is not None:
        check_against_items(for_aspect(read, aspect), aspect, load_items(data))
    annotators, _, matrix = label_matrix(read, aspect)
    if len(annotators) < 2:
        raise ConfigError(f"{labels}: only one annotator labelled {aspect!r} ({annotators[0] or 'unnamed'}); "
                          "agreement needs two or more")
    preferences = any(isinstance(label.value, str) for label in for_aspect(read, aspect))
    chosen = level or ("nominal" if preferences else "ordinal")
    result = annotator_agreement(matrix, annotators, level=chosen, n_resamples=bootstrap, seed=seed)  # type: ignore[arg-type]
    if as_json:
        typer.echo(json.dumps({"aspect": aspect, **result.to_dict()}, indent=2, ensure_ascii=False))
        return
    _print_agreement(aspect, result)


def _print_agreement(aspect: str, result) -> None:
    from judgelab.commands._common import console

    alpha = result.alpha
    console.print(f"aspect [bold]{escape(aspect)}[/]: {len(result.annotators)} annotators, {result.n_items} items "
                  f"labelled, [bold]{result.n_overlap}[/] labelled by two or more (the overlap)", soft_wrap=True)
    if alpha.reason:
        console.print(f"Krippendorff's alpha ({result.level}): undefined ({alpha.reason})", soft_wrap=True)
    else:
        ci = f" [{alpha.ci[0]:.3f}, {alpha.ci[1]:.3f}]" if alpha.ci else ""
        console.print(f"Krippendorff's alpha ({result.level}): [bold]{alpha.value:.3f}[/]{escape(ci)} "
                      f"on {alpha.n} items: the agreement a judge can hope to reach", soft_wrap=True)
    table = Table("annotators", "shared items", "Cohen's kappa", "kappa (quadratic)", title="pairs of annotators")
    for pair in result.pairs:
        table.add_row(escape(" / ".join(name or "unnamed" for name in pair.annotators)), str(pair.n),
                      _figure(pair.kappa, pair.reason), _figure(pair.kappa_quadratic, pair.reason))
    console.print(table)
    counts = ", ".join(f"{escape(name or 'unnamed')} {n}" for name, n in result.labels_per_annotator.items())
    console.print(f"labels per annotator: {counts}", soft_wrap=True)


def _figure(value: float | None, reason: str | None) -> str:
    return f"{value:.3f}" if value is not None else f"— ({reason})" if reason else "—"
