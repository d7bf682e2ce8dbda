"""Human-label files: what `judgelab annotate` writes, and any table of human scores, as labels.

One reader serves every command that takes ``--human LABELS`` (``meta``, ``optimize``, ``fit``,
``train``, ``evaluate``) and ``judgelab agreement``. It accepts:

* annotate's ``labels.jsonl``: one answer per line (``item_id``, ``aspect``, ``value``,
  ``annotator``, ``seconds``, ``timestamp``, ``note``, ``skipped``, ``order``, ``scale``, ...);
* any JSONL/JSON/CSV/TSV/Parquet with ``item_id`` and ``value``, ``score`` or ``label``
  (optionally ``aspect`` and ``annotator``);
* items with ``id`` and ``scores`` {aspect: value} (``scores.<aspect>`` columns in tables), or
  ``id`` and a pairwise ``label``.

A value is a number, or ``a``/``b``/``tie`` for a pairwise preference (in the items' own order:
annotate un-swaps the order it showed). Later answers for the same (item, aspect, annotator)
replace earlier ones, so going back and changing a label is just another line; a skip is kept as a
record (``skipped: true``) but is not a label.

>>> labels = load_labels("labels.jsonl")                              # doctest: +SKIP
>>> human_values(labels, "coherence", items)["sfres-0001"]            # doctest: +SKIP
4.5
>>> items = with_human_labels(items, labels, "coherence")             # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from judgelab.data.item import Item, Score
from judgelab.data.rows import _Schema, open_rows
from judgelab.data.validation import _validate
from judgelab.errors import ConfigError, DataError

__all__ = ["Label", "PREFERENCES", "human_values", "label_matrix", "labels_aspect", "latest_answers", "load_labels",
           "read_labels", "refuse_unknown_ids", "values_for_items", "with_human_labels"]

#: Pairwise preferences as numbers, so several annotators' answers average (a > tie > b).
PREFERENCES = {"a": 1.0, "tie": 0.5, "b": 0.0}
_VALUE_FIELDS = ("value", "score", "label")
_SHOWN_IDS = 5

Value = Score | Literal["a", "b", "tie"]


class Label(BaseModel):
    """One answer of one annotator for one item and aspect (``aspect`` None: the file did not say,
    so it stands for whichever aspect is asked for)."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(min_length=1)
    aspect: str | None = None
    value: Value | None = None
    annotator: str | None = None
    skipped: bool = False
    seconds: float | None = None
    timestamp: str | None = None
    note: str | None = None
    order: Literal["ab", "ba"] | None = None  # pairwise: the order annotate showed (ba = B on the left)
    scale: tuple[Score, Score] | None = None  # the scale the value was given on
    answer_id: str | None = None  # annotate's form nonce: a resubmitted form is not written twice
    extra: dict[str, Any] = Field(default_factory=dict)
    _where: str = PrivateAttr(default="<labels>")

    @field_validator("item_id", "annotator", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return value

    @property
    def where(self) -> str:
        """``file:line`` the label was read from (for error messages)."""
        return self._where

    @property
    def number(self) -> float | None:
        """The value as a number (preferences: a=1, tie=0.5, b=0), None for a skip."""
        if self.value is None:
            return None
        return PREFERENCES[self.value] if isinstance(self.value, str) else float(self.value)

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        return (self.item_id, self.aspect, self.annotator)


# -- reading ------------------------------------------------------------------------------------

_LABELS = _Schema(Label, flat=("scores",), json_cells=("extra", "scale"))


def read_labels(source: str | os.PathLike) -> list[Label]:
    """Every record of a label file in file order, skips and replaced answers included (what
    annotate resumes from). A malformed row is a DataError naming file, line and field."""
    where, rows, _ = open_rows(source, _LABELS)
    labels: list[Label] = []
    for line, record in rows:
        for label in _labels_of(record, where, line):
            label._where = f"{where}:{line}"
            labels.append(label)
    return labels


def load_labels(source: str | os.PathLike) -> list[Label]:
    """The labels a file holds now: the latest answer per (item, aspect, annotator), skips left out."""
    return [label for label in latest_answers(read_labels(source)) if not label.skipped and label.value is not None]


def latest_answers(labels: Iterable[Label]) -> list[Label]:
    """The last answer per (item, aspect, annotator), in the order the keys first appeared."""
    latest: dict[tuple, Label] = {}
    for label in labels:
        latest[label.key] = label  # a dict keeps the first insertion's position
    return list(latest.values())


def _labels_of(record: dict[str, Any], where: str, line: int) -> Iterator[Label]:
    if "item_id" in record:
        yield _answer(record, where, line)
    elif "id" in record:
        yield from _item_labels(record, where, line)
    else:
        raise DataError("a label row needs 'item_id' with 'value', 'score' or 'label' (or an item's 'id' "
                        "with 'scores')", where, line, "item_id")


def _answer(record: dict[str, Any], where: str, line: int) -> Label:
    record = dict(record)
    present = [name for name in _VALUE_FIELDS if record.get(name) is not None]
    if not present and not _truthy(record.get("skipped")):
        raise DataError("no value: a label needs 'value', 'score' or 'label' (or 'skipped': true)",
                        where, line, "value")
    field = present[0] if present else "value"
    value = _value(record.get(field), where, line, field)
    for name in _VALUE_FIELDS:
        record.pop(name, None)
    known = Label.model_fields.keys()
    extra = {key: record.pop(key) for key in [k for k in record if k not in known]}
    if extra:
        if not isinstance(record.get("extra") or {}, dict):
            raise DataError("'extra' must be an object", where, line, "extra")
        record["extra"] = {**(record.get("extra") or {}), **extra}
    return _validate(Label, {**record, "value": value}, where, line)


def _item_labels(record: dict[str, Any], where: str, line: int) -> Iterator[Label]:
    """An item row: one label per ``scores`` entry, or its pairwise/graded ``label``."""
    item_id = record["id"]
    scores = record.get("scores") or {}
    if not isinstance(scores, Mapping):
        raise DataError("'scores' must be an object {aspect: value}", where, line, "scores")
    for aspect, raw in scores.items():
        value = _value(raw, where, line, f"scores.{aspect}")
        if value is not None:
            yield _validate(Label, {"item_id": item_id, "aspect": str(aspect), "value": value}, where, line)
    if not scores and record.get("label") is not None:
        value = _value(record["label"], where, line, "label")
        yield _validate(Label, {"item_id": item_id, "value": value}, where, line)


def _value(raw: Any, where: str, line: int, field: str) -> float | str | None:
    """A number (text from CSV cells too) or a preference a/b/tie; anything else names its field."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise DataError(f"expected a number or a/b/tie, got {raw!r}", where, line, field)
    if isinstance(raw, (int, float)):
        number = float(raw)
    elif isinstance(raw, str):
        text = raw.strip().lower()
        if text in PREFERENCES:
            return text
        try:
            number = float(text)
        except ValueError:
            raise DataError(f"expected a number or a/b/tie, got {raw[:40]!r}", where, line, field) from None
    else:
        raise DataError(f"expected a number or a/b/tie, got {type(raw).__name__}", where, line, field)
    if not math.isfinite(number):
        raise DataError(f"expected a finite number, got {raw!r}", where, line, field)
    return number


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"))


# -- values per item ---------------------------------------------------------------------------


def for_aspect(labels: Iterable[Label], aspect: str) -> list[Label]:
    """The current labels (latest answer, no skips) for ``aspect`` (or labels that name no aspect)."""
    chosen = [label for label in latest_answers(labels)
              if label.aspect in (aspect, None) and not label.skipped and label.value is not None]
    if not chosen:
        aspects = sorted({label.aspect for label in labels if label.aspect is not None})
        raise ConfigError(f"no human labels for aspect {aspect!r}; the labels are for "
                          f"{', '.join(repr(a) for a in aspects) or 'no named aspect'}")
    kinds = {isinstance(label.value, str) for label in chosen}
    if len(kinds) > 1:
        first = next(label for label in chosen if isinstance(label.value, str))
        raise DataError(f"aspect {aspect!r} mixes numbers and pairwise preferences (a/b/tie)", first.where,
                        field="value")
    return chosen


def labels_aspect(labels: Iterable[Label], aspect: str | None = None) -> str:
    """``aspect``, else the one aspect the labels name; a ConfigError when that is not one."""
    if aspect is not None:
        return aspect
    named = list(dict.fromkeys(label.aspect for label in labels if label.aspect is not None))
    if len(named) == 1:
        return named[0]
    if not named:
        raise ConfigError("the labels name no aspect: say which one they rate with --aspect")
    raise ConfigError(f"the labels rate {len(named)} aspects ({', '.join(named)}): choose one with --aspect")


def human_values(labels: Iterable[Label], aspect: str, items: Iterable[Item] | None = None) -> dict[str, float]:
    """One human value per labelled item for ``aspect``: the mean over annotators (preferences as
    a=1, tie=0.5, b=0). With ``items``: labels for ids not among them, labels of the wrong kind, and
    values outside the scale the items declare for the aspect are errors."""
    labels = list(labels)
    chosen = for_aspect(labels, aspect)
    if items is not None:
        check_against_items(chosen, aspect, items)
    sums: dict[str, list[float]] = {}
    for label in chosen:
        sums.setdefault(label.item_id, []).append(label.number)  # type: ignore[arg-type]
    return {item_id: sum(values) / len(values) for item_id, values in sums.items()}


def values_for_items(labels: str | os.PathLike | Iterable[Label], items: Sequence[Item],
                     aspect: str | None = None) -> tuple[dict[str, Any], str | None]:
    """What ``--human LABELS`` gives ``evaluate``, ``compare`` and ``sample --plan``: one human value per
    labelled item, and the aspect. Comparisons between outputs take the preferences (the aspect the file
    names, else ``preference``); relevance items whole grades; scored items the aspect the file labels
    (``aspect``, else the one it names; labels naming none rate the items' one aspect)."""
    read = load_labels(labels) if isinstance(labels, (str, os.PathLike)) else list(labels)
    named = any(label.aspect for label in read)
    kind = items[0].kind if items else None
    if kind == "pairwise":
        return human_values(read, aspect or (labels_aspect(read) if named else "preference"), items), aspect
    if kind == "relevance":
        return _whole_grades(human_values(read, "relevance", items)), aspect
    aspect = labels_aspect(read, aspect) if named else aspect or _only_aspect(items)
    return human_values(read, aspect, items), aspect


def _only_aspect(items: Iterable[Item]) -> str:
    """The one aspect the items carry: what labels that name no aspect rate."""
    aspects = sorted({a for item in items for a in item.scores})
    if len(aspects) != 1:
        raise ConfigError(f"the labels name no aspect and the items carry {len(aspects)} "
                          f"({', '.join(aspects) or 'none'}): say which one they rate with --aspect")
    return aspects[0]


def _whole_grades(values: dict[str, float]) -> dict[str, int]:
    bad = {k: v for k, v in values.items() if not float(v).is_integer()}
    if bad:
        item_id, value = next(iter(bad.items()))
        raise ConfigError(f"relevance labels must be whole grades; {item_id!r} has {value!r} (several annotators "
                          "disagreeing average to fractions: adjudicate them first)")
    return {k: int(v) for k, v in values.items()}


def check_against_items(labels: Sequence[Label], aspect: str, items: Iterable[Item]) -> None:
    """Refuse labels that cannot belong to ``items``: unknown ids (another data set), numbers for
    pairwise items or preferences for scored ones, values off the items' scale for ``aspect``."""
    by_id = {item.id: item for item in items}
    refuse_unknown_ids(labels, by_id)
    for label in labels:
        item = by_id[label.item_id]
        pairwise_value, pairwise_item = isinstance(label.value, str), item.kind == "pairwise"
        if pairwise_value != pairwise_item:
            what = "a pairwise preference" if pairwise_value else "a number"
            raise DataError(f"item {label.item_id!r} is a {item.kind} item but its label is {what} "
                            f"({label.value!r})", label.where, field="value")
        scale = item.aspect_scale(aspect)
        if scale is None or pairwise_value:
            continue
        low, high = scale
        if not low <= label.number <= high:  # type: ignore[operator]
            raise DataError(f"value {label.value:g} for item {label.item_id!r} is outside the scale "
                            f"[{low:g}, {high:g}] the data declares for {aspect!r}: a human file on another scale?",
                            label.where, field="value")
        if label.scale is not None and tuple(label.scale) != (low, high):
            raise DataError(f"labelled on the scale [{label.scale[0]:g}, {label.scale[1]:g}] but the data declares "
                            f"[{low:g}, {high:g}] for {aspect!r}: a human file on another scale?",
                            label.where, field="scale")


def refuse_unknown_ids(labels: Sequence[Label], known: Collection[str]) -> None:
    """A DataError naming (some of) the labelled ids that are not ``known``: labels from another data set."""
    unknown = list(dict.fromkeys(label.item_id for label in labels if label.item_id not in known))
    if unknown:
        shown = ", ".join(repr(i) for i in unknown[:_SHOWN_IDS]) + (", ..." if len(unknown) > _SHOWN_IDS else "")
        first = next(label for label in labels if label.item_id not in known)
        raise DataError(f"{len(unknown)} labelled item ids are not in the data ({shown}): a labels file from "
                        "another data set?", first.where.rpartition(":")[0] or None, field="item_id")


def with_human_labels(items: Iterable[Item], labels: Iterable[Label], aspect: str) -> list[Item]:
    """Copies of ``items`` whose human value for ``aspect`` is the labels' (``scores[aspect]``; for
    pairwise items ``label`` a/b/tie by the annotators' mean preference). Items nobody labelled
    have no human value for the aspect, whatever the data carried."""
    items = list(items)
    values = human_values(labels, aspect, items)
    return [_relabelled(item, aspect, values.get(item.id)) for item in items]


def _relabelled(item: Item, aspect: str, value: float | None) -> Item:
    if item.kind == "pairwise":
        label = None if value is None else "a" if value > 0.5 else "b" if value < 0.5 else "tie"
        return item.model_copy(update={"label": label})
    scores = {name: score for name, score in item.scores.items() if name != aspect}
    if value is not None:
        scores[aspect] = value
    update: dict[str, Any] = {"scores": scores}
    if item.kind == "relevance" and aspect in ("relevance", "label"):
        # human_score falls back on the graded label: it must follow the human file too
        update["label"] = None if value is None or not float(value).is_integer() else int(value)
    return item.model_copy(update=update)


def label_matrix(labels: Iterable[Label], aspect: str) -> tuple[list[str], list[str], list[list[float | None]]]:
    """(annotators, item ids, values[annotator][item]) for ``aspect``; None where an annotator gave
    no label. Labels without an annotator count as one annotator named ``""``."""
    chosen = for_aspect(list(labels), aspect)
    annotators = list(dict.fromkeys(label.annotator or "" for label in chosen))
    item_ids = list(dict.fromkeys(label.item_id for label in chosen))
    row = {name: i for i, name in enumerate(annotators)}
    column = {item_id: j for j, item_id in enumerate(item_ids)}
    matrix: list[list[float | None]] = [[None] * len(item_ids) for _ in annotators]
    for label in chosen:
        matrix[row[label.annotator or ""]][column[label.item_id]] = label.number
    return annotators, item_ids, matrix
