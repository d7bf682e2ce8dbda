"""Several judges' labels as one judge: majority vote, mean, Dawid-Skene, family Dawid-Skene (docs/combine.md).

Verdicts are classes: ``a``/``b``/``tie`` on comparisons, or whole numbers (relevance grades 0-3, ratings
1-5). Each judge's verdicts are coded to an (items x judges) array (missing where the judge gave none or
failed) and aggregated by :mod:`judgelab.metrics.latent`; the result is one :class:`Judgment` per item,
which ``judgelab meta`` and ``judgelab evaluate`` read as any judge's:

>>> combined = combine_judgments({"qwen": "runs/qwen", "gpt": "gpt.jsonl"}, method="dawid-skene")  # doctest: +SKIP
>>> save_judgments(combined.judgments, "combined.jsonl")                                             # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.data.io import judgments_file, load_judgments, select_judge
from judgelab.data.item import VERDICTS
from judgelab.data.judgment import Judgment
from judgelab.data.labels import PREFERENCES
from judgelab.data.rows import JUDGMENT_ROWS, open_rows
from judgelab.errors import ConfigError, DataError, term
from judgelab.metrics.align import several_judges
from judgelab.metrics.latent import LatentClassFit, dawid_skene, family_dawid_skene, vote_shares

METHODS = ("majority", "mean", "dawid-skene", "family-dawid-skene")
LIST = "<list>"
ROUND_HINT = "; ratings averaged over samples can be rounded first (round_scores=True, --round)"

Class = str | int


@dataclass(frozen=True)
class JudgeVerdicts:
    """One judge's judgments, and where each was read (``lines``: its file line, or row; None for a list)."""

    name: str
    judgments: list[Judgment]
    where: str = LIST
    lines: list[int] | None = None

    def line(self, k: int) -> int | None:
        return self.lines[k] if self.lines is not None else k + 1


@dataclass(frozen=True)
class Combined:
    """The combined judge: one judgment per item (in the order first seen), the judges and classes it
    combined, how many items each judge gave a verdict on, and the latent-class fit (None for majority
    and mean)."""

    judgments: list[Judgment]
    method: str
    judges: tuple[str, ...]
    classes: tuple[Class, ...]
    coverage: dict[str, int]
    fit: LatentClassFit | None = None

    @property
    def name(self) -> str:
        return f"{self.method}({','.join(self.judges)})"

    def families(self) -> list[list[str]]:
        if self.fit is None:
            return [[name] for name in self.judges]
        return [[self.judges[j] for j in family] for family in self.fit.families]

    def summary(self) -> dict[str, Any]:
        """What ``judgelab combine --json`` prints: items, judges with their coverage, and the fit."""
        ok = [j for j in self.judgments if j.ok]
        out: dict[str, Any] = {"method": self.method, "judge": self.name, "classes": list(self.classes),
                               "items": len(self.judgments), "items_without_verdict": len(self.judgments) - len(ok),
                               "coverage": self.coverage}
        if self.fit is not None:
            accuracy = self.fit.accuracy()
            out |= {"priors": dict(zip(map(str, self.classes), self.fit.priors.tolist(), strict=True)),
                    "accuracy": {name: float(a) for name, a in zip(self.judges, accuracy, strict=True)},
                    "confusion": {name: m.tolist() for name, m in zip(self.judges, self.fit.confusion, strict=True)},
                    "families": self.families(), "iterations": self.fit.iterations,
                    "converged": self.fit.converged, "log_likelihood": self.fit.log_likelihood,
                    "merges": [self._named(m) for m in self.fit.merges], "notes": list(self.fit.notes)}
        return out

    def _named(self, merge: dict[str, Any]) -> dict[str, Any]:
        return merge | {k: [self.judges[j] for j in merge[k]] for k in ("first", "second")}


# ---------------------------------------------------------------------------------------- public API


def combine_judgments(judges: Mapping[str, Any] | Sequence[JudgeVerdicts], method: str = "dawid-skene", *,
                      field: str | None = None, round_scores: bool = False,
                      families: Sequence[Sequence[str]] | None = None) -> Combined:
    """Combine several judges' labels into one judge.

    ``judges``: ``{name: verdicts}`` (a judgments file or run folder, a DataFrame, a list of ``Judgment``)
    or what :func:`read_judges` returns. ``method``: ``majority``, ``mean``, ``dawid-skene`` or
    ``family-dawid-skene``. ``field``: where a file's rows keep the verdict (``prediction.coherence``).
    ``round_scores``: round numeric verdicts to whole numbers first (ratings averaged over samples).
    ``families``: for ``family-dawid-skene``, groups of judge names that err together (default: found
    from the data). Each judgment's ``label`` is the most probable class, ``score`` the expected value
    (comparisons: the preference for a, a=1, tie=0.5, b=0), ``extra.probabilities`` the class
    probabilities (majority and mean: the shares of the votes) and ``extra.verdicts`` each judge's.
    """
    if method not in METHODS:
        raise ConfigError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if families is not None and method != "family-dawid-skene":
        raise ConfigError("families are given to method family-dawid-skene only")
    verdicts = _as_verdicts(judges, field)
    if len(verdicts) < 2:
        raise ConfigError(f"combining needs at least 2 judges; got {len(verdicts)}"
                          + (f" ({verdicts[0].name} from {verdicts[0].where})" if verdicts else ""))
    coded = _code(verdicts, round_scores)
    fit = None
    probabilities = vote_shares(coded.codes, len(coded.classes))  # a row of zeros: no verdict on that item
    if method in ("dawid-skene", "family-dawid-skene"):
        judged = (coded.codes >= 0).any(axis=1)
        families_at = _family_columns(families, coded.judges)
        fit = (dawid_skene(coded.codes[judged], len(coded.classes)) if method == "dawid-skene" else
               family_dawid_skene(coded.codes[judged], len(coded.classes), families=families_at))
        probabilities[judged] = fit.posterior
    return Combined(_judgments(coded, probabilities, method), method, coded.judges, coded.classes,
                    coded.coverage(), fit)


def read_judges(sources: Sequence[str | os.PathLike | tuple[str, str | os.PathLike]], judges: Sequence[str] = (), *,
                field: str | None = None) -> list[JudgeVerdicts]:
    """The judges in judgments files (or run folders): without ``judges``, every judge in every file (a
    file's rows without a judge name are one judge named after the file); with ``judges``, those judges
    of the one file given, each named exactly or by a prefix naming one judge. A source given as
    ``(name, path)`` is one judge called ``name``. Two judges of one name in different files are told
    apart by the file (``name@file``)."""
    if judges and len(sources) != 1:
        raise ConfigError(f"{term('judges')} picks judges from one judgments file; {len(sources)} were given")
    out: list[JudgeVerdicts] = []
    for source in sources:
        given_name, source = source if isinstance(source, tuple) else (None, source)
        read = _read_file(source, judges, field)
        if given_name is not None:
            if len(read) != 1:
                raise ConfigError(f"{given_name}={source}: the file holds {len(read)} judges "
                                  f"({', '.join(r.name for r in read[:6])}); name one judge's file, or pick with "
                                  f"{term('judges')}")
            read = [JudgeVerdicts(given_name, read[0].judgments, read[0].where, read[0].lines)]
        out += read
    return _distinct_names(out)


# ---------------------------------------------------------------------------------------- reading


def _read_file(source: str | os.PathLike, judges: Sequence[str], field: str | None) -> list[JudgeVerdicts]:
    path = judgments_file(source)
    loaded = load_judgments(path, field=field)
    if not loaded:
        raise DataError("no judgments", str(source))
    lines = [line for line, _ in open_rows(path, JUDGMENT_ROWS, verdict_at=field)[1]]  # the rows load_judgments read
    names: list[str | None] = ([_pick(name, loaded, str(source)) for name in judges]
                               or list(dict.fromkeys(j.judge for j in loaded)))
    out = []
    for name in names:
        chosen = [k for k, j in enumerate(loaded) if j.judge == name]
        out.append(JudgeVerdicts(name or _file_label(source), [loaded[k] for k in chosen], str(source),
                                 [lines[k] for k in chosen]))
    return out


def _as_verdicts(judges: Any, field: str | None) -> list[JudgeVerdicts]:
    if not isinstance(judges, Mapping):
        listed = list(judges)
        if not all(isinstance(one, JudgeVerdicts) for one in listed):
            raise TypeError("judges: a mapping {name: verdicts} or the list read_judges returns")
        return listed
    from judgelab.data.given import as_judgments, is_path

    out = []
    for name, source in judges.items():
        if isinstance(source, JudgeVerdicts):
            out.append(JudgeVerdicts(str(name), source.judgments, source.where, source.lines))
        elif is_path(source):
            out += read_judges([(str(name), source)], field=field)
        else:
            out.append(JudgeVerdicts(str(name), as_judgments(source, field=field)))
    return out


def _pick(name: str, loaded: list[Judgment], where: str) -> str:
    """The one judge ``name`` names in a file: exactly, else as the prefix of one judge's name."""
    names = list(dict.fromkeys(j.judge for j in loaded if j.judge is not None))
    if name in names:
        return name
    matching = [n for n in names if n.startswith(name)]
    if len(matching) > 1:
        raise several_judges(matching, name, "judges", where)
    if not matching:
        select_judge(loaded, name, where)  # raises, listing the judges present
    return matching[0]


def _file_label(source: str | os.PathLike) -> str:
    path = Path(source)
    return path.name if path.is_dir() else (path.parent.name or path.stem) if path.stem == "judgments" else path.stem


def _distinct_names(judges: list[JudgeVerdicts]) -> list[JudgeVerdicts]:
    counts: dict[str, int] = {}
    for judge in judges:
        counts[judge.name] = counts.get(judge.name, 0) + 1
    return [judge if counts[judge.name] == 1 else
            JudgeVerdicts(f"{judge.name}@{_file_label(judge.where)}", judge.judgments, judge.where, judge.lines)
            for judge in judges]


# ---------------------------------------------------------------------------------------- coding


@dataclass(frozen=True)
class _Coded:
    item_ids: list[str]
    judges: tuple[str, ...]
    classes: tuple[Class, ...]
    codes: np.ndarray  # (items, judges), -1: no verdict
    aspect: str | None

    def coverage(self) -> dict[str, int]:
        return {name: int(n) for name, n in zip(self.judges, (self.codes >= 0).sum(axis=0), strict=True)}

    @property
    def comparisons(self) -> bool:
        return isinstance(self.classes[0], str)

    def values(self) -> np.ndarray:
        return np.array([PREFERENCES[c] if isinstance(c, str) else float(c) for c in self.classes])


def _code(judges: list[JudgeVerdicts], round_scores: bool) -> _Coded:
    """Every judge's verdicts as class codes, checked: classes, one verdict per item, one label set."""
    per_judge = [_classes_of(judge, round_scores) for judge in judges]
    _one_label_set(judges, per_judge)
    item_ids = list(dict.fromkeys(j.item_id for judge in judges for j in judge.judgments))
    used = {value for verdicts in per_judge for value in verdicts.values()}
    classes = _class_list(used)
    index = {c: k for k, c in enumerate(classes)}
    row = {item_id: i for i, item_id in enumerate(item_ids)}
    codes = np.full((len(item_ids), len(judges)), -1, dtype=int)
    for column, verdicts in enumerate(per_judge):
        for item_id, value in verdicts.items():
            codes[row[item_id], column] = index[value]
    aspects = {j.aspect for judge in judges for j in judge.judgments if j.ok}
    return _Coded(item_ids, tuple(j.name for j in judges), classes, codes, aspects.pop() if len(aspects) == 1 else None)


def _classes_of(judge: JudgeVerdicts, round_scores: bool) -> dict[str, Class]:
    """{item id: class} of one judge; a verdict that is no class, or a second one for an item, is an
    error at its file and line."""
    out: dict[str, Class] = {}
    first_line: dict[str, int | None] = {}
    for k, judgment in enumerate(judge.judgments):
        value = _verdict(judgment, round_scores, judge, k)
        if value is None:
            continue
        if judgment.item_id in out:
            raise DataError(f"a second verdict of judge {judge.name!r} on item {judgment.item_id!r} (the first is "
                            f"on line {first_line[judgment.item_id]}); keep one per item and judge",
                            judge.where, judge.line(k))
        out[judgment.item_id], first_line[judgment.item_id] = value, judge.line(k)
    if not out:
        raise DataError(f"judge {judge.name!r} gave no verdict ({len(judge.judgments)} judgments, none ok with a "
                        f"score or label); is the verdict in another field ({term('field')})?", judge.where)
    return out


def _verdict(judgment: Judgment, round_scores: bool, judge: JudgeVerdicts, k: int) -> Class | None:
    """The judgment's class: its label, else its score; None when it failed or says nothing."""
    if not judgment.ok:
        return None
    value = judgment.label if judgment.label is not None else judgment.score
    if value is None:
        return None
    if isinstance(value, str):
        if value in VERDICTS:
            return value
        raise DataError(f"{value[:40]!r} is not a class: give a, b or tie (comparisons) or a whole number",
                        judge.where, judge.line(k), "label")
    number = math.floor(value + 0.5) if round_scores else value
    if not float(number).is_integer():
        raise DataError(f"{value:g} is not a class: verdicts are whole numbers (grades, ratings) or a, b, tie"
                        + ROUND_HINT, judge.where, judge.line(k), "score")
    return int(number)


def _one_label_set(judges: list[JudgeVerdicts], per_judge: list[dict[str, Class]]) -> None:
    """Every judge gives a/b/tie, or every judge gives numbers: the first that differs is named."""
    kinds = []
    for judge, verdicts in zip(judges, per_judge, strict=True):
        own = {_kind(v) for v in verdicts.values()}
        if len(own) > 1:
            raise DataError(f"judge {judge.name!r} gives both a/b/tie verdicts and numbers", judge.where)
        kinds.append(own.pop())
    for judge, kind in zip(judges[1:], kinds[1:], strict=True):
        if kind != kinds[0]:
            raise DataError(f"judge {judge.name!r} gives {kind} while judge {judges[0].name!r} ({judges[0].where}) "
                            f"gives {kinds[0]}: combine judges of one label set", judge.where)


def _kind(value: Class) -> str:
    return "a/b/tie verdicts" if isinstance(value, str) else "numbers (grades or ratings)"


def _class_list(used: set[Class]) -> tuple[Class, ...]:
    """The classes: the verdicts given (comparisons: a and b always, tie if given); at least two."""
    if any(isinstance(v, str) for v in used):
        return tuple(v for v in VERDICTS if v in used or v in ("a", "b"))
    grades = sorted(v for v in used if not isinstance(v, str))  # all of them: none is a verdict here
    return tuple(grades if len(grades) > 1 else [grades[0], grades[0] + 1])


def _family_columns(families: Sequence[Sequence[str]] | None, names: tuple[str, ...]) -> list[list[int]] | None:
    if families is None:
        return None
    column = {name: j for j, name in enumerate(names)}
    unknown = [name for family in families for name in family if name not in column]
    if unknown:
        raise ConfigError(f"family member {unknown[0]!r} is not one of the judges: {', '.join(names)}")
    return [[column[name] for name in family] for family in families]


# ---------------------------------------------------------------------------------------- writing


def _judgments(coded: _Coded, probabilities: np.ndarray, method: str) -> list[Judgment]:
    name = f"{method}({','.join(coded.judges)})"
    values = coded.values()
    out = []
    for i, item_id in enumerate(coded.item_ids):
        given = coded.codes[i] >= 0
        if not given.any():
            out.append(Judgment(item_id=item_id, status="error", reason="no judge gave a verdict on this item",
                                judge=name, aspect=coded.aspect))
            continue
        p = probabilities[i]
        score = float(p @ values)
        label = _nearest(score, coded) if method == "mean" else _mode(p, score, coded, method)
        verdicts = {coded.judges[j]: coded.classes[coded.codes[i, j]] for j in np.flatnonzero(given)}
        extra = {"probabilities": {str(c): round(float(q), 6) for c, q in zip(coded.classes, p, strict=True)},
                 "verdicts": verdicts}
        out.append(Judgment(item_id=item_id, score=score, label=label, judge=name, aspect=coded.aspect, extra=extra))
    return out


def _mode(p: np.ndarray, mean: float, coded: _Coded, method: str) -> Class:
    """The most probable class. A majority split between classes goes to the one nearest the mean of the
    votes, and a split that is still even (a against b, 1 against 3) to the mean's own label."""
    top = np.flatnonzero(np.isclose(p, p.max(), rtol=0, atol=1e-9))
    if len(top) == 1 or method != "majority":
        return coded.classes[int(top[0])]
    distance = np.abs(coded.values()[top] - mean)
    nearest = top[np.isclose(distance, distance.min(), rtol=0, atol=1e-9)]
    return coded.classes[int(nearest[0])] if len(nearest) == 1 else _nearest(mean, coded)


def _nearest(value: float, coded: _Coded) -> Class:
    """The class a mean stands for: comparisons a above 0.5, b below, tie at 0.5; grades the nearest one
    (half-way between two: the higher)."""
    if coded.comparisons:
        return "tie" if abs(value - 0.5) < 1e-9 else "a" if value > 0.5 else "b"
    grades = [int(c) for c in coded.classes]
    return min(grades, key=lambda g: (abs(g - value), -g))
