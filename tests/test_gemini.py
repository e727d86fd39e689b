"""Gemini generateContent bodies: read as the normalized shape, findings located in the contents sent."""

from __future__ import annotations

import orjson
import pytest
import yaml

from conftest import FIXTURES, REAL_LOGS, needs_real_logs
from ctxlint.ingest import read_inputs
from ctxlint.ingest.responses import parse_response
from helpers import code_lines, json_report, located_findings, run_cli, write_records

RULE_CASES = FIXTURES / "rules"
CALL = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "SIG1"}
ANSWER = {"functionResponse": {"name": "get_weather", "response": {"temperature": "12C"}}}
QUESTION = {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}


def _write(tmp_path, records) -> str:
    return write_records(tmp_path / "gemini.jsonl", records)


def test_a_dropped_thought_signature_points_at_the_model_content():
    report = json_report(str(RULE_CASES / "CTX004" / "fail_gemini3_thought_signature_dropped_in_tool_loop.jsonl"))
    assert [(f["code"], f["line"], f["message_index"], f["pointer"]) for f in report["findings"]] == [("CTX004", 2, 1, "/contents/1")]
    assert "comes back without the thought signatures the model returned for it" in report["findings"][0]["message"]


def test_responses_without_their_calls_point_at_their_parts():
    report = json_report(str(RULE_CASES / "CTX016" / "fail_gemini_function_call_turn_dropped.jsonl"))
    assert [(f["code"], f["pointer"]) for f in report["findings"]] == [("CTX016", "/contents/1/parts/0")]  # the turn lost
    orphans = json_report(str(RULE_CASES / "CTX016" / "fail_gemini_function_call_turn_dropped.jsonl"), "--select", "CTX001")
    assert [(f["code"], f["pointer"]) for f in orphans["findings"]] == [("CTX001", "/contents/1/parts/0")]
    assert orphans["findings"][0]["evidence"] == {"tool_call_ids": ["get_weather:unpaired", "get_weather:unpaired"]}


def test_a_call_turn_left_out_of_the_stored_history_is_the_result_it_answered_kept_without_it():
    report = json_report(str(RULE_CASES / "CTX016" / "fail_gemini_call_turns_left_out_at_every_turn_reported_once.jsonl"))
    # the functionResponse line 3 keeps, its call cut, is the result line 2 sent: only the call turn is missing
    dropped = next(f for f in report["findings"] if f["code"] == "CTX016")
    assert dropped["message"] == ("the assistant message of turn 2 that made tool call get_weather:871adeba is missing from this "
                                  "request while its results and the reply that followed them (message 2) are kept")


def test_calls_without_ids_are_named_by_function_and_arguments_and_paired_in_order(tmp_path):
    same = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
    log = _write(tmp_path, [{"model": "gemini-2.5-flash", "request": {"contents": [
        QUESTION, {"role": "model", "parts": [same, same, {"functionCall": {"name": "get_time", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {}}}, ANSWER, ANSWER, {"text": "Also, hurry."}]}]}}])
    messages = read_inputs([log]).records[0].request["messages"]
    ids = [call["id"] for call in messages[1]["tool_calls"]]
    assert ids[0].startswith("get_weather:") and ids[1] == ids[0] + "#1" and ids[2].startswith("get_time:")
    assert [(m["role"], m.get("tool_call_id")) for m in messages[2:]] == [("tool", ids[2]), ("tool", ids[0]), ("tool", ids[1]), ("user", None)]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city":"Oslo"}'
    assert json_report(log)["findings"] == []


def test_an_unanswered_call_points_at_its_function_call_part(tmp_path):
    two = {"role": "model", "parts": [CALL, {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]}
    log = _write(tmp_path, [{"model": "gemini-3-pro-preview", "request": {"contents": [
        QUESTION, two, {"role": "user", "parts": [ANSWER]}, {"role": "user", "parts": [{"text": "hurry"}]}]}}])
    found = located_findings(json_report(log))
    assert [(code, line, index, pointer) for code, line, index, pointer, _ in found] == [("CTX002", 1, 1, "/contents/1/parts/1/functionCall")]


def test_snake_case_fields_and_the_model_from_the_logged_url(tmp_path):
    log = _write(tmp_path, [{"request": {
        "url": "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash:generateContent",
        "method": "POST", "body": {
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [QUESTION, {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {"city": "Oslo"}}, "thought_signature": "S"}]},
                         {"role": "user", "parts": [{"function_response": {"name": "get_weather", "response": {"t": "12C"}}}]}],
            "tools": {"function_declarations": [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}}}}])
    record = read_inputs([log]).records[0]
    assert record.model == "gemini-3-flash"
    assert [m["role"] for m in record.request["messages"]] == ["system", "user", "assistant", "tool"]
    assert record.request["tools"][0]["function"]["name"] == "get_weather"
    assert json_report(log)["findings"] == []


def test_the_model_from_a_url_the_envelope_logs_beside_the_request(tmp_path):
    log = _write(tmp_path, [{"url": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
                             "request": {"contents": [QUESTION]}}])
    assert read_inputs([log]).records[0].model == "gemini-2.5-flash"


def test_a_streamed_reply_joins_its_text_and_keeps_the_signed_call():
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me "}]}}]},
              {"candidates": [{"content": {"role": "model", "parts": [{"text": "check."}]}}]},
              {"candidates": [{"content": {"role": "model", "parts": [CALL]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 9}, "modelVersion": "gemini-3-flash"}]
    for logged in ("".join(f"data: {orjson.dumps(chunk).decode()}\r\n\r\n" for chunk in chunks), orjson.dumps(chunks).decode()):
        response = parse_response(logged)
        assert response.message["content"] == "Let me check."
        assert response.message["reasoning_details"] == [{"type": "thought_signature", "signature": "SIG1"}]
        assert (response.finish_reason, response.usage["prompt_tokens"], response.model) == ("tool_calls", 12, "gemini-3-flash")


@pytest.mark.parametrize(("reason", "finish"), [("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter")])
def test_a_reply_says_how_it_ended_in_chat_completions_terms(reason, finish):
    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi."}]}, "finishReason": reason}]}
    assert parse_response(reply).finish_reason == finish


def test_a_part_that_is_not_an_object_is_a_located_input_error(tmp_path):
    report = json_report(_write(tmp_path, [{"request": {"contents": [{"role": "user", "parts": ["hi"]}]}}]))
    assert [(f["code"], f["pointer"]) for f in report["findings"]] == [("CTX900", "/request/contents/0/parts/0")]


@needs_real_logs
def test_recorded_gemini_3_call_from_another_model_is_clean_and_a_planted_drop_is_found(tmp_path):
    """pydantic-ai replays another model's call to Gemini 3 with Google's placeholder
    signature; remove it, and CTX004 finds the open tool loop without a signature."""
    cassette = REAL_LOGS / "pydantic-ai" / "test_thinking_with_tool_calls_from_other_model.yaml"
    assert code_lines(json_report(str(cassette))) == []
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    position = next(i for i, item in enumerate(data["interactions"]) if "generateContent" in item["request"]["uri"])
    model_turn = data["interactions"][position]["request"]["parsed_body"]["contents"][1]
    del model_turn["parts"][0]["thoughtSignature"]
    planted = tmp_path / "planted.yaml"
    planted.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = json_report(str(planted))
    interactions = next(value for key, value in yaml.compose(planted.read_text(encoding="utf-8")).value if key.value == "interactions")
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [
        ("CTX004", interactions.value[position].start_mark.line + 1, "/contents/1")]


def test_the_same_call_made_again_later_is_another_call_in_check_and_show(tmp_path):
    """Polling a status with the same arguments: each call is its own, in the request that
    carries it and in the reply that made it, so the send record lines them up."""
    poll = {"functionCall": {"name": "get_status", "args": {}}}
    question = {"role": "user", "parts": [{"text": "Wait for the job."}]}

    def answer(state):
        return {"role": "user", "parts": [{"functionResponse": {"name": "get_status", "response": {"state": state}}}]}

    def reply(part):
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]}

    histories = [[question], [question, {"role": "model", "parts": [poll]}, answer("running")],
                 [question, {"role": "model", "parts": [poll]}, answer("running"), {"role": "model", "parts": [poll]}, answer("done")]]
    replies = [reply(poll), reply(poll), reply({"text": "Finished."})]
    log = _write(tmp_path, [{"session_id": "p", "model": "gemini-2.5-flash", "request": {"contents": contents}, "response": answer_}
                            for contents, answer_ in zip(histories, replies)])
    records = read_inputs([log]).records
    first, second = (record.response.message["tool_calls"][0]["id"] for record in records[:2])
    assert second == first + "#1"
    assert [m["tool_calls"][0]["id"] for m in records[2].request["messages"] if m.get("tool_calls")] == [first, second]
    assert json_report(log)["findings"] == []
    shown = orjson.loads(run_cli("show", log, "--session", "p", "--format", "json").stdout)
    assert len(shown["messages"]) == 6  # question, two calls, two results, the final answer


def test_gemini_refusing_a_dropped_signature_is_a_thinking_error(tmp_path):
    error = {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                       "message": "Function call is missing a thought_signature in functionCall parts."}}
    log = _write(tmp_path, [{"model": "gemini-3-pro-preview", "request": {"contents": [QUESTION]}, "response": error, "status": 400}])
    findings = json_report(log)["findings"]
    assert [(f["code"], f["evidence"]["class"]) for f in findings] == [("CTX022", "thinking/reasoning")]


def test_openapi_style_parameters_are_read_as_json_schema(tmp_path):
    """Gemini declares types in upper case and null by `nullable`: arguments are judged
    against what the declaration means (CTX013), a null for a nullable one is not broken."""
    tools = [{"functionDeclarations": [{"name": "get_weather", "parameters": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}, "unit": {"type": "STRING", "nullable": True}}, "required": ["city"]}}]}]

    def call(args):
        return {"model": "gemini-2.5-flash", "request": {"tools": tools, "contents": [
            QUESTION, {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": args}}]},
            {"role": "user", "parts": [ANSWER]}]}}

    log = _write(tmp_path, [call({"city": "Oslo", "unit": None}), call({"town": "Oslo"})])
    assert code_lines(json_report(log)) == [("CTX013", 2)]


def test_a_request_on_cached_content_is_skipped_with_its_reason(tmp_path):
    """The cache holds the conversation's start (system instruction, first contents): read
    as a history, the request would look like one that lost them."""
    log = _write(tmp_path, [{"model": "gemini-2.5-pro", "request": {"cachedContent": "cachedContents/abc", "contents": [QUESTION]}}])
    report = json_report(log)
    assert report["findings"] == [] and report["summary"]["records"] == 0
    assert "cachedContent" in next(iter(report["summary"]["skipped"]))


@pytest.mark.parametrize(("stored", "pointer"), [({"role": "user", "parts": []}, "/contents/1/parts"), ({"role": "user"}, "/contents/1"),
                                                 ({"role": "model"}, "/contents/1")])
def test_a_blank_content_points_at_its_parts_or_at_the_content_that_has_none(tmp_path, stored, pointer):
    """A content with no parts is refused as blank (CTX029); where it has no `parts` member
    at all, the finding points at the content, a place that is in the body."""
    body = {"contents": [{"role": "user", "parts": [{"text": "Summarize the Q3 report in two lines."}]}, stored,
                         {"role": "user", "parts": [{"text": "Now in one line."}]}]}
    log = write_records(tmp_path / "gemini.jsonl", [{"url": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
                                                     "request": body}])
    assert [(f["code"], f["line"], f["pointer"]) for f in json_report(log)["findings"]] == [("CTX029", 1, pointer)]


OSLO_AND_BERGEN = {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
                                              {"functionCall": {"name": "get_weather", "args": {"city": "Bergen"}}}]}
SPLIT = [QUESTION, OSLO_AND_BERGEN, {"role": "user", "parts": [ANSWER]},
         {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temperature": "9C"}}}]}]
VERTEX = "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent"


def test_the_host_of_the_logged_url_is_the_records_and_the_split_is_on_its_map(tmp_path):
    log = _write(tmp_path, [{"url": VERTEX, "request": {"contents": SPLIT}},
                            {"request": {"url": "HTTPS://Generativelanguage.googleapis.com:443/v1beta/models/gemini-2.5-pro:generateContent", "body": {"contents": SPLIT}}},
                            {"model": "gemini-2.5-pro", "request": {"contents": SPLIT}}])
    records = read_inputs([log]).records
    assert [record.host for record in records] == ["europe-west4-aiplatform.googleapis.com", "generativelanguage.googleapis.com", None]
    assert records[0].model == "gemini-2.5-pro"
    split = records[0].source_map.split_responses
    assert [(s.calls_at, s.split_at, s.calls, s.contents, s.first_content) for s in split] == [(1, 3, 2, (2, 3), 1)]
    assert code_lines(json_report(log)) == [("CTX049", 1)]  # Vertex AI's host alone


def test_a_cassette_of_vertex_ai_with_split_responses_is_reported_at_its_interaction(tmp_path):
    body = {"contents": SPLIT, "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}]}
    refused = '{"error": {"code": 400, "message": "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.", "status": "INVALID_ARGUMENT"}}'
    interaction = {"request": {"method": "POST", "uri": VERTEX, "body": orjson.dumps(body).decode(), "headers": {}},
                   "response": {"status": {"code": 400, "message": "Bad Request"}, "headers": {}, "body": {"string": refused}}}
    cassette = tmp_path / "vertex.yaml"
    cassette.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}, sort_keys=False), encoding="utf-8")
    report = json_report(str(cassette))
    assert [(code, pointer) for code, _, _, pointer, _ in located_findings(report)] == [("CTX049", "/contents/3/parts/0")]  # the 400 is CTX049's
    assert report["findings"][0]["evidence"]["host"] == "europe-west4-aiplatform.googleapis.com"


def test_a_response_sent_again_in_a_later_content_of_the_same_turn_answers_its_call_twice(tmp_path):
    """Responses spread over contents are one turn's: the Oslo response given again two
    contents later is a result sent twice (CTX028), not a response to no call (CTX001)."""
    log = _write(tmp_path, [{"model": "gemini-2.5-pro", "request": {"contents": SPLIT + [{"role": "user", "parts": [ANSWER]}]}}])
    assert code_lines(json_report(log)) == [("CTX028", 1)]
