"""What ``judgelab optimize`` offers, by name: the methods, the objectives, the default coverage.

Light on purpose (no judge, data or LLM code): the command's ``--help`` prints these, and
``judgelab --help`` should start at once. ``optimize.methods`` binds each method to its class.
"""

from __future__ import annotations

#: method -> (whether an LLM proposes, one-line summary)
METHOD_SUMMARIES: dict[str, tuple[bool, str]] = {
    "hpss": (False, "heuristic strategy search: advantages, UCB exploration, exploitation (seed 002)"),
    "greedy": (False, "perturb the best strategy 5 times per round, keep the best"),
    "stepwise": (False, "optimise the 8 factors one at a time in table order"),
    "random": (False, "uniform over unevaluated strategies"),
    "ape": (True, "the LLM resamples the best instructions (criteria text)"),
    "opro": (True, "the LLM proposes strategies from the 20 best so far"),
    "rewrite": (True, "the LLM rewrites the instruction from rated dev items (PanguIR 3.2)"),
}
OBJECTIVES: tuple[str, ...] = ("spearman", "q", "kappa", "pairwise")
#: Share of the items that must get a usable rating for a config's objective to be defined.
DEFAULT_MIN_COVERAGE = 0.5
