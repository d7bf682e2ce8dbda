"""Which interval each system gets, by a rule fixed in advance, so that every printed interval
holds for *that* system, not on average over systems (docs/evaluate.md, "One interval per system").

Two constructions, chosen per system before looking at which is narrower:

* ``t``: Student's t with the system's own variance (never pooled with other systems') and its
  quantile taken at level ``1 - T_GUARD * alpha`` (0.97 for a 95% interval). On skewed, discrete
  rating populations the per-system t interval at 10-30 labels covered 0.93-0.95, not 0.95 (HANNA,
  six aspects, 2,000 draws per system), its misses all on the long tail's side; the guard costs 12-13%
  of width and brought every HANNA system to 0.949-0.968 (bench/bench_per_system.py).
* ``betting``: the betting interval for a bounded mean (judgelab.metrics.betting): valid at any
  number of labels, never zero-width, never off the scale; without replacement from the system's
  units for ``target="items"`` (exact for those units), with replacement for ``population``.
  Its price: a Markov-inequality guarantee is about 1.4x a normal interval's width at large n,
  and at a few labels it is as wide as the scale allows.

The rule (:func:`rule`): ``t`` when the system has at least :data:`T_MIN_LABELS` labelled units,
their mean lies at least :data:`T_MIN_MARGIN` labels' worth from the nearer end of the scale
(``n * min(mean - lo, hi - mean) / (hi - lo)``: a mean near an end is a skewed sample, where the t
interval fails: Topical-Chat's 0-1 understandability, mean 0.99, covered 0.20-0.43), and the labels
(or the judge's errors on them) show some spread; ``betting`` otherwise. Both constants were chosen
on HANNA and checked on Topical-Chat, TREC runs and Chatbot Arena (docs/benchmarks.md).
Without a known scale only the t interval exists: it is used and flagged.

Prediction-powered, by betting (``intervals="betting"``): the rectifier ``human - g`` (``g``: the
calibrated judge, clipped to the scale) is bounded, so its mean gets a betting interval shifted by
the known mean of ``g`` over the system's units (``items``). For ``population`` the mean of ``g`` is
itself estimated: a union bound gives it a fifth of the error rate (:data:`JUDGE_TERM_SHARE`). A
bounded-range guarantee cannot use a small error variance until the bets stop being capped, and the
rectifier's range is the scale's plus the judge's spread: where the rule sends a system to betting
(under 10 labels, or a mean near an end of the scale) the rectified interval was wider than the
labels' own in every cell measured (HANNA's 20 raters at 3-27 labels: 1.75 against 1.56 times the
per-system t width at 5%, Topical-Chat with UniEval, TREC runs at 9 queries: 1.93 against 1.32).
So under ``auto`` (and ``sequence``) a corrected estimate that falls to betting is the labels' own,
value and interval; the judge narrows the t intervals from 10 labels on.

Differences between systems (Holm's tests, rank intervals): two t systems keep the Welch/paired t
test (guarded the same way); a pair with a betting system uses each system's p-value curve over
the scale: ``p = min(1, 2 max_c min(p_s(c), p_t(c)))``, valid whatever the dependence between the
two (under the null they share a true value c, and each p-value is valid there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TypedDict

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError
from judgelab.metrics.betting import betting_interval, betting_pvalues

T_MIN_LABELS = 10
T_MIN_MARGIN = 2.0
T_GUARD = 0.6  # the t branch spends this share of the error rate (0.03 of a 95% interval's 0.05)
JUDGE_TERM_SHARE = 0.2  # population target, betting: the judge's mean over the units gets this share of alpha
CURVE_POINTS = 401  # p-value curves over the scale, for differences between systems
JUDGE_SPLITS = 41  # population target: values of the judge's mean tried when splitting a candidate value


@dataclass(frozen=True)
class IntervalKind:
    """One per-system interval construction, as ``per_system`` records it in ``info["per_system"]``.

    ``mark``: what ends its interval cells in the terminal and on the report page ("": none);
    ``betting``: a betting construction, whose differences with other systems are tested from the
    p-value curves (never Welch's t test, never max-t); ``needs_scale``: asking for it without the
    labels' scale is refused; ``description``: one line, for docs and help."""

    name: str
    mark: str
    betting: bool
    needs_scale: bool
    description: str


#: Every per-system interval kind, in the order the choices are listed (after ``auto``, the rule that
#: picks ``t`` or ``betting`` per system). A new kind: an entry here and its branch in :func:`per_system`;
#: tests/unit/test_interval_kinds.py then checks it like the others.
KINDS: dict[str, IntervalKind] = {kind.name: kind for kind in (
    IntervalKind("betting", "b", betting=True, needs_scale=True,
                 description="a betting interval: valid at any number of labels, wider"),
    IntervalKind("t", "", betting=False, needs_scale=False,
                 description="the design-based t interval, its quantile guarded to 97% for a 95% interval"),
    IntervalKind("sequence", "s", betting=True, needs_scale=True,
                 description="a confidence sequence: valid however many labels were taken, in the order given"),
)}
AUTO = "auto"
INTERVALS = (AUTO, *KINDS)
BETTING_KINDS = tuple(name for name, kind in KINDS.items() if kind.betting)  # tested from their p-value curves


def is_betting(name: str | None) -> bool:
    """Whether a per-system kind (``info["per_system"]``, or an ``intervals`` choice) is a betting construction."""
    kind = KINDS.get(name) if name is not None else None
    return kind is not None and kind.betting


def needs_scale(name: str) -> bool:
    """Whether the ``intervals`` choice ``name`` needs the labels' scale (``auto`` does not: it falls to t)."""
    kind = KINDS.get(name)
    return kind is not None and kind.needs_scale


def mark_of(name: str | None) -> str:
    """What ends an interval cell of kind ``name`` in the terminal and on the page ("": no mark)."""
    kind = KINDS.get(name) if name is not None else None
    return kind.mark if kind is not None else ""


class _BetOptions(TypedDict):
    """The keywords a system's betting interval and its p-value curve share (``f(..., **options)``)."""

    confidence: float
    population: int | None
    order_seed: int | None
    anytime: bool


class Curves:
    """Each system's p-value of "its value is c", for every c of ``grid`` (rows: systems; NaN: none),
    computed when first asked for: only differences between systems need them."""

    def __init__(self, grid: np.ndarray, makers: list[Callable[[], np.ndarray] | None]):
        self.grid = grid
        self._makers = makers

    def taking(self, other: Curves, where: np.ndarray) -> Curves:
        """These curves, with ``other``'s for the systems ``where`` marks (same grid)."""
        return Curves(self.grid, [theirs if take else mine
                                  for mine, theirs, take in zip(self._makers, other._makers, where, strict=True)])

    @cached_property
    def pvalue(self) -> np.ndarray:
        out = np.full((len(self._makers), len(self.grid)), np.nan)
        for s, make in enumerate(self._makers):
            if make is not None:
                out[s] = make()
        return out


def rule(labels: np.ndarray, scale: tuple[float, float] | None, spread: bool) -> str:
    """``t`` or ``betting`` for one system's labelled values (see the module docstring)."""
    if scale is None:
        return "t"
    n = len(labels)
    if n < T_MIN_LABELS or not spread:
        return "betting"
    lo, hi = scale
    mean = float(np.mean(labels))
    margin = n * min(mean - lo, hi - mean) / (hi - lo)
    return "t" if margin >= T_MIN_MARGIN else "betting"


def guarded_t(value: float, se: float, df: float, confidence: float) -> tuple[float, float]:
    """The t branch's interval: Student's t at level ``1 - T_GUARD * alpha``."""
    half = stats.t.ppf(1 - T_GUARD * (1 - confidence) / 2, max(df, 1.0)) * se
    return value - half, value + half


def t_curve(grid: np.ndarray, value: float, se: float, df: float) -> np.ndarray:
    """p-values of the guarded t test of "the value is c" (the guard divides them by T_GUARD)."""
    if not (se > 0 and np.isfinite(value)):
        return np.where(np.isclose(grid, value), 1.0, 0.0)
    return np.minimum(1.0, 2 * stats.t.sf(np.abs(value - grid) / se, max(df, 1.0)) / T_GUARD)


@dataclass(frozen=True)
class Bet:
    """One system's betting interval, the point value it is centred on, and how to get its p-value curve."""

    value: float
    low: float
    high: float
    curve: Callable[[], np.ndarray]


def human_bet(labels: np.ndarray, scale: tuple[float, float], population: int | None, grid: np.ndarray,
              confidence: float, seed: int | None, anytime: bool = False) -> Bet:
    """The labels' own betting interval (``population``: sampled without replacement from that many).
    ``seed``: shuffle the labels first (a sample drawn at once); None with ``anytime``: they are in the
    order they were collected, and the interval is the confidence sequence's, valid however the
    labelling was stopped."""
    options: _BetOptions = {"confidence": confidence, "population": population, "order_seed": seed,
                            "anytime": anytime}
    interval = betting_interval(labels, scale, **options)
    return Bet(float(np.mean(labels)), interval.low, interval.high,
               lambda: betting_pvalues(labels, scale, grid, **options))


def rectified_bet(labels: np.ndarray, predicted_labelled: np.ndarray, predicted_all: np.ndarray,
                  scale: tuple[float, float], population: bool, grid: np.ndarray, confidence: float,
                  seed: int | None, anytime: bool = False) -> Bet:
    """Prediction-powered betting: the rectifier's interval plus the predictions' mean over every unit
    (``population``: that mean is estimated too, at :data:`JUDGE_TERM_SHARE` of the error rate; it is
    known before any label, so only the rectifier's part is sequential with ``anytime``)."""
    lo, hi = scale
    g_all = np.clip(predicted_all, lo, hi)
    residual = labels - np.clip(predicted_labelled, lo, hi)
    bounds = (lo - float(g_all.max()), hi - float(g_all.min()))
    shift = float(g_all.mean())
    value = shift + float(residual.mean())
    if not population:  # items: the predictions' mean over the system's units is known exactly
        options: _BetOptions = {"confidence": confidence, "population": len(g_all), "order_seed": seed,
                                "anytime": anytime}
        interval = betting_interval(residual, bounds, **options)
        return Bet(value, max(lo, interval.low + shift), min(hi, interval.high + shift),
                   lambda: betting_pvalues(residual, bounds, grid - shift, **options))
    # population: theta = E[g] + E[human - g], each with its own betting interval; a union bound joins them
    alpha, share = 1 - confidence, JUDGE_TERM_SHARE
    judge_mean = betting_interval(g_all, scale, confidence=1 - share * alpha, order_seed=seed or 0)
    rest = betting_interval(residual, bounds, confidence=1 - (1 - share) * alpha, order_seed=seed, anytime=anytime)
    return Bet(value, max(lo, judge_mean.low + rest.low), min(hi, judge_mean.high + rest.high),
               partial(_population_curve, residual, bounds, g_all, scale, grid, confidence, seed, anytime))


def _population_curve(residual, bounds, g_all, scale, grid, confidence, seed, anytime) -> np.ndarray:
    """The p-value of theta = c under the union bound of :func:`rectified_bet`: the best split c = c_g +
    c_r of the two tests, each at its share of alpha ({c: p(c) > alpha} is the sum of the two intervals)."""
    alpha, share = 1 - confidence, JUDGE_TERM_SHARE
    # the judge's mean over many units is known to a narrow interval: splits outside a very wide one
    # (level 1 - alpha / 1000) cannot carry a p-value above alpha / 1000, so they are not tried
    wide = betting_interval(g_all, scale, confidence=1 - share * alpha / 1000, order_seed=seed or 0)
    judge_grid = np.linspace(wide.low, wide.high, JUDGE_SPLITS)
    p_judge = betting_pvalues(g_all, scale, judge_grid, confidence=1 - share * alpha, order_seed=seed or 0)
    offsets = grid[:, None] - judge_grid[None, :]
    p_rest = betting_pvalues(residual, bounds, offsets.ravel(), confidence=1 - (1 - share) * alpha,
                             order_seed=seed, anytime=anytime).reshape(offsets.shape)
    return np.minimum(1.0, np.max(np.minimum(p_judge[None, :] / share, p_rest / (1 - share)), axis=1))


def _interval_from(curve: np.ndarray, grid: np.ndarray, alpha: float) -> tuple[float, float]:
    """The grid points whose p-value exceeds alpha, widened by one grid step (conservative)."""
    kept = np.flatnonzero(curve > alpha)
    if len(kept) == 0:
        return float(grid[0]), float(grid[-1])
    step = grid[1] - grid[0]
    return float(grid[kept[0]] - step), float(grid[kept[-1]] + step)


def difference_pvalue(curve_s: np.ndarray, curve_t: np.ndarray) -> float:
    """p-value of "systems s and t have the same value" from their p-value curves (module docstring)."""
    return float(min(1.0, 2 * np.max(np.minimum(curve_s, curve_t))))


def difference_interval(curve_s: np.ndarray, curve_t: np.ndarray, grid: np.ndarray,
                        alpha: float) -> tuple[float, float]:
    """``value_s - value_t``: each system's interval at ``alpha / 2`` (from its curve), subtracted."""
    low_s, high_s = _interval_from(curve_s, grid, alpha / 2)
    low_t, high_t = _interval_from(curve_t, grid, alpha / 2)
    return low_s - high_t, high_s - low_t


def curve_grid(scale: tuple[float, float]) -> np.ndarray:
    return np.linspace(scale[0], scale[1], CURVE_POINTS)


@dataclass(frozen=True)
class Sample:
    """One system's labelled values and, for a prediction-powered estimate, the calibrated judge's
    values on those units and on all of the system's units (``predicted_*``; None: human-only).
    ``population``: units the labels were drawn from without replacement (``target="items"``);
    None: draws from a population (``target="population"``)."""

    labels: np.ndarray
    predicted_labelled: np.ndarray | None = None
    predicted_all: np.ndarray | None = None
    population: int | None = None


@dataclass(frozen=True)
class Chosen:
    """Per system: the value, the interval, the construction (None: no interval) and the curves."""

    value: np.ndarray
    ci: np.ndarray
    methods: tuple[str | None, ...]
    curves: Curves | None


def per_system(samples: Sequence[Sample | None], value: np.ndarray, ci: np.ndarray, se: np.ndarray, df: np.ndarray,
               scale: tuple[float, float] | None, confidence: float, intervals: str, uniform: bool,
               seed: int) -> Chosen:
    """Each system's interval by :func:`rule` (``intervals="betting"``: always betting). ``value``/``se``/
    ``df``: the design-based estimate and its standard error and degrees of freedom per system, which the
    t branch uses; ``ci``: the intervals to start from (kept where no construction applies). Units
    drawn with unequal probabilities (``uniform`` False) keep the t branch: a betting interval needs
    the labelled units to be a uniform draw from the system's."""
    if intervals == "sequence" and not uniform:
        raise ConfigError("confidence sequences need labels drawn uniformly within each system: this design drew "
                          "them with unequal probabilities (judgelab sample --active)")
    grid = curve_grid(scale) if scale is not None else None
    value, ci = value.copy(), ci.copy()
    methods: list[str | None] = [None] * len(value)
    makers: list[Callable[[], np.ndarray] | None] = [None] * len(value)
    for s, sample in enumerate(samples):
        if sample is None or len(sample.labels) == 0:
            continue
        spread = bool(se[s] > 0)
        sequential = intervals == "sequence"
        method = "t" if not uniform else ("betting" if is_betting(intervals) else rule(sample.labels, scale, spread))
        if method == "t":
            if not (spread and np.isfinite(value[s]) and len(sample.labels) >= 2):
                continue  # no spread and no scale: no interval
            methods[s], ci[s] = "t", guarded_t(value[s], se[s], df[s], confidence)
            if grid is not None:
                makers[s] = partial(t_curve, grid, value[s], se[s], df[s])
            continue
        # a sample drawn at once is shuffled (reproducibly); a sequence keeps the order it was labelled in
        if scale is None or grid is None:  # intervals="betting"/"sequence" without a scale, which the callers
            # refuse: the TypeError betting_interval's scale (or rectified_bet's unpacking of it) would raise
            raise TypeError("a betting interval needs the labels' scale")
        order = None if sequential else int(np.random.default_rng([seed, s]).integers(2 ** 31))
        # the prediction-powered form only when asked for (intervals="betting"): with the few labels or the
        # skewed ones that send a system here, the rectifier's range cost more than its variance saved
        if sample.predicted_all is None or intervals != "betting":
            bet = human_bet(sample.labels, scale, sample.population, grid, confidence, order, sequential)
        else:
            if sample.predicted_labelled is None:  # given with predicted_all: the TypeError np.clip(None) would raise
                raise TypeError("a prediction-powered sample needs the predictions on its labelled units")
            bet = rectified_bet(sample.labels, sample.predicted_labelled, sample.predicted_all, scale,
                                sample.population is None, grid, confidence, order, sequential)
        methods[s], value[s], ci[s], makers[s] = ("sequence" if sequential else "betting", bet.value,
                                                   (bet.low, bet.high), bet.curve)
    if scale is not None:  # the value lies on the scale: an estimate or a bound off it is never nearer the truth
        value, ci = np.clip(value, *scale), np.clip(ci, *scale)
    return Chosen(value, ci, tuple(methods), Curves(grid, makers) if grid is not None else None)
