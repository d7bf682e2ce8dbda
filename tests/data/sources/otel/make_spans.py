"""The OpenTelemetry spans of tests/data/sources/otel/ (tests/data/sources/README.md): a small agent traced
with the OpenTelemetry SDK, its spans carrying the GenAI semantic conventions (``gen_ai.*``) as an
instrumented application sets them, exported offline by two exporters at once:

* ``spans.jsonl``: a SpanExporter writing ``ReadableSpan.to_json(indent=None)``, one span per line;
* ``console.json``: the SDK's own ``ConsoleSpanExporter`` (``to_json()`` indented, one span after another).

    python make_spans.py OUT

Six traces, one per question and system, and two that are not a model's answer:

* ``careful`` (``gen_ai.request.model`` careful): the current conventions. ``invoke_agent`` span, a
  ``retrieval`` span (``gen_ai.retrieval.documents``, each document with its text as ``content``), a ``chat``
  span whose ``gen_ai.output.messages`` call the tool, an ``execute_tool`` span (``gen_ai.tool.*``), a second
  ``chat`` span with the reply; ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
  ``gen_ai.system_instructions`` as JSON text (the Python SDK takes no structured attributes).
* ``sloppy``: the older, flattened attributes (``gen_ai.system``, ``gen_ai.prompt.<i>.role`` / ``.content``,
  ``gen_ai.completion.<i>.*``) as OpenLLMetry-style instrumentations still write them; one chat span, no tool.
* Each reply is rated by two evaluators, as ``gen_ai.evaluation.result`` span events on the chat span
  that produced it (``gen_ai.evaluation.name``, ``.score.value``, ``.score.label``, ``.explanation``).
* A ``GET /health`` trace without any ``gen_ai`` span, and a ``chat`` trace recorded with message content
  capture off (no messages): both are in a real export and must be left out, with a note.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import SpanKind

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
OUT.mkdir(parents=True, exist_ok=True)


class JsonLinesExporter(SpanExporter):
    """Each finished span as one line of JSON (the SDK's own ``to_json``, unindented)."""

    def __init__(self, path: Path) -> None:
        self.handle = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            self.handle.write(span.to_json(indent=None) + "\n")
        self.handle.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.handle.close()


console = open(OUT / "console.json", "w", encoding="utf-8")  # noqa: SIM115
provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(OUT / "spans.jsonl")))
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=console)))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("weather-agent", "0.1")

QUESTIONS = {"paris": "Do I need an umbrella in Paris tomorrow?", "oslo": "Will it be warm in Oslo tomorrow?",
             "cairo": "Is tomorrow a good day for a walk in Cairo?"}
FORECAST = {"paris": "18 C, light rain", "oslo": "11 C, clear", "cairo": "34 C, sunny"}
ANSWERS = {"paris": "Yes: light rain is forecast (18 C), so take an umbrella.",
           "oslo": "Not really: 11 C and clear, so bring a jacket.",
           "cairo": "Only early or late: it will be 34 C and sunny."}
PASSAGES = {"paris": [("climate-paris", 0.91, "Paris in May: mild, 15 to 20 C, showers possible."),
                      ("tips-paris", 0.52, "Umbrellas are sold at every metro station.")],
            "oslo": [("climate-oslo", 0.88, "Oslo in May: 8 to 16 C, long daylight.")],
            "cairo": [("climate-cairo", 0.90, "Cairo in May: hot and dry, 30 to 35 C.")]}
SYSTEM = "You answer travel questions about the weather. Use the forecast tool."


def text(role: str, content: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def evaluate(span, answer: str, city: str) -> None:
    """Two evaluators' results on the reply, as gen_ai.evaluation.result events of the span that gave it."""
    right = FORECAST[city].split(",")[0] in answer
    span.add_event("gen_ai.evaluation.result", {
        "gen_ai.evaluation.name": "Relevance", "gen_ai.evaluation.score.value": 5.0 if right else 2.0,
        "gen_ai.evaluation.score.label": "relevant" if right else "not_relevant",
        "gen_ai.evaluation.explanation": "uses the forecast" if right else "ignores the forecast"})
    span.add_event("gen_ai.evaluation.result", {
        "gen_ai.evaluation.name": "Groundedness", "gen_ai.evaluation.score.value": 1.0 if right else 0.0,
        "gen_ai.evaluation.score.label": "pass" if right else "fail"})


def careful(city: str, question: str) -> None:
    model = "careful"
    with tracer.start_as_current_span("invoke_agent weather_agent", kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent",
                              "gen_ai.provider.name": "openai", "gen_ai.request.model": model,
                              "gen_ai.conversation.id": f"conv-{city}"})
        with tracer.start_as_current_span("retrieval kb", kind=SpanKind.CLIENT) as span:
            span.set_attributes({"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "kb",
                                 "gen_ai.retrieval.query.text": question,
                                 "gen_ai.retrieval.documents": json.dumps(
                                     [{"id": i, "score": s, "content": t} for i, s, t in PASSAGES[city]])})
        history = [text("user", question)]
        call = {"type": "tool_call", "id": f"call_{city}", "name": "get_forecast", "arguments": {"city": city}}
        with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT) as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                 "gen_ai.request.model": model, "gen_ai.response.model": f"{model}-2026-05",
                                 "gen_ai.request.temperature": 0.0,
                                 "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
                                 "gen_ai.input.messages": json.dumps(history),
                                 "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call],
                                                                        "finish_reason": "tool_call"}]),
                                 "gen_ai.response.finish_reasons": ["tool_call"],
                                 "gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": 9})
        result = {"city": city.title(), "forecast": FORECAST[city]}
        with tracer.start_as_current_span("execute_tool get_forecast", kind=SpanKind.INTERNAL) as span:
            span.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_forecast",
                                 "gen_ai.tool.call.id": call["id"], "gen_ai.tool.type": "function",
                                 "gen_ai.tool.description": "Tomorrow's forecast for a city",
                                 "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                                 "gen_ai.tool.call.result": json.dumps(result)})
        history += [{"role": "assistant", "parts": [call]},
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": call["id"], "response": result}]}]
        with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT) as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                 "gen_ai.request.model": model, "gen_ai.response.model": f"{model}-2026-05",
                                 "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
                                 "gen_ai.input.messages": json.dumps(history),
                                 "gen_ai.output.messages": json.dumps([text("assistant", ANSWERS[city])
                                                                       | {"finish_reason": "stop"}]),
                                 "gen_ai.response.finish_reasons": ["stop"]})
            evaluate(span, ANSWERS[city], city)


def sloppy(city: str, question: str) -> None:
    model, answer = "sloppy", "It will be sunny and warm, no umbrella needed."
    with tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT) as span:
        span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                             "gen_ai.request.model": model, "gen_ai.response.model": model,
                             "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": SYSTEM,
                             "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": question,
                             "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": answer,
                             "gen_ai.completion.0.finish_reason": "stop"})
        evaluate(span, answer, city)


for city, question in QUESTIONS.items():
    careful(city, question)
for city, question in QUESTIONS.items():
    sloppy(city, question)
with tracer.start_as_current_span("GET /health", kind=SpanKind.SERVER) as span:
    span.set_attributes({"http.request.method": "GET", "url.path": "/health", "http.response.status_code": 200})
with tracer.start_as_current_span("chat careful", kind=SpanKind.CLIENT) as span:  # content capture off
    span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                         "gen_ai.request.model": "careful", "gen_ai.usage.input_tokens": 12})
provider.shutdown()
console.close()
print(f"spans in {OUT / 'spans.jsonl'} and {OUT / 'console.json'}")
