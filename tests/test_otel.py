"""OpenTelemetry spans of model calls read as the requests they record (ingest.otel)."""

from __future__ import annotations

import orjson

from conftest import FIXTURES
from ctxlint import lint, records_from_line
from ctxlint.ingest import read_inputs
from helpers import code_lines, json_report

READERS = FIXTURES / "readers"


def test_an_otlp_export_of_semantic_convention_spans_is_an_agent_run_turn_by_turn():
    """Each model-call span of a `resourceSpans` line is a request of its conversation
    (gen_ai.conversation.id); the tool's span is counted as skipped; findings point at the
    attribute that holds the messages."""
    clean = json_report(str(READERS / "otel_semconv_agent_trace_clean.jsonl"))
    assert clean["findings"] == []
    assert clean["summary"]["records"] == 3 and clean["summary"]["sessions"] == 1
    assert clean["summary"]["skipped"] == {"OpenTelemetry span of no model call (an agent's, a tool's)": 1}
    assert clean["summary"]["token_counters"] == {"server": 3}

    dropped = json_report(str(READERS / "otel_semconv_agent_trace_tool_turn_dropped.jsonl"))
    assert code_lines(dropped) == [("CTX016", 2)]
    orphan = dropped["findings"][0]
    assert orphan["session"] == "conv-1" and orphan["tool_call_id"] == "call_1"
    assert orphan["pointer"] == "/resourceSpans/0/scopeSpans/0/spans/0/attributes/4/value"


def test_a_reasoning_part_the_model_needs_back_is_judged_where_the_tracer_records_reasoning():
    """A tracer that shows reasoning parts in what was sent records them: one dropped is
    CTX004. One that shows none (most record only text and calls) says nothing of the
    reasoning the app passed back: the reasoning rules say they could not judge it."""
    report = json_report(str(READERS / "otel_semconv_reasoning_part_dropped.jsonl"))
    assert code_lines(report) == [("CTX004", 3)]
    assert "reasoning part" in report["findings"][0]["message"]
    unrecorded = json_report(str(READERS / "otel_semconv_reasoning_not_recorded.jsonl"))
    assert unrecorded["findings"] == []
    for code in ("CTX004", "CTX015"):
        assert unrecorded["coverage"][code]["not_judged"] == {"the log does not record the reasoning sent back": 2}


def test_openinference_and_openllmetry_flattened_attributes_are_read():
    """Phoenix's llm.input_messages.N.message.* (one span per line, as an SDK's exporter
    writes them, session.id the session) and OpenLLMetry's gen_ai.prompt.N.*; a model-call
    span recorded without its messages is counted as skipped, not read as an empty request."""
    inference = json_report(str(READERS / "otel_openinference_spans_reply_lost.jsonl"))
    assert code_lines(inference) == [("CTX016", 2)]
    assert {f["session"] for f in inference["findings"]} == {"s-42"}
    indexed = json_report(str(READERS / "otel_openllmetry_spans_reply_lost.jsonl"))
    assert code_lines(indexed) == [("CTX016", 3)]
    assert indexed["summary"]["skipped"] == {"OpenTelemetry model-call span recorded without its messages (content capture off)": 1}


def test_spans_read_alike_from_a_json_export_a_pretty_printed_log_and_the_api(tmp_path):
    lines = (READERS / "otel_semconv_agent_trace_tool_turn_dropped.jsonl").read_bytes().splitlines()
    spans = [orjson.loads(line) for line in lines]
    exported = tmp_path / "export.json"
    exported.write_bytes(orjson.dumps(spans, option=orjson.OPT_INDENT_2))
    assert [code for code, _ in code_lines(json_report(str(exported)))] == ["CTX016"]
    findings = lint([item for number, line in enumerate(lines, 1) for item in records_from_line(line, "trace.jsonl", number)])
    assert [(f.code, f.line) for f in findings] == [("CTX016", 2)]


def test_a_span_s_attribute_values_and_times_are_read_as_otlp_spells_them():
    """intValue is a string in OTLP JSON; startTimeUnixNano too (nanoseconds)."""
    records = read_inputs([str(READERS / "otel_semconv_agent_trace_clean.jsonl")]).records
    first = records[0]
    assert first.request["model"] == "gpt-4o" and first.response.usage == {"prompt_tokens": 120}
    assert first.timestamp == 1764921600.0
    assert [m["role"] for m in records[2].request["messages"]] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert records[2].request["messages"][2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert records[0].request["tools"][0]["function"]["name"] == "get_weather"


def test_vercel_ai_sdk_step_spans_are_the_requests():
    """The AI SDK records each call to the provider (`ai.streamText.doStream`) with the
    messages it sent in its own parts (tool-call, tool-result), the tools as JSON texts and
    the reply's text and calls; the span around the whole streamText call holds the user's
    prompt, not a request. The step that went on without the call turn is found."""
    log = str(READERS / "otel_ai_sdk_spans_call_turn_dropped.jsonl")
    report = json_report(log)
    assert [(f["code"], f["session"], f["tool_call_id"]) for f in report["findings"]] == [("CTX016", "chat-31", "call_w2")]
    assert report["summary"]["skipped"] == {"Vercel AI SDK call span (the spans of its steps hold the requests)": 2,
                                            "OpenTelemetry span of no model call (an agent's, a tool's)": 2}
    records = read_inputs([log]).records
    assert [len(r.messages) for r in records] == [2, 4, 6, 7] and records[0].request["tools"][0]["function"]["name"] == "weather"
    assert records[0].response.message["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
    assert report["summary"]["token_counters"] == {"server": 4}


def test_a_span_whose_content_events_hold_the_messages_is_read():
    """Earlier semantic conventions (and the tracers that kept them) record the messages
    sent and the reply in the span's gen_ai.content.prompt / gen_ai.content.completion
    events: read, the reply the app lost is found where the next request shows it."""
    report = json_report(str(READERS / "otel_content_events_reply_lost.jsonl"))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [
        ("CTX016", 3, "/events/0/attributes/gen_ai.prompt")]
    assert [s["id"] for s in report["sessions"]] == ["sess-55"] and report["summary"]["token_counters"] == {"server": 3}


def test_a_collectors_metrics_and_logs_beside_its_spans_are_skipped(tmp_path):
    log = tmp_path / "collector.jsonl"
    log.write_bytes(orjson.dumps({"resourceMetrics": [{"scopeMetrics": []}]}) + b"\n" + orjson.dumps({"resourceLogs": [{"scopeLogs": []}]}) + b"\n")
    report = json_report(str(log))
    assert report["findings"] == [] and report["summary"]["skipped"] == {
        "OpenTelemetry metrics export (no model call)": 1,
        "OpenTelemetry logs export (messages logged as events are not joined to their spans)": 1}
