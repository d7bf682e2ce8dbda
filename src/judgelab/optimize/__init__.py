"""Optimisers: search judge configs against human labels on dev items, and fit what judges use.

    from judgelab.optimize import make_optimizer, optimize, JudgeEvaluator
    result = optimize(make_optimizer("hpss", seed=0), start_judge, JudgeEvaluator(dev_items, client), 71, "runs/hpss")

Everything here fits or searches and imports ``judgelab.judges`` downward; a judge never imports
this package (docs/architecture.md). The in-context retriever's training is ``optimize.icl``
(loaded on use: it needs torch); its run-time selectors are ``judgelab.judges.retrieval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgelab.lazy import lazy_exports

if TYPE_CHECKING:
    from judgelab.optimize.base import (
        Budget,
        Evaluation,
        Evaluator,
        JudgeEvaluator,
        Optimizer,
        OptimizeResult,
        SearchStopped,
        config_of,
        load_trajectory,
        optimize,
    )
    from judgelab.optimize.methods import METHODS, make_optimizer

__all__ = [
    "METHODS",
    "Budget",
    "Evaluation",
    "Evaluator",
    "JudgeEvaluator",
    "OptimizeResult",
    "Optimizer",
    "SearchStopped",
    "config_of",
    "load_trajectory",
    "make_optimizer",
    "optimize",
]
# loaded on first use: `judgelab optimize --help` reads optimize.names without loading the optimisers
__getattr__, __dir__ = lazy_exports(__name__, {name: "methods" if name in ("METHODS", "make_optimizer") else "base"
                                               for name in __all__})
