"""Judges: configs (data) plus the logic that runs them through the one LLM client."""

from judgelab.judges.base import JudgeConfig, judge_from_dict, judge_kinds, load_judge
from judgelab.judges.critic import ActiveCriticJudge  # noqa: F401 - registers the 'active-critic' kind
from judgelab.judges.ensemble import EnsembleJudge  # noqa: F401 - registers the "ensemble" kind
from judgelab.judges.faithfulness import FaithfulnessJudge  # noqa: F401 - registers the 'faithfulness' kind
from judgelab.judges.grounding import GroundingJudge  # noqa: F401 - registers the 'grounding' kind
from judgelab.judges.likelihood import LikelihoodJudge  # noqa: F401 - registers the "likelihood" kind
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.judges.prompted import PromptedJudge
from judgelab.judges.requirements import RequirementsJudge  # noqa: F401 - registers the 'requirements' kind
from judgelab.judges.similarity import SimilarityJudge  # noqa: F401 - registers the "similarity" kind
from judgelab.judges.tool_calls import ToolCallsJudge, ToolUseJudge  # noqa: F401 - registers the tool_calls, tool_use kinds
from judgelab.judges.trained import TrainedJudge  # noqa: F401 - registers the "trained" kind
from judgelab.judges.trema import TremaJudge  # noqa: F401 - registers the 'trema' kind
from judgelab.strategy import FACTORS, Strategy

__all__ = ["FACTORS", "JudgeConfig", "PairwiseJudge", "PromptedJudge", "Strategy", "judge_from_dict", "judge_kinds", "load_judge"]
