"""Which units carry a human label, and with what probability each was drawn.

Every estimator that uses human labels is design-based: it is unbiased because the labelled
units were drawn at random with known inclusion probabilities, whatever the judge's errors.
Without a recorded design, labels are taken as a simple random sample within each stratum
(system), which is what ``judgelab sample`` draws by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgelab.errors import ConfigError
from judgelab.evaluate.problem import Problem


@dataclass(frozen=True)
class Design:
    labelled: np.ndarray  # (U,) bool
    probability: np.ndarray  # (U,) inclusion probability in (0, 1]; meaningful where labelled
    method: str = "stratified"  # "stratified" (uniform within strata) or "active"
    # (U,) each labelled unit's place in the order the labels were given (None: unknown); confidence
    # sequences read the labels in that order
    order: np.ndarray | None = None

    @property
    def n_labelled(self) -> int:
        return int(self.labelled.sum())


def stratified_design(problem: Problem, labelled: np.ndarray, order: np.ndarray | None = None) -> Design:
    """Labels taken as a uniform draw within each stratum: pi = n_h / N_h (``order``: see :class:`Design`)."""
    labelled = np.asarray(labelled, dtype=bool)
    probability = np.zeros(problem.n_units)
    for stratum in np.unique(problem.strata):
        members = problem.strata == stratum
        probability[members] = labelled[members].sum() / members.sum()
    return Design(labelled, probability, "stratified", order)


def recorded_design(problem: Problem, labelled: np.ndarray, probability: np.ndarray, method: str) -> Design:
    """A design drawn by ``judgelab sample``: the inclusion probabilities it wrote."""
    labelled = np.asarray(labelled, dtype=bool)
    probability = np.asarray(probability, dtype=float)
    bad = labelled & ~((probability > 0) & (probability <= 1))
    if bad.any():
        unit = problem.units[int(np.flatnonzero(bad)[0])]
        raise ConfigError(f"unit {unit!r} has inclusion probability {probability[bad][0]!r}; it must be in (0, 1]")
    return Design(labelled, probability, method)
