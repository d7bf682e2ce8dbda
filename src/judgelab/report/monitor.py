"""``judgelab evaluate --monitor --out DIR``: the watch written where a scheduled job can read it.

    DIR/run.json       what was run, when, at which confidence
    DIR/monitor.json   one entry per system (``Watch.to_dict``) and whether any alarm was raised
    DIR/monitor.csv    the same, one row per system
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from judgelab.csv_cells import safe_csv
from judgelab.evaluate.monitor import Watch
from judgelab.files import staged_folder, write_atomic
from judgelab.report.meta import check_report_folder, move_folder_in

MONITOR_FILES = ("run.json", "monitor.json", "monitor.csv")


def check_monitor_folder(out_dir: str | Path) -> Path:
    return check_report_folder(out_dir, "evaluate --monitor", MONITOR_FILES)


def write_monitor_report(out_dir: str | Path, watches: Sequence[Watch], confidence: float) -> Path:
    """Write ``out_dir`` and return the path of its monitor.json."""
    from judgelab.version import installed_version

    out_dir = check_monitor_folder(out_dir)
    rows = [w.to_dict() for w in watches]
    record = {"command": "evaluate --monitor", "status": "finished",
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "versions": {"judgelab": installed_version()}, "confidence": confidence}
    table = pd.DataFrame([{**row, "reference_low": row["reference"][0], "reference_high": row["reference"][1],
                           "current_low": row["current"][0], "current_high": row["current"][1]} for row in rows])
    table = table.drop(columns=["reference", "current"])
    with staged_folder(out_dir, move_in=lambda folder, target: move_folder_in(
            folder, target, check_monitor_folder, MONITOR_FILES)) as folder:
        write_atomic(folder / "run.json", json.dumps(record, indent=2))
        write_atomic(folder / "monitor.json", json.dumps(
            {"monitor": rows, "confidence": confidence, "alarm": any(w.alarm for w in watches)}, indent=2,
            ensure_ascii=False))
        write_atomic(folder / "monitor.csv", safe_csv(table, index=False))
    return out_dir / "monitor.json"


__all__ = ["MONITOR_FILES", "check_monitor_folder", "write_monitor_report"]
