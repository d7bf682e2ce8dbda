"""What the front door's verbs return: the deep modules' own result classes, each with ``to_pandas()`` and an
HTML view for Jupyter (``_repr_html_``) added. A result is the deep one's fields copied as they are (no
figure is computed again), so everything documented for ``SystemsReport``, ``MetaReport``, ``AuditReport``,
``gate.Comparison``, ``RunResult``, ``SampleFile`` and ``SourceData`` holds for it, ``to_dict()``
included. The HTML is report.html's own sections where the report has them (judgelab.report.notebook); at a
plain Python prompt each shows a few lines instead (judgelab.api.reprs): what it is, its sizes, the headline
figures and where the rest is.

Each verb's result lives in its own module (``runs``, ``meta``, ``systems``, ``audit``, ``plans``) and is loaded
on first use: ``jl.evaluate`` needs neither the audit's nor the judge runner's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgelab.lazy import lazy_exports

if TYPE_CHECKING:
    from judgelab.api.results.audit import Audit
    from judgelab.api.results.meta import MetaEvaluation
    from judgelab.api.results.plans import LabelPlan, SpendPlan
    from judgelab.api.results.runs import JudgeRun, Source
    from judgelab.api.results.shared import wrap
    from judgelab.api.results.systems import Comparison, Evaluation, PreferenceEvaluation, Sample

_HOMES = {"Audit": "audit", "MetaEvaluation": "meta", "JudgeRun": "runs", "Source": "runs", "wrap": "shared",
          "Comparison": "systems", "Evaluation": "systems", "PreferenceEvaluation": "systems", "Sample": "systems",
          "LabelPlan": "plans", "SpendPlan": "plans"}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

__all__ = ["Audit", "Comparison", "Evaluation", "JudgeRun", "LabelPlan", "MetaEvaluation", "PreferenceEvaluation",
           "Sample", "Source", "SpendPlan", "wrap"]
