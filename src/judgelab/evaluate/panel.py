"""Several judges in one estimate: which judgments belong to which judge.

``evaluate`` takes one judge's verdicts, or several judges' as any of

* a mapping ``{name: judgments}`` (what the CLI builds from ``--judgments`` given more than once);
* a list of judgment lists, one per judge (named by the ``judge`` their judgments carry);
* one list holding several judges' verdicts with ``judge`` a list of their names (``--judge`` given more
  than once), each picked as ``--judge`` picks one.

Each judge is then one column of the estimation problem (``Problem.judges``), and the corrected
estimator combines them (``calibrate``'s ``stack``). A judge's verdicts must be one judge's: a file
holding several without ``--judge`` naming them is refused, as are two sets under one name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from judgelab.data.io import select_judge
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.evaluate.design import Design
from judgelab.evaluate.estimators import corrected
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.align import several_judges
from judgelab.metrics.results import json_number

#: At most this many judges in one estimate: each is a column of every units x systems table.
MAX_JUDGES = 50


@dataclass(frozen=True)
class JudgeVerdicts:
    """One judge's name, its verdicts, and where they came from (a file, a position)."""

    name: str
    judgments: list[Judgment]
    where: str


def is_panel(judgments: object, judge: object) -> bool:
    """Whether ``judgments``/``judge`` name several judges (see the module docstring)."""
    if isinstance(judge, (list, tuple)) and len(judge) > 1:
        return True
    if isinstance(judgments, Mapping):
        return len(judgments) > 1
    return isinstance(judgments, Sequence) and len(judgments) > 1 and not isinstance(judgments[0], Judgment)


def panel(judgments, judge: str | Sequence[str] | None, aspect: str | None) -> list[JudgeVerdicts]:
    """Each judge's verdicts of ``aspect`` (or of none), in the order given; errors name the judge or set."""
    names = [judge] if isinstance(judge, str) else list(judge or [])
    if isinstance(judgments, Mapping):
        sets = [(str(where), _of_aspect(found, aspect)) for where, found in judgments.items()]
    elif isinstance(judgments, Sequence) and judgments and not isinstance(judgments[0], Judgment):
        sets = [(f"judgments {k}", _of_aspect(found, aspect)) for k, found in enumerate(judgments, start=1)]
    else:
        sets = [("judgments", _of_aspect(judgments, aspect))]
    if names:  # each name picks one judge from every set (a file may hold several judges)
        sets = [(where, select_judge(found, name, where)) for where, found in sets for name in names
                if len(sets) == 1 or _holds(found, name)]
    out = [JudgeVerdicts(_name_of(where, found), found, where) for where, found in sets]
    _check(out)
    return out


def _of_aspect(judgments: Iterable[Judgment], aspect: str | None) -> list[Judgment]:
    return [j for j in judgments if aspect is None or j.aspect in (None, aspect)]


def _holds(judgments: list[Judgment], name: str) -> bool:
    return any(j.judge is not None and j.judge.startswith(name) for j in judgments)


def _name_of(where: str, judgments: list[Judgment]) -> str:
    """The judge's own name (the ``judge`` its verdicts carry), else where they came from."""
    judges = sorted({j.judge for j in judgments if j.judge is not None})
    if len(judges) > 1:
        raise several_judges(judges, None, "judge", where=where)
    return judges[0] if judges else where


def _check(sets: list[JudgeVerdicts]) -> None:
    if len(sets) > MAX_JUDGES:
        raise ConfigError(f"{len(sets)} judges: one estimate combines up to {MAX_JUDGES}")
    seen: dict[str, str] = {}
    for one in sets:
        if one.name in seen:
            raise ConfigError(f"two sets of verdicts for judge {one.name!r} ({seen[one.name]} and {one.where}): "
                              "give each judge once")
        seen[one.name] = one.where
        if not one.judgments:
            raise ConfigError(f"{one.where}: judge {one.name!r} has no verdicts here (for this aspect)")


def worth(problem: Problem, design: Design, human: SystemEstimates, combined: SystemEstimates,
          **options: Any) -> dict[str, dict[str, Any]]:
    """What each judge of a panel was worth, in labels: ``alone``, the labels human-only would need for the
    intervals the corrected estimate gets with that judge alone; ``added``, what the panel's would lose
    without it (0 or less: the others carry what it says). Summed over the systems whose intervals are t
    on both sides (a betting interval's width is set by the scale, not by the variance); ``per_system``:
    each system's effective labels with the judge alone. Also the judge's weight in the panel."""
    names = problem.judge_names
    weights = combined.info.get("judge_weights") or {}
    total = effective_labels(human, combined)
    out = {}
    for j, name in enumerate(names):
        alone = corrected(_judges(problem, [j]), design, **options)
        others = corrected(_judges(problem, [k for k in range(len(names)) if k != j]), design, **options)
        per_system = effective_per_system(human, alone)
        out[name] = {"weight": weights.get(name), "alone": json_number(effective_labels(human, alone)),
                     "added": json_number(total - effective_labels(human, others)),
                     "per_system": per_system}
    return out


def _judges(problem: Problem, keep: list[int]) -> Problem:
    """The problem judged by the judges ``keep`` only (one: a problem of one judge, as without a panel)."""
    if problem.judges is None:  # a panel's problem has its judges: the TypeError indexing None raises
        raise TypeError("the problem has no judges' values to choose from")
    if len(keep) == 1:
        return replace(problem, judge=problem.judges[..., keep[0]], judges=None, judge_names=())
    return problem.with_judges(problem.judges[..., keep], [problem.judge_names[k] for k in keep])


def effective_per_system(human: SystemEstimates, fixed: SystemEstimates) -> dict[str, float | None]:
    """Per system: n x var(human-only) / var(corrected) where both intervals are t, else None."""
    plain = ("t",) * len(human.systems)
    methods = zip(human.info.get("per_system", plain), fixed.info.get("per_system", plain), strict=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (human.se / fixed.se) ** 2
    return {s: json_number(n * r) if a == "t" and b == "t" else None
            for s, n, r, (a, b) in zip(human.systems, human.n_labelled, ratio, methods, strict=True)}


def effective_labels(human: SystemEstimates, fixed: SystemEstimates) -> float:
    return float(sum(v for v in effective_per_system(human, fixed).values() if v is not None))
