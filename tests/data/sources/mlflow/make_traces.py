"""The MLflow traces of tests/data/sources/mlflow/ (tests/data/sources/README.md): a small agent traced with
MLflow's own tracing (``@mlflow.trace``, ``mlflow.start_span``) into a local SQLite tracking store, offline,
its traces assessed with ``mlflow.log_feedback`` / ``mlflow.log_expectation`` (and one judge's feedback
corrected by a person with ``mlflow.override_feedback``), then exported as MLflow exports
them: ``Trace.to_json()`` one trace per line (``mlflow.search_traces(return_type="list")``) and the JSON of
``mlflow traces search --output json`` (run by the caller, see the README).

    MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false python make_traces.py OUT

The "model" is a deterministic stand-in (no network): two systems, ``careful`` (looks the weather up with
the tool, grounds its answer in the retrieved passages) and ``sloppy`` (answers at once, often wrong).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mlflow
from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, Document, SpanType

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
OUT.mkdir(parents=True, exist_ok=True)
mlflow.set_tracking_uri(f"sqlite:///{(OUT / 'mlflow.db').resolve()}")
mlflow.set_experiment("weather-agent")

PASSAGES = {
    "paris": [Document(page_content="Paris in May: mild, 15 to 20 C, showers possible.", id="climate-paris",
                       metadata={"doc_uri": "kb/climate.md", "chunk_id": "3"}),
              Document(page_content="Umbrellas are sold at every metro station.", id="tips-paris",
                       metadata={"doc_uri": "kb/tips.md", "chunk_id": "9"})],
    "oslo": [Document(page_content="Oslo in May: 8 to 16 C, long daylight.", id="climate-oslo",
                      metadata={"doc_uri": "kb/climate.md", "chunk_id": "7"})],
    "cairo": [Document(page_content="Cairo in May: hot and dry, 30 to 35 C.", id="climate-cairo",
                       metadata={"doc_uri": "kb/climate.md", "chunk_id": "1"})],
}
FORECAST = {"paris": "18 C, light rain", "oslo": "11 C, clear", "cairo": "34 C, sunny"}
QUESTIONS = {"paris": "Do I need an umbrella in Paris tomorrow?", "oslo": "Will it be warm in Oslo tomorrow?",
             "cairo": "Is tomorrow a good day for a walk in Cairo?"}
ANSWERS = {"paris": "Yes: light rain is forecast (18 C), so take an umbrella.",
           "oslo": "Not really: 11 C and clear, so bring a jacket.",
           "cairo": "Only early or late: it will be 34 C and sunny."}
SYSTEM = "You answer travel questions about the weather. Use the forecast tool."


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(query: str, city: str) -> list[Document]:
    return PASSAGES[city]


@mlflow.trace(name="get_forecast", span_type=SpanType.TOOL)
def get_forecast(city: str) -> dict:
    return {"city": city.title(), "forecast": FORECAST[city]}


def chat(model: str, messages: list[dict], reply: dict) -> dict:
    """A chat model call traced as the OpenAI autologger traces one: inputs the request, outputs the completion."""
    with mlflow.start_span(name="Completions", span_type=SpanType.CHAT_MODEL) as span:
        span.set_inputs({"model": model, "messages": messages, "temperature": 0.0})
        completion = {"id": f"chatcmpl-{len(messages)}", "object": "chat.completion", "model": model,
                      "choices": [{"index": 0, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop",
                                   "message": {"role": "assistant"} | reply}]}
        span.set_outputs(completion)
        span.set_attribute("mlflow.llm.model", model)
        return completion


@mlflow.trace(name="weather_agent", span_type=SpanType.AGENT)
def agent(question: str, city: str, model: str) -> str:
    retrieve(question, city)  # traced: its documents are the RETRIEVER span's outputs
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    if model == "careful":
        call = {"id": f"call_{city}", "type": "function",
                "function": {"name": "get_forecast", "arguments": json.dumps({"city": city})}}
        first = chat(model, messages, {"content": None, "tool_calls": [call]})
        messages.append(first["choices"][0]["message"])
        result = get_forecast(city)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
        answer = ANSWERS[city]
    else:
        answer = "It will be sunny and warm, no umbrella needed."
    final = chat(model, messages, {"content": answer})
    return final["choices"][0]["message"]["content"]


human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="alice@example.com")
judge = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id="openai:/gpt-4o-mini")
code = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id="mentions_forecast")
for model in ("careful", "sloppy"):
    for city, question in QUESTIONS.items():
        answer = agent(question, city, model)
        trace_id = mlflow.get_last_active_trace_id()
        mlflow.MlflowClient().set_trace_tag(trace_id, "system", model)
        right = model == "careful"
        mlflow.log_expectation(trace_id=trace_id, name="expected_response", value=ANSWERS[city], source=human)
        mlflow.log_expectation(trace_id=trace_id, name="expected_facts", value=[FORECAST[city]], source=human)
        mlflow.log_feedback(trace_id=trace_id, name="correct", value=right, source=human,
                            rationale="matches the forecast" if right else "contradicts the forecast")
        mlflow.log_feedback(trace_id=trace_id, name="tone", value="friendly", source=human)
        if model == "sloppy" and city == "cairo":  # the judge's call failed: an error in place of a value
            mlflow.log_feedback(trace_id=trace_id, name="relevance", source=judge,
                                error=AssessmentError(error_code="RATE_LIMIT_EXCEEDED",
                                                      error_message="429 Too Many Requests"))
        else:
            rated = mlflow.log_feedback(trace_id=trace_id, name="relevance", value=5 if right else 2, source=judge,
                                        rationale="answers with the forecast" if right else "ignores the forecast")
            if model == "sloppy" and city == "oslo":  # a person corrects the judge (the judge's stays, valid: false)
                mlflow.override_feedback(trace_id=trace_id, assessment_id=rated.assessment_id, value=1,
                                         rationale="wrong about the temperature too", source=human)
        mlflow.log_feedback(trace_id=trace_id, name="mentions_forecast",
                            value=FORECAST[city].split(",")[0] in answer, source=code)

traces = mlflow.search_traces(return_type="list", order_by=["timestamp_ms ASC"])
with open(OUT / "traces.jsonl", "w", encoding="utf-8") as handle:
    for trace in traces:
        handle.write(trace.to_json() + "\n")
print(f"{len(traces)} traces in {OUT / 'traces.jsonl'}; experiment id "
      f"{mlflow.get_experiment_by_name('weather-agent').experiment_id}")
