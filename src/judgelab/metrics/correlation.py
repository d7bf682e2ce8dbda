"""Correlation with human scores at the dataset, group and system levels (specs/metrics.md).

Point estimates are scipy's (``pearsonr``, ``spearmanr``, ``kendalltau`` tau-b). Intervals are
percentile cluster-bootstrap intervals over groups (items when there are no groups), with the
resampled statistics computed exactly by :mod:`judgelab.metrics.weighted` for the dataset level,
as means of fixed per-group values for the group level, and from resampled per-system means for
the system level.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats

from judgelab.metrics.bootstrap import GroupBootstrap, Resampling, group_codes, percentile_ci
from judgelab.metrics.results import (
    CONSTANT_HUMAN,
    CONSTANT_JUDGE,
    FEWER_THAN_2,
    Estimate,
    Skipped,
    undefined_reason,
)
from judgelab.metrics.weighted import PairedSample

METHODS = ("pearson", "spearman", "kendall")
LEVELS = ("dataset", "group", "system")


def correlation(method: str, human, judge) -> float:
    """scipy's coefficient, or NaN (without a warning) when it is undefined."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if undefined_reason(human, judge):
        return float("nan")
    if method == "pearson":
        return float(stats.pearsonr(human, judge).statistic)
    if method == "spearman":
        return float(stats.spearmanr(human, judge).statistic)
    if method == "kendall":
        return float(stats.kendalltau(human, judge, variant="b").statistic)
    raise ValueError(f"unknown correlation {method!r}; choose from {', '.join(METHODS)}")


def _check_methods(methods: Sequence[str]) -> tuple[str, ...]:
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown correlation {unknown[0]!r}; choose from {', '.join(METHODS)}")
    return tuple(methods)


def _codes(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Group codes, or one group per item when there are no groups (a plain item bootstrap)."""
    if groups is None:
        return np.arange(n), np.arange(n).astype(str)
    return group_codes(groups)


def _estimates(level, methods, values, resamples, confidence, **common) -> dict[str, Estimate]:
    return {
        method: Estimate(statistic=method, level=level, value=float(values[k]),
                         ci=percentile_ci(resamples[:, k], confidence) if resamples is not None else None,
                         resamples=resamples[:, k] if resamples is not None else None, **common)
        for k, method in enumerate(methods)
    }


def dataset_level(human, judge, groups=None, *, methods: Sequence[str] = METHODS, n_resamples: int = 1000,
                  seed: int = 0, confidence: float = 0.95) -> dict[str, Estimate]:
    """One correlation over all items; the bootstrap resamples groups when given."""
    methods = _check_methods(methods)
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    codes, labels = _codes(groups, len(human))
    common = {"n": len(human), "n_groups": len(labels)}
    reason = undefined_reason(human, judge)
    if reason:
        return _estimates("dataset", methods, np.full(len(methods), np.nan), None, confidence,
                          reason=reason, **common)
    sample = PairedSample(human, judge, codes, len(labels))
    resamples = GroupBootstrap(len(labels), n_resamples, seed).replicate(
        lambda counts: sample.replicate(counts, methods))
    values = [correlation(m, human, judge) for m in methods]
    return _estimates("dataset", methods, values, resamples, confidence, **common)


def rowwise(method: str, human_rows: np.ndarray, judge_rows: np.ndarray) -> np.ndarray:
    """scipy's coefficient for each row pair (along axis 1); NaN for rows where it is undefined.

    Spearman is Pearson on average ranks, which is how ``spearmanr`` computes it too.
    """
    if method == "spearman":
        human_rows, judge_rows = stats.rankdata(human_rows, axis=1), stats.rankdata(judge_rows, axis=1)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")  # constant rows give NaN, which is what we want
        if method == "kendall":
            return np.asarray(stats.kendalltau(human_rows, judge_rows, axis=1).statistic, dtype=float)
        return np.asarray(stats.pearsonr(human_rows, judge_rows, axis=1).statistic, dtype=float)


def _groups_by_size(codes: np.ndarray, n_groups: int):
    """Yield (group codes, item index matrix) for the groups of each size, to correlate by rows."""
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups)
    starts = np.cumsum(sizes) - sizes
    for size in np.unique(sizes):
        same = np.flatnonzero(sizes == size)
        yield same, order[starts[same][:, None] + np.arange(size)]


def _skip_reasons(human_rows: np.ndarray, judge_rows: np.ndarray) -> np.ndarray:
    reasons = np.full(len(human_rows), None, dtype=object)
    reasons[np.ptp(judge_rows, axis=1) == 0] = CONSTANT_JUDGE
    reasons[np.ptp(human_rows, axis=1) == 0] = CONSTANT_HUMAN
    if human_rows.shape[1] < 2:
        reasons[:] = FEWER_THAN_2
    return reasons


def group_skip_reasons(human: np.ndarray, judge: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group code: why its correlation is undefined (fewer than 2 items, constant human or
    judge), or None when it can be computed."""
    reasons = np.full(n_groups, None, dtype=object)
    for same, items in _groups_by_size(codes, n_groups):
        reasons[same] = _skip_reasons(human[items], judge[items])
    return reasons


def groups_both_score(human, judge, other, groups) -> tuple[np.ndarray, dict[str, int]]:
    """Items of the groups where both ``judge`` and ``other`` have a defined correlation, and how
    many groups were left out because of each side (``judge``, ``other``; a group can count for both),
    of the data (``data``: fewer than 2 items or constant human scores), and how many one side could
    score but the other could not (``one_side``: what comparing each on its own groups would mix up)."""
    human, judge, other = (np.asarray(v, dtype=float) for v in (human, judge, other))
    codes, labels = group_codes(groups)
    mine = group_skip_reasons(human, judge, codes, len(labels))
    theirs = group_skip_reasons(human, other, codes, len(labels))
    data = np.isin(mine, [FEWER_THAN_2, CONSTANT_HUMAN])
    dropped = {"data": int(data.sum()), "judge": int(((mine == CONSTANT_JUDGE) & ~data).sum()),
               "other": int(((theirs == CONSTANT_JUDGE) & ~data).sum())}
    usable = (mine == None) & (theirs == None)  # noqa: E711
    dropped["one_side"] = int(((mine == None) != (theirs == None)).sum())  # noqa: E711
    return usable[codes], dropped


def group_level(human, judge, groups, *, methods: Sequence[str] = METHODS, n_resamples: int = 1000,
                seed: int = 0, confidence: float = 0.95) -> dict[str, Estimate]:
    """Correlate within each group, then average over the groups where it is defined.

    Groups with fewer than 2 items or a constant side are skipped and reported. The bootstrap
    resamples all groups; a resample's value is the mean over its defined groups.
    """
    methods = _check_methods(methods)
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    codes, labels = group_codes(groups)
    per_group = np.zeros((len(labels), len(methods)))
    reasons = group_skip_reasons(human, judge, codes, len(labels))
    for same, items in _groups_by_size(codes, len(labels)):
        ok = reasons[same] == None  # noqa: E711 (element-wise comparison)
        if ok.any():
            rows_h, rows_j = human[items[ok]], judge[items[ok]]
            per_group[same[ok]] = np.stack([rowwise(m, rows_h, rows_j) for m in methods], axis=1)
    used = reasons == None  # noqa: E711
    skipped = tuple(Skipped(str(labels[g]), reasons[g]) for g in np.flatnonzero(~used))
    common = {"n": int(used[codes].sum()), "n_groups": int(used.sum()), "skipped": skipped}
    if not used.any():
        return _estimates("group", methods, np.full(len(methods), np.nan), None, confidence,
                          reason="no group with 2 or more items and varying scores", **common)

    def mean_over_drawn_groups(counts):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts @ per_group) / (counts @ used.astype(float))[:, None]

    resamples = GroupBootstrap(len(labels), n_resamples, seed).replicate(mean_over_drawn_groups)
    values = per_group[used].mean(axis=0)
    return _estimates("group", methods, values, resamples, confidence, **common)


def _per_system_row(method: str, human_rows: np.ndarray, judge_rows: np.ndarray) -> np.ndarray:
    """Row-wise correlation of resampled system means; a system none of whose groups was drawn
    has NaN means and is left out of that resample."""
    if np.isfinite(human_rows).all():
        return rowwise(method, human_rows, judge_rows)
    return np.array([correlation(method, h[np.isfinite(h)], j[np.isfinite(h)])
                     for h, j in zip(human_rows, judge_rows, strict=True)])


MIN_SYSTEMS_FOR_INTERVAL = 3
TWO_SYSTEMS = ("2 systems: two means correlate at +1 or -1 whatever the data, so there is no interval "
               "(a system-level correlation needs 3 systems or more)")


def system_level(human, judge, systems, groups=None, *, methods: Sequence[str] = METHODS,
                 n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict[str, Estimate]:
    """Average each system's human and judge scores over its items, then correlate the means.

    ``n`` is the number of systems. The bootstrap resamples groups (the sources systems answer)
    and recomputes every system's means from the drawn groups.
    """
    methods = _check_methods(methods)
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    system_codes, system_labels = group_codes(systems)
    codes, labels = _codes(groups, len(human))
    n_systems = len(system_labels)
    sums = {name: np.zeros((len(labels), n_systems)) for name in ("human", "judge", "items")}
    for name, column in (("human", human), ("judge", judge), ("items", np.ones_like(human))):
        np.add.at(sums[name], (codes, system_codes), column)
    item_totals = sums["items"].sum(axis=0)
    human_means, judge_means = sums["human"].sum(axis=0) / item_totals, sums["judge"].sum(axis=0) / item_totals
    common = {"n": n_systems, "n_groups": len(labels)}
    reason = "fewer than 2 systems" if n_systems < 2 else undefined_reason(human_means, judge_means)
    if reason:
        return _estimates("system", methods, np.full(len(methods), np.nan), None, confidence,
                          reason=reason, **common)

    def resampled(counts):
        with np.errstate(invalid="ignore", divide="ignore"):
            items = counts @ sums["items"]
            h, j = (counts @ sums["human"]) / items, (counts @ sums["judge"]) / items
        return np.stack([_per_system_row(m, h, j) for m in methods], axis=1)

    values = [correlation(m, human_means, judge_means) for m in methods]
    if n_systems < MIN_SYSTEMS_FOR_INTERVAL:  # two points correlate at +1 or -1 in every resample: no interval
        return _estimates("system", methods, values, None, confidence, rule=TWO_SYSTEMS, **common)
    resamples = GroupBootstrap(len(labels), n_resamples, seed).replicate(resampled)
    return _estimates("system", methods, values, resamples, confidence, **common)


def correlations(human, judge, groups=None, systems=None, *, levels: Sequence[str] = LEVELS,
                 methods: Sequence[str] = METHODS, n_resamples: int = 1000, seed: int = 0,
                 confidence: float = 0.95) -> dict[str, dict[str, Estimate]]:
    """Every requested level: ``{level: {method: Estimate}}``. All levels resample the same groups."""
    options: Resampling = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    out: dict[str, dict[str, Estimate]] = {}
    for level in levels:
        if level == "dataset":
            out[level] = dataset_level(human, judge, groups, methods=methods, **options)
        elif level == "group":
            if groups is None:
                raise ValueError("the group level needs groups")
            out[level] = group_level(human, judge, groups, methods=methods, **options)
        elif level == "system":
            if systems is None:
                raise ValueError("the system level needs system ids")
            out[level] = system_level(human, judge, systems, groups, methods=methods, **options)
        else:
            raise ValueError(f"unknown level {level!r}; choose from {', '.join(LEVELS)}")
    return out
