"""``meta_evaluate``: everything ``judgelab meta`` reports, as one call on items and judgments."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.metrics.align import Aligned, Coverage, align
from judgelab.metrics.compare import Comparison, paired_difference
from judgelab.metrics.correlation import correlations
from judgelab.metrics.ir import read_runs
from judgelab.metrics.presets import Options, available_levels, build_sections


def plain(value: Any) -> Any:
    """Results and nested dicts of results as JSON-ready values."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class MetaReport:
    """Sections by name: ``dataset``/``group``/``system`` ({statistic: Estimate}), ``agreement``
    (LabelAgreement), ``pairwise_agreement`` (Estimate), ``pairwise`` ({accuracy, ...}),
    ``leaderboard`` (Leaderboard), and preset-specific ones (``q``, ``aeollm``)."""

    kind: str
    aspect: str | None
    preset: str | None
    judge: str | None
    coverage: Coverage
    sections: dict[str, Any]
    options: Options

    def __getitem__(self, section: str) -> Any:
        return self.sections[section]

    def to_dict(self) -> dict[str, Any]:
        head = {"kind": self.kind, "aspect": self.aspect, "preset": self.preset, "judge": self.judge,
                "coverage": self.coverage.to_dict()}
        bootstrap = {**self.options.bootstrap, "resampling_unit": "group"}
        return head | plain(self.sections) | {"bootstrap": bootstrap}


def meta_evaluate(dataset: Iterable[Item], judgments: Iterable[Judgment], *, aspect: str | None = None,
                  preset: str | None = None, judge: str | None = None, levels: Sequence[str] | None = None,
                  runs: str | os.PathLike | Mapping[str, list] | None = None, n_resamples: int = 1000,
                  seed: int = 0, confidence: float = 0.95, alpha_level: str = "ordinal",
                  baseline: Iterable[Judgment] | None = None, baseline_judge: str | None = None) -> MetaReport:
    """Compare a judge with the humans on the items both rated.

    ``dataset``: items (a ``Dataset`` or any iterable of ``Item``). ``judgments``: one per item
    (status other than ok, missing ones and unknown ids are counted in ``coverage``). ``aspect``
    defaults to the only one the items carry; ``judge`` picks one judge from a file holding
    several. ``preset``: ``aeollm``, ``llmjudge``, ``hpss``, ``active-critic`` or None for the
    standard report; ``levels`` adds correlation levels. ``runs``: a folder of TREC run files
    (or {name: ScoredDocs}) to add the leaderboard block for relevance items. ``baseline``:
    another judge's judgments of the same items; adds ``comparison`` (this judge minus the
    baseline, paired bootstrap) for every correlation level; ``baseline_judge`` picks one judge from it.
    """
    aligned = align(dataset, judgments, aspect=aspect, judge=judge)
    if runs is not None and not isinstance(runs, Mapping):
        runs = read_runs(runs)
    options = Options(levels=tuple(levels) if levels else None, runs=runs, n_resamples=n_resamples, seed=seed,
                      confidence=confidence, alpha_level=alpha_level)
    sections = build_sections(aligned, preset, options)
    if baseline is not None:
        if aligned.kind == "pairwise":
            raise ConfigError("a baseline is compared on correlations, which pairwise verdicts do not have")
        other = align(aligned.all_items, baseline, aspect=aligned.aspect, judge=baseline_judge,
                      judge_option="--baseline-judge")
        sections["comparison"] = compare_to_baseline(aligned, other, options)
    return MetaReport(aligned.kind, aligned.aspect, preset, judge, aligned.coverage, sections, options)


def compare_to_baseline(judged: Aligned, baseline: Aligned, options: Options) -> dict[str, dict[str, Comparison]]:
    """``judged`` minus ``baseline`` for every correlation statistic, on the items both scored,
    with the same resampled groups for both (a paired bootstrap)."""
    baseline_scores = {item.id: value for item, value in zip(baseline.items, baseline.judge, strict=True)}
    new = judged.subset(np.array([item.id in baseline_scores for item in judged.items]))
    old_judge = np.array([baseline_scores[item.id] for item in new.items])
    levels = list(options.levels or available_levels(new))
    common = {"levels": levels, **options.bootstrap}
    before = correlations(new.human, old_judge, new.groups, new.systems, **common)
    after = correlations(new.human, new.judge, new.groups, new.systems, **common)
    return {level: {method: paired_difference(before[level][method], after[level][method], options.confidence)
                    for method in after[level]} for level in levels}
