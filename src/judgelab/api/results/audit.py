"""``jl.audit``'s result (judgelab.api.results)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judgelab.api import reprs
from judgelab.api.results.shared import frame, wrap
from judgelab.audit.probes import ProbeResult
from judgelab.audit.table import AuditReport
from judgelab.report import notebook


@dataclass
class Audit(AuditReport):
    """``jl.audit``'s result: ``rows`` (each bias: section, name, value, interval, n, what it says),
    ``row(name)``, ``not_measured``, and ``probes`` ({probe: ProbeResult}) when probes ran."""

    probes: dict[str, ProbeResult] = field(default_factory=dict)
    verdicts_audited: bool = True  # False: probes only, no judge's verdicts were given

    @classmethod
    def of(cls, report: AuditReport | None, probes: dict[str, ProbeResult], n_items: int,
           confidence: float) -> Audit:
        if report is not None:
            return wrap(cls, report, probes=probes)
        return cls(judge=None, n_items=n_items, both_orders=False, confidence=confidence,
                   not_measured=["biases from the judge's verdicts: none given (probes only)"], probes=probes,
                   verdicts_audited=False)

    def to_dict(self) -> dict[str, Any]:
        return super().to_dict() | {"probes": {name: result.to_dict() for name, result in self.probes.items()}}

    def to_pandas(self):
        """One row per bias (section, name, value, ci_low, ci_high, n, reading); the probes' flip rates and
        shares moved towards the perturbed output as rows of section ``probe``."""
        rows = [{"section": r.section, "name": r.name, "value": r.value, "ci_low": (r.ci or (None, None))[0],
                 "ci_high": (r.ci or (None, None))[1], "n": r.n, "reading": r.reading} for r in self.rows]
        for name, result in self.probes.items():
            for what, estimate in (("flip rate", result.flip_rate), ("toward perturbed", result.toward_perturbed)):
                if estimate is not None:
                    rows.append({"section": "probe", "name": f"{name}: {what}", "value": estimate.value,
                                 "ci_low": (estimate.ci or (None, None))[0], "ci_high": (estimate.ci or (None, None))[1],
                                 "n": estimate.n, "reading": f"{result.failed} items without a verdict"})
        return frame(rows, ["section", "name", "value", "ci_low", "ci_high", "n", "reading"])

    def __repr__(self) -> str:
        return reprs.audit(self)

    def _repr_html_(self) -> str:
        level = f"{self.confidence:.0%} CI"
        frame = self.to_pandas()
        rows = [(f"{r.section}: {r.name}", r.value, (r.ci_low, r.ci_high), r.n, r.reading) for r in frame.itertuples()]
        title = (f"bias audit of {self.judge or 'the judge'}: {self.n_items} items, "
                 + ("both orders" if self.both_orders else "one order"))
        return notebook.view(title, tables=[(None, ("statistic", "value", level, "n", "reading"), rows)],
                             lines=[f"not measured: {line}" for line in self.not_measured])


__all__ = ["Audit"]
