"""Traced runs read as items: OpenTelemetry GenAI spans (``--from otel``) and MLflow traces (``--from mlflow``),
from the real exports in tests/data/sources/otel and tests/data/sources/mlflow (each folder's README and script
say how they were made), and altered copies of them that a reader must refuse naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judgelab as jl
from judgelab.data.sources import detect_source, read_source
from judgelab.errors import DataError, SourceNote

HERE = Path(__file__).resolve().parents[1] / "data" / "sources"
SPANS = HERE / "otel" / "spans.jsonl"
CONSOLE = HERE / "otel" / "console.json"
TRACES = HERE / "mlflow" / "traces.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _written(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _refused(path: Path, source: str) -> DataError:
    with pytest.raises(DataError) as info:
        read_source(path, source)
    assert info.value.path == str(path)
    return info.value


# -- OpenTelemetry -------------------------------------------------------------------------------------


def test_otel_spans_are_read_one_item_per_trace():
    read = read_source(SPANS)  # detected
    assert read.source == "otel" and len(read.items) == 6
    careful = [one for one in read.items if one.system_id == "careful"]
    sloppy = [one for one in read.items if one.system_id == "sloppy"]
    assert len(careful) == len(sloppy) == 3
    paris = careful[0]
    assert len(paris.id) == 32 and paris.extra["conversation_id"] == "conv-paris"
    # the last chat call's input (system instructions first) and its reply; the tool call answered by its result
    assert [m.role for m in paris.messages] == ["system", "user", "assistant", "tool", "assistant"]
    call = paris.messages[2].tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_paris", "get_forecast",
                                                                                   {"city": "paris"})
    assert paris.messages[3].tool_call_id == "call_paris"
    assert paris.output == "Yes: light rain is forecast (18 C), so take an umbrella."
    assert paris.source.startswith("system: You answer travel questions")
    (step,) = paris.trajectory
    assert (step.tool, step.arguments, json.loads(step.observation)) == (
        "get_forecast", {"city": "paris"}, {"city": "Paris", "forecast": "18 C, light rain"})
    assert [(p.id, p.source) for p in paris.contexts] == [("climate-paris", "kb"), ("tips-paris", "kb")]
    # the older flattened attributes (gen_ai.prompt.<i>.*, gen_ai.completion.<i>.*)
    assert [m.role for m in sloppy[0].messages] == ["system", "user", "assistant"]
    assert sloppy[0].output == "It will be sunny and warm, no umbrella needed." and sloppy[0].trajectory is None
    assert sloppy[0].group_id == paris.group_id  # the same question asked of both systems
    verdicts = {(j.item_id, j.judge): (j.score, j.label) for j in read.judgments}
    assert verdicts[(paris.id, "Relevance")] == (5.0, "relevant")
    assert verdicts[(sloppy[0].id, "Groundedness")] == (0.0, "fail")
    assert read.judges() == ["Groundedness", "Relevance"]
    notes = " | ".join(read.notes)
    assert "1 trace(s) without a gen_ai span" in notes and "recorded no messages (content capture off)" in notes


def test_the_console_exporters_indented_spans_read_as_the_lines_do():
    assert detect_source(CONSOLE) == "otel"
    lines, console = read_source(SPANS, "otel"), read_source(CONSOLE, "otel")
    assert list(console.items) == list(lines.items) and console.judgments == lines.judgments


def test_otel_through_the_front_door_warns_its_notes():
    with pytest.warns(SourceNote) as caught:
        read = jl.load(SPANS, source="otel")
    assert any("content capture off" in str(warning.message) for warning in caught)
    assert len(read.items) == 6 and read.judges() == ["Groundedness", "Relevance"]


def _otel(tmp_path: Path, change) -> Path:
    spans = _lines(SPANS)
    change(spans)
    return _written(tmp_path, "spans.jsonl", spans)


def _chat(spans: list[dict]) -> dict:
    return next(s for s in spans if s["attributes"].get("gen_ai.input.messages"))  # the first careful call


def _line(spans: list[dict], span: dict) -> int:
    return spans.index(span) + 1


@pytest.mark.parametrize(("change", "field", "says"), [
    (lambda spans: spans[0].pop("context"), "context", "no 'context'"),
    (lambda spans: spans[0]["context"].update(trace_id=7), "context.trace_id", "is a number: expected a string"),
    (lambda spans: spans[0].update(attributes=[1]), "attributes", "is an array: expected an object"),
    (lambda spans: _chat(spans)["attributes"].update({"gen_ai.input.messages": "[{not json"}),
     "attributes.gen_ai.input.messages", "is not JSON"),
    (lambda spans: _chat(spans)["attributes"].update({"gen_ai.output.messages": "5"}),
     "attributes.gen_ai.output.messages", "is a number: expected an array"),
    (lambda spans: _chat(spans)["attributes"].update({"gen_ai.output.messages": json.dumps(
        [{"role": "robot", "parts": []}])}), "attributes.gen_ai.output.messages", "role 'robot'"),
])
def test_a_bad_otel_span_is_refused_naming_its_line_and_field(tmp_path, change, field, says):
    spans = _lines(SPANS)
    path = _otel(tmp_path, change)
    changed = [k for k, (old, new) in enumerate(zip(spans, _lines(path), strict=True)) if old != new]
    error = _refused(path, "otel")
    assert (error.line, error.field) == (changed[0] + 1, field) and says in error.detail, str(error)


def test_a_tool_span_without_its_tool_and_an_evaluation_without_its_name_are_refused(tmp_path):
    def no_tool(spans):
        next(s for s in spans if s["name"].startswith("execute_tool"))["attributes"].pop("gen_ai.tool.name")

    error = _refused(_otel(tmp_path, no_tool), "otel")
    assert error.field == "attributes.gen_ai.tool.name" and "name its tool" in error.detail

    def unnamed(spans):
        next(s for s in spans if s["events"])["events"][0]["attributes"].pop("gen_ai.evaluation.name")

    error = _refused(_otel(tmp_path, unnamed), "otel")
    assert error.field == "events.0.attributes.gen_ai.evaluation.name" and "is null: expected a string" in error.detail


def test_an_evaluation_without_a_value_or_with_an_error_is_no_verdict(tmp_path):
    def change(spans):
        events = next(s for s in spans if s["events"])["events"]
        events[0]["attributes"].pop("gen_ai.evaluation.score.value")
        events[1]["attributes"]["error.type"] = "timeout"

    read = read_source(_otel(tmp_path, change), "otel")
    first = read.judgments[:2]
    assert [(j.judge, j.status, j.score) for j in first] == [("Relevance", "unparsable", None),
                                                            ("Groundedness", "error", None)]
    assert any("without a score value kept as unparsable" in note for note in read.notes)


def test_otel_files_with_no_reply_to_read_are_refused(tmp_path):
    empty = tmp_path / "spans.jsonl"
    empty.write_bytes(b"")
    assert "no spans" in _refused(empty, "otel").detail
    http = _written(tmp_path, "http.jsonl", [s for s in _lines(SPANS) if not any(
        key.startswith("gen_ai.") for key in s["attributes"])])
    assert "no trace holds a model's reply" in _refused(http, "otel").detail


def test_a_span_in_two_files_of_a_folder_is_refused_naming_both(tmp_path):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(SPANS.read_bytes())
    assert detect_source(tmp_path) == "otel" and len(read_source(tmp_path / "b.jsonl").items) == 6
    with pytest.raises(DataError, match="a.jsonl:1 too: expected each span once"):
        read_source(tmp_path, "otel")


def test_a_message_over_the_text_bound_is_refused_naming_its_field(tmp_path, monkeypatch):
    def long(spans):  # the reply of the first trace's last call
        chat = next(s for s in spans if '"text"' in s["attributes"].get("gen_ai.output.messages", ""))
        chat["attributes"]["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "x" * 200_000}]}])
        chat["attributes"]["gen_ai.input.messages"] = json.dumps([])

    path = _otel(tmp_path, long)
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1M")  # one text: at most 128 Ki characters
    error = _refused(path, "otel")
    assert error.field == "messages.1.content" and "over the 131,072" in error.detail


# -- MLflow ----------------------------------------------------------------------------------------------


def test_mlflow_traces_are_read_with_their_assessments():
    read = read_source(TRACES)  # detected
    assert read.source == "mlflow" and len(read.items) == 6
    paris = read.items[0]
    assert paris.id.startswith("tr-") and paris.system_id == "careful"
    assert [m.role for m in paris.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert paris.messages[2].tool_calls[0].id == paris.messages[3].tool_call_id == "call_paris"
    assert paris.output == "Yes: light rain is forecast (18 C), so take an umbrella."
    (step,) = paris.trajectory
    assert (step.tool, step.arguments) == ("get_forecast", {"city": "paris"})
    assert json.loads(step.observation) == {"city": "Paris", "forecast": "18 C, light rain"}
    assert [(p.id, p.source) for p in paris.contexts] == [("climate-paris", "kb/climate.md"),
                                                         ("tips-paris", "kb/tips.md")]
    # expectations: expected_response the reference, a list kept; human feedback: numbers/booleans the labels
    assert paris.reference == paris.output and paris.extra["expectations"] == {"expected_facts": ["18 C, light rain"]}
    assert paris.scores == {"correct": 1.0} and paris.extra["feedback"] == {"tone": "friendly"}
    assert paris.extra["tags"] == {"system": "careful"} and paris.extra["trace_name"] == "weather_agent"
    sloppy = [one for one in read.items if one.system_id == "sloppy"]
    assert [one.scores for one in sloppy] == [{"correct": 0.0}, {"correct": 0.0, "relevance": 1.0}, {"correct": 0.0}]
    verdicts = {(j.item_id, j.judge): j for j in read.judgments}
    assert read.judges() == ["mentions_forecast", "relevance"]
    assert (verdicts[(paris.id, "relevance")].score, verdicts[(paris.id, "relevance")].explanation) == (
        5.0, "answers with the forecast")
    assert (verdicts[(paris.id, "mentions_forecast")].score, verdicts[(paris.id, "mentions_forecast")].label) == (
        1.0, "true")
    overridden = verdicts[(sloppy[1].id, "relevance")]  # a person corrected it: still the judge's verdict
    assert (overridden.score, overridden.extra["overridden"]) == (2.0, True)
    failed = verdicts[(sloppy[2].id, "relevance")]
    assert (failed.status, failed.score, failed.reason) == ("error", None, "the judge failed: 429 Too Many Requests")
    assert any("kept as an error (no verdict)" in note for note in read.notes)


def test_mlflow_search_output_and_a_pretty_trace_are_read_too(tmp_path):
    traces = _lines(TRACES)
    search = tmp_path / "search.json"
    search.write_text(json.dumps({"traces": traces, "next_page_token": None}, indent=2), encoding="utf-8")
    assert detect_source(search) == "mlflow"
    assert list(read_source(search).items) == list(read_source(TRACES).items)
    one = tmp_path / "trace.json"
    one.write_text(json.dumps(traces[0], indent=2), encoding="utf-8")  # Trace.to_json(pretty=True)
    assert [it.id for it in read_source(one, "mlflow").items] == [traces[0]["info"]["trace_id"]]


def test_an_mlflow_trace_without_a_chat_span_is_read_from_its_root(tmp_path):
    traces = _lines(TRACES)
    spans = traces[0]["data"]["spans"]
    traces[0]["data"]["spans"] = [s for s in spans if '"CHAT_MODEL"' not in s["attributes"]["mlflow.spanType"]]
    read = read_source(_written(tmp_path, "traces.jsonl", traces[:1]), "mlflow")
    (one,) = read.items
    assert one.messages is None and one.output == "Yes: light rain is forecast (18 C), so take an umbrella."
    assert json.loads(one.source) == {"question": "Do I need an umbrella in Paris tomorrow?", "city": "paris",
                                      "model": "careful"}
    assert any("read from the root span" in note for note in read.notes)


def _mlflow(tmp_path: Path, change) -> Path:
    traces = _lines(TRACES)
    change(traces)
    return _written(tmp_path, "traces.jsonl", traces)


def _span(trace: dict, kind: str) -> tuple[int, dict]:
    return next((k, s) for k, s in enumerate(trace["data"]["spans"]) if s["attributes"]["mlflow.spanType"] == kind)


@pytest.mark.parametrize(("change", "field", "says"), [
    (lambda t: t[1].pop("info"), "info", "no 'info'"),
    (lambda t: t[1]["data"].update(spans={"a": 1}), "data.spans", "is an object: expected an array"),
    (lambda t: t[1]["info"].update(assessments=[{"assessment_name": 3}]), "info.assessments.0.assessment_name",
     "is a number: expected a string"),
    (lambda t: _span(t[1], '"TOOL"')[1]["attributes"].update({"mlflow.spanInputs": "{cut"}),
     "data.spans.3.attributes.mlflow.spanInputs", "is not JSON"),
    (lambda t: _span(t[1], '"RETRIEVER"')[1]["attributes"].update({"mlflow.spanOutputs": '"a text"'}),
     "data.spans.1.attributes.mlflow.spanOutputs", "is a string: expected an array"),
    (lambda t: t[1]["data"]["spans"][-1]["attributes"].update({"mlflow.spanOutputs": json.dumps(
        {"output": [{"type": "message"}]})}), "data.spans.4.attributes.mlflow.spanOutputs",
     "not a reply this reader reads"),
    (lambda t: t[1].update(info={"request_id": "tr-1", "request_metadata": {}}), "info.request_id",
     "an MLflow 2 trace"),
])
def test_a_bad_mlflow_trace_is_refused_naming_its_line_and_field(tmp_path, change, field, says):
    error = _refused(_mlflow(tmp_path, change), "mlflow")
    assert (error.line, error.field) == (2, field) and says in error.detail, str(error)


def test_mlflow_traces_that_did_not_finish_are_left_out_and_an_empty_file_refused(tmp_path):
    def failed(traces):
        traces[0]["info"]["state"] = "ERROR"

    read = read_source(_mlflow(tmp_path, failed), "mlflow")
    assert len(read.items) == 5 and any("state 'ERROR'" in note for note in read.notes)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert "no trace to read" in _refused(empty, "mlflow").detail


def test_the_older_flattened_attributes_carry_tool_calls_and_results(tmp_path):
    def flat_tools(spans):
        chat = next(s for s in spans if "gen_ai.prompt.0.role" in s["attributes"])
        chat["attributes"].update({
            "gen_ai.prompt.2.role": "assistant", "gen_ai.prompt.2.tool_calls.0.id": "call_1",
            "gen_ai.prompt.2.tool_calls.0.name": "get_forecast", "gen_ai.prompt.2.tool_calls.0.arguments": '{"city": 1}',
            "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.tool_call_id": "call_1", "gen_ai.prompt.3.content": "18 C"})

    read = read_source(_otel(tmp_path, flat_tools), "otel")
    sloppy = next(one for one in read.items if one.system_id == "sloppy")
    assert [m.role for m in sloppy.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert sloppy.messages[2].tool_calls[0].function.arguments == '{"city": 1}'
    assert (sloppy.messages[3].tool_call_id, sloppy.output) == ("call_1", "It will be sunny and warm, no umbrella needed.")


def test_json_kept_in_an_attribute_spends_the_files_value_budget(tmp_path, monkeypatch):
    def many(spans):  # under the file's byte bound, and past its values once the attribute's JSON is counted
        _chat(spans)["attributes"]["gen_ai.input.messages"] = "[" + "0," * 150_000 + "0]"

    path = _otel(tmp_path, many)
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1M")  # 131,072 JSON values
    error = _refused(path, "otel")
    assert error.field == "attributes.gen_ai.input.messages" and "more than 131,072 JSON values" in error.detail
