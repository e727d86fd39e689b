"""Each reader on its own fixtures: what it reads, what it skips and counts, what it refuses."""

from __future__ import annotations

import gzip

from conftest import FIXTURES
from ctxlint.ingest import read_inputs
from ctxlint.ingest.responses import parse_response
from helpers import code_lines, json_report, located_findings

READERS = FIXTURES / "readers"


def test_vcrpy_gzip_base64_bodies_beside_an_anthropic_interaction():
    report = json_report(str(READERS / "vcrpy_gzip_unanswered_call.yaml"))
    assert code_lines(report) == [("CTX002", 41)]
    assert report["summary"]["skipped"] == {}
    assert report["summary"]["records"] == 3  # the Anthropic interaction is read too, as its own session
    assert [(s["id"].rsplit(":", 1)[1], s["requests"]) for s in report["sessions"]] == [("2", 2), ("28", 1)]
    assert report["summary"]["token_counters"] == {"server": 2, "tiktoken:cl100k_base (approximation)": 1}  # usage read from the gzip bodies


def test_govcr_sse_parallel_calls_are_reassembled():
    ingested = read_inputs([str(READERS / "govcr_sse_parallel_calls_verbatim.yaml")])
    response = ingested.records[0].response
    assert response.finish_reason == "tool_calls"
    assert response.usage["prompt_tokens"] == 90
    assert response.message["reasoning_content"] == "Two independent operations: call both."
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in response.message["tool_calls"]] == [
        ("call_-1", "add", '{"a":2,"b":3}'), ("call_-2", "mul", '{"a":4,"b":5}')]


def test_govcr_reasoning_dropped_vs_verbatim():
    assert code_lines(json_report(str(READERS / "govcr_sse_parallel_calls_reasoning_dropped.yaml"))) == [("CTX004", 65)]
    assert code_lines(json_report(str(READERS / "govcr_sse_parallel_calls_verbatim.yaml"))) == []


def test_pydantic_parsed_body_and_a_responses_api_interaction_are_read():
    report = json_report(str(READERS / "pydantic_parsed_body_clean.yaml"))
    assert code_lines(report) == []
    assert report["summary"]["records"] == 3
    assert report["summary"]["skipped"] == {}


def test_yaml_that_is_not_a_cassette_is_ctx900():
    report = json_report(str(READERS / "not_a_cassette.yaml"))
    assert code_lines(report) == [("CTX900", 1)]
    assert "not a vcr cassette" in report["findings"][0]["message"]


def test_cassette_never_constructs_python_objects(tmp_path):
    marker = tmp_path / "pwned"
    unsafe = tmp_path / "unsafe.yaml"
    unsafe.write_text(f"interactions:\n- request: !!python/object/apply:os.system ['touch {marker}']\n")
    report = json_report(str(unsafe))
    assert code_lines(report) == [("CTX900", 2)]
    assert not marker.exists()


def test_snapshot_run_is_read_in_numeric_loop_order():
    report = json_report(str(READERS / "snapshot_run"))
    assert [s["requests"] for s in report["sessions"]] == [3]
    finding = report["findings"][0]
    assert (finding["code"], finding["turn"], finding["file"].endswith("loop-10/llm-request.jsonl")) == ("CTX003", 3, True)


def test_batch_input_and_output_join_on_custom_id_in_any_order():
    ingested = read_inputs([str(READERS / "batch_output.jsonl"), str(READERS / "batch_input.jsonl")])
    assert [r.custom_id for r in ingested.records] == ["conv-1-turn-1", "conv-1-turn-2"]
    assert [r.response.usage["prompt_tokens"] for r in ingested.records] == [80, 120]
    assert ingested.skipped == []


def test_batch_output_without_input_is_counted_not_dropped():
    report = json_report(str(READERS / "batch_output.jsonl"))
    assert report["summary"]["skipped"] == {"batch output line whose input line was not given": 2}


def test_gzip_by_extension_and_by_magic_bytes(tmp_path):
    assert code_lines(json_report(str(READERS / "gzipped.jsonl.gz"))) == [("CTX003", 2)]
    renamed = tmp_path / "log.jsonl"
    renamed.write_bytes((READERS / "gzipped.jsonl.gz").read_bytes())
    assert code_lines(json_report(str(renamed))) == [("CTX003", 2)]


def test_stdin(tmp_path):
    text = (FIXTURES / "rules" / "CTX003" / "fail_reply_lost_between_users.jsonl").read_text()
    assert code_lines(json_report("-", input=text)) == [("CTX003", 2)]


def test_directory_walk_finds_every_reader_format():
    report = json_report(str(READERS))
    files = {f["file"].split("fixtures/readers/")[-1] for f in report["findings"]}
    assert {"vcrpy_gzip_unanswered_call.yaml", "govcr_sse_parallel_calls_reasoning_dropped.yaml", "gzipped.jsonl.gz",
            "not_a_cassette.yaml", "unsafe_tag.yaml", "snapshot_run/loop-10/llm-request.jsonl"} <= files


def test_truncated_gzip_reports_what_was_read_and_where_it_stopped(tmp_path):
    whole = gzip.compress(b"".join((FIXTURES / "rules" / "CTX003" / "fail_reply_lost_between_users.jsonl").read_bytes() for _ in range(1)))
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(whole[: len(whole) - 12])
    from helpers import run_cli

    result = run_cli("check", "--format", "json", str(broken))
    assert result.exit_code == 2
    assert "cut.jsonl.gz: read stopped" in result.stderr


def test_http_exchange_and_string_bodies():
    report = json_report(str(READERS / "http_exchange_bodies.jsonl"))
    assert code_lines(report) == [("CTX003", 5), ("CTX004", 2), ("CTX022", 3), ("CTX900", 4)]  # line 5: only a body
    problem = next(f for f in report["findings"] if f["code"] == "CTX900")
    assert problem["message"].startswith("request body is a string of JSON that does not parse (unexpected end of data")
    assert problem["pointer"] == "/request/body"
    assert report["summary"]["token_counters"]["server"] == 1  # line 1's usage, read from the response body string
    ingested = read_inputs([str(READERS / "http_exchange_bodies.jsonl")])
    first, second = ingested.records[:2]
    assert first.response.message["reasoning_content"] == "Need the weather tool." and second.response.finish_reason == "stop"


def test_a_bare_request_with_its_reply_beside_the_messages_is_read_whole(tmp_path):
    """Proxies (LiteLLM) log the body and put the reply next to it: the reply is the turn's
    response, not a request setting, so what the model returned is known."""
    import orjson

    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
    reply = {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "reasoning_content": "need a search", "tool_calls": [call]}}]}
    first = {"model": "deepseek-reasoner", "metadata": {"session_id": "L1"}, "messages": [{"role": "user", "content": "find x"}], "response": reply}
    second = {"model": "deepseek-reasoner", "metadata": {"session_id": "L1"}, "messages": [
        {"role": "user", "content": "find x"}, {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]}
    log = tmp_path / "proxy.jsonl"
    log.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(second) + b"\n")
    record = read_inputs([str(log)]).records[0]
    assert "response" not in record.request and record.response.finish_reason == "tool_calls"
    report = json_report(str(log))
    assert [(f["code"], f["line"], f["evidence"].get("seen_in")) for f in report["findings"]] == [("CTX004", 2, "turn 1 response")]


def test_a_request_in_a_context_the_provider_holds_is_skipped_with_its_reason(tmp_path):
    """Volcengine's Context API keeps the conversation: each request sends its new messages
    and a context_id. Read as a history, every turn would look like one that lost it."""
    import orjson

    lines = [{"session_id": "d", "request": {"model": "doubao-seed-1-6-250615", "context_id": "ctx-2025", "messages": [{"role": "user", "content": text}]}}
             for text in ("Hello!", "And tomorrow?")]
    log = tmp_path / "context.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    report = json_report(str(log))
    assert report["findings"] == [] and report["summary"]["records"] == 0
    assert list(report["summary"]["skipped"].values()) == [2] and "context_id" in next(iter(report["summary"]["skipped"]))


def test_the_reply_id_is_read_in_every_response_shape():
    """A response's id tells one exchange logged twice from a request sent again (CTX017)."""
    chunks = [{"id": "chatcmpl-9", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
              {"id": "chatcmpl-9", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    assert parse_response(chunks).id == "chatcmpl-9"
    assert parse_response({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}}]}).id == "chatcmpl-1"
    assert parse_response({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "Hi"}]}).id == "msg_1"
    assert parse_response({"id": "resp_1", "object": "response", "status": "completed",
                           "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}]}).id == "resp_1"
    assert parse_response({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}}], "responseId": "gem-1"}).id == "gem-1"


def test_sdk_call_arguments_are_read_as_the_body_the_sdk_sends():
    """A log of the OpenAI SDK's call arguments: extra_body's keys are sent at the top
    level, so rules judge them there, and findings point where the log holds them."""
    report = json_report(str(FIXTURES / "rules" / "CTX005" / "fail_sdk_arguments_with_extra_body.jsonl"))
    assert [(f["line"], f["pointer"]) for f in report["findings"]] == [(1, "/extra_body/thinking/type"), (4, "/extra_body/reasoning_effort")]
    assert "reasoning_effort 'medium'" in report["findings"][1]["message"]


def test_a_json_list_of_log_records_is_read_as_the_jsonl_log_would_be():
    """A log exported as one JSON array (pretty-printed): each element is read as a JSONL
    line would be, and findings point at the line where the element starts; an element
    that is no record is a located problem, and the rest is read."""
    report = json_report(str(FIXTURES / "readers" / "request_log_as_json_list.json"))
    assert code_lines(report) == [("CTX003", 406), ("CTX004", 119), ("CTX005", 255), ("CTX008", 288), ("CTX008", 288), ("CTX900", 250)]
    assert report["summary"]["records"] == 5


def test_an_envelope_under_other_names_is_read():
    """A logger that names the halves of an exchange its own way (request_body and
    response_body, req and resp): the one member that holds a request body is the
    request, the one that holds a reply is its response; problems point into them."""
    report = json_report(str(FIXTURES / "readers" / "envelope_under_other_names.jsonl"))
    assert located_findings(report) == [("CTX003", 2, 1, "/messages/1", None), ("CTX016", 2, None, None, None),
                                        ("CTX900", 3, None, "/req/body/messages/0/role", None)]
    assert report["summary"]["records"] == 2
