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

``shrunk`` (as for pointwise items, :func:`judgelab.evaluate.shrinkage.shrunk`): the corrected
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

The comparisons themselves (codes, checks, the helpers both kinds of estimator share):
:mod:`judgelab.evaluate.comparisons`; the Bradley-Terry fits and their bootstrap:
:mod:`judgelab.evaluate.bradley_terry`; rank sets: :mod:`judgelab.evaluate.rank_sets`; comparisons read
from items and judgments: :mod:`judgelab.evaluate.comparison_items`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, cast

import numpy as np
import numpy.typing as npt

from judgelab.errors import ConfigError, term
from judgelab.evaluate.board import SystemsReport
from judgelab.evaluate.bradley_terry import _bt_judge, _bt_labelled, _bt_per_system, bootstrap_bt
from judgelab.evaluate.choose import SPLITS, Choice, choose_by_halves, kendall_tau_b, mean_scores
from judgelab.evaluate.compare import pairwise, ranks_of

# Comparisons and comparisons stay importable from here, as before comparisons.py held them
from judgelab.evaluate.comparisons import (
    MIN_LABELS,
    NO_VERDICT,
    Comparisons,
    _estimates,
    _own_df,
    _tuned,
    comparisons,
    require_connected,
)
from judgelab.evaluate.guided import guided_ranking
from judgelab.evaluate.intervals import BETTING_KINDS, Sample, is_betting, per_system
from judgelab.evaluate.intervals import INTERVALS as SYSTEM_INTERVALS
from judgelab.evaluate.panel import effective_labels, effective_per_system
from judgelab.evaluate.rank_sets import RankSets, rank_sets
from judgelab.evaluate.shrinkage import shrunk, shrunk_values
from judgelab.evaluate.system_estimates import SystemEstimates, never_wider
from judgelab.metrics.bradley_terry import side_gram
from judgelab.metrics.results import json_number

ESTIMANDS = ("win-prob", "bradley-terry", "baseline-win-rate")
ESTIMATORS = ("judge", "human", "corrected")
TARGETS = ("population", "items")
MEASURES = {"win-prob": "win probability (ties half)", "bradley-terry": "Bradley-Terry strength (log-odds)",
            "baseline-win-rate": "win rate against {baseline} (ties half)"}
INTERVALS = ("sandwich", "bootstrap")
# shrunk's trend in the judge's values: the straight line, measured on Arena's 20 systems (bench_pairwise);
# the items' smooth curve (shrinkage.shrunk) was not, and its check would refit ~180 curves per evaluate
COMPARISONS_SHRINK_RULE = "posterior"
# fewer labelled comparisons per system and the percentile bootstrap of a label-based estimate undercovers
# badly (2 labels on Arena: an interval a fifth of the t one with 1 degree of freedom); the t intervals stay
MIN_BOOTSTRAP_LABELS = 30


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


# -- the leaderboard ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PreferenceReport(SystemsReport):
    """A :class:`SystemsReport` for comparisons: ``ranks()`` gives the simultaneous rank sets."""

    estimand: str = "win-prob"
    baseline: str | None = None
    rank_sets: dict[str, RankSets] = field(default_factory=dict)
    #: the style-controlled fits and the tie model (``evaluate(..., style_control=True)``: evaluate/style.py's
    #: StyleReport as a dict), None when not asked for
    style: dict[str, Any] | None = None

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
        if self.style is not None:
            out["style"] = self.style
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
        alone = estimate(replace(data, judge=judges[:, j], judges=None), "corrected", labels_own=human, **options)
        rest = replace(data, judge=judges[:, others[0]], judges=judges[:, others] if len(others) > 1 else None)
        without = estimate(rest, "corrected", labels_own=human, **options)
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
        labels = [estimate(half, "human", **options) for half in halves]  # each half's, used both ways
        human = [one.value for one in labels]
        scores = []
        for k, fitted in enumerate(halves):
            pulled = shrunk_values(estimate(fitted, "corrected", labels_own=labels[k], **options), judge_value,
                                   rule=COMPARISONS_SHRINK_RULE)
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
    out = {"judge": judge}
    for name in names[1:]:  # human before corrected: the corrected estimate reads the labels' own
        out[name] = estimate(data, name, estimand=estimand, baseline=baseline, target=target, confidence=confidence,
                             judge_weight=judge_weight, start=judge.value, labels_own=out.get("human"), **intervals)
    if "corrected" in out:  # a point ranking that leans on the judge where labels are few: a model, no guarantee
        fixed = out["corrected"]  # as measured: systems with a value and a sandwich variance, under MIN_LABELS none
        fixed = replace(fixed, value=np.where(fixed.n_labelled >= MIN_LABELS, fixed.value, np.nan))
        out["shrunk"] = shrunk(fixed, judge.value, rule=COMPARISONS_SHRINK_RULE)
    return out


def estimate(data: Comparisons, estimator: str, *, estimand: str = "win-prob", baseline: str | None = None,
             target: str = "population", confidence: float = 0.95, judge_weight: float | None = None,
             start: np.ndarray | None = None, intervals: str = "sandwich", n_resamples: int = 1000,
             seed: int = 0, system_intervals: str = "auto", labels_own: SystemEstimates | None = None
             ) -> SystemEstimates:
    """One estimator (``judge``, ``human``, ``corrected``) of one estimand, without the checks and
    rank sets of :func:`leaderboard` (for simulations that call it thousands of times).
    ``start``: Bradley-Terry strengths to tune lambda at (default: the judge-only fit's).
    ``intervals``: Bradley-Terry's ``sandwich`` (default) or ``bootstrap`` (:func:`bootstrap_bt`,
    ``n_resamples`` resamples drawn with ``seed``). ``system_intervals``: how the label-based
    estimates' per-system intervals are chosen (:mod:`judgelab.evaluate.intervals`: ``auto``,
    ``betting`` for the win rates, ``t`` the sandwich t intervals as before). The corrected estimate takes the
    human-only one for a system whose corrected interval came out wider (:func:`never_wider`): ``labels_own``
    is that human-only estimate, with the same settings, when the caller has it (not computed again)."""
    options: dict[str, Any] = {"estimand": estimand, "baseline": baseline, "target": target, "confidence": confidence,
               "judge_weight": judge_weight, "start": start, "intervals": intervals, "n_resamples": n_resamples,
               "seed": seed, "system_intervals": system_intervals}
    out = _estimate(data, estimator, **options)
    if estimator == "corrected" and data.judges is not None:  # as items name several judges' combination
        out.info["calibration"] = "stack"
    if estimator != "corrected" or not int(data.labelled.sum()):
        return out
    return never_wider(out, labels_own if labels_own is not None else _estimate(data, "human", **options))


def _estimate(data: Comparisons, estimator: str, *, estimand: str, baseline: str | None, target: str,
              confidence: float, judge_weight: float | None, start: np.ndarray | None, intervals: str,
              n_resamples: int, seed: int, system_intervals: str) -> SystemEstimates:
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
