"""A system evaluation as a report folder: what ``judgelab evaluate --out DIR`` writes.

    DIR/run.json         "command": "evaluate": the files, the options, the judge run behind them
    DIR/systems.json     ``SystemsReport.to_dict()``: exactly what ``judgelab evaluate --json`` prints
    DIR/systems.csv      ``SystemsReport.table()``: one row per (system, estimator)
    DIR/pairs.csv        ``SystemsReport.pairs_table()``: one row per (estimator, pair of systems)
    DIR/judgments.jsonl  the judgments evaluated
    DIR/report.html      the page, with its "Systems" section; ``judgelab report DIR`` rewrites it
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from judgelab.csv_cells import safe_csv
from judgelab.data.io import save_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.evaluate.board import SystemsReport
from judgelab.files import source_folder, source_run, staged_folder, write_atomic
from judgelab.report.html import write_report
from judgelab.report.meta import (
    check_report_folder,
    given_backend,
    judge_config,
    move_folder_in,
)

SYSTEMS_FILES = ("run.json", "systems.json", "systems.csv", "pairs.csv", "judgments.jsonl", "report.html")


def check_systems_folder(out_dir: str | Path) -> Path:
    return check_report_folder(out_dir, "evaluate", SYSTEMS_FILES)


def write_systems_report(out_dir: str | Path, items: Iterable[Item] | None, judgments: Iterable[Judgment],
                         report: SystemsReport, *, data: str | Path | None = None,
                         judgments_file: str | Path | list[str] | None = None,
                         options: Mapping[str, Any] | None = None) -> Path:
    """Write ``out_dir`` as an evaluate report folder and return the path of its report.html."""
    from judgelab.version import installed_version

    out_dir = check_systems_folder(out_dir)
    judgments = _of_judges(_one_file(judgments), (options or {}).get("judge"))
    several = isinstance(judgments_file, (list, tuple))
    source = {} if several else source_run(judgments_file)
    record = {
        "command": "evaluate", "status": "finished", "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {"judgelab": installed_version()}, "data": _absolute(data),
        "judgments": [_absolute(p) for p in judgments_file] if several else _absolute(judgments_file),
        "model": source.get("model") or "not recorded",
        "backend": source.get("backend") or (f"{len(judgments_file)} judges' judgments files" if several else
                                             f"judgments file {Path(judgments_file).name}" if judgments_file
                                             else given_backend(options or {}, data)),
        "judge": judge_config(source, report.aspect), "items": report.coverage["units"],
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in (options or report.options).items()},
    }
    if source:  # the judge run behind the judgments: its calls, tokens and time
        record["source_run"] = str(source_folder(judgments_file).resolve())
        if isinstance(source.get("usage"), dict):
            record["usage"] = source["usage"]
    with staged_folder(out_dir, move_in=lambda folder, target: move_folder_in(
            folder, target, check_systems_folder, SYSTEMS_FILES)) as folder:
        write_atomic(folder / "run.json", json.dumps(record, indent=2, default=str))
        write_atomic(folder / "systems.json", json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        write_atomic(folder / "systems.csv", safe_csv(report.table(), index=False))
        write_atomic(folder / "pairs.csv", safe_csv(report.pairs_table(), index=False))
        save_judgments(judgments, folder / "judgments.jsonl")
        write_report(folder, items)
    return out_dir / "report.html"


def _one_file(judgments) -> list[Judgment]:
    """Every verdict, for the folder's judgments.jsonl: several judges' (``{where: verdicts}``) each named by
    its judge (where it came from, when a verdict names none), so the file reads back judge by judge."""
    from judgelab.data.given import named_by_where

    return named_by_where(judgments) if isinstance(judgments, Mapping) else list(judgments)


def _of_judges(judgments: list[Judgment], judge: str | list[str] | None) -> list[Judgment]:
    """The verdicts of the judges --judge chose (a name, else the names it starts), as the estimate read them."""
    names = [judge] if isinstance(judge, str) else list(judge or [])
    exact = set(names) & {j.judge for j in judgments}
    return [j for j in judgments if not names or any(j.judge == name or (
        name not in exact and j.judge is not None and j.judge.startswith(name)) for name in names)]


def _absolute(path: str | Path | None) -> str | None:
    return None if path is None else str(Path(path).resolve())
