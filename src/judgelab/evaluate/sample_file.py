"""The sample file ``judgelab sample`` writes and ``evaluate --human-ids`` reads.

One id per line, optionally followed by a tab and the unit's inclusion probability; ``#`` lines
are comments, and the first one records how the sample was drawn. A plain list of ids (one per
line) is a valid sample file too: it is then read as a simple random sample within each system.
An id the line could not hold as it is (a tab, a line break, spaces around it, a leading ``#`` or
``"``) is written as a JSON string, ``"a\tb"``, so every id reads back exactly.

    # judgelab sample: method=active units=items budget=37 seed=0 mix=0.5
    hanna-0005\t0.0812
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import DataError
from judgelab.files import read_text, write_atomic

_HEADER = re.compile(r"#\s*judgelab sample:\s*(.*)")
# a decimal number in ASCII digits: Python's float() also reads other scripts' digits (٠.٥) and 0.000_1
_NUMBER = re.compile(r"\+?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: The smallest inclusion probability a design may give: below it one label stands for over a million
#: units, its weight swamps every other label, and at 1e-300 the weights' squares overflow (win
#: probabilities of 1.011 were reported). ``judgelab sample`` never draws below it either.
MIN_PROBABILITY = 1e-6


@dataclass(frozen=True)
class SampleFile:
    ids: tuple[str, ...]
    probabilities: tuple[float, ...] | None  # None: a plain id list
    method: str = "stratified"
    header: Mapping[str, object] | None = None  # read from a file: strings; from a draw: its numbers as they are


def read_sample(path: str | Path) -> SampleFile:
    path = Path(path)
    lines = read_text(path).splitlines()  # a regular file within the input bound
    ids, probabilities, header = [], [], {}
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if match := _HEADER.match(text):
            header = dict(part.split("=", 1) for part in match.group(1).split() if "=" in part)
        if not text or text.startswith("#"):
            continue
        parts = text.split("\t") if "\t" in text else [text]
        if len(parts) > 2:
            raise DataError("expected 'id' or 'id<TAB>inclusion probability'", path=path, line=number)
        unit = read_id(parts[0].strip(), path, number)
        if unit in seen:
            raise DataError(f"id {unit!r} is listed twice (first on line {seen[unit]})", path=path, line=number)
        seen[unit] = number
        ids.append(unit)
        if len(parts) == 2:
            probabilities.append(_probability(parts[1].strip(), path, number))
    if not ids:
        raise DataError("lists no id", path=path)
    if probabilities and len(probabilities) != len(ids):
        raise DataError("some lines give an inclusion probability and others do not", path=path)
    return SampleFile(tuple(ids), tuple(probabilities) if probabilities else None,
                      header.get("method", "stratified"), header or None)


def _probability(text: str, path: Path, line: int) -> float:
    def refused(why: str) -> DataError:
        return DataError(f"inclusion probability {text!r} {why}", path, line, "probability")

    if not _NUMBER.fullmatch(text):
        raise refused("is not a number written in ASCII digits (e.g. 0.25 or 2.5e-3)")
    value = float(text)
    if not 0 < value <= 1:
        raise refused("is not in (0, 1]")
    if value < MIN_PROBABILITY:
        raise refused(f"is below {MIN_PROBABILITY:g}: one label would stand for more than a million units")
    return value


def write_sample(path: str | Path, ids, probabilities, header: Mapping[str, object]) -> Path:
    head = "# judgelab sample: " + " ".join(f"{k}={v}" for k, v in header.items()) + "\n"
    head += "# id<TAB>inclusion probability (evaluate --human-ids reads both)\n"
    body = "".join(f"{_written_id(unit)}\t{float(p)!r}\n" for unit, p in zip(ids, probabilities, strict=True))
    return write_atomic(path, head + body)


def _written_id(unit: str) -> str:
    """``unit`` as it is, or as a JSON string when a plain line would not give it back."""
    plain = unit and unit == unit.strip() and unit[0] not in '#"' and "\t" not in unit and unit.splitlines() == [unit]
    return unit if plain else json.dumps(unit)  # ASCII: no line break of any kind is left raw


def read_id(cell: str, path: Path, line: int) -> str:
    if not cell.startswith('"'):
        return cell
    try:
        unit = json.loads(cell)
    except ValueError:
        unit = None
    if not isinstance(unit, str):
        raise DataError(f"id {cell!r} starts with a quote but is no JSON string", path=path, line=line)
    return unit
