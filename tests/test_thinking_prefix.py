"""CTX038 beyond its case files: the prefix digests, the API's own word, other readers,
sessions put to sleep and --jobs."""

from __future__ import annotations

import pickle

import orjson
import yaml

from conftest import FIXTURES
from ctxlint.engine import HOT_SESSIONS
from ctxlint.ingest import read_inputs
from ctxlint.sessions.thinking_prefix import block_seals, message_digest, thinking_prefix
from helpers import code_lines, expected_of, interleaved, json_report, write_records

CASES = FIXTURES / "rules" / "CTX038"
MODEL = "claude-fable-5-1"


def think(signature: str) -> dict:
    return {"type": "thinking", "thinking": "", "signature": signature}


def turn(signature: str, text: str) -> dict:
    return {"role": "assistant", "content": [think(signature), {"type": "text", "text": text}]}


def request(system, messages: list, tools: list | None = None, model: str = MODEL) -> dict:
    body = {"model": model, "max_tokens": 1024, "system": system, "messages": messages}
    if tools is not None:
        body["tools"] = tools
    return {"session_id": "s", "request": body}


TOOL = {"name": "get_weather", "description": "Weather of a city", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
OTHER_TOOL = {"name": "get_time", "description": "Time in a city", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def test_what_the_api_does_not_compare_leaves_the_digest_as_it_was():
    """cache_control, a string respelled as text blocks and whitespace are not edits; a
    changed tool argument or word is."""
    said = {"role": "user", "content": "Weather in  Oslo?"}
    respelled = {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?", "cache_control": {"type": "ephemeral"}}]}
    assert message_digest(said) == message_digest(respelled)
    assert message_digest(said) != message_digest({"role": "user", "content": "Weather in Bergen?"})
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Oslo"}'}}]}
    spaced = {**call, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city":"Oslo"}'}}]}
    other = {**call, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Bergen"}'}}]}
    assert message_digest(call) == message_digest(spaced) != message_digest(other)


def test_a_streamed_block_is_known_by_the_signature_its_fragments_carry():
    """OpenRouter streams one reasoning item as fragments of one index; the signature comes
    in the last: the block is that signature, as the reply not streamed carries it."""
    streamed = {"role": "assistant", "reasoning_details": [
        {"type": "reasoning.text", "text": "Check the ", "index": 0, "format": "anthropic-claude-v1"},
        {"type": "reasoning.text", "text": "weather.", "index": 0, "signature": "sigX", "format": "anthropic-claude-v1"}]}
    whole = {"role": "assistant", "reasoning_details": [{"type": "reasoning.text", "text": "Check the weather.", "signature": "sigX"}]}
    assert block_seals(streamed) == block_seals(whole) != []
    assert block_seals({"role": "assistant", "reasoning_details": [{"type": "reasoning.text", "text": "unsigned"}]}) == []


def test_each_kind_of_change_is_reported_once_where_it_starts(tmp_path):
    """A system prompt rebuilt at every request is one finding; a tool added later is another."""
    u1, u2, u3 = ({"role": "user", "content": text} for text in ("Weather in Oslo?", "And Bergen?", "And Tromsø?"))
    records = [
        request("Today is 2026-09-01.", [u1], [TOOL]),
        request("Today is 2026-09-02.", [u1, turn("s1", "4 C."), u2], [TOOL]),
        request("Today is 2026-09-03.", [u1, turn("s1", "4 C."), u2, turn("s2", "7 C."), u3], [TOOL]),
        request("Today is 2026-09-03.", [u1, turn("s1", "4 C."), u2, turn("s2", "7 C."), u3, turn("s3", "1 C."), u1], [TOOL, OTHER_TOOL]),
    ]
    report = json_report(write_records(tmp_path / "log.jsonl", records))
    assert [(f["code"], f["line"], f["evidence"]["changed"]) for f in report["findings"]] == [("CTX038", 2, "system"), ("CTX038", 4, "tools")]
    assert "added get_time" in report["findings"][1]["message"]


def test_a_refusal_the_api_explains_is_one_finding_by_ctx038_and_ctx022s_without_it():
    case = CASES / "fail_api_refused_a_block_bound_to_a_different_conversation.jsonl"
    [finding] = json_report(str(case))["findings"]
    assert finding["code"] == "CTX038" and finding["evidence"]["reported_by_api"][0].startswith("HTTP 400")
    assert code_lines(json_report(str(case), "--ignore", "CTX038")) == [("CTX022", 1)]


def test_a_block_the_api_let_through_is_a_warning():
    [finding] = json_report(str(CASES / "fail_block_let_through_on_an_account_without_the_check.jsonl"))["findings"]
    assert finding["severity"] == "warning"
    assert "thinking_mismatch_allowed" in finding["message"]


def test_a_cassette_whose_reply_lists_the_block_dropped_names_the_setting_and_the_api():
    """pydantic-ai's cassette dialect: the reply read for its input_transformations."""
    [finding] = json_report(str(FIXTURES / "readers" / "pydantic_parsed_body_thinking_dropped_after_system_prompt_change.yaml"))["findings"]
    assert (finding["code"], finding["line"], finding["message_index"]) == ("CTX038", 48, 1)
    assert finding["evidence"]["prefix_mismatch_behavior"] == "drop_block"
    assert finding["evidence"]["reported_by_api"] == ["thinking_dropped at messages.1.content.0 (prefix_binding_mismatch)"]
    assert "the model went on without that reasoning" in finding["message"]


def test_a_converse_body_binds_its_reasoning_blocks_too(tmp_path):
    """Bedrock Converse: reasoningContent blocks with their signatures, system as text
    blocks, tools under toolConfig; the system prompt changed at the second request."""
    def body(system: str, messages: list) -> dict:
        return {"modelId": "us.anthropic.claude-opus-5-5-v1:0", "system": [{"text": system}], "messages": messages,
                "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}}
    asked = {"role": "user", "content": [{"text": "Weather in Oslo?"}]}
    replied = {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "", "signature": "sigC"}}}, {"text": "4 C."}]}
    records = [{"session_id": "c", "request": body("Be brief.", [asked])},
               {"session_id": "c", "request": body("Be brief. Mode: expert.", [asked, replied, {"role": "user", "content": [{"text": "And Bergen?"}]}])}]
    report = json_report(write_records(tmp_path / "converse.jsonl", records))
    assert [(f["code"], f["line"], f["evidence"]["changed"]) for f in report["findings"]] == [("CTX038", 2, "system")]


def test_the_prefixes_of_sessions_put_to_sleep_are_kept(tmp_path):
    """More sessions than stay awake, interleaved: each session's state goes into the spill
    and comes back; the findings are each case's own, and --jobs 2 says the same."""
    case = CASES / "fail_reminder_put_into_a_message_and_taken_out_at_the_next_request.jsonl"
    script = [orjson.loads(line) for line in case.read_bytes().splitlines()]
    records, expected = interleaved(script, expected_of(case), HOT_SESSIONS + 20)
    log = write_records(tmp_path / "many.jsonl", records)
    report = json_report(log)
    assert code_lines(report) == expected
    assert json_report(log, "--jobs", "2") == report


def test_a_prefix_survives_the_spill():
    record = read_inputs([str(CASES / "fail_tool_added_when_a_server_connected.jsonl")]).records[-1]
    prefix = thinking_prefix(record)
    assert pickle.loads(pickle.dumps(prefix)) == prefix
    assert prefix.blocks and prefix.tools


def test_a_streamed_reply_lists_the_block_dropped_in_its_message_start(tmp_path):
    """A streamed reply carries input_transformations in message_start's message."""
    cassette = yaml.safe_load((FIXTURES / "readers" / "pydantic_parsed_body_thinking_dropped_after_system_prompt_change.yaml").read_text())
    started = {"type": "message_start", "message": {"model": MODEL, "id": "msg_s", "type": "message", "role": "assistant", "content": [],
                                                    "usage": {"input_tokens": 90, "output_tokens": 1},
                                                    "input_transformations": [{"type": "thinking_dropped", "path": "messages.1.content.0",
                                                                               "reason": "prefix_binding_mismatch"}]}}
    events = [started, {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "527040"}},
              {"type": "content_block_stop", "index": 0}, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
              {"type": "message_stop"}]
    cassette["interactions"][1]["request"]["parsed_body"]["stream"] = True
    cassette["interactions"][1]["response"] = {
        "body": {"string": "".join(f"event: {event['type']}\ndata: {orjson.dumps(event).decode()}\n\n" for event in events)},
        "headers": {"content-type": ["text/event-stream; charset=utf-8"]}, "status": {"code": 200, "message": "OK"}}
    path = tmp_path / "streamed.yaml"
    path.write_text(yaml.safe_dump(cassette, allow_unicode=True))
    [finding] = json_report(str(path))["findings"]
    assert finding["code"] == "CTX038"
    assert finding["evidence"]["reported_by_api"] == ["thinking_dropped at messages.1.content.0 (prefix_binding_mismatch)"]
