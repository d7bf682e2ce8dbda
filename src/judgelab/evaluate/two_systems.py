"""Two systems, one decision: is the candidate worse than the baseline by more than a margin?

``compare_systems`` is the gate behind ``judgelab compare`` and ``judgelab.testing`` (docs/compare.md).
It estimates ``candidate - baseline`` with the estimators of ``judgelab evaluate``, from the same
inputs (items with ``system_id``, a judge's verdicts, optional human labels):

* ``corrected`` when human labels exist (prediction-powered: unbiased for the human difference),
  else ``judge`` (the judge's difference, with a warning: nothing corrects its bias); ``human``
  on request.
* **paired** when the two systems answer the same inputs (``group_id``: the usual CI case, one
  test set, two model versions). The unit is then an input, its value the difference of the two
  outputs' values, and the estimators of a single mean apply to it: judge-only bootstraps the
  inputs, human-only and corrected use the inputs whose *both* outputs carry a label. Pairing
  removes the inputs' own difficulty from the variance, which is what makes a CI gate usable with
  a few dozen prompts. **Unpaired** otherwise: each system's estimate as ``evaluate`` makes it,
  and the difference of the two (independent strata).

Decision: with the ``1 - alpha`` interval ``[low, high]`` of ``candidate - baseline``, the
candidate is ``worse`` when ``high < -margin`` (lower is better: ``low > margin``), i.e. a one-sided
test at level ``alpha / 2`` that it is worse by more than the margin; ``better`` when the interval
excludes 0 on the good side; ``not worse`` otherwise. Only ``worse`` fails.

Comparisons between systems (pairwise items with ``system_a``/``system_b``, verdicts a/b/tie) give
the same :class:`Comparison`, with the estimators of :mod:`judgelab.evaluate.preferences`:
**head-to-head** where the two systems meet (``difference``: the candidate's win rate against the
baseline minus 1/2, ties half a win, over their comparisons with each other), else **via others**
(the difference of the two systems' win probabilities against the opponents each met, from the
leaderboard of the part of the comparison graph that connects them). The decision is the same.

Here: ``compare_systems``, its checks, and the gate on comparisons. The result, :class:`Comparison`
(with its printing and ``plan``), and :func:`~judgelab.evaluate.gate.decide` live in gate.py; whether to
pair and the paired and unpaired differences of scores, in paired_difference.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from scipy import stats

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, term
from judgelab.evaluate import comparison_items, comparisons, preferences
from judgelab.evaluate.compare import pairwise
from judgelab.evaluate.gate import Comparison, _undecided, _undecided_fails, decide
from judgelab.evaluate.intervals import T_MIN_LABELS
from judgelab.evaluate.paired_difference import _difference_se, _paired, _pairing, _Settings, _unpaired
from judgelab.evaluate.sample_file import SampleFile
from judgelab.evaluate.systems import ALL, _item_problem, evaluate
from judgelab.metrics.align import items_of_one_kind
from judgelab.metrics.bootstrap import check_resamples

ESTIMATORS = ("auto", "corrected", "human", "judge")
PAIRINGS = ("auto", "paired", "unpaired")
JUDGE_ONLY_WARNING = ("judge-only has no bias correction: without human labels the interval covers the judge's "
                      "difference, not the humans'; label both outputs of a random sample of inputs to correct it")


class _Common(_Settings):
    """What :func:`compare_systems` passes on alike to the paired and the unpaired estimate."""

    n_resamples: int
    seed: int
    calibration: str


# -- the public entry point --------------------------------------------------------------------------
def compare_systems(items: Iterable[Item], judgments: Iterable[Judgment], *, baseline: str, candidate: str,
                    margin: float = 0.0, alpha: float = 0.05, higher_is_better: bool = True,
                    estimator: str = "auto", pairing: str = "auto", aspect: str | None = None,
                    judge: str | None = None, human: Mapping[str, Any] | None = None,
                    human_ids: Iterable[str] | str | None = None, sample: SampleFile | None = None,
                    calibration: str = "auto", target: str = "population", n_resamples: int = 1000, seed: int = 0,
                    skewness_correction: bool = True, sequential: bool = False,
                    fail_undecided: bool = False) -> Comparison:
    """Estimate ``candidate - baseline`` and decide whether the candidate is worse by more than ``margin``.

    Inputs as :func:`judgelab.evaluate.evaluate` takes them (``human``: {item id: value};
    ``human_ids``: the ids whose own human score is a label, or ``"all"``; ``sample``: how the
    labels were drawn). ``estimator``: ``auto`` (corrected with labels, judge-only without),
    ``corrected``, ``human``, ``judge``. ``pairing``: ``auto`` (paired when the systems share their
    inputs), ``paired`` (required: an error without shared inputs), ``unpaired``. ``calibration``,
    ``target``, ``skewness_correction``: as in :mod:`judgelab.evaluate.estimators`. ``sequential``:
    the labels were gathered in rounds and looked at (optional stopping): the interval is a confidence
    sequence over the labels in the order they were given, valid however the labelling was stopped
    (:mod:`judgelab.evaluate.sequential`). ``fail_undecided``: fail also when the interval cannot tell, i.e.
    pass only when it shows the candidate no worse than ``margin`` (a non-inferiority test; with few labels
    this fails until enough are labelled, where the default passes with a "not decided" warning).
    """
    _check_options(baseline, candidate, margin, alpha, estimator, pairing)
    items, kind = items_of_one_kind(items)
    if kind == "pairwise":
        return _compare_comparisons(items, judgments, baseline=baseline, candidate=candidate, margin=margin,
                                    alpha=alpha, higher_is_better=higher_is_better, estimator=estimator,
                                    pairing=pairing, judge=judge, human=human, human_ids=human_ids, sample=sample,
                                    target=target, seed=seed, sequential=sequential, fail_undecided=fail_undecided)
    if kind != "pointwise":
        raise ConfigError(f"compare takes items with a system_id or comparisons between systems; these are {kind} "
                          "items (compare TREC runs with judgelab evaluate --runs)")
    judgments = judgments if isinstance(judgments, Mapping) else list(judgments)  # a mapping: several judges
    kept, human, human_ids, sample = _two_systems(items, baseline, candidate, human, human_ids, sample)
    built = _item_problem(kept, judgments, aspect, judge, human, human_ids)
    has_labels = built.labelled is not None and bool(built.labelled.any())
    chosen, estimator_reason = _estimator(estimator, has_labels, built.label_source, sequential)
    _check_sequential(sequential, chosen)
    if chosen == "judge":  # its interval is a percentile one
        check_resamples(n_resamples, 1 - alpha, f"{term('bootstrap')}, n_resamples")
    paired, pairing_reason = _pairing(kept, baseline, candidate, pairing, built.labelled if has_labels else None,
                                      chosen, sample)
    common: _Common = {"n_resamples": n_resamples, "seed": seed, "confidence": 1 - alpha,
                       "skewness_correction": skewness_correction, "calibration": calibration, "target": target,
                       "intervals": "sequence" if sequential else "auto"}
    if paired:
        (value, low, high, n, n_labelled, reason, se, kind), own = _paired(kept, built, baseline, candidate, chosen,
                                                                           **common)
    else:
        report = evaluate(kept, judgments, aspect=aspect, judge=judge, human=human, human_ids=human_ids,
                          sample=sample, **common)
        value, low, high, n, n_labelled, reason, se, kind = _unpaired(report.estimates[chosen], baseline, candidate)
        own = bool(set(report.estimates[chosen].info.get("labels_own_narrower") or ()) & {baseline, candidate})
    if reason is not None or not (math.isfinite(low) and math.isfinite(high)):
        raise ConfigError(f"the {chosen} estimate of {candidate} - {baseline} has no interval: "
                          f"{reason or 'no verdicts to compare'}")
    warnings = [JUDGE_ONLY_WARNING] if chosen == "judge" else []
    if own and chosen == "corrected":
        warnings.append("corrected is the labels' own estimate here: the judge's verdicts would have widened the "
                        "interval (docs/evaluate.md)")
    if built.coverage.get("without_verdict"):
        warnings.append(f"{built.coverage['without_verdict']} of {len(kept)} items have no judge verdict "
                        "(left out of the judge's means)")
    decision = decide(low, high, margin, higher_is_better, fail_undecided)
    undecided = _undecided(value, margin, higher_is_better, n_labelled, kind) if decision == "not worse" else None
    warnings += [undecided] if undecided else []
    warnings += [_undecided_fails()] if decision == "undecided" else []
    return Comparison(baseline, candidate, value, low, high, chosen, estimator_reason, paired, pairing_reason, n,
                      n_labelled, margin, alpha, higher_is_better, decision, built.aspect, tuple(warnings),
                      se=_finite(se), interval=SEQUENCE if sequential else kind)


SEQUENCE = "confidence-sequence"  # Comparison.interval under --sequential


def _check_sequential(sequential: bool, estimator: str) -> None:
    if sequential and estimator == "judge":
        raise ConfigError(f"{term('sequential')} reads human labels in the order they were given: give "
                          f"{term('human')} or {term('human_ids')} (the judge-only interval has no labels to stop on)")


# -- comparisons between systems (system_a/system_b, verdicts a/b/tie) ---------------------------------
PAIRWISE_JUDGE_WARNING = ("judge-only has no bias correction: without human labels the interval covers the judge's "
                          "win rate, not the humans'; label a random sample of the comparisons to correct it")


def _compare_comparisons(items: list[Item], judgments: Iterable[Judgment], *, baseline: str, candidate: str,
                         margin: float, alpha: float, higher_is_better: bool, estimator: str, pairing: str,
                         judge: str | None, human, human_ids, sample: SampleFile | None, target: str,
                         seed: int, sequential: bool = False, fail_undecided: bool = False) -> Comparison:
    """The gate on comparisons: head-to-head (the candidate's win rate against the baseline minus
    1/2, ties half) where the two meet, else via the other systems (the difference of their win
    probabilities). Estimators and intervals are :mod:`judgelab.evaluate.preferences`'."""
    _check_pairwise_options(items, higher_is_better, sample, target)
    data, coverage, source, _ = comparison_items.comparison_data(items, judgments, judge=judge, human=human,
                                                                 human_ids=human_ids, sample=sample)
    _require_systems(list(data.systems), baseline, candidate)
    chosen, estimator_reason = _estimator(estimator, bool(data.labelled.any()), source, sequential)
    _check_sequential(sequential, chosen)
    system_intervals = "sequence" if sequential else "auto"
    if not data.judged.any():
        raise ConfigError("no comparison has a judge verdict")
    b, c = data.systems.index(baseline), data.systems.index(candidate)
    meet = ((data.a == b) & (data.b == c)) | ((data.a == c) & (data.b == b))
    rows = meet & (data.judged if chosen == "judge" else data.labelled)
    enough = int(rows.sum()) >= comparisons.MIN_LABELS
    met = (f"{candidate} and {baseline} meet in {int(meet.sum())} comparison(s)"
           + ("" if chosen == "judge" else f", {int(rows.sum())} labelled"))
    if pairing == "paired" and not enough:
        raise ConfigError(f"{term('pairing')} paired (head-to-head): {met}; an interval needs {comparisons.MIN_LABELS}")
    confidence = 1 - alpha
    interval = interval_why = None
    informative, informative_why = _head_to_head_informative(data, b, c, rows, chosen)
    if pairing == "auto" and enough and not informative:
        enough, met = False, f"{met}; {informative_why}"
    if enough and pairing != "unpaired":
        value, low, high, reason, n, n_labelled, interval, interval_why, se = _head_to_head(
            data.restricted(meet), baseline, candidate, chosen, target, confidence, system_intervals)
        basis, measure = "head-to-head", f"win rate of {candidate} against {baseline} - 1/2"
        why = (f"the {n} comparisons between {candidate} and {baseline}"
               + ("" if chosen == "judge" else f" ({n_labelled} labelled)") + "; ties count half")
    else:
        value, low, high, reason, n, n_labelled, se = _via_others(data, b, c, chosen, target, confidence, seed,
                                                                  system_intervals)
        basis, measure = "via others", f"win probability of {candidate} - that of {baseline}"
        fallback = "chosen with --pairing unpaired" if pairing == "unpaired" else (
            met if "via the others" in met else f"{met}, too few for head-to-head")
        why = (f"{fallback}: each one's win probability against the opponents it met ({n} comparisons, {n_labelled} "
                "labelled; ties half); comparable as far as the two met opponents alike")
    if reason is not None or not (math.isfinite(low) and math.isfinite(high)):
        raise ConfigError(f"the {chosen} estimate of {measure} has no interval: {reason or 'no verdicts to compare'}"
                          + ("" if basis == "head-to-head" else f" ({fallback})"))
    warnings = [PAIRWISE_JUDGE_WARNING] if chosen == "judge" else []
    if coverage.get("without_verdict"):
        warnings.append(f"{coverage['without_verdict']} of {data.n} comparisons have no judge verdict "
                        "(left out of judge-only, a tie in the corrected estimate)")
    if interval_why:
        why += f"; {interval_why}"
    decision = decide(low, high, margin, fail_undecided=fail_undecided)
    warnings += [_undecided_fails()] if decision == "undecided" else []
    return Comparison(baseline, candidate, float(value), float(low), float(high), chosen, estimator_reason,
                      basis == "head-to-head", why, n, n_labelled, margin, alpha, True,
                      decision, None, tuple(warnings), basis=basis, measure=measure,
                      interval=SEQUENCE if sequential else interval, se=_finite(se))


def _head_to_head_informative(data, b: int, c: int, rows: np.ndarray, estimator: str) -> tuple[bool, str]:
    """Head-to-head only when it rests on at least half as many verdicts as the comparison via the others
    does, and on at least T_MIN_LABELS: a rule on counts, fixed in advance. Via the others, the difference
    of two win probabilities averages each system's own verdicts, which weigh like ``n_b n_c / (n_b + n_c)``
    of them (two means' variances add); a head-to-head win rate shows a gap in strength at least as large
    (under Bradley-Terry, a strength gap d moves it by about d/4, and a win probability against other
    opponents by d p(1 - p) <= d/4), so it is preferred down to half that count. With 200 labels among 20
    systems a pair meets in one or two labelled comparisons while each system has about twenty."""
    counted = data.judged if estimator == "judge" else data.labelled
    n_b = int((counted & ((data.a == b) | (data.b == b))).sum())
    n_c = int((counted & ((data.a == c) | (data.b == c))).sum())
    effective = n_b * n_c / (n_b + n_c) if n_b and n_c else 0.0
    n_head = int(rows.sum())
    others = n_b + n_c - 2 * n_head  # verdicts with a third system
    if others == 0 or (n_head >= T_MIN_LABELS and n_head >= effective / 2):
        return True, ""
    return False, (f"via the others: {n_head} head-to-head against an effective {effective:.0f} via their "
                   f"{n_b} and {n_c} verdicts with all opponents (head-to-head needs half as many, and "
                   f"{T_MIN_LABELS})")


def _check_pairwise_options(items: list[Item], higher_is_better: bool, sample: SampleFile | None,
                            target: str) -> None:
    if items[0].system_a is None:
        raise ConfigError("pairwise items without system_a/system_b compare two outputs, not systems; name the "
                          "systems compared (system_a, system_b) to compare them")
    if not higher_is_better:
        raise ConfigError(f"{term('higher_is_better=False', '--lower-is-better')} is for scores: on comparisons the "
                          "difference is a win rate, and higher "
                          "is better")
    if sample is not None and sample.method not in (None, "stratified", "uniform"):
        raise ConfigError(f"the sample was drawn {sample.method}; pairwise estimates need a uniform random sample "
                          "of the comparisons")
    if target not in preferences.TARGETS:
        raise ConfigError(f"{term('target')} {target!r}: choose {', '.join(preferences.TARGETS)}")


def _head_to_head(head, baseline: str, candidate: str, estimator: str, target: str, confidence: float,
                  system_intervals: str = "auto"):
    """The candidate's win rate against the baseline minus 1/2, over their comparisons with each other
    (``head``): preferences' win rate against a baseline, one system left; where the verdicts show
    no spread, the exact interval of :func:`_edge_interval` (not with a confidence sequence: that
    one holds at a fixed number of labels only). The last two: the interval's kind (None: the usual
    one) and why."""
    edge = None if system_intervals == "sequence" else _edge_interval(head, candidate, estimator, confidence)
    if edge is not None:
        value, low, high, n, n_labelled, why = edge
        return value, low, high, None, n, n_labelled, EXACT, why, None
    result = preferences.estimate(head, estimator, estimand="baseline-win-rate", baseline=baseline, target=target,
                                  confidence=confidence, system_intervals=system_intervals)
    k = head.systems.index(candidate)
    return (result.value[k] - 0.5, result.ci[k, 0] - 0.5, result.ci[k, 1] - 0.5, result.reason[k], head.n,
            int(result.n_labelled[k]), None, None, float(result.se[k]))


EXACT = "Clopper-Pearson"


def _edge_interval(head, candidate: str, estimator: str, confidence: float):
    """Where the verdicts the estimator uses all say the same (the candidate lost, or won, every one of
    them), the t interval has no width and no meaning; this gives an exact binomial one instead:
    ``(value, low, high, n, n_labelled, why)`` with the values minus 1/2, or None where the verdicts
    show spread (or their weights differ: an unequal-probability sample).

    Clopper-Pearson on the win rate, with ties resolved against the candidate for the lower bound and
    for it for the upper: whatever a tie "really" is (a fair coin for each, ``B ~ Bernoulli(y)``, has
    the same mean), the number of wins ``X`` lies between the clear wins and the verdicts not lost, and
    the interval contains Clopper-Pearson's on ``X``, whose coverage is exact. Win/loss verdicts: the
    plain Clopper-Pearson interval. Corrected: with constant human verdicts the power-tuned judge
    weight is 0 (the verdicts carry nothing the judge could predict), the estimate is the labelled win
    rate, and this interval, valid for the human win rate from the labels alone, is valid for it:
    conservative, as it takes nothing from the judge. Binomial, it ignores the finite-population
    correction ``target="items"`` would make, which could only narrow it."""
    k = head.systems.index(candidate)
    verdicts = head.judge if estimator == "judge" else head.human
    rows = np.isfinite(verdicts)
    if int(rows.sum()) < comparisons.MIN_LABELS:
        return None
    own = np.where(head.a == k, verdicts, 1 - verdicts)[rows]
    weights = None if head.probability is None or estimator == "judge" else head.probability[rows]
    if np.ptp(own) > 0 or (weights is not None and np.ptp(weights) > 0):
        return None
    n = len(own)
    wins, not_lost = int(np.sum(own >= 1)), int(np.sum(own > 0))
    low = stats.binomtest(wins, n).proportion_ci(confidence, method="exact").low
    high = stats.binomtest(not_lost, n).proportion_ci(confidence, method="exact").high
    who = "judged" if estimator == "judge" else "labelled"
    outcome = {1.0: "wins", 0.0: "losses", 0.5: "ties"}.get(float(own[0]), f"preferences of {own[0]:.3g}")
    why = (f"its {n} {who} verdicts are all {outcome} of {candidate}: no spread for a t interval, so the "
           f"interval is {EXACT}'s exact one on the {who} win rate"
           + ("" if estimator != "corrected" else " (the tuned judge weight is 0: the labels alone)"))
    return (float(own[0]) - 0.5, low - 0.5, high - 0.5, head.n, 0 if estimator == "judge" else n, why)


def _via_others(data, b: int, c: int, estimator: str, target: str, confidence: float, seed: int,
                system_intervals: str = "auto"):
    """The difference of the two systems' win probabilities, over the part of the comparison graph that
    connects them: the estimator's win probabilities and their pairwise difference, as ``rank_systems``
    gives them in ``pairs`` (without the rest of a leaderboard: rank sets, shrunk, the recommended ranking)."""
    parts = comparisons.components(data)
    part = next(p for p in parts if data.systems[b] in p)
    if data.systems[c] not in part:
        other = next(p for p in parts if data.systems[c] in p)
        raise ConfigError(f"{data.systems[c]!r} and {data.systems[b]!r} never meet, directly or through other "
                          f"systems: the comparisons split them into separate groups ({comparisons.group_text(part)} "
                          f"and {comparisons.group_text(other)})")
    inside = np.isin(data.a, [data.systems.index(s) for s in part])
    connected = data.restricted(inside)
    labelled = int(connected.labelled.sum())
    if estimator != "judge" and labelled < comparisons.MIN_LABELS:
        return (np.nan, np.nan, np.nan, f"{labelled} labelled comparison(s): an interval needs "
                f"{comparisons.MIN_LABELS}", 0, labelled, None)
    estimates = preferences.estimate(connected, estimator, estimand="win-prob", target=target, confidence=confidence,
                                     seed=seed, system_intervals=system_intervals)
    pairs = pairwise(estimates)
    i, j = connected.systems.index(data.systems[c]), connected.systems.index(data.systems[b])
    involved = np.isin(connected.a, [i, j]) | np.isin(connected.b, [i, j])
    return (pairs.difference[i, j], pairs.low[i, j], pairs.high[i, j], estimates.reason[i] or estimates.reason[j],
            int(involved.sum()), int((involved & connected.labelled).sum()), _difference_se(estimates, i, j))


def _require_systems(systems: list[str], baseline: str, candidate: str) -> None:
    missing = [name for name in (baseline, candidate) if name not in systems]
    if missing:
        shown = ", ".join(systems[:10]) + (f" and {len(systems) - 10} more" if len(systems) > 10 else "")
        raise ConfigError(f"system {missing[0]!r} is not in the data (systems come from each item's system_id, or "
                          f"system_a/system_b of comparisons; here: {shown or 'none named'})")


def _check_options(baseline: str, candidate: str, margin: float, alpha: float, estimator: str, pairing: str) -> None:
    if baseline == candidate:
        raise ConfigError(f"{term('baseline')} and {term('candidate')} are both {baseline!r}: compare two different "
                          "systems")
    if not (math.isfinite(margin) and margin >= 0):
        raise ConfigError(f"{term('margin')} {margin}: give 0 or more (how much worse the candidate may be, on the "
                          "score's scale)")
    if not 0 < alpha < 1:
        raise ConfigError(f"{term('alpha')} {alpha}: give a level between 0 and 1, e.g. 0.05")
    if estimator not in ESTIMATORS:
        raise ConfigError(f"{term('estimator')} {estimator!r}: choose {', '.join(ESTIMATORS)}")
    if pairing not in PAIRINGS:
        raise ConfigError(f"{term('pairing')} {pairing!r}: choose {', '.join(PAIRINGS)}")


def _two_systems(items: list[Item], baseline: str, candidate: str, human, human_ids, sample):
    """The two systems' items, and the labels, ids and sample restricted to them (ids of other systems
    are fine; ids of no item at all are an error, as in ``evaluate``)."""
    _require_systems(sorted({str(item.system_id) for item in items if item.system_id is not None}), baseline, candidate)
    all_ids = {item.id for item in items}
    kept = [item for item in items if item.system_id in (baseline, candidate)]
    ids = {item.id for item in kept}
    for given in (human, None if human_ids == ALL else human_ids, sample.ids if sample else None):
        unknown = [i for i in (given or ()) if i not in all_ids]
        if unknown:
            raise ConfigError(f"{len(unknown)} labelled id(s) are not items of the data: "
                              f"{', '.join(map(repr, unknown[:5]))}")
    if human is not None:
        human = {k: v for k, v in human.items() if k in ids}
    if human_ids is not None and human_ids != ALL:
        human_ids = [i for i in human_ids if i in ids]
    if sample is not None:
        keep = [k for k, i in enumerate(sample.ids) if i in ids]
        sample = replace(sample, ids=tuple(sample.ids[k] for k in keep), probabilities=None
                         if sample.probabilities is None else tuple(sample.probabilities[k] for k in keep))
    return kept, human, human_ids, sample


def _estimator(requested: str, has_labels: bool, source: str | None, sequential: bool = False) -> tuple[str, str]:
    if requested == "auto":
        if has_labels and sequential:
            return "human", (f"human labels ({source}), read as a confidence sequence: the labels' own (a judge widens "
                             "a sequence's range before it narrows its variance; --estimator corrected to use it)")
        if has_labels:
            return "corrected", (f"human labels ({source}): the judge's verdicts corrected by its measured error on "
                                 "them (prediction-powered, unbiased for the human difference)")
        return "judge", "no human labels: the judge's verdicts alone"
    if requested != "judge" and not has_labels:
        raise ConfigError(f"{term('estimator')} {requested} needs human labels: give {term('human')} or "
                          f"{term('human_ids')}")
    return requested, f"chosen with --estimator {requested}"


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


# Comparison and decide live in evaluate/gate.py; importable from here too, where the gate's callers found them
__all__ = ["Comparison", "compare_systems", "decide"]
