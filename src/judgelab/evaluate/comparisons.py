"""Comparisons between systems as the estimators read them (docs/pairwise.md): :class:`Comparisons`
(systems as codes, the judge's and the humans' preferences, the sampling design), :func:`comparisons`,
which checks names and verdicts and builds them, and whether they connect the systems.

Also what the two kinds of estimator share, the win rates' (:mod:`judgelab.evaluate.preferences`) and
Bradley-Terry's (:mod:`judgelab.evaluate.bradley_terry`): the power-tuned judge weight and Student's t
intervals from a covariance. They live here, below both, so that neither imports the other.

Comparisons read from items and judgments: :mod:`judgelab.evaluate.comparison_items` (one large file
in one pass: :mod:`judgelab.evaluate.comparison_file`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from judgelab.data.labels import PREFERENCES
from judgelab.errors import ConfigError
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.metrics.bootstrap import group_codes

# pairwise tests and rank sets hold k x k matrices for k systems (a ring of 1,000 systems: 34 s and 384 MB;
# 2,000: 106 s and 1.15 GB; 20,000 asked for 9.3 GB): more are refused when the comparisons are read
MAX_COMPARED_SYSTEMS = 1000
MIN_LABELS = 2
NO_VERDICT = 0.5  # a comparison the judge gave no verdict on counts as its tie in the corrected estimate


# -- the data --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparisons:
    """Comparisons as codes: ``a``/``b`` index ``systems``; ``judge``/``human`` are preferences for
    ``a`` (NaN: no verdict / not labelled). ``probability``: each comparison's chance of being
    drawn for labelling (``judgelab sample``'s design); None: a uniform random sample."""

    systems: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    judge: np.ndarray
    human: np.ndarray
    probability: np.ndarray | None = None
    # each labelled comparison's place in the order its label was given (None: the rows' order); what a
    # confidence sequence reads
    order: np.ndarray | None = None
    # several judges: (n, J) preferences for a (``judge`` is the first's); the label-based estimators use
    # their cross-fitted combination (:func:`stacked_preference`)
    judges: np.ndarray | None = None
    judge_names: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def labelled(self) -> np.ndarray:
        return np.isfinite(self.human)

    @property
    def judged(self) -> np.ndarray:
        return np.isfinite(self.judge)

    def shares(self) -> np.ndarray:
        """Each labelled comparison's share of the labelled total, weighted by 1 / its inclusion
        probability (Hajek): 1/n for a uniform sample. Zero on unlabelled comparisons."""
        rows = self.labelled
        weight = rows.astype(float) if self.probability is None else np.where(rows, 1 / self.probability, 0.0)
        return weight / max(weight.sum(), 1e-300)

    @property
    def design(self) -> str:
        return "uniform" if self.probability is None else "weighted"

    def restricted(self, rows: np.ndarray) -> Comparisons:
        """The comparisons ``rows`` selects (a mask or indices), among the systems they involve."""
        names = np.asarray(self.systems, dtype=object)
        probability = None if self.probability is None else self.probability[rows]
        kept = comparisons(names[self.a[rows]], names[self.b[rows]], self.judge[rows], self.human[rows],
                           probability=probability)
        if self.judges is not None:
            kept = replace(kept, judges=self.judges[rows], judge_names=self.judge_names)
        return kept if self.order is None else replace(kept, order=self.order[rows])


def comparisons(system_a: Sequence, system_b: Sequence, judge: Sequence | np.ndarray,
                human: Sequence | np.ndarray | None = None, labelled: Sequence[bool] | None = None,
                probability: Sequence[float] | np.ndarray | None = None) -> Comparisons:
    """Checked comparisons. Verdicts: "a"/"b"/"tie" or a preference for a in [0, 1]; None/NaN: none.
    ``labelled``: which human verdicts count (the sample); without it every human verdict given does.
    ``probability``: the inclusion probability of each comparison in the labelled sample (an
    unequal-probability design: stratified by pair, active); labels are weighted by its inverse."""
    names_a, names_b = np.asarray(system_a, dtype=object), np.asarray(system_b, dtype=object)
    if names_a.shape != names_b.shape or names_a.ndim != 1 or len(names_a) == 0:
        raise ConfigError("system_a and system_b must be two lists of the same length, not empty")
    codes, names = group_codes(np.concatenate([names_a, names_b]))  # by the text of each name
    a, b = codes[: len(names_a)], codes[len(names_a):]
    same = np.flatnonzero(a == b)
    if len(same):
        raise ConfigError(f"comparison {same[0]} compares system {names[a[same[0]]]!r} with itself")
    systems = tuple(names)
    if len(systems) > MAX_COMPARED_SYSTEMS:
        raise ConfigError(f"the comparisons name {len(systems):,} systems; judgelab ranks at most "
                          f"{MAX_COMPARED_SYSTEMS:,} at once (its pairwise tests and rank sets grow with the square "
                          "of the number of systems): evaluate a subset, e.g. the systems with the most comparisons")
    judge_pref = preferences(judge, len(a), "judge")
    human_pref = preferences(human, len(a), "human") if human is not None else np.full(len(a), np.nan)
    if labelled is not None:
        mask = np.asarray(labelled, dtype=bool)
        if mask.shape != (len(a),):
            raise ConfigError(f"the labelled mask has {mask.size} entries for {len(a)} comparisons")
        missing = np.flatnonzero(mask & ~np.isfinite(human_pref))
        if len(missing):
            raise ConfigError(f"{len(missing)} comparison(s) are marked labelled but have no human verdict "
                              f"(e.g. comparison {missing[0]})")
        human_pref = np.where(mask, human_pref, np.nan)
    return Comparisons(systems, a, b, judge_pref, human_pref, _probabilities(probability, human_pref))


def _probabilities(probability: Sequence[float] | np.ndarray | None, human: np.ndarray) -> np.ndarray | None:
    if probability is None:
        return None
    pi = np.asarray(probability, dtype=float)
    if pi.shape != human.shape:
        raise ConfigError(f"{pi.size} inclusion probabilities for {human.size} comparisons")
    bad = np.flatnonzero(np.isfinite(human) & ~((pi > 0) & (pi <= 1)))
    if len(bad):
        raise ConfigError(f"labelled comparison {bad[0]} has inclusion probability {pi[bad[0]]!r}; it must be in (0, 1]")
    return pi


def preferences(verdicts: Sequence | np.ndarray | None, n: int, who: str) -> np.ndarray:
    """Preferences for a: "a" 1, "tie" 0.5, "b" 0, numbers in [0, 1] as they are, None/NaN missing.

    Each distinct value is read once (a million verdicts hold three or four)."""
    if verdicts is None:
        return np.full(n, np.nan)
    if isinstance(verdicts, np.ndarray) and verdicts.dtype.kind == "f" and verdicts.shape == (n,):
        outside = np.flatnonzero(~np.isnan(verdicts) & ~((verdicts >= 0) & (verdicts <= 1)))
        if len(outside):  # its error
            _preference(float(verdicts[outside[0]]), int(outside[0]), who)
        return verdicts.astype(float)  # a copy: preferences already, NaN where none
    values = np.asarray(verdicts, dtype=object)
    if values.shape != (n,):
        raise ConfigError(f"{values.size} {who} verdicts for {n} comparisons")
    # the text of each value with its type ("str:a", "float:0.5"), so that True and 1 stay apart
    inverse, distinct = group_codes([f"{type(v).__name__}:{v}" for v in values])
    first = np.unique(inverse, return_index=True)[1]
    mapped = np.empty(len(distinct))
    for k, position in enumerate(first):
        mapped[k] = _preference(values[position], position, who)
    return mapped[inverse]


def _preference(value: Any, position: int, who: str) -> float:
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return np.nan
    if isinstance(value, str) and value in PREFERENCES:
        return PREFERENCES[value]
    if isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)) and 0 <= value <= 1:
        return float(value)
    raise ConfigError(f"{who} verdict {value!r} of comparison {position} is not a, b, tie or a preference in [0, 1]")


def components(data: Comparisons, rows: np.ndarray | None = None) -> list[list[str]]:
    """The systems each connected part of the comparison graph holds (one list: connected)."""
    a, b = (data.a, data.b) if rows is None else (data.a[rows], data.b[rows])
    k = len(data.systems)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(k, k))
    count, label = connected_components(graph, directed=False)
    return [[data.systems[s] for s in np.flatnonzero(label == part)] for part in range(count)]


def group_text(systems: list[str]) -> str:
    """``{a, b, c, ...}``: a group of systems, the first six named."""
    return "{" + ", ".join(systems[:6]) + (", ..." if len(systems) > 6 else "") + "}"


def require_connected(data: Comparisons) -> None:
    parts = sorted(components(data), key=len)  # the small groups first: usually the ones cut off
    if len(parts) > 1:
        shown = " | ".join(map(group_text, parts[:4]))
        raise ConfigError(f"the comparisons do not connect the systems: {len(parts)} separate groups ({shown}); "
                          "systems that never meet, directly or through others, cannot be ranked together")


# -- what the estimators share (preferences.py's means, bradley_terry.py's fits) ----------------
def _tuned(cross: np.ndarray, judge: np.ndarray) -> float:
    """The lambda minimising the trace of (human - lambda judge)'s covariance, in [0, 1]."""
    denominator = float(np.trace(judge))
    return float(np.clip(np.trace(cross) / denominator, 0, 1)) if denominator > 0 else 0.0


def _own_df(estimates: SystemEstimates) -> np.ndarray:
    """Each system's degrees of freedom (the diagonal of ``df``); without them the ValueError np.diag(None)
    raises."""
    if estimates.df is None:
        raise ValueError("the estimates have no degrees of freedom")
    return np.diag(estimates.df)


def _estimates(name: str, data: Comparisons, value: np.ndarray, cov: np.ndarray, n_units, n_labelled,
               reason: list[str | None], confidence: float) -> SystemEstimates:
    """Student's t intervals with a system's labelled comparisons minus one degrees of freedom (a
    difference: the smaller of the two; judge only: normal): at 200 labels among 20 systems a
    system has ~20, where a normal interval covers visibly less than it says. A system with a reason
    gets no value, one with zero variance no interval."""
    value = np.where([r is None for r in reason], value, np.nan)
    variance = np.diag(cov)
    degenerate = np.isfinite(value) & ~(variance > 0)
    spread = "its judged verdicts show no spread" if name == "judge" else "its labelled verdicts show no spread"
    reason = [r or (f"{spread}: no interval" if bad else None) for r, bad in zip(reason, degenerate, strict=True)]
    labels = np.asarray(n_labelled, dtype=float)
    own_df = np.where(labels > 0, np.maximum(labels - 1, 1), np.inf)
    df = np.minimum(own_df[:, None], own_df[None, :])
    half = stats.t.ppf(0.5 + confidence / 2, own_df) * np.sqrt(np.clip(variance, 0, None))
    ci = np.column_stack([value - half, value + half])
    ci[degenerate] = np.nan
    return SystemEstimates(name, data.systems, value, ci, np.asarray(n_units, dtype=int),
                           np.asarray(labels, dtype=int), tuple(reason), confidence, cov=cov, df=df, info={})
