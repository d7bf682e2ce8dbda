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
    low, high = _bounds(y, 1 - confidence, population, anytime, truncation)
    return BettingInterval(lo + (hi - lo) * low[-1], lo + (hi - lo) * high[-1], len(y), population, confidence,
                           anytime)


def confidence_sequence(x, scale: tuple[float, float], *, confidence: float = 0.95, population: int | None = None,
                        truncation: float = TRUNCATION) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds after each observation (running intersection): with probability at
    least ``confidence`` the mean lies inside every one of them at once."""
    lo, hi = _check_scale(scale)
    y = _unit(x, lo, hi)
    _check_population(len(y), population)
    low, high = _bounds(y, 1 - confidence, population, True, truncation, every_time=True)
    return lo + (hi - lo) * low, lo + (hi - lo) * high


class RunningSequence:
    """:func:`confidence_sequence`'s latest bounds, kept up to date one observation at a time.

    A labelling session asks for the bounds after every label; recomputing the whole sequence each
    time costs O(n^2) (a refinement at every past time): 4 s at 2,000 labels. Here every candidate
    mean's capital moves on by one step per observation: the grid's, and those of the two fine grids
    that refine the ends. A fine grid is rebuilt over all the observations (O(REFINE x n)) only when
    its end moves to another grid cell, which the kept set, only ever shrinking, does rarely. The
    arithmetic is the batch's, in the same order, so the bounds equal ``confidence_sequence``'s last.
    """

    def __init__(self, scale: tuple[float, float], *, confidence: float = 0.95, population: int | None = None,
                 truncation: float = TRUNCATION):
        self.lo, self.hi = _check_scale(scale)
        self.alpha, self.population, self.truncation = 1 - confidence, population, truncation
        _check_population(0, population)
        self._y: list[float] = []
        self._sum = 0.0  # of the observations so far, added up in order (as np.cumsum does)
        self._grid = _Capitals(np.linspace(0.0, 1.0, GRID + 1), population, truncation)
        self._fine: dict[bool, tuple[int, _Capitals]] = {}  # lower end? -> (its grid cell, the fine grid's capitals)
        self._bounds: tuple[float, float] | None = (self.lo, self.hi)

    def __len__(self) -> int:
        return len(self._y)

    def add(self, x: float) -> None:
        y = float(_unit([x], self.lo, self.hi)[0])
        _check_population(len(self._y) + 1, self.population)
        drawn_sum = self._sum
        self._y.append(y)
        self._sum += y
        bet = float(_bets(np.asarray(self._y), self.alpha, len(self._y), True)[-1])  # O(n), microseconds
        for capitals in (self._grid, *(fine for _, fine in self._fine.values())):
            capitals.advance(y, bet, drawn_sum, len(self._y) - 1)
        self._bounds = None

    def bounds(self) -> tuple[float, float]:
        """(low, high) on the data's scale after the observations so far (the whole scale before any)."""
        if self._bounds is None:
            low, high = self._ends()
            if self.population is not None:  # what the drawn units alone pin down
                drawn, total = len(self._y), self._sum
                low, high = max(low, total / self.population), min(high, 1 - (drawn - total) / self.population)
            self._bounds = self.lo + (self.hi - self.lo) * low, self.lo + (self.hi - self.lo) * high
        return self._bounds

    def _ends(self) -> tuple[float, float]:
        """As ``_ends``: the smallest and largest kept mean, each refined between its grid neighbours."""
        grid = self._grid.means
        where = np.flatnonzero(self._grid.kept(self.alpha))
        if len(where) == 0:
            return 0.0, 1.0
        first, last = where[0], where[-1]
        low = grid[first] if first == 0 else self._refined(True, first - 1)
        high = grid[last] if last == len(grid) - 1 else self._refined(False, last)
        return low, high

    def _refined(self, lower: bool, cell: int) -> float:
        """As ``_refine`` between grid points ``cell`` and ``cell + 1``."""
        if self._fine.get(lower, (None,))[0] != cell:
            fine = np.linspace(self._grid.means[cell], self._grid.means[cell + 1], REFINE + 1)
            y = np.asarray(self._y)
            self._fine[lower] = (cell, _Capitals.replayed(fine, y, _bets(y, self.alpha, len(y), True),
                                                          self.population, self.truncation))
        fine = self._fine[lower][1]
        where = np.flatnonzero(fine.kept(self.alpha))
        if len(where) == 0:
            return fine.means[-1] if lower else fine.means[0]
        if lower:
            return fine.means[max(where[0] - 1, 0)]
        return fine.means[min(where[-1] + 1, len(fine.means) - 1)]


class _Capitals:
    """The hedged log capitals of candidate means after the observations so far (``_log_capitals``'s
    last column), moved on one observation at a time."""

    def __init__(self, means: np.ndarray, population: int | None, truncation: float):
        self.means, self.population, self.truncation = means, population, truncation
        self.up, self.down = np.zeros(len(means)), np.zeros(len(means))
        self.best = np.full(len(means), -np.inf)  # the largest capital so far
        self.impossible = np.zeros(len(means), dtype=bool)

    @classmethod
    def replayed(cls, means, y, bets, population, truncation) -> _Capitals:
        """The capitals after every observation of ``y``, computed at once."""
        capitals = cls(means, population, truncation)
        if len(y):
            up, down, impossible = _log_capitals(y, means, bets, population, truncation)
            capitals.up, capitals.down, capitals.impossible = up[:, -1], down[:, -1], impossible[:, -1]
            capitals.best = _best_so_far(up, down, impossible)[:, -1]
        return capitals

    def advance(self, y: float, bet: float, drawn_sum: float, t: int) -> None:
        """One more observation ``y`` (the ``t``-th, from 0), after ``drawn_sum`` drawn before it."""
        m = self.means
        centre = m if self.population is None else (self.population * m - drawn_sum) / (self.population - t)
        self.impossible = self.impossible | (centre < 0) | (centre > 1)
        centre = np.clip(centre, 0.0, 1.0)
        deviation = y - centre
        with np.errstate(divide="ignore"):
            up = np.minimum(bet, self.truncation / centre)
            down = np.minimum(bet, self.truncation / (1 - centre))
        self.up = self.up + np.log1p(up * deviation)
        self.down = self.down + np.log1p(-down * deviation)
        self.best = np.maximum(self.best, np.where(self.impossible, np.inf, np.maximum(self.up, self.down)))

    def kept(self, alpha: float) -> np.ndarray:
        return self.best < math.log(2 / alpha)


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
def _bounds(y: np.ndarray, alpha: float, population: int | None, anytime: bool, truncation: float,
            every_time: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the unit scale, after the last observation (or after each: ``every_time``)."""
    n = len(y)
    if n == 0:
        return np.zeros(1), np.ones(1)
    bets = _bets(y, alpha, n, anytime)
    grid = np.linspace(0.0, 1.0, GRID + 1)
    kept = _kept(y, grid, bets, alpha, population, truncation)  # (G, n): m survived up to t
    times = range(n) if every_time else [n - 1]
    low, high = np.empty(len(times)), np.empty(len(times))
    for k, t in enumerate(times):
        low[k], high[k] = _ends(y[: t + 1], grid, kept[:, t], bets[: t + 1], alpha, population, truncation)
    if population is not None:  # what the drawn units alone already pin down (their sum over N)
        sums = np.cumsum(y)[list(times)]
        drawn = np.arange(1, n + 1)[list(times)]
        low = np.maximum(low, sums / population)
        high = np.minimum(high, 1 - (drawn - sums) / population)
    return low, high


def _ends(y, grid, kept, bets, alpha, population, truncation) -> tuple[float, float]:
    """The smallest and largest kept mean, each refined between its grid neighbours."""
    where = np.flatnonzero(kept)
    if len(where) == 0:  # every candidate rejected: only possible for a data set off the scale
        return 0.0, 1.0
    first, last = where[0], where[-1]
    low = grid[first] if first == 0 else _refine(y, grid[first - 1], grid[first], bets, alpha, population,
                                                 truncation, lower=True)
    high = grid[last] if last == len(grid) - 1 else _refine(y, grid[last], grid[last + 1], bets, alpha,
                                                           population, truncation, lower=False)
    return low, high


def _refine(y, a: float, b: float, bets, alpha, population, truncation, *, lower: bool) -> float:
    """Between a rejected and a kept grid point: the kept end, on a finer grid (conservative: the
    excluded neighbour of the first kept fine point)."""
    fine = np.linspace(a, b, REFINE + 1)
    kept = _kept(y, fine, bets, alpha, population, truncation)[:, -1]
    where = np.flatnonzero(kept)
    if len(where) == 0:
        return b if lower else a
    return fine[max(where[0] - 1, 0)] if lower else fine[min(where[-1] + 1, len(fine) - 1)]


def _bets(y: np.ndarray, alpha: float, n: int, anytime: bool) -> np.ndarray:
    """Predictable bets from the regularised running mean and variance before each observation."""
    t = np.arange(1, len(y) + 1)
    mean = (PRIOR_MEAN + np.cumsum(y)) / (t + 1)
    variance = (PRIOR_VARIANCE + np.cumsum((y - mean) ** 2)) / (t + 1)
    before = np.concatenate([[PRIOR_VARIANCE], variance[:-1]])
    rate = t * np.log1p(t) if anytime else np.full(len(y), float(n))
    return np.sqrt(2 * math.log(2 / alpha) / (rate * before))


def _kept(y, means, bets, alpha, population, truncation) -> np.ndarray:
    """(candidates, n): whether each candidate mean's hedged capital stayed below 1/alpha up to t."""
    # half the stake on each side: either capital reaching 2/alpha rejects
    return _running_log_capital(y, means, bets, population, truncation) < math.log(2 / alpha)


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
