"""Cluster bootstrap over groups, as count matrices.

A resample draws ``n_groups`` groups with replacement; we represent it by how many times each
group was drawn (a row of a ``(resamples, groups)`` count matrix). Every statistic is then an
exact function of those counts: Pearson from per-group sums, ranks from cumulative counts, group
means from a matrix product. No resample is ever materialised as an expanded item list.

Resamples come in fixed blocks, each drawn from its own generator seeded by ``(seed, block)``,
so the draws do not depend on how callers chunk their work and two judges evaluated with the
same seed on the same groups see the same resamples (the paired bootstrap relies on this).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
from threadpoolctl import threadpool_limits

from judgelab.errors import ConfigError, term

# Resamples per block. Per-block arrays are (block x items): 20 x 100k x 8 bytes = 16 MB stays
# under glibc's 32 MB mmap threshold, so buffers are reused instead of page-faulted in each time.
BLOCK = 20


class Resampling(TypedDict):
    """The bootstrap keywords the metrics take, passed on together (``f(..., **options)``)."""

    n_resamples: int
    seed: int
    confidence: float


@dataclass(frozen=True)
class GroupBootstrap:
    n_groups: int
    n_resamples: int = 1000
    seed: int = 0

    def blocks(self) -> Iterator[np.ndarray]:
        """Yield ``(b, n_groups)`` float count matrices, ``n_resamples`` rows in total."""
        for block, start in enumerate(range(0, self.n_resamples, BLOCK)):
            size = min(BLOCK, self.n_resamples - start)
            rng = np.random.default_rng([self.seed, block])
            drawn = rng.integers(0, self.n_groups, size=(size, self.n_groups))
            offsets = (np.arange(size) * self.n_groups)[:, None]
            counts = np.bincount((drawn + offsets).ravel(), minlength=size * self.n_groups)
            yield counts.reshape(size, self.n_groups).astype(float)

    def replicate(self, statistic) -> np.ndarray | None:
        """Apply ``statistic(counts) -> (b,) or (b, k)`` to every block and stack the results
        (None when no resample is asked for).

        Blocks run on a thread per core: the work is numpy calls that release the GIL. Each runs under the
        caller's ``np.errstate`` (threads do not inherit it: a resample that leaves a system without units
        printed "invalid value encountered in divide" though the caller had silenced it).
        """
        if self.n_resamples <= 0:
            return None
        settings = np.geterr()

        def under_callers_errstate(counts: np.ndarray) -> np.ndarray:
            with np.errstate(**settings):
                return np.asarray(statistic(counts))

        # The products here are small (block x groups x cells): a multi-threaded BLAS spends more
        # time waking threads than multiplying, and stalls badly when the cores are busy.
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(_workers()) as pool:
            return np.concatenate(list(pool.map(under_callers_errstate, self.blocks())))


def _workers() -> int:
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def group_codes(groups) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..G-1 for group labels (by their text, in sorted order), and the labels in code order.

    Coded from the Python strings (a dict of them): a numpy array of ``str`` would make every row as
    wide as the longest label, and one label of 2 million characters among 20,000 rows asked for
    149 GiB. The one way names and ids (groups, systems, clusters, strata) become integers. (Not
    pandas.factorize: the same codes, without a second of importing pandas for every command.)"""
    text = [str(group) for group in groups]
    labels = np.empty(len(set(text)), dtype=object)
    labels[:] = sorted(set(text))
    position = {label: k for k, label in enumerate(labels)}
    return np.fromiter((position[t] for t in text), dtype=np.intp, count=len(text)), labels


def min_resamples(confidence: float) -> int:
    """The fewest resamples a percentile interval at ``confidence`` is defined from: one beyond each of
    its bounds, (B + 1) (1 - confidence) / 2 >= 1 (Davison & Hinkley 1997, section 5.2): 39 at 95%, 199 at
    99%. Fewer leave the extremes of a handful of draws (2-5 resamples gave intervals 5 times too narrow)."""
    if not 1 - confidence > 0:  # 1 - 1e-300 is 1: a coverage of 1 has no percentile interval
        raise ConfigError(f"a confidence of {confidence!r} (an error rate of {1 - confidence:g}) leaves no interval: "
                          "give an error rate of 1e-12 or more")
    return math.ceil(round(2 / (1 - confidence), 9)) - 1


def check_resamples(n_resamples: int, confidence: float, option: str = "n_resamples") -> None:
    """A ConfigError unless ``n_resamples`` (given as ``option``) can give a percentile interval at ``confidence``."""
    fewest = min_resamples(confidence)
    if n_resamples < fewest:
        raise ConfigError(f"{n_resamples} resample(s) ({term(option)}): a {confidence * 100:g}% percentile interval "
                          f"needs at least {fewest} (one beyond each of its bounds); give {fewest} or more (1000 by default)")


def percentile_ci(resamples: np.ndarray | None, confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval over the finite replicates (a resample can hit a constant sample)."""
    if resamples is None or len(resamples) == 0:
        return None
    finite = resamples[np.isfinite(resamples)]
    if len(finite) == 0:
        return (float("nan"), float("nan"))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(finite, [tail, 100 - tail])
    return (float(lo), float(hi))


def two_sided_p_value(differences: np.ndarray) -> float:
    """Bootstrap p-value for "no difference": twice the smaller tail mass at 0, add-one smoothed."""
    finite = differences[np.isfinite(differences)]
    if len(finite) == 0:
        return float("nan")
    below = (1 + np.sum(finite <= 0)) / (len(finite) + 1)
    above = (1 + np.sum(finite >= 0)) / (len(finite) + 1)
    return float(min(1.0, 2 * min(below, above)))
