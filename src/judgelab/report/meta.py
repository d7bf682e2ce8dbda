"""A meta-evaluation as a report folder: what ``judgelab meta --out DIR`` writes, callable from Python.

    DIR/run.json         "command": "meta": what was compared, how, and the judge run it came from
    DIR/metrics.json     ``MetaReport.to_dict()``: exactly what ``judgelab meta --json`` prints
    DIR/judgments.jsonl  the judgments compared (the evaluated aspect, the chosen judge)
    DIR/report.html      the page (report/html.py); ``judgelab report DIR`` rewrites it

>>> report = meta_evaluate(items, judgments, aspect="coherence", baseline=old)      # doctest: +SKIP
>>> write_meta_report("runs/r1-meta", items, judgments, report, data="X.jsonl",
...                   judgments_file="runs/r1/judgments.jsonl")                      # doctest: +SKIP

Everything is checked and rendered in a scratch folder beside DIR first; a new DIR is then
renamed into place whole, an earlier meta folder gets the four files replaced. A folder that
holds another command's run (a judge's own run folder) is never written to.
"""

from __future__ import annotations

import errno
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from judgelab.data.io import judgments_file as judgments_path
from judgelab.data.io import save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.files import source_folder, source_run, staged_folder, write_atomic
from judgelab.metrics.align import select_judgments
from judgelab.metrics.evaluate import MetaReport
from judgelab.report.html import read_run_record, write_report

META_FILES = ("run.json", "metrics.json", "judgments.jsonl", "report.html")
#: what a meta folder may hold besides: the judge's card, with meta --out --card
_WITH_CARD = (*META_FILES, "card.json")


def check_meta_folder(out_dir: str | Path) -> Path:
    """``out_dir`` must be new, empty, or an earlier meta report folder: never another run's files.

    Raises ``ConfigError`` otherwise (``DataError`` for an unreadable run.json in it).
    """
    return check_report_folder(out_dir, "meta", _WITH_CARD)


def check_report_folder(out_dir: str | Path, command: str, files: tuple[str, ...]) -> Path:
    """``out_dir`` must be new, empty, or an earlier report folder of ``command`` (holding ``files``)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{out_dir} is a file; give a folder for the {command} report")
    record = read_run_record(out_dir) if out_dir.is_dir() else None
    if record is not None and record.get("command") != command:
        raise ConfigError(f"{out_dir} holds a run of another command; choose a new folder "
                          f"(`judgelab report {out_dir}` rewrites that run's own report)")
    if record is None and (taken := [name for name in files if (out_dir / name).exists()]):
        raise ConfigError(f"{out_dir} already has {', '.join(taken)} and no {command} run.json; choose a new folder")
    return out_dir


def write_meta_report(out_dir: str | Path, items: Iterable[Item] | None, judgments: Iterable[Judgment],
                      result: MetaReport | Mapping[str, Any], *, data: str | Path | None = None,
                      judgments_file: str | Path | None = None, options: Mapping[str, Any] | None = None,
                      card: Mapping[str, Any] | None = None) -> Path:
    """Write ``out_dir`` as a meta report folder and return the path of its report.html.

    ``items`` and ``judgments``: what was given to ``meta_evaluate`` (the judgments it compared are
    kept: the evaluated aspect, the chosen judge); ``items=None`` reads them from ``data``.
    ``result``: its ``MetaReport`` (or ``to_dict()``). ``data`` and ``judgments_file``: the files
    they came from, recorded in run.json; a judge's run folder (or the ``judgments.jsonl`` in it)
    lends the page that run's model, judge config and accounting. ``options``: how meta was called, recorded
    as given (default: the MetaReport's levels, bootstrap and alpha level). ``card``: the judge card written
    with it (``meta --card``), kept as card.json and shown in report.html.
    """
    out_dir = check_meta_folder(out_dir)
    metrics = result.to_dict() if isinstance(result, MetaReport) else dict(result)
    compared = select_judgments(judgments, metrics["aspect"], metrics["judge"])
    if options is None:
        options = _options_of(result) if isinstance(result, MetaReport) else {}
    if judgments_file is not None:
        judgments_file = judgments_path(judgments_file)
    record = _meta_record(metrics, compared, data=data, judgments_file=judgments_file, options=options)
    with staged_folder(out_dir, move_in=_move_in) as folder:
        write_atomic(folder / "run.json", json.dumps(record, indent=2, default=str))
        write_atomic(folder / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False))
        save_judgments(compared, folder / "judgments.jsonl")
        if card is not None:
            write_atomic(folder / "card.json", json.dumps(card, indent=2, ensure_ascii=False))
        write_report(folder, items)
    return out_dir / "report.html"


def _meta_record(metrics: Mapping[str, Any], compared: list[Judgment], *, data: str | Path | None,
                judgments_file: str | Path | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """run.json of a meta folder: what was compared, how, and the judge run it came from."""
    from judgelab.llm.types import Usage
    from judgelab.version import installed_version

    source = source_run(judgments_file)
    statuses = Counter(j.status for j in compared)
    usage = source.get("usage") or sum((j.usage for j in compared), Usage()).model_dump()
    return {
        "command": "meta", "status": "finished", "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {"judgelab": installed_version()}, "data": _absolute(data), "judgments": _absolute(judgments_file),
        "model": source.get("model") or "not recorded",
        "backend": source.get("backend") or (f"judgments file {Path(judgments_file).name}" if judgments_file
                                             else given_backend(options, data)),
        "judge": judge_config(source, metrics["aspect"], metrics["judge"]),
        "source_run": str(source_folder(judgments_file).resolve()) if source else None,
        "usage": usage, "options": {k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
        "items": metrics["coverage"]["n_items"], "counts": dict(statuses),
        "unparsable_share": statuses["unparsable"] / len(compared) if compared else 0.0,
    }


def given_backend(options: Mapping[str, Any], data: str | Path | None) -> str:
    """Where verdicts read from no judgments file came from: another tool's output (``--from``), or Python."""
    tool = options.get("from")
    return f"{tool} output {Path(data).name}" if tool and data is not None else "judgments given in Python"


def judge_config(source: Mapping[str, Any], aspect: str | None, judge_name: str | None = None) -> dict[str, Any]:
    """The judge config the page shows: the source run's, unless it judged another aspect."""
    judge = source.get("judge") if isinstance(source.get("judge"), dict) else None
    if judge is None or (aspect is not None and judge.get("aspect") not in (None, aspect)):
        # the page reads the aspect from the judge config: never let another aspect's config stand in
        judge = {"aspect": aspect, **({"judge": judge_name} if judge_name else {})}
    return judge


def _options_of(report: MetaReport) -> dict[str, Any]:
    chosen = report.options
    return {"aspect": report.aspect, "preset": report.preset, "judge": report.judge,
            "level": list(chosen.levels) if chosen.levels else None, "bootstrap": chosen.n_resamples,
            "seed": chosen.seed, "alpha_level": chosen.alpha_level}


def _absolute(path: str | Path | None) -> str | None:
    return None if path is None else str(Path(path).resolve())


# -- writing the folder whole ------------------------------------------------------------------------
def _move_in(folder: Path, out_dir: Path) -> None:
    move_folder_in(folder, out_dir, check_meta_folder, _WITH_CARD)


def move_folder_in(folder: Path, out_dir: Path, check, files: tuple[str, ...]) -> None:
    """A new ``out_dir`` is the scratch folder renamed (one atomic step); into an existing one
    (empty, or an earlier folder of the same command, checked again now) each file is renamed
    over its old self, and one this run did not write (a card) removed: no stale file beside the new report."""
    if not out_dir.exists():
        try:
            folder.rename(out_dir)
            return
        except OSError as exc:  # made meanwhile by someone else: treat it as an existing folder
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    check(out_dir)
    for name in files:
        if (folder / name).exists():
            os.replace(folder / name, out_dir / name)
        else:
            (out_dir / name).unlink(missing_ok=True)
