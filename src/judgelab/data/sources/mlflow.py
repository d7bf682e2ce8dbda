"""MLflow traces (MLflow 3): ``Trace.to_json()`` one trace per line (``mlflow.search_traces(return_type="list")``
written out), a trace saved alone (``to_json(pretty=True)``), the JSON ``mlflow traces search --output json``
prints (``{"traces": [...]}``), or a folder of such files.

One trace is one pointwise item, id the trace id (``tr-...``). Its ``messages`` are those of its last
``CHAT_MODEL`` or ``LLM`` span: the span's inputs (``messages``, in the OpenAI chat shape, as MLflow's autologgers
record them; or a text) and its reply (the outputs' ``choices[0].message``, a message, or a text); the judged
reply is the last assistant message (``Item``'s rule). A trace without such a span is read from its root span:
``source`` its inputs, ``output`` its outputs. Its ``TOOL`` spans are its ``trajectory`` (tool the span's name,
arguments its inputs, observation its outputs), its ``RETRIEVER`` spans' documents its ``contexts``
(``page_content``, id the document's id, else ``doc_uri#chunk_id``). System: the model (``mlflow.llm.model``, else
the call's ``model``), else the trace's logged model (``mlflow.modelId``).

Assessments: an expectation ``expected_response`` (a text) is the ``reference``; human feedback and expectations
whose value is a number, true/false or yes/no are human labels, ``scores.<name>`` (1/0 for true/yes; several
people's values of one name: their mean); other values are kept in ``extra.feedback`` / ``extra.expectations``.
Feedback from an LLM judge or code is a judgment whose judge is the assessment's name (its rationale the
explanation, its source in ``extra``); a judge's error is a judgment with status ``error``, never a 0. A judge's
feedback a person overrode (``valid: false``) stays its verdict (``extra.overridden``), the person's value a human
label; a human assessment overridden by a later one is not read.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator
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
    listed,
    records,
    traced_data,
    typed_at,
)
from judgelab.errors import DataError
from judgelab.files import JsonBudget

NAME = "mlflow"
EXPECTED = ("MLflow traces (MLflow 3: Trace.to_json() one per line, or the JSON of `mlflow traces search --output "
            "json`): info with trace_id and assessments, data with spans")
PATTERNS = ("*.jsonl", "*.json")
CALLS = ("CHAT_MODEL", "LLM")
ROLES = ("system", "user", "assistant", "tool")
CHAT_SHAPE = ("the OpenAI chat shape (inputs with 'messages', outputs with 'choices', as MLflow's autologgers "
              "record a call) or text")
_WORDS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}


def claims(path: Path) -> bool:
    return claimed(path, PATTERNS, _traces_file)


def _traces_file(path: Path) -> bool:
    start = head(path)[:8192]
    return '"info"' in start and any(mark in start for mark in ('"trace_location"', '"request_metadata"'))


def read(path: Path, *, partial: bool = False) -> SourceData:
    files, counts = exported(path, PATTERNS, _traces_file, "MLflow traces", EXPECTED)
    items, judgments = [], []
    for file in files:
        budget = JsonBudget()
        for line, record in records(file):
            for prefix, trace in _traces(record, str(file), line):
                got = _Trace(trace, prefix, str(file), line, budget, counts).read()
                if got is not None:
                    items.append(got[0])
                    judgments += got[1]
    return traced_data(NAME, path, items, judgments, counts, f"no trace to read: expected {EXPECTED}")


def _traces(record: dict[str, Any], where: str, line: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field prefix, trace) for the record: a trace, or the ``traces`` of a search's output."""
    if "traces" in record and "info" not in record:
        yield from listed(record["traces"], "traces", "trace", where, line)
    elif "info" in record:
        yield "", record
    else:
        raise DataError(f"no 'info': expected {EXPECTED}", where, line, "info")


class _Trace:
    """One trace read into an item (and its judgments)."""

    def __init__(self, trace: dict[str, Any], prefix: str, where: str, line: int, budget: JsonBudget,
                 counts: Counter[str]) -> None:
        self.trace, self.prefix, self.where, self.line, self.budget, self.counts = trace, prefix, where, line, budget, counts
        if "info" not in trace:
            raise DataError(f"no 'info': expected {EXPECTED}", where, line, f"{prefix}info")
        self.info = self.typed(trace["info"], dict, "info", "the trace's 'info'")
        if "request_id" in self.info and "trace_id" not in self.info:
            raise DataError("an MLflow 2 trace (info.request_id): this reader reads MLflow 3 traces; MLflow 3 converts "
                            "one (Trace.from_json(line).to_json())", where, line, f"{prefix}info.request_id")
        self.id = self.typed(self.info.get("trace_id"), str, "info.trace_id", "the trace's 'info.trace_id'")

    def typed(self, value: Any, kinds: Any, field: str, name: str) -> Any:
        return typed_at(value, kinds, self.where, self.line, self.prefix + field, name)

    def named(self, what: str) -> str:
        return f"trace {self.id}: {what}"

    def read(self) -> tuple[Any, list[Any]] | None:
        if "data" not in self.trace:
            raise DataError(self.named(f"no 'data': expected {EXPECTED}"), self.where, self.line, f"{self.prefix}data")
        data = self.typed(self.trace["data"], dict, "data", self.named("'data'"))
        spans = [_Span(self, k, span) for k, span in enumerate(
            self.typed(data.get("spans"), list, "data.spans", self.named("'data.spans'")))]
        state = self.info.get("state")
        if state != "OK":
            self.counts[f"trace(s) in state {state!r} (the run failed or had not ended: no answer to judge) left out"] += 1
            return None
        if not spans:
            self.counts["trace(s) exported without their spans left out"] += 1
            return None
        spans.sort(key=lambda span: (span.start, span.k))
        record = self._conversation(spans) | {
            "id": self.id,
            "trajectory": [span.step() for span in spans if span.type == "TOOL"] or None,
            "contexts": self._passages([span for span in spans if span.type == "RETRIEVER"]) or None}
        labels, verdicts = self._assessments()
        record |= labels
        tags = self.typed(self.info.get("tags") or {}, dict, "info.tags", self.named("'info.tags'"))
        location = self.info.get("trace_location")
        experiment = (location.get("mlflow_experiment") or {}).get("experiment_id") if isinstance(location, dict) else None
        record["extra"] |= {key: value for key, value in {
            "experiment_id": experiment, "trace_name": tags.get("mlflow.traceName"),
            "tags": {key: value for key, value in tags.items() if not key.startswith("mlflow.")} or None}.items()
            if value is not None}
        return item(record, self.where, self.line), [judgment(row, self.where, self.line) for row in verdicts]

    # -- the conversation -----------------------------------------------------------------------------

    def _conversation(self, spans: list[_Span]) -> dict[str, Any]:
        calls = [span for span in spans if span.type in CALLS and span.outputs is not None]
        metadata = self.info.get("trace_metadata")
        logged = metadata.get("mlflow.modelId") if isinstance(metadata, dict) else None
        if not calls:
            root = next((span for span in spans if span.raw.get("parent_span_id") is None), spans[0])
            if root.outputs is None:
                raise DataError(self.named(f"no {' or '.join(CALLS)} span and no outputs on its root span "
                                           f"{root.name!r}: nothing to judge"), self.where, self.line,
                                f"{root.field}.attributes.mlflow.spanOutputs")
            self.counts["trace(s) without a chat model span read from the root span's inputs and outputs"] += 1
            source = _plain(root.inputs)
            return {"source": source, "output": _plain(root.outputs), "group_id": group_of([], source),
                    "system_id": root.model() or logged}
        last = calls[-1]
        self.counts.update({"earlier chat model span(s) of a trace read through the last one's input messages":
                            len(calls) - 1} if len(calls) > 1 else {})
        messages = last.messages()
        return {"messages": messages, "group_id": group_of(messages), "system_id": last.model() or logged}

    def _passages(self, spans: list[_Span]) -> list[dict[str, Any]]:
        passages: dict[str, dict[str, Any]] = {}
        for span in spans:
            if span.outputs is None:
                continue
            for j, document in enumerate(span.typed(span.outputs, list, "mlflow.spanOutputs", "the documents")):
                span.typed(document, dict, "mlflow.spanOutputs", f"document {j}")
                content = document.get("page_content")
                if not isinstance(content, str):
                    self.counts["retrieved document(s) without their text (page_content) not read as passages"] += 1
                    continue
                metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
                uri = metadata.get("doc_uri")
                chunk = f"#{metadata['chunk_id']}" if metadata.get("chunk_id") is not None else ""
                add_passage(passages, {"id": str(document.get("id") or (f"{uri}{chunk}" if uri else f"{span.k}.{j}")),
                                       "text": content, "source": uri if isinstance(uri, str) else None})
        return list(passages.values())

    # -- assessments ----------------------------------------------------------------------------------

    def _assessments(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The item's human labels (scores, reference, extra) and the judges' verdicts."""
        humans: dict[str, list[float]] = defaultdict(list)
        expected: dict[str, float] = {}
        kept: dict[str, dict[str, Any]] = {"feedback": {}, "expectations": {}}
        reference, verdicts = None, {}
        for j, assessment in enumerate(self.typed(self.info.get("assessments") or [], list, "info.assessments",
                                                  self.named("'info.assessments'"))):
            field = f"info.assessments.{j}"
            self.typed(assessment, dict, field, self.named(f"assessment {j}"))
            name = self.typed(assessment.get("assessment_name"), str, f"{field}.assessment_name",
                              self.named(f"assessment {j}: 'assessment_name'"))
            source = self.typed(assessment.get("source") or {}, dict, f"{field}.source",
                                self.named(f"assessment {name!r}: 'source'"))
            judged = "feedback" in assessment and source.get("source_type") != "HUMAN"
            if assessment.get("valid") is False and not judged:  # a judge's corrected verdict is still its verdict
                self.counts["human assessment(s) overridden by a later one (valid: false) not read"] += 1
                continue
            if "expectation" in assessment:
                value = self._expectation(assessment["expectation"], name, field)
                if name == "expected_response" and isinstance(value, str):
                    reference = value
                elif (number := _number(value)) is not None:
                    expected[name] = number
                else:
                    kept["expectations"][name] = value
            elif "feedback" in assessment:
                feedback = self.typed(assessment["feedback"], dict, f"{field}.feedback",
                                      self.named(f"assessment {name!r}: 'feedback'"))
                if not judged:
                    self._human(name, feedback, humans, kept["feedback"])
                elif name not in verdicts or assessment.get("valid") is not False:  # a judge's rerun replaces it
                    if name in verdicts:
                        self.counts["judge feedback given again on one trace (a rerun, a span's): the last is read"] += 1
                    verdicts[name] = self._verdict(name, assessment, feedback, source)
            else:
                raise DataError(self.named(f"assessment {name!r} is neither feedback nor an expectation: expected "
                                           "MLflow 3 assessments"), self.where, self.line, self.prefix + field)
        several = sum(len(values) > 1 for values in humans.values())
        self.counts.update({"human label(s) given by several people on one trace: their mean is read": several}
                           if several else {})
        scores = expected | {name: sum(values) / len(values) for name, values in humans.items()}
        extra = {key: values for key, values in kept.items() if values}
        return {"scores": scores, "reference": reference, "extra": extra}, list(verdicts.values())

    def _expectation(self, expectation: Any, name: str, field: str) -> Any:
        self.typed(expectation, dict, f"{field}.expectation", self.named(f"assessment {name!r}: 'expectation'"))
        if "serialized_value" not in expectation:
            return expectation.get("value")
        serialized = self.typed(expectation["serialized_value"], dict, f"{field}.expectation.serialized_value",
                                self.named(f"assessment {name!r}: 'serialized_value'"))
        return decoded(serialized.get("value"), self.budget, self.named(f"assessment {name!r}: the serialized value"),
                       self.where, self.line, f"{self.prefix}{field}.expectation.serialized_value.value")

    def _human(self, name: str, feedback: dict[str, Any], humans: dict[str, list[float]],
               kept: dict[str, Any]) -> None:
        if feedback.get("error"):
            self.counts["human feedback with an error in place of its value not read"] += 1
        elif (number := _number(feedback.get("value"))) is not None:
            humans[name].append(number)
        else:
            self.counts["human feedback value(s) that are no number, true/false or yes/no kept in extra.feedback"] += 1
            kept[name] = feedback.get("value")

    def _verdict(self, name: str, assessment: dict[str, Any], feedback: dict[str, Any],
                 source: dict[str, Any]) -> dict[str, Any]:
        extra = {"source_type": source.get("source_type"), "source_id": source.get("source_id")}
        if assessment.get("valid") is False:
            extra["overridden"] = True  # a person (or a later run) corrected it: kept, as the judge's own verdict
        if assessment.get("span_id"):
            extra["span_id"] = assessment["span_id"]
        row = {"item_id": self.id, "judge": name, "explanation": assessment.get("rationale"), "extra": extra}
        value, error = feedback.get("value"), feedback.get("error")
        if error:
            why = error.get("error_message") or error.get("error_code") if isinstance(error, dict) else error
            self.counts["judge feedback with an error in place of its value kept as an error (no verdict)"] += 1
            return row | {"status": "error", "reason": f"the judge failed: {str(why)[:200]}"}
        number = _number(value)
        if number is None:
            self.counts["judge feedback value(s) that are no number, true/false or yes/no kept as unparsable"] += 1
            return row | {"status": "unparsable", "reason": f"{text(value)[:60]!r} is not a number, true/false or "
                                                            "yes/no"}
        label = str(value).lower() if isinstance(value, (bool, str)) else None
        return row | {"score": number, "label": label}


class _Span:
    """A span of a trace: its type, and its inputs and outputs read from the JSON text MLflow keeps them in."""

    def __init__(self, trace: _Trace, k: int, span: Any) -> None:
        self.trace, self.k, self.field, self.name = trace, k, f"{trace.prefix}data.spans.{k}", None
        self.raw = trace.typed(span, dict, f"data.spans.{k}", trace.named(f"span {k}"))
        if "name" not in span or "attributes" not in span:
            missing = "name" if "name" not in span else "attributes"
            raise DataError(trace.named(f"span {k}: no {missing!r}: expected {EXPECTED}"), trace.where, trace.line,
                            f"{self.field}.{missing}")
        self.name = trace.typed(span["name"], str, f"data.spans.{k}.name", trace.named(f"span {k}: 'name'"))
        self.attributes = self.typed(span["attributes"], dict, "", "'attributes'")
        self.start = trace.typed(span.get("start_time_unix_nano") or 0, int, f"data.spans.{k}.start_time_unix_nano",
                                 self.named("'start_time_unix_nano'"))
        self.type = self.attribute("mlflow.spanType", (str, type(None)))
        self.inputs, self.outputs = self.attribute("mlflow.spanInputs"), self.attribute("mlflow.spanOutputs")

    def named(self, what: str) -> str:
        return self.trace.named(f"span {self.k if self.name is None else repr(self.name)}: {what}")

    def typed(self, value: Any, kinds: Any, key: str, what: str) -> Any:
        field = f"{self.field}.attributes" + (f".{key}" if key else "")
        return typed_at(value, kinds, self.trace.where, self.trace.line, field, self.named(what))

    def attribute(self, key: str, kinds: Any = None) -> Any:
        """An attribute's value: MLflow keeps each as JSON text."""
        value = decoded(self.attributes.get(key), self.trace.budget, self.named(repr(key)), self.trace.where,
                        self.trace.line, f"{self.field}.attributes.{key}")
        return value if kinds is None else self.typed(value, kinds, key, repr(key))

    def model(self) -> str | None:
        named = self.attribute("mlflow.llm.model")
        for value in (named, *(one.get("model") for one in (self.inputs, self.outputs) if isinstance(one, dict))):
            if isinstance(value, str) and value:
                return value
        return None

    def step(self) -> dict[str, Any]:
        status = self.raw.get("status") if isinstance(self.raw.get("status"), dict) else {}
        failed = status.get("code") == "STATUS_CODE_ERROR"
        observation = text(self.outputs) if self.outputs is not None else (
            f"[error] {status.get('message') or 'the tool failed'}" if failed else None)
        return {"tool": self.name, "arguments": self.inputs, "observation": observation}

    def messages(self) -> list[dict[str, Any]]:
        """The call's input messages and its reply, in the OpenAI shape."""
        inputs, outputs = self.inputs, self.outputs
        if isinstance(inputs, dict) and isinstance(inputs.get("messages"), list):
            given = inputs["messages"]
        elif isinstance(inputs, list) and all(isinstance(one, dict) and "role" in one for one in inputs):
            given = inputs
        elif isinstance(inputs, str) or (isinstance(inputs, dict) and isinstance(inputs.get("prompt"), str)):
            given = [{"role": "user", "content": inputs if isinstance(inputs, str) else inputs["prompt"]}]
        else:
            raise DataError(self.named(f"its inputs ({text(inputs)[:60]}) are not a chat this reader reads: expected "
                                       f"{CHAT_SHAPE}"), self.trace.where, self.trace.line,
                            f"{self.field}.attributes.mlflow.spanInputs")
        if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list) and outputs["choices"]:
            choices = outputs["choices"]
            self.trace.counts.update({"other choice(s) of a call (n > 1) left out: the first is read": len(choices) - 1}
                                     if len(choices) > 1 else {})
            reply = choices[0].get("message") if isinstance(choices[0], dict) else None
        elif isinstance(outputs, dict) and "role" in outputs:
            reply = outputs
        elif isinstance(outputs, str):
            reply = {"role": "assistant", "content": outputs}
        else:
            reply = None
        if not isinstance(reply, dict):
            raise DataError(self.named(f"its outputs ({text(outputs)[:60]}) are not a reply this reader reads: "
                                       f"expected {CHAT_SHAPE}"), self.trace.where, self.trace.line,
                            f"{self.field}.attributes.mlflow.spanOutputs")
        return ([self._message(one, k, "mlflow.spanInputs") for k, one in enumerate(given)]
                + [self._message(reply, len(given), "mlflow.spanOutputs")])

    def _message(self, message: Any, k: int, key: str) -> dict[str, Any]:
        self.typed(message, dict, key, f"message {k}")
        if message.get("role") not in ROLES:
            raise DataError(self.named(f"message {k}: role {message.get('role')!r}: expected one of {', '.join(ROLES)}"),
                            self.trace.where, self.trace.line, f"{self.field}.attributes.{key}")
        content = message.get("content")
        if isinstance(content, list):  # content parts: the texts joined, another part (an image) left out
            texts = [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
            self.trace.counts.update({"content part(s) that are not text (images, audio) left out":
                                      len(content) - len(texts)} if len(texts) < len(content) else {})
            content = "\n".join(texts)
        calls = self.typed(message.get("tool_calls") or [], list, key, f"message {k}: 'tool_calls'")
        return {"role": message["role"], "content": None if content is None else text(content),
                "tool_calls": [{"id": call.get("id"), "function": call.get("function")}
                               for call in (self.typed(one, dict, key, f"message {k}: a tool call") for one in calls)]
                or None,
                "tool_call_id": message.get("tool_call_id"), "name": message.get("name")}


def _plain(value: Any) -> str | None:
    """A run's inputs or outputs as text: a text as it is, an object of one text that text, else its JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return next(iter(value.values()))
    return text(value)


def _number(value: Any) -> float | None:
    """A label's value as a number: true/false and yes/no as 1/0 (MLflow's judges answer yes/no), a finite number
    as it is; None for anything else."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    return None
