"""OpenTelemetry spans of a model's runs, with the GenAI semantic conventions' ``gen_ai.*`` attributes, as the
Python SDK exports them: ``ReadableSpan.to_json(indent=None)`` one span per line (a custom SpanExporter),
the ``ConsoleSpanExporter``'s indented spans one after another, the OpenTelemetry Collector's ``file`` exporter's
OTLP JSON (one ``ExportTraceServiceRequest`` a line: ``resourceSpans`` > ``scopeSpans`` > ``spans``, attributes
as a list of ``{key, value: {stringValue | intValue | doubleValue | boolValue | arrayValue}}``, ids in hex), or
a folder of such files. Both shapes are read into one span model: the ``gen_ai.*`` mapping below is the same.

One trace (``context.trace_id``) is one pointwise item, id the trace id. Its ``messages`` are those of its last
model call that recorded a reply (a ``chat``, ``text_completion`` or ``generate_content`` span): the call's
input messages and its reply, from ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (and
``gen_ai.system_instructions`` as a system message), or from the older flattened ``gen_ai.prompt.<i>.*`` /
``gen_ai.completion.<i>.*`` attributes; a chat API's call carries the conversation so far, so the last call
holds it all. The judged reply is the last assistant message (``Item``'s rule). Its ``execute_tool`` spans are
its ``trajectory`` (tool ``gen_ai.tool.name``, arguments ``gen_ai.tool.call.arguments``, observation
``gen_ai.tool.call.result``), its ``retrieval`` spans' documents with their text its ``contexts``. System: the
last call's ``gen_ai.request.model`` (else its ``gen_ai.response.model``, else the service). Each
``gen_ai.evaluation.result`` event is a judgment whose judge is ``gen_ai.evaluation.name``: score
``gen_ai.evaluation.score.value``, label ``.score.label``, explanation ``gen_ai.evaluation.explanation``.

What is not read is counted in the notes: traces without a ``gen_ai`` span (an HTTP request), traces whose
calls recorded no messages (content capture off), spans of other operations, message parts other than text
and tool calls, retrieved documents without their text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import head, item, judgment, text
from judgelab.data.sources._traces import (
    add_passage,
    claimed,
    decoded,
    exported,
    group_of,
    maybe_json,
    records,
    traced_data,
    typed_at,
)
from judgelab.errors import DataError
from judgelab.files import JsonBudget

NAME = "otel"
EXPECTED = ("OpenTelemetry spans as the Python SDK writes them (ReadableSpan.to_json(): name, context with trace_id "
            "and span_id, attributes, events), one per line or as the ConsoleSpanExporter prints them; or OTLP JSON as "
            "the Collector's file exporter writes it (resourceSpans > scopeSpans > spans, one request a line)")
PATTERNS = ("*.jsonl", "*.json", "*.log")
CALLS = ("chat", "text_completion", "generate_content")
READ = (*CALLS, "execute_tool", "retrieval", "invoke_agent")
ROLES = ("system", "user", "assistant", "tool")
EVALUATION = "gen_ai.evaluation.result"
_FLAT = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
_FLAT_CALL = re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)")
_SHAPE = ('"context": {', '"trace_id": "0x', '"span_id": "0x', '"kind": "SpanKind.')
_OTLP_SHAPE = ('"resourceSpans"', '"scopeSpans"', '"traceId"')
#: OTLP's StatusCode, by number (the protobuf JSON mapping may write the enum as either)
_OTLP_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK",
                "STATUS_CODE_ERROR": "ERROR"}


def claims(path: Path) -> bool:
    return claimed(path, PATTERNS, _spans_file)


def _spans_file(path: Path) -> bool:
    start = head(path)[:8192]
    return all(mark in start for mark in _SHAPE) or all(mark in start for mark in _OTLP_SHAPE)


@dataclass
class _Span:
    where: str
    line: int
    trace: str
    id: str
    name: str
    start: str
    parent: str | None
    attributes: dict[str, Any]
    events: list[Any]
    status: dict[str, Any]
    service: str | None
    budget: JsonBudget  # the JSON values of its file, spent by the JSON its attributes hold as text
    prefix: str = ""  # where the span is in its line: an OTLP request holds many

    def at(self, key: str) -> str:
        return f"{self.prefix}attributes.{key}"

    def named(self, what: str = "") -> str:
        return f"trace {self.trace}, span {self.name!r}" + (f": {what}" if what else "")

    def get(self, key: str, kinds: type | tuple[type, ...]) -> Any:
        return typed_at(self.attributes.get(key), kinds, self.where, self.line, self.at(key), self.named(repr(key)))

    def json(self, key: str) -> Any:
        return decoded(self.attributes.get(key), self.budget, self.named(repr(key)), self.where, self.line,
                       self.at(key))

    def operation(self) -> str | None:
        named = self.get("gen_ai.operation.name", (str, type(None)))
        if named is None and any(k in self.attributes for k in ("gen_ai.input.messages", "gen_ai.output.messages")):
            return "chat"  # an instrumentation that records the messages but not the operation
        if named is None and any(_FLAT.fullmatch(k) for k in self.attributes):
            return "chat"
        return named


def read(path: Path, *, partial: bool = False) -> SourceData:
    files, counts = exported(path, PATTERNS, _spans_file, "span export", EXPECTED)
    traces: dict[str, list[_Span]] = {}
    seen: dict[tuple[str, str], _Span] = {}
    for file in files:
        budget = JsonBudget()
        for line, record in records(file):
            for span in _spans(record, str(file), line, budget):
                first = seen.setdefault((span.trace, span.id), span)
                if first is not span:  # two exports of one run (spans.jsonl beside the console's copy)
                    raise DataError(f"span {span.name!r} of trace {span.trace} is in {first.where}:{first.line} too: "
                                    "expected each span once (read one file, or move the other out of the folder)",
                                    file, line, span.prefix + ("spanId" if span.prefix else "context.span_id"))
                traces.setdefault(span.trace, []).append(span)
    if not traces:
        raise DataError(f"no spans: expected {EXPECTED}", path)
    items, judgments = [], []
    for trace_id, spans in traces.items():
        one, verdicts = _trace(trace_id, sorted(spans, key=lambda s: (s.start, s.where, s.line)), counts)
        if one is not None:
            items.append(one)
            judgments += verdicts
    return traced_data(NAME, path, items, judgments, counts, "no trace holds a model's reply to read: expected "
                       f"{EXPECTED}, with the GenAI semantic conventions' gen_ai.* attributes and the messages recorded")


def _spans(record: dict[str, Any], where: str, line: int, budget: JsonBudget) -> list[_Span]:
    """The spans of a record: the SDK's one span, or every span of an OTLP request."""
    if "resourceSpans" in record or "resource_spans" in record:
        return _otlp(record, where, line, budget)
    return [_span(record, where, line, budget)]


def _span(record: dict[str, Any], where: str, line: int, budget: JsonBudget) -> _Span:
    for key in ("name", "context", "attributes"):
        if key not in record:
            raise DataError(f"no {key!r}: expected {EXPECTED} (a span from another exporter?)", where, line, key)
    name = typed_at(record["name"], str, where, line, "name", "the span's 'name'")
    context = typed_at(record["context"], dict, where, line, "context", f"span {name!r}: 'context'")
    trace = typed_at(context.get("trace_id"), str, where, line, "context.trace_id", f"span {name!r}: 'trace_id'")
    span_id = typed_at(context.get("span_id"), str, where, line, "context.span_id", f"span {name!r}: 'span_id'")
    if not re.fullmatch(r"0x[0-9a-f]{32}", trace):
        raise DataError(f"span {name!r}: trace_id {trace[:40]!r} is not one the SDK writes (0x and 32 hex digits)",
                        where, line, "context.trace_id")
    resource = record.get("resource")
    service = (resource.get("attributes") or {}).get("service.name") if isinstance(resource, dict) else None
    return _Span(where, line, trace.removeprefix("0x"), span_id, name,
                 typed_at(record.get("start_time") or "", str, where, line, "start_time", f"span {name!r}: 'start_time'"),
                 typed_at(record.get("parent_id"), (str, type(None)), where, line, "parent_id",
                          f"span {name!r}: 'parent_id'"),
                 typed_at(record["attributes"] or {}, dict, where, line, "attributes", f"span {name!r}: 'attributes'"),
                 typed_at(record.get("events") or [], list, where, line, "events", f"span {name!r}: 'events'"),
                 typed_at(record.get("status") or {}, dict, where, line, "status", f"span {name!r}: 'status'"),
                 service if isinstance(service, str) else None, budget)


def _trace(trace_id: str, spans: list[_Span], counts: Counter[str]) -> tuple[Any, list[Any]]:
    """The trace's item and judgments; (None, []) when it holds no model's reply (counted)."""
    genai = [s for s in spans if any(key.startswith("gen_ai.") for key in s.attributes)]
    if not genai:
        counts["trace(s) without a gen_ai span (no model's run: an HTTP request, a database call) left out"] += 1
        return None, []
    counts.update({"span(s) without gen_ai attributes in the models' traces not read": len(spans) - len(genai)}
                  if len(genai) < len(spans) else {})
    operations = [(span, span.operation()) for span in genai]
    for _, operation in operations:
        if operation not in READ:
            counts[f"span(s) of operation {operation!r} not read"] += 1
    calls = [span for span, operation in operations if operation in CALLS]
    # every call is read (a bad one is refused wherever it is); the last with a reply is the item's, its notes counted
    read = []
    for span in calls:
        own = Counter[str]()
        read.append((span, _messages(span, own), own))
    replied = next(((span, messages, own) for span, messages, own in reversed(read) if messages), None)
    verdicts = _evaluations(trace_id, spans, counts)
    if replied is None:
        why = "recorded no messages (content capture off)" if calls else "has no model call (chat span)"
        counts[f"trace(s) with gen_ai spans whose model call {why} left out"
               + (f", with {len(verdicts)} evaluation result(s)" if verdicts else "")] += 1
        return None, []
    last, messages, own = replied
    counts.update(own)
    counts.update({"earlier model call(s) of a trace read through the last call's input messages":
                   calls.index(last)} if calls.index(last) else {})
    if all(span.parent is not None for span in spans):
        counts["trace(s) without their root span (cut short, or begun in another service) read as they are"] += 1
    agents = [span.get("gen_ai.agent.name", (str, type(None))) for span, op in operations if op == "invoke_agent"]
    model = (last.get("gen_ai.request.model", (str, type(None))) or last.get("gen_ai.response.model", (str, type(None)))
             or last.service)
    extra = {"provider": last.get("gen_ai.provider.name", (str, type(None))) or last.get("gen_ai.system", (str, type(None))),
             "response_model": last.get("gen_ai.response.model", (str, type(None))),
             "conversation_id": next((s.attributes["gen_ai.conversation.id"] for s in genai
                                      if isinstance(s.attributes.get("gen_ai.conversation.id"), str)), None),
             "agent": next((name for name in agents if name), None), "service": last.service}
    record = {"id": trace_id, "system_id": model, "group_id": group_of(messages), "messages": messages,
              "trajectory": [_step(span) for span, op in operations if op == "execute_tool"] or None,
              "contexts": _passages([span for span, op in operations if op == "retrieval"], counts) or None,
              "extra": {key: value for key, value in extra.items() if value is not None}}
    return item(record, last.where, last.line), [judgment(row, where, line) for row, where, line in verdicts]


# -- messages ------------------------------------------------------------------------------------------


def _messages(span: _Span, counts: Counter[str]) -> list[dict[str, Any]] | None:
    """The call's input messages and its reply in the OpenAI shape; None when it recorded no reply."""
    if "gen_ai.output.messages" in span.attributes or "gen_ai.input.messages" in span.attributes:
        replies = span.json("gen_ai.output.messages")
        if replies is None:
            return None
        given = typed_at(span.json("gen_ai.input.messages") or [], list, span.where, span.line,
                         span.at("gen_ai.input.messages"), span.named("'gen_ai.input.messages'"))
        replies = typed_at(replies, list, span.where, span.line, span.at("gen_ai.output.messages"),
                           span.named("'gen_ai.output.messages'"))
        counts.update({"other choice(s) of a call (n > 1) left out: the first is read": len(replies) - 1}
                      if len(replies) > 1 else {})
        messages = _system(span, given) + _converted(span, [("gen_ai.input.messages", k, m) for k, m in enumerate(given)]
                                                     + [("gen_ai.output.messages", 0, m) for m in replies[:1]], counts)
        return messages if replies else None
    flat = _flat(span)
    if not any(kind == "completion" for kind, _ in flat):
        return None
    completions = [k for kind, k in flat if kind == "completion"]
    counts.update({"other choice(s) of a call (n > 1) left out: the first is read": len(completions) - 1}
                  if len(completions) > 1 else {})
    return [_flat_message(span, kind, k) for kind, k in flat if kind == "prompt" or k == completions[0]]


def _system(span: _Span, given: list[Any]) -> list[dict[str, Any]]:
    """``gen_ai.system_instructions`` as the first message (unless the input messages hold a system message)."""
    instructions = span.json("gen_ai.system_instructions")
    if instructions is None or any(isinstance(m, dict) and m.get("role") == "system" for m in given):
        return []
    if isinstance(instructions, str):
        return [{"role": "system", "content": instructions}]
    parts = typed_at(instructions, list, span.where, span.line, span.at("gen_ai.system_instructions"),
                     span.named("'gen_ai.system_instructions'"))
    texts = [part["content"] for part in parts if isinstance(part, dict) and isinstance(part.get("content"), str)]
    return [{"role": "system", "content": "\n".join(texts)}] if texts else []


def _converted(span: _Span, given: list[tuple[str, int, Any]], counts: Counter[str]) -> list[dict[str, Any]]:
    """Messages of the conventions' shape (role, parts) in the OpenAI shape: text parts joined as the content,
    ``tool_call`` parts as tool calls, each ``tool_call_response`` part a tool message; a call without an id is
    given one from its place, and a response without one answers the oldest call not yet answered."""
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    for key, k, message in given:
        where = f"'{key}' message {k}"
        typed_at(message, dict, span.where, span.line, span.at(key), span.named(where))
        role = message.get("role")
        if role not in ROLES:
            raise DataError(span.named(f"{where}: role {role!r}: expected one of {', '.join(ROLES)}"), span.where,
                            span.line, span.at(key))
        parts = typed_at(message.get("parts"), list, span.where, span.line, span.at(key), span.named(f"{where}: 'parts'"))
        texts, calls, answers = [], [], []
        for j, part in enumerate(parts):
            kind = typed_at(part, dict, span.where, span.line, span.at(key), span.named(f"{where}: part {j}")).get("type")
            if kind == "text":
                texts.append(text(part.get("content")))
            elif kind == "tool_call":
                name = typed_at(part.get("name"), str, span.where, span.line, span.at(key),
                                span.named(f"{where}: part {j}: the tool call's 'name'"))
                call_id = str(part.get("id") or f"call_{len(messages)}_{j}")
                calls.append({"id": call_id, "function": {"name": name, "arguments": part.get("arguments") or {}}})
                pending.append(call_id)
            elif kind == "tool_call_response":
                answered = part.get("id") or (pending[0] if pending else None)
                answers.append({"role": "tool", "tool_call_id": answered, "content": text(part.get("response"))})
                if answered in pending:
                    pending.remove(answered)
            else:
                counts[f"message part(s) of type {kind!r} (not text or a tool call) left out"] += 1
        messages += answers
        if texts or calls:
            messages.append({"role": role, "content": "\n".join(texts) if texts else None,
                             "tool_calls": calls or None}
                            | ({"tool_call_id": pending.pop(0) if pending else None} if role == "tool" else {}))
    return messages


def _flat(span: _Span) -> list[tuple[str, int]]:
    """The (prompt or completion, index) of the older flattened attributes, in order."""
    found = {(m[1], int(m[2])) for key in span.attributes if (m := _FLAT.fullmatch(key))}
    return sorted(found, key=lambda one: (one[0] == "completion", one[1]))


def _flat_message(span: _Span, kind: str, k: int) -> dict[str, Any]:
    prefix = f"gen_ai.{kind}.{k}."
    fields = {key.removeprefix(prefix): value for key, value in span.attributes.items() if key.startswith(prefix)}
    role = fields.get("role", "assistant" if kind == "completion" else None)
    if role not in ROLES:
        raise DataError(span.named(f"{prefix}role is {role!r}: expected one of {', '.join(ROLES)}"), span.where,
                        span.line, span.at(f"{prefix}role"))
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if m := _FLAT_CALL.fullmatch(key):
            calls.setdefault(int(m[1]), {})[m[2]] = value
    content = fields.get("content")
    return {"role": role, "content": None if content is None else text(content),
            "tool_calls": [{"id": str(call.get("id") or f"call_{kind}_{k}_{j}"),
                            "function": {"name": call.get("name"), "arguments": call.get("arguments") or ""}}
                           for j, call in sorted(calls.items())] or None,
            "tool_call_id": fields.get("tool_call_id")}


# -- steps, passages, evaluations ----------------------------------------------------------------------


def _step(span: _Span) -> dict[str, Any]:
    if "gen_ai.tool.name" not in span.attributes:
        raise DataError(span.named("no 'gen_ai.tool.name': expected an execute_tool span to name its tool"),
                        span.where, span.line, span.at("gen_ai.tool.name"))
    key = "gen_ai.tool.call.result"
    result = maybe_json(span.attributes.get(key), span.budget, span.where, span.line, span.at(key))
    failed = span.status.get("status_code") == "ERROR"
    observation = text(result) if result is not None else (
        f"[error] {span.status.get('description') or 'the tool failed'}" if failed else None)
    return {"tool": span.get("gen_ai.tool.name", str),
            "arguments": maybe_json(span.attributes.get("gen_ai.tool.call.arguments"), span.budget, span.where,
                                    span.line, span.at("gen_ai.tool.call.arguments")),
            "observation": observation}


def _passages(spans: list[_Span], counts: Counter[str]) -> list[dict[str, Any]]:
    """The retrieval spans' documents (``gen_ai.retrieval.documents``) that carry their text (``content``)."""
    passages: dict[str, dict[str, Any]] = {}
    key = "gen_ai.retrieval.documents"
    for span in spans:
        documents = span.json(key)
        if documents is None:
            counts["retrieval span(s) without gen_ai.retrieval.documents (an opt-in attribute) not read"] += 1
            continue
        for j, document in enumerate(typed_at(documents, list, span.where, span.line, span.at(key),
                                              span.named(repr(key)))):
            typed_at(document, dict, span.where, span.line, span.at(key), span.named(f"{key!r} document {j}"))
            content = document.get("content", document.get("text"))
            if not isinstance(content, str) or document.get("id") is None:
                counts["retrieved document(s) without an id and their text (content) not read as passages"] += 1
                continue
            source = span.attributes.get("gen_ai.data_source.id")
            add_passage(passages, {"id": str(document["id"]), "text": content,
                                   "source": source if isinstance(source, str) else None})
    return list(passages.values())


def _evaluations(trace_id: str, spans: list[_Span], counts: Counter[str]) -> list[tuple[dict[str, Any], str, int]]:
    """(judgment row, file, line) for each evaluation result of the trace; of one evaluation given twice (an
    earlier turn's), the last."""
    rows: dict[str, tuple[dict[str, Any], str, int]] = {}
    for span in spans:
        for j, event in enumerate(span.events):
            if isinstance(event, dict) and event.get("name") == EVALUATION:
                row = _evaluation(trace_id, span, j, event, counts)
                if row["judge"] in rows:
                    counts["evaluation result(s) given again later in the same trace: the last is read"] += 1
                rows[row["judge"]] = (row, span.where, span.line)
    return list(rows.values())


def _evaluation(trace_id: str, span: _Span, j: int, event: dict[str, Any], counts: Counter[str]) -> dict[str, Any]:
    """A ``gen_ai.evaluation.result`` event as a judgment row: a result without a value, or with an error, is
    no verdict (unparsable, error), never a 0."""
    field = f"{span.prefix}events.{j}.attributes"
    attributes = typed_at(event.get("attributes") or {}, dict, span.where, span.line, field,
                          span.named(f"event {j}: 'attributes'"))

    def value(key: str, kinds: Any) -> Any:
        return typed_at(attributes.get(key), kinds, span.where, span.line, f"{field}.{key}",
                        span.named(f"{EVALUATION} event: {key!r}"))

    score = value("gen_ai.evaluation.score.value", (int, float, type(None)))
    row: dict[str, Any] = {"item_id": trace_id, "judge": value("gen_ai.evaluation.name", str),
                           "label": value("gen_ai.evaluation.score.label", (str, type(None))),
                           "explanation": value("gen_ai.evaluation.explanation", (str, type(None))),
                           "extra": {"span": span.name}}
    error = value("error.type", (str, type(None)))
    if error is not None:
        counts["evaluation result(s) with an error (error.type) kept as an error (no verdict)"] += 1
        return row | {"status": "error", "reason": f"the evaluation failed ({error})"}
    if score is None or not math.isfinite(score):
        counts["evaluation result(s) without a score value kept as unparsable"] += 1
        return row | {"status": "unparsable", "reason": f"no gen_ai.evaluation.score.value ({score!r})"}
    return row | {"score": float(score)}


# -- OTLP JSON (the Collector's file exporter) ----------------------------------------------------------


def _otlp(record: dict[str, Any], where: str, line: int, budget: JsonBudget) -> list[_Span]:
    """The spans of one ``ExportTraceServiceRequest`` in OTLP JSON, as the SDK's spans are read."""
    if "resource_spans" in record:
        raise DataError("snake_case OTLP (resource_spans): expected OTLP JSON as the Collector writes it (camelCase "
                        "resourceSpans, ids in hex)", where, line, "resource_spans")
    spans = []
    for r, resource_spans in enumerate(typed_at(record["resourceSpans"], list, where, line, "resourceSpans",
                                                "'resourceSpans'")):
        at = f"resourceSpans.{r}"
        typed_at(resource_spans, dict, where, line, at, f"{at!r}")
        resource = typed_at(resource_spans.get("resource") or {}, dict, where, line, f"{at}.resource", f"'{at}.resource'")
        service = _otlp_attributes(resource.get("attributes"), where, line, f"{at}.resource.attributes").get("service.name")
        scopes = resource_spans.get("scopeSpans", resource_spans.get("instrumentationLibrarySpans"))
        for s, scope in enumerate(typed_at(scopes or [], list, where, line, f"{at}.scopeSpans", f"'{at}.scopeSpans'")):
            typed_at(scope, dict, where, line, f"{at}.scopeSpans.{s}", f"'{at}.scopeSpans.{s}'")
            for k, span in enumerate(typed_at(scope.get("spans") or [], list, where, line, f"{at}.scopeSpans.{s}.spans",
                                              f"'{at}.scopeSpans.{s}.spans'")):
                spans.append(_otlp_span(span, f"{at}.scopeSpans.{s}.spans.{k}.", where, line, budget,
                                        service if isinstance(service, str) else None))
    return spans


def _otlp_span(span: Any, prefix: str, where: str, line: int, budget: JsonBudget, service: str | None) -> _Span:
    typed_at(span, dict, where, line, prefix.rstrip("."), f"span {prefix.rstrip('.')!r}")
    name = typed_at(span.get("name"), str, where, line, f"{prefix}name", "the span's 'name'")
    trace = typed_at(span.get("traceId"), str, where, line, f"{prefix}traceId", f"span {name!r}: 'traceId'")
    span_id = typed_at(span.get("spanId"), str, where, line, f"{prefix}spanId", f"span {name!r}: 'spanId'")
    if not re.fullmatch(r"[0-9a-fA-F]{32}", trace):
        raise DataError(f"span {name!r}: traceId {trace[:40]!r} is not OTLP JSON's (32 hex digits; a base64 id is "
                        "protobuf's own JSON mapping, which the Collector does not write)", where, line, f"{prefix}traceId")
    parent = typed_at(span.get("parentSpanId") or None, (str, type(None)), where, line, f"{prefix}parentSpanId",
                      f"span {name!r}: 'parentSpanId'")
    start = typed_at(span.get("startTimeUnixNano") or "0", (str, int), where, line, f"{prefix}startTimeUnixNano",
                     f"span {name!r}: 'startTimeUnixNano'")
    events = []
    for j, event in enumerate(typed_at(span.get("events") or [], list, where, line, f"{prefix}events",
                                       f"span {name!r}: 'events'")):
        typed_at(event, dict, where, line, f"{prefix}events.{j}", f"span {name!r}: event {j}")
        events.append({"name": event.get("name"),
                       "attributes": _otlp_attributes(event.get("attributes"), where, line,
                                                      f"{prefix}events.{j}.attributes")})
    status = typed_at(span.get("status") or {}, dict, where, line, f"{prefix}status", f"span {name!r}: 'status'")
    return _Span(where, line, trace.lower(), span_id.lower(), name, str(start).zfill(20), parent,
                 _otlp_attributes(span.get("attributes"), where, line, f"{prefix}attributes"), events,
                 {"status_code": _OTLP_STATUS.get(status.get("code"), "UNSET"), "description": status.get("message")},
                 service, budget, prefix)


def _otlp_attributes(attributes: Any, where: str, line: int, field: str) -> dict[str, Any]:
    """OTLP's list of ``{key, value: AnyValue}`` as the SDK's mapping of key to value."""
    read = {}
    for j, attribute in enumerate(typed_at(attributes or [], list, where, line, field, f"{field!r}")):
        typed_at(attribute, dict, where, line, f"{field}.{j}", f"attribute {j} of {field!r}")
        key = typed_at(attribute.get("key"), str, where, line, f"{field}.{j}.key", f"attribute {j} of {field!r}: 'key'")
        read[key] = _any_value(attribute.get("value"), where, line, f"{field}.{key}")
    return read


def _any_value(value: Any, where: str, line: int, field: str) -> Any:
    """An OTLP ``AnyValue``: the one kind it holds (an int64 is a JSON string in OTLP JSON)."""
    typed_at(value if value is not None else {}, dict, where, line, field, f"{field!r}")
    if not value:
        return None
    if "stringValue" in value:
        return typed_at(value["stringValue"], str, where, line, field, f"{field!r}: 'stringValue'")
    if "boolValue" in value:
        return typed_at(value["boolValue"], bool, where, line, field, f"{field!r}: 'boolValue'")
    if "intValue" in value:
        number = typed_at(value["intValue"], (str, int), where, line, field, f"{field!r}: 'intValue'")
        try:
            return int(number)
        except ValueError:
            raise DataError(f"{field!r}: intValue {str(number)[:30]!r} is not an integer", where, line, field) from None
    if "doubleValue" in value:
        number = typed_at(value["doubleValue"], (int, float, str), where, line, field, f"{field!r}: 'doubleValue'")
        try:  # NaN and the infinities are strings in the protobuf JSON mapping
            return float(number)
        except ValueError:
            raise DataError(f"{field!r}: doubleValue {str(number)[:30]!r} is not a number", where, line, field) from None
    if "arrayValue" in value:
        array = typed_at(value["arrayValue"] or {}, dict, where, line, field, f"{field!r}: 'arrayValue'")
        values = typed_at(array.get("values") or [], list, where, line, field, f"{field!r}: 'arrayValue.values'")
        return [_any_value(one, where, line, f"{field}.{k}") for k, one in enumerate(values)]
    if "kvlistValue" in value:
        kvlist = typed_at(value["kvlistValue"] or {}, dict, where, line, field, f"{field!r}: 'kvlistValue'")
        return _otlp_attributes(kvlist.get("values"), where, line, field)
    raise DataError(f"{field!r}: a value of kind {', '.join(value)[:60]}: expected stringValue, intValue, doubleValue, "
                    "boolValue, arrayValue or kvlistValue", where, line, field)
