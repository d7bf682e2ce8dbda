"""The result every system-level estimator returns: :class:`SystemEstimates`, one estimator's value and
interval per system, with what their differences need (a covariance and degrees of freedom, or bootstrap
replicates). It lives apart from the estimators that compute it (:mod:`judgelab.evaluate.estimators`,
:mod:`judgelab.evaluate.shrinkage`, the comparisons' :mod:`judgelab.evaluate.preferences` and
:mod:`judgelab.evaluate.bradley_terry`), so that the modules that only read it (pairwise differences, rank
sets, leaderboards) import none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SystemEstimates:
    """One estimator's value and interval per system, and what its differences need.

    ``cov``/``df`` (analytic estimators): the covariance of the system estimates and the degrees
    of freedom of each difference (diagonal: of each system). ``replicates`` (judge-only): the
    bootstrap replicates, ``(resamples, systems)``. ``reason[s]`` says why system ``s`` has no
    estimate (its value is then NaN).
    """

    estimator: str
    systems: tuple[str, ...]
    value: np.ndarray
    ci: np.ndarray  # (S, 2)
    n_units: np.ndarray  # units each estimate averages over
    n_labelled: np.ndarray  # labelled units each estimate used (0 for the judge-only one)
    reason: tuple[str | None, ...]
    confidence: float
    cov: np.ndarray | None = None
    df: np.ndarray | None = None
    replicates: np.ndarray | None = field(default=None, repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def se(self) -> np.ndarray:
        if self.cov is not None:
            return np.sqrt(np.clip(np.diag(self.cov), 0, None))
        if self.replicates is not None:
            return np.nanstd(self.replicates, axis=0, ddof=1)
        return np.full(len(self.systems), np.nan)


def wider_than_labels(fixed: SystemEstimates, own: SystemEstimates) -> np.ndarray:
    """Systems whose corrected t interval came out wider than the labels' own t interval: a judge whose errors
    vary more than the labels (a poor TREMA judge on 12 labelled queries: 1.16 times the labels' width for
    the worst judge, 1.45 for its worst run). There the labels' own estimate is taken, so the judge never
    widens a system's interval. A choice between two intervals from the same labels is a selection: on TREC
    DL 2019 at 12 labelled queries (300 draws) the worst run's coverage went from 0.943 to 0.923 for
    ``target="items"`` (none significantly under 0.95) and from 0.983 to 0.973 for the CLI's population
    target; on HANNA and Topical-Chat it moved within Monte Carlo error (bench/bench_per_system.py)."""
    methods = fixed.info.get("per_system") or ("t",) * len(fixed.value)
    own_methods = own.info.get("per_system") or ("t",) * len(own.value)
    both_t = np.array([a == "t" and b == "t" for a, b in zip(methods, own_methods, strict=True)])
    with np.errstate(invalid="ignore"):
        return both_t & ((fixed.ci[:, 1] - fixed.ci[:, 0]) > (own.ci[:, 1] - own.ci[:, 0]))


def labels_own_where(fixed: SystemEstimates, own: SystemEstimates, census: np.ndarray) -> SystemEstimates:
    """The systems ``census`` marks get the labels' own estimate, interval and test. A system whose every unit
    is labelled: the judge cannot tell anything about those units that their labels do not (the corrected value
    equals the labels' mean there), and its term, counted as if from other units, gave more degrees of freedom
    than the labels have (a narrower interval than the labels allow). A system whose corrected interval came out
    wider than the labels' own: :func:`wider_than_labels`. ``info["every_unit_labelled"]`` and
    ``info["labels_own_narrower"]`` name them."""
    value, ci = np.where(census, own.value, fixed.value), np.where(census[:, None], own.ci, fixed.ci)
    if fixed.cov is None or fixed.df is None:  # analytic estimates only: the AttributeError None.copy() raises
        raise AttributeError("the corrected estimates have no covariance or degrees of freedom")
    cov, df = fixed.cov.copy(), fixed.df.copy()
    if own.cov is None or own.df is None:  # the same of the labels' own: the TypeError indexing None raises
        raise TypeError("the labels' own estimates have no covariance or degrees of freedom")
    for matrix, source in ((cov, own.cov), (df, own.df)):
        matrix[census, :] = source[census, :]
        matrix[:, census] = source[:, census]
    reason = tuple(o if c else f for f, o, c in zip(fixed.reason, own.reason, census, strict=True))
    info = dict(fixed.info)
    if "per_system" in info:
        info["per_system"] = tuple(o if c else f for f, o, c in zip(fixed.info["per_system"], own.info["per_system"],
                                                                    census, strict=True))
    if info.get("curves") is not None:
        info["curves"] = info["curves"].taking(own.info["curves"], census)
    return replace(fixed, value=value, ci=ci, cov=cov, df=df, reason=reason, info=info)


def never_wider(fixed: SystemEstimates, own: SystemEstimates) -> SystemEstimates:
    """``fixed`` (a corrected estimate) with the labels' own estimate, interval and test taken for each system
    whose corrected interval came out wider (:func:`wider_than_labels`), named in ``info["labels_own_narrower"]``:
    the judge never widens a system's interval. Strengths centred over different systems (``info["centred_over"]``:
    a style-controlled human-only fit whose labelled comparisons leave a system out) are not mixed: a value means
    another thing in each, so ``fixed`` is returned as it is."""
    if fixed.info.get("centred_over") != own.info.get("centred_over"):
        return fixed
    wider = wider_than_labels(fixed, own)
    if not wider.any():
        return fixed
    chosen = labels_own_where(fixed, own, wider)
    chosen.info["labels_own_narrower"] = [s for s, w in zip(fixed.systems, wider, strict=True) if w]
    return chosen
