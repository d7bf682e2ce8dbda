"""Pair items with judgments, counting everything that cannot be used (never zero-filling it)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from judgelab.data.io import select_judge
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, term


@dataclass(frozen=True)
class Coverage:
    """What happened to each item. ``n_used`` items have both a human value and an ok judgment."""

    n_items: int
    n_used: int
    n_missing: int = 0  # no judgment for the item
    n_unparsable: int = 0  # judgment status "unparsable"
    n_error: int = 0  # judgment status "error"
    n_no_value: int = 0  # status ok but neither score nor label
    n_no_human: int = 0  # the item has no human value for the aspect
    n_unknown: int = 0  # judgments whose item_id is not in the data

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Aligned:
    """The used items, in data order, with their human and judge values side by side."""

    kind: str
    aspect: str | None
    items: list[Item]
    judgments: list[Judgment]
    human: np.ndarray  # float, or object ("a"/"b"/"tie") for pairwise items
    judge: np.ndarray
    coverage: Coverage
    all_items: list[Item] = field(default_factory=list, repr=False)  # every item, used or not

    def subset(self, keep: np.ndarray) -> Aligned:
        """The used items where ``keep`` is true (coverage still describes the whole data)."""
        chosen = np.flatnonzero(keep)
        return replace(self, items=[self.items[i] for i in chosen], judgments=[self.judgments[i] for i in chosen],
                       human=self.human[chosen], judge=self.judge[chosen])

    @property
    def groups(self) -> np.ndarray:
        return np.array([item.group for item in self.items], dtype=object)

    @property
    def systems(self) -> np.ndarray | None:
        """System ids, or None unless every used item has one."""
        systems = [item.system_id for item in self.items]
        return None if not systems or any(s is None for s in systems) else np.array(systems, dtype=object)

    def groups_have_pairs(self) -> bool:
        return any(count >= 2 for count in Counter(item.group for item in self.items).values())


def infer_aspect(items: list[Item], aspect: str | None) -> str | None:
    """The aspect to evaluate: the one given, else the only one the items carry."""
    kinds = {item.kind for item in items}
    if kinds == {"pairwise"}:
        return aspect
    if aspect is not None:
        return aspect
    if kinds == {"relevance"}:
        return "relevance"
    aspects = sorted({a for item in items for a in item.scores})
    if not aspects:
        require_human_values(items, None)  # says where human scores go
    if len(aspects) != 1:
        raise ConfigError(f"the items carry {len(aspects)} aspects ({', '.join(aspects) or 'none'}); "
                        f"choose one with {term('aspect')}")
    return aspects[0]


def select_judgments(judgments: Iterable[Judgment], aspect: str | None, judge: str | None,
                     judge_option: str = "judge") -> list[Judgment]:
    """The judgments of ``aspect`` (or of none) from ``judge`` (its name, or the prefix of one judge's name:
    ``data.io.select_judge``); more than one judge left is an error."""
    judgments = [j for j in judgments if aspect is None or j.aspect in (None, aspect)]
    if judge is not None:
        judgments = select_judge(judgments, judge)
    judges = sorted({j.judge for j in judgments if j.judge is not None})
    if len(judges) > 1:
        raise several_judges(judges, judge, judge_option)
    return judgments


def several_judges(judges: list[str], judge: str | None, option: str = "judge", where: str | None = None
                   ) -> ConfigError:
    """The error for verdicts of several judges where one is needed. When ``judge`` was given and names
    several (a prefix of each), that is the problem to say: "choose one with --judge" would read as if
    none had been given."""
    listed = ", ".join(judges[:8]) + (", ..." if len(judges) > 8 else "")
    if judge is not None:
        return ConfigError(f"{where + ': ' if where else ''}{term(option)} {judge!r} matches {len(judges)} judges "
                           f"({listed}): give one of these names exactly")
    return ConfigError(f"{where + ': ' if where else ''}the judgments come from {len(judges)} judges ({listed}); "
                       f"choose one with {term(option)}")


def judgments_by_item(judgments: list[Judgment], known_ids: set[str]) -> tuple[dict[str, Judgment], int]:
    by_item: dict[str, Judgment] = {}
    unknown = 0
    for judgment in judgments:
        if judgment.item_id not in known_ids:
            unknown += 1
        elif judgment.item_id in by_item:
            raise judged_twice(judgment.item_id)
        else:
            by_item[judgment.item_id] = judgment
    return by_item, unknown


def judged_twice(item_id: str) -> DataError:
    """The error for two verdicts of one judge on one item (every reader that matches verdicts to items)."""
    return DataError(f"two judgments for item {item_id!r}; keep one per item (or set 'aspect'/'judge' to tell them "
                     "apart)")


def judge_value(judgment: Judgment, kind: str) -> Any:
    """The judgment's verdict: its label for pairwise items, else its score, else its label."""
    if kind == "pairwise":
        return judgment.label
    value = judgment.score if judgment.score is not None else judgment.label
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise DataError(f"judgment for item {judgment.item_id!r} has label {value!r}, which is not a number; "
                        "scores and graded labels must be numeric", field="label") from None


def human_value(item: Item, aspect: str | None) -> Any:
    return item.label if item.kind == "pairwise" else item.human_score(aspect)


def human_field(kind: str, aspect: str | None) -> str:
    """Where an item of ``kind`` keeps its human value for ``aspect`` (``scores.ASPECT`` when none is named)."""
    if kind == "pairwise" or (kind == "relevance" and aspect in (None, "relevance", "label")):
        return "label"
    return f"scores.{aspect or 'ASPECT'}"


def no_human_values(items: list[Item], aspect: str | None) -> str | None:
    """Why none of ``items`` can be set beside a judge's verdict, when none has a human value for ``aspect``
    (saying where such values go, and which aspects the items do carry); None when some item has one."""
    kind = items[0].kind if items else "pointwise"
    if aspect is None and kind == "relevance":
        aspect = "relevance"  # the graded label, as infer_aspect reads it
    if aspect is None and kind == "pointwise":  # no aspect named: any human score will do
        if not items or any(item.scores for item in items):
            return None
    elif not items or any(human_value(item, aspect) is not None for item in items):
        return None
    field = human_field(kind, aspect)
    carried = sorted({name for item in items for name in item.scores})
    what = f"a human value for aspect {aspect!r}" if aspect and field != "label" else "a human value"
    others = f"; the items carry scores for {', '.join(carried[:8])}" if carried and field != "label" else ""
    verdicts = ' ("a", "b" or "tie")' if kind == "pairwise" else " (a graded int)" if field == "label" else ""
    return f"no item has {what}: human values go in each item's {field}{verdicts}{others}"


def require_human_values(items: list[Item], aspect: str | None, where: str | os.PathLike | None = None) -> None:
    """A DataError naming the file ``where`` and the field to fill when no item has a human value for ``aspect``."""
    if len({item.kind for item in items}) > 1:
        return  # mixed kinds: align says so
    reason = no_human_values(items, aspect)
    if reason:
        raise DataError(reason, None if where is None else str(where), None,
                        human_field(items[0].kind, aspect))


def items_of_one_kind(items: Iterable[Item]) -> tuple[list[Item], str]:
    """The items as a list and their one kind; no items, or mixed kinds, is a DataError."""
    items = list(items)
    if not items:
        raise DataError("no items to evaluate")
    kinds = {item.kind for item in items}
    if len(kinds) > 1:
        raise DataError(f"the items mix kinds ({', '.join(sorted(kinds))}); evaluate one kind at a time")
    return items, kinds.pop()


def align(items: Iterable[Item], judgments: Iterable[Judgment], *, aspect: str | None = None,
          judge: str | None = None, judge_option: str = "judge") -> Aligned:
    """Match judgments to items by id and keep the items that have both values.

    Judgments for another aspect (``Judgment.aspect`` set and different) are ignored; when the
    file holds several judges, ``judge`` picks one. Every item left out is counted by reason.
    """
    items, kind = items_of_one_kind(items)
    aspect = infer_aspect(items, aspect)
    judgments = list(judgments)
    by_item, n_unknown = judgments_by_item(select_judgments(judgments, aspect, judge, judge_option),
                                           {item.id for item in items})
    counts: Counter[str] = Counter()
    used_items, used_judgments, human, verdicts = [], [], [], []
    for item in items:
        judgment, reference = by_item.get(item.id), human_value(item, aspect)
        if reference is None:
            counts["n_no_human"] += 1
        elif judgment is None:
            counts["n_missing"] += 1
        elif judgment.status != "ok":
            counts[f"n_{judgment.status}"] += 1
        elif (value := judge_value(judgment, kind)) is None:
            counts["n_no_value"] += 1
        else:
            used_items.append(item)
            used_judgments.append(judgment)
            human.append(reference)
            verdicts.append(value)
    coverage = Coverage(n_items=len(items), n_used=len(used_items), n_unknown=n_unknown, **counts)
    if not used_items and counts["n_no_human"] == len(items):
        require_human_values(items, aspect)  # says where human values go
    if not used_items:
        raise DataError(f"no item has both a human value{f' for aspect {aspect!r}' if aspect else ''} "
                        f"and a usable judgment ({_describe(coverage)}){_other_aspects(judgments, aspect)}")
    dtype = object if kind == "pairwise" else float
    return Aligned(kind, aspect, used_items, used_judgments, np.array(human, dtype=dtype),
                   np.array(verdicts, dtype=dtype), coverage, all_items=items)


def _other_aspects(judgments: list[Judgment], aspect: str | None) -> str:
    """Where the judgments rate only other aspects than the items' labels: which, and the way out."""
    rated = sorted({j.aspect for j in judgments if j.aspect is not None})
    if not aspect or not rated or aspect in rated:
        return ""
    return (f"; the judgments rate {', '.join(map(repr, rated))}, not {aspect!r}: judge {aspect!r} (the judge's "
            f"{term('aspect', '--aspect')}), or compare with the human values of the aspect judged")


def _describe(coverage: Coverage) -> str:
    return ", ".join(f"{k.removeprefix('n_').replace('_', ' ')}: {v}" for k, v in coverage.to_dict().items() if v)
