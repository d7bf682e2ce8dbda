"""lm-evaluation-harness ``--log_samples`` outputs: ``samples_<task>_<time>.jsonl`` (and the
``results_<time>.json`` beside it, which names the model).

Each document of a task becomes a pointwise item: source the prompt, output the filtered response,
reference the target; each metric its line lists (``acc``, ``exact_match``, ...) a judgment whose judge is
``<task>/<metric>``. A task with several filters (``strict-match``, ``flexible-extract``) has a line per
document and filter: the item's output is then the unfiltered response (each filter's in
``extra.filtered``), and each metric and filter its own judge, named as lm-eval's results name it:
``<task>/<metric>,<filter>``. Values that are not numbers (BLEU's reference and prediction, kept per
document for a corpus-level score) are kept as unparsable, counted per metric in a note. The system is the
model (``pretrained=`` of the model arguments, else the results file's ``model_name``, else the folder);
the same model's task read from two runs in one folder is read from the newer (the time in the name).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    Part,
    files_in,
    head,
    item,
    json_document,
    json_records,
    judgment,
    merged,
    need,
    text,
    typed,
)
from judgelab.errors import DataError

NAME = "lm-eval"
_FILE = re.compile(r"samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
FIELDS = ("doc_id", "target", "arguments", "filtered_resps", "metrics")
EXPECTED = "lm-evaluation-harness --log_samples records (doc_id, target, arguments, filtered_resps, metrics)"


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(path.rglob("samples_*.jsonl"))
    first = head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and all(f'"{key}"' in first for key in ("doc_id", "filtered_resps"))


def read(path: Path, *, partial: bool = False) -> SourceData:
    parts, notes = [], []
    for samples in files_in(path, ("samples_*.jsonl",)):
        named = _FILE.match(samples.name)
        items, judgments, unread = _samples(samples, named["task"] if named else samples.stem, _model(samples))
        if unread:
            notes.append(f"{samples.name}: values that are not numbers kept as unparsable (lm-eval keeps them per "
                         "document for a corpus-level score, such as BLEU's reference and prediction): "
                         + ", ".join(f"{metric} {n}" for metric, n in sorted(unread.items())))
        parts.append(Part(samples, items, judgments, named["time"] if named else None))
    items, judgments, merging = merged(parts, str(path), partial)
    return SourceData(NAME, items, judgments, tuple(notes + merging))


def _model(samples: Path) -> str:
    """The model a samples file is for, from the results file written with it."""
    stamp = samples.name.rsplit("_", 1)[-1]
    results = samples.parent / f"results_{stamp.removesuffix('.jsonl')}.json"
    found = results if results.exists() else next(iter(sorted(samples.parent.glob("results_*.json"))), None)
    if found is None:
        return samples.parent.name
    record = typed(json_document(found), dict, str(found), "the results file")
    config = record.get("config")
    args = config.get("model_args") if isinstance(config, dict) else None
    pretrained = re.search(r"pretrained=([^,]+)", args) if isinstance(args, str) else None
    if pretrained:
        return pretrained[1]
    if isinstance(args, dict) and args.get("pretrained"):
        return str(args["pretrained"])
    return str(record.get("model_name") or samples.parent.name)


def _samples(path: Path, task: str, model: str):
    """The file's items (one per document) and judgments, and how many values of each metric are not numbers."""
    where = str(path)
    docs: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    for line, raw in json_records(path):
        need(raw, FIELDS, where, line, EXPECTED)
        typed(raw["doc_id"], (int, str), where, "'doc_id'", line)
        typed(raw.get("filter", "none"), str, where, "'filter'", line)
        for metric in typed(raw["metrics"], list, where, "'metrics'", line):
            typed(metric, str, where, "a metric of 'metrics'", line)
        docs.setdefault(raw["doc_id"], []).append((line, raw))
    if not docs:
        raise DataError(f"no samples: expected {EXPECTED}", where)
    several = len({raw.get("filter", "none") for lines in docs.values() for _, raw in lines}) > 1
    items, judgments, unread = [], [], Counter[str]()
    for doc_id, lines in docs.items():
        item_id = f"{model}/{task}/{doc_id}"
        items.append(_item(item_id, task, model, lines, several, where))
        for line, raw in lines:
            for metric in raw["metrics"]:
                row = _verdict(raw, metric, f"{metric},{raw.get('filter', 'none')}" if several else metric, where, line)
                unread.update([row["judge"]] if row.get("status") else [])
                judgments.append(judgment(row | {"item_id": item_id, "judge": f"{task}/{row['judge']}"}, where, line))
    return items, judgments, unread


def _item(item_id: str, task: str, model: str, lines: list[tuple[int, dict[str, Any]]], several: bool, where: str):
    """A document as an item: with several filters, the unfiltered response, each filter's in ``extra.filtered``."""
    line, first = lines[0]
    filtered: dict[str, str] = {}
    for at, raw in lines:
        if raw.get("filter", "none") in filtered or (not several and at != line):
            raise DataError(f"document {raw['doc_id']!r} appears twice (filter {raw.get('filter', 'none')!r}): "
                            f"expected {EXPECTED}, one line per document and filter", where, at)
        filtered[raw.get("filter", "none")] = _response(raw)
    extra = {"doc": first.get("doc")} | ({"filtered": filtered} if several else {})
    return item({"id": item_id, "group_id": f"{task}/{first['doc_id']}", "system_id": model, "dataset": task,
                 "source": _prompt(first["arguments"]), "output": _unfiltered(first) if several else _response(first),
                 "reference": text(first["target"]), "extra": extra}, where, line)


def _verdict(raw: dict[str, Any], metric: str, judge: str, where: str, line: int) -> dict[str, Any]:
    if metric not in raw:
        raise DataError(f"the line lists metric {metric!r} but holds no value for it: expected {EXPECTED}",
                        where, line, metric)
    value = raw[metric]
    if isinstance(value, (bool, int, float)):
        return {"judge": judge, "score": float(value)}
    # a metric kept per document for the aggregate (a tuple for BLEU, ...): no score of its own
    return {"judge": judge, "status": "unparsable", "reason": f"{metric} is {text(value)[:40]}, not a number"}


def _prompt(arguments: Any) -> str | None:
    """The prompt of the first request (``gen_args_0.arg_0``, or the older ``[[prompt, ...]]``)."""
    if not isinstance(arguments, (dict, list)) or not arguments:
        return None
    first = next(iter(arguments.values())) if isinstance(arguments, dict) else arguments[0]
    if isinstance(first, dict):
        first = first.get("arg_0")
    elif isinstance(first, list):
        first = first[0] if first else None
    return first if isinstance(first, str) else None


def _response(raw: dict[str, Any]) -> str:
    """The filtered response: the generated text, or the choices' log-likelihoods as JSON."""
    response = raw["filtered_resps"]
    if isinstance(response, list) and len(response) == 1 and isinstance(response[0], str):
        return response[0]
    return json.dumps(response, ensure_ascii=False)


def _unfiltered(raw: dict[str, Any]) -> str:
    """The model's response before any filter: the generated text, else the responses as JSON."""
    responses = raw.get("resps")
    if isinstance(responses, list) and len(responses) == 1 and isinstance(responses[0], list) \
            and len(responses[0]) == 1 and isinstance(responses[0][0], str):
        return responses[0][0]
    return _response(raw) if responses is None else json.dumps(responses, ensure_ascii=False)
