"""The result every system-level estimator returns: :class:`SystemEstimates`, one estimator's value and
interval per system, with what their differences need (a covariance and degrees of freedom, or bootstrap
replicates). It lives apart from the estimators that compute it (:mod:`judgelab.evaluate.estimators`,
:mod:`judgelab.evaluate.shrinkage`, the comparisons' :mod:`judgelab.evaluate.preferences` and
:mod:`judgelab.evaluate.bradley_terry`), so that the modules that only read it (pairwise differences, rank
sets, leaderboards) import none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
