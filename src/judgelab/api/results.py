"""What the front door's verbs return: the deep modules' own result classes, each with ``to_pandas()`` and an
HTML view for Jupyter (``_repr_html_``) added. A result is the deep one's fields copied as they are (no
figure is computed again), so everything documented for ``SystemsReport``, ``MetaReport``, ``AuditReport``,
``two_systems.Comparison``, ``RunResult``, ``SampleFile`` and ``SourceData`` holds for it, ``to_dict()``
included. The HTML is report.html's own sections where the report has them (judgelab.report.notebook); at a
plain Python prompt each shows a few lines instead (judgelab.api.reprs): what it is, its sizes, the headline
figures and where the rest is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.api import reprs
from judgelab.audit.probes import ProbeResult
from judgelab.audit.table import AuditReport
from judgelab.data.dataset import SHOWN_ROWS, Dataset
from judgelab.data.io import judgments_frame
from judgelab.data.sources import SourceData
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.preferences import PreferenceReport
from judgelab.evaluate.sample_file import SampleFile, write_sample
from judgelab.evaluate.two_systems import Comparison as _TwoSystems
from judgelab.judges.base import JudgeConfig
from judgelab.metrics.evaluate import MetaReport
from judgelab.report import notebook
from judgelab.runner.run import RunResult


def wrap(cls: type, result: Any, **extra: Any) -> Any:
    """``result`` as ``cls``, its subclass here: the same field values, and ``extra`` for the new fields."""
    values = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}
    return cls(**values, **extra)


def _frame(rows: list[dict[str, Any]], columns: Sequence[str] | None = None):
    import pandas as pd

    return pd.DataFrame.from_records(rows, columns=columns)


@dataclass
class JudgeRun(RunResult):
    """``jl.judge``'s run: ``judgments`` (one per item, in order), ``counts`` by status, ``usage`` (calls,
    cache hits, tokens, cost, time), ``metrics`` (agreement with the items' human labels, as metrics.json),
    ``folder`` (the run folder, with ``out=``), and the ``config`` judged with (save it with
    ``run.config.save("judge.yaml")``)."""

    items: Dataset | None = field(default=None, repr=False)
    config: JudgeConfig | None = field(default=None, repr=False)

    @property
    def aspect(self) -> str | None:
        return getattr(self.config, "aspect", None)

    def to_pandas(self):
        """The judgments, one row each, with the item's human value (``human``) beside them when it has one."""
        frame = judgments_frame(list(self.judgments))
        if self.items is not None and len(frame):
            from judgelab.metrics.align import human_value

            by_id = {item.id: item for item in self.items}
            human = [human_value(by_id[i], self.aspect) if i in by_id else None for i in frame["item_id"]]
            if any(value is not None for value in human):
                frame.insert(frame.columns.get_loc("item_id") + 1, "human", human)
        return frame

    def __repr__(self) -> str:
        from judgelab.report.html import _estimate_rows

        return reprs.run(self, _estimate_rows(self.metrics))

    def _repr_html_(self) -> str:
        title = (f"judge run: {len(self.judgments)} judgments of {self.aspect or 'the items'}"
                 + (f" in {self.folder}" if self.folder else ""))
        return notebook.run_view(list(self.judgments), self.counts, self.usage, self.metrics, self.items, self.aspect,
                                 title)


class MetaEvaluation(MetaReport):
    """``jl.meta``'s result: sections by name (``result["dataset"]["spearman"].value``), ``coverage``,
    ``to_dict()`` (what ``judgelab meta --json`` prints)."""

    def to_pandas(self):
        """One row per estimate: level, statistic, value, interval, n, groups and what was skipped, as the
        report's agreement table (and the judge-minus-baseline differences with a baseline)."""
        from judgelab.report.html import _comparison_rows, _estimate_rows

        metrics = self.to_dict()
        rows = [{"level": r["level"], "statistic": r["statistic"], "value": r["value"],
                 "ci_low": (r["ci"] or [None, None])[0], "ci_high": (r["ci"] or [None, None])[1], "n": r["n"],
                 "groups": r["groups"], "note": r["note"]} for r in _estimate_rows(metrics)]
        rows += [{"level": f"{r['level']} (judge - baseline)", "statistic": r["statistic"], "value": r["difference"],
                  "ci_low": r["ci"][0], "ci_high": r["ci"][1], "n": r["n"], "groups": None, "note": r["note"]}
                 for r in _comparison_rows(metrics)]
        return _frame(rows, ["level", "statistic", "value", "ci_low", "ci_high", "n", "groups", "note"])

    def __repr__(self) -> str:
        from judgelab.report.html import _estimate_rows

        return reprs.meta(self, _estimate_rows(self.to_dict()))

    def _repr_html_(self) -> str:
        judge = f", judge {self.judge}" if self.judge else ""
        return notebook.meta_view(self.to_dict(), f"meta-evaluation: {self.kind} items, aspect {self.aspect or '-'}"
                                                  f"{judge}, preset {self.preset or '-'}")


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
        return _frame([{**data, "ci_low": low, "ci_high": high}])

    def __repr__(self) -> str:
        return reprs.comparison(self)

    def _repr_html_(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return notebook.view(f"{verdict}: {self.candidate} vs {self.baseline}" + (f" ({self.aspect})" if self.aspect
                                                                                   else ""),
                             tables=[(None, (), self.rows())], lines=self.warnings)


@dataclass
class Audit(AuditReport):
    """``jl.audit``'s result: ``rows`` (each bias: section, name, value, interval, n, what it says),
    ``row(name)``, ``not_measured``, and ``probes`` ({probe: ProbeResult}) when probes ran."""

    probes: dict[str, ProbeResult] = field(default_factory=dict)

    @classmethod
    def of(cls, report: AuditReport | None, probes: dict[str, ProbeResult], n_items: int,
           confidence: float) -> Audit:
        if report is not None:
            return wrap(cls, report, probes=probes)
        return cls(judge=None, n_items=n_items, both_orders=False, confidence=confidence,
                   not_measured=["biases from the judge's verdicts: none given (probes only)"], probes=probes)

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
        return _frame(rows, ["section", "name", "value", "ci_low", "ci_high", "n", "reading"])

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
        return _frame([{"id": unit, "probability": p, "stratum": s}
                       for unit, p, s in zip(self.ids, self.probabilities or (), self.strata, strict=True)])

    def __repr__(self) -> str:
        return reprs.sample(self)

    def _repr_html_(self) -> str:
        head = self.header or {}
        return notebook.view(f"{len(self.ids)} {head.get('units', 'units')} to label ({self.method} sample, seed "
                             f"{head.get('seed', '-')})", tables=[(None, ("stratum", "drawn"), self.sizes.items())])


class Source(SourceData):
    """``jl.load`` of another tool's output: ``source`` (the tool), ``items``, ``judgments`` (its judges'
    verdicts), ``notes`` (what its reader left out, with counts), ``judges()``. Every verb takes it as data."""

    def to_pandas(self):
        """One row per judgment, joined with its item's fields (``item_id`` = ``id``)."""
        items = self.items.to_pandas()
        return judgments_frame(self.judgments).merge(items, how="left", left_on="item_id", right_on="id",
                                                     suffixes=("", "_item"))

    def __repr__(self) -> str:
        return reprs.source(self)

    def _repr_html_(self) -> str:
        kinds = "/".join(sorted(self.items.kinds))
        judges = ", ".join(self.judges()) or "none named"
        shown = [(j.item_id, j.judge, j.score if j.score is not None else j.label, j.status)
                 for j in self.judgments[:SHOWN_ROWS]]
        more = f" (the first {SHOWN_ROWS})" if len(self.judgments) > SHOWN_ROWS else ""
        return notebook.view(f"{self.source} output: {len(self.items)} {kinds} items, {len(self.judgments)} judgments",
                             lines=[f"judges: {judges}", *self.notes],
                             tables=[(f"judgments{more}", ("item", "judge", "verdict", "status"), shown)])


__all__ = ["Audit", "Comparison", "Evaluation", "JudgeRun", "MetaEvaluation", "PreferenceEvaluation", "Sample",
           "Source", "wrap"]
