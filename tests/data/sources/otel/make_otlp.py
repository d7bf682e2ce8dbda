"""Writes otlp.jsonl: the spans of spans.jsonl as the OpenTelemetry Collector's ``file`` exporter writes them
(OTLP JSON, one ExportTraceServiceRequest a line: here one per trace), so that a test can check that both
shapes read into the same items. Run from this folder: ``python make_otlp.py``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).parent
KINDS = {"SpanKind.INTERNAL": 1, "SpanKind.SERVER": 2, "SpanKind.CLIENT": 3, "SpanKind.PRODUCER": 4,
         "SpanKind.CONSUMER": 5}
STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def any_value(value: object) -> dict:
    """A value as OTLP JSON's AnyValue: an int64 is a string in the protobuf JSON mapping."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(one) for one in value]}}
    return {"stringValue": str(value)}


def attributes(mapping: dict) -> list[dict]:
    return [{"key": key, "value": any_value(value)} for key, value in mapping.items()]


def nanos(iso: str) -> str:
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return str(int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000)


def otlp(span: dict) -> dict:
    status = {"code": STATUS[span["status"]["status_code"]]}
    if span["status"].get("description"):
        status["message"] = span["status"]["description"]
    return {"traceId": span["context"]["trace_id"].removeprefix("0x"),
            "spanId": span["context"]["span_id"].removeprefix("0x"),
            "parentSpanId": (span.get("parent_id") or "").removeprefix("0x"),
            "name": span["name"], "kind": KINDS[span["kind"]],
            "startTimeUnixNano": nanos(span["start_time"]), "endTimeUnixNano": nanos(span["end_time"]),
            "attributes": attributes(span["attributes"]),
            "events": [{"timeUnixNano": nanos(event["timestamp"]), "name": event["name"],
                        "attributes": attributes(event.get("attributes") or {})} for event in span["events"]],
            "status": status}


def main() -> None:
    spans = [json.loads(line) for line in (HERE / "spans.jsonl").read_text(encoding="utf-8").splitlines()]
    traces: dict[str, list[dict]] = {}
    for span in spans:
        traces.setdefault(span["context"]["trace_id"], []).append(span)
    lines = []
    for group in traces.values():
        resource = {"attributes": attributes(group[0]["resource"]["attributes"])}
        scope = {"scope": {"name": "weather-agent"}, "spans": [otlp(span) for span in group]}
        lines.append(json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}))
    (HERE / "otlp.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
