"""The Python front door: the verbs ``import judgelab as jl`` gives (``jl.judge``, ``jl.meta``, ``jl.evaluate``,
``jl.compare``, ``jl.audit``, ``jl.sample``, ``jl.load``, and the two planners ``jl.plan_labels`` and
``jl.plan_spend``; docs/python.md). Each verb is glue over the deep
modules (:mod:`judgelab.api.verbs`) and returns one of their results with ``to_pandas()`` and an HTML view
(:mod:`judgelab.api.results`). This package sits above every other: nothing in judgelab imports it.
"""

from judgelab.api.verbs import audit, compare, evaluate, judge, load, meta, plan_labels, plan_spend, sample

__all__ = ["audit", "compare", "evaluate", "judge", "load", "meta", "plan_labels", "plan_spend", "sample"]
