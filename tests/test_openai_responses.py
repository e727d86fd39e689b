"""OpenAI Responses API bodies: read as the normalized shape, findings located in the input items sent."""

from __future__ import annotations

import orjson
import pytest

from conftest import FIXTURES, REAL_LOGS, needs_real_logs
from ctxlint.engine import HOT_SESSIONS
from ctxlint.ingest import Record, Skipped, read_inputs
from ctxlint.ingest.shapes import as_item
from ctxlint.ingest.stored_responses import NOT_HELD, StoredResponses
from ctxlint.ingest.responses import parse_response
from helpers import code_lines, interleaved, json_report, located_findings, write_records

MODEL = "gpt-5"
TOOLS = [{"type": "function", "name": "get_weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
USER = {"role": "user", "content": "Weather in Oslo and Rome?"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
CALL_OSLO = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'}
CALL_ROME = {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": '{"city":"Rome"}'}
OUT_OSLO = {"type": "function_call_output", "call_id": "call_1", "output": "12C"}
OUT_ROME = {"type": "function_call_output", "call_id": "call_2", "output": "24C"}
CALLS_REPLY = {"object": "response", "status": "completed", "model": MODEL, "output": [REASONING, CALL_OSLO, CALL_ROME],
               "usage": {"input_tokens": 50, "output_tokens": 20}}
TEXT_REPLY = {"object": "response", "status": "completed", "model": MODEL,
              "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Oslo 12C, Rome 24C."}]}]}


def _request(items, **extra):
    return {"session_id": "s", "request": {"model": MODEL, "instructions": "Be brief.", "input": items, "tools": TOOLS}, **extra}


def _write(tmp_path, records) -> str:
    return write_records(tmp_path / "responses.jsonl", records)


def test_a_tool_loop_sent_back_whole_is_clean(tmp_path):
    log = _write(tmp_path, [
        _request([USER], response=CALLS_REPLY),
        _request([USER, REASONING, CALL_OSLO, CALL_ROME, OUT_OSLO, OUT_ROME], response=TEXT_REPLY),
        _request([USER, REASONING, CALL_OSLO, CALL_ROME, OUT_OSLO, OUT_ROME,
                  {"role": "assistant", "content": "Oslo 12C, Rome 24C."}, {"role": "user", "content": "And Paris?"}]),
    ])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["skipped"] == {}
    assert [s["requests"] for s in report["sessions"]] == [3]


def test_outputs_whose_calls_were_dropped_point_at_the_output_items(tmp_path):
    log = _write(tmp_path, [_request([USER], response=CALLS_REPLY), _request([USER, OUT_OSLO, OUT_ROME])])
    report = json_report(log)
    assert located_findings(report) == [("CTX016", 2, None, "/input/1", "call_1")]  # the turn lost, where it belongs
    # the results the history opens with are one defect: one finding, at the first of them
    orphans = json_report(log, "--select", "CTX001")
    assert located_findings(orphans) == [("CTX001", 2, 1, "/input/1", "call_1")]
    # named by the input items' own indexes, as the body that was sent numbers them
    assert orphans["findings"][0]["message"].startswith("2 tool results ('call_1', 'call_2') at messages 1, 2 answer no call")


def test_a_call_left_unanswered_points_at_its_function_call_item(tmp_path):
    log = _write(tmp_path, [_request([USER], response=CALLS_REPLY),
                            _request([USER, REASONING, CALL_OSLO, CALL_ROME, OUT_OSLO, {"role": "user", "content": "hurry"}])])
    assert located_findings(json_report(log)) == [("CTX002", 2, 2, "/input/3", "call_2")]


def test_arguments_that_break_the_schema_point_at_the_items_arguments(tmp_path):
    bad_call = {**CALL_OSLO, "arguments": '{"town":"Oslo"}'}
    log = _write(tmp_path, [_request([USER, bad_call, {**OUT_OSLO}])])
    assert located_findings(json_report(log)) == [("CTX013", 1, 1, "/input/1/arguments", "call_1")]


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "keyless"])
def test_a_side_request_with_a_text_format_of_its_own_is_a_branch(tmp_path, keyed):
    """Follow-up questions asked after the history with `text.format` (the Responses API's
    structured output), which the next turn asks no more: a side request, not a lost turn."""
    answer = TEXT_REPLY["output"][0]
    follow_up = {"role": "user", "content": "Suggest three follow-up questions."}
    json_format = {"format": {"type": "json_schema", "name": "follow_ups", "schema": {"type": "object"}}}
    questions = {**TEXT_REPLY, "output": [{**answer, "content": [{"type": "output_text", "text": '["Rain?", "Wind?", "Snow?"]'}]}]}
    records = [_request([USER], response=TEXT_REPLY),
               _request([USER, answer, follow_up], response=questions),
               _request([USER, answer, {"role": "user", "content": "And tomorrow?"}], response=TEXT_REPLY)]
    records[1]["request"]["text"] = json_format
    for record in records:
        if not keyed:
            del record["session_id"]
    report = json_report(_write(tmp_path, records))
    assert [session["requests"] for session in report["sessions"]] == [3]
    assert code_lines(report) == []


def test_a_request_that_continues_a_stored_conversation_or_an_unlogged_response_is_skipped_with_its_reason(tmp_path):
    log = _write(tmp_path, [
        {"request": {"model": MODEL, "previous_response_id": "resp_1", "input": [{"role": "user", "content": "more"}]}},
        {"request": {"model": MODEL, "input": [{"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": "more"}]}},
        {"request": {"model": MODEL, "conversation": "conv_1", "input": [{"role": "user", "content": "more"}]}},
        {"request": {"model": MODEL, "previous_response_id": 7, "input": [OUT_OSLO]}},  # no id the log can hold
    ])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["records"] == 0
    skipped = report["summary"]["skipped"]
    assert sorted(skipped.values()) == [2, 2]
    assert skipped[NOT_HELD] == 2 and "previous_response_id" in NOT_HELD


def _chained(items, previous=None, reply=None, instructions="Be brief.", session="s"):
    """A request that goes on from the stored response `previous`, sending only `items`."""
    request = {"model": MODEL, "input": items, "tools": TOOLS}
    if instructions is not None:
        request["instructions"] = instructions
    if previous is not None:
        request["previous_response_id"] = previous
    record = {"request": request}
    if session is not None:
        record["session_id"] = session
    if reply is not None:
        record["response"] = reply
    return record


def _reply(response_id, reply):
    return {**reply, "id": response_id}


ANSWER = {"role": "user", "content": "And Paris?"}


def test_a_request_that_continues_a_logged_response_is_linted_on_the_history_the_provider_holds(tmp_path):
    log = _write(tmp_path, [
        _chained([USER], reply=_reply("resp_1", CALLS_REPLY)),
        _chained([OUT_OSLO, OUT_ROME], "resp_1", _reply("resp_2", TEXT_REPLY)),
        _chained([ANSWER], "resp_2", _reply("resp_3", TEXT_REPLY)),
    ])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["skipped"] == {}
    assert [session["requests"] for session in report["sessions"]] == [3]
    third = read_inputs([log]).records[2]
    # its instructions, the stored conversation (the first request's input and both replies), its own input
    assert [message["role"] for message in third.messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert third.messages[2]["tool_calls"][1]["id"] == "call_2" and third.messages[2]["reasoning_details"][0]["id"] == "rs_1"
    assert [third.label(index) for index in (1, 5, 6)] == ["0 of resp_2", "4 of resp_2", "0"]


def test_a_call_of_the_stored_response_answered_by_a_user_message_is_reported_once_where_it_was_sent(tmp_path):
    log = _write(tmp_path, [
        _chained([USER], reply=_reply("resp_1", CALLS_REPLY)),
        _chained([{"role": "user", "content": "Oslo is 12C, Rome 24C"}], "resp_1", _reply("resp_2", TEXT_REPLY)),
        _chained([ANSWER], "resp_2", _reply("resp_3", TEXT_REPLY)),
    ])
    report = json_report(log)
    assert located_findings(report) == [("CTX009", 2, 0, "/input/0", "call_1")]
    assert "assistant message 1 of resp_1" in report["findings"][0]["message"]


def test_a_request_that_drops_the_instructions_loses_them_the_stored_response_does_not_carry_them(tmp_path):
    """The provider does not carry a stored response's instructions over: sent no more,
    the model no longer sees them. Sent again, or changed, they stand."""
    first = _chained([USER], reply=_reply("resp_1", TEXT_REPLY), instructions="Never book red-eye flights.")
    dropped = _write(tmp_path, [first, _chained([ANSWER], "resp_1", _reply("resp_2", TEXT_REPLY), instructions=None)])
    assert located_findings(json_report(dropped)) == [("CTX008", 2, None, None, None)]
    sent_again = write_records(tmp_path / "again.jsonl", [first, _chained([ANSWER], "resp_1", instructions="Never book red-eye flights.")])
    assert json_report(sent_again)["findings"] == []


def test_a_reply_regenerated_from_the_same_response_is_a_branch_the_conversation_goes_on_from(tmp_path):
    log = _write(tmp_path, [
        _chained([USER], reply=_reply("resp_1", TEXT_REPLY)),
        _chained([ANSWER], "resp_1", _reply("resp_2", TEXT_REPLY)),
        _chained([ANSWER], "resp_1", _reply("resp_3", TEXT_REPLY)),  # regenerated: resp_2 is left behind
        _chained([{"role": "user", "content": "And Lyon?"}], "resp_3", _reply("resp_4", TEXT_REPLY)),
    ])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["skipped"] == {}
    assert [session["requests"] for session in report["sessions"]] == [4]


def test_a_response_of_another_session_is_not_the_one_a_request_goes_on_from(tmp_path):
    log = _write(tmp_path, [
        _chained([USER], reply=_reply("resp_1", TEXT_REPLY), session="a"),
        _chained([ANSWER], "resp_1", _reply("resp_2", TEXT_REPLY), session="b"),
    ])
    report = json_report(log)
    assert report["summary"]["records"] == 1 and report["summary"]["skipped"] == {NOT_HELD: 1}


def test_a_request_that_goes_on_from_a_reply_the_provider_did_not_store_is_linted_as_meant_and_reported(tmp_path):
    """A reply to a request sent with store false was not kept: the request that names it is
    linted with the history it meant to go on from, and is CTX040's, once per session, unless
    its own successful reply shows a host that held the reply (a transport's cache)."""
    unstored = _chained([USER], reply=_reply("resp_1", TEXT_REPLY))
    unstored["request"]["store"] = False
    refused = _write(tmp_path, [unstored, _chained([ANSWER], "resp_1"), _chained([ANSWER], "resp_1")])
    report = json_report(refused)
    assert report["summary"]["records"] == 3 and report["summary"]["skipped"] == {}
    assert located_findings(report) == [("CTX040", 2, None, "/previous_response_id", None)]
    assert report["findings"][0]["evidence"]["sent_with_store_false"] == {"file": str(refused), "line": 1}
    assert [session["requests"] for session in report["sessions"]] == [3]
    held = write_records(tmp_path / "held.jsonl", [unstored, _chained([ANSWER], "resp_1", _reply("resp_2", TEXT_REPLY))])
    report = json_report(held)
    assert report["findings"] == [] and report["summary"]["records"] == 2


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_chain_without_session_keys_is_one_session_with_the_same_findings(tmp_path, jobs):
    records = [
        _chained([USER], reply=_reply("resp_1", CALLS_REPLY), session=None),
        _chained([OUT_OSLO], "resp_1", _reply("resp_2", TEXT_REPLY), session=None),  # call_2 left unanswered
        _chained([ANSWER], "resp_2", _reply("resp_3", TEXT_REPLY), session=None),
    ]
    report = json_report(_write(tmp_path, records), "--jobs", jobs)
    assert [session["requests"] for session in report["sessions"]] == [3]
    assert located_findings(report) == [("CTX002", 2, None, "/previous_response_id", "call_2")]


def test_a_logged_chain_reports_the_call_a_user_message_answered_where_it_was_sent():
    """Two chains of stored responses: one whose call gets its output, one whose call is
    answered by the user's words, reported at the line that sent them."""
    report = json_report(str(FIXTURES / "readers" / "openai_responses_chain_call_answered_by_user.jsonl"))
    assert [session["requests"] for session in report["sessions"]] == [3, 2]
    assert located_findings(report) == [("CTX009", 5, 0, "/input/0", "call_x")]


def test_only_the_latest_responses_are_held():
    stored = StoredResponses(window=2)
    records = [_record_of(_chained([USER], reply=_reply(f"resp_{n}", TEXT_REPLY)), n) for n in range(3)]
    for record in records:
        assert stored.rebuilt(record) is record
    assert isinstance(stored.rebuilt(_record_of(_chained([ANSWER], "resp_0"), 4)), Skipped)
    assert len(stored.rebuilt(_record_of(_chained([ANSWER], "resp_1"), 5)).messages) == 4


def _record_of(logged, line):
    record = as_item(logged, "log.jsonl", line, None)
    assert isinstance(record, Record), record
    return record


def test_a_string_input_with_instructions_is_a_system_and_a_user_message(tmp_path):
    log = _write(tmp_path, [{"request": {"model": MODEL, "instructions": "Answer in French.", "input": "hi"}}])
    record = read_inputs([log]).records[0]
    assert record.request["messages"] == [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "hi"}]


def test_an_item_that_is_not_an_object_is_a_located_input_error(tmp_path):
    log = _write(tmp_path, [{"request": {"model": MODEL, "input": [USER, 7]}}])
    report = json_report(log)
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/request/input/1")]
    assert "OpenAI Responses API body: /input/1 is not an input item" in report["findings"][0]["message"]


@pytest.mark.parametrize(("reply", "finish"), [
    ({"object": "response", "status": "completed", "output": [CALL_OSLO]}, "tool_calls"),
    ({"object": "response", "status": "completed", "output": TEXT_REPLY["output"]}, "stop"),
    ({"object": "response", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}, "length"),
    ({"object": "response", "status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []}, "content_filter"),
])
def test_a_reply_says_how_it_ended_in_chat_completions_terms(reply, finish):
    assert parse_response(reply).finish_reason == finish


def test_an_event_stream_is_read_from_the_response_it_ends_with():
    events = [{"type": "response.created", "response": {"object": "response", "status": "in_progress", "output": []}},
              {"type": "response.output_item.done", "item": CALL_OSLO},
              {"type": "response.completed", "response": {**CALLS_REPLY}}]
    stream = "".join(f"event: {event['type']}\ndata: {orjson.dumps(event).decode()}\n\n" for event in events)
    response = parse_response(stream)
    assert response.finish_reason == "tool_calls"
    assert [call["id"] for call in response.message["tool_calls"]] == ["call_1", "call_2"]
    assert response.message["reasoning_details"] == [REASONING]


def test_a_stream_cut_before_its_end_keeps_the_items_that_finished():
    events = [{"type": "response.output_item.done", "item": CALL_OSLO}]
    response = parse_response(events)
    assert response.finish_reason is None
    assert [call["id"] for call in response.message["tool_calls"]] == ["call_1"]


@needs_real_logs
def test_recorded_interleaved_reasoning_tool_chain_is_one_clean_session():
    report = json_report(str(REAL_LOGS / "simonw-llm" / "test_responses_interleaved_reasoning_between_tool_calls.yaml"))
    assert code_lines(report) == []
    assert [s["requests"] for s in report["sessions"]] == [4]
    assert report["summary"]["skipped"] == {}


def test_chat_messages_under_input_are_read_as_chat_messages(tmp_path):
    """A trace export's record of a call (chat-completions messages as `input`, the reply as
    `output`): read as Responses items, its tool turns would be lost and its tool messages
    would lack their ids. It is read as the chat request it records, findings pointing
    into `input`; its output is the reply the next request must carry."""
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
    log = _write(tmp_path, [
        {"traceId": "t1", "model": "gpt-4o", "input": [USER], "output": call},
        {"traceId": "t1", "model": "gpt-4o", "input": [USER, call, {"role": "tool", "content": "12C"}], "output": {"role": "assistant", "content": "12C."}},
        {"traceId": "t1", "model": "gpt-4o", "input": [USER, {"role": "user", "content": "And tomorrow?"}], "output": "Also 12C."}])
    found = [(f["code"], f["line"], f["pointer"]) for f in json_report(log)["findings"]]
    assert found == [("CTX010", 2, "/input/2"), ("CTX016", 3, "/input/1")]  # the result without its id: its call not answered, one defect


def test_an_output_without_its_call_id_is_a_tool_message_without_an_id(tmp_path):
    log = _write(tmp_path, [_request([USER, CALL_OSLO, {"type": "function_call_output", "output": "12C"}])])
    assert [(f["code"], f["line"], f["pointer"]) for f in json_report(log)["findings"]] == [("CTX010", 1, "/input/2")]
    # its call, left unanswered for want of the id, is that defect; it is CTX002's where CTX010 is not selected
    assert [(f["code"], f["pointer"]) for f in json_report(log, "--ignore", "CTX010")["findings"]] == [("CTX002", "/input/1")]


SHELL_CALL = {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_9", "status": "completed",
              "action": {"type": "exec", "command": ["ls"], "env": {}}}


def test_a_local_shell_output_answers_the_call_its_id_names(tmp_path):
    # the API's local_shell_call_output names its call by `id`, not `call_id`
    log = _write(tmp_path, [
        _request([USER, SHELL_CALL, {"type": "local_shell_call_output", "id": "call_9", "output": "a.txt"}]),
        _request([USER, SHELL_CALL, {"type": "local_shell_call_output", "call_id": "call_9", "output": "a.txt"}]),
        _request([USER, SHELL_CALL, {"type": "local_shell_call_output", "id": "call_8", "output": "a.txt"}]),
        _request([USER, SHELL_CALL, {"type": "local_shell_call_output", "id": 9, "output": "a.txt"}]),
    ])
    found = [(f["code"], f["line"], f["pointer"]) for f in json_report(log)["findings"]]
    assert found == [("CTX001", 3, "/input/2"), ("CTX900", 4, "/request/input/2/id")]  # an output naming another call: one defect


def test_a_function_call_without_its_call_id_is_a_located_input_error(tmp_path):
    log = _write(tmp_path, [_request([USER, {"type": "function_call", "name": "get_weather", "arguments": "{}"}])])
    report = json_report(log)
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/request/input/1")]
    assert "/input/1 is a function_call without its `call_id`" in report["findings"][0]["message"]


@pytest.mark.parametrize("body", [
    {"model": MODEL, "instructions": "Be brief.", "input": []},
    {"model": MODEL, "instructions": [{"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]}], "input": "hi"},
])
def test_instructions_alone_or_as_messages_are_the_system_prompt(tmp_path, body):
    record = read_inputs([_write(tmp_path, [{"request": body}])]).records[0]
    assert record.request["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_malformed_input_beside_responses_keys_is_named_as_such(tmp_path):
    report = json_report(_write(tmp_path, [{"request": {"model": MODEL, "instructions": "x", "input": {}}}]))
    assert [(f["code"], f["pointer"]) for f in report["findings"]] == [("CTX900", "/request/input")]
    assert "`input` is neither a string nor a list of items" in report["findings"][0]["message"]


def test_reasoning_findings_point_at_the_reasoning_item():
    cases = FIXTURES / "rules"
    dropped = json_report(str(cases / "CTX004" / "fail_responses_function_call_item_without_its_reasoning.jsonl"))
    assert located_findings(dropped) == [("CTX004", 2, 1, "/input/1", "call_01")]
    assert "comes back without the reasoning items the model returned for it" in dropped["findings"][0]["message"]
    rewritten = json_report(str(cases / "CTX015" / "fail_responses_reasoning_item_rewritten.jsonl"))
    assert located_findings(rewritten) == [("CTX015", 2, 2, "/input/1", "call_01")]


def test_a_call_is_linked_to_reasoning_only_when_sent_with_its_item_id(tmp_path):
    """No response logged, no earlier copy: what the model returned is unknown, and a turn
    may have had no reasoning (effort none), so a linked call alone is not judged."""
    linked = {**CALL_OSLO, "id": "fc_1"}
    log = _write(tmp_path, [_request([USER, linked, OUT_OSLO])])
    assert json_report(log)["findings"] == []
    record = read_inputs([log]).records[0]
    assert record.request["messages"][2]["tool_calls"][0]["item_id"] == "fc_1"  # after instructions and the user


def test_the_unstored_items_of_sessions_put_to_sleep_are_kept(tmp_path):
    """More sessions than stay awake, interleaved: what each learned of the items its
    replies returned under store false goes into the spill and comes back."""
    case = FIXTURES / "rules" / "CTX040" / "fail_reasoning_item_sent_back_by_id_under_store_false.jsonl"
    script = [record for record in map(orjson.loads, case.read_bytes().splitlines()) if record["session_id"] == "by-id"]
    records, expected = interleaved(script, [("CTX040", 2)], HOT_SESSIONS + 20)
    log = write_records(tmp_path / "many.jsonl", records)
    report = json_report(log)
    assert code_lines(report) == expected
    assert json_report(log, "--jobs", "2") == report


def test_a_reasoning_item_sent_by_its_id_without_the_item_that_followed_it_points_at_the_reasoning_item(tmp_path):
    """What follows a reasoning item sent with its id is named, and the finding points at the
    reasoning item; the same turn sent with no ids (stateless replay) is legal."""
    reasoning = {"type": "reasoning", "id": "rs_7", "summary": []}
    text = {"role": "assistant", "content": "Oslo 12C, Rome 24C."}
    follow_up = {"role": "user", "content": "And Paris?"}
    log = _write(tmp_path, [
        {**_request([USER, reasoning, text, follow_up]), "session_id": "easy-message"},
        {**_request([USER, reasoning, OUT_OSLO]), "session_id": "tool-output"},
        {**_request([USER, reasoning]), "session_id": "last"},
        {**_request([USER, {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}, text, follow_up]), "session_id": "no-ids"},
    ])
    report = json_report(log)
    assert [(code, line, pointer) for code, line, _, pointer, _ in located_findings(report) if code == "CTX041"] == [
        ("CTX041", 1, "/input/1"), ("CTX041", 2, "/input/1"), ("CTX041", 3, "/input/1")]
    evidence = [(f["evidence"]["where"], f["evidence"]["next_item"]) for f in report["findings"] if f["code"] == "CTX041"]
    assert evidence == [("is followed by an assistant message sent without its `id`", "/input/2"),
                        ("is followed by a function_call_output item", "/input/2"), ("is the last input item", None)]


def test_an_input_item_whose_id_an_earlier_item_holds_points_at_its_id(tmp_path):
    """The repeated id is named with both items; a shell call's output, which names its
    call by `id`, repeats no item's id."""
    said = {"type": "message", "id": "msg_4", "role": "assistant", "content": [{"type": "output_text", "text": "Oslo 12C."}]}
    shell_call = {"type": "local_shell_call", "id": "call_9", "call_id": "call_9", "status": "completed",
                  "action": {"type": "exec", "command": ["ls"], "env": {}}}
    shell_output = {"type": "local_shell_call_output", "id": "call_9", "output": "README.md"}
    log = _write(tmp_path, [
        {**_request([USER, said, {"role": "user", "content": "And Rome?"}, said, {"role": "user", "content": "Thanks."}]), "session_id": "twice"},
        {**_request([USER, shell_call, shell_output]), "session_id": "shell"},
    ])
    report = json_report(log)
    assert [(code, line, pointer) for code, line, _, pointer, _ in located_findings(report)] == [("CTX042", 1, "/input/3/id")]
    assert report["findings"][0]["evidence"]["first_item"] == "/input/1"
