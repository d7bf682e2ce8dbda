"""`judgelab combine`: several judges' labels as one judge (majority, mean, Dawid-Skene; docs/combine.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgelab.errors import ConfigError

METHOD_HELP = ("majority (vote), mean (of the numeric verdicts), dawid-skene (latent classes, judges err "
               "independently) or family-dawid-skene (judges that err together count as one family).")


def register(app: typer.Typer) -> None:
    app.command("combine")(combine)


def combine(
    judgments: Annotated[list[Path], typer.Option(
        "--judgments", "-j", help="A judge's verdicts: a run folder, its judgments.jsonl, or any file with item_id "
                                  "and score/label; once per judge (NAME=PATH names it), or once for a file "
                                  "holding several judges.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The combined judgments file to write (JSONL).")],
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", "--judge-name", help="A judge of the one --judgments file (its name, or a prefix naming one "
                                        "judge); more than once: several. Default: every judge in the files.")] = None,
    method: Annotated[str, typer.Option("--method", "-m", help=METHOD_HELP)] = "dawid-skene",
    field: Annotated[str | None, typer.Option(
        "--field", help="Where each row keeps the verdict, for published judge outputs: e.g. prediction.coherence. "
                        "Default: label, else score.")] = None,
    round_scores: Annotated[bool, typer.Option(
        "--round", help="Round numeric verdicts to whole numbers first (ratings averaged over samples).")] = False,
    family: Annotated[list[str] | None, typer.Option(
        "--family", help="family-dawid-skene: judges that err together, comma-separated (more than once: several "
                         "families). Default: found from the verdicts.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the table.")] = False,
) -> None:
    """Combine several judges' labels (a/b/tie, grades, whole-number ratings) into one judge's judgments."""
    from judgelab.data.io import save_judgments
    from judgelab.metrics.combine import combine_judgments, read_judges

    sources = [_named(path) for path in judgments]
    if out.resolve() in {Path(path).resolve() for _, path in sources}:
        raise ConfigError(f"--out {out} is one of the --judgments files: write the combination elsewhere")
    families = [[name.strip() for name in spec.split(",") if name.strip()] for spec in family] if family else None
    judges = read_judges([path if name is None else (name, path) for name, path in sources], judge or (), field=field)
    combined = combine_judgments(judges, method, round_scores=round_scores, families=families)
    save_judgments(combined.judgments, out)
    if as_json:
        typer.echo(json.dumps(combined.summary() | {"out": str(out)}, indent=2))
    else:
        _print(combined, out)


def _named(given: Path) -> tuple[str | None, Path]:
    """``NAME=PATH`` as (NAME, PATH); a path that exists as given (even with an ``=`` in it) as (None, path)."""
    text = str(given)
    name, sep, path = text.partition("=")
    if given.exists() or not sep or not name or "/" in name:
        return None, given
    return name, Path(path)


def _print(combined, out: Path) -> None:
    from rich import box

    from judgelab.commands._common import console
    from judgelab.commands._tables import named_table

    names = list(combined.judges)
    columns = [("items", [str(combined.coverage[n]) for n in names])]
    if combined.fit is not None:
        shared = [family for family in combined.families() if len(family) > 1]  # numbered 1, 2, ...; alone: -
        family_of = {name: str(k) for k, family in enumerate(shared, start=1) for name in family}
        columns += [("modelled accuracy", [f"{a:.3f}" for a in combined.fit.accuracy()]),
                    ("family", [family_of.get(n, "-") for n in names])]
    fitted = named_table(names, columns, console.width, name_header="judge", box=box.SIMPLE_HEAD, pad_edge=False,
                         left_out_first=("family", "modelled accuracy"))
    console.print(fitted.table)
    for line in fitted.notes(console.width, "judge names"):
        console.print(line, soft_wrap=True)
    summary = combined.summary()
    failed = f", {summary['items_without_verdict']} without any verdict" if summary["items_without_verdict"] else ""
    fit = combined.fit
    how = "" if fit is None else (f"; EM {'converged' if fit.converged else 'stopped unconverged'} after "
                                  f"{fit.iterations} iterations")
    console.print(f"{summary['items']} items{failed} ({combined.method}{how}) -> {escape(str(out))}", soft_wrap=True)
    for note in fit.notes if fit is not None else ():
        console.print(f"note: {escape(note)}", soft_wrap=True)
