"""``meta_evaluate``: everything ``judgelab meta`` reports, as one call on items and judgments."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, term
from judgelab.metrics.agreement import AlphaLevel
from judgelab.metrics.align import Aligned, Coverage, align
from judgelab.metrics.compare import Comparison, compare_pairwise, compare_scores
from judgelab.metrics.ir import read_runs
from judgelab.metrics.pairwise import TIES, Ties
from judgelab.metrics.presets import Options, available_levels, build_sections, swapped_verdicts
from judgelab.metrics.results import FEWER_THAN_2, Estimate, skipped_by_reason


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
        dropped = dropped_groups({k: v for k, v in self.sections.items() if k != "comparison"})
        return head | plain(self.sections) | {"dropped_groups": dropped, "bootstrap": bootstrap}


#: Krippendorff's alpha levels meta takes, in the order its messages list them.
ALPHA_LEVELS = ("ordinal", "nominal", "interval")


def check_meta_options(ties: str, alpha_level: str) -> None:
    """``ties`` and ``alpha_level`` among their choices, else a ConfigError naming them as the caller knows them:
    what :func:`meta_evaluate` checks, and ``jl.meta`` before it reads any input."""
    for name, value, choices in (("ties", ties, TIES), ("alpha_level", alpha_level, ALPHA_LEVELS)):
        if value not in choices:
            raise ConfigError(f"{term(name)} {value!r}: choose {', '.join(choices[:-1])} or {choices[-1]}")


def meta_evaluate(dataset: Iterable[Item], judgments: Iterable[Judgment], *, aspect: str | None = None,
                  preset: str | None = None, judge: str | None = None, levels: Sequence[str] | None = None,
                  runs: str | os.PathLike | Mapping[str, list] | None = None, n_resamples: int = 1000,
                  seed: int = 0, confidence: float = 0.95, alpha_level: AlphaLevel = "ordinal",
                  ties: Ties = "half", baseline: Iterable[Judgment] | None = None,
                  baseline_judge: str | None = None) -> MetaReport:
    """Compare a judge with the humans on the items both rated.

    ``dataset``: items (a ``Dataset`` or any iterable of ``Item``). ``judgments``: one per item
    (status other than ok, missing ones and unknown ids are counted in ``coverage``). ``aspect``
    defaults to the only one the items carry; ``judge`` picks one judge from a file holding
    several. ``preset``: ``aeollm``, ``llmjudge``, ``hpss``, ``active-critic`` or None for the
    standard report; ``levels`` adds correlation levels. ``runs``: a folder of TREC run files
    (or {name: ScoredDocs}) to add the leaderboard block for relevance items. ``baseline``:
    another judge's judgments of the same items; adds ``comparison`` (this judge minus the
    baseline, paired bootstrap) for every correlation level (the group level on the groups both
    can score), or for pairwise judges of accuracy and positional consistency; ``baseline_judge``
    picks one judge from it. ``ties``: what a ``tie`` verdict earns in pairwise accuracy, ``half``
    a point (LLMBar) or nothing (``wrong``). Groups left out of a figure because a side was
    constant are listed in ``to_dict()["dropped_groups"]``.
    """
    aligned = align(dataset, judgments, aspect=aspect, judge=judge)
    if runs is not None and not isinstance(runs, Mapping):
        runs = read_runs(runs)
    check_meta_options(ties, alpha_level)
    options = Options(levels=tuple(levels) if levels else None, runs=runs, n_resamples=n_resamples, seed=seed,
                      confidence=confidence, alpha_level=alpha_level, ties=ties)
    sections = build_sections(aligned, preset, options)
    if baseline is not None:
        other = align(aligned.all_items, baseline, aspect=aligned.aspect, judge=baseline_judge,
                      judge_option="baseline_judge")
        sections["comparison"] = compare_to_baseline(aligned, other, options)
    return MetaReport(aligned.kind, aligned.aspect, preset, judge, aligned.coverage, sections, options)


def compare_to_baseline(judged: Aligned, baseline: Aligned, options: Options) -> dict[str, dict[str, Comparison]]:
    """``judged`` minus ``baseline`` on the items both judged, with the same resampled groups for
    both (a paired bootstrap): every correlation statistic (the group level on the groups both can
    score), or for pairwise judges accuracy and positional consistency."""
    verdicts = {item.id: k for k, item in enumerate(baseline.items)}
    new = judged.subset(np.array([item.id in verdicts for item in judged.items]))
    if not new.items:
        raise DataError("the judge and the baseline judged no item in common")
    rows = [verdicts[item.id] for item in new.items]
    old_verdicts = baseline.judge[rows]
    if judged.kind == "pairwise":
        theirs = swapped_verdicts(baseline)
        return {"pairwise": compare_pairwise(new.human, new.judge, old_verdicts, swapped_verdicts(new),
                                             None if theirs is None else [theirs[r] for r in rows], new.groups,
                                             ties=options.ties, **options.bootstrap)}
    levels = list(options.levels or available_levels(new))
    return compare_scores(new.human, new.judge, old_verdicts, new.groups, new.systems, levels=levels,
                          **options.bootstrap)


def dropped_groups(sections: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every place where groups were left out because a side was constant (the judge giving every
    output of a source one score, or the humans doing so): which figure, how many of how many
    groups, why. What ``meta`` states loudly in its table, its JSON (``dropped_groups``) and its report."""
    found: dict[tuple, dict[str, Any]] = {}
    for path, estimate in _estimates(sections, ()):
        if not estimate.skipped or estimate.n_groups is None:
            continue
        by_reason = {reason: len(groups) for reason, groups in skipped_by_reason(estimate.skipped).items()}
        constant = sum(count for reason, count in by_reason.items() if reason != FEWER_THAN_2)
        if not constant:
            continue
        total = estimate.n_groups + len(estimate.skipped)
        where = " / ".join(path[:-1]) or path[0]  # one entry per level, not per statistic
        found.setdefault((where, tuple(sorted(by_reason.items()))), {
            "figure": where, "n_groups": total, "n_used": estimate.n_groups, "n_dropped": len(estimate.skipped),
            "share_dropped": round(len(estimate.skipped) / total, 4), "by_reason": by_reason})
    return list(found.values())


def _estimates(section: Any, path: tuple[str, ...]):
    if isinstance(section, Estimate):
        yield path, section
    elif isinstance(section, Mapping):
        for key, value in section.items():
            yield from _estimates(value, (*path, str(key)))
