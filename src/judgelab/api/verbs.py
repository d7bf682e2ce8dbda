"""The verbs of ``import judgelab as jl``: thin glue over the deep modules, one verb per command.

Every keyword is the command-line option of the same name (``--human-ids`` is ``human_ids=``; ``--from``,
a Python keyword, is ``source=``). Data may be a file path, a pandas DataFrame, a :class:`~judgelab.data.Dataset`,
a list of ``Item``/``Judgment`` objects or dicts, or what another verb returned (``jl.load`` of another tool's
output holds items and judgments; ``jl.judge``'s run holds judgments; ``jl.sample``'s draw is a ``human_ids``).
Nothing heavy is imported before a verb runs.

The verbs live by what they work on: :mod:`judgelab.api.judging` (``load``, ``judge``, ``meta``, ``audit``)
and :mod:`judgelab.api.evaluating` (``evaluate``, ``compare``, ``sample``, ``plan_labels``, ``plan_spend``);
:mod:`judgelab.api.options` holds the choices of their word options (``Calibration`` ... ``Engine``),
:class:`Note` and :class:`OptionsRefused`. This module is their one index: ``judgelab.api`` and the commands
import the verbs from here.
"""

from judgelab.api.evaluating import compare, evaluate, plan_labels, plan_spend, sample
from judgelab.api.judging import audit, judge, load, meta
from judgelab.api.options import (
    Calibration,
    Engine,
    Estimand,
    GateEstimator,
    Intervals,
    LikelihoodOf,
    Note,
    OptionsRefused,
    Pairing,
    RankMethod,
    Reduce,
    Score,
    Target,
    Unjudged,
    Variance,
)

__all__ = ["Calibration", "Engine", "Estimand", "GateEstimator", "Intervals", "LikelihoodOf", "Note", "OptionsRefused",
           "Pairing", "RankMethod", "Reduce", "Score", "Target", "Unjudged", "Variance", "audit", "compare",
           "evaluate", "judge", "load", "meta", "plan_labels", "plan_spend", "sample"]
