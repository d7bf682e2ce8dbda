"""``jl.evaluate``'s, ``jl.compare``'s and ``jl.sample``'s results (judgelab.api.results): light to import,
so that ``judgelab evaluate`` loads no more than it computes with (tests/unit/test_cli_startup.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.api import reprs
from judgelab.api.results.shared import frame, wrap
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.gate import Comparison as _TwoSystems
from judgelab.evaluate.preferences import PreferenceReport
from judgelab.evaluate.sample_file import SampleFile, write_sample
from judgelab.report import notebook


class Evaluation(SystemsReport):
    """``jl.evaluate``'s result: ``estimates`` ({estimator: SystemEstimates}), ``pairs``, ``recommended``,
    ``table()`` / ``pairs_table()`` (tidy frames), ``to_dict()`` (what ``judgelab evaluate --json`` prints)."""

    def to_pandas(self):
        """One row per (system, estimator): estimate, interval, sizes, rank and rank interval (``table()``)."""
        return self.table()

    def __repr__(self) -> str:
        return reprs.evaluation(self)

    def _repr_html_(self) -> str:
        what = self.measure or (f"mean human {self.aspect}" if self.aspect else "scores")
        return notebook.systems_view(self.to_dict(), f"{len(self.systems)} systems ({self.kind}), {what}")

    @classmethod
    def of(cls, report: SystemsReport) -> Evaluation:
        """``report`` as an Evaluation; comparisons between systems keep their own class's ranks and fields."""
        return wrap(PreferenceEvaluation if isinstance(report, PreferenceReport) else cls, report)


class PreferenceEvaluation(PreferenceReport, Evaluation):
    """``jl.evaluate`` on comparisons between systems: a :class:`PreferenceReport` (win probabilities or
    Bradley-Terry strengths, simultaneous rank sets) with the Evaluation's views."""

    __repr__ = Evaluation.__repr__  # before PreferenceReport's generated one, which prints every array


class Comparison(_TwoSystems):
    """``jl.compare``'s result: ``difference`` (candidate - baseline), ``low``/``high``, ``decision``,
    ``passed``, ``summary()``, ``plan(regression)``, ``junit_xml()``, ``markdown()``, ``to_dict()``."""

    def to_pandas(self):
        """One row: the figures of ``to_dict()``, the interval as ``ci_low``/``ci_high``."""
        data = self.to_dict()
        low, high = data.pop("ci")
        data["warnings"] = "; ".join(data["warnings"])
        return frame([{**data, "ci_low": low, "ci_high": high}])

    def __repr__(self) -> str:
        return reprs.comparison(self)

    def _repr_html_(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return notebook.view(f"{verdict}: {self.candidate} vs {self.baseline}" + (f" ({self.aspect})" if self.aspect
                                                                                   else ""),
                             tables=[(None, (), self.rows())], lines=self.warnings)


@dataclass(frozen=True)
class Sample(SampleFile):
    """``jl.sample``'s draw: ``ids`` to label, their inclusion ``probabilities``, ``method``, ``header`` (how
    it was drawn), each id's ``strata`` (its system, or pair of systems) and ``sizes`` per stratum. Give it
    as ``human_ids=`` to ``jl.evaluate``/``jl.compare`` once labelled; ``write(path)`` for the command line."""

    strata: tuple[str, ...] = ()
    sizes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, sample: SampleFile, drawn: Any, units: Any) -> Sample:
        import numpy as np

        position = {unit: k for k, unit in enumerate(units.units)}
        strata = tuple(units.systems[units.strata[position[unit]]] for unit in sample.ids)
        names = [units.systems[code] for code in np.unique(units.strata)]  # the draw's strata, in its order
        return wrap(cls, sample, strata=strata, sizes={name: int(n) for name, n in zip(names, drawn.sizes, strict=True)})

    def write(self, path: str | Path) -> Path:
        """The sample file ``judgelab sample --out`` writes (``evaluate --human-ids`` reads it)."""
        return write_sample(path, self.ids, self.probabilities, self.header or {})

    def to_pandas(self):
        """One row per drawn unit: ``id``, ``probability`` (of inclusion), ``stratum``."""
        return frame([{"id": unit, "probability": p, "stratum": s}
                       for unit, p, s in zip(self.ids, self.probabilities or (), self.strata, strict=True)])

    def __repr__(self) -> str:
        return reprs.sample(self)

    def _repr_html_(self) -> str:
        head = self.header or {}
        return notebook.view(f"{len(self.ids)} {head.get('units', 'units')} to label ({self.method} sample, seed "
                             f"{head.get('seed', '-')})", tables=[(None, ("stratum", "drawn"), self.sizes.items())])


__all__ = ["Comparison", "Evaluation", "PreferenceEvaluation", "Sample"]
