"""Confidence intervals and confidence sequences for bounded means, by betting.

Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting" (JRSS-B 2024):
for a candidate mean ``m`` a gambler bets on each observation's deviation from ``m``; if ``m``
is the true mean the gambler's capital is a nonnegative martingale, so by Ville's inequality it
exceeds ``1/alpha`` with probability at most ``alpha`` at *any* time. The interval is every ``m``
whose capital stayed below ``1/alpha``. It needs no normality, never has zero width, never leaves
the scale, and holds at any sample size; with ``anytime=True`` (bets that do not assume a final
sample size) it holds simultaneously over every sample size, so a user may look after every label
and stop when the answer is clear (a confidence sequence).

* Hedged capital (their section 4.3): the larger of a capital betting that the mean is above
  ``m`` and one betting it is below, half the stake each; bets ``lambda_t = sqrt(2 log(2/alpha) /
  (n sigma_{t-1}^2))`` from the observations before ``t`` (regularised: one fake observation of
  mean 1/2 and variance 1/4 on the unit scale), truncated at ``c / m`` and ``c / (1 - m)`` (``c``:
  ``truncation``, 0.9) so a single observation cannot ruin the gambler. ``anytime``: ``n`` becomes
  ``t log(1 + t)`` (their predictable-mixture rate).
* Without replacement (their section 6): a finite population of ``population`` units, sampled
  without replacement in a random order. The mean of what remains after ``t - 1`` draws is known
  under the null, ``(N m - S_{t-1}) / (N - t + 1)``, and the bets are on deviations from it; with
  every unit drawn the interval is the exact mean. This is what makes ``target="items"`` exact.

The intervals are computed on a grid of candidate means (as the authors' ``confseq`` package
does; tests/unit/test_metrics_betting.py checks ours against it on the same inputs), refined
around each end so that the ends are resolved to ``1e-4`` of the scale at 400 + 2 x 40 grid points.

Why not confseq itself: it needs NumPy < 2 and a C++ build against Boost, and it loops over the
grid in Python (about 0.4 s per interval); a leaderboard needs thousands.

Prediction-powered form: with a judge's predictions ``g`` known for every unit, the rectifier
``h - g`` is bounded too (``[lo - max g, hi - min g]``), so its mean over the population has a
betting interval, and the human mean is that plus the known mean of ``g`` (:func:`rectified_interval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TRUNCATION = 0.9  # the bet's cap as a share of the largest safe bet (WSR's c; their 1/2 made intervals 10-20%
#                    wider at 7-13 ratings per system on HANNA, 0.9 and 0.99 within 4% of each other)
GRID = 400  # candidate means on the coarse grid (unit scale)
REFINE = 40  # candidate means between the last excluded and the first kept one, at each end
PRIOR_MEAN, PRIOR_VARIANCE = 0.5, 0.25  # one fake observation regularising the bets' plug-ins


@dataclass(frozen=True)
class BettingInterval:
    """``low``/``high`` on the data's scale; ``n`` observations; ``population`` (None: with replacement)."""

    low: float
    high: float
    n: int
    population: int | None
    confidence: float
    anytime: bool

    @property
    def width(self) -> float:
        return self.high - self.low


def betting_interval(x, scale: tuple[float, float], *, confidence: float = 0.95, population: int | None = None,
                     anytime: bool = False, truncation: float = TRUNCATION, order_seed: int | None = None
                     ) -> BettingInterval:
    """A ``confidence`` interval for the mean of ``x``'s population, whose values lie in ``scale``.

    ``x`` in the order it was drawn (a random order: a sample drawn at once and then sorted, by id
    say, must be shuffled first; ``order_seed`` does it reproducibly). ``population``: the number
    of units sampled without replacement (the mean of exactly those); None: independent draws.
    ``anytime``: a confidence sequence's bets, valid however the sample size was chosen (also
    after looking at the data). No observation: the whole scale.
    """
    lo, hi = _check_scale(scale)
    y = _unit(x, lo, hi)
    _check_population(len(y), population)
    if order_seed is not None:
        y = np.random.default_rng(order_seed).permutation(y)
    sequence = RunningSequence((0.0, 1.0), confidence=confidence, population=population, truncation=truncation,
                               size=None if anytime else len(y))
    for _ in sequence._move_on(y):  # the last refined bounds only: no coarse bounds after each observation
        pass
    low, high = sequence.bounds()
    return BettingInterval(lo + (hi - lo) * low, lo + (hi - lo) * high, len(y), population, confidence, anytime)


def confidence_sequence(x, scale: tuple[float, float], *, confidence: float = 0.95, population: int | None = None,
                        truncation: float = TRUNCATION) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds after each observation (running intersection): with probability at
    least ``confidence`` the mean lies inside every one of them at once."""
    lo, hi = _check_scale(scale)
    y = _unit(x, lo, hi)
    _check_population(len(y), population)
    if len(y) == 0:
        return np.array([lo]), np.array([hi])
    sequence = RunningSequence((0.0, 1.0), confidence=confidence, population=population, truncation=truncation)
    low, high = np.empty(len(y)), np.empty(len(y))
    for t, value in enumerate(y):  # the refined bounds at every step: each refinement is kept up to date, not redone
        sequence.add(value)
        low[t], high[t] = sequence.bounds()
    return lo + (hi - lo) * low, lo + (hi - lo) * high


class RunningSequence:
    """:func:`confidence_sequence`'s latest bounds, kept up to date as observations arrive.

    A labelling session asks for the bounds after every label, and a production log (``evaluate
    --monitor``) brings hundreds of thousands of outputs; recomputing the whole sequence each time costs
    O(n^2) (a refinement at every past time): 4 s at 2,000 labels. Here every candidate mean's capital
    moves on with each observation, in blocks of ``CHUNK`` (memory: candidates x CHUNK): the grid's, and
    those of the two fine grids that refine the ends. A fine grid is rebuilt over all the observations
    (O(REFINE x n), in blocks) only when its end moves to another grid cell, which the kept set, only ever
    shrinking, does rarely. The bets come from running sums carried along, added in order (running sums are
    continued, not restarted), so the bounds do not depend on how the observations were split into blocks.
    :func:`betting_interval` and :func:`confidence_sequence` are computed with it. ``size``: the bets of a
    fixed sample of that size (``betting_interval``'s, valid at that size only); None: anytime bets.
    """

    def __init__(self, scale: tuple[float, float], *, confidence: float = 0.95, population: int | None = None,
                 truncation: float = TRUNCATION, size: int | None = None):
        self.lo, self.hi = _check_scale(scale)
        self.alpha, self.population, self.truncation = 1 - confidence, population, truncation
        _check_population(0, population)
        # the blocks moved on so far: (observations on the unit scale, their bets, the sum drawn before each),
        # kept to replay a fine grid when an end moves to another cell
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._n = 0
        self._bets = _BetState(self.alpha, size)
        self._grid = _Capitals(np.linspace(0.0, 1.0, GRID + 1), self.alpha, population, truncation)
        self._fine: dict[bool, tuple[int, _Capitals]] = {}  # lower end? -> (its grid cell, the fine grid's capitals)
        self._bounds: tuple[float, float] | None = (self.lo, self.hi)

    def __len__(self) -> int:
        return self._n

    def extend(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Move on by the observations ``x``; returns bounds after each of them on the data's scale, from the
        coarse grid alone (its excluded neighbours of the kept set: never narrower than the refined bounds
        :meth:`bounds` gives, wider by at most a grid cell, 1/GRID of the scale), which is what a watcher
        needs at every step without paying for a refinement at each."""
        lows, highs = [], []
        for part, drawn, rows, kept in self._move_on(x):
            low, high = _coarse_ends(self._grid.means, rows, kept)
            if self.population is not None:
                sums, taken = drawn + part, self._n - len(part) + np.arange(1, len(part) + 1)
                low, high = np.maximum(low, sums / self.population), np.minimum(high, 1 - (taken - sums) / self.population)
            lows.append(low)
            highs.append(high)
        scale = self.hi - self.lo
        return (self.lo + scale * np.concatenate(lows or [np.empty(0)]),
                self.lo + scale * np.concatenate(highs or [np.empty(0)]))

    def add(self, x: float) -> None:
        """One more observation (its coarse bounds are not computed: :meth:`bounds` gives the refined ones)."""
        for _ in self._move_on([x]):
            pass

    def _move_on(self, x):
        """Each block of ``x`` moved on: (its observations on the unit scale, the sum drawn before each, the grid's
        candidates not rejected before the block, whether each was kept after each observation)."""
        y = _unit(x, self.lo, self.hi)
        _check_population(self._n + len(y), self.population)
        self._bounds = None
        for start in range(0, len(y), CHUNK):
            part = y[start:start + CHUNK]
            bets, drawn = self._bets.take(part)
            rows, kept = self._grid.advance(part, bets, drawn, self._n)
            for _, fine in self._fine.values():
                fine.advance(part, bets, drawn, self._n)
            self._blocks.append((part, bets, drawn))
            self._n += len(part)
            yield part, drawn, rows, kept

    def bounds(self) -> tuple[float, float]:
        """(low, high) on the data's scale after the observations so far (the whole scale before any)."""
        if self._bounds is None:
            low, high = self._ends()
            if self.population is not None:  # what the drawn units alone pin down
                drawn, total = self._n, self._bets.total
                low, high = max(low, total / self.population), min(high, 1 - (drawn - total) / self.population)
            self._bounds = self.lo + (self.hi - self.lo) * low, self.lo + (self.hi - self.lo) * high
        return self._bounds

    def _ends(self) -> tuple[float, float]:
        """The smallest and largest kept mean, each refined between its grid neighbours (every candidate
        rejected, only possible for data off the scale: the whole unit interval)."""
        grid = self._grid.means
        where = np.flatnonzero(self._grid.kept())
        if len(where) == 0:
            return 0.0, 1.0
        first, last = where[0], where[-1]
        low = grid[first] if first == 0 else self._refined(True, first - 1)
        high = grid[last] if last == len(grid) - 1 else self._refined(False, last)
        return low, high

    def _refined(self, lower: bool, cell: int) -> float:
        """Between grid points ``cell`` and ``cell + 1`` (one rejected, one kept): the kept end on a finer grid
        (conservative: the excluded neighbour of the first kept fine point)."""
        if self._fine.get(lower, (None,))[0] != cell:
            means = np.linspace(self._grid.means[cell], self._grid.means[cell + 1], REFINE + 1)
            capitals = _Capitals(means, self.alpha, self.population, self.truncation)
            done = 0
            for part, bets, drawn in self._blocks:  # the bets already taken, not taken again
                capitals.advance(part, bets, drawn, done)
                done += len(part)
            self._fine[lower] = (cell, capitals)
        fine = self._fine[lower][1]
        where = np.flatnonzero(fine.kept())
        if len(where) == 0:
            return fine.means[-1] if lower else fine.means[0]
        if lower:
            return fine.means[max(where[0] - 1, 0)]
        return fine.means[min(where[-1] + 1, len(fine.means) - 1)]


CHUNK = 2048  # observations a running sequence moves on at once: (candidates x CHUNK) arrays, 6.6 MB each


def _coarse_ends(grid: np.ndarray, rows: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``kept`` (``rows`` of the grid, increasing, x times; the other candidates rejected): the
    grid neighbours outside the kept set (the whole unit interval where nothing is kept, as ``_ends``)."""
    if len(rows) == 0:
        return np.zeros(kept.shape[1]), np.ones(kept.shape[1])
    any_kept = kept.any(axis=0)
    first = rows[np.argmax(kept, axis=0)]
    last = rows[len(rows) - 1 - np.argmax(kept[::-1], axis=0)]
    low = np.where(any_kept, grid[np.maximum(first - 1, 0)], 0.0)
    high = np.where(any_kept, grid[np.minimum(last + 1, len(grid) - 1)], 1.0)
    return low, high


def _running_sum(start, steps: np.ndarray) -> np.ndarray:
    """``start`` plus the running sum of ``steps`` along the last axis, added in order from ``start`` (so a
    sum continued block by block is the one np.cumsum gives over the whole, bit for bit)."""
    start = np.asarray(start, dtype=float)
    if not start.any():  # from zero (every first block): the same sums without the copy
        return np.cumsum(steps, axis=-1)
    joined = np.concatenate([start[..., None], steps], axis=-1)
    return np.cumsum(joined, axis=-1)[..., 1:]


class _BetState:
    """:func:`_bets`'s running sums, carried from one block of observations to the next; ``size``: the
    fixed sample size the bets assume (None: anytime)."""

    def __init__(self, alpha: float, size: int | None = None):
        self.alpha, self.size, self.n = alpha, size, 0
        self.total, self.squares, self.variance = 0.0, 0.0, PRIOR_VARIANCE

    def take(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bets on ``y`` (the next observations) and the sum drawn before each of them."""
        bets, sums, squares, variance = _bets_from(y, self.alpha, self.n, self.total, self.squares, self.variance,
                                                   self.size)
        drawn = np.concatenate([[self.total], sums[:-1]])
        self.n, self.total, self.squares, self.variance = self.n + len(y), sums[-1], squares, variance
        return bets, drawn


class _Capitals:
    """The hedged log capitals of candidate means after the observations so far (``_log_capitals``'s
    last column), moved on a block of observations at a time. A candidate once rejected (its capital past
    ``log(2 / alpha)``) stays rejected whatever comes, so it is no longer moved on: late in a long stream
    only the few candidates around the mean cost anything."""

    def __init__(self, means: np.ndarray, alpha: float, population: int | None, truncation: float):
        self.means, self.population, self.truncation = means, population, truncation
        self.threshold = math.log(2 / alpha)
        self.up, self.down = np.zeros(len(means)), np.zeros(len(means))
        self.best = np.full(len(means), -np.inf)  # the largest capital so far
        self.impossible = np.zeros(len(means), dtype=bool)
        self.alive = np.arange(len(means))  # the candidates not rejected yet

    def advance(self, y: np.ndarray, bets: np.ndarray, drawn: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Observations ``y``, the ``t``-th onward (from 0), with their bets and the sum drawn before each.
        Returns the candidates not rejected before them and whether each was still kept after each
        observation (those candidates x len(y)); the others are rejected throughout."""
        rows = self.alive
        m = self.means[rows, None]
        if self.population is None:
            centre = np.broadcast_to(m, (len(m), len(y)))
        else:  # the mean of the units not yet drawn, if the population's mean is m
            centre = (self.population * m - drawn[None, :]) / (self.population - (t + np.arange(len(y))))[None, :]
        impossible = None  # with replacement every candidate stays possible
        if self.population is not None:
            now = (centre < 0) | (centre > 1)
            impossible = np.logical_or.accumulate(np.concatenate([self.impossible[rows, None], now], axis=1),
                                                  axis=1)[:, 1:]
            centre = np.clip(centre, 0.0, 1.0)
        deviation = y[None, :] - centre
        with np.errstate(divide="ignore"):
            up = np.minimum(bets[None, :], self.truncation / centre)
            down = np.minimum(bets[None, :], self.truncation / (1 - centre))
        ups = _running_sum(self.up[rows], np.log1p(up * deviation))
        downs = _running_sum(self.down[rows], np.log1p(-down * deviation))
        capital = np.maximum(ups, downs) if impossible is None else np.where(impossible, np.inf, np.maximum(ups, downs))
        before = self.best[rows]
        if np.isneginf(before).all():  # nothing seen yet (every first block): the same maxima without the copy
            best = np.maximum.accumulate(capital, axis=1)
        else:
            best = np.maximum.accumulate(np.concatenate([before[:, None], capital], axis=1), axis=1)[:, 1:]
        self.up[rows], self.down[rows], self.best[rows] = ups[:, -1], downs[:, -1], best[:, -1]
        if impossible is not None:
            self.impossible[rows] = impossible[:, -1]
        self.alive = rows[best[:, -1] < self.threshold]
        return rows, best < self.threshold

    def kept(self) -> np.ndarray:
        return self.best < self.threshold


def rectified_interval(human, predicted_labelled, predicted_all, scale: tuple[float, float], *,
                       confidence: float = 0.95, population: int | None = None, anytime: bool = False,
                       order_seed: int | None = None) -> BettingInterval:
    """Prediction-powered betting interval for the human mean of a population whose every unit has
    a prediction (``predicted_all``; ``predicted_labelled``: those of the labelled units, aligned
    with ``human``). The rectifier ``human - predicted`` lies in ``[lo - max g, hi - min g]``; its
    mean gets a betting interval, shifted by the predictions' known mean.

    ``population`` None (the predictions are a sample too): the predictions' mean is only known to
    its own interval, so the two are combined by a union bound (each at half the error rate) by
    :func:`judgelab.evaluate.bounded` rather than here.
    """
    lo, hi = _check_scale(scale)
    g_all = np.asarray(predicted_all, dtype=float)
    g = np.asarray(predicted_labelled, dtype=float)
    if not (np.isfinite(g_all).all() and ((g_all >= lo) & (g_all <= hi)).all()):
        raise ValueError(f"predictions must be finite and inside the scale [{lo:g}, {hi:g}]")
    residual = np.asarray(human, dtype=float) - g
    bounds = (lo - float(g_all.max()), hi - float(g_all.min()))
    if bounds[1] <= bounds[0]:  # a constant prediction on a one-point scale: nothing to estimate
        bounds = (bounds[0], bounds[0] + 1e-12)
    inner = betting_interval(residual, bounds, confidence=confidence, population=population, anytime=anytime,
                             order_seed=order_seed)
    shift = float(g_all.mean())
    return BettingInterval(max(lo, inner.low + shift), min(hi, inner.high + shift), inner.n, population,
                           confidence, anytime)


def betting_pvalues(x, scale: tuple[float, float], means, *, confidence: float = 0.95,
                    population: int | None = None, anytime: bool = False, truncation: float = TRUNCATION,
                    order_seed: int | None = None) -> np.ndarray:
    """The p-value of "the mean is m" for each of ``means``: 2 / the largest hedged capital the
    gambler reached (capped at 1). Valid at every level; the bets are tuned for ``confidence``, so
    ``{m: p(m) > 1 - confidence}`` is :func:`betting_interval` (up to its grid)."""
    lo, hi = _check_scale(scale)
    y = _unit(x, lo, hi)
    _check_population(len(y), population)
    if order_seed is not None:
        y = np.random.default_rng(order_seed).permutation(y)
    m = (np.asarray(means, dtype=float) - lo) / (hi - lo)
    if len(y) == 0:
        return np.where((m >= 0) & (m <= 1), 1.0, 0.0)
    bets = _bets(y, 1 - confidence, len(y), anytime)
    inside = (m >= 0) & (m <= 1)
    capital = np.full(len(m), np.inf)
    if inside.any():
        capital[inside] = _running_log_capital(y, m[inside], bets, population, truncation)[:, -1]
    with np.errstate(over="ignore"):
        return np.minimum(1.0, 2 * np.exp(-capital))


# -- the computation ------------------------------------------------------------------------------------
def _bets(y: np.ndarray, alpha: float, n: int, anytime: bool) -> np.ndarray:
    """Predictable bets from the regularised running mean and variance before each observation."""
    return _bets_from(y, alpha, 0, 0.0, 0.0, PRIOR_VARIANCE, None if anytime else n)[0]


def _bets_from(y: np.ndarray, alpha: float, n_before: int, total: float, squares: float, variance_before: float,
               n: int | None = None) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The bets on ``y`` after ``n_before`` observations whose running sums were ``total`` and ``squares`` (and
    the regularised variance ``variance_before``); ``n``: a fixed sample size (None: anytime). Returns the
    bets, the running totals after each observation, and the sums to carry on."""
    t = n_before + np.arange(1, len(y) + 1)
    sums = _running_sum(total, y)
    mean = (PRIOR_MEAN + sums) / (t + 1)
    squared = _running_sum(squares, (y - mean) ** 2)
    variance = (PRIOR_VARIANCE + squared) / (t + 1)
    before = np.concatenate([[variance_before], variance[:-1]])
    rate = t * np.log1p(t) if n is None else np.full(len(y), float(n))
    return np.sqrt(2 * math.log(2 / alpha) / (rate * before)), sums, float(squared[-1]), float(variance[-1])


def _running_log_capital(y, means, bets, population, truncation) -> np.ndarray:
    """(candidates, n): the largest log capital of either side so far (inf where the mean is impossible)."""
    return _best_so_far(*_log_capitals(y, means, bets, population, truncation))


def _log_capitals(y, means, bets, population, truncation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(candidates, n) each: the log capital betting above and below each candidate up to t, and whether
    the candidate became impossible by t (the units not drawn yet could no longer average it)."""
    n = len(y)
    m = np.asarray(means, dtype=float)[:, None]
    if population is None:
        centre = np.broadcast_to(m, (len(m), n))
    else:  # the mean of the units not yet drawn, if the population's mean is m
        before = np.concatenate([[0.0], np.cumsum(y)[:-1]])
        centre = (population * m - before[None, :]) / (population - np.arange(n))[None, :]
    impossible = (centre < 0) | (centre > 1)
    centre = np.clip(centre, 0.0, 1.0)
    deviation = y[None, :] - centre
    with np.errstate(divide="ignore"):
        up = np.minimum(bets[None, :], truncation / centre)
        down = np.minimum(bets[None, :], truncation / (1 - centre))
    return (np.cumsum(np.log1p(up * deviation), axis=1), np.cumsum(np.log1p(-down * deviation), axis=1),
            np.logical_or.accumulate(impossible, axis=1))


def _best_so_far(up: np.ndarray, down: np.ndarray, impossible: np.ndarray) -> np.ndarray:
    capital = np.where(impossible, np.inf, np.maximum(up, down))
    return np.maximum.accumulate(capital, axis=1)


def _check_scale(scale) -> tuple[float, float]:
    lo, hi = (float(v) for v in scale)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"scale {scale!r}: give two finite numbers, low < high")
    return lo, hi


def _unit(x, lo: float, hi: float) -> np.ndarray:
    values = np.asarray(x, dtype=float).ravel()
    if not np.isfinite(values).all():
        raise ValueError("observations must be finite numbers")
    outside = (values < lo - 1e-9 * (hi - lo)) | (values > hi + 1e-9 * (hi - lo))
    if outside.any():
        raise ValueError(f"{int(outside.sum())} observation(s) fall outside the scale [{lo:g}, {hi:g}] "
                         f"(e.g. {values[outside][0]:g})")
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)


def _check_population(n: int, population: int | None) -> None:
    if population is not None and not (isinstance(population, (int, np.integer)) and population >= max(n, 1)):
        raise ValueError(f"population {population!r}: the number of units sampled from, at least the {n} drawn")


__all__ = ["BettingInterval", "RunningSequence", "betting_interval", "betting_pvalues", "confidence_sequence",
           "rectified_interval"]
