"""Comparisons between systems read from comparison items and a judge's verdicts (``system_a``,
``system_b``; verdicts a/b/tie or a soft preference), with the human verdicts and the sampling design,
for :mod:`judgelab.evaluate.preferences` to rank (docs/pairwise.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.labels import PREFERENCES
from judgelab.errors import ConfigError
from judgelab.evaluate.comparison_file import ComparisonTable, judge_preference, names_no_systems
from judgelab.evaluate.comparisons import Comparisons, comparisons, preferences
from judgelab.evaluate.panel import is_panel, panel
from judgelab.evaluate.preferences import PreferenceReport, leaderboard
from judgelab.evaluate.sample_file import SampleFile
from judgelab.evaluate.sampling import pair_stratum
from judgelab.metrics.bootstrap import group_codes


def evaluate_comparisons(items: Iterable[Item] | ComparisonTable, judgments: Iterable[Judgment], *, judge: str | None = None,
                         human: Mapping[str, float] | None = None, human_ids: Iterable[str] | str | None = None,
                         estimand: str = "win-prob", baseline: str | None = None, target: str = "population",
                         rank_method: str = "auto", confidence: float = 0.95, seed: int = 0,
                         sample: SampleFile | None = None, intervals: str = "sandwich",
                         n_resamples: int = 1000, system_intervals: str = "auto") -> PreferenceReport:
    """:func:`rank_systems` on comparison items (``system_a``, ``system_b``) and a judge's verdicts.

    A judgment judged in both orders (``judgelab judge`` with a pairwise judge and ``swap``) counts
    as the mean of its two verdicts, which removes the judge's position bias on average. Human
    verdicts: ``human`` {item id: preference for a} (a labels file), else the items' own ``label``
    for the ids in ``human_ids`` ("all": every item's). ``sample``: the file ``judgelab sample`` wrote;
    its inclusion probabilities weight the labels (a plain id list: a uniform sample)."""
    data, coverage, source, design = comparison_data(items, judgments, judge=judge, human=human,
                                                     human_ids=human_ids, sample=sample)
    return leaderboard(data, estimand=estimand, baseline=baseline, target=target, rank_method=rank_method,
                       confidence=confidence, seed=seed, coverage=coverage, label_source=source, design=design,
                       intervals=intervals, n_resamples=n_resamples, system_intervals=system_intervals)


def comparison_data(items: Iterable[Item] | ComparisonTable, judgments: Iterable[Judgment], *,
                    judge: str | None = None, human: Mapping[str, float] | None = None,
                    human_ids: Iterable[str] | str | None = None, sample: SampleFile | None = None
                    ) -> tuple[Comparisons, dict[str, Any], str | None, str | None]:
    """(the checked comparisons, how many have a verdict, where the human verdicts came from, the
    sampling design's name), read from comparison items and a judge's verdicts as
    :func:`evaluate_comparisons` describes; or from a :class:`ComparisonTable` that holds both
    (``judgments`` unused: a large file read in one pass, evaluate/comparison_file.py)."""
    if isinstance(items, ComparisonTable):
        rows: list[Any] = items.rows
        sets, columns, unknown = None, [items.verdicts], [items.unknown_judgments]
    else:
        rows = list(items)
        sets, columns, unknown = _judge_columns(rows, judgments, judge)
    values, source = _human_preferences(rows, human, human_ids)
    probability, design = _sample_probabilities(rows, sample, values)
    order = None
    if human is not None:  # a labels file: its order is the order the labels were given
        place = {item_id: k for k, item_id in enumerate(human)}
        order = np.array([place.get(item.id, np.inf) for item in rows], dtype=float)
    elif human_ids not in (None, "all"):
        place = {item_id: k for k, item_id in enumerate(human_ids)}
        order = np.array([place.get(item.id, np.inf) for item in rows], dtype=float)
    data = replace(comparisons([i.system_a for i in rows], [i.system_b for i in rows], columns[0], values,
                               probability=probability), order=order)
    coverage: dict[str, Any] = {"units": data.n, "judged": int(data.judged.sum()),
                                "without_verdict": int((~data.judged).sum()), "unknown_judgments": unknown[0]}
    if sets:
        judges = np.array([preferences(column, data.n, one.name) for column, one in zip(columns, sets, strict=True)]).T
        data = replace(data, judges=judges, judge_names=tuple(one.name for one in sets))
        coverage["judges"] = {one.name: {"judged": int(np.isfinite(judges[:, k]).sum()), "from": one.where,
                                         "unknown_judgments": unknown[k]} for k, one in enumerate(sets)}
    return data, coverage, source, design


def _judge_columns(items: list[Item], judgments: Iterable[Judgment], judge: str | None):
    """(a panel's judges or None, each judge's preference per item, each judge's verdicts for unknown ids)."""
    from judgelab.metrics.align import judgments_by_item, select_judgments

    unnamed = next((item for item in items if item.system_a is None), None)
    if unnamed is not None:
        raise names_no_systems(unnamed.id)
    ids = {item.id for item in items}
    sets = panel(judgments, judge, None) if is_panel(judgments, judge) else None
    found = [judgments_by_item(one.judgments, ids) for one in sets] if sets else [
        judgments_by_item(select_judgments(judgments, None, judge), ids)]
    columns = [[judge_preference(by_item.get(item.id)) for item in items] for by_item, _ in found]
    return sets, columns, [count for _, count in found]


def _sample_probabilities(items: list[Item], sample: SampleFile | None,
                          human: list[float | None] | None) -> tuple[np.ndarray | None, str | None]:
    """(each comparison's inclusion probability, the design's name) from a sample file; (None, None):
    a uniform sample (no file, or a plain id list). A sample stratified by pair is read as pointwise
    stratified samples are: uniform within each pair, n_h / N_h of the labels at hand (a sampled
    comparison left unlabelled is taken as missing at random within its pair)."""
    if sample is None or sample.probabilities is None:
        return None, None
    probability = np.full(len(items), np.nan)
    position = {item.id: k for k, item in enumerate(items)}
    unknown = [i for i in sample.ids if i not in position]
    if unknown:
        raise ConfigError(f"{len(unknown)} sampled id(s) are not comparisons of the data: "
                          f"{', '.join(map(repr, unknown[:5]))}")
    probability[[position[i] for i in sample.ids]] = sample.probabilities
    by_pair = (sample.header or {}).get("strata") == "pair"
    if by_pair and sample.method == "stratified" and human is not None:
        pairs = group_codes([_pair(i) for i in items])[0]
        labelled = np.array([value is not None for value in human])
        share = np.bincount(pairs, labelled) / np.bincount(pairs)
        probability = np.where(labelled, share[pairs], np.nan)
    return probability, {"stratified": "stratified by pair", "active": "active within pairs"}.get(
        sample.method, sample.method) if by_pair else sample.method


def _pair(item: Item) -> str:
    """:func:`pair_stratum` of a comparison; comparison_data has refused one that names no systems (a TypeError
    here, as sorting a None with a name would raise)."""
    if item.system_a is None or item.system_b is None:
        raise TypeError(f"comparison {item.id!r} names no systems")
    return pair_stratum(item.system_a, item.system_b)


def _human_preferences(items: list[Item], human: Mapping[str, float] | None, human_ids):
    """(a human preference per item or None, where they came from)."""
    from judgelab.errors import DataError

    if human is None and human_ids is None:
        return None, None
    position = {item.id: k for k, item in enumerate(items)}
    values: list[float | None] = [None] * len(items)
    if human is not None:
        unknown = [i for i in human if i not in position]
        if unknown:
            raise DataError(f"{len(unknown)} labelled id(s) are not comparisons of the data: "
                            f"{', '.join(map(repr, unknown[:5]))}")
        for item_id, value in human.items():
            values[position[item_id]] = value
        if human_ids is not None and human_ids != "all":
            outside = sorted(set(human) - set(human_ids))
            if outside:
                raise DataError(f"{len(outside)} labelled comparison(s) are not in the sample the id list names "
                                f"(e.g. {outside[0]!r})")
        return values, "labels file"
    wanted = position if human_ids == "all" else list(human_ids)
    unknown = [i for i in wanted if i not in position]
    if unknown:
        raise DataError(f"{len(unknown)} listed id(s) are not comparisons of the data: "
                        f"{', '.join(map(repr, unknown[:5]))}")
    for item_id in wanted:
        item = items[position[item_id]]
        if item.label is None:
            if human_ids == "all":
                continue
            raise DataError(f"listed comparison {item_id!r} has no human verdict (label)")
        if not isinstance(item.label, str):  # a comparison's label is a verdict: the KeyError PREFERENCES gives
            raise KeyError(item.label)
        values[position[item_id]] = PREFERENCES[item.label]
    return values, "items' own labels"


__all__ = ["comparison_data", "evaluate_comparisons"]
