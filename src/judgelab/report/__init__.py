"""A self-contained HTML page for a run folder (no network needed to open it).

``write_report(folder)`` (re)writes FOLDER/report.html; ``write_meta_report(out_dir, items,
judgments, meta_evaluate(...))`` writes a meta-evaluation as a report folder, as
``judgelab meta --out`` does (docs/metrics.md).
"""

from judgelab.files import read_run_record
from judgelab.report.html import render_report, write_report
from judgelab.report.meta import check_meta_folder, write_meta_report

__all__ = ["check_meta_folder", "read_run_record", "render_report", "write_meta_report", "write_report"]
