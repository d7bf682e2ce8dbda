"""``jl.meta``'s result (judgelab.api.results)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.api import reprs
from judgelab.api.results.shared import frame
from judgelab.metrics.evaluate import MetaReport
from judgelab.report import notebook


@dataclass(frozen=True)
class MetaEvaluation(MetaReport):
    """``jl.meta``'s result: sections by name (``result["dataset"]["spearman"].value``), ``coverage``,
    ``to_dict()`` (what ``judgelab meta --json`` prints); ``human_labels`` (with ``human=``: the labels file's
    annotators and their agreement), ``card`` and ``card_path`` (with ``card=``: the judge's card, docs/cards.md)."""

    human_labels: dict[str, Any] | None = None
    card: dict[str, Any] | None = None
    card_path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        found = super().to_dict()
        return found if self.human_labels is None else found | {"human_labels": self.human_labels}

    def to_pandas(self):
        """One row per estimate: level, statistic, value, interval, n, groups and what was skipped, as the
        report's agreement table (and the judge-minus-baseline differences with a baseline)."""
        from judgelab.report.html import comparison_rows, estimate_rows

        metrics = self.to_dict()
        rows = [{"level": r["level"], "statistic": r["statistic"], "value": r["value"],
                 "ci_low": (r["ci"] or [None, None])[0], "ci_high": (r["ci"] or [None, None])[1], "n": r["n"],
                 "groups": r["groups"], "note": r["note"]} for r in estimate_rows(metrics)]
        rows += [{"level": f"{r['level']} (judge - baseline)", "statistic": r["statistic"], "value": r["difference"],
                  "ci_low": r["ci"][0], "ci_high": r["ci"][1], "n": r["n"], "groups": None, "note": r["note"]}
                 for r in comparison_rows(metrics)]
        return frame(rows, ["level", "statistic", "value", "ci_low", "ci_high", "n", "groups", "note"])

    def __repr__(self) -> str:
        from judgelab.report.html import estimate_rows

        return reprs.meta(self, estimate_rows(self.to_dict()))

    def _repr_html_(self) -> str:
        judge = f", judge {self.judge}" if self.judge else ""
        return notebook.meta_view(self.to_dict(), f"meta-evaluation: {self.kind} items, aspect {self.aspect or '-'}"
                                                  f"{judge}, preset {self.preset or '-'}")


__all__ = ["MetaEvaluation"]
