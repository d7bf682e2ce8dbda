"""The estimation problem behind ``judgelab evaluate``: units x systems, judge and human values.

A *unit* is what gets a human label: an item (pointwise evaluation: each item belongs to one
system) or a query (IR: every run is scored on every query, and labelling a query reveals the
human metric of every run on it). Both shapes become the same arrays, so every estimator is
written once:

* ``judge[u, s]``: the judge's value of unit ``u`` for system ``s`` (NaN: no verdict);
* ``human[u, s]``: the all-human value where it is known (NaN elsewhere);
* ``present[u, s]``: the unit belongs to system ``s``'s population (the estimand averages over it);
* ``clusters[u]``: the source (or query) a unit comes from, resampled by the judge-only bootstrap
  and used for the judge term's variance when the target is the population of sources;
* ``strata[u]``: the sampling strata (one per system for items, one for queries);
* ``scale``: the human values' known range ``(lo, hi)`` (a rating scale, [0, 1] for IR metrics),
  which the betting intervals need; None when nothing declares it;
* ``judges[u, s, j]`` (several judges): every judge's value, ``judge`` being the first's; None with one.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from judgelab.errors import DataError
from judgelab.metrics.bootstrap import group_codes


class UnitRules:
    """What reads only the ``units`` and ``kind`` of a problem, shared with what a draw chooses among
    (:class:`judgelab.evaluate.sampling.Units`)."""

    kind: str
    units: tuple[str, ...]

    @property
    def n_units(self) -> int:
        return len(self.units)

    def index(self, ids) -> np.ndarray:
        """Positions of unit ids; unknown ids are an error naming some of them."""
        where = {unit: k for k, unit in enumerate(self.units)}
        unknown = [i for i in ids if i not in where]
        if unknown:
            shown = ", ".join(map(repr, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise DataError(f"{len(unknown)} labelled id(s) are not {self.kind} of the data: {shown}")
        return np.array([where[i] for i in ids], dtype=int)


@dataclass(frozen=True)
class Problem(UnitRules):
    kind: str  # "items" or "queries"
    systems: tuple[str, ...]
    units: tuple[str, ...]
    judge: np.ndarray  # (U, S) float
    human: np.ndarray  # (U, S) float, NaN where unknown
    present: np.ndarray  # (U, S) bool
    clusters: np.ndarray  # (U,) int codes
    strata: np.ndarray  # (U,) int codes
    scale: tuple[float, float] | None = None
    judges: np.ndarray | None = None  # (U, S, J): several judges' values (NaN: no verdict)
    judge_names: tuple[str, ...] = ()

    @property
    def sizes(self) -> np.ndarray:
        """Units per system: the population each system's mean is taken over."""
        return self.present.sum(axis=0)

    def with_human(self, human: np.ndarray) -> Problem:
        return replace(self, human=human)

    def with_judges(self, judges: np.ndarray, names: list[str] | tuple[str, ...]) -> Problem:
        """The same problem judged by several judges (``judges``: (U, S, J)); ``judge`` becomes the first's."""
        judges = np.asarray(judges, dtype=float)
        if judges.shape != (*self.judge.shape, len(names)):
            raise DataError(f"judges of shape {judges.shape} for {self.judge.shape} units x systems and "
                            f"{len(names)} judge names")
        return replace(self, judge=judges[..., 0], judges=judges, judge_names=tuple(names))

    def filled_judges(self) -> np.ndarray:
        """``judges`` with each missing value filled with that judge's mean over the unit's system (over all
        its units, where a system has none), so that a judge says nothing where it gave no verdict."""
        if self.judges is None:  # one judge (with_judges gives several): the TypeError np.nanmean of None raises
            raise TypeError("filled_judges needs several judges' values (with_judges)")
        judges = np.where(self.present[..., None], self.judges, np.nan)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a judge without a verdict for a system
            per_system = np.nanmean(judges, axis=0, keepdims=True)
            overall = np.nanmean(judges.reshape(-1, judges.shape[-1]), axis=0)
        per_system = np.where(np.isfinite(per_system), per_system, overall)
        return np.where(np.isfinite(judges), judges, per_system)


def from_items(ids, systems, clusters, judge, human, scale: tuple[float, float] | None = None) -> Problem:
    """Pointwise items: one system per item, sampled in strata by system.

    ``judge``/``human``: one value per item (NaN: none). Items without a system id are one
    system named ``"all"`` (a data set that names no systems still has a mean to estimate).
    """
    names = ["all" if s is None else str(s) for s in systems]
    system_names = tuple(sorted(set(names)))
    column = {name: k for k, name in enumerate(system_names)}
    codes = np.array([column[name] for name in names], dtype=int)
    n, s = len(names), len(system_names)
    present = np.zeros((n, s), dtype=bool)
    present[np.arange(n), codes] = True
    judge_matrix = np.full((n, s), np.nan)
    human_matrix = np.full((n, s), np.nan)
    judge_matrix[np.arange(n), codes] = np.asarray(judge, dtype=float)
    human_matrix[np.arange(n), codes] = np.asarray(human, dtype=float)
    cluster_codes, _ = group_codes(clusters)
    return Problem("items", system_names, tuple(map(str, ids)), judge_matrix, human_matrix, present,
                   cluster_codes.astype(int), codes, _checked_scale(scale))


def from_queries(queries, runs, judge: np.ndarray, human: np.ndarray,
                 scale: tuple[float, float] | None = (0.0, 1.0)) -> Problem:
    """IR: every run on every query; one stratum, queries are their own clusters. ``scale``: the
    measure's range ([0, 1] for nDCG, precision, recall, AP, RR; None for a count)."""
    queries = tuple(map(str, queries))
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    q = len(queries)
    return Problem("queries", tuple(map(str, runs)), queries, judge, human, np.ones(judge.shape, dtype=bool),
                   np.arange(q), np.zeros(q, dtype=int), _checked_scale(scale))


def _checked_scale(scale) -> tuple[float, float] | None:
    if scale is None:
        return None
    lo, hi = (float(v) for v in scale)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise DataError(f"scale {list(scale)!r}: give [low, high] with low < high")
    return lo, hi
