"""Writes traces.jsonl: made-up Langfuse traces in the shape of the public API's ``GET /api/public/traces/{id}``
(``TraceWithFullDetails``: the trace with its ``observations`` and ``scores`` as objects), one trace a line, as
a user saves them with ``langfuse.api.trace.get(id).json()``. The field names and enums are those of
Langfuse's API definition (fern/apis/server/definition/commons.yml of github.com/langfuse/langfuse); the values
are made up. Run from this folder: ``python make_traces.py``."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SYSTEM = {"role": "system", "content": "You answer travel questions. Use get_forecast for the weather."}
TOOLS = [{"type": "function", "function": {"name": "get_forecast", "parameters": {"type": "object"}}}]


def observation(trace: str, k: int, kind: str, name: str, minute: int, **fields) -> dict:
    start = f"2026-12-05T10:{minute:02d}:0{k}.000Z"
    return {"id": f"{trace}-obs-{k}", "traceId": trace, "type": kind, "name": name, "startTime": start,
            "endTime": start.replace(".000Z", ".500Z"), "completionStartTime": None, "model": None,
            "modelParameters": {}, "input": None, "output": None, "metadata": {}, "version": None, "usage": None,
            "level": "DEFAULT", "statusMessage": None, "parentObservationId": f"{trace}-obs-0" if k else None,
            "promptId": None, **fields}


def generation(trace: str, k: int, minute: int, model: str, given: list[dict], reply: object) -> dict:
    return observation(trace, k, "GENERATION", "OpenAI-generation", minute, model=model,
                       modelParameters={"temperature": 0}, input=given, output=reply,
                       usage={"input": 42, "output": 12, "total": 54, "unit": "TOKENS"},
                       calculatedTotalCost=0.0001, latency=0.5)


def retriever(trace: str, k: int, minute: int, query: str, documents: object) -> dict:
    """A RETRIEVER observation as Langfuse's LangChain callback handler records one: the query its input, the
    documents its output (a LangChain ``Document`` serialized: ``page_content``, ``metadata``, ``id``, ``type``; a
    LlamaIndex ``NodeWithScore``: ``node`` with ``id_``, ``text``, ``metadata``, and ``score``; or texts)."""
    return observation(trace, k, "RETRIEVER", "VectorStoreRetriever", minute, input=query, output=documents)


def score(trace: str, k: int, name: str, source: str, data_type: str, value: float | None,
          string_value: str | None = None, comment: str | None = None, author: str | None = None) -> dict:
    row = {"id": f"{trace}-score-{k}", "traceId": trace, "name": name, "source": source, "observationId": None,
           "timestamp": f"2026-12-05T11:00:0{k}.000Z", "createdAt": f"2026-12-05T11:00:0{k}.000Z",
           "updatedAt": f"2026-12-05T11:00:0{k}.000Z", "authorUserId": author, "comment": comment,
           "configId": None, "queueId": None, "dataType": data_type, "value": value}
    if string_value is not None:
        row["stringValue"] = string_value
    return row


def trace(trace_id: str, question: str, minute: int, observations: list[dict], scores: list[dict]) -> dict:
    return {"id": trace_id, "timestamp": f"2026-12-05T10:{minute:02d}:00.000Z", "name": "weather-chat",
            "input": {"question": question}, "output": None, "sessionId": f"session-{trace_id}",
            "release": None, "version": None, "userId": "user-7", "metadata": {}, "tags": ["weather"],
            "public": False, "htmlPath": f"/project/demo/traces/{trace_id}", "latency": 1.5, "totalCost": 0.0002,
            "observations": observations, "scores": scores}


def paris() -> dict:
    t, question = "lf-paris-careful", "Do I need an umbrella in Paris tomorrow?"
    call = {"id": "call_paris", "type": "function",
            "function": {"name": "get_forecast", "arguments": json.dumps({"city": "paris"})}}
    asked = [SYSTEM, {"role": "user", "content": question}]
    called = {"role": "assistant", "content": None, "tool_calls": [call]}
    result = {"role": "tool", "tool_call_id": "call_paris", "content": json.dumps({"forecast": "18 C, light rain"})}
    reply = {"role": "assistant", "content": "Yes: light rain is forecast (18 C), so take an umbrella."}
    observations = [
        observation(t, 0, "AGENT", "weather-agent", 1, input={"question": question}, output=reply["content"]),
        generation(t, 1, 1, "careful", {"messages": asked, "tools": TOOLS}, called),
        observation(t, 2, "TOOL", "get_forecast", 1, input={"city": "paris"},
                    output={"city": "Paris", "forecast": "18 C, light rain"}),
        generation(t, 3, 1, "careful", {"messages": [*asked, called, result], "tools": TOOLS}, reply),
        retriever(t, 4, 1, question, [
            {"id": None, "type": "Document", "page_content": "Paris in spring: pack a light raincoat.",
             "metadata": {"source": "guides/paris.md", "page": 2, "title": "Paris"}},
            {"id": "faq-umbrella", "type": "Document", "page_content": "Umbrellas fold into any day bag.",
             "metadata": {"source": "faq.md"}},
            {"id": None, "type": "Document", "page_content": "Paris in spring: pack a light raincoat.",
             "metadata": {"source": "guides/paris.md", "page": 2, "title": "Paris"}}]),  # retrieved twice: once
    ]
    scores = [score(t, 1, "helpfulness", "ANNOTATION", "NUMERIC", 5, author="annotator-a"),
              score(t, 2, "correctness", "EVAL", "NUMERIC", 0.9, comment="The forecast supports the answer."),
              score(t, 3, "tone", "EVAL", "CATEGORICAL", None, "friendly", comment="Polite and direct."),
              score(t, 4, "thumbs_up", "API", "BOOLEAN", 1, "True")]
    return trace(t, question, 1, observations, scores)


def oslo() -> dict:
    t, question = "lf-oslo-careful", "Will it snow in Oslo tomorrow?"
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Probably not: 3 C and cloudy."}]}
    observations = [generation(t, 0, 2, "careful", [SYSTEM, {"role": "user", "content": question}], reply),
                    retriever(t, 1, 2, question, [
                        {"node": {"id_": "node-oslo-1", "text": "Oslo in December: snow most weeks.",
                                  "metadata": {"file_name": "oslo.txt"}}, "score": 0.82}])]
    scores = [score(t, 1, "helpfulness", "ANNOTATION", "NUMERIC", 2, author="annotator-a"),
              score(t, 2, "helpfulness", "ANNOTATION", "NUMERIC", 3, author="annotator-b"),
              score(t, 3, "correctness", "EVAL", "NUMERIC", 0.4, comment="No forecast was looked up.")]
    return trace(t, question, 2, observations, scores)


def paris_sloppy() -> dict:
    t, question = "lf-paris-sloppy", "Do I need an umbrella in Paris tomorrow?"
    observations = [generation(t, 0, 3, "sloppy", [{"role": "user", "content": question}],
                               "It will be sunny and warm, no umbrella needed."),
                    retriever(t, 1, 3, question, ["Paris: rain on one day in three in spring."])]
    scores = [score(t, 1, "helpfulness", "ANNOTATION", "NUMERIC", 1, author="annotator-a"),
              score(t, 2, "correctness", "EVAL", "NUMERIC", 0.1, comment="Contradicts the forecast."),
              score(t, 3, "correct_city", "ANNOTATION", "CATEGORICAL", None, "yes-but-vague", author="annotator-b")]
    return trace(t, question, 3, observations, scores)


def main() -> None:
    traces = [paris(), oslo(), paris_sloppy()]
    (HERE / "traces.jsonl").write_text("".join(json.dumps(one) + "\n" for one in traces), encoding="utf-8")


if __name__ == "__main__":
    main()
