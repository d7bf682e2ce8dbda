"""Demonstration search: K random draws of in-context demonstrations, keep the best judge.

The seed-004 setting (Active-Critic, after DSPy's ``BootstrapFewShotWithRandomSearch``): each
draw picks between ``sizes[0]`` and ``sizes[1]`` labelled items as demonstrations, a judge
config is built from them, the judge is run on the evaluation items, and the draw is scored by
an objective of (human, judge) scores — by default Q = Pearson + Spearman + Kendall (seed eq. 3).
The best draw wins; ties go to the earlier draw, so the result is deterministic under a seed.

Any judge whose config can be built from a list of demonstration items can use this: the
caller passes ``build(demos) -> JudgeConfig``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import JudgeConfig
from judgelab.llm.client import Client
from judgelab.llm.types import Usage
from judgelab.metrics.correlation import METHODS, correlation

#: ``objective(human, judge) -> value`` (higher is better; NaN when undefined, e.g. a constant judge).
Objective = Callable[[Sequence[float], Sequence[float]], float]
#: ``build(demonstrations) -> judge config`` for one draw.
Builder = Callable[[Sequence[Item]], JudgeConfig]


def q_objective(human: Sequence[float], judge: Sequence[float]) -> float:
    """Seed 004 eq. 3: Pearson + Spearman + Kendall (scipy point estimates); NaN if any is undefined."""
    return float(sum(correlation(method, human, judge) for method in METHODS))


@dataclass
class Draw:
    """One candidate: its demonstrations, how it scored, and what it cost."""

    index: int
    demo_ids: list[str]
    objective: float
    n_scored: int  # evaluation items with an ok judgment (the objective's sample size)
    n_evaluated: int
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "demo_ids": self.demo_ids,
                "objective": None if math.isnan(self.objective) else self.objective,
                "n_scored": self.n_scored, "n_evaluated": self.n_evaluated, "usage": self.usage.model_dump()}


@dataclass
class DemoSearchResult:
    best: JudgeConfig
    best_draw: Draw
    trajectory: list[Draw]
    #: False when no draw had a defined objective (then ``best`` is simply the first draw).
    defined: bool = True

    @property
    def usage(self) -> Usage:
        total = Usage()
        for draw in self.trajectory:
            total = total + draw.usage
        return total


def draw_demonstrations(pool: Sequence[Item], k: int, sizes: tuple[int, int], seed: int) -> list[list[Item]]:
    """``k`` random subsets of ``pool`` (sizes uniform in ``sizes``), reproducible for a seed."""
    low, high = sizes
    if not 0 <= low <= high:
        raise ConfigError(f"demonstration sizes must be 0 <= min <= max, got {list(sizes)}")
    if len(pool) < low:
        raise ConfigError(f"{len(pool)} labelled items cannot supply {low} demonstrations")
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(k):
        size = int(rng.integers(low, min(high, len(pool)) + 1))
        picked = rng.choice(len(pool), size=size, replace=False)
        draws.append([pool[int(i)] for i in sorted(picked)])
    return draws


def search_demonstrations(
    build: Builder,
    items: Sequence[Item],
    client: Client,
    *,
    aspect: str,
    k: int = 11,
    sizes: tuple[int, int] = (3, 8),
    seed: int = 0,
    objective: Objective = q_objective,
    pool: Sequence[Item] | None = None,
    min_scored: int = 3,
    on_draw: Callable[[Draw], None] | None = None,
) -> DemoSearchResult:
    """Try ``k`` demonstration draws from ``pool`` (default ``items``); score each on ``items``.

    A draw's own demonstrations are left out of its evaluation (a judge shown an item's human
    score would be graded on copying it). Items whose judgment is not ok are left out of the
    objective; a draw with fewer than ``min_scored`` scored items, or an undefined objective
    (e.g. a judge that gave every item the same score), scores NaN and cannot win. When no draw
    is defined the first is kept, with ``defined=False`` and a warning.
    """
    if k < 1:
        raise ConfigError(f"the demonstration search needs k >= 1 draws, got {k}")
    labelled = [item for item in items if item.human_score(aspect) is not None]
    if not labelled:
        raise ConfigError(f"no item carries a human {aspect!r} score to search demonstrations against")
    candidates = draw_demonstrations(list(pool) if pool is not None else labelled, k, sizes, seed)
    trajectory: list[Draw] = []
    best_index = None
    for index, demos in enumerate(candidates):
        judge = build(demos)
        draw = _evaluate(index, judge, demos, labelled, client, aspect, objective, min_scored)
        trajectory.append(draw)
        if on_draw:
            on_draw(draw)
        if not math.isnan(draw.objective) and (best_index is None or draw.objective > trajectory[best_index].objective):
            best_index = index
    if best_index is None:
        # Nothing to choose between (e.g. a small model that gives every item the same score): the
        # first draw is kept, as any other would be, and ``defined`` tells the caller so.
        warnings.warn(f"no demonstration draw out of {k} gave a defined objective (fewer than {min_scored} "
                      f"scored items or a constant judge); keeping the first draw", stacklevel=2)
        return DemoSearchResult(best=build(candidates[0]), best_draw=trajectory[0], trajectory=trajectory,
                                defined=False)
    return DemoSearchResult(best=build(candidates[best_index]), best_draw=trajectory[best_index], trajectory=trajectory)


def _evaluate(index: int, judge: JudgeConfig, demos: Sequence[Item], labelled: Sequence[Item], client: Client,
              aspect: str, objective: Objective, min_scored: int) -> Draw:
    demo_ids = {item.id for item in demos}
    evaluation = [item for item in labelled if item.id not in demo_ids]
    judgments = judge.run(evaluation, client)
    usage = Usage()
    human, predicted = [], []
    for item, judgment in zip(evaluation, judgments, strict=True):
        usage = usage + judgment.usage
        if judgment.ok and judgment.score is not None:
            human.append(float(item.human_score(aspect)))  # type: ignore[arg-type]
            predicted.append(judgment.score)
    value = objective(human, predicted) if len(human) >= min_scored else float("nan")
    return Draw(index=index, demo_ids=[item.id for item in demos], objective=value, n_scored=len(human),
                n_evaluated=len(evaluation), usage=usage)
