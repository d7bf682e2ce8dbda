"""System evaluation: which system is better, by how much, and can I trust it (docs/evaluate.md).

>>> from judgelab.evaluate import evaluate                      # doctest: +SKIP
>>> report = evaluate(items, judgments, human_ids=sampled_ids)
>>> report.table()          # one row per (system, estimator): judge, human, corrected
>>> report.pairs_table()    # every pairwise difference with Holm-adjusted p-values
"""

from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.compare import Pairs, holm, pairwise
from judgelab.evaluate.design import Design, recorded_design, stratified_design
from judgelab.evaluate.estimators import corrected, human_only, judge_only
from judgelab.evaluate.problem import Problem, from_items, from_queries
from judgelab.evaluate.sample_file import SampleFile, read_sample, write_sample
from judgelab.evaluate.sampling import draw, inclusion_probabilities
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.evaluate.systems import ALL, evaluate

__all__ = [
    "ALL",
    "Design",
    "Pairs",
    "Problem",
    "SampleFile",
    "SystemEstimates",
    "SystemsReport",
    "corrected",
    "draw",
    "evaluate",
    "from_items",
    "from_queries",
    "holm",
    "human_only",
    "inclusion_probabilities",
    "judge_only",
    "pairwise",
    "read_sample",
    "recorded_design",
    "stratified_design",
    "write_sample",
]
