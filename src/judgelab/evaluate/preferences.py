"""Leaderboards from pairwise comparisons between systems: a judge's verdicts on all of them,
human verdicts on a random sample, and intervals and rank sets that hold (docs/pairwise.md).

The sample is uniform unless inclusion probabilities are given (``judgelab sample`` stratified by
pair of systems, or active): each label then weighs 1 / its probability, normalised over the
labels (Hajek), in every label-based estimator below; equal probabilities give the plain ones.

A comparison ``c`` shows system ``a[c]`` first and ``b[c]`` second; a verdict is a preference for
``a`` (1 = a wins, 0.5 = tie, 0 = b wins; several annotators average). Three estimands:

* ``win-prob``: the probability that a system wins a comparison it takes part in (ties half),
  averaged over the comparisons it took part in, as in PPR (Chatzi et al. 2024; the win
  probability against a uniformly drawn opponent when opponents are drawn uniformly);
* ``bradley-terry``: the strength ``beta`` with ``P(i beats j) = sigmoid(beta_i - beta_j)``
  (ties half a win; centred: the strengths sum to 0), from all comparisons at once;
* ``baseline-win-rate``: the win rate against one named system, over the comparisons with it
  (AlpacaEval's).

Each with three estimators (and ``shrunk``, below): ``judge`` (the judge's verdicts only: how precisely the judge's own
value is known, not the human one), ``human`` (the labelled comparisons only) and ``corrected``
(prediction-powered). For the two means the corrected estimate is PPI++ (Angelopoulos et al.
2023b): ``lambda * judge mean over every comparison + mean over the labelled ones of (human -
lambda * judge)``; for Bradley-Terry it solves the PPI-corrected estimating equation of the
M-estimator (Angelopoulos et al. 2023, "Prediction-powered inference"): the logistic score on the
judge's verdicts of every comparison times lambda, plus the labelled comparisons' score on the
human verdicts minus lambda times theirs on the judge's. Lambda ("power tuning") is one number
for all systems, the one that minimises the trace of the estimate's covariance (clipped to
[0, 1]): 0 ignores the judge, 1 is plain PPI. Whatever the judge's bias, the estimate is unbiased
(to first order), because the labelled comparisons are a random sample.

``shrunk`` (as for pointwise items, :func:`judgelab.evaluate.estimators.shrunk`): the corrected
estimates pulled toward what the judge's values predict for them (Fay-Herriot, hierarchical Bayes over
how far the judge's values can be trusted), more so where a system has few labels. It ranks systems better than the corrected estimate with few
labels (bench/bench_pairwise.py), at the price of a model: its intervals hold on average over
systems, and its rank sets carry no simultaneous guarantee. Which point ranking to trust, shrunk's or the corrected one, is
checked on the labels (:func:`recommend`: halves of the labelled comparisons, as
evaluate/choose.py does for items) and reported as ``recommended``.

Variances come from each estimate's linearisation (a comparison moves the two systems it
involves, in opposite directions), so differences between systems are paired automatically.
``target="population"``: comparisons like these; ``"items"``: exactly these comparisons (the value
all of them labelled by humans would give; a finite-population correction, what bench/ checks).

Rank sets: :mod:`judgelab.evaluate.rank_sets`; comparisons read from items and judgments:
:mod:`judgelab.evaluate.comparison_items`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, cast

import numpy as np
import numpy.typing as npt
from scipy import stats
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from judgelab.data.labels import PREFERENCES
from judgelab.errors import ConfigError, term
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.choose import SPLITS, Choice, choose_by_halves, kendall_tau_b, mean_scores
from judgelab.evaluate.compare import pairwise, ranks_of
from judgelab.evaluate.estimators import SystemEstimates, shrunk, shrunk_values
from judgelab.evaluate.guided import guided_ranking
from judgelab.evaluate.intervals import BETTING_KINDS, T_MIN_LABELS, Sample, guarded_t, is_betting, per_system
from judgelab.evaluate.intervals import INTERVALS as SYSTEM_INTERVALS
from judgelab.evaluate.panel import effective_labels, effective_per_system
from judgelab.evaluate.rank_sets import (  # noqa: F401  (also importable from here, as before)
    AUTO_MAX_T_LABELS,
    AUTO_MAX_T_SYSTEMS,
    RANK_METHODS,
    RankSets,
    rank_sets,
    resolved_method,
    sets_from,
    simultaneous_critical,
)
from judgelab.metrics.bootstrap import group_codes
from judgelab.metrics.bradley_terry import (
    fit_bradley_terry,
    fit_many,
    laplacian,
    laplacian_inverse,
    side_gram,
)
from judgelab.metrics.results import json_number

ESTIMANDS = ("win-prob", "bradley-terry", "baseline-win-rate")
# pairwise tests and rank sets hold k x k matrices for k systems (a ring of 1,000 systems: 34 s and 384 MB;
# 2,000: 106 s and 1.15 GB; 20,000 asked for 9.3 GB): more are refused when the comparisons are read
MAX_COMPARED_SYSTEMS = 1000
ESTIMATORS = ("judge", "human", "corrected")
TARGETS = ("population", "items")
MEASURES = {"win-prob": "win probability (ties half)", "bradley-terry": "Bradley-Terry strength (log-odds)",
            "baseline-win-rate": "win rate against {baseline} (ties half)"}
INTERVALS = ("sandwich", "bootstrap")
MIN_LABELS = 2
# shrunk's trend in the judge's values: the straight line, measured on Arena's 20 systems (bench_pairwise);
# the items' smooth curve (estimators.shrunk) was not, and its check would refit ~180 curves per evaluate
COMPARISONS_SHRINK_RULE = "posterior"
# fewer labelled comparisons per system and the percentile bootstrap of a label-based estimate undercovers
# badly (2 labels on Arena: an interval a fifth of the t one with 1 degree of freedom); the t intervals stay
MIN_BOOTSTRAP_LABELS = 30
BOOTSTRAP_CHUNK = 100  # resamples refitted together: (chunk, K, K) Hessians, 8 MB at K = 100
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


# -- which comparisons speak for which system ---------------------------------------------------------
@dataclass(frozen=True)
class _Sides:
    """Each comparison has an a-side and a b-side; a side counts for its system when ``in_a``/``in_b``."""

    k: int
    a: np.ndarray
    b: np.ndarray
    in_a: np.ndarray
    in_b: np.ndarray

    @classmethod
    def of(cls, data: Comparisons, baseline: int | None) -> _Sides:
        everywhere = np.ones(data.n, dtype=bool)
        if baseline is None:
            return cls(len(data.systems), data.a, data.b, everywhere, everywhere)
        return cls(len(data.systems), data.a, data.b, data.b == baseline, data.a == baseline)

    def means(self, preference: np.ndarray, rows: np.ndarray, offset: float = 1.0, weight: np.ndarray | None = None):
        """(per-system mean of the side scores over ``rows``, their counts, centred side values / total weight).

        A side's score is the preference for a on the a-side and ``offset - preference`` on the
        b-side (1 - p: the preference for b; for a residual h - lam j it is (1 - lam) - (h - lam j)).
        ``weight``: per-comparison weights (1 / inclusion probability) for a weighted (Hajek) mean."""
        wa, wb = self.in_a & rows, self.in_b & rows
        w = np.ones(len(preference)) if weight is None else weight
        score_b = offset - preference
        counts = np.bincount(self.a[wa], minlength=self.k) + np.bincount(self.b[wb], minlength=self.k)
        totals = np.bincount(self.a[wa], w[wa], self.k) + np.bincount(self.b[wb], w[wb], self.k)
        sums = (np.bincount(self.a[wa], (w * preference)[wa], self.k)
                + np.bincount(self.b[wb], (w * score_b)[wb], self.k))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(counts > 0, sums / np.where(totals > 0, totals, 1), np.nan)
        scale = 1 / np.where(totals > 0, totals, 1)
        va = np.where(wa, w * (preference - np.nan_to_num(mean)[self.a]) * scale[self.a], 0.0)
        vb = np.where(wb, w * (score_b - np.nan_to_num(mean)[self.b]) * scale[self.b], 0.0)
        return mean, counts, (va, vb)

    def gram(self, v, w=None) -> np.ndarray:
        """``sum_c v_c w_c^T`` symmetrised (``w`` None: ``v v^T``) for side vectors."""
        if w is None:
            return side_gram(self.k, self.a, self.b, *v)
        both = side_gram(self.k, self.a, self.b, v[0] + w[0], v[1] + w[1])
        return (both - self.gram(v) - self.gram(w)) / 2


# -- estimators of the two means ----------------------------------------------------------------------
def _mean_judge(data: Comparisons, sides: _Sides, confidence: float) -> SystemEstimates:
    rows = data.judged
    mean, counts, v = sides.means(np.nan_to_num(data.judge), rows)
    m = int(rows.sum())
    cov = m / max(m - 1, 1) * sides.gram(v)
    reason = [None if c > 0 else "no comparison with a verdict" for c in counts]
    return _estimates("judge", data, mean, cov, counts, np.zeros(sides.k, dtype=int), reason, confidence)


def _mean_labelled(data: Comparisons, sides: _Sides, lam: float | None, target: str, confidence: float,
                   name: str, system_intervals: str = "auto", seed: int = 0) -> SystemEstimates:
    """Human only (``lam`` 0) or corrected (``lam`` None: power-tuned); ``system_intervals``: as
    :func:`judgelab.evaluate.estimators.human_only`'s ``intervals``."""
    rows = data.labelled
    n = int(rows.sum())
    human = np.nan_to_num(data.human)
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    weight = data.shares()  # 1/n each for a uniform sample: the plain labelled mean
    human_mean, counts, v_human = sides.means(human, rows, weight=weight)
    if lam is None:
        _, _, v_judge = sides.means(judge, rows, weight=weight)
        lam = _tuned(sides.gram(v_human, v_judge), sides.gram(v_judge))
    everywhere = np.ones(data.n, dtype=bool)
    judge_all, all_counts, _ = sides.means(judge, everywhere)
    residual_mean, _, v_residual = sides.means(human - lam * judge, rows, offset=1 - lam, weight=weight)
    value = lam * np.nan_to_num(judge_all) + residual_mean
    fraction = n / data.n
    scale = n / max(n - 1, 1)
    cov = scale * (1 - fraction) * sides.gram(v_residual) if target == "items" else scale * (
        (1 - fraction) * sides.gram(v_residual) + fraction * sides.gram(v_human))
    reason = [None if c >= MIN_LABELS else f"{c} labelled comparison(s): an interval needs {MIN_LABELS}"
              for c in counts]
    estimates = _estimates(name, data, value, cov, all_counts, counts, reason, confidence)
    estimates.info.update(judge_weight=float(lam), target=target)
    if system_intervals == "t":
        return estimates
    return _per_system_means(estimates, data, sides, lam, judge, target, system_intervals, seed)


def _per_system_means(estimates: SystemEstimates, data: Comparisons, sides: _Sides, lam: float, judge: np.ndarray,
                      target: str, system_intervals: str, seed: int) -> SystemEstimates:
    """Each system's interval by the rule of :mod:`judgelab.evaluate.intervals`, from its side scores:
    its preference on the labelled comparisons it takes part in (the judge's, times lambda, on all of
    them). A uniform sample of comparisons is a uniform sample of each system's, so a betting interval
    without replacement from the system's comparisons holds for ``target="items"``."""
    samples = []
    for s in range(sides.k):
        own_a, own_b = sides.in_a & (sides.a == s), sides.in_b & (sides.b == s)
        mine = own_a | own_b
        human_side = np.where(own_a, data.human, 1 - data.human)
        judge_side = lam * np.where(own_a, judge, 1 - judge)
        rows = np.flatnonzero(mine & data.labelled)
        if data.order is not None:  # the order the labels were given: what a confidence sequence reads
            rows = rows[np.argsort(data.order[rows], kind="stable")]
        samples.append(Sample(human_side[rows], judge_side[rows] if lam > 0 else None,
                              judge_side[mine] if lam > 0 else None,
                              int(mine.sum()) if target == "items" else None))
    df = _own_df(estimates)
    chosen = per_system(samples, estimates.value, estimates.ci, estimates.se, df, (0.0, 1.0), estimates.confidence,
                        system_intervals, data.probability is None, seed)
    reason = tuple(None if is_betting(method) else r for r, method in zip(estimates.reason, chosen.methods, strict=True))
    info = estimates.info | {"per_system": chosen.methods, "interval_rule": system_intervals, "curves": chosen.curves}
    # numpy reads the Nones into an object array; its stubs' ArrayLike leaves None out
    methods = cast(npt.ArrayLike, chosen.methods)
    return replace(estimates, value=np.where(np.isfinite(estimates.value) | np.isin(methods, BETTING_KINDS),
                                             chosen.value, np.nan), ci=chosen.ci, reason=reason, info=info)


def _tuned(cross: np.ndarray, judge: np.ndarray) -> float:
    """The lambda minimising the trace of (human - lambda judge)'s covariance, in [0, 1]."""
    denominator = float(np.trace(judge))
    return float(np.clip(np.trace(cross) / denominator, 0, 1)) if denominator > 0 else 0.0


# -- estimators of Bradley-Terry strengths ----------------------------------------------------------
def _bt_judge(data: Comparisons, confidence: float) -> SystemEstimates:
    rows = data.judged
    m = int(rows.sum())
    a, b, judge = data.a[rows], data.b[rows], data.judge[rows]
    fit = fit_bradley_terry(len(data.systems), a, b, np.full(m, 1 / m), judge / m)
    p = fit.win_probability(a, b)
    bread = laplacian_inverse(laplacian(len(data.systems), a, b, p * (1 - p) / m))
    e = (p - judge) / m
    cov = bread @ (m / max(m - 1, 1) * side_gram(len(data.systems), a, b, e, -e)) @ bread
    counts = np.bincount(a, minlength=len(data.systems)) + np.bincount(b, minlength=len(data.systems))
    return _bt_estimates("judge", data, fit, cov, counts, np.zeros(len(counts), dtype=int), confidence, None)


def _bt_labelled(data: Comparisons, lam: float | None, target: str, confidence: float,
                 start: np.ndarray | None, name: str) -> SystemEstimates:
    """Human only (``lam`` 0) or corrected (``lam`` None: power-tuned at the judge-only strengths ``start``)."""
    k = len(data.systems)
    rows = data.labelled
    n, total = int(rows.sum()), data.n
    counts = np.bincount(data.a[rows], minlength=k) + np.bincount(data.b[rows], minlength=k)
    judge = np.where(data.judged, data.judge, NO_VERDICT)
    la, lb, human, judge_l = data.a[rows], data.b[rows], data.human[rows], judge[rows]
    share = data.shares()[rows]  # 1/n each for a uniform sample, else weighted by 1 / inclusion probability
    if lam is None:
        if start is None:  # power tuning needs the judge-only strengths: the TypeError indexing None raises
            raise TypeError("a corrected Bradley-Terry fit needs the judge-only strengths to tune lambda at")
        p0 = 1 / (1 + np.exp(-(start[la] - start[lb])))
        bread = laplacian_inverse(laplacian(k, data.a, data.b, _logistic_weight(start, data) / total))
        e_h, e_j = (p0 - human) * share, (p0 - judge_l) * share
        g_h, g_j = side_gram(k, la, lb, e_h, -e_h), side_gram(k, la, lb, e_j, -e_j)
        cross = (side_gram(k, la, lb, e_h + e_j, -(e_h + e_j)) - g_h - g_j) / 2
        lam = _tuned(bread @ cross @ bread, bread @ g_j @ bread)
    parts = components(data, rows) if lam == 0 else [list(data.systems)]  # lambda 0: the labels alone
    if len(parts) > 1:
        reason = f"the labelled comparisons split the systems into {len(parts)} unconnected groups"
        return _estimates(name, data, np.full(k, np.nan), np.full((k, k), np.nan), counts, counts, [reason] * k,
                          confidence)
    # loss weights and masses: lambda x (judge, every comparison) + (human - lambda judge) on the labelled
    weight = np.concatenate([np.full(total, lam / total), (1 - lam) * share])
    mass = np.concatenate([lam * judge / total, (human - lam * judge_l) * share])
    a, b = np.concatenate([data.a, la]), np.concatenate([data.b, lb])
    fit = fit_bradley_terry(k, a, b, weight, mass)
    p_all, p_lab = fit.win_probability(data.a, data.b), fit.win_probability(la, lb)
    hessian = laplacian(k, a, b, weight * np.concatenate([p_all * (1 - p_all), p_lab * (1 - p_lab)]))
    bread = laplacian_inverse(hessian)
    fraction, scale = n / total, n / max(n - 1, 1)
    e_r = ((p_lab - human) - lam * (p_lab - judge_l)) * share
    meat = (1 - fraction) * side_gram(k, la, lb, e_r, -e_r)
    if target == "population":
        e_h = (p_lab - human) * share
        meat = meat + fraction * side_gram(k, la, lb, e_h, -e_h)
    cov = bread @ (scale * meat) @ bread
    all_counts = np.bincount(data.a, minlength=k) + np.bincount(data.b, minlength=k)
    estimates = _bt_estimates(name, data, fit, cov, all_counts, counts, confidence, counts)
    estimates.info.update(judge_weight=float(lam), target=target)
    return estimates


def _own_df(estimates: SystemEstimates) -> np.ndarray:
    """Each system's degrees of freedom (the diagonal of ``df``); without them the ValueError np.diag(None)
    raises."""
    if estimates.df is None:
        raise ValueError("the estimates have no degrees of freedom")
    return np.diag(estimates.df)


def _bt_per_system(estimates: SystemEstimates) -> SystemEstimates:
    """A label-based Bradley-Terry strength is no mean of bounded values, so it has no betting interval:
    its sandwich t interval, guarded as :mod:`judgelab.evaluate.intervals`'s t branch, from
    :data:`T_MIN_LABELS` labelled comparisons of the system on; fewer, no interval, and why."""
    ci, reason = estimates.ci.copy(), list(estimates.reason)
    methods: list[str | None] = []
    df = _own_df(estimates)
    for s, n in enumerate(estimates.n_labelled):
        if reason[s] is not None or not np.isfinite(estimates.value[s]):
            methods.append(None)
        elif n < T_MIN_LABELS:
            ci[s] = np.nan
            reason[s] = (f"{n} labelled comparison(s): a Bradley-Terry interval needs {T_MIN_LABELS} of the system's "
                         f"(label {T_MIN_LABELS - n} more), or read its win rate (--estimand win-prob)")
            methods.append(None)
        else:
            ci[s] = guarded_t(estimates.value[s], estimates.se[s], df[s], estimates.confidence)
            methods.append("t")
    info = estimates.info | {"per_system": tuple(methods), "interval_rule": "auto", "curves": None}
    return replace(estimates, ci=ci, reason=tuple(reason), info=info)


def _logistic_weight(strength: np.ndarray, data: Comparisons) -> np.ndarray:
    p = 1 / (1 + np.exp(-(strength[data.a] - strength[data.b])))
    return p * (1 - p)


def _bt_estimates(name: str, data: Comparisons, fit, cov: np.ndarray, n_units: np.ndarray, n_labelled: np.ndarray,
                  confidence: float, labelled_counts: np.ndarray | None) -> SystemEstimates:
    k = len(data.systems)
    reason: list[str | None] = [None] * k
    if labelled_counts is not None:
        reason = [None if c >= MIN_LABELS else f"{c} labelled comparison(s): an interval needs {MIN_LABELS}"
                  for c in labelled_counts]
    if not fit.converged:
        reason = [r or "no finite strength: a system wins or loses all its comparisons" for r in reason]
    estimates = _estimates(name, data, fit.strength, cov, n_units, n_labelled, reason, confidence)
    estimates.info["iterations"] = fit.iterations
    return estimates


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


# -- Bradley-Terry intervals by bootstrap ---------------------------------------------------------------
def bootstrap_bt(data: Comparisons, estimates: SystemEstimates, *, n_resamples: int = 1000, seed: int = 0
                 ) -> SystemEstimates:
    """``estimates`` (a Bradley-Terry estimator's) with percentile intervals from ``n_resamples``
    resamples of the comparisons, each refitted, as Arena-Hard-Auto does; the covariance of the
    resampled strengths replaces the sandwich one (pairwise tests and rank sets use it).

    Judge-only resamples the judged comparisons. Human-only and corrected resample all comparisons
    with their labels (a labelled comparison stays labelled): both the comparisons and which of them
    carry a label are drawn again, which is what a uniform random sample of labels from a population
    of comparisons means; the corrected fit keeps the full data's judge weight lambda (any fixed
    lambda gives a consistent estimate; re-tuning it per resample changes the width by its own
    noise only). Each resample's fit depends on it only through per-pair totals, so resamples are
    drawn as multinomial counts over (pair, verdicts) cells, not over a million rows."""
    lam = estimates.info.get("judge_weight")
    cells, value_of, n = _bt_cells(data, judge_only=lam is None)
    pair_i, pair_j = value_of["i"], value_of["j"]
    rng = np.random.default_rng(seed)
    boot, failed = np.empty((n_resamples, len(data.systems))), 0
    start = np.nan_to_num(estimates.value)
    for first in range(0, n_resamples, BOOTSTRAP_CHUNK):
        counts = rng.multinomial(n, cells / n, size=min(BOOTSTRAP_CHUNK, n_resamples - first)).astype(float)
        weight, mass = _bt_totals(counts, value_of, lam, n)
        strength, converged = fit_many(len(data.systems), pair_i, pair_j, weight, mass, start)
        boot[first:first + len(counts)] = strength
        failed += int((~converged).sum())
    alpha = 1 - estimates.confidence
    ci = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0).T
    ci[~np.isfinite(estimates.value)] = np.nan
    cov = np.cov(boot, rowvar=False)
    info = dict(estimates.info, intervals="bootstrap", n_resamples=n_resamples, resamples_not_converged=failed)
    return SystemEstimates(estimates.estimator, estimates.systems, estimates.value, ci, estimates.n_units,
                           estimates.n_labelled, estimates.reason, estimates.confidence, cov=cov, df=estimates.df,
                           info=info)


def _bt_cells(data: Comparisons, judge_only: bool):
    """(count of each distinct cell, the cells' pair and values, the number of rows resampled).

    A cell is a pair ``i < j`` with the verdicts oriented for ``i`` (the preference for ``i``):
    the judge's (judge-only: judged rows only), and for the label-based fits whether the row is
    labelled and its human verdict."""
    rows = data.judged if judge_only else np.ones(data.n, dtype=bool)
    a, b = data.a[rows], data.b[rows]
    flip = a > b
    judge = np.where(data.judged, data.judge, NO_VERDICT)[rows]
    human = np.nan_to_num(data.human[rows], nan=-1.0)
    judge_i = np.where(flip, 1 - judge, judge)
    human_i = np.where(human < 0, -1.0, np.where(flip, 1 - human, human))
    k = len(data.systems)
    pair = np.where(flip, b, a).astype(np.int64) * k + np.where(flip, a, b)
    judge_values, judge_code = np.unique(judge_i, return_inverse=True)  # a few distinct verdicts: 1-d uniques
    human_values, human_code = np.unique(human_i, return_inverse=True)
    key = (pair * len(judge_values) + judge_code.ravel()) * len(human_values) + human_code.ravel()
    distinct, counts = np.unique(key, return_counts=True)
    human_of, rest = human_values[distinct % len(human_values)], distinct // len(human_values)
    judge_of, pair_key = judge_values[rest % len(judge_values)], rest // len(judge_values)
    pairs, pair_of = np.unique(pair_key, return_inverse=True)
    value_of = {"i": pairs // k, "j": pairs % k, "pair": pair_of.ravel(), "judge": judge_of, "human": human_of,
                "labelled": human_of >= 0, "n_pairs": len(pairs)}
    return counts.astype(float), value_of, int(rows.sum())


def _bt_totals(counts: np.ndarray, cell: dict, lam: float | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair (weight, mass) of each resample (rows of ``counts``), as ``_bt_judge`` and
    ``_bt_labelled`` weigh comparisons: judge-only 1/m each; label-based lambda/N on every
    comparison's judge verdict plus (1 - lambda)/n_b on each labelled one's human - lambda judge,
    n_b the resample's own number of labelled comparisons."""
    from scipy.sparse import csr_matrix

    to_pair = csr_matrix((np.ones(len(cell["pair"])), (np.arange(len(cell["pair"])), cell["pair"])),
                         shape=(len(cell["pair"]), cell["n_pairs"]))

    def total(values):
        return np.asarray(to_pair.T @ (counts * values).T).T

    if lam is None:
        return total(np.full(len(cell["pair"]), 1.0 / n)), total(cell["judge"] / n)
    labelled = cell["labelled"].astype(float)
    n_b = np.maximum(counts @ labelled, 1.0)[:, None]
    weight = total(np.full(len(labelled), lam / n)) + total((1 - lam) * labelled) / n_b
    residual = np.where(cell["labelled"], cell["human"] - lam * cell["judge"], 0.0)
    mass = total(lam * cell["judge"] / n) + total(residual) / n_b
    return weight, mass


# -- the leaderboard ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PreferenceReport(SystemsReport):
    """A :class:`SystemsReport` for comparisons: ``ranks()`` gives the simultaneous rank sets."""

    estimand: str = "win-prob"
    baseline: str | None = None
    rank_sets: dict[str, RankSets] = field(default_factory=dict)

    def ranks(self, estimator: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sets = self.rank_sets[estimator]
        return sets.rank, sets.best, sets.worst

    @property
    def label_share(self) -> float:
        """Effective labels are counted in comparisons: each labels two systems at once, so a system's count
        is halved (against a baseline each comparison labels one system, and nothing is halved)."""
        return 1.0 if self.estimand == "baseline-win-rate" else 0.5

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out |= {"estimand": self.estimand, "baseline": self.baseline,
                "rank_sets": {name: {"method": s.method, "critical": s.critical} for name, s in self.rank_sets.items()}}
        return out


def rank_systems(system_a: Sequence, system_b: Sequence, judge: Sequence, human: Sequence | None = None, *,
                 labelled: Sequence[bool] | None = None, estimand: str = "win-prob", baseline: str | None = None,
                 target: str = "population", rank_method: str = "auto", confidence: float = 0.95,
                 judge_weight: float | None = None, seed: int = 0, ids: Sequence[str] | None = None,
                 probability: Sequence[float] | None = None, intervals: str = "sandwich",
                 n_resamples: int = 1000, system_intervals: str = "auto") -> PreferenceReport:
    """Per-system estimates, intervals, Holm-corrected pairwise differences and simultaneous rank sets.

    ``system_a``/``system_b``: who was shown first/second in each comparison; ``judge``/``human``:
    verdicts ("a"/"b"/"tie", or a preference for a in [0, 1]; None: none); ``labelled``: which
    human verdicts count (default: those given). Without human verdicts only the judge's estimate
    is made. ``judge_weight``: a fixed lambda for the corrected estimate instead of the tuned one.
    ``probability``: each comparison's inclusion probability when the labelled ones were not drawn
    uniformly (``judgelab sample`` stratified by pair, or active): labels weigh 1 / it.
    ``intervals``: for Bradley-Terry, ``sandwich`` (default) or ``bootstrap`` (``n_resamples``
    resamples of the comparisons, each refitted: :func:`bootstrap_bt`). ``system_intervals``: each
    system's interval by the rule of :mod:`judgelab.evaluate.intervals` (``auto``), always a betting
    one (``betting``, win rates), or the sandwich t intervals of earlier releases (``t``).
    """
    data = comparisons(system_a, system_b, judge, human, labelled, probability)
    return leaderboard(data, estimand=estimand, baseline=baseline, target=target, rank_method=rank_method,
                       confidence=confidence, judge_weight=judge_weight, seed=seed,
                       n_units=len(ids) if ids is not None else data.n, intervals=intervals,
                       n_resamples=n_resamples, system_intervals=system_intervals)


def leaderboard(data: Comparisons, *, estimand: str = "win-prob", baseline: str | None = None,
                target: str = "population", rank_method: str = "auto", confidence: float = 0.95,
                judge_weight: float | None = None, seed: int = 0, n_units: int | None = None,
                coverage: dict[str, Any] | None = None, label_source: str | None = None,
                design: str | None = None, intervals: str = "sandwich", n_resamples: int = 1000,
                system_intervals: str = "auto") -> PreferenceReport:
    """:func:`rank_systems` on checked :class:`Comparisons`. ``design``: how the labelled comparisons
    were drawn, as the report names it (default: uniform, or weighted with inclusion probabilities)."""
    _check_intervals(data, estimand, target, intervals, n_resamples)
    if estimand not in ESTIMANDS:
        raise ConfigError(f"estimand {estimand!r}: choose {', '.join(ESTIMANDS)}")
    if target not in TARGETS:
        raise ConfigError(f"target {target!r}: choose {', '.join(TARGETS)}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence {confidence}: give a coverage between 0 and 1, e.g. 0.95")
    if estimand == "baseline-win-rate" and baseline is None:
        raise ConfigError(f"the baseline-win-rate estimand needs a baseline system ({term('baseline')})")
    if baseline is not None and baseline not in data.systems:
        raise ConfigError(f"baseline {baseline!r} is not a system of the data; systems: "
                          f"{', '.join(data.systems[:12])}{' ...' if len(data.systems) > 12 else ''}")
    if not data.judged.any():
        raise ConfigError("no comparison has a judge verdict")
    require_connected(data)
    estimates = _estimators(data, estimand, baseline, target, confidence, judge_weight,
                            {"intervals": intervals, "n_resamples": n_resamples, "seed": seed,
                             "system_intervals": system_intervals})
    # shrunk is a model's point estimate: no tests or rank sets that hold per system (its point ranks only)
    pairs = {name: pairwise(est) for name, est in estimates.items() if name != "shrunk"}
    sets = {name: rank_sets(est, rank_method, pairs=pairs[name], seed=seed) for name, est in estimates.items()
            if name != "shrunk"}
    if "shrunk" in estimates:
        unknown = np.full(len(data.systems), np.nan)
        sets["shrunk"] = RankSets("model", ranks_of(estimates["shrunk"].value), unknown, unknown, None)
    recommended = None
    if "corrected" in estimates:  # a ranking only (no interval, no rank set): the judge's order unless contradicted
        estimates["guided"] = guided_ranking(estimates["corrected"], estimates["judge"])
        recommended = recommend(data, estimates["judge"].value, estimand=estimand, baseline=baseline,
                                seed=seed).to_dict()
        unknown = np.full(len(data.systems), np.nan)
        sets["guided"] = RankSets("guided", ranks_of(estimates["guided"].value), unknown, unknown, None)
    n_labelled = int(data.labelled.sum())
    judges = None
    if data.judges is not None and "corrected" in estimates:
        judges = _panel_worth(data, estimates, {"estimand": estimand, "baseline": baseline, "target": target,
                                                "confidence": confidence, "seed": seed,
                                                "system_intervals": system_intervals})
    labels = {"n_labelled": n_labelled, "design": (design or data.design) if n_labelled else None, "source": label_source,
              "unlabelled_sample_ids": 0}
    coverage = coverage or {"units": data.n, "judged": int(data.judged.sum()),
                            "without_verdict": int((~data.judged).sum())}
    options = {"system_intervals": system_intervals, "estimand": estimand, "baseline": baseline, "target": target,
               "rank_method": rank_method,
               "confidence": confidence, "judge_weight": judge_weight, "seed": seed, "intervals": intervals}
    if intervals == "bootstrap":
        options["n_resamples"] = n_resamples
    measure = MEASURES[estimand].format(baseline=baseline)
    return PreferenceReport("comparisons", None, measure, estimates, pairs, labels, coverage,
                            options=options, recommended=recommended, judges=judges, estimand=estimand,
                            baseline=baseline, rank_sets=sets)


def _panel_worth(data: Comparisons, estimates: dict[str, SystemEstimates], options: dict[str, Any]) -> dict:
    """Per judge of a panel: its weight in the combination (its coefficient over all labelled comparisons),
    and its worth in labelled comparisons alone and added to the others, as evaluate/panel.worth counts it
    for items (a comparison labels two systems: halved, except against a baseline)."""
    share = 1.0 if options["estimand"] == "baseline-win-rate" else 0.5
    human = estimates["human"]
    total = effective_labels(human, estimates["corrected"])
    judges, names = data.judges, data.judge_names
    out = {}
    for j, name in enumerate(names):
        others = [k for k in range(len(names)) if k != j]
        if judges is None:  # a panel has its judges' columns: the TypeError indexing None raises
            raise TypeError("a panel's worth needs its judges' preferences")
        alone = estimate(replace(data, judge=judges[:, j], judges=None), "corrected", **options)
        rest = replace(data, judge=judges[:, others[0]], judges=judges[:, others] if len(others) > 1 else None)
        without = estimate(rest, "corrected", **options)
        out[name] = {"weight": _combination_weights(data)[j],
                     "alone": json_number(share * effective_labels(human, alone)),
                     "added": json_number(share * (total - effective_labels(human, without))),
                     "per_system": {s: None if v is None else json_number(share * v)
                                    for s, v in effective_per_system(human, alone).items()}}
    return out


def _combination_weights(data: Comparisons) -> list[float | None]:
    """Each judge's coefficient in the least-squares combination over every labelled comparison."""
    rows = data.labelled
    if data.judges is None:  # a panel has its judges' columns: the AttributeError None.shape raises
        raise AttributeError("the combination weights need the judges' preferences")
    if rows.sum() < 2 * data.judges.shape[1] + 2:
        return [None] * data.judges.shape[1]
    judges = np.where(np.isfinite(data.judges), data.judges, NO_VERDICT)
    design = np.column_stack([np.ones(int(rows.sum())), judges[rows]])
    root = np.sqrt(data.shares()[rows])
    coef = np.linalg.lstsq(design * root[:, None], data.human[rows] * root, rcond=None)[0]
    return [json_number(c) for c in coef[1:]]


class _Estimand(TypedDict):
    """The estimand keywords of :func:`estimate`, passed on together (``estimate(..., **options)``)."""

    estimand: str
    baseline: str | None


def recommend(data: Comparisons, judge_value: np.ndarray, *, estimand: str = "win-prob", baseline: str | None = None,
              splits: int = SPLITS, seed: int = 0) -> Choice:
    """Shrunk or corrected as the point ranking, checked on the labels as evaluate/choose.py checks
    items: the labelled comparisons are halved at random ``splits`` times; shrunk (the judge and one
    half's labels) and the human-only estimate of that half are each ranked against the other half's
    human-only estimate. ``judge_value``: the judge-only estimate's values, what shrunk leans on."""
    if data.probability is not None:
        return Choice("shrunk", None, None, 0, "not checked: the labels were drawn with unequal probabilities")
    rows = np.flatnonzero(data.labelled)
    rng = np.random.default_rng(seed)
    options: _Estimand = {"estimand": estimand, "baseline": baseline}

    def split() -> list[float]:
        first = np.zeros(data.n, dtype=bool)
        first[rng.choice(rows, len(rows) // 2, replace=False)] = True
        halves = [_labels_only_on(data, half) for half in (first, data.labelled & ~first)]
        human = [estimate(half, "human", **options).value for half in halves]  # each half's, used both ways
        scores = []
        for k, fitted in enumerate(halves):
            pulled = shrunk_values(estimate(fitted, "corrected", **options), judge_value, rule=COMPARISONS_SHRINK_RULE)
            own, other = human[k], human[1 - k]
            ok = np.isfinite(pulled) & np.isfinite(own) & np.isfinite(other)
            scores.append([kendall_tau_b(pulled[ok], other[ok]), kendall_tau_b(own[ok], other[ok])]
                          if ok.sum() >= 3 else [np.nan, np.nan])
        return mean_scores(scores)

    return choose_by_halves(split, splits, "the labelled comparisons")


def _labels_only_on(data: Comparisons, rows: np.ndarray) -> Comparisons:
    return replace(data, human=np.where(rows, data.human, np.nan))


def _check_intervals(data: Comparisons, estimand: str, target: str, intervals: str, n_resamples: int) -> None:
    if intervals not in INTERVALS:
        raise ConfigError(f"intervals {intervals!r}: choose {', '.join(INTERVALS)}")
    if intervals == "sandwich":
        return
    if estimand != "bradley-terry":
        raise ConfigError("bootstrap intervals are for the bradley-terry estimand (the win rates' intervals are "
                          "exact linearisations already)")
    if n_resamples < 2:
        raise ConfigError(f"{n_resamples} bootstrap resample(s): give 2 or more (1000 for 95% intervals)")
    if int(data.labelled.sum()) >= MIN_LABELS and (target != "population" or data.probability is not None):
        raise ConfigError("bootstrap intervals resample comparisons and their labels as draws from a population: "
                          f"they need {term('target')} population and a uniform sample of labels (use sandwich "
                          "intervals)")


def _estimators(data: Comparisons, estimand: str, baseline: str | None, target: str, confidence: float,
                judge_weight: float | None, intervals: dict[str, Any]) -> dict[str, SystemEstimates]:
    names = ESTIMATORS if int(data.labelled.sum()) >= MIN_LABELS else ("judge",)
    judge = estimate(data, "judge", estimand=estimand, baseline=baseline, confidence=confidence, **intervals)
    out = {"judge": judge} | {name: estimate(data, name, estimand=estimand, baseline=baseline, target=target,
                                             confidence=confidence, judge_weight=judge_weight,
                                             start=judge.value, **intervals) for name in names[1:]}
    if "corrected" in out:  # a point ranking that leans on the judge where labels are few: a model, no guarantee
        fixed = out["corrected"]  # as measured: systems with a value and a sandwich variance, under MIN_LABELS none
        fixed = replace(fixed, value=np.where(fixed.n_labelled >= MIN_LABELS, fixed.value, np.nan))
        out["shrunk"] = shrunk(fixed, judge.value, rule=COMPARISONS_SHRINK_RULE)
    return out


def estimate(data: Comparisons, estimator: str, *, estimand: str = "win-prob", baseline: str | None = None,
             target: str = "population", confidence: float = 0.95, judge_weight: float | None = None,
             start: np.ndarray | None = None, intervals: str = "sandwich", n_resamples: int = 1000,
             seed: int = 0, system_intervals: str = "auto") -> SystemEstimates:
    """One estimator (``judge``, ``human``, ``corrected``) of one estimand, without the checks and
    rank sets of :func:`leaderboard` (for simulations that call it thousands of times).
    ``start``: Bradley-Terry strengths to tune lambda at (default: the judge-only fit's).
    ``intervals``: Bradley-Terry's ``sandwich`` (default) or ``bootstrap`` (:func:`bootstrap_bt`,
    ``n_resamples`` resamples drawn with ``seed``). ``system_intervals``: how the label-based
    estimates' per-system intervals are chosen (:mod:`judgelab.evaluate.intervals`: ``auto``,
    ``betting`` for the win rates, ``t`` the sandwich t intervals as before)."""
    if system_intervals not in SYSTEM_INTERVALS:
        raise ConfigError(f"intervals {system_intervals!r}: choose {', '.join(SYSTEM_INTERVALS)}")
    if estimator not in ESTIMATORS:
        raise ConfigError(f"estimator {estimator!r}: choose {', '.join(ESTIMATORS)}")
    lam = 0.0 if estimator == "human" else judge_weight
    if estimator == "corrected" and data.judges is not None:
        data = replace(data, judge=stacked_preference(data, seed))
    if estimand == "bradley-terry":
        if estimator == "judge":
            out = _bt_judge(data, confidence)
        else:
            if start is None and estimator == "corrected" and judge_weight is None:
                start = _bt_judge(data, confidence).value
            out = _bt_labelled(data, lam, target, confidence, start, estimator)
            if system_intervals != "t":
                out = _bt_per_system(out)
        if intervals != "bootstrap" or not np.isfinite(out.value).any():
            return out
        if estimator != "judge":
            fewest = int(np.min(out.n_labelled))
            if "judge_weight" not in out.info or fewest < MIN_BOOTSTRAP_LABELS:
                out.info.update(intervals="sandwich", intervals_reason=(
                    f"a system has {fewest} labelled comparison(s): percentile bootstrap intervals of the label-based "
                    f"estimates need {MIN_BOOTSTRAP_LABELS} per system (with few they cover far less than they say); "
                    "sandwich t intervals kept" if "judge_weight" in out.info else "no fit to resample"))
                return out
        return bootstrap_bt(data, out, n_resamples=n_resamples, seed=seed)
    base = None if baseline is None or estimand != "baseline-win-rate" else data.systems.index(baseline)
    sides = _Sides.of(data, base)
    out = _mean_judge(data, sides, confidence) if estimator == "judge" else _mean_labelled(
        data, sides, lam, target, confidence, estimator, system_intervals, seed)
    return out if base is None or baseline is None else _without_baseline(out, base, baseline)  # base: baseline's


#: Folds of the judges' combination for comparisons: each labelled comparison's combined preference comes
#: from weights fitted on the others (cross-prediction-powered inference, Zrnic & Candes 2024), since the
#: power-tuned estimators count no error of weights fitted on the labels they correct with.
PANEL_FOLDS = 5


def stacked_preference(data: Comparisons, seed: int = 0) -> np.ndarray:
    """Several judges' preferences combined into one, in [0, 1]: least squares of the human preference on
    theirs (a missing verdict read as a tie, as the corrected estimator reads one), cross-fitted over the
    labelled comparisons; every other comparison gets the folds' mean. Too few labels to fit: the plain mean."""
    if data.judges is None:  # one judge: the TypeError np.isfinite(None) raises
        raise TypeError("stacking needs several judges' preferences")
    judges = np.where(np.isfinite(data.judges), data.judges, NO_VERDICT)
    rows = np.flatnonzero(data.labelled)
    plain = judges.mean(axis=1)
    if len(rows) < max(PANEL_FOLDS, 2 * judges.shape[1] + 2):
        return plain
    fold = np.random.default_rng([seed, 11]).permutation(len(rows)) % PANEL_FOLDS
    weight = data.shares()
    combined, everywhere = plain.copy(), np.zeros(data.n)
    design = np.column_stack([np.ones(data.n), judges])
    for k in range(PANEL_FOLDS):
        train, held = rows[fold != k], rows[fold == k]
        root = np.sqrt(weight[train])
        coef = np.linalg.lstsq(design[train] * root[:, None], data.human[train] * root, rcond=None)[0]
        combined[held] = design[held] @ coef
        everywhere += design @ coef / PANEL_FOLDS
    combined = np.where(data.labelled, combined, everywhere)
    return np.clip(combined, 0.0, 1.0)


def _without_baseline(est: SystemEstimates, base: int, name: str) -> SystemEstimates:
    reason = list(est.reason)
    reason[base] = f"the baseline ({name})"
    for k, count in enumerate(est.n_units):
        if k != base and count == 0:
            reason[k] = "never compared with the baseline"
    value = est.value.copy()
    value[[r is not None for r in reason]] = np.nan
    ci = est.ci.copy()
    ci[~np.isfinite(value)] = np.nan
    return SystemEstimates(est.estimator, est.systems, value, ci, est.n_units, est.n_labelled, tuple(reason),
                           est.confidence, cov=est.cov, df=est.df, info=est.info)
