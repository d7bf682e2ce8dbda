"""Inspect AI eval logs (``.eval`` zip archives and ``.json`` logs; log format version 2).

Each sample becomes a pointwise item (system: the log's model; group: the task's sample; a chat input is
kept in ``messages`` too, with its roles and tool calls, beside its texts joined as the source), and each
scorer's score a judgment whose judge is the scorer (a model-graded scorer's grader model is kept in
``extra.grader``). Values read as Inspect's ``value_to_float`` reads them: C 1, P 0.5, I 0, N 0, yes/no
and true/false 1/0, numbers and texts holding one (the text stays as the label); a score of NaN or null
(the grader gave no grade), or one Inspect cannot read as a number, is an ``unparsable`` judgment, never
a 0. A log of several epochs gives one item per sample, its verdict the epochs' values reduced as the log
says (``epochs_reducer``: mean by default; ``_inspect_scores``). A run that did not finish (status other
than ``success``: a .eval without header.json was stopped mid-way) is refused unless read ``partial``.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

from judgelab.data.sources import SourceData
from judgelab.data.sources._inspect_scores import READ, REDUCERS, known, reduce, to_float, unscored
from judgelab.data.sources._read import (
    Part,
    files_in,
    head,
    item,
    json_document,
    judgment,
    merged,
    need,
    text,
    typed,
)
from judgelab.errors import DataError
from judgelab.files import JsonBudget, within_bound
from judgelab.limits import max_input_bytes, over_limit

NAME = "inspect"
KNOWN_VERSIONS = (2,)
EXPECTED = "an Inspect AI eval log (version 2: eval, samples with scores)"
_ZSTD = 93  # Inspect writes its .eval archives' members with Zstandard (zip method 93)
_CHUNK = 1 << 20


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(f.suffix == ".eval" for f in path.rglob("*.eval")) or any(
            _json_log(f) for f in path.rglob("*.json"))
    # is_file: a regular file (zipfile would block on a FIFO named log.eval, waiting for a writer)
    return (path.suffix == ".eval" and path.is_file() and zipfile.is_zipfile(path)) or _json_log(path)


def _json_log(path: Path) -> bool:
    start = head(path)[:4096]
    return path.suffix == ".json" and start.lstrip().startswith("{") and all(
        f'"{key}"' in start for key in ("version", "status", "eval"))


def read(path: Path, *, partial: bool = False) -> SourceData:
    parts, notes = [], []
    for log in files_in(path, ("*.eval", "*.json")):
        if path.is_dir() and log.suffix == ".json" and not _json_log(log):
            continue
        header, samples = _read_log(log)
        items, judgments, counts = _samples(log, header, samples)
        notes += [f"{log.name}: {n} {what}" for what, n in counts.items()]
        created = header["eval"].get("created")  # a rerun of the task is newer
        parts.append(Part(log, items, judgments, created if isinstance(created, str) else None,
                          _incomplete(header, samples)))
    items, judgments, merging = merged(parts, str(path), partial)
    return SourceData(NAME, items, judgments, tuple(notes + merging))


def _read_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    where = str(path)
    if path.suffix == ".eval":
        members = _archive(path)
        header = members.get("header.json")
        if header is None and "_journal/start.json" in members:  # Inspect writes the header when the run ends
            header = typed(members["_journal/start.json"], dict, where, "_journal/start.json") | {"status": "started"}
        if header is None:
            raise DataError(f"no header.json in the archive: expected {EXPECTED}", path)
        samples = [members[name] for name in sorted(members) if name.startswith("samples/")]
        return typed(header, dict, where, "header.json"), samples
    log = typed(json_document(path), dict, where, "the log")
    return log, typed(log.get("samples") or [], list, where, "'samples'")


def _incomplete(header: dict[str, Any], samples: list[Any]) -> str | None:
    """Why the log's run did not finish and how much of it the log holds; None when it finished."""
    status = header.get("status")
    if status == "success":
        return None
    dataset, config = header["eval"].get("dataset"), header["eval"].get("config")
    total = dataset.get("samples") if isinstance(dataset, dict) else None
    epochs = config.get("epochs") if isinstance(config, dict) else None
    of = f" of {total * (epochs or 1)}" if isinstance(total, int) and isinstance(epochs, (int, type(None))) else ""
    why = {"started": ": stopped before its end", "cancelled": ": cancelled"}.get(str(status), "")
    error = header.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"].strip():
        why = f": {error['message'].strip().splitlines()[0][:100]}"
    return f"the run did not finish (Inspect status {status!r}{why}): it holds {len(samples)}{of} samples"


def _archive(path: Path) -> dict[str, Any]:
    """The JSON members of a .eval archive, unpacked as they stream in: together within the input bound,
    in bytes and in JSON values, whatever sizes the archive declares."""
    bound = within_bound(path)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        raise DataError(f"not a readable .eval archive ({err})", path) from None
    with archive, open(path, "rb") as raw:
        infos = [info for info in archive.infolist() if info.filename.endswith(".json")]
        if sum(info.file_size for info in infos) > bound:
            raise DataError("the archive unpacked is over the limit on one input (JUDGELAB_MAX_INPUT_BYTES)", path)
        members, left, values = {}, bound, JsonBudget()
        for info in infos:
            data = _unpacked(archive, raw, info, left, path)
            left -= len(data)
            values.spend(data, path)
            try:
                members[info.filename] = json.loads(data)
            except (ValueError, RecursionError) as err:  # RecursionError: nested past Python's limit
                raise DataError(f"{info.filename}: bad JSON ({err})", path) from None
        return members


def _unpacked(archive: zipfile.ZipFile, raw: BinaryIO, info: zipfile.ZipInfo, left: int, path: Path) -> bytes:
    """One member's bytes, read a chunk at a time: ``archive.read`` inflates up to 2 GiB in one call (a
    member declaring 1 KB may hold gigabytes), so reading stops past the size the member declares or past
    ``left``, what the input bound leaves."""
    unpacked, size = io.BytesIO(), 0  # its buffer grows in place: no second copy to join
    try:
        with _member(archive, raw, info) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > info.file_size:
                    raise DataError(f"{info.filename}: unpacks to more than the {info.file_size:,} bytes the "
                                    "archive declares for it (a damaged or forged archive)", path)
                if size > left:
                    raise DataError(over_limit("the archive unpacked", max_input_bytes()), path)
                unpacked.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError, ValueError) as err:
        raise DataError(f"{info.filename}: cannot unpack this member ({err})", path) from None
    return unpacked.getvalue()


def _member(archive: zipfile.ZipFile, raw: BinaryIO, info: zipfile.ZipInfo) -> Any:
    """A member as a stream of its unpacked bytes. Zstandard (Inspect's method 93, which Python's zipfile
    knows from 3.14 only) is read past its local header and streamed through pyarrow's decompressor."""
    if info.compress_type != _ZSTD:
        return archive.open(info)
    import pyarrow as pa

    raw.seek(info.header_offset + 26)
    name_length, extra_length = int.from_bytes(raw.read(2), "little"), int.from_bytes(raw.read(2), "little")
    start = info.header_offset + 30 + name_length + extra_length
    raw.seek(start)
    packed = raw.read(max(0, min(info.compress_size, os.fstat(raw.fileno()).st_size - start)))  # never more than the file
    return pa.CompressedInputStream(pa.BufferReader(packed), "zstd")


NO_VALUE = "score(s) without a value (NaN or null) kept as unparsable"
NO_NUMBER = "score(s) that are not a value Inspect reads as a number kept as unparsable (Inspect counts them 0)"


def _samples(log: Path, header: dict[str, Any], samples: list[Any]):
    """The log's items and judgments, and how many values were kept without a verdict (by note). With
    several epochs, one item per sample: each scorer's values over the epochs reduced as the log says."""
    where = str(log)
    task, model = _task_and_model(header, where)
    if not samples:
        raise DataError(f"no samples (status {header.get('status')!r}): expected {EXPECTED}", where)
    parsed = [_sample(sample, k, header, where) for k, sample in enumerate(samples)]
    config = header["eval"].get("config")
    given = config.get("epochs") if isinstance(config, dict) else None
    epochs = max([given if isinstance(given, int) else 1] + [one["epoch"] for one in parsed])
    reducers = _reducers(config, epochs, where) if epochs > 1 else []
    runs: dict[Any, list[dict[str, Any]]] = {}
    for k, one in enumerate(parsed):  # one epoch: each sample is its own item, a repeated one named as such
        runs.setdefault(one["id"] if reducers else k, []).append(one)
    graders, counts = _graders(header), Counter[str]()
    items, judgments = [], []
    for group in runs.values():
        item_id = f"{model}/{task}/{group[0]['id']}" + ("" if reducers else f"/{group[0]['epoch']}")
        items.append(item(_item(item_id, task, model, group, bool(reducers)), where, None))
        for row, note in _verdicts(item_id, group, reducers, graders):
            counts.update([note] if note else [])
            judgments.append(judgment(row, where, None))
    return items, judgments, counts


def _task_and_model(header: dict[str, Any], where: str) -> tuple[str, str]:
    need(header, ("version", "eval"), where, None, EXPECTED)
    if header["version"] not in KNOWN_VERSIONS:
        raise DataError(f"log format version {header['version']!r}: this reader knows version "
                        f"{', '.join(map(str, KNOWN_VERSIONS))} (Inspect AI 0.3)", where, None, "version")
    evaluated = typed(header["eval"], dict, where, "'eval'")
    need(evaluated, ("task", "model"), where, None, EXPECTED)
    return typed(evaluated["task"], str, where, "'eval.task'"), typed(evaluated["model"], str, where, "'eval.model'")


def _sample(sample: Any, k: int, header: dict[str, Any], where: str) -> dict[str, Any]:
    """One sample's fields, each of the type Inspect writes."""
    typed(sample, dict, where, f"sample {k + 1}")
    record = f"sample {sample.get('id', k)!r} epoch {sample.get('epoch')}"
    need(sample, ("id", "epoch", "input", "output", "scores"), where, None, EXPECTED, record)
    typed(sample["id"], (str, int), where, f"{record}: 'id'")
    typed(sample["epoch"], int, where, f"{record}: 'epoch'")
    scores = typed(sample["scores"], (dict, type(None)), where, f"{record}: 'scores'")
    if not scores:
        raise DataError(f"{record}: no scores (status {header.get('status')!r}); expected each sample scored "
                        "by at least one scorer (inspect score LOG scores a log)", where)
    for scorer, score in scores.items():
        typed(score, dict, where, f"{record}: scorer {scorer!r}")
    output = typed(sample["output"], (dict, type(None)), where, f"{record}: 'output'") or {}
    given = typed(sample["input"], (str, list), where, f"{record}: 'input'")
    return {"id": sample["id"], "epoch": sample["epoch"], "scores": scores, "source": _prompt(given),
            "messages": None if isinstance(given, str) else [_message(one, f"{record}: input", where) for one in given],
            "output": typed(output.get("completion") or "", str, where, f"{record}: 'output.completion'"),
            "reference": _target(typed(sample.get("target"), (str, list, int, float, type(None)), where,
                                       f"{record}: 'target'"))}


def _item(item_id: str, task: str, model: str, runs: list[dict[str, Any]], several: bool) -> dict[str, Any]:
    """A sample as an item: with several epochs, the first epoch's output (every epoch's in ``extra.outputs``)."""
    first = runs[0]
    extra = ({"epochs": [one["epoch"] for one in runs], "outputs": [one["output"] for one in runs]} if several
             else {"epoch": first["epoch"]})
    return {"id": item_id, "group_id": f"{task}/{first['id']}", "system_id": model, "dataset": task,
            "source": first["source"], "output": first["output"], "reference": first["reference"],
            "messages": first["messages"], "extra": extra}


def _reducers(config: Any, epochs: int, where: str) -> list[str]:
    """The log's epoch reducers (Inspect's default: mean); one it does not name as a known one is refused."""
    names = (config.get("epochs_reducer") if isinstance(config, dict) else None) or ["mean"]
    for name in [names] if isinstance(names, str) else typed(names, list, where, "'eval.config.epochs_reducer'"):
        if not (isinstance(name, str) and known(name)):
            raise DataError(f"the log reduces its {epochs} epochs with {name!r}, a reducer this reader does not "
                            f"apply: it applies Inspect's {REDUCERS}", where, None, "eval.config.epochs_reducer")
    return [names] if isinstance(names, str) else names


def _graders(header: dict[str, Any]) -> dict[str, str]:
    """Each model-graded scorer's grader model, from the log's results (extra information: skipped when the
    results are not as Inspect writes them)."""
    results, graders = header.get("results"), {}
    scorers = results.get("scores") if isinstance(results, dict) else None
    for scorer in scorers if isinstance(scorers, list) else []:
        params = scorer.get("params") if isinstance(scorer, dict) else None
        model = params.get("model") if isinstance(params, dict) else None
        name = model.get("model") if isinstance(model, dict) else model
        if isinstance(name, str):
            graders[str(scorer.get("name"))] = name
    return graders


def _values(scorer: str, value: Any) -> list[tuple[str, Any]]:
    """(judge, value): a scorer giving a dict of values (one per aspect) is one judge per key."""
    if isinstance(value, dict):
        return [(f"{scorer}/{key}", v) for key, v in value.items()]
    return [(scorer, value)]


def _verdicts(item_id: str, runs: list[dict[str, Any]], reducers: list[str], graders: dict[str, str]):
    """(judgment row, note or None) for each judge of the sample: a scorer (each key of one giving a dict);
    over several epochs, each reducer's value (judge ``<scorer>:<reducer>`` when the log has several)."""
    values: dict[str, list[Any]] = {}
    scores: dict[str, tuple[str, dict[str, Any]]] = {}
    for run in runs:
        for scorer, score in run["scores"].items():
            for judge, value in _values(scorer, score.get("value")):
                values.setdefault(judge, []).append(value)
                scores.setdefault(judge, (scorer, score))
    for judge, epochs in values.items():
        scorer, score = scores[judge]
        grader = {"grader": graders[scorer]} if scorer in graders else {}
        if not reducers:
            yield _judgment(item_id, judge, epochs[0], score.get("explanation"),
                            {"answer": score.get("answer")} | grader)
        for reducer in reducers:
            unread = [value for value in epochs if not unscored(value) and to_float(value) is None]
            yield _judgment(item_id, judge if len(reducers) == 1 else f"{judge}:{reducer}",
                            unread[0] if unread else reduce(reducer, epochs), None,
                            {"reducer": reducer, "epochs": epochs} | grader)


def _judgment(item_id: str, judge: str, value: Any, explanation: Any, extra: dict[str, Any]):
    """A value as Inspect reads it (``_inspect_scores.to_float``), the text kept as the label; no value, or
    one Inspect cannot read as a number, is unparsable (and the note counting it)."""
    row: dict[str, Any] = {"item_id": item_id, "judge": judge, "explanation": explanation, "extra": extra}
    number = None if unscored(value) else to_float(value)
    if number is None and not unscored(value) and not isinstance(value, (int, float)):
        return row | {"status": "unparsable", "reason": f"{value!r:.60} is not a value Inspect reads as a number "
                                                        f"({READ})"}, NO_NUMBER
    if number is None or not math.isfinite(number):
        return row | {"status": "unparsable", "reason": f"the scorer gave no value ({value!r})"}, NO_VALUE
    label = str(value).lower() if isinstance(value, bool) else value if isinstance(value, str) else None
    return row | {"score": number} | ({"label": label} if label is not None else {}), None


def _prompt(value: Any) -> str:
    """A sample's input: the text, or its chat messages' texts."""
    if isinstance(value, str):
        return value
    parts = []
    for message in value:
        content = message.get("content") if isinstance(message, dict) else message
        parts.append(content if isinstance(content, str) else text(content))
    return "\n\n".join(parts)


def _message(message: Any, record: str, where: str) -> dict[str, Any]:
    """An Inspect chat message in the OpenAI shape the item takes: its content as text, its tool calls'
    arguments as JSON text, a tool result's ``function`` as its name (Inspect's ids and metadata left out)."""
    typed(message, dict, where, f"{record}: a message")
    calls = typed(message.get("tool_calls") or [], list, where, f"{record}: 'tool_calls'")
    return {"role": message.get("role"), "content": _text(message.get("content")),
            "tool_calls": [{"id": call.get("id"), "function": {"name": call.get("function"),
                                                               "arguments": call.get("arguments") or {}}}
                           for call in (typed(one, dict, where, f"{record}: a tool call") for one in calls)] or None,
            "tool_call_id": message.get("tool_call_id"), "name": message.get("function")}


def _text(content: Any) -> str | None:
    """A message's content: the text, or its text parts' texts (another part, an image, as its JSON)."""
    if content is None or isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    return "\n".join(part["text"] if isinstance(part, dict) and part.get("type") == "text" and
                     isinstance(part.get("text"), str) else text(part) for part in parts)


def _target(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    return " | ".join(map(str, value)) if isinstance(value, list) else str(value)
