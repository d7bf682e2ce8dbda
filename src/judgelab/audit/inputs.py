"""What an audit reads: a judge's pairwise verdicts (one or both orders) and the comparisons they
are about (human label, question, systems, texts), checked at the boundary.

Read from JSON lines (a run folder's judgments.jsonl too) so that a bad verdict is named with its
file and line. Verdicts may be this toolkit's (``label``, and ``extra.verdicts`` of a two-order
pairwise run) or published ones at a dotted ``field`` (Chatbot Arena: ``prediction``; LLMBar:
``prediction.swap_false`` and, for the other order, ``prediction.swap_true``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgelab.data.io import iter_jsonl, judgments_file, select_judge
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, term
from judgelab.metrics.align import several_judges
from judgelab.metrics.bias import TIE_ALIASES

ALLOWED = ("a", "b", *sorted(TIE_ALIASES))


@dataclass(frozen=True)
class Verdicts:
    """One judge's verdicts, by item id: the original order's and, when judged, the swapped one's
    (both in the item's names: "a" is output_a)."""

    judge: str | None
    original: dict[str, str | None]
    swapped: dict[str, str | None]

    @property
    def both_orders(self) -> bool:
        return any(v is not None for v in self.swapped.values())


@dataclass(frozen=True)
class Pair:
    """One pairwise comparison (an item): what the audit needs of it."""

    id: str
    group: str
    human: str | None = None
    system_a: str | None = None
    system_b: str | None = None
    output_a: str | None = None
    output_b: str | None = None


def _at(record: dict[str, Any], field: str) -> Any:
    value: Any = record
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _checked(value: Any, where: str, line: int, what: str) -> str | None:
    if value is None or value in ALLOWED:
        return value
    raise DataError(f"{what} is {value!r}: a pairwise verdict is 'a', 'b' or 'tie'", where, line)


def read_verdicts(path: Path | str, *, field: str | None = None, swapped_field: str | None = None,
                  judge: str | None = None) -> Verdicts:
    """A judge's verdicts from a judgments file or run folder (JSON lines).

    Without ``field``: this toolkit's layout, the original order's verdict from
    ``extra.verdicts.original`` (else ``label``) and the swapped one from ``extra.verdicts.swapped``;
    published layouts name theirs with ``field`` / ``swapped_field``. ``judge`` keeps one judge's
    rows (a name or a prefix naming one) when the file holds several."""
    path = judgments_file(path)
    where = str(path)
    rows = list(_jsonl_rows(path))
    named = [Judgment.model_construct(item_id=str(r.get("item_id")), judge=r.get("judge")) for _, r in rows]
    judges = sorted({j.judge for j in named if j.judge is not None})
    if judge is not None:
        keep_ids = {id(j) for j in select_judge(named, judge, where)}
        rows = [row for row, j in zip(rows, named, strict=True) if id(j) in keep_ids]
        judges = sorted({r.get("judge") for _, r in rows})
        if len(judges) > 1:
            raise several_judges(judges, judge, where=where)
    elif len(judges) > 1:
        raise ConfigError(f"{where} holds {len(judges)} judges ({', '.join(judges[:8])}"
                          f"{' ...' if len(judges) > 8 else ''}): say which with {term('judge')}")
    original: dict[str, str | None] = {}
    swapped: dict[str, str | None] = {}
    for line, record in rows:
        if "item_id" not in record:
            raise DataError("no item_id", where, line)
        item_id = str(record["item_id"])
        if item_id in original:
            raise DataError(f"item {item_id!r} judged twice by this judge", where, line)
        first, second = _row_verdicts(record, field, swapped_field)
        original[item_id] = _checked(first, where, line, "the verdict")
        swapped[item_id] = _checked(second, where, line, "the swapped-order verdict")
    if not original:
        raise DataError("no judgments", where)
    return Verdicts(judge=judges[0] if len(judges) == 1 else None, original=original, swapped=swapped)


def _row_verdicts(record: dict[str, Any], field: str | None, swapped_field: str | None) -> tuple[Any, Any]:
    orders = _at(record, "extra.verdicts") if field is None else None
    if isinstance(orders, dict):
        first, second = orders.get("original"), orders.get("swapped")
    else:
        first = _at(record, field) if field else record.get("label")
        second = None
    if swapped_field:
        second = _at(record, swapped_field)
    return first, second


def _jsonl_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise DataError("no such file", path)
    return iter_jsonl(path)


def read_comparisons(path: Path | str) -> dict[str, Pair]:
    """The comparisons of an items file (JSON lines): ``id``, and as available ``label`` (the human
    verdict), ``group_id``, ``system_a``/``system_b``, ``output_a``/``output_b``. A system compared
    with itself, a repeated id or a label outside a/b/tie is refused with its line."""
    where = str(path)
    out: dict[str, Pair] = {}
    for line, record in _jsonl_rows(Path(path)):
        item_id = record.get("id")
        if item_id is None:
            raise DataError("no id", where, line)
        item_id = str(item_id)
        if item_id in out:
            raise DataError(f"id {item_id!r} appears twice", where, line)
        system_a, system_b = record.get("system_a"), record.get("system_b")
        if system_a is not None and system_a == system_b:
            raise DataError(f"system {system_a!r} is compared with itself", where, line)
        out[item_id] = Pair(
            id=item_id, group=str(record.get("group_id") or item_id),
            human=_checked(record.get("label"), where, line, "the label"),
            system_a=system_a, system_b=system_b, output_a=_reply(record, "a"), output_b=_reply(record, "b"))
    if not out:
        raise DataError("no items", where)
    return out


def _reply(record: dict, side: str) -> str | None:
    """A side's output: ``output_X``, else the last assistant reply of ``messages_X`` (two assistants'
    conversations: the verbosity rows measure that reply, as Item reads the side's output)."""
    text = record.get(f"output_{side}")
    messages = record.get(f"messages_{side}")
    if text is None and isinstance(messages, list):
        replies = [m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
                   and isinstance(m.get("content"), str) and m["content"].strip()]
        text = replies[-1] if replies else None
    return text


def read_human_labels(path: Path | str, comparisons: dict[str, Pair]) -> dict[str, Pair]:
    """The comparisons with their human verdict replaced by a labels file's (annotate's
    labels.jsonl, or any file with ``item_id`` and ``label``/``value``; read by
    :func:`judgelab.data.labels.load_labels`): by the annotators' mean preference when several
    labelled an item (a > tie > b), as ``judgelab evaluate --human`` does. Labels for comparisons
    not in the data are refused; comparisons nobody labelled keep no human verdict."""
    from judgelab.data.labels import PREFERENCES, load_labels, refuse_unknown_ids

    labels = load_labels(path)
    refuse_unknown_ids(labels, comparisons)
    preferences: dict[str, list[float]] = {}
    for label in labels:
        if label.value not in PREFERENCES:
            where, _, line = label.where.rpartition(":")
            raise DataError(f"the label is {label.value!r}: a pairwise verdict is 'a', 'b' or 'tie'",
                            where or None, int(line) if line.isdigit() else None)
        preferences.setdefault(label.item_id, []).append(PREFERENCES[label.value])
    labelled = {}
    for item_id, comparison in comparisons.items():
        mean = sum(preferences[item_id]) / len(preferences[item_id]) if item_id in preferences else None
        human = None if mean is None else "a" if mean > 0.5 else "b" if mean < 0.5 else "tie"
        labelled[item_id] = replace(comparison, human=human)
    return labelled


def comparisons_of(items: Iterable[Any]) -> dict[str, Pair]:
    """The comparisons of pairwise items already read (another tool's file, docs/sources.md)."""
    out = {}
    for one in items:
        if one.kind != "pairwise":
            raise ConfigError("the audit measures a pairwise judge's biases: these items are pointwise "
                              f"({one.id!r}); judgelab evaluate and meta read them")
        out[one.id] = Pair(id=one.id, group=one.group, human=one.label, system_a=one.system_a,
                           system_b=one.system_b, output_a=one.output_a, output_b=one.output_b)
    return out


def verdicts_of(judgments: list[Judgment], judge: str | None = None, where: str | None = None) -> Verdicts:
    """One judge's verdicts from judgments already read: both orders from ``extra.verdicts`` when the
    tool judged both, else the label (a failed judgment: no verdict)."""
    names = sorted({j.judge for j in judgments if j.judge is not None})
    if judge is not None:
        judgments = select_judge(judgments, judge, where)
        if len({j.judge for j in judgments}) > 1:
            raise several_judges(sorted({j.judge for j in judgments if j.judge is not None}), judge, where=where)
    elif len(names) > 1:
        raise ConfigError(f"{where or 'the file'} holds {len(names)} judges ({', '.join(names[:8])}"
                          f"{' ...' if len(names) > 8 else ''}): say which with {term('judge')}")
    original: dict[str, str | None] = {}
    swapped: dict[str, str | None] = {}
    for one in judgments:
        if one.item_id in original:
            raise DataError(f"item {one.item_id!r} judged twice by this judge", where)
        orders = one.extra.get("verdicts")
        if isinstance(orders, dict):
            first, second = orders.get("original"), orders.get("swapped")
        else:
            first, second = (one.label if one.ok else None), None
        original[one.item_id] = _checked(first, where or "", None, "the verdict")  # type: ignore[arg-type]
        swapped[one.item_id] = _checked(second, where or "", None,  # type: ignore[arg-type]
                                         "the swapped-order verdict")
    if not original:
        raise DataError("no judgments", where)
    chosen = sorted({j.judge for j in judgments if j.judge is not None})
    return Verdicts(judge=chosen[0] if len(chosen) == 1 else None, original=original, swapped=swapped)
