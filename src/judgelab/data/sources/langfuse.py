"""Langfuse traces, as its public API returns them and a user saves them: ``GET /api/public/traces/{id}`` (a trace
with its ``observations`` and ``scores``) one per line or as a JSON array, a list response (``{"data": [...],
"meta": ...}`` of ``/api/public/traces``, ``/api/public/observations`` or ``/api/public/v2/scores``), records of
the three kinds mixed in one file, or a folder of such files.

One trace is one pointwise item, id the trace id. Its ``messages`` are those of its last ``GENERATION`` observation
that has an output: the generation's ``input`` (chat messages, or ``{"messages": [...]}`` as Langfuse's OpenAI
integration records a call with tools; a text is one user message) and its reply (``output``: a message, or a
text); a chat API's call carries the conversation so far, so the last call holds it all, and the judged reply is
the last assistant message (``Item``'s rule). A trace without a generation is read from its own ``input`` and
``output`` (``source``, ``output``); one without either is refused. Its ``TOOL`` observations are its
``trajectory`` (tool the observation's name, arguments its input, observation its output), its ``RETRIEVER``
observations' documents its ``contexts``: the ``output`` a list of documents (or ``{"documents": [...]}``,
``{"nodes": [...]}``) as Langfuse's integrations record a retriever's, each a LangChain ``Document``
(``page_content``, ``metadata``), a LlamaIndex node (``text``, ``id_``, ``metadata``; or ``{node, score}``) or a
text; id the document's (``id``, ``id_``, else its metadata's ``id``/``doc_id``, else its metadata's ``source``
(``file_path``, ``file_name``) with its ``page``/``chunk_id``), else its place, ``<retriever>.<document>``.
System: the generation's ``model``, else the trace's name.

Scores: Langfuse marks each score's ``source``. A person's (``ANNOTATION``) numeric and boolean values are the
item's human labels, ``scores.<name>`` (several people's values of one name: their mean), a categorical one with
no number kept in ``extra.annotations``. An evaluator's (``EVAL``, LLM-as-a-judge) and a program's (``API``, set
through the SDK) are judgments whose judge is the score's name: score its value (1/0 for a boolean), label its
``stringValue``, explanation its ``comment``; a categorical score without a number is a label-only verdict.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import head, item, judgment, kind_of, text
from judgelab.data.sources._traces import (
    add_passage,
    claimed,
    exported,
    group_of,
    listed,
    records,
    traced_data,
    typed_at,
)
from judgelab.errors import DataError

NAME = "langfuse"
EXPECTED = ("Langfuse traces as its public API returns them (GET /api/public/traces/{id}: id, timestamp, observations "
            "with type, startTime, input, output; scores with name, source, dataType, value), one per line, a JSON "
            "array or a list response ({\"data\": [...]})")
PATTERNS = ("*.jsonl", "*.json")
ROLES = ("system", "user", "assistant", "tool")
HUMAN = "ANNOTATION"
SOURCES = ("ANNOTATION", "EVAL", "API")
_MARKS = ('"parentObservationId"', '"htmlPath"')
READ = ("GENERATION", "TOOL", "RETRIEVER", "SPAN", "EVENT", "AGENT")
_TEXTS = ("page_content", "text", "content")  # LangChain's Document, LlamaIndex's node, a plain record


def claims(path: Path) -> bool:
    return claimed(path, PATTERNS, _langfuse_file)


def _langfuse_file(path: Path) -> bool:
    start = head(path)[:8192]
    return any(mark in start for mark in _MARKS) or all(
        mark in start for mark in ('"traceId"', '"dataType"', '"source"'))  # a scores export alone


class _Where:
    """Where a record was read: the file, its line and the record's field prefix, for the errors."""

    def __init__(self, file: str, line: int, prefix: str) -> None:
        self.file, self.line, self.prefix = file, line, prefix

    def typed(self, value: Any, kinds: Any, field: str, name: str) -> Any:
        return typed_at(value, kinds, self.file, self.line, self.prefix + field, name)

    def error(self, detail: str, field: str) -> DataError:
        return DataError(detail, self.file, self.line, self.prefix + field)


class _Trace:
    def __init__(self, trace_id: str) -> None:
        self.id = trace_id
        self.record: dict[str, Any] | None = None
        self.at: _Where | None = None
        self.observations: list[tuple[dict[str, Any], _Where]] = []
        self.scores: list[tuple[dict[str, Any], _Where]] = []


def read(path: Path, *, partial: bool = False) -> SourceData:
    files, counts = exported(path, PATTERNS, _langfuse_file, "Langfuse export", EXPECTED)
    traces: dict[str, _Trace] = {}
    for file in files:
        for line, record in records(file):
            for prefix, one in _unwrapped(record, str(file), line):
                _sort(one, _Where(str(file), line, prefix), traces)
    if not traces:
        raise DataError(f"no traces: expected {EXPECTED}", path)
    items, judgments = [], []
    for trace in traces.values():
        got = _item(trace, counts)
        if got is not None:
            items.append(got[0])
            judgments += got[1]
    return traced_data(NAME, path, items, judgments, counts, f"no trace to read: expected {EXPECTED}")


def _unwrapped(record: dict[str, Any], where: str, line: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field prefix, record) for a record, or for each record of a list response's ``data``."""
    if "data" in record and "id" not in record:
        yield from listed(record["data"], "data", "record", where, line)
    else:
        yield "", record


def _kind(record: dict[str, Any]) -> str | None:
    if "dataType" in record or ("source" in record and "traceId" in record and "name" in record
                                and "startTime" not in record):
        return "score"
    if "startTime" in record and "type" in record:
        return "observation"
    if "id" in record and "timestamp" in record:
        return "trace"
    return None


def _sort(record: dict[str, Any], at: _Where, traces: dict[str, _Trace]) -> None:
    """The record filed under its trace: a trace (with the observations and scores it embeds), an observation or
    a score."""
    kind = _kind(record)
    if kind is None:
        raise at.error(f"neither a trace, an observation nor a score (keys {', '.join(list(record)[:6])}): expected "
                       f"{EXPECTED}", "id")
    if kind != "trace":
        trace_id = at.typed(record.get("traceId"), str, "traceId", f"the {kind}'s 'traceId'")
        one = traces.setdefault(trace_id, _Trace(trace_id))
        (one.observations if kind == "observation" else one.scores).append((record, at))
        return
    trace_id = at.typed(record["id"], str, "id", "the trace's 'id'")
    one = traces.setdefault(trace_id, _Trace(trace_id))
    if one.record is not None and one.at is not None:
        raise at.error(f"trace {trace_id} is on line {one.at.line} of {one.at.file} too: expected each trace once",
                       "id")
    one.record, one.at = record, at
    for key, kept in (("observations", one.observations), ("scores", one.scores)):
        for k, embedded in enumerate(at.typed(record.get(key) or [], list, key, f"trace {trace_id}: {key!r}")):
            if isinstance(embedded, str):
                continue  # a list response names them by id: their own records come from another file
            inner = _Where(at.file, at.line, f"{at.prefix}{key}.{k}.")
            kept.append((inner.typed(embedded, dict, "", f"trace {trace_id}: {key} {k}"), inner))


# -- the item -------------------------------------------------------------------------------------------


def _item(trace: _Trace, counts: Counter[str]) -> tuple[Any, list[Any]] | None:
    at = trace.at or (trace.observations[0][1] if trace.observations else trace.scores[0][1])
    if not trace.observations and trace.record is None:
        counts["score(s) of traces not in the file left out"] += len(trace.scores)
        return None
    record = trace.record or {}
    observations = sorted(trace.observations, key=lambda pair: str(pair[0].get("startTime") or ""))
    for observation, where in observations:
        where.typed(observation.get("type"), str, "type", f"trace {trace.id}: an observation's 'type'")
    generations = [(o, w) for o, w in observations if o["type"] == "GENERATION" and o.get("output") is not None]
    if generations:
        last, where = generations[-1]
        counts.update({"earlier generation(s) of a trace read through the last one's input messages":
                       len(generations) - 1} if len(generations) > 1 else {})
        messages = _messages(last, where, trace.id, counts)
        fields: dict[str, Any] = {"messages": messages, "group_id": group_of(messages)}
        model = where.typed(last.get("model"), (str, type(None)), "model", f"trace {trace.id}: the generation's 'model'")
    elif record.get("output") is not None:
        counts["trace(s) without a generation read from the trace's own input and output"] += 1
        source = _plain(record.get("input"))
        fields, model = {"source": source, "output": _plain(record["output"]), "group_id": group_of([], source)}, None
    else:
        raise at.error(f"trace {trace.id}: no GENERATION observation with an output, and no output on the trace: "
                       "nothing to judge (an export without its observations?)", "observations")
    counts.update({f"observation(s) of type {kind!r} not read": n for kind, n in Counter(
        o["type"] for o, _ in observations if o["type"] not in READ).items()})
    labels, verdicts = _scores(trace, counts)
    name = record.get("name")
    extra = {"trace_name": name, "session_id": record.get("sessionId"), "user_id": record.get("userId"),
             "tags": record.get("tags") or None, "release": record.get("release"), "total_cost": record.get("totalCost")}
    one = fields | labels | {
        "id": trace.id, "system_id": model or (name if isinstance(name, str) else None),
        "trajectory": [_step(o, w) for o, w in observations if o["type"] == "TOOL"] or None,
        "contexts": _passages([(o, w) for o, w in observations if o["type"] == "RETRIEVER"], trace.id, counts) or None,
        "extra": labels["extra"] | {key: value for key, value in extra.items() if value is not None}}
    return item(one, at.file, at.line), [judgment(row, where.file, where.line) for row, where in verdicts]


def _plain(value: Any) -> str | None:
    """A trace's input or output as text: a text as it is, an object of one text that text, else its JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return next(iter(value.values()))
    return text(value)


def _messages(generation: dict[str, Any], at: _Where, trace_id: str, counts: Counter[str]) -> list[dict[str, Any]]:
    """The generation's input messages and its reply, in the OpenAI shape."""
    given = generation.get("input")
    if isinstance(given, dict) and "messages" in given:
        given = at.typed(given["messages"], list, "input.messages", f"trace {trace_id}: the generation's input messages")
    elif isinstance(given, str):
        given = [{"role": "user", "content": given}]
    elif given is None:
        given = []
    elif not isinstance(given, list):
        raise at.error(f"trace {trace_id}: the generation's input is {type(given).__name__}: expected chat messages "
                       "(a list of {role, content}, or {\"messages\": [...]}) or a text", "input")
    reply = generation["output"]
    if isinstance(reply, str):
        reply = {"role": "assistant", "content": reply}
    elif isinstance(reply, dict) and isinstance(reply.get("choices"), list) and reply["choices"]:
        reply = reply["choices"][0].get("message") if isinstance(reply["choices"][0], dict) else None
    if not isinstance(reply, dict):
        raise at.error(f"trace {trace_id}: the generation's output ({text(generation['output'])[:60]}) is not a reply "
                       "this reader reads: expected a message ({role, content}) or a text", "output")
    return ([_message(one, at, f"input.{k}", counts) for k, one in enumerate(given)]
            + [_message(reply | {"role": reply.get("role", "assistant")}, at, "output", counts)])


def _message(message: Any, at: _Where, field: str, counts: Counter[str]) -> dict[str, Any]:
    at.typed(message, dict, field, f"message {field!r}")
    if message.get("role") not in ROLES:
        raise at.error(f"message {field!r}: role {message.get('role')!r}: expected one of {', '.join(ROLES)}",
                       f"{field}.role")
    content = message.get("content")
    if isinstance(content, list):  # content parts: the texts joined, another part (an image) left out
        texts = [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
        counts.update({"content part(s) that are not text (images, audio) left out": len(content) - len(texts)}
                      if len(texts) < len(content) else {})
        content = "\n".join(texts)
    calls = at.typed(message.get("tool_calls") or [], list, f"{field}.tool_calls", f"message {field!r}: 'tool_calls'")
    return {"role": message["role"], "content": None if content is None else text(content),
            "tool_calls": [{"id": call.get("id"), "function": call.get("function")} for call in (
                at.typed(one, dict, f"{field}.tool_calls.{j}", f"message {field!r}: a tool call")
                for j, one in enumerate(calls))] or None,
            "tool_call_id": message.get("tool_call_id"), "name": message.get("name")}


def _step(observation: dict[str, Any], at: _Where) -> dict[str, Any]:
    name = at.typed(observation.get("name"), str, "name", "a TOOL observation's 'name' (the tool)")
    output = observation.get("output")
    failed = observation.get("level") == "ERROR"
    result = text(output) if output is not None else (
        f"[error] {observation.get('statusMessage') or 'the tool failed'}" if failed else None)
    return {"tool": name, "arguments": observation.get("input"), "observation": result}


def _passages(retrievers: list[tuple[dict[str, Any], _Where]], trace_id: str,
              counts: Counter[str]) -> list[dict[str, Any]]:
    """The retriever observations' documents that carry their text, each once (``add_passage``)."""
    passages: dict[str, dict[str, Any]] = {}
    for r, (observation, at) in enumerate(retrievers):
        output = observation.get("output")
        if output is None:
            counts["RETRIEVER observation(s) without an output not read"] += 1
            continue
        field = "output"
        if isinstance(output, dict) and len(output) == 1 and next(iter(output)) in ("documents", "nodes"):
            field = f"output.{next(iter(output))}"
            output = next(iter(output.values()))
        documents = at.typed(output, list, field, f"trace {trace_id}: the RETRIEVER observation's {field!r} (the "
                             "documents: a list of LangChain documents, LlamaIndex nodes or texts)")
        for j, document in enumerate(documents):
            passage = _passage(document, at, f"{field}.{j}", trace_id, f"{r}.{j}")
            if passage is None:
                counts["retrieved document(s) without their text (page_content, text) not read as passages"] += 1
            elif passages.get(passage["id"], passage)["text"] != passage["text"]:
                # two chunks of one source file share its name: the later is kept under its place
                counts["retrieved document(s) whose id names another text kept under their place"] += 1
                add_passage(passages, passage | {"id": f"{r}.{j}"})
            else:
                add_passage(passages, passage)
    return list(passages.values())


def _passage(document: Any, at: _Where, field: str, trace_id: str, place: str) -> dict[str, Any] | None:
    """One retrieved document as a passage (id, text, title, source); None when it carries no text."""
    if isinstance(document, str):
        return {"id": place, "text": document}
    at.typed(document, dict, field, f"trace {trace_id}: a retrieved document")
    if isinstance(document.get("node"), dict):  # LlamaIndex's NodeWithScore: the node, its score aside
        document = document["node"]
    content = next((document[key] for key in _TEXTS if isinstance(document.get(key), str)), None)
    if content is None:
        return None
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    # LangChain's loaders name the file or page in ``source``, LlamaIndex's readers in ``file_path``/``file_name``
    source = next((metadata[key] for key in ("source", "file_path", "file_name") if isinstance(metadata.get(key), str)),
                  None)
    part = next((metadata[key] for key in ("page", "chunk_id") if metadata.get(key) is not None), None)
    given = next((one for one in (document.get("id"), document.get("id_"), metadata.get("id"), metadata.get("doc_id"))
                  if isinstance(one, (str, int)) and not isinstance(one, bool) and str(one)), None)
    named = source and (f"{source}#{part}" if part is not None else source)
    title = metadata.get("title")
    return {"id": str(given if given is not None else named or place), "text": content,
            "title": title if isinstance(title, str) else None, "source": source}


# -- scores ---------------------------------------------------------------------------------------------


def _scores(trace: _Trace, counts: Counter[str]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], _Where]]]:
    """The item's human labels (``scores``, ``extra.annotations``) and the judges' verdicts, with where each was."""
    humans: dict[str, list[float]] = defaultdict(list)
    kept: dict[str, Any] = {}
    verdicts: dict[str, tuple[dict[str, Any], _Where]] = {}
    for score, at in sorted(trace.scores, key=lambda pair: str(pair[0].get("timestamp") or "")):
        name = at.typed(score.get("name"), str, "name", f"trace {trace.id}: a score's 'name'")
        source = score.get("source")
        if source not in SOURCES:
            raise at.error(f"trace {trace.id}: score {name!r}: source {source!r}: expected one of {', '.join(SOURCES)}",
                           "source")
        value = score.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise at.error(f"trace {trace.id}: score {name!r}: 'value' is {kind_of(value)}: expected a number or null "
                           "(a categorical score's text is its stringValue)", "value")
        label = at.typed(score.get("stringValue"), (str, type(None)), "stringValue",
                         f"trace {trace.id}: score {name!r}: 'stringValue'")
        if value is None and label is None:
            raise at.error(f"trace {trace.id}: score {name!r} has neither a value nor a stringValue", "value")
        if value is not None and not math.isfinite(value):
            value = None
        if source == HUMAN:
            if value is not None:
                humans[name].append(float(value))
            else:
                counts["human annotation(s) without a number (a categorical value) kept in extra.annotations"] += 1
                kept[name] = label
            continue
        if name in verdicts:
            counts["evaluator score(s) given again on one trace (a rerun): the last is read"] += 1
        extra = {"source": source, "observation_id": score.get("observationId"), "score_id": score.get("id")}
        verdicts[name] = ({"item_id": trace.id, "judge": name, "score": value,
                           "label": label.lower() if score.get("dataType") == "BOOLEAN" and label else label,
                           "explanation": score.get("comment"),
                           "extra": {key: one for key, one in extra.items() if one is not None}}, at)
    several = sum(len(values) > 1 for values in humans.values())
    counts.update({"human annotation(s) given by several people on one trace: their mean is read": several}
                  if several else {})
    labels = {"scores": {name: sum(values) / len(values) for name, values in humans.items()},
              "extra": {"annotations": kept} if kept else {}}
    return labels, list(verdicts.values())
