"""How each seed reports a judge, as named selections of the metric functions.

A preset takes aligned data and options and returns report sections (name -> result). The
exact definitions are in docs/metrics.md; the short form:

* ``standard`` (no preset): every correlation level the data allows, label agreement when both
  sides are whole-number labels, pairwise agreement when sources have several outputs, the IR
  leaderboard with ``runs``, accuracy for pairwise items.
* ``llmjudge`` (seed 003): kappa on the raw labels and at each binarising cut, ordinal alpha,
  and with ``runs`` the leaderboard Kendall tau on nDCG@10.
* ``hpss`` (seed 002): dataset-level Spearman; group-level Spearman for datasets HPSS evaluates
  per source (SummEval); pairwise agreement (its reward-hacking check).
* ``active-critic`` (seed 004 eq. 3): dataset-level Pearson, Spearman, Kendall and Q, their sum.
* ``aeollm`` (seeds 000, 001): per subtask, accuracy over same-question answer pairs averaged
  over questions, and Kendall and Spearman per question averaged over questions; overall = the
  mean over subtasks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.metrics.agreement import MAX_LABELS, AlphaLevel, label_agreement
from judgelab.metrics.align import Aligned
from judgelab.metrics.bootstrap import Resampling
from judgelab.metrics.correlation import LEVELS, METHODS, correlations
from judgelab.metrics.ir import leaderboard, qrels_from_labels
from judgelab.metrics.pairwise import Average, Ties, pairwise_accuracy, pairwise_agreement
from judgelab.metrics.results import combine

HPSS_PER_SOURCE_DATASETS = ("summeval",)  # HPSS Appendix A: sample level for SummEval only
AEOLLM_METHODS = ("kendall", "spearman")


@dataclass(frozen=True)
class Options:
    levels: tuple[str, ...] | None = None  # correlation levels asked for explicitly
    runs: Mapping[str, list] | None = None  # run name -> ir_measures ScoredDocs
    n_resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    alpha_level: AlphaLevel = "ordinal"
    ties: Ties = "half"  # pairwise accuracy: what a tie verdict earns (metrics.pairwise.TIES)

    @property
    def bootstrap(self) -> Resampling:
        return {"n_resamples": self.n_resamples, "seed": self.seed, "confidence": self.confidence}


Sections = dict[str, Any]


# -- building blocks -----------------------------------------------------------------------------
def available_levels(aligned: Aligned) -> list[str]:
    levels = ["dataset"]
    if aligned.groups_have_pairs():
        levels.append("group")
    if aligned.systems is not None:
        levels.append("system")
    return levels


def _checked_levels(aligned: Aligned, levels) -> list[str]:
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        raise ConfigError(f"unknown level {unknown[0]!r}; choose from {', '.join(LEVELS)}")
    if "system" in levels and aligned.systems is None:
        raise DataError("the system level needs a system_id on every evaluated item")
    return list(levels)


def correlation_sections(aligned: Aligned, options: Options, levels, methods=METHODS) -> Sections:
    return correlations(aligned.human, aligned.judge, aligned.groups, aligned.systems,
                        levels=_checked_levels(aligned, levels), methods=methods, **options.bootstrap)


def has_ordinal_labels(aligned: Aligned) -> bool:
    """Both sides whole numbers on a small scale (TREC 0-3, Likert 1-5)."""
    values = np.concatenate([aligned.human, aligned.judge])
    return bool(np.all(values == np.round(values))) and len(np.unique(values)) <= MAX_LABELS


def agreement_section(aligned: Aligned, options: Options) -> Sections:
    if not has_ordinal_labels(aligned) or _off_the_items_scale(aligned):
        return {}
    return {"agreement": label_agreement(aligned.human, aligned.judge, aligned.groups,
                                         level_of_measurement=options.alpha_level, **options.bootstrap)}


def _off_the_items_scale(aligned: Aligned) -> bool:
    """A judge value outside its item's declared scale (7 on 1-5): label agreement compares values on
    one scale, so it is left out, with a warning naming the item and the scale. A judge may rate on
    a scale of its own (scale 10 on 1-5 items, log-probabilities), which correlations allow."""
    for item, value in zip(aligned.items, aligned.judge, strict=True):
        scale = item.aspect_scale(aligned.aspect) if aligned.aspect else item.scale
        if scale is not None and not scale[0] <= value <= scale[1]:
            warnings.warn(f"judge value {value:g} for item {item.id!r} is outside the items' {aligned.aspect or ''} "
                          f"scale {scale[0]:g}-{scale[1]:g}: no label agreement (accuracy, kappa, alpha), which "
                          "needs one scale; correlations are reported", DataWarning, stacklevel=2)
            return True
    return False


def leaderboard_section(aligned: Aligned, options: Options) -> Sections:
    if options.runs is None:
        return {}
    if aligned.kind != "relevance":
        raise DataError("a run leaderboard needs relevance items (qid, docid, label)")
    judged = [item for item in aligned.all_items if isinstance(item.label, int) and not isinstance(item.label, bool)]
    human_qrels = qrels_from_labels([i.qid for i in judged], [i.docid for i in judged], [i.label for i in judged])
    judge_qrels = qrels_from_labels([i.qid for i in aligned.items], [i.docid for i in aligned.items], aligned.judge)
    return {"leaderboard": leaderboard(options.runs, human_qrels, judge_qrels, **options.bootstrap)}


def pairwise_agreement_section(aligned: Aligned, options: Options, average: Average = "pairs") -> Sections:
    if not aligned.groups_have_pairs():
        return {}
    return {"pairwise_agreement": pairwise_agreement(aligned.human, aligned.judge, aligned.groups,
                                                     average=average, **options.bootstrap)}


def pairwise_judge_section(aligned: Aligned, options: Options) -> Sections:
    return {"pairwise": pairwise_accuracy(aligned.human, aligned.judge, swapped_verdicts(aligned),
                                          aligned.groups, ties=options.ties, **options.bootstrap)}


def swapped_verdicts(aligned: Aligned) -> list | None:
    """The verdicts in the swapped order (``extra.label_swapped``, as the pairwise judge records them),
    or None unless every judgment has one."""
    swapped = [j.extra.get("label_swapped") for j in aligned.judgments]
    return swapped if all(s is not None for s in swapped) else None


# -- presets -------------------------------------------------------------------------------------
def standard(aligned: Aligned, options: Options) -> Sections:
    if aligned.kind == "pairwise":
        return pairwise_judge_section(aligned, options)
    sections = correlation_sections(aligned, options, options.levels or available_levels(aligned))
    sections |= agreement_section(aligned, options)
    sections |= pairwise_agreement_section(aligned, options)
    return sections | leaderboard_section(aligned, options)


def llmjudge(aligned: Aligned, options: Options) -> Sections:
    sections = agreement_section(aligned, options)
    if not sections:
        raise DataError("the llmjudge preset needs whole-number relevance labels on both sides")
    return sections | leaderboard_section(aligned, options)


def hpss(aligned: Aligned, options: Options) -> Sections:
    datasets = {(item.dataset or "").lower() for item in aligned.items}
    per_source = any(name.startswith(HPSS_PER_SOURCE_DATASETS) for name in datasets)
    levels = ["dataset", "group"] if per_source and aligned.groups_have_pairs() else ["dataset"]
    sections = correlation_sections(aligned, options, levels, methods=("spearman",))
    return sections | pairwise_agreement_section(aligned, options)


def active_critic(aligned: Aligned, options: Options) -> Sections:
    sections = correlation_sections(aligned, options, ["dataset"])
    q = combine(list(sections["dataset"].values()), "q", np.sum, options.confidence, same_sample=True)
    return sections | {"q": q}


def _subtask(item) -> str:
    return str(item.extra.get("task") or item.dataset or "all")


def aeollm(aligned: Aligned, options: Options) -> Sections:
    names = sorted({_subtask(item) for item in aligned.items})
    subtasks = {}
    for k, name in enumerate(names):
        part = aligned.subset(np.array([_subtask(item) == name for item in aligned.items]))
        if not part.groups_have_pairs():
            raise DataError(f"AEOLLM subtask {name!r} has no question with 2 or more answers")
        # Different seeds per subtask: their resamples are independent (a stratified bootstrap).
        part_options = Options(n_resamples=options.n_resamples, seed=options.seed + k, confidence=options.confidence)
        scores = {"accuracy": pairwise_agreement_section(part, part_options, average="groups")["pairwise_agreement"]}
        scores |= correlation_sections(part, part_options, ["group"], methods=AEOLLM_METHODS)["group"]
        subtasks[name] = scores
    overall = {stat: combine([scores[stat] for scores in subtasks.values()], stat, np.mean, options.confidence)
               for stat in ("accuracy", *AEOLLM_METHODS)}
    return {"aeollm": {"subtasks": subtasks, "overall": overall}}


@dataclass(frozen=True)
class Preset:
    build: Callable[[Aligned, Options], Sections]
    summary: str


PRESETS: dict[str, Preset] = {
    "aeollm": Preset(aeollm, "NTCIR-18 AEOLLM: per-question pairwise accuracy, Kendall, Spearman; per subtask + overall"),
    "llmjudge": Preset(llmjudge, "LLMJudge: Cohen's kappa (4-point and 3 binary cuts), ordinal alpha, leaderboard tau"),
    "hpss": Preset(hpss, "HPSS: dataset-level Spearman (group level for SummEval), pairwise agreement"),
    "active-critic": Preset(active_critic, "Active-Critic: Pearson, Spearman, Kendall and Q = their sum"),
}


def build_sections(aligned: Aligned, preset: str | None, options: Options) -> Sections:
    """The preset's sections, plus full correlations for any level asked for explicitly."""
    if preset is None:
        return standard(aligned, options)
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    if aligned.kind == "pairwise":
        raise DataError(f"the {preset} preset evaluates scores or labels, not pairwise verdicts")
    sections = PRESETS[preset].build(aligned, options)
    if options.levels:
        sections |= correlation_sections(aligned, options, options.levels)
    return sections
