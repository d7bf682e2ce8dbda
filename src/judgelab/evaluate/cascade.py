"""A cascade of judges with a guarantee: the cheap judge answers where it is confident enough, the next judge
where it is not, people where no judge is (Trust or Escalate, Jung, Brahman and Choi, ICLR 2025).

Each stage ``k`` is a judge's verdict on every item with a confidence. On the labelled items that reach
it (those no earlier stage answered), its threshold is the lowest confidence ``lambda`` at which a
binomial test still shows its disagreement with people under ``alpha = 1 - agreement``, testing a grid
of thresholds from the most confident down and stopping at the first that fails (fixed-sequence testing:
no correction for the number of thresholds is owed, since each is tested only if every stricter one
passed; the grid, :func:`_threshold`, is set by the confidences alone). Each stage is tested at ``delta / K`` (K stages): with probability at least ``1 - delta``, every
stage's disagreement on the items it answers is at most ``alpha``, and so is the cascade's, on new items
drawn like the labelled ones. Items no stage answers go to people.

Confidence, where verdicts alone are all there is: the share of the judges run so far (this stage's and
the earlier ones') that give this stage's verdict (``agreement``); or a number each verdict carries
(``extra.confidence`` of a pairwise judge scored by log-probabilities, ``extra.consistent`` of one run in
both orders), read with ``field``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term

CONFIDENCES = ("agreement", "field")


@dataclass(frozen=True)
class Stage:
    """One judge of the cascade: its verdict and confidence on every item (None / NaN: none)."""

    name: str
    verdicts: Sequence[Any]
    confidence: np.ndarray


@dataclass(frozen=True)
class StageResult:
    name: str
    threshold: float  # inf: the stage answers nothing
    answered: int  # items (of all) it answers
    calibration_answered: int  # labelled items it answers
    calibration_agreement: float | None  # its agreement with people on those
    agreement_bound: float | None  # the lower 1 - delta/K bound on its agreement there (Clopper-Pearson)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "threshold": None if math.isinf(self.threshold) else self.threshold,
                "answered": self.answered, "calibration_answered": self.calibration_answered,
                "calibration_agreement": self.calibration_agreement, "agreement_bound": self.agreement_bound}


@dataclass(frozen=True)
class Cascade:
    agreement: float
    delta: float
    stages: list[StageResult]
    by: np.ndarray  # per item: the stage that answers it (its index), -1: people
    verdict: list[Any]  # per item: the answering stage's verdict, None where people answer

    @property
    def to_people(self) -> int:
        return int((self.by < 0).sum())

    def to_dict(self) -> dict[str, Any]:
        n = len(self.by)
        return {"agreement": self.agreement, "delta": self.delta, "items": n, "to_people": self.to_people,
                "answered_without_people": 1 - self.to_people / n if n else None,
                "stages": [s.to_dict() for s in self.stages]}


def calibrate(stages: Sequence[Stage], human: Sequence[Any], labelled: np.ndarray, *, agreement: float,
              delta: float = 0.1, n_stages: int | None = None) -> Cascade:
    """Thresholds for ``stages`` (cheapest first) from the ``labelled`` items' ``human`` verdicts, and which
    stage answers each item (module docstring). ``agreement``: the agreement with people guaranteed on the
    items the judges answer, in (0.5, 1); ``delta``: the chance it does not hold, in (0, 1); ``n_stages``:
    the stages delta is split over (a cascade run stage by stage calibrates its first stages before the
    later ones have run; default: these)."""
    _check(stages, agreement, delta, labelled, human)
    alpha, level = 1 - agreement, delta / (n_stages or len(stages))
    n = len(labelled)
    open_ = np.ones(n, dtype=bool)  # not answered by an earlier stage
    by = np.full(n, -1)
    results = []
    for k, stage in enumerate(stages):
        confidence = np.asarray(stage.confidence, dtype=float)
        has = open_ & np.isfinite(confidence) & np.array([v is not None for v in stage.verdicts])
        rows = np.flatnonzero(has & labelled)
        correct = np.array([stage.verdicts[r] == human[r] for r in rows.tolist()], dtype=bool)
        threshold = _threshold(confidence[rows], correct, alpha, level)
        answers = has & (confidence >= threshold)
        by[answers] = k
        chosen = answers[rows]
        hits, count = int(correct[chosen].sum()), int(chosen.sum())
        results.append(StageResult(stage.name, threshold, int(answers.sum()), count,
                                   hits / count if count else None,
                                   _lower_bound(hits, count, level) if count else None))
        open_ &= ~answers
    verdict = [stages[k].verdicts[i] if k >= 0 else None for i, k in enumerate(by)]
    return Cascade(agreement, delta, results, by, verdict)


def _threshold(confidence: np.ndarray, correct: np.ndarray, alpha: float, level: float) -> float:
    """The lowest confidence whose answered set passes the binomial test, testing from the highest down and
    stopping at the first failure; inf when no set passes (the stage answers nothing).

    The thresholds tested: every ``step``-th most confident labelled item's confidence, ``step`` the fewest
    items whose set passes when it errs half as often as allowed (:func:`grid_step`). A set of the 14 most
    confident (the fewest that can pass at 80% with no error at all) stopped the sequence at its first error:
    a judge right 95% of the time there answered nothing in half the calibrations. The grid depends on the
    confidences alone, never on which verdicts were right."""
    order = np.argsort(-confidence, kind="stable")
    values, errors = confidence[order], np.cumsum(~correct[order])
    step = grid_step(alpha, level)
    chosen = math.inf
    for end in range(step - 1, len(values), step):
        while end + 1 < len(values) and values[end + 1] == values[end]:  # a threshold takes all its ties
            end += 1
        if stats.binom.cdf(int(errors[end]), end + 1, alpha) > level:  # cannot show the error rate under alpha
            break
        chosen = float(values[end])
    return chosen


def grid_step(alpha: float, level: float, largest: int = 10_000) -> int:
    """The fewest items ``m`` whose set passes the binomial test with ``floor(m alpha / 2)`` errors."""
    for m in range(1, largest):
        if stats.binom.cdf(math.floor(m * alpha / 2), m, alpha) <= level:
            return m
    return largest


def _lower_bound(hits: int, count: int, level: float) -> float:
    return float(stats.binomtest(hits, count).proportion_ci(1 - 2 * level, method="exact").low)


def _check(stages: Sequence[Stage], agreement: float, delta: float, labelled: np.ndarray, human) -> None:
    if not stages:
        raise ConfigError("a cascade needs at least one judge")
    if not (isinstance(agreement, (int, float)) and 0.5 < agreement < 1):
        raise ConfigError(f"{term('agreement')} {agreement!r}: the agreement with people to guarantee, between 0.5 "
                          "and 1 (e.g. 0.85)")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise ConfigError(f"{term('delta')} {delta!r}: the chance the guarantee fails, between 0 and 1 (e.g. 0.1)")
    n = len(labelled)
    for stage in stages:
        if len(stage.verdicts) != n or len(stage.confidence) != n:
            raise ConfigError(f"stage {stage.name!r} has {len(stage.verdicts)} verdicts for {n} items")
    if not np.any(labelled):
        raise ConfigError(f"a cascade is calibrated on human labels: give some ({term('human')} or "
                          f"{term('human_ids')})")
    if len(human) != n:
        raise ConfigError(f"{len(human)} human verdicts for {n} items")


def agreement_confidence(verdicts: Sequence[Sequence[Any]]) -> list[np.ndarray]:
    """Per stage: the share of the judges run up to it (its own and the earlier stages') whose verdict is its
    verdict; NaN where it gave none. The first stage alone has no one to agree with: 1 wherever it answered."""
    out = []
    for k, own in enumerate(verdicts):
        shares = np.full(len(own), np.nan)
        for i, verdict in enumerate(own):
            if verdict is None:
                continue
            given = [v[i] for v in verdicts[: k + 1] if v[i] is not None]
            shares[i] = sum(v == verdict for v in given) / len(given)
        out.append(shares)
    return out


# -- from items and judgments ------------------------------------------------------------------------------
def cascade_judgments(items, judgments, *, agreement: float, delta: float = 0.1, confidence: str = "agreement",
                      aspect: str | None = None, human=None, human_ids=None) -> tuple[Cascade, list[str]]:
    """:func:`calibrate` on items and several judges' verdicts (``{where: judgments}``, cheapest first, or any
    form :func:`judgelab.evaluate.panel.panel` reads). ``confidence``: ``agreement`` (the share of the judges
    run so far that agree), or a dotted path into each judgment (``extra.confidence``; ``extra.consistent``:
    1 where both orders agreed, 0.5 where not). Human verdicts: ``human`` {id: value} (a labels file read for
    these items), else the items' own (``label``, or ``scores.ASPECT``) for ``human_ids`` ("all": every
    item's). Returns the cascade and the item ids, in order."""
    from judgelab.evaluate.panel import panel
    from judgelab.metrics.align import judgments_by_item

    items = list(items)
    ids = [item.id for item in items]
    sets = panel(judgments, None, aspect)
    found = [judgments_by_item(one.judgments, set(ids))[0] for one in sets]
    verdicts = [[verdict_of(by.get(i)) for i in ids] for by in found]
    if confidence == "agreement":
        confidences = agreement_confidence(verdicts)
    else:
        confidences = [np.array([field_of(by.get(i), confidence) for i in ids], dtype=float) for by in found]
    human_values, labelled = human_verdicts(items, human, human_ids, aspect)
    for one, own in zip(sets, verdicts, strict=True):
        check_same_scale(one, own, human_values)
    stages = [Stage(one.name, v, c) for one, v, c in zip(sets, verdicts, confidences, strict=True)]
    return calibrate(stages, human_values, labelled, agreement=agreement, delta=delta), ids


def check_same_scale(stage, verdicts: list[Any], human: list[Any]) -> None:
    """A stage whose verdicts fall outside the range of people's is on another scale: its verdicts are compared
    with people's as they are, so refuse it (a 1-5 rating beside a/b/tie verdicts, a 0-10 score beside 1-5)."""
    mine = [v for v in verdicts if v is not None]
    theirs = [h for h in human if h is not None]
    if mine and theirs and (min(mine) < min(theirs) or max(mine) > max(theirs)):
        raise ConfigError(f"{stage.where}: judge {stage.name!r} gives verdicts from {min(mine):g} to {max(mine):g}, "
                          f"people's run from {min(theirs):g} to {max(theirs):g}: a cascade compares them as they are; "
                          "give every stage on the labels' scale")


def verdict_of(judgment) -> Any:
    """A judgment's verdict as people's is compared with it: a comparison's preference for a (1, 0.5, 0), a
    grade, or a score; None without one."""
    from judgelab.data.labels import PREFERENCES

    if judgment is None or not judgment.ok:
        return None
    if isinstance(judgment.label, str):
        return PREFERENCES.get(judgment.label)
    if judgment.label is not None:
        return float(judgment.label)
    return None if judgment.score is None else float(judgment.score)


def field_of(judgment, path: str) -> float:
    """The number at ``path`` (``extra.confidence``) of a judgment; a boolean (``extra.consistent``) is 1 or 0.5."""
    if judgment is None or not judgment.ok:
        return math.nan
    node: Any = judgment.model_dump()
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return math.nan
        node = node[key]
    if isinstance(node, bool):
        return 1.0 if node else 0.5
    return float(node) if isinstance(node, (int, float)) else math.nan


def human_verdicts(items, human, human_ids, aspect) -> tuple[list[Any], np.ndarray]:
    """(each item's human verdict, as :func:`verdict_of` gives a judge's; which items are labelled)."""
    from judgelab.data.labels import PREFERENCES

    def own(item) -> Any:
        if isinstance(item.label, str):
            return PREFERENCES.get(item.label)
        if item.label is not None:
            return float(item.label)
        return item.human_score(aspect) if aspect else None

    if human is not None:
        values = [_nearest_verdict(human.get(item.id), items[0].kind) for item in items]
    else:
        wanted = None if human_ids in (None, "all") else set(map(str, human_ids))
        values = [own(item) if wanted is None or item.id in wanted else None for item in items]
    if human is None and human_ids is None:
        values = [None] * len(items)
    return values, np.array([v is not None for v in values], dtype=bool)


def _nearest_verdict(value: Any, kind: str) -> Any:
    """A labels file's mean over annotators, as one verdict: a comparison's to the nearest of 0, 0.5, 1."""
    if value is None:
        return None
    return round(float(value) * 2) / 2 if kind == "pairwise" else float(value)


def stage_confidence(judgments: Sequence[Any], how: str) -> str:
    """``auto``: a judgment's own confidence where the judges record one (``extra.confidence``: a pairwise
    judge scored by log-probabilities), else its consistency over two orders (``extra.consistent``), else
    the agreement among the judges run; any other value as given."""
    if how != "auto":
        return how
    extras = [j.extra for j in judgments if j is not None and j.ok]
    for path in ("confidence", "consistent"):
        if extras and all(path in extra for extra in extras):
            return f"extra.{path}"
    return "agreement"
