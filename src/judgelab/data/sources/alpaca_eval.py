"""AlpacaEval ``annotations.json``: each row an instruction, the reference model's output
(``output_1``, ``generator_1``) and the evaluated model's (``output_2``, ``generator_2``), and the
annotator's ``preference``.

Each row becomes a comparison between systems (system_a the reference model, system_b the
evaluated one, both texts) and the annotator's verdict a judgment (judge: the annotator).
``preference`` is AlpacaEval's: 1 the reference wins, 2 the model wins, 1.5 (or 0) a draw, and
in between the weighted annotators' probability 1 + P(model wins). The verdict is its side
(``b`` above 1.5, ``a`` below, ``tie`` at 1.5 or 0; AlpacaEval's discrete win rate), and the
judgment's score keeps P(model wins) = preference - 1 (its ``win_rate`` is their mean).
A folder (``results/``) is read whole: every ``annotations.json`` under it. Rows comparing a
model with itself (the reference model's own file) are left out and counted.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    Part,
    files_in,
    head,
    item,
    json_records,
    judgment,
    merged,
    need,
    typed,
)
from judgelab.errors import DataError

NAME = "alpaca-eval"
FIELDS = ("instruction", "output_1", "generator_1", "output_2", "generator_2", "preference")
EXPECTED = "AlpacaEval annotations (instruction, output_1, generator_1, output_2, generator_2, preference)"


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(path.rglob("annotations.json"))
    start = head(path)[:8192]
    return start.lstrip().startswith("[") and all(f'"{key}"' in start for key in ("generator_1", "output_2"))


def read(path: Path, *, partial: bool = False) -> SourceData:
    parts, notes = [], []
    for annotated in files_in(path, ("annotations.json",)):
        got = _annotations(annotated)
        parts.append(Part(annotated, got[0], got[1]))
        notes += got[2]
    items, judgments, _ = merged(parts, str(path))  # a record in two files: both named
    return SourceData(NAME, items, judgments, tuple(notes))


def instruction_group(instruction: str) -> str:
    """The same instruction in every model's file: its hash (rows carry no index of their own)."""
    return hashlib.sha1(instruction.encode()).hexdigest()[:12]


def _annotations(path: Path):
    where = str(path)
    items, judgments, selves, empty = [], [], 0, 0
    seen: dict[str, int] = {}
    for line, row in json_records(path):
        need(row, FIELDS, where, line, EXPECTED)
        if row["generator_1"] == row["generator_2"]:
            selves += 1
            continue
        group = instruction_group(typed(row["instruction"], str, where, "'instruction'", line))
        seen[group] = seen.get(group, 0) + 1  # an instruction asked twice keeps both rows
        item_id = f"{row['generator_2']}/{group}" + (f"/{seen[group]}" if seen[group] > 1 else "")
        items.append(item({"id": item_id, "group_id": group, "dataset": row.get("dataset"),
                           "instruction": row["instruction"], "system_a": row["generator_1"],
                           "system_b": row["generator_2"], "output_a": row["output_1"], "output_b": row["output_2"]},
                          where, line))
        verdict = _verdict(row["preference"], where, line)
        judge = row.get("annotator") or "alpaca-eval"
        if verdict is None:
            empty += 1
            judgments.append(judgment({"item_id": item_id, "judge": judge, "status": "unparsable",
                                       "reason": "the annotator gave no preference (null)"}, where, line))
        else:
            judgments.append(judgment({"item_id": item_id, "judge": judge, "label": verdict[0], "score": verdict[1],
                                       "extra": {"preference": row["preference"]}}, where, line))
    notes = [f"{path}: {selves} row(s) comparing a model with itself left out"] if selves else []
    if empty:
        notes.append(f"{path}: {empty} row(s) without a preference kept as unparsable")
    return items, judgments, notes


def _verdict(preference, where: str, line: int) -> tuple[str, float] | None:
    """(verdict, P(model wins)) from AlpacaEval's preference; None for no preference."""
    if preference is None:
        return None
    if isinstance(preference, str):  # some older files write the number as text
        try:
            preference = float(preference)
        except ValueError:
            preference = None
    if isinstance(preference, bool) or not isinstance(preference, (int, float)) or not (
            preference == 0 or 1 <= preference <= 2):
        raise DataError("preference must be 1 (output_1 wins) to 2 (output_2 wins), or 0 for a draw "
                        f"(got {preference!r})", where, line, "preference")
    if preference == 0 or preference == 1.5:
        return "tie", 0.5
    return ("b" if preference > 1.5 else "a"), float(preference) - 1
