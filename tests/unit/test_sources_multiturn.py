"""Conversations and traced runs from three more shapes: promptfoo's multi-turn tests (a chat prompt, the
``_conversation`` variable, a multi-turn provider's ``response.metadata.messages``), Langfuse traces with their
scores (``--from langfuse``), and the OpenTelemetry Collector's OTLP JSON (``--from otel``). The fixtures are
made up in each tool's real format (their scripts and tests/data/sources/README.md say how); altered copies must
be refused naming the file, line and field."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from judgelab.data.sources import detect_source, read_source
from judgelab.tools import SOURCES
from tests.unit.test_sources_traces import _lines, _refused, _written

HERE = Path(__file__).resolve().parents[1] / "data" / "sources"
CONVERSATIONS = HERE / "promptfoo" / "conversations.json"
LANGFUSE = HERE / "langfuse" / "traces.jsonl"
OTLP = HERE / "otel" / "otlp.jsonl"
SPANS = HERE / "otel" / "spans.jsonl"


def _claimants(path: Path) -> list[str]:
    return [name for name in SOURCES if importlib.import_module(f"judgelab.data.sources.{SOURCES[name]}").claims(path)]


@pytest.mark.parametrize(("path", "source"), [(CONVERSATIONS, "promptfoo"), (LANGFUSE, "langfuse"), (OTLP, "otel")])
def test_each_new_fixture_is_claimed_by_one_reader_alone(path, source):
    assert _claimants(path) == [source] and detect_source(path) == source


# -- promptfoo -----------------------------------------------------------------------------------------


def test_promptfoo_multi_turn_tests_are_read_as_conversations():
    read = read_source(CONVERSATIONS)
    chat, conversation, goat, _, _ = read.items
    # a chat prompt: its messages, then the provider's reply (the judged output)
    assert [m.role for m in chat.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert chat.output == "Cooler: around 11 C, so bring a jacket." and chat.source.endswith("user: And at night?")
    # the _conversation variable: the earlier turn, then this turn's prompt and reply; the variable not kept twice
    assert [(m.role, m.content) for m in conversation.messages[:2]] == [
        ("user", "User: What should I pack for Rome?"), ("assistant", "Light layers and good walking shoes.")]
    assert conversation.messages[2].content == "User: And in winter?" and "_conversation" not in conversation.extra["vars"]
    # a multi-turn provider's whole conversation: the judged reply is its last assistant turn
    assert [m.role for m in goat.messages] == ["user", "assistant", "user", "assistant"]
    assert goat.system_id == "promptfoo:redteam:goat" and goat.output.startswith("Even in a story")
    verdicts = {(j.item_id, j.judge): j.score for j in read.judgments}
    assert verdicts[(conversation.id, "llm-rubric")] == 0.8 and verdicts[(goat.id, "promptfoo/pass")] == 1.0


def test_a_promptfoo_reply_of_tool_calls_is_the_last_assistant_messages_calls():
    called, both = read_source(CONVERSATIONS).items[3:]
    # the calls alone (an OpenAI chat reply without text): one user turn, then the calls; the text output empty
    assert [m.role for m in called.messages] == ["user", "assistant"] and called.messages[1].content is None
    (call,) = called.messages[1].tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_oslo", "get_forecast", {"city": "oslo"})
    assert called.output == "" and "[calls get_forecast(" in called.source
    # the whole message (text and calls): its text the output, its calls kept on it
    assert both.output == "Let me look that up." and both.messages[-1].tool_calls[0].id == "call_bergen"


def test_a_promptfoo_output_that_only_looks_like_calls_stays_text(tmp_path):
    def listed(rows):
        rows[3]["response"]["output"] = [{"city": "Oslo"}]  # a structured output, no call

    item = read_source(_promptfoo(tmp_path, listed), "promptfoo").items[3]
    assert item.messages is None and json.loads(item.output) == [{"city": "Oslo"}]


def test_a_single_turn_promptfoo_file_still_has_no_messages():
    assert all(one.messages is None for one in read_source(HERE / "promptfoo" / "results.json").items)


def _promptfoo(tmp_path: Path, change) -> Path:
    document = json.loads(CONVERSATIONS.read_text(encoding="utf-8"))
    change(document["results"]["results"])
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "field"), [
    (lambda rows: rows[2]["response"]["metadata"]["messages"][1].update(role="robot"),
     "results.results.2.response.metadata.messages.1.role"),
    (lambda rows: rows[2]["response"]["metadata"].update(messages="[{cut"),
     "results.results.2.response.metadata.messages"),
    (lambda rows: rows[2]["response"]["metadata"].update(messages={"role": "user"}),
     "results.results.2.response.metadata.messages"),
    (lambda rows: rows[1]["vars"]["_conversation"][0].pop("output"), "results.results.1.vars._conversation.0.output"),
    (lambda rows: rows[0]["prompt"].update(raw=json.dumps([{"role": "narrator", "content": "Once"}])),
     "results.results.0.prompt.raw.0.role"),
    (lambda rows: rows[4]["response"]["output"].update(role="user"), "results.results.4.response.output.role"),
    (lambda rows: rows[4]["response"]["output"]["tool_calls"].append("get_forecast"),
     "results.results.4.response.output.tool_calls.1"),
    (lambda rows: rows[3]["response"]["output"][0].pop("id"), "results.results.3.response.output.0.id"),
    (lambda rows: rows[3]["response"]["output"][0]["function"].update(name=""),
     "results.results.3.response.output.0.function.name"),
])
def test_a_bad_promptfoo_conversation_is_refused_naming_its_field(tmp_path, change, field):
    error = _refused(_promptfoo(tmp_path, change), "promptfoo")
    assert error.field == field, str(error)


# -- Langfuse ------------------------------------------------------------------------------------------


def test_langfuse_traces_are_read_with_messages_a_trajectory_and_scores():
    read = read_source(LANGFUSE)
    assert read.source == "langfuse" and [one.id for one in read.items] == [
        "lf-paris-careful", "lf-oslo-careful", "lf-paris-sloppy"]
    paris, oslo, sloppy = read.items
    # the last generation's input (with the tool call and its result) and its reply
    assert [m.role for m in paris.messages] == ["system", "user", "assistant", "tool", "assistant"]
    call = paris.messages[2].tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_paris", "get_forecast",
                                                                                   {"city": "paris"})
    assert paris.output == "Yes: light rain is forecast (18 C), so take an umbrella." and paris.system_id == "careful"
    (step,) = paris.trajectory
    assert (step.tool, step.arguments, json.loads(step.observation)) == (
        "get_forecast", {"city": "paris"}, {"city": "Paris", "forecast": "18 C, light rain"})
    assert oslo.output == "Probably not: 3 C and cloudy." and oslo.trajectory is None  # content parts joined
    assert sloppy.system_id == "sloppy" and sloppy.group_id == paris.group_id  # one question, two systems
    # people's annotations are the human labels (two people: their mean); a categorical one is kept aside
    assert (paris.scores, oslo.scores, sloppy.scores) == ({"helpfulness": 5.0}, {"helpfulness": 2.5},
                                                         {"helpfulness": 1.0})
    assert sloppy.extra["annotations"] == {"correct_city": "yes-but-vague"}
    # evaluator (EVAL) and SDK (API) scores are judgments
    verdicts = {(j.item_id, j.judge): (j.score, j.label, j.explanation) for j in read.judgments}
    assert verdicts[("lf-paris-careful", "correctness")] == (0.9, None, "The forecast supports the answer.")
    assert verdicts[("lf-paris-careful", "tone")] == (None, "friendly", "Polite and direct.")
    assert verdicts[("lf-paris-careful", "thumbs_up")] == (1.0, "true", None)
    assert read.judges() == ["correctness", "thumbs_up", "tone"]
    assert "helpfulness" not in read.judges()
    notes = " | ".join(read.notes)
    assert "several people on one trace: their mean" in notes and "earlier generation(s)" in notes


def test_langfuse_retriever_observations_are_the_items_contexts():
    paris, oslo, sloppy = read_source(LANGFUSE).items
    # LangChain documents: id the metadata's source and page (else the document's id); one retrieved twice, once
    assert [(p.id, p.text, p.title, p.source) for p in paris.contexts] == [
        ("guides/paris.md#2", "Paris in spring: pack a light raincoat.", "Paris", "guides/paris.md"),
        ("faq-umbrella", "Umbrellas fold into any day bag.", None, "faq.md")]
    assert paris.context.startswith("[guides/paris.md#2] Paris\nParis in spring")
    # a LlamaIndex node with its score: the node's id_ and text; a plain text: its place
    assert [(p.id, p.text, p.source) for p in oslo.contexts] == [
        ("node-oslo-1", "Oslo in December: snow most weeks.", "oslo.txt")]
    assert [(p.id, p.text) for p in sloppy.contexts] == [("0.0", "Paris: rain on one day in three in spring.")]
    assert "RETRIEVER" not in " | ".join(read_source(LANGFUSE).notes)


def test_langfuse_documents_of_one_source_and_no_text_are_told_apart(tmp_path):
    def retrieved(traces):
        documents = traces[0]["observations"][4]["output"]
        documents[2]["page_content"] = "Paris in autumn: bring a warm scarf."  # same source and page, other text
        documents.append({"metadata": {"source": "empty.md"}})  # no text
        traces[1]["observations"][1]["output"] = {"nodes": traces[1]["observations"][1]["output"]}

    read = read_source(_langfuse(tmp_path, retrieved), "langfuse")
    paris, oslo, _ = read.items
    assert [p.id for p in paris.contexts] == ["guides/paris.md#2", "faq-umbrella", "0.2"]
    assert [p.id for p in oslo.contexts] == ["node-oslo-1"]  # {"nodes": [...]} read as the list
    notes = " | ".join(read.notes)
    assert "1 retrieved document(s) whose id names another text" in notes and "1 retrieved document(s) without" in notes


def test_langfuse_records_of_each_kind_apart_read_as_the_traces_do(tmp_path):
    """A list response of traces (observations and scores named by id) beside the observations' and scores'."""
    traces, observations, scores = [], [], []
    for trace in _lines(LANGFUSE):
        observations += trace["observations"]
        scores += trace["scores"]
        traces.append(trace | {"observations": [o["id"] for o in trace["observations"]],
                               "scores": [s["id"] for s in trace["scores"]]})
    (tmp_path / "traces.json").write_text(json.dumps({"data": traces, "meta": {"page": 1}}), encoding="utf-8")
    _written(tmp_path, "observations.jsonl", observations)
    _written(tmp_path, "scores.jsonl", scores)
    assert detect_source(tmp_path) == "langfuse" and _claimants(tmp_path / "scores.jsonl") == ["langfuse"]
    apart, together = read_source(tmp_path, "langfuse"), read_source(LANGFUSE, "langfuse")
    assert list(apart.items) == list(together.items) and apart.judgments == together.judgments


def _langfuse(tmp_path: Path, change) -> Path:
    traces = _lines(LANGFUSE)
    change(traces)
    return _written(tmp_path, "traces.jsonl", traces)


def _generation(trace: dict) -> dict:
    return [o for o in trace["observations"] if o["type"] == "GENERATION"][-1]


@pytest.mark.parametrize(("change", "line", "field", "says"), [
    (lambda t: t[1].update(observations=[]), 2, "observations", "no GENERATION observation with an output"),
    (lambda t: _generation(t[0]).update(input=7), 1, "observations.3.input", "expected chat messages"),
    (lambda t: _generation(t[2])["input"][0].update(role="human"), 3, "observations.0.input.0.role", "role 'human'"),
    (lambda t: _generation(t[0]).update(output=[1, 2]), 1, "observations.3.output", "not a reply"),
    (lambda t: t[2]["scores"][1].update(value="high"), 3, "scores.1.value", "'value' is a string: expected"),
    (lambda t: t[0]["scores"][0].update(source="HUMAN"), 1, "scores.0.source", "expected one of ANNOTATION"),
    (lambda t: t[1].update(scores={"a": 1}), 2, "scores", "is an object: expected an array"),
    (lambda t: t[1]["observations"][0].update(type=None), 2, "observations.0.type", "is null: expected a string"),
    (lambda t: t[2].pop("timestamp"), 3, "id", "neither a trace, an observation nor a score"),
    (lambda t: t[1]["observations"][1].update(output="Oslo in December"), 2, "observations.1.output",
     "is a string: expected an array"),
    (lambda t: t[0]["observations"][4]["output"].append(3), 1, "observations.4.output.3", "a retrieved document"),
    (lambda t: t[2]["observations"][1].update(output={"nodes": 7}), 3, "observations.1.output.nodes",
     "is a number"),
])
def test_a_bad_langfuse_trace_is_refused_naming_its_line_and_field(tmp_path, change, line, field, says):
    error = _refused(_langfuse(tmp_path, change), "langfuse")
    assert (error.line, error.field) == (line, field) and says in error.detail, str(error)


def test_a_langfuse_trace_without_a_generation_is_read_from_its_own_output(tmp_path):
    def plain(traces):
        traces[1].update(observations=[], output={"answer": "Probably not."})

    oslo = read_source(_langfuse(tmp_path, plain), "langfuse").items[1]
    assert (oslo.messages, oslo.source, oslo.output) == (None, "Will it snow in Oslo tomorrow?", "Probably not.")


def test_a_cut_short_langfuse_export_names_its_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(LANGFUSE.read_text(encoding="utf-8")[:-200], encoding="utf-8")
    error = _refused(path, "langfuse")
    assert error.line == 3, str(error)


# -- OTLP JSON -----------------------------------------------------------------------------------------


def test_the_collectors_otlp_json_reads_as_the_sdks_spans_do():
    otlp, spans = read_source(OTLP), read_source(SPANS)
    assert otlp.source == "otel" and len(otlp.items) == 6
    assert list(otlp.items) == list(spans.items) and otlp.judgments == spans.judgments
    assert [note.replace("otlp.jsonl", "") for note in otlp.notes] == [
        note.replace("spans.jsonl", "") for note in spans.notes]
    paris = otlp.items[0]
    assert [m.role for m in paris.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert paris.trajectory[0].tool == "get_forecast" and [p.id for p in paris.contexts] == ["climate-paris",
                                                                                             "tips-paris"]


def _otlp(tmp_path: Path, change) -> Path:
    requests = _lines(OTLP)
    change(requests)
    return _written(tmp_path, "otlp.jsonl", requests)


def _spans(request: dict) -> list[dict]:
    return request["resourceSpans"][0]["scopeSpans"][0]["spans"]


def _attribute(span: dict, key: str) -> dict:
    return next(a for a in span["attributes"] if a["key"] == key)


SPAN = "resourceSpans.0.scopeSpans.0.spans"


@pytest.mark.parametrize(("change", "field", "says"), [
    (lambda r: _spans(r[0])[1].update(traceId="TsnhzsmjY6mRBPiOuQMzKQ=="), f"{SPAN}.1.traceId", "32 hex digits"),
    (lambda r: _spans(r[0])[1].pop("spanId"), f"{SPAN}.1.spanId", "is null: expected a string"),
    (lambda r: _spans(r[0])[1].update(attributes={"gen_ai.operation.name": "chat"}), f"{SPAN}.1.attributes",
     "is an object: expected an array"),
    (lambda r: _attribute(_spans(r[0])[1], "gen_ai.input.messages")["value"].update(stringValue="[{cut"),
     f"{SPAN}.1.attributes.gen_ai.input.messages", "is not JSON"),
    (lambda r: _attribute(_spans(r[0])[1], "gen_ai.usage.input_tokens").update(value={"intValue": "many"}),
     f"{SPAN}.1.attributes.gen_ai.usage.input_tokens", "is not an integer"),
    (lambda r: _attribute(_spans(r[0])[1], "gen_ai.request.model").update(value={"bytesValue": "AA=="}),
     f"{SPAN}.1.attributes.gen_ai.request.model", "expected stringValue"),
    (lambda r: r[0]["resourceSpans"][0].update(scopeSpans="none"), "resourceSpans.0.scopeSpans",
     "is a string: expected an array"),
])
def test_a_bad_otlp_request_is_refused_naming_its_line_and_field(tmp_path, change, field, says):
    error = _refused(_otlp(tmp_path, change), "otel")
    assert (error.line, error.field) == (1, field) and says in error.detail, str(error)


def test_an_otlp_span_in_two_requests_is_refused_naming_both_lines(tmp_path):
    requests = _lines(OTLP)
    path = _written(tmp_path, "otlp.jsonl", [*requests, requests[0]])
    error = _refused(path, "otel")
    assert error.line == len(requests) + 1 and "otlp.jsonl:1 too" in error.detail, str(error)


def test_a_cut_short_otlp_export_names_its_line(tmp_path):
    path = tmp_path / "otlp.jsonl"
    path.write_text(OTLP.read_text(encoding="utf-8")[:-300], encoding="utf-8")
    error = _refused(path, "otel")
    assert error.line == len(_lines(OTLP)), str(error)


@pytest.mark.parametrize(("change", "field"), [
    (lambda rows: rows[2]["response"]["metadata"].update(messages="[" + "0," * 150_000 + "0]"),
     "results.results.2.response.metadata.messages"),
    (lambda rows: rows[0]["prompt"].update(raw="[" + "{}," * 150_000 + "{}]"), "results.results.0.prompt.raw"),
])
def test_json_kept_as_text_in_a_promptfoo_file_spends_the_files_value_budget(tmp_path, monkeypatch, change, field):
    path = _promptfoo(tmp_path, change)  # under the file's byte bound, past its values once the text's are counted
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1M")  # 131,072 JSON values
    error = _refused(path, "promptfoo")
    assert error.field == field and "more than 131,072 JSON values" in error.detail, str(error)
