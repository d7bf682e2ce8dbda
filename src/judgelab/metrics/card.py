"""A judge card: how far a judge agrees with people, class by class, with the bounds a gate needs
(docs/cards.md), and the rule that certifies a judge before its verdicts may fail a build.

Per human class (a grade, a verdict a/b/tie, pass/fail) the card counts the labelled items of that class
and how many the judge gave the same class: its **recall**, with Clopper-Pearson's exact one-sided lower
bound (the one certification reads) and Jeffreys' two-sided interval (the one to look at). With two classes
the higher one's recall is the TPR and the lower one's the TNR. Beside them: Cohen's kappa, with the base
rate (the largest class's share: a kappa of 0.5 means little where 95% of the items are one class), and
the number of labels the card rests on.

**Certification** (:func:`certify`): every floor (``tpr=0.8``, ``tnr=0.8``, ``recall=0.7`` for every class)
is met only when the exact lower bound at the card's confidence reaches it. A judge whose true TPR is under
its floor is then certified with probability at most 1 - confidence (5% at 0.95), whatever the number of
labels, because failing any one floor refuses; bench/bench_card.py checks it on simulated judges. When a
floor is missed, :func:`labels_to_certify` says how many labels of that class would reach it if the
observed recall held.

Why hand-written: scipy's ``binomtest(...).proportion_ci`` gives the exact interval one count at a time;
here it is ``beta.ppf`` over arrays, the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term

CARD_VERSION = 1
#: Floors a gate may set: tpr / tnr (two classes: the higher one positive), recall (every class), kappa.
FLOORS = ("tpr", "tnr", "recall", "kappa")
MAX_CLASSES = 11  # more distinct whole-number labels than a 0-10 scale: scores, not classes
POSITIVE_PAIRS = ({"fail", "pass"}, {"no", "yes"}, {"false", "true"}, {"negative", "positive"})


@dataclass(frozen=True)
class ClassRecall:
    """One human class: ``n`` labelled items of it, ``hits`` the judge put in it too."""

    label: str
    n: int
    hits: int
    lower: float  # Clopper-Pearson's one-sided lower bound at the card's confidence
    jeffreys: tuple[float, float]

    @property
    def recall(self) -> float:
        return self.hits / self.n if self.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "n": self.n, "hits": self.hits, "recall": _number(self.recall),
                "lower_bound": _number(self.lower), "jeffreys": [_number(v) for v in self.jeffreys]}


@dataclass(frozen=True)
class Agreement:
    """The class-by-class agreement a card holds (None classes: continuous scores)."""

    confidence: float
    n: int
    classes: list[ClassRecall] | None
    kappa: float | None
    base_rate: float | None
    notes: list[str] = field(default_factory=list)

    @property
    def binary(self) -> bool:
        """Two classes, one of them positive: two grades (0/1, 1/2, ...) or fail/pass, no/yes, false/true (not
        the verdicts a/b of a comparison, whose recalls are floored with ``recall``)."""
        if self.classes is None or len(self.classes) != 2:
            return False
        labels = {c.label.lower() for c in self.classes}
        return all(_order(c.label)[0] == 0 for c in self.classes) or labels in POSITIVE_PAIRS

    def recall_of(self, name: str) -> ClassRecall | None:
        """``tpr``/``tnr``: the higher / lower of two classes (:attr:`binary`); else a class by its label."""
        if self.classes is None:
            return None
        if name in ("tpr", "tnr"):
            if not self.binary:
                return None
            return self.classes[1] if name == "tpr" else self.classes[0]
        return next((c for c in self.classes if c.label == name), None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"confidence": self.confidence, "labels": self.n,
                               "classes": None if self.classes is None else [c.to_dict() for c in self.classes],
                               "kappa": _number(self.kappa), "base_rate": _number(self.base_rate), "notes": self.notes}
        for name in ("tpr", "tnr"):
            found = self.recall_of(name)
            if found is not None:
                out[name] = found.to_dict()
        return out


def agreement(human: Sequence, judge: Sequence, *, confidence: float = 0.95) -> Agreement:
    """Class-by-class agreement of ``judge`` with ``human`` (same length: labels, or whole-number grades; the
    judge's numbers are rounded to the nearest grade the humans use)."""
    human_classes, judge_classes, note = _as_classes(np.asarray(human, dtype=object), np.asarray(judge, dtype=object))
    n = len(human)
    if human_classes is None or judge_classes is None:
        return Agreement(confidence, n, None, None, None, [note] if note else [])
    labels = sorted(set(human_classes), key=_order)
    alpha = 1 - confidence
    classes = []
    for label in labels:
        mine = human_classes == label
        count, hits = int(mine.sum()), int((judge_classes[mine] == label).sum())
        classes.append(ClassRecall(str(label), count, hits, exact_lower(hits, count, alpha),
                                   _jeffreys(hits, count, alpha)))
    kappa, base = _kappa(human_classes, judge_classes)
    return Agreement(confidence, n, classes, kappa, base, [note] if note else [])


def exact_lower(hits: int, n: int, alpha: float) -> float:
    """Clopper-Pearson's one-sided ``1 - alpha`` lower bound on a proportion (0 with no hit)."""
    return float(stats.beta.ppf(alpha, hits, n - hits + 1)) if hits > 0 else 0.0


def _jeffreys(hits: int, n: int, alpha: float) -> tuple[float, float]:
    low = float(stats.beta.ppf(alpha / 2, hits + 0.5, n - hits + 0.5)) if hits > 0 else 0.0
    high = float(stats.beta.ppf(1 - alpha / 2, hits + 0.5, n - hits + 0.5)) if hits < n else 1.0
    return low, high


def _kappa(human: np.ndarray, judge: np.ndarray) -> tuple[float | None, float]:
    labels = sorted(set(human) | set(judge), key=_order)
    index = {label: k for k, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for h, j in zip(human, judge, strict=True):
        table[index[h], index[j]] += 1
    total = table.sum()
    observed = np.trace(table) / total
    expected = float(table.sum(axis=1) @ table.sum(axis=0)) / total ** 2
    base = float(table.sum(axis=1).max() / total)
    kappa = None if expected >= 1 else float((observed - expected) / (1 - expected))
    return kappa, base


def _as_classes(human: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, str | None]:
    """Labels as they are; numbers as whole grades (the judge's rounded to the nearest one the humans use)."""
    if all(isinstance(v, str) for v in human):
        return human.astype(str), np.array([str(v) for v in judge]), None
    values = human.astype(float)
    if not np.allclose(values, np.round(values)) or len(np.unique(values)) > MAX_CLASSES:
        return None, None, ("the human values are not whole grades (averages, or a continuous score): "
                            "a card of correlations only, no class recalls")
    grades = np.unique(np.round(values))
    nearest = grades[np.abs(judge.astype(float)[:, None] - grades[None, :]).argmin(axis=1)]
    note = None
    if not np.allclose(judge.astype(float), np.round(judge.astype(float))):
        note = "the judge's values were rounded to the nearest grade the humans use"
    return np.array([_grade(v) for v in np.round(values)]), np.array([_grade(v) for v in nearest]), note


def _grade(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _order(label: Any):
    try:
        return (0, float(label), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(label))


def _number(value) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


# -- certification ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Certification:
    """Whether a card meets the floors; ``missed``: each floor missed, why; ``plan``: labels of each class
    that would reach its floor if the observed recall held (None: it would not at any count)."""

    certified: bool
    missed: list[str]
    plan: dict[str, int | None]

    def to_dict(self) -> dict[str, Any]:
        return {"certified": self.certified, "missed": self.missed, "plan": self.plan}


def parse_floors(text: str | Mapping[str, float]) -> dict[str, float]:
    """``"tpr=0.8,tnr=0.8"`` (or a mapping) as {floor: value}, each a known floor in (0, 1)."""
    pairs = text.items() if isinstance(text, Mapping) else (
        part.split("=", 1) if "=" in part else (part, "") for part in str(text).split(",") if part.strip())
    floors: dict[str, float] = {}
    for name, value in pairs:
        name = str(name).strip()
        if name not in FLOORS:
            raise ConfigError(f"{term('floors')} {name!r}: choose among {', '.join(FLOORS)} (e.g. tpr=0.8,tnr=0.8)")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{term('floors')} {name}={value!r}: give a number in (0, 1)") from None
        if not 0 < number < 1:
            raise ConfigError(f"{term('floors')} {name}={value!r}: give a number in (0, 1)")
        floors[name] = number
    if not floors:
        raise ConfigError(f"{term('floors')}: give at least one, e.g. tpr=0.8,tnr=0.8")
    return floors


def certify(found: Agreement, floors: Mapping[str, float]) -> Certification:
    """Every floor met by its exact lower bound (kappa: by its value; it has no bound here)."""
    missed, plan = [], {}
    alpha = 1 - found.confidence
    for name, floor in floors.items():
        if name == "kappa":
            if found.kappa is None or found.kappa < floor:
                missed.append(f"kappa {_shown(found.kappa)} < {floor:g} (base rate {_shown(found.base_rate)})")
            continue
        if found.classes is None:
            missed.append(f"{name}: the card has no classes (continuous scores)")
            continue
        chosen = found.classes if name == "recall" else [found.recall_of(name)]
        if chosen == [None]:
            missed.append(f"{name}: the card's classes ({', '.join(c.label for c in found.classes)}) are not a "
                          "negative and a positive one: floor each with recall=")
            continue
        for one in chosen:
            if one is not None and one.lower < floor:
                label = name if name != "recall" else f"recall of {one.label!r}"
                missed.append(f"{label}: {one.hits}/{one.n} = {one.recall:.3f}, lower bound {one.lower:.3f} < {floor:g}")
                plan[one.label] = labels_to_certify(one.hits, one.n, floor, alpha)
    return Certification(not missed, missed, plan)


def labels_to_certify(hits: int, n: int, floor: float, alpha: float, limit: int = 1_000_000) -> int | None:
    """The labels of a class at which the exact lower bound would reach ``floor`` if the observed recall held
    (None: the recall is not above the floor, or it would take more than ``limit``)."""
    rate = hits / n if n else 0.0
    if rate <= floor:
        return None
    low, high = max(n, 1), max(n, 1)
    while exact_lower(round(rate * high), high, alpha) < floor:
        high *= 2
        if high > limit:
            return None
    while low < high:  # the bound grows with the count at a fixed rate (up to rounding)
        middle = (low + high) // 2
        if exact_lower(round(rate * middle), middle, alpha) >= floor:
            high = middle
        else:
            low = middle + 1
    return high


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


__all__ = ["CARD_VERSION", "FLOORS", "Agreement", "Certification", "ClassRecall", "agreement", "certify",
           "exact_lower", "labels_to_certify", "parse_floors"]
