"""Anthropic Messages bodies: read as the normalized shape, findings located in the sent body."""

from __future__ import annotations

import orjson
import pytest
import yaml

from conftest import FIXTURES, REAL_LOGS, needs_real_logs
from ctxlint.ingest import read_inputs
from ctxlint.ingest.responses import parse_response
from helpers import code_lines, json_report, located_findings, write_records

RULE_CASES = FIXTURES / "rules"
MODEL = "claude-sonnet-4-5"
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def _write(tmp_path, records) -> str:
    return write_records(tmp_path / "anthropic.jsonl", records)


def test_a_tool_result_without_its_tool_use_points_at_the_block():
    report = json_report(str(RULE_CASES / "CTX016" / "fail_anthropic_tool_use_turn_dropped.jsonl"))
    assert located_findings(report) == [("CTX016", 2, None, "/messages/1/content/0", "toolu_01")]  # the turn lost, where it belongs
    orphan = json_report(str(RULE_CASES / "CTX016" / "fail_anthropic_tool_use_turn_dropped.jsonl"), "--select", "CTX001")
    assert located_findings(orphan) == [("CTX001", 2, 1, "/messages/1/content/0", "toolu_01")]
    # the body's own numbering: its message 1, not the normalized request's
    assert orphan["findings"][0]["message"].startswith("tool result for 'toolu_01' at message 1 answers no call")


@pytest.mark.parametrize(("assistant_turns", "expected"), [
    ([[{"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": "docs", "input": {}},
       {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": [{"type": "text", "text": "found"}]}]], []),
    # the call in one stored message and its result in the next: the API joins them into one turn
    ([[{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {"url": "https://example.org"}}],
      [{"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "web_fetch_result", "url": "https://example.org"}}]],
     [("CTX024", 1)]),
    ([[{"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "web_fetch_result", "url": "https://example.org"}}]],
     [("CTX001", 1)]),
])
def test_a_server_tool_result_needs_its_call_earlier_in_the_assistants_turn(tmp_path, assistant_turns, expected):
    messages = [{"role": "user", "content": "Summarize example.org."}]
    messages += [{"role": "assistant", "content": blocks + [{"type": "text", "text": "Done."}] * (n == len(assistant_turns) - 1)}
                 for n, blocks in enumerate(assistant_turns)]
    messages.append({"role": "user", "content": "Shorter, please."})
    report = json_report(_write(tmp_path, [{"session_id": "s", "request": {"model": "claude-opus-4-8", "max_tokens": 100, "messages": messages}}]))
    assert code_lines(report) == expected


def test_a_server_tool_result_whose_call_is_in_an_earlier_turn_answers_no_call(tmp_path):
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    messages = [{"role": "user", "content": "Search q."}, {"role": "assistant", "content": [call]},
                {"role": "user", "content": "Go on."}, {"role": "assistant", "content": [result, {"type": "text", "text": "Nothing."}]},
                {"role": "user", "content": "Thanks."}]
    report = json_report(_write(tmp_path, [{"session_id": "s", "request": {"model": MODEL, "max_tokens": 100, "messages": messages}}]))
    assert located_findings(report) == [("CTX001", 1, 3, "/messages/3/content/0", "srvtoolu_1")]


def test_an_edited_thinking_block_points_at_the_message_content():
    report = json_report(str(RULE_CASES / "CTX015" / "fail_claude_thinking_block_edited.jsonl"))
    assert located_findings(report) == [("CTX015", 2, 1, "/messages/1/content", "toolu_01")]
    assert "sends back thinking blocks changed from what the model returned" in report["findings"][0]["message"]


def test_a_dropped_top_level_system_prompt_is_named_as_such(tmp_path):
    user = {"role": "user", "content": "Plan dinners. I am vegan."}
    log = _write(tmp_path, [
        {"session_id": "s", "request": {"model": MODEL, "max_tokens": 100, "system": "Answer in French. Never suggest nuts.", "messages": [user]},
         "response": {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "Lundi: curry."}], "stop_reason": "end_turn"}},
        {"session_id": "s", "request": {"model": MODEL, "max_tokens": 100, "messages": [
            user, {"role": "assistant", "content": "Lundi: curry."}, {"role": "user", "content": "Mardi?"}]}},
    ])
    report = json_report(log)
    assert [(f["code"], f["line"], f["message"]) for f in report["findings"]] == [
        ("CTX008", 2, "the session's first system message (turn 1, message system) is no longer sent")]


def test_a_tool_use_block_is_located_for_argument_findings(tmp_path):
    log = _write(tmp_path, [{"request": {"model": MODEL, "max_tokens": 100, "tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "which city?"}]}]}}])
    report = json_report(log)
    assert located_findings(report) == [("CTX013", 1, 1, "/messages/1/content/1/input", "toolu_9")]


def test_usage_counts_the_cached_prompt_too():
    report = json_report(str(RULE_CASES / "CTX016" / "pass_anthropic_cache_breakpoint_moves.jsonl"))
    turns = report["sessions"][0]["turns"]
    assert [(t["prompt_tokens"], t["counter"]) for t in turns] == [(150, "server")] * 3  # input_tokens 100 + cache_read_input_tokens 50


def test_a_streamed_reply_is_reassembled_with_its_signed_thinking():
    record = read_inputs([str(RULE_CASES / "CTX004" / "pass_claude_streamed_thinking_passed_back.jsonl")]).records[0]
    response = record.response
    assert response.finish_reason == "tool_calls"
    assert response.message["reasoning_details"] == [
        {"type": "thinking", "thinking": "User wants Paris weather; call tool.", "signature": "EqQBCkYIBxgCKkB"}]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in response.message["tool_calls"]] == [
        ("toolu_01", "get_weather", '{"city":"Paris"}')]
    assert response.usage["prompt_tokens"] == 10 and response.usage["completion_tokens"] == 30


def test_an_error_event_is_the_response_error():
    stream = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n'
    response = parse_response(stream)
    assert response.failed and response.error == {"message": "Overloaded", "type": "overloaded_error"}


@needs_real_logs
@pytest.mark.parametrize("name", ["simonw-llm-anthropic/test_fixed_version_tool_chain_with_thinking_display_regression.yaml",
                                  "pydantic-ai/test_anthropic_tool_with_thinking.yaml"])
def test_real_thinking_tool_chains_are_clean_and_a_planted_drop_is_found(name, tmp_path):
    """Recorded Claude traffic passes its thinking back; drop it, and CTX004 finds it where it was dropped."""
    cassette = REAL_LOGS / name
    assert code_lines(json_report(str(cassette))) == []
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    second = data["interactions"][1]["request"]
    body = second["parsed_body"] if "parsed_body" in second else orjson.loads(second["body"])
    assistant = body["messages"][1]
    assistant["content"] = [block for block in assistant["content"] if block["type"] != "thinking"]
    if "parsed_body" in second:
        second["parsed_body"] = body
    else:
        second["body"] = orjson.dumps(body).decode()
    planted = tmp_path / "planted.yaml"
    planted.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = json_report(str(planted))
    interactions = next(value for key, value in yaml.compose(planted.read_text(encoding="utf-8")).value if key.value == "interactions")
    second_line = interactions.value[1].start_mark.line + 1
    found = [(f["code"], f["line"], f["turn"], f["message_index"], f["tool_call_id"] is not None) for f in report["findings"]]
    assert found == [("CTX004", second_line, 2, 1, True)]


def test_tools_with_input_schema_mark_a_body_without_system_as_anthropic(tmp_path):
    log = _write(tmp_path, [{"request": {"model": MODEL, "max_tokens": 100, "tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": "Let me check."}]}}])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["records"] == 1


def test_a_body_whose_blocks_are_all_in_the_history_it_repeats_is_still_anthropic(tmp_path):
    """No system prompt, no tools: only the tool_use and tool_result blocks say the body is
    Anthropic's, and a later request carries them in the history it repeats from an earlier
    line (which ctxlint does not parse twice), its new messages plain text."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}}
    reply = {"id": "msg_01", "type": "message", "role": "assistant", "model": MODEL, "stop_reason": "end_turn",
             "content": [{"type": "text", "text": "Snow, -3C."}], "usage": {"input_tokens": 50, "output_tokens": 9}}
    history = [{"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": [call]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "snow, -3C"}]}]
    later = [*history, {"role": "assistant", "content": [{"type": "text", "text": "Snow, -3C."}]}, {"role": "user", "content": "And tomorrow?"}]
    log = _write(tmp_path, [{"session_id": "oslo", "request": {"model": MODEL, "max_tokens": 100, "messages": history}, "response": reply},
                            {"session_id": "oslo", "request": {"model": MODEL, "max_tokens": 100, "messages": later}, "response": reply}])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["records"] == 2


def test_cache_breakpoints_are_counted_where_the_api_reads_them_and_named_in_the_body(tmp_path):
    """A marker on a tool result block, on a text block after it in the same user turn, on
    an assistant block and on a Bedrock body's tool: each is named in the body's terms, in
    the order tools, system, messages, and the fifth is where the finding points. A
    marker nested in the tool result's own content is not one of them."""
    marked = {"type": "ephemeral"}
    tools = [{**TOOLS[0], "cache_control": marked}]
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking.", "cache_control": marked},
                                          {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "cache_control": marked,
                                      "content": [{"type": "text", "text": "-3 C", "cache_control": marked}]},
                                     {"type": "text", "text": "And in Bergen?", "cache_control": marked}]},
    ]
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 512, "tools": tools,
            "system": [{"type": "text", "text": "You are a weather bot.", "cache_control": marked}], "messages": messages}
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"
    report = json_report(_write(tmp_path, [{"session_id": "oslo", "url": url, "request": body}]))
    assert located_findings(report) == [("CTX043", 1, 2, "/messages/2/content/1", None)]
    assert report["findings"][0]["evidence"]["marked_blocks"] == [
        "/tools/0", "/system/0", "/messages/1/content/0", "/messages/2/content/0", "/messages/2/content/1"]
    del messages[1]["content"][0]["cache_control"]  # four: taken
    assert code_lines(json_report(_write(tmp_path, [{"session_id": "oslo", "url": url, "request": body}]))) == []
