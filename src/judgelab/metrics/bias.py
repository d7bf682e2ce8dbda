"""A judge's biases, each with a confidence interval (issue 29; docs/audit.md).

Pure functions over verdict arrays (``"a"`` / ``"b"`` / ``"tie"``, None when the judge gave none)
and lengths or scores. Every figure is an :class:`Estimate` with an interval:

* shares (flip rate, first-position rate, tie rate, own-family win share) come with a Wilson
  interval when every item is one independent trial, else with a cluster bootstrap over ``groups``
  (several comparisons per question, or both orders of one item);
* judge-minus-human differences are paired: both shares are computed on the same bootstrap
  resamples (:func:`judgelab.metrics.compare.paired_difference`);
* regression coefficients (verbosity) come from statsmodels with heteroskedasticity-robust
  standard errors, cluster-robust over ``groups`` when given.

Conventions. ``verdict`` names the outputs as the item does: ``"a"`` is ``output_a`` whatever
order the judge saw. In the original order ``output_a`` is shown first; in the swapped order
``output_b`` is. Human labels follow the same names (Chatbot Arena's ``"tie (bothbad)"`` is a tie).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from judgelab.data.item import TIE_ALIASES as PUBLISHED_TIES
from judgelab.metrics.bootstrap import GroupBootstrap, Resampling, group_codes, percentile_ci
from judgelab.metrics.compare import paired_difference
from judgelab.metrics.results import Estimate

#: Labels that mean a tie: "tie" and the published aliases the data layer reads as one.
TIE_ALIASES = frozenset({"tie", *PUBLISHED_TIES})
#: None as a numpy operand: numpy turns a bare None into this array, and its type stubs refuse a bare None.
_NONE = np.array(None)


class _Sample(TypedDict):
    """The fields the estimates of one sample share (``Estimate(..., **common)``)."""

    level: str
    n: int
    n_groups: int | None


class _Stated(_Sample):
    """The fields the estimates of one statistic share: the sample's, the statistic and its rule."""

    statistic: str
    rule: str | None


# -- inputs -----------------------------------------------------------------------------------
def as_verdicts(values: Sequence[Any], name: str = "verdicts") -> np.ndarray:
    """An object array of "a" / "b" / "tie" / None; a ValueError names the first other value."""
    out = np.empty(len(values), dtype=object)
    for index, value in enumerate(values):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            out[index] = None
        elif value in ("a", "b"):
            out[index] = value
        elif value in TIE_ALIASES:
            out[index] = "tie"
        else:
            raise ValueError(f"{name}[{index}] is {value!r}: a verdict is 'a', 'b' or 'tie'")
    return out


def preference_for_a(verdicts: np.ndarray) -> np.ndarray:
    """1 for "a", 0 for "b", 0.5 for a tie, NaN when missing."""
    return np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}.get(v, np.nan) for v in verdicts])


def both_order_verdict(verdict: Sequence[Any], verdict_swapped: Sequence[Any]) -> np.ndarray:
    """The position correction: the verdict both orders agree on, a tie where they disagree, None
    where either is missing. Averaging the two orders' preferences gives the same credit."""
    first, second = as_verdicts(verdict, "verdict"), as_verdicts(verdict_swapped, "verdict_swapped")
    return np.where(~has_verdict(first, second), _NONE,
                    np.where(first == second, first, "tie")).astype(object)


def has_verdict(*verdicts: np.ndarray) -> np.ndarray:
    """Where every one of the verdict arrays has a verdict."""
    return np.logical_and.reduce([np.not_equal(v, _NONE) for v in verdicts])


# -- shares with intervals --------------------------------------------------------------------
def share(hits: np.ndarray, trials: np.ndarray, statistic: str, groups=None, *, n_resamples: int = 1000,
          seed: int = 0, confidence: float = 0.95, rule: str | None = None) -> Estimate:
    """``sum(hits) / sum(trials)`` over units (items), with its interval.

    Wilson (statsmodels) when there are no groups and each unit is one trial with a 0/1 outcome;
    otherwise a percentile cluster bootstrap over groups (or over units), which respects the
    dependence of repeated questions and of an item's two orders. Replicates are kept either way,
    so two shares over the same units give a paired difference."""
    hits, trials = np.asarray(hits, dtype=float), np.asarray(trials, dtype=float)
    codes, labels = (np.arange(len(hits)), None) if groups is None else group_codes(groups)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    hit_sums = np.bincount(codes, weights=hits, minlength=n_groups)
    trial_sums = np.bincount(codes, weights=trials, minlength=n_groups)
    total = float(trial_sums.sum())
    common: _Stated = {"statistic": statistic, "level": "dataset", "n": int(total), "rule": rule,
                       "n_groups": None if labels is None else len(labels)}
    if total == 0:
        return Estimate(value=float("nan"), reason="nothing to count", **common)
    def resampled(counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without trials: NaN, left out
            return (counts @ hit_sums) / (counts @ trial_sums)

    resamples = GroupBootstrap(n_groups, n_resamples, seed).replicate(resampled)
    value = float(hit_sums.sum() / total)
    single_trials = groups is None and np.all(np.isin(trials, (0.0, 1.0))) and np.all(np.isin(hits, (0.0, 1.0)))
    ci: tuple[float, float] | None
    if single_trials:
        lo, hi = proportion_confint(hit_sums.sum(), total, alpha=1 - confidence, method="wilson")
        ci = (float(lo), float(hi))
    else:
        ci = percentile_ci(resamples, confidence)
    return Estimate(value=value, ci=ci, resamples=resamples, **common)


# -- position ---------------------------------------------------------------------------------
def position_bias_both_orders(verdict: Sequence[Any], verdict_swapped: Sequence[Any], groups=None, *,
                              n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
                              ) -> dict[str, Estimate]:
    """Position bias of a judge that saw each item in both orders (verdicts in the item's names).

    * ``flip_rate``: share of items whose verdict changes with the order (items where either
      order gave no verdict are left out);
    * ``first_position_rate``: share of the decisive verdicts (not ties) of both orders that pick
      the output shown first; 0.5 is no position preference, 1 a judge that always picks the first;
    * ``flips_to_first``: share of items where the judge picked the first-shown output both
      times (it chose ``a`` in the original order and ``b`` in the swapped one).
    """
    first, second = as_verdicts(verdict, "verdict"), as_verdicts(verdict_swapped, "verdict_swapped")
    if len(first) != len(second):
        raise ValueError(f"{len(first)} verdicts but {len(second)} swapped verdicts")
    both = has_verdict(first, second)
    first, second = first[both], second[both]
    groups = None if groups is None else np.asarray(groups, dtype=object)[both]
    options: Resampling = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    ones = np.ones(len(first))
    picks_first = (first == "a").astype(float) + (second == "b")
    decisive = (first != "tie").astype(float) + (second != "tie")
    return {
        "flip_rate": share(first != second, ones, "flip_rate", groups, **options),
        "first_position_rate": share(picks_first, decisive, "first_position_rate",
                                     _per_item(groups, len(first)), **options),
        "flips_to_first": share((first == "a") & (second == "b"), ones, "flips_to_first", groups, **options),
    }


def _per_item(groups, n: int):
    """Groups for a statistic with two trials per item: the items themselves when there are none."""
    return np.arange(n) if groups is None else groups


def first_position_rate(verdict: Sequence[Any], groups=None, *, n_resamples: int = 1000, seed: int = 0,
                        confidence: float = 0.95) -> Estimate:
    """Share of the decisive verdicts ("a" or "b") that pick ``a``, the output shown first."""
    verdicts = as_verdicts(verdict)
    return share(verdicts == "a", np.isin(verdicts, ("a", "b")), "first_position_rate", groups,
                 n_resamples=n_resamples, seed=seed, confidence=confidence, rule="ties left out")


def position_bias_one_order(judge: Sequence[Any], human: Sequence[Any], groups=None, *, n_resamples: int = 1000,
                            seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """Position bias of a judge that saw each comparison once, in the order the humans saw it.

    The humans' own first-position rate on the same comparisons is the reference (their pick of
    ``a`` also reflects which output was better): ``difference`` is judge minus humans, paired.
    Comparisons where either gave no verdict are left out."""
    judge_v, human_v = _paired_verdicts(judge, human)
    keep = has_verdict(judge_v, human_v)
    groups = _kept(groups, keep)
    options: Resampling = {"n_resamples": max(n_resamples, 1), "seed": seed, "confidence": confidence}
    judge_rate = first_position_rate(judge_v[keep], groups, **options)
    human_rate = first_position_rate(human_v[keep], groups, **options)
    return {"judge_first_position_rate": judge_rate, "human_first_position_rate": human_rate,
            "difference": paired_difference(human_rate, judge_rate, confidence)}


def _paired_verdicts(judge: Sequence[Any], human: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    judge_v, human_v = as_verdicts(judge, "judge"), as_verdicts(human, "human")
    if len(judge_v) != len(human_v):
        raise ValueError(f"{len(judge_v)} judge verdicts but {len(human_v)} human ones")
    return judge_v, human_v


# -- ties -------------------------------------------------------------------------------------
def tie_rates(judge: Sequence[Any], human: Sequence[Any] | None = None, groups=None, *, n_resamples: int = 1000,
              seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """How often the judge says "tie", and, with human verdicts on the same comparisons, how often
    they do and the paired difference (judge minus humans)."""
    options: Resampling = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    if human is None:
        verdicts = as_verdicts(judge, "judge")
        given = has_verdict(verdicts)
        return {"judge_tie_rate": share(verdicts == "tie", given, "tie_rate", groups, **options)}
    judge_v, human_v = _paired_verdicts(judge, human)
    keep = has_verdict(judge_v, human_v)
    units = _kept(groups, keep)
    options["n_resamples"] = max(n_resamples, 1)
    ones = np.ones(int(keep.sum()))
    judge_rate = share(judge_v[keep] == "tie", ones, "tie_rate", units, **options)
    human_rate = share(human_v[keep] == "tie", ones, "tie_rate", units, **options)
    return {"judge_tie_rate": judge_rate, "human_tie_rate": human_rate,
            "difference": paired_difference(human_rate, judge_rate, confidence)}


# -- self-preference --------------------------------------------------------------------------
def in_family(systems: Sequence[Any], family: str) -> np.ndarray:
    """Which system names belong to the family: ``family`` occurs in the name, ignoring case
    (``gpt-4`` matches ``gpt-4-0613`` but not ``gpt4all-13b``)."""
    needle = family.lower()
    return np.array([system is not None and needle in str(system).lower() for system in systems], dtype=bool)


def self_preference(judge: Sequence[Any], human: Sequence[Any], system_a: Sequence[Any], system_b: Sequence[Any],
                    family: str, groups=None, *, n_resamples: int = 1000, seed: int = 0,
                    confidence: float = 0.95) -> dict[str, Any]:
    """Does the judge favour its own model family? On the comparisons where exactly one side is of
    ``family``: that side's win share (ties half) by the judge and by the humans, and the paired
    difference (judge minus humans). A positive difference is self-preference beyond the humans'."""
    judge_v, human_v = _paired_verdicts(judge, human)
    own_a, own_b = in_family(system_a, family), in_family(system_b, family)
    given = has_verdict(judge_v, human_v)
    keep = (own_a ^ own_b) & given
    if not keep.any():
        raise ValueError(f"no comparison has exactly one system of the family {family!r}")
    own_side = np.where(own_a[keep], "a", "b")

    def own_credit(verdicts: np.ndarray) -> np.ndarray:
        return (verdicts == own_side) + 0.5 * (verdicts == "tie")

    units = _kept(groups, keep)
    options: Resampling = {"n_resamples": max(n_resamples, 1), "seed": seed, "confidence": confidence}
    ones = np.ones(int(keep.sum()))
    judge_rate = share(own_credit(judge_v[keep]), ones, "own_family_win_share", units, rule="ties count half",
                       **options)
    human_rate = share(own_credit(human_v[keep]), ones, "own_family_win_share", units, rule="ties count half",
                       **options)
    return {"judge_own_win_share": judge_rate, "human_own_win_share": human_rate,
            "difference": paired_difference(human_rate, judge_rate, confidence)}


# -- verbosity and the length-controlled win rate ---------------------------------------------
def verbosity_pairwise(judge: Sequence[Any], length_a: Sequence[float], length_b: Sequence[float],
                       human: Sequence[Any] | None = None, groups=None, *, judge_swapped: Sequence[Any] | None = None,
                       confidence: float = 0.95) -> Estimate:
    """Does the judge prefer the longer output beyond what the humans do?

    A fractional logistic regression (statsmodels GLM, binomial) of the judge's preference for
    ``a`` (1, 0, 0.5 for a tie; the mean of both orders with ``judge_swapped``) on the length
    difference ``len(a) - len(b)`` in standard deviations, with the human verdict (+1 / 0 / -1)
    as a covariate when given. The value is the length coefficient: log-odds of preferring ``a``
    per SD of length difference (0: no length preference; positive: prefers the longer). Robust
    standard errors, clustered over ``groups`` when given."""
    preference = preference_for_a(as_verdicts(judge, "judge"))
    if judge_swapped is not None:
        preference = (preference + preference_for_a(as_verdicts(judge_swapped, "judge_swapped"))) / 2
    difference = np.asarray(length_a, dtype=float) - np.asarray(length_b, dtype=float)
    covariates = None if human is None else 2 * preference_for_a(as_verdicts(human, "human")) - 1
    return _length_coefficient(preference, difference, covariates, groups, confidence, binary=True,
                               unit="log-odds of preferring a per SD of len(a) - len(b)"
                               + (", human verdict held fixed" if human is not None else ""))


def verbosity_pointwise(judge_score: Sequence[float], length: Sequence[float],
                        human_score: Sequence[float] | None = None, groups=None, *,
                        confidence: float = 0.95) -> Estimate:
    """Does the judge score longer texts higher beyond what the humans do?

    OLS (statsmodels) of the judge's score on the text length in standard deviations, with the
    human score as a covariate when given. The value is the length coefficient: score points per
    SD of length with the human score held fixed. Robust standard errors, clustered over
    ``groups`` when given (several outputs per source)."""
    covariates = None if human_score is None else np.asarray(human_score, dtype=float)
    return _length_coefficient(np.asarray(judge_score, dtype=float), np.asarray(length, dtype=float), covariates,
                               groups, confidence, binary=False,
                               unit="score points per SD of length"
                               + (", human score held fixed" if human_score is not None else ""))


def _length_coefficient(response: np.ndarray, length: np.ndarray, covariate: np.ndarray | None, groups,
                        confidence: float, *, binary: bool, unit: str) -> Estimate:
    keep = np.isfinite(response) & np.isfinite(length)
    if covariate is not None:
        keep &= np.isfinite(covariate)
    columns = [_standardized(length[keep])] + ([] if covariate is None else [covariate[keep]])
    fitted = _fit(response[keep], columns, _kept(groups, keep), binary=binary, confidence=confidence)
    common: _Stated = {"statistic": "length_coefficient", "level": "dataset", "n": int(keep.sum()),
                       "rule": unit, "n_groups": None if groups is None else len(set(_kept(groups, keep)))}
    if isinstance(fitted, str):
        return Estimate(value=float("nan"), reason=fitted, **common)
    value, ci = fitted[1]
    return Estimate(value=value, ci=ci, **common)


def _standardized(values: np.ndarray) -> np.ndarray:
    spread = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return values / spread if spread > 0 else values * np.nan


def _kept(groups, keep: np.ndarray):
    return None if groups is None else np.asarray(groups, dtype=object)[keep]


def _fit(response: np.ndarray, columns: list[np.ndarray], groups, *, binary: bool, confidence: float
         ) -> list[tuple[float, tuple[float, float]]] | str:
    """(coefficient, interval) per column, the intercept first; or why there is none.

    A binomial GLM takes the fractional responses (ties as 0.5) as quasi-likelihood; the robust
    (sandwich) covariance keeps the interval valid for them."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

    if len(response) < len(columns) + 2:
        return f"{len(response)} usable rows: too few to fit"
    design = sm.add_constant(np.column_stack(columns), has_constant="add")
    if not np.all(np.isfinite(design)):
        return "the length does not vary"
    if np.ptp(response) == 0:
        return "the judge's verdict does not vary"
    model = sm.GLM(response, design, family=sm.families.Binomial()) if binary else sm.OLS(response, design)
    cov = {"cov_type": "HC0"} if groups is None else {"cov_type": "cluster",
                                                      "cov_kwds": {"groups": group_codes(groups)[0]}}
    try:
        with warnings.catch_warnings(), np.errstate(over="ignore"):  # exp overflows on the way to separation
            warnings.simplefilter("error", PerfectSeparationWarning)
            result = model.fit(**cov)
    except (PerfectSeparationError, PerfectSeparationWarning):
        return "perfect separation: the covariates predict the verdict exactly, the coefficient is unbounded"
    except (ValueError, np.linalg.LinAlgError) as exc:
        return f"the regression cannot be fitted: {exc}"
    intervals = np.asarray(result.conf_int(alpha=1 - confidence))
    return [(float(value), (float(lo), float(hi))) for value, (lo, hi) in zip(result.params, intervals, strict=True)]


def length_controlled_win_rate(preference: Sequence[float] | np.ndarray, length_candidate: Sequence[float],
                               length_baseline: Sequence[float], groups=None, *, n_resamples: int = 1000,
                               seed: int = 0, confidence: float = 0.95) -> dict[str, Estimate]:
    """AlpacaEval 2's length-controlled win rate beside the raw one (Dubois et al. 2024).

    ``preference``: per comparison, 1 when the candidate won, 0 when the baseline did, 0.5 for a
    tie. The GLM is AlpacaEval's minimal one: logit P(candidate wins) = theta + phi *
    tanh(delta / sd(delta)), with delta = len(candidate) - len(baseline) (characters in
    AlpacaEval); the length-controlled win rate is its prediction at delta = 0, sigmoid(theta).
    AlpacaEval's published leaderboard also has a per-instruction difficulty term estimated over
    all its models and an L1 penalty towards them; with one candidate and no such pool, the
    minimal GLM is what applies. The interval is the GLM's (robust, cluster-robust with
    ``groups``) Wald interval of theta mapped through the sigmoid, which is monotone.

    Returns ``win_rate`` (raw, ties half), ``length_controlled_win_rate`` and ``length_coefficient``
    (phi, log-odds per unit of tanh of the standardised length difference)."""
    preference = np.asarray(preference, dtype=float)
    delta = np.asarray(length_candidate, dtype=float) - np.asarray(length_baseline, dtype=float)
    keep = np.isfinite(preference) & np.isfinite(delta)
    if not keep.any():
        raise ValueError("no comparison with both a preference and both lengths")
    kept_groups = _kept(groups, keep)
    raw = share(preference[keep], np.ones(int(keep.sum())), "win_rate", kept_groups, n_resamples=n_resamples,
                seed=seed, confidence=confidence, rule="ties count half")
    fitted = _fit(preference[keep], [np.tanh(_standardized(delta[keep]))], kept_groups, binary=True,
                  confidence=confidence)
    common: _Sample = {"level": "dataset", "n": raw.n, "n_groups": raw.n_groups}
    if isinstance(fitted, str):
        nan = float("nan")
        return {"win_rate": raw,
                "length_controlled_win_rate": Estimate("length_controlled_win_rate", value=nan, reason=fitted,
                                                       **common),
                "length_coefficient": Estimate("length_coefficient", value=nan, reason=fitted, **common)}
    (theta, (theta_lo, theta_hi)), (phi, phi_ci) = fitted

    def sigmoid(x: float) -> float:
        return float(1 / (1 + np.exp(-x)))

    return {"win_rate": raw,
            "length_controlled_win_rate": Estimate("length_controlled_win_rate", value=sigmoid(theta),
                                                   ci=(sigmoid(theta_lo), sigmoid(theta_hi)),
                                                   rule="win rate at equal length (GLM)", **common),
            "length_coefficient": Estimate("length_coefficient", value=phi, ci=phi_ci,
                                           rule="log-odds per tanh(SD of length difference)", **common)}
