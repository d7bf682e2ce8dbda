"""`judgelab meta`: how well a judge's outputs agree with the human labels (docs/metrics.md)."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from judgelab.errors import ConfigError, DataError

if TYPE_CHECKING:
    from judgelab.data import Item, Judgment

PRESET_HELP = "How a seed reports: aeollm, llmjudge, hpss, active-critic (default: everything that applies)."


def register(app: typer.Typer) -> None:
    app.command("meta")(meta)


def meta(
    data: Annotated[Path, typer.Option("--data", "-d", help="Items with human labels (JSONL/JSON/CSV/Parquet).")],
    judgments: Annotated[Path, typer.Option(
        "--judgments", "-j", help="Judgments: this toolkit's, or any file with item_id and score/label.")],
    aspect: Annotated[str | None, typer.Option(
        "--aspect", "-a", help="Human score to compare with (default: the only one).")] = None,
    preset: Annotated[str | None, typer.Option("--preset", "-p", help=PRESET_HELP)] = None,
    level: Annotated[str | None, typer.Option(
        "--level", help="Correlation levels, comma-separated: dataset,group,system.")] = None,
    runs: Annotated[Path | None, typer.Option(
        "--runs", help="Folder of TREC run files: adds the leaderboard (relevance items).")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Judge name, when the file holds several.")] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", help="Another judge's judgments: adds judge-minus-baseline differences (paired bootstrap).")] = None,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", help="Bootstrap resamples for the intervals (0: none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    alpha_level: Annotated[str, typer.Option(
        "--alpha-level", help="Krippendorff's alpha level: ordinal, nominal or interval.")] = "ordinal",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Also write a report folder: run.json, metrics.json, judgments.jsonl, report.html.")] = None,
) -> None:
    """Meta-evaluate a judge: correlations, label agreement, pairwise agreement, IR leaderboard."""
    from judgelab.cli import console
    from judgelab.data.io import load_items, load_judgments
    from judgelab.metrics import meta_evaluate

    if bootstrap < 0:
        raise ConfigError("--bootstrap must be 0 or more")
    if alpha_level not in ("ordinal", "nominal", "interval"):
        raise ConfigError(f"--alpha-level {alpha_level!r}: choose ordinal, nominal or interval")
    if out is not None:
        _check_out_folder(out)
    levels = [part.strip() for part in level.split(",") if part.strip()] if level else None
    items, judged = load_items(data), load_judgments(judgments)
    report = meta_evaluate(items, judged, aspect=aspect, preset=preset, judge=judge,
                           levels=levels, runs=runs, n_resamples=bootstrap, seed=seed, alpha_level=alpha_level,
                           baseline=load_judgments(baseline) if baseline else None)
    result = report.to_dict()
    written = None
    if out is not None:
        options = {"aspect": aspect, "preset": preset, "level": levels, "runs": runs, "judge": judge,
                   "baseline": baseline, "bootstrap": bootstrap, "seed": seed, "alpha_level": alpha_level}
        written = _write_report_folder(out, items, _compared(judged, result), result,
                                       _record(data, judgments, result, options))
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for renderable in _tables(result):
            console.print(renderable, soft_wrap=isinstance(renderable, str))
    if written is not None:  # stderr under --json: stdout stays one JSON object
        typer.echo(f"report: {written}", err=as_json)


# -- the report folder (--out) ---------------------------------------------------------------------
OUT_FILES = ("run.json", "metrics.json", "judgments.jsonl", "report.html")


def _check_out_folder(out: Path) -> None:
    """--out must be new, empty, or an earlier `judgelab meta` folder: never another run's files."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    record = _read_record(out / "run.json")
    if record is not None and record.get("command") != "meta":
        raise ConfigError(f"--out {out} holds a run of another command; choose a new folder "
                          f"(`judgelab report {out}` rewrites that run's own report)")
    if record is None and (taken := [name for name in OUT_FILES if (out / name).exists()]):
        raise ConfigError(f"--out {out} already has {', '.join(taken)} and no meta run.json; choose a new folder")


def _read_record(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"bad JSON ({exc.msg})", path, exc.lineno) from None
    return record if isinstance(record, dict) else {}


def _compared(judged: list[Judgment], result: Mapping[str, Any]) -> list[Judgment]:
    """The judgments meta_evaluate considered: the evaluated aspect, the chosen judge (metrics.align's own selection)."""
    from judgelab.metrics.align import select_judgments

    return select_judgments(judged, result["aspect"], result["judge"])


def _source_run(judgments: Path) -> dict[str, Any]:
    """run.json of the judge run the judgments come from (model, judge config, accounting), if any."""
    if judgments.name != "judgments.jsonl":
        return {}  # a run.json beside some other file describes another file's judgments
    try:
        return _read_record(judgments.parent / "run.json") or {}
    except DataError:
        return {}  # only context for the page's header: an unreadable neighbour must not stop meta


def _record(data: Path, judgments: Path, result: Mapping[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """run.json of a meta folder: what was compared, how, and the judge run it came from."""
    from judgelab import __version__

    source = _source_run(judgments)
    judge_config = source.get("judge") if isinstance(source.get("judge"), dict) else None
    if judge_config is None or judge_config.get("aspect") not in (None, result["aspect"]):
        # the page reads the aspect from the judge config: never let another aspect's config stand in
        judge_config = {"aspect": result["aspect"], **({"judge": result["judge"]} if result["judge"] else {})}
    return {
        "command": "meta", "status": "finished", "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {"judgelab": __version__}, "data": str(data.resolve()), "judgments": str(judgments.resolve()),
        "model": source.get("model") or "not recorded", "backend": source.get("backend") or f"judgments file {judgments.name}",
        "judge": judge_config, "source_run": str(judgments.parent.resolve()) if source else None,
        "usage": source.get("usage"), "options": {k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
    }


def _write_report_folder(out: Path, items: Iterable[Item], judged: list[Judgment], result: dict[str, Any],
                         record: dict[str, Any]) -> Path:
    """Write the four files into a scratch folder and move them in only once the page rendered."""
    from judgelab.data.io import save_judgments
    from judgelab.llm.types import Usage
    from judgelab.report import write_report

    statuses = Counter(j.status for j in judged)
    if not record["usage"]:  # no judge run beside the file: the accounting its judgments carry
        record["usage"] = sum((j.usage for j in judged), Usage()).model_dump()
    record |= {"items": result["coverage"]["n_items"], "counts": dict(statuses),
               "unparsable_share": statuses["unparsable"] / len(judged) if judged else 0.0}
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as scratch:
        folder = Path(scratch) / out.name  # the page's title is its folder's name
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
        (folder / "metrics.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
        save_judgments(judged, folder / "judgments.jsonl")
        write_report(folder, items)
        out.mkdir(exist_ok=True)
        for name in OUT_FILES:
            os.replace(folder / name, out / name)
    return out / "report.html"


# -- human-readable output -----------------------------------------------------------------------
def _is_estimate(value: Any) -> bool:
    return isinstance(value, Mapping) and "value" in value and "ci" in value


def _estimates(section: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """(dotted name, estimate dict) for every estimate nested in a section."""
    if _is_estimate(section):
        yield " / ".join(path), section
    elif isinstance(section, Mapping):
        for key, value in section.items():
            yield from _estimates(value, (*path, key))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _skipped(estimate: dict) -> str:
    skipped = estimate.get("skipped") or {}
    text = ", ".join(f"{len(groups)} {reason}" for reason, groups in skipped.items())
    return "; ".join(part for part in (text, estimate.get("reason") or "") if part)


def _tables(result: dict) -> Iterator[Any]:
    coverage = result["coverage"]
    lost = ", ".join(f"{k.removeprefix('n_').replace('_', ' ')} {v}" for k, v in coverage.items()
                     if v and k not in ("n_items", "n_used"))
    judge = f", judge {escape(result['judge'])}" if result["judge"] else ""
    yield (f"[bold]{result['kind']}[/] items, aspect [bold]{escape(result['aspect'] or '-')}[/]{judge}, "
           f"preset {result['preset'] or '-'}: {coverage['n_used']} of {coverage['n_items']} items used"
           + (f" ([yellow]{lost}[/])" if lost else ""))
    confidence = int(result["bootstrap"]["confidence"] * 100)
    table = Table(title="Agreement with humans")
    table.add_column("statistic", no_wrap=True)
    for column in ("value", f"{confidence}% CI", "n", "groups", "skipped"):
        table.add_column(column)
    for name, section in result.items():
        if name in ("coverage", "bootstrap", "comparison"):
            continue
        for label, est in _estimates(section, (name,)):
            ci = est["ci"]
            table.add_row(escape(label.replace("leaderboard / ", "")), _number(est["value"]),
                          escape(f"[{_number(ci[0])}, {_number(ci[1])}]") if ci else "-", str(est["n"]),
                          str(est.get("n_groups", "-")), escape(_skipped(est)))
    yield table
    if "agreement" in result:
        yield _confusion_table(result["agreement"]["confusion_matrix"])
    if "leaderboard" in result:
        yield _runs_table(result["leaderboard"])
    if "comparison" in result:
        yield _comparison_table(result["comparison"])
    boot = result["bootstrap"]
    yield f"[dim]{boot['n_resamples']} bootstrap resamples of groups, seed {boot['seed']}[/]"


def _confusion_table(confusion: dict) -> Table:
    labels = [escape(str(label)) for label in confusion["labels"]]
    table = Table("human \\ judge", *labels, title="Confusion matrix")
    for label, row in zip(labels, confusion["matrix"], strict=True):
        table.add_row(label, *(str(count) for count in row))
    return table


def _runs_table(board: dict) -> Table:
    runs = board["runs"]
    by_human = sorted(runs, key=lambda name: -(runs[name]["human"] or 0))
    by_judge = sorted(runs, key=lambda name: -(runs[name]["judge"] or 0))
    measure = board["measure"]
    table = Table("run", f"{measure} human", "rank", f"{measure} judge", "rank", title="Leaderboard")
    for name in by_human:
        table.add_row(escape(name), _number(runs[name]["human"]), str(by_human.index(name) + 1),
                      _number(runs[name]["judge"]), str(by_judge.index(name) + 1))
    return table


def _comparison_table(comparison: dict) -> Table:
    table = Table(title="Judge minus baseline (paired bootstrap)")
    for column in ("statistic", "judge", "baseline", "difference", "95% CI", "p", "n"):
        table.add_column(column, no_wrap=column in ("statistic", "95% CI"))
    for level, by_method in comparison.items():
        for method, c in by_method.items():
            ci = escape(f"[{_number(c['ci'][0])}, {_number(c['ci'][1])}]") if c["ci"] else "-"
            table.add_row(f"{level} / {method}", _number(c["b"]["value"]), _number(c["a"]["value"]),
                          _number(c["difference"]), ci, _number(c["p_value"]), str(c["b"]["n"]))
    return table
