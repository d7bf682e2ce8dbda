"""Two systems' scores, ``candidate - baseline``, as :func:`judgelab.evaluate.two_systems.compare_systems`
estimates it: whether to pair (:func:`_pairing`: each system answers each input once, they share inputs,
and, for the label-based estimators, enough inputs have both outputs labelled), the paired difference (one
mean over the shared inputs, each the difference of its two outputs: :func:`_paired`) and the unpaired one
(the difference of the two systems' independent estimates: :func:`_unpaired`), each with its design-based
standard error (:func:`_difference_se`, what ``Comparison.plan`` scales).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from judgelab.data.item import Item
from judgelab.errors import ConfigError, term
from judgelab.evaluate.compare import pairwise
from judgelab.evaluate.design import stratified_design
from judgelab.evaluate.estimators import corrected, human_only, judge_only
from judgelab.evaluate.problem import from_items
from judgelab.evaluate.sample_file import SampleFile
from judgelab.evaluate.system_estimates import SystemEstimates

MIN_PAIRS = 2  # an interval needs two paired inputs (labelled ones, for the label-based estimators)


class _Settings(TypedDict):
    """The settings the label-based estimators share (``human_only(..., **options)``, ``corrected``)."""

    confidence: float
    skewness_correction: bool
    target: str
    intervals: str


def _inputs_of(items: list[Item], system: str) -> dict[str, int] | None:
    """{input (group) id: position in ``items``} of one system; None when it answers an input twice."""
    where: dict[str, int] = {}
    for k, item in enumerate(items):
        if item.system_id == system:
            if item.group in where:
                return None
            where[item.group] = k
    return where


def _pairing(items: list[Item], baseline: str, candidate: str, requested: str, labelled: np.ndarray | None,
             estimator: str, sample: SampleFile | None) -> tuple[bool, str]:
    """Whether to pair, and why. Paired needs each system to answer each input once, inputs in
    common, and (label-based estimators) inputs with both outputs labelled under a uniform design."""
    if requested == "unpaired":
        return False, "chosen with --pairing unpaired: the two systems' estimates are independent"
    base, cand = _inputs_of(items, baseline), _inputs_of(items, candidate)
    if base is None or cand is None:
        return _unpairable("a system answers the same input (group_id) more than once", requested)
    shared = sorted(set(base) & set(cand))
    both = None  # label-based estimators: the shared inputs with both outputs labelled
    if estimator != "judge" and labelled is not None:
        both = sum(bool(labelled[base[g]] and labelled[cand[g]]) for g in shared)
    label_based = both is not None
    problem = None
    if len(shared) < MIN_PAIRS:
        problem = f"the two systems share {len(shared)} input(s) (group_id); pairing needs {MIN_PAIRS}"
    elif both is not None and both < MIN_PAIRS:
        problem = f"{both} shared input(s) have both outputs labelled; a paired interval needs {MIN_PAIRS}"
    elif label_based and sample is not None and sample.method != "stratified":
        problem = f"the labels were drawn by a {sample.method} design, whose pair probabilities are not recorded"
    if problem is not None:
        return _unpairable(problem, requested)
    left_out = len(base) + len(cand) - 2 * len(shared)
    if requested == "auto" and 2 * len(shared) < min(len(base), len(cand)):
        return False, (f"unpaired: only {len(shared)} of their inputs are shared (pairing would leave out "
                       f"{left_out} items)")
    why = "chosen with --pairing paired" if requested == "paired" else "the two systems answer the same inputs"
    if any(items[k].grouped_by == "text" for k in base.values()):
        why += " (matched by their text: the items have no group_id)"
    text = f"{why}: {len(shared)} inputs, each the difference of its two outputs"
    if left_out:
        text += f"; {left_out} items of inputs only one system answers are left out"
    if label_based:
        text += f"; {both} inputs have both outputs labelled"
    return True, text


def _unpairable(problem: str, requested: str) -> tuple[bool, str]:
    """:func:`_pairing`'s answer when ``problem`` rules pairing out: unpaired, or an error if paired was asked for."""
    if requested == "paired":
        raise ConfigError(f"{term('pairing')} paired: {problem}")
    return False, f"unpaired: {problem}"


def _paired(items: list[Item], built, baseline: str, candidate: str, estimator: str, *, n_resamples: int, seed: int,
            confidence: float, skewness_correction: bool, calibration: str, target: str, intervals: str = "auto"):
    """The difference as one mean over shared inputs: judge and human values are output differences
    (an input counts as labelled, in the order of labels, once its second output has its label)."""
    base, cand = _inputs_of(items, baseline), _inputs_of(items, candidate)
    if base is None or cand is None:  # _pairing paired them: each answers an input once (set(None): a TypeError)
        raise TypeError("a system answers the same input more than once: the two cannot be paired")
    shared = sorted(set(base) & set(cand))
    rows_b, rows_c = [base[g] for g in shared], [cand[g] for g in shared]
    rows = np.arange(built.problem.n_units)
    per_item_judge = built.problem.judge[rows, built.problem.strata]  # items: one system (column) each
    judge = per_item_judge[rows_c] - per_item_judge[rows_b]
    human = np.full(len(shared), np.nan)
    labelled = np.zeros(len(shared), dtype=bool)
    if built.labelled is not None:
        per_item_human = built.problem.human[rows, built.problem.strata]
        labelled = built.labelled[rows_b] & built.labelled[rows_c]
        human = np.where(labelled, per_item_human[rows_c] - per_item_human[rows_b], np.nan)
    name = f"{candidate} - {baseline}"
    scale = built.problem.scale
    spread = None if scale is None else (scale[0] - scale[1], scale[1] - scale[0])  # a difference of two ratings
    problem = from_items(shared, [name] * len(shared), shared, judge, human, spread)
    if built.problem.judges is not None:  # a panel: each judge's difference of the two outputs
        per_item = built.problem.judges[rows, built.problem.strata]  # (items, judges)
        problem = problem.with_judges((per_item[rows_c] - per_item[rows_b])[:, None, :], built.problem.judge_names)
    if estimator == "judge":
        estimates = judge_only(problem, n_resamples=n_resamples, seed=seed, confidence=confidence)
    else:
        given = built.notes.get("order")
        order = None if given is None else np.maximum(given[rows_b], given[rows_c])
        design = stratified_design(problem, labelled, order)
        labelled_problem = problem.with_human(np.where(labelled[:, None], problem.human, np.nan))
        options: _Settings = {"confidence": confidence, "skewness_correction": skewness_correction,
                              "target": target, "intervals": intervals}
        estimates = (human_only(labelled_problem, design, **options) if estimator == "human" else
                     corrected(labelled_problem, design, calibration=calibration, seed=seed, **options))
    return ((float(estimates.value[0]), float(estimates.ci[0, 0]), float(estimates.ci[0, 1]), len(shared),
             int(estimates.n_labelled[0]), estimates.reason[0], float(estimates.se[0]),
             _betting(estimates.info.get("per_system", ()))), bool(estimates.info.get("labels_own_narrower")))


def _unpaired(estimates: SystemEstimates, baseline: str, candidate: str):
    """``candidate - baseline`` from two systems' independent estimates (``pairwise``'s row)."""
    b, c = estimates.systems.index(baseline), estimates.systems.index(candidate)
    pairs = pairwise(estimates)
    reason = estimates.reason[c] or estimates.reason[b]
    methods = estimates.info.get("per_system") or ()
    return (float(pairs.difference[c, b]), float(pairs.low[c, b]), float(pairs.high[c, b]),
            int(estimates.n_units[b] + estimates.n_units[c]), int(estimates.n_labelled[b] + estimates.n_labelled[c]),
            reason, _difference_se(estimates, c, b), _betting([methods[k] for k in (b, c)] if methods else ()))


def _betting(methods) -> str | None:
    """``"betting"`` when a system's interval behind the difference is a betting one (few labels, or a mean
    near an end of the scale), for the summary to say; None otherwise."""
    return "betting" if "betting" in methods else None


def _difference_se(estimates: SystemEstimates, i: int, j: int) -> float | None:
    """The design-based standard error of ``value[i] - value[j]`` (what a plan scales), if there is one."""
    if estimates.cov is not None:
        return float(np.sqrt(max(estimates.cov[i, i] + estimates.cov[j, j] - 2 * estimates.cov[i, j], 0.0)))
    if estimates.replicates is not None:
        return float(np.nanstd(estimates.replicates[:, i] - estimates.replicates[:, j], ddof=1))
    return None
