"""Meta-evaluation: how well a judge agrees with human labels (docs/metrics.md).

Pure functions over arrays (plus group and system ids) that return small result objects with
the value, a bootstrap interval, the sample size and what was skipped:

>>> from judgelab.metrics import correlations, label_agreement      # doctest: +SKIP
>>> correlations(human, judge, groups, systems)["group"]["spearman"].value
>>> label_agreement(human_labels, judge_labels, groups=qids)["kappa_cut_2"].ci

``meta_evaluate(dataset, judgments, aspect=..., preset=...)`` does what ``judgelab meta`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgelab.lazy import lazy_exports

# Loaded now: two of their names are also their modules' (``align``, ``correlation``), which the import
# system would set on this package in place of the function once the module is imported.
from judgelab.metrics.align import Aligned, Coverage, align
from judgelab.metrics.correlation import (
    LEVELS,
    METHODS,
    correlation,
    correlations,
    dataset_level,
    group_level,
    system_level,
)

if TYPE_CHECKING:
    from judgelab.metrics.agreement import LabelAgreement, label_agreement
    from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
    from judgelab.metrics.compare import Comparison, compare_judges, paired_difference
    from judgelab.metrics.evaluate import MetaReport, meta_evaluate
    from judgelab.metrics.ir import Leaderboard, leaderboard, qrels_from_labels, read_runs
    from judgelab.metrics.pairwise import pairwise_accuracy, pairwise_agreement
    from judgelab.metrics.presets import PRESETS
    from judgelab.metrics.results import Estimate, Skipped

__all__ = [
    "LEVELS",
    "METHODS",
    "PRESETS",
    "Aligned",
    "Comparison",
    "Coverage",
    "Estimate",
    "GroupBootstrap",
    "LabelAgreement",
    "Leaderboard",
    "MetaReport",
    "Skipped",
    "align",
    "compare_judges",
    "correlation",
    "correlations",
    "dataset_level",
    "group_level",
    "label_agreement",
    "leaderboard",
    "meta_evaluate",
    "pairwise_accuracy",
    "pairwise_agreement",
    "paired_difference",
    "percentile_ci",
    "qrels_from_labels",
    "read_runs",
    "system_level",
]
# the others on first use: `judgelab evaluate` then loads no krippendorff or ir_measures
__getattr__, __dir__ = lazy_exports(__name__, {
    "LabelAgreement": "agreement",
    "label_agreement": "agreement",
    "GroupBootstrap": "bootstrap",
    "percentile_ci": "bootstrap",
    "Comparison": "compare",
    "compare_judges": "compare",
    "paired_difference": "compare",
    "MetaReport": "evaluate",
    "meta_evaluate": "evaluate",
    "Leaderboard": "ir",
    "leaderboard": "ir",
    "qrels_from_labels": "ir",
    "read_runs": "ir",
    "pairwise_accuracy": "pairwise",
    "pairwise_agreement": "pairwise",
    "PRESETS": "presets",
    "Estimate": "results",
    "Skipped": "results",
})
