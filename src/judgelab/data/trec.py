"""TREC qrels files (``qid 0 docid label``) from a judge's relevance labels, and back.

A judgment becomes a qrels line when it is ok and its label (else score) is a whole number;
the item gives the qid and docid. Judgments that are not (unparsable, errors, or no matching
relevance item) are counted and reported, never written as 0: a missing label is not a
"not relevant".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import ir_measures

from judgelab.data.io import text_lines
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import DataError
from judgelab.files import write_atomic


@dataclass
class QrelsWritten:
    path: Path
    written: int
    #: item id -> why no line was written for it
    skipped: dict[str, str] = field(default_factory=dict)


def judgment_qrels(judgments: Iterable[Judgment], items: Sequence[Item]) -> tuple[list[ir_measures.Qrel], dict[str, str]]:
    """Qrels from the judgments of relevance items, in judgment order, and the skipped item ids with why."""
    by_id = {item.id: item for item in items}
    qrels, skipped = [], {}
    for judgment in judgments:
        item = by_id.get(judgment.item_id)
        if item is None or item.kind != "relevance":
            skipped[judgment.item_id] = "no relevance item (qid, docid) with this id in the data"
            continue
        if not judgment.ok:
            skipped[judgment.item_id] = f"judgment is {judgment.status}: {judgment.reason}"
            continue
        label = judgment.label if isinstance(judgment.label, int) else judgment.score
        if label is None or not float(label).is_integer():
            skipped[judgment.item_id] = f"label {label!r} is not a whole number"
            continue
        qrels.append(ir_measures.Qrel(str(item.qid), str(item.docid), int(label)))
    return qrels, skipped


def write_qrels(judgments: Iterable[Judgment], items: Sequence[Item], path: str | Path) -> QrelsWritten:
    """Write ``qid 0 docid label`` lines (TREC qrels) for the judgments that carry a label."""
    path = Path(path)
    qrels, skipped = judgment_qrels(judgments, items)
    qrels = _one_label_per_pair(qrels)
    write_atomic(path, "".join(f"{q.query_id} 0 {q.doc_id} {q.relevance}\n" for q in qrels))
    return QrelsWritten(path, len(qrels), skipped)


def unfit_id(text: str) -> bool:
    """Does a qid or docid hold what a TREC file or the scorer cannot: white space (the columns' separator)
    or a control character (a NUL ends a C string, so the C scorer ir_measures runs would read ``d1\\0x``
    as ``d1``)?"""
    return any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in text)


def check_ids(qid: str, docid: str, path: str | Path, line: int) -> None:
    """A DataError naming the file and line when a qid or docid read from it is ``unfit_id``."""
    for name, value in (("qid", qid), ("docid", docid)):
        if unfit_id(value):
            raise DataError(f"{name} {value!r} holds a control character; TREC ids are plain text", path, line, name)


def _one_label_per_pair(qrels: list[ir_measures.Qrel]) -> list[ir_measures.Qrel]:
    """The qrels once each, checked: ids a qrels line can hold, and one label per (qid, docid)."""
    kept: dict[tuple[str, str], ir_measures.Qrel] = {}
    for qrel in qrels:
        if unfit_id(qrel.query_id + qrel.doc_id):
            raise DataError(f"qid {qrel.query_id!r} / docid {qrel.doc_id!r} contains whitespace or a control "
                            "character; TREC qrels columns are space-separated text")
        pair = (qrel.query_id, qrel.doc_id)
        first = kept.setdefault(pair, qrel)
        if first.relevance != qrel.relevance:
            raise DataError(f"qid {pair[0]!r} / docid {pair[1]!r} is labelled both {first.relevance} and "
                            f"{qrel.relevance} (two items with this pair); a qrels file holds one label per pair: "
                            "judge each (qid, docid) once")
    return list(kept.values())


def read_qrels(path: str | Path) -> list[ir_measures.Qrel]:
    """Qrels from a TREC qrels file, checked line by line (a bad line is a DataError naming it)."""
    path = Path(path)
    qrels = []
    for number, line in text_lines(path):  # under the input bound, as every file a user names
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise DataError(f"expected 4 columns 'qid iteration docid label', got {len(parts)}", path=path, line=number)
        try:
            label = int(parts[3])
        except ValueError:
            raise DataError(f"label {parts[3]!r} is not an integer", path=path, line=number, field="label") from None
        check_ids(parts[0], parts[2], path, number)
        qrels.append(ir_measures.Qrel(parts[0], parts[2], label))
    return qrels
