"""lm-evaluation-harness ``--log_samples`` outputs: ``samples_<task>_<time>.jsonl`` (and the
``results_<time>.json`` beside it, which names the model).

Each line (one document of one task, per filter) becomes a pointwise item: source the prompt,
output the filtered response, reference the target; each metric the line lists (``acc``,
``exact_match``, ...) a judgment whose judge is ``<task>/<metric>``. The system is the model
(``pretrained=`` of the model arguments, else the results file's ``model_name``, else the folder).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    dataset,
    files_in,
    head,
    item,
    json_document,
    json_records,
    judgment,
    need,
    text,
)
from judgelab.errors import DataError

NAME = "lm-eval"
_FILE = re.compile(r"samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$")
FIELDS = ("doc_id", "target", "arguments", "filtered_resps", "metrics")
EXPECTED = "lm-evaluation-harness --log_samples records (doc_id, target, arguments, filtered_resps, metrics)"


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(path.rglob("samples_*.jsonl"))
    first = head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and all(f'"{key}"' in first for key in ("doc_id", "filtered_resps"))


def read(path: Path) -> SourceData:
    items, judgments = [], []
    for samples in files_in(path, ("samples_*.jsonl",)):
        task = _FILE.match(samples.name)
        got = _samples(samples, task["task"] if task else samples.stem, _model(samples))
        items += got[0]
        judgments += got[1]
    return SourceData(NAME, dataset(items, str(path)), judgments)


def _model(samples: Path) -> str:
    """The model a samples file is for, from the results file written with it."""
    stamp = samples.name.rsplit("_", 1)[-1]
    results = samples.parent / f"results_{stamp.removesuffix('.jsonl')}.json"
    found = results if results.exists() else next(iter(sorted(samples.parent.glob("results_*.json"))), None)
    if found is None:
        return samples.parent.name
    record = json_document(found)
    args = (record.get("config") or {}).get("model_args")
    pretrained = re.search(r"pretrained=([^,]+)", args) if isinstance(args, str) else None
    if pretrained:
        return pretrained[1]
    if isinstance(args, dict) and args.get("pretrained"):
        return str(args["pretrained"])
    return str(record.get("model_name") or samples.parent.name)


def _samples(path: Path, task: str, model: str):
    where = str(path)
    rows = []
    for line, raw in json_records(path):
        need(raw, FIELDS, where, line, EXPECTED)
        rows.append((line, raw))
    if not rows:
        raise DataError(f"no samples: expected {EXPECTED}", where)
    filters = {raw.get("filter", "none") for _, raw in rows}
    items, judgments = [], []
    for line, raw in rows:
        suffix = f"/{raw.get('filter', 'none')}" if len(filters) > 1 else ""
        item_id = f"{model}/{task}/{raw['doc_id']}{suffix}"
        items.append(item({"id": item_id, "group_id": f"{task}/{raw['doc_id']}{suffix}", "system_id": model,
                           "dataset": task, "source": _prompt(raw["arguments"]), "output": _response(raw),
                           "reference": text(raw["target"]), "extra": {"doc": raw.get("doc")}}, where, line))
        for metric in raw["metrics"]:
            if metric not in raw:
                raise DataError(f"the line lists metric {metric!r} but holds no value for it: expected {EXPECTED}",
                                where, line, metric)
            value = raw[metric]
            row = {"item_id": item_id, "judge": f"{task}/{metric}"}
            if isinstance(value, bool) or isinstance(value, (int, float)):
                row["score"] = float(value)
            else:  # a metric kept per document for the aggregate (a tuple for BLEU, ...): no score of its own
                row |= {"status": "unparsable", "reason": f"{metric} is {text(value)[:40]}, not a number"}
            judgments.append(judgment(row, where, line))
    return items, judgments


def _prompt(arguments: Any) -> str | None:
    """The prompt of the first request (``gen_args_0.arg_0``, or the older ``[[prompt, ...]]``)."""
    first = next(iter(arguments.values()), None) if isinstance(arguments, dict) else (arguments or [None])[0]
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
