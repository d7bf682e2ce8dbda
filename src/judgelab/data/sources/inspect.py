"""Inspect AI eval logs (``.eval`` zip archives and ``.json`` logs; log format version 2).

Each sample of each epoch becomes a pointwise item (system: the log's model; group: the task's
sample), and each scorer's score a judgment whose judge is the scorer (a model-graded scorer's
grader model is kept in ``extra.grader``). Inspect's letter grades read as its ``value_to_float``
does: C 1, P 0.5, I 0, N 0 (the letter stays as the label); a score of NaN or null (the grader
gave no grade) is an ``unparsable`` judgment, never a 0.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    dataset,
    files_in,
    head,
    item,
    json_document,
    judgment,
    need,
    text,
)
from judgelab.errors import DataError
from judgelab.files import within_bound

NAME = "inspect"
KNOWN_VERSIONS = (2,)
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
EXPECTED = "an Inspect AI eval log (version 2: eval, samples with scores)"
_ZSTD = 93  # Inspect writes its .eval archives' members with Zstandard (zip method 93)


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(f.suffix == ".eval" for f in path.rglob("*.eval")) or any(
            _json_log(f) for f in path.rglob("*.json"))
    return (path.suffix == ".eval" and zipfile.is_zipfile(path)) or _json_log(path)


def _json_log(path: Path) -> bool:
    start = head(path)[:4096]
    return path.suffix == ".json" and start.lstrip().startswith("{") and all(
        f'"{key}"' in start for key in ("version", "status", "eval"))


def read(path: Path) -> SourceData:
    items, judgments, notes = [], [], []
    for log in files_in(path, ("*.eval", "*.json")):
        if path.is_dir() and log.suffix == ".json" and not _json_log(log):
            continue
        header, samples = _read_log(log)
        got = _samples(log, header, samples)
        items += got[0]
        judgments += got[1]
        if got[2]:
            notes.append(f"{log.name}: {got[2]} score(s) without a value (NaN or null) kept as unparsable")
    return SourceData(NAME, dataset(items, str(path)), judgments, tuple(notes))


def _read_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if path.suffix == ".eval":
        members = _archive(path)
        header = members.get("header.json") or members.get("_journal/start.json")
        if header is None:
            raise DataError(f"no header.json in the archive: expected {EXPECTED}", path)
        samples = [members[name] for name in sorted(members) if name.startswith("samples/")]
        return header, samples
    log = json_document(path)
    if not isinstance(log, dict):
        raise DataError(f"expected {EXPECTED}, got a JSON {type(log).__name__}", path)
    return log, log.get("samples") or []


def _archive(path: Path) -> dict[str, Any]:
    """The JSON members of a .eval archive, each decompressed within the input bound."""
    bound = within_bound(path)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        raise DataError(f"not a readable .eval archive ({err})", path) from None
    with archive, open(path, "rb") as raw:
        infos = [info for info in archive.infolist() if info.filename.endswith(".json")]
        if sum(info.file_size for info in infos) > bound:
            raise DataError("the archive unpacked is over the limit on one input (JUDGELAB_MAX_INPUT_BYTES)", path)
        members = {}
        for info in infos:
            data = _zstd_member(raw, info) if info.compress_type == _ZSTD else archive.read(info)
            try:
                members[info.filename] = json.loads(data)
            except ValueError as err:
                raise DataError(f"{info.filename}: bad JSON ({err})", path) from None
        return members


def _zstd_member(raw: Any, info: zipfile.ZipInfo) -> bytes:
    """A Zstandard member read past its local header (Python's zipfile knows no method 93 before 3.14)."""
    import pyarrow as pa

    raw.seek(info.header_offset + 26)
    name_length, extra_length = int.from_bytes(raw.read(2), "little"), int.from_bytes(raw.read(2), "little")
    raw.seek(info.header_offset + 30 + name_length + extra_length)
    codec = pa.Codec("zstd")
    return codec.decompress(raw.read(info.compress_size), decompressed_size=info.file_size).to_pybytes()


def _samples(log: Path, header: dict[str, Any], samples: list[dict[str, Any]]):
    where = str(log)
    need(header, ("version", "eval"), where, None, EXPECTED)
    if header["version"] not in KNOWN_VERSIONS:
        raise DataError(f"log format version {header['version']!r}: this reader knows version "
                        f"{', '.join(map(str, KNOWN_VERSIONS))} (Inspect AI 0.3)", where, None, "version")
    need(header["eval"], ("task", "model"), where, None, EXPECTED)
    task, model = header["eval"]["task"], header["eval"]["model"]
    if not samples:
        raise DataError(f"no samples (status {header.get('status')!r}): expected {EXPECTED}", where)
    graders = _graders(header)
    items, judgments, empty = [], [], 0
    for k, sample in enumerate(samples):
        record = f"sample {sample.get('id', k)!r} epoch {sample.get('epoch')}"
        need(sample, ("id", "epoch", "input", "output", "scores"), where, None, EXPECTED, record)
        if not sample["scores"]:
            raise DataError(f"{record}: no scores (status {header.get('status')!r}); expected each sample scored "
                            "by at least one scorer (inspect score LOG scores a log)", where)
        item_id = f"{model}/{task}/{sample['id']}/{sample['epoch']}"
        items.append(item({"id": item_id, "group_id": f"{task}/{sample['id']}", "system_id": model,
                           "dataset": task, "source": _prompt(sample["input"]),
                           "output": (sample["output"] or {}).get("completion") or "",
                           "reference": _target(sample.get("target")), "extra": {"epoch": sample["epoch"]}},
                          where, None))
        for scorer, score in sample["scores"].items():
            for judge, value in _values(scorer, score.get("value") if isinstance(score, dict) else None):
                row = _judgment(item_id, judge, value, score, graders.get(scorer))
                empty += row.get("status", "ok") != "ok"
                judgments.append(judgment(row, where, None))
    return items, judgments, empty


def _graders(header: dict[str, Any]) -> dict[str, str]:
    """Each model-graded scorer's grader model, from the log's results."""
    graders = {}
    for scorer in ((header.get("results") or {}).get("scores") or []):
        model = (scorer.get("params") or {}).get("model")
        name = model.get("model") if isinstance(model, dict) else model
        if isinstance(name, str):
            graders[scorer.get("name")] = name
    return graders


def _values(scorer: str, value: Any) -> list[tuple[str, Any]]:
    """(judge, value): a scorer giving a dict of values (one per aspect) is one judge per key."""
    if isinstance(value, dict):
        return [(f"{scorer}/{key}", v) for key, v in value.items()]
    return [(scorer, value)]


def _judgment(item_id: str, judge: str, value: Any, score: dict[str, Any], grader: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"item_id": item_id, "judge": judge, "explanation": score.get("explanation"),
                           "extra": {"answer": score.get("answer")} | ({"grader": grader} if grader else {})}
    if isinstance(value, bool):
        return row | {"score": float(value), "label": str(value).lower()}
    if isinstance(value, (int, float)) and math.isfinite(value):
        return row | {"score": value}
    if isinstance(value, str) and value in LETTERS:
        return row | {"score": LETTERS[value], "label": value}
    if isinstance(value, str):
        return row | {"label": value}
    return row | {"status": "unparsable", "reason": f"the scorer gave no value ({value!r})"}


def _prompt(value: Any) -> str:
    """A sample's input: the text, or its chat messages' texts."""
    if isinstance(value, str):
        return value
    parts = []
    for message in value or []:
        content = message.get("content") if isinstance(message, dict) else message
        parts.append(content if isinstance(content, str) else text(content))
    return "\n\n".join(parts)


def _target(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    return " | ".join(value) if isinstance(value, list) else str(value)
