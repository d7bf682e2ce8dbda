"""A self-contained HTML page for a run folder (no network needed to open it).

``write_report(folder)`` (re)writes FOLDER/report.html; ``write_meta_report(out_dir, items,
judgments, meta_evaluate(...))`` writes a meta-evaluation as a report folder, as
``judgelab meta --out`` does (docs/metrics.md).

The names load on first use: the terminal board (commands/evaluate.py) reads the wording it shares with
the report from ``report.systems_view``, and importing this package must not load the HTML page's
statistics (krippendorff, scikit-learn) for it (tests/unit/test_cli_startup.py).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"read_run_record": "judgelab.files", "render_report": "judgelab.report.html",
          "write_report": "judgelab.report.html", "check_meta_folder": "judgelab.report.meta",
          "write_meta_report": "judgelab.report.meta"}

__all__ = ["check_meta_folder", "read_run_record", "render_report", "write_meta_report", "write_report"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'judgelab.report' has no attribute {name!r}")
