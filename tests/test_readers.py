"""Each reader on its own fixtures: what it reads, what it skips and counts, what it refuses."""

from __future__ import annotations

import base64
import gzip
import struct
import zlib

import orjson
import pytest
import yaml

from conftest import FIXTURES
from ctxlint.ingest import eventstream, read_inputs
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest.text_logs import OTHER_OBJECT, TEXT_LINE
from helpers import code_lines, json_report, located_findings, run_cli, write_records

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


def test_yaml_data_no_json_body_holds_is_read_as_json_would_be(tmp_path):
    """Found by fuzzing, each a crash before: a parsed body holding what YAML has and JSON
    does not (an integer past 64 bits, a date, a key that is not a string), and a status
    code that is no HTTP status. The body reads as the JSON it stands for; the status is
    not taken."""
    text = (READERS / "pydantic_parsed_body_clean.yaml").read_text(encoding="utf-8")
    text = text.replace("      model: gpt-4o-mini\n      messages:", "      model: gpt-4o-mini\n      seed: 100000000000000000000000000000\n"
                        "      metadata: {2026-12-04: run, 7: seven}\n      messages:", 1)
    assert text.count("seed: 1000") == 1
    text = text.replace("code: 200", "code: 1000000000000000000000000000000")
    cassette = tmp_path / "cassette.yaml"
    cassette.write_text(text, encoding="utf-8")
    report = json_report(str(cassette))
    assert code_lines(report) == []
    assert report["summary"]["records"] == 3


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


def test_a_snapshot_runs_event_stream_and_tool_executions_are_counted_as_skipped_not_read_as_logs():
    """UI-TARS writes the run's events and each loop's tool executions beside the requests,
    as pretty-printed JSON arrays named .jsonl: read as logs, each line was a CTX900."""
    for path in (READERS / "snapshot_run", READERS):  # the run itself, or a folder it is in
        report = json_report(str(path))
        assert not [f for f in report["findings"] if f["code"] == "CTX900" and "snapshot_run" in f["file"]]
        skipped = report["summary"]["skipped"]
        assert skipped["a snapshot run's event stream (agent events, not requests)"] == 1
        assert skipped["a snapshot loop's tool executions (their results come back in the next request)"] == 1


def test_a_log_pretty_printed_as_jq_writes_it_is_read_record_by_record():
    """`jq .` without -c writes each record over many lines, one after another: each one
    is read as its JSONL line would be, at the line where it starts; a record that is not
    JSON is a located CTX900 and reading goes on at the next record."""
    report = json_report(str(READERS / "request_log_pretty_printed_as_jq_writes_it.jsonl"))
    assert code_lines(report) == [("CTX003", 404), ("CTX004", 118), ("CTX005", 253), ("CTX008", 286), ("CTX900", 249)]
    assert report["summary"]["records"] == 5


def test_a_folder_walk_reads_a_pretty_printed_log_as_naming_it_does(tmp_path):
    """The walk looks at how each .jsonl under the folder starts, wherever ctxlint runs from."""
    log = READERS / "request_log_pretty_printed_as_jq_writes_it.jsonl"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / log.name).write_bytes(log.read_bytes())
    assert code_lines(json_report(str(tmp_path))) == code_lines(json_report(str(log)))


def test_an_error_a_router_passes_on_says_what_the_provider_behind_it_said():
    """OpenRouter answers "Provider returned error" and puts the provider's own error body
    in error.metadata.raw: the finding quotes the provider (selected alone: CTX005 reports the
    setting the error is about)."""
    report = json_report(str(FIXTURES / "rules" / "CTX005" / "fail_openrouter_o3_reasoning_effort_none.jsonl"), "--select", "CTX022")
    error = next(f for f in report["findings"] if f["code"] == "CTX022")
    assert "Provider returned error: Unsupported value: 'none' is not supported with the 'o3-2025-04-16' model" in error["message"]


def test_a_models_output_failing_the_request_is_info_not_a_request_error():
    """Groq's tool_use_failed (the model answered in text where the request required a
    tool call) says nothing wrong about the request: info, classed as model output."""
    report = json_report(str(FIXTURES / "rules" / "CTX022" / "fail_model_output_error_as_info.jsonl"))
    [finding] = report["findings"]
    assert (finding["severity"], finding["evidence"]["class"]) == ("info", "model output")


def test_tau2_bench_results_are_read_as_the_agent_saw_each_simulation():
    """τ²-bench's results file: each simulation is a trajectory of the agent's model
    (info.agent_info.llm), its `{id, name, arguments}` calls and the tool messages that
    answer them by `id` read the chat-completions way; the user simulator's own tool calls
    and results are not the agent's, and the reasoning in `raw_data` is not claimed as sent."""
    report = json_report(str(READERS / "tau2_results.json"))
    assert [s["requests"] for s in report["sessions"]] == [4, 2]
    assert run_cli("check", str(READERS / "tau2_results.json")).stdout.count("· claude-sonnet-4-5 ·") == 2
    [finding] = report["findings"]
    assert (finding["code"], finding["tool_call_id"], finding["session"].endswith("#task_id=1,trial=0")) == ("CTX001", "toolu_99", True)


def test_a_tau2_bench_trajectory_with_no_messages_makes_no_request_and_no_problem(tmp_path):
    data = orjson.loads((READERS / "tau2_results.json").read_bytes())
    data["simulations"][1]["messages"] = []
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(data))
    report = json_report(str(path))
    assert [s["requests"] for s in report["sessions"]] == [4] and [f["code"] for f in report["findings"]] == []


def test_tau2_bench_tool_calls_that_are_no_list_are_a_located_problem(tmp_path):
    data = orjson.loads((READERS / "tau2_results.json").read_bytes())
    message = next(m for m in data["simulations"][0]["messages"] if m.get("role") == "assistant" and m.get("tool_calls"))
    message["tool_calls"] = True
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(data))
    problems = [f for f in json_report(str(path))["findings"] if f["code"] == "CTX900"]
    assert len(problems) == 1 and "/tool_calls: is a boolean, expected array" in problems[0]["message"]


def test_a_bedrock_converse_cassette_is_read_as_the_messages_body_it_spells_differently():
    """Converse's typeless blocks (toolUse, toolResult, reasoningContent), its toolSpec tools
    and its additionalModelRequestFields (Claude's thinking): one session, its tool turn
    passed back with its signed reasoning, nothing to report; the model from the URL."""
    log = str(READERS / "bedrock_converse_tool_loop_with_thinking.yaml")
    report = json_report(log)
    assert ([s["requests"] for s in report["sessions"]], report["findings"]) == ([2], [])
    assert [t["prompt_tokens"] for t in report["sessions"][0]["turns"]] == [397, 547]
    assert "us.anthropic.claude-3-7-sonnet-20250219-v1:0" in run_cli("check", log).stdout


def test_a_chat_body_that_carries_converse_named_settings_is_read_as_chat(tmp_path):
    """A gateway that passes another API's settings on (Gemini's `toolConfig` and
    `generationConfig` beside chat-completions messages) sends a chat-completions body, not
    a Converse one: its string contents and tool calls are read, and its call answered by a
    user message is CTX009, not a CTX900 about Converse blocks."""
    body = {"model": "gemini-3-pro-preview", "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "generationConfig": {"responseModalities": ["TEXT"]},
            "messages": [{"role": "user", "content": "What is the capital of the country?"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "get_country:1", "type": "function", "function": {"name": "get_country", "arguments": "{}"}}]},
                         {"role": "user", "content": '{"return_value": "Mexico"}'}]}
    log = tmp_path / "gateway.jsonl"
    log.write_bytes(orjson.dumps({"session_id": "g", "request": body}) + b"\n")
    assert code_lines(json_report(str(log))) == [("CTX009", 1)]


def test_a_chat_body_with_untyped_text_parts_and_its_tools_is_chat_and_its_parts_are_located(tmp_path):
    """Parts spelled `{"text": …}` without a `type` look like Converse's blocks, but a body
    that declares its tools at the top level, as chat completions does (Converse's are in
    toolConfig), is a chat-completions body: OpenAI's API refuses such a part ("Missing
    required parameter: 'messages[0].content[0].type'"), and CTX900 says where it is."""
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}}}]
    log = tmp_path / "untyped.jsonl"
    log.write_bytes(orjson.dumps({"request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": [{"text": "Weather in Oslo?"}]}], "tools": tools}}) + b"\n"
                    + orjson.dumps({"request": {"messages": [{"role": "user", "content": [{"text": "Weather in Oslo?"}]}],
                                                "toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": {"type": "object"}}}}]}}}) + b"\n")
    found = json_report(str(log))["findings"]
    assert [(f["code"], f["line"]) for f in found] == [("CTX900", 1)]  # the second line is Converse's, and fine
    assert "/request/messages/0/content/0: 'type' is a required property" in found[0]["message"]


def test_batch_input_and_output_join_on_custom_id_in_any_order():
    ingested = read_inputs([str(READERS / "batch_output.jsonl"), str(READERS / "batch_input.jsonl")])
    assert [r.custom_id for r in ingested.records] == ["conv-1-turn-1", "conv-1-turn-2"]
    assert [r.response.usage["prompt_tokens"] for r in ingested.records] == [80, 120]
    assert not ingested.skipped


def test_anthropic_message_batches_join_their_results_on_custom_id():
    """A Message Batches request (`{"custom_id", "params"}`) gets the result of the same
    custom_id in any order: the message of one that succeeded, the error of one that failed
    (its HTTP status from its type); one canceled or expired got no answer."""
    requests, results = str(READERS / "anthropic_message_batch_requests.jsonl"), str(READERS / "anthropic_message_batch_results.jsonl")
    ingested = read_inputs([results, requests])
    responses = {record.custom_id: record.response for record in ingested.records}
    assert responses["ticket-5512"].message["content"].startswith("INV-88 was charged twice")
    assert responses["ticket-5512"].usage["prompt_tokens"] == 412
    assert (responses["ticket-5514"].status, responses["ticket-5514"].error["type"]) == (400, "invalid_request_error")
    assert [responses[name].message is None and not responses[name].failed for name in ("ticket-5515", "ticket-5516")] == [True, True]
    report = json_report(requests, results)
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX001", 3, "/messages/1/content/0")]  # its error too
    assert code_lines(json_report(requests, results, "--select", "CTX022")) == [("CTX022", 3)]
    assert report["summary"]["skipped"] == {} and report["summary"]["records"] == 5
    assert run_cli("check", "--format", "json", "--jobs", "2", requests, results).stdout == run_cli("check", "--format", "json", requests, results).stdout


def test_gemini_batch_files_join_on_their_key():
    """A Gemini Batch API input line (`{"key", "request"}`) gets the output line of its key,
    a response or an error status, in any order of the files."""
    requests, responses = str(READERS / "gemini_batch_requests.jsonl"), str(READERS / "gemini_batch_responses.jsonl")
    report = json_report(responses, requests, "--model", "gemini-2.5-flash")
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX009", 2)]  # the error that came back is its defect's
    error = json_report(responses, requests, "--model", "gemini-2.5-flash", "--select", "CTX022")["findings"]
    assert [(f["code"], f["line"]) for f in error] == [("CTX022", 2)] and "function call turn comes immediately after a user turn" in error[0]["message"]
    assert report["summary"]["token_counters"] == {"server": 2, "tiktoken:cl100k_base (approximation)": 1}
    assert report["summary"]["skipped"] == {}
    assert run_cli("check", "--format", "json", "--jobs", "2", requests, responses).stdout == run_cli("check", "--format", "json", requests, responses).stdout
    alone = json_report(responses)
    assert alone["summary"]["skipped"] == {"batch output line whose input line was not given": 3} and alone["findings"] == []


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


def test_a_request_with_its_completion_merged_in_is_read_whole(tmp_path):
    """An app that logs `{**arguments, **completion}` puts the reply's members (choices,
    usage, object) beside the messages: they are the turn's response, and a request's own
    `usage` setting (OpenRouter's `{"include": true}`) stays the request's."""
    import orjson

    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
    first = {"model": "deepseek-reasoner", "session_id": "M1", "messages": [{"role": "user", "content": "find x"}],
             "id": "chatcmpl-1", "object": "chat.completion", "created": 1764900000,
             "choices": [{"index": 0, "finish_reason": "tool_calls",
                          "message": {"role": "assistant", "content": None, "reasoning_content": "need a search", "tool_calls": [call]}}],
             "usage": {"prompt_tokens": 57, "completion_tokens": 9, "total_tokens": 66}}
    second = {"model": "deepseek-reasoner", "session_id": "M1", "usage": {"include": True}, "messages": [
        {"role": "user", "content": "find x"}, {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]}
    log = tmp_path / "merged.jsonl"
    log.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(second) + b"\n")
    merged, bare = read_inputs([str(log)]).records
    assert not {"choices", "object", "usage"} & set(merged.request) and merged.response.finish_reason == "tool_calls"
    assert bare.response is None and bare.request["usage"] == {"include": True}
    report = json_report(str(log))
    assert [(f["code"], f["line"], f["evidence"].get("seen_in")) for f in report["findings"]] == [("CTX004", 2, "turn 1 response")]
    assert report["summary"]["token_counters"]["server"] == 1


def test_a_reply_beside_the_messages_under_a_name_of_the_apps_is_read(tmp_path):
    """`completion`, `output` or any one member holding a reply body (or the assistant
    message alone) beside the messages is the reply; a setting that names an error is not."""
    import orjson

    asked = {"role": "user", "content": "Weather in Paris today?"}
    again = {"role": "user", "content": "And tomorrow?"}
    replies = {"completion": {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "It is 18C."}, "finish_reason": "stop"}]},
               "output": {"role": "assistant", "content": "It is 18C."}}
    lines = []
    for name, reply in replies.items():
        lines += [{"session_id": name, "model": "gpt-4o", "messages": [asked], name: reply},
                  {"session_id": name, "model": "gpt-4o", "messages": [asked, again]}]
    lines.append({"session_id": "m", "model": "gpt-4o", "messages": [asked], "metadata": {"error": "none", "tenant": "t1"}})
    log = tmp_path / "named.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    records = read_inputs([str(log)]).records
    assert [r.response.message["content"] if r.response else None for r in records[::2]] == ["It is 18C.", "It is 18C.", None]
    assert "completion" not in records[0].request and records[4].request["metadata"] == {"error": "none", "tenant": "t1"}
    assert code_lines(json_report(str(log))) == [("CTX016", 2), ("CTX016", 4)]


def test_a_reply_logged_as_its_text_is_the_turns_reply_and_an_error_page_is_not(tmp_path):
    """An app that logs what the model said as a plain string: that text is the reply the
    next request must carry (its reasoning inline included); a proxy's HTML error page
    in its place is no reply."""
    import orjson

    asked = {"role": "user", "content": "Weather in Paris today?"}
    lines = [{"session_id": "a", "request": {"model": "gpt-4o", "messages": [asked]}, "response": "It is 18C and sunny in Paris."},
             {"session_id": "a", "request": {"model": "gpt-4o", "messages": [asked, {"role": "user", "content": "And tomorrow?"}]}},
             {"session_id": "b", "model": "MiniMax-M2", "messages": [asked], "response": "<think>Look it up.</think>It is 18C."},
             {"session_id": "b", "model": "MiniMax-M2", "messages": [asked, {"role": "assistant", "content": "<think>Look it up.</think>It is 18C."},
                                                                     {"role": "user", "content": "And tomorrow?"}]},
             {"session_id": "c", "request": {"model": "gpt-4o", "messages": [asked]}, "response": "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"},
             {"session_id": "c", "request": {"model": "gpt-4o", "messages": [asked, {"role": "user", "content": "Hello?"}]}}]
    log = tmp_path / "texts.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    records = read_inputs([str(log)]).records
    assert [r.response.message["content"] if r.response and r.response.message else None for r in records[::2]] == [
        "It is 18C and sunny in Paris.", "<think>Look it up.</think>It is 18C.", None]
    assert code_lines(json_report(str(log))) == [("CTX003", 6), ("CTX016", 2)]


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
    assert 'reasoning_effort "medium"' in report["findings"][1]["message"]


def test_a_json_list_of_log_records_is_read_as_the_jsonl_log_would_be():
    """A log exported as one JSON array (pretty-printed): each element is read as a JSONL
    line would be, and findings point at the line where the element starts; an element
    that is no record is a located problem, and the rest is read."""
    report = json_report(str(FIXTURES / "readers" / "request_log_as_json_list.json"))
    assert code_lines(report) == [("CTX003", 406), ("CTX004", 119), ("CTX005", 255), ("CTX008", 288), ("CTX900", 250)]
    assert report["summary"]["records"] == 5


def test_an_envelope_under_other_names_is_read():
    """A logger that names the halves of an exchange its own way (request_body and
    response_body, req and resp): the one member that holds a request body is the
    request, the one that holds a reply is its response; problems point into them."""
    report = json_report(str(FIXTURES / "readers" / "envelope_under_other_names.jsonl"))
    assert located_findings(report) == [("CTX016", 2, None, "/messages/1", None),
                                        ("CTX900", 3, None, "/req/body/messages/0/role", None)]
    assert report["summary"]["records"] == 2


def _aws_frame(payload: dict, message_type: str = "event") -> bytes:
    """One AWS event-stream frame (prelude, headers, payload, CRCs) as Bedrock sends it."""
    body = orjson.dumps(payload)
    headers = b"".join(bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
                       for name, value in ((b":event-type", b"chunk"), (b":message-type", message_type.encode())))
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _messages_events(content: list[dict], stop: str, prompt_tokens: int) -> list[dict]:
    """The events of a streamed Anthropic Messages reply that carries `content`."""
    events = [{"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                                    "usage": {"input_tokens": prompt_tokens, "output_tokens": 1}}}]
    for index, block in enumerate(content):
        if block["type"] == "tool_use":
            opened, deltas = {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}]
        elif block["type"] == "thinking":
            opened = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}, {"type": "signature_delta", "signature": block["signature"]}]
        else:
            opened, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        events += [{"type": "content_block_start", "index": index, "content_block": opened},
                   *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
                   {"type": "content_block_stop", "index": index}]
    return events + [{"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 20}}, {"type": "message_stop"}]


def _bedrock_stream(content: list[dict], stop: str, prompt_tokens: int) -> bytes:
    return b"".join(_aws_frame({"bytes": base64.b64encode(orjson.dumps(event)).decode(), "p": "abcd"})
                    for event in _messages_events(content, stop, prompt_tokens))


def _sse(content: list[dict], stop: str, prompt_tokens: int) -> str:
    return "".join(f"event: {event['type']}\ndata: {orjson.dumps(event).decode()}\n\n" for event in _messages_events(content, stop, prompt_tokens))


@pytest.mark.parametrize("cloud", ("bedrock", "vertex"))
def test_a_messages_body_sent_through_a_cloud_is_read_streamed_or_not(tmp_path, cloud):
    """Bedrock's InvokeModel and Vertex AI's rawPredict take an Anthropic Messages body
    (anthropic_version bedrock-… / vertex-…), the model in the URL. Bedrock streams its
    reply as an AWS event stream whose frames carry the Messages events, Vertex as SSE.
    A tool-call turn dropped from the next request is found either way; the same loop
    kept whole is clean."""
    tools = [{"name": "weather", "description": "Weather of a place", "input_schema": {
        "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}]
    asked = {"role": "user", "content": [{"type": "text", "text": "What's the weather in Florence, Italy?"}]}
    call = {"type": "tool_use", "id": "toolu_bdrk_01", "name": "weather", "input": {"location": "Florence, Italy"}}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bdrk_01", "content": "40 C"}]}
    answer = {"type": "text", "text": "It is 40 C in Florence."}

    def cassette(name, streamed, dropped):
        second = [asked, result] if dropped else [asked, {"role": "assistant", "content": [call]}, result]
        interactions = []
        for messages, content, stop, tokens in (([asked], [call], "tool_use", 345), (second, [answer], "end_turn", 413)):
            body = {"max_tokens": 4000, "messages": messages, "system": "You are helpful.", "tools": tools,
                    "anthropic_version": "bedrock-2023-05-31" if cloud == "bedrock" else "vertex-2023-10-16"}
            if streamed and cloud == "bedrock":
                reply, kind = _bedrock_stream(content, stop, tokens), "application/vnd.amazon.eventstream"
            elif streamed:
                reply, kind = _sse(content, stop, tokens), "text/event-stream"
            else:
                reply = orjson.dumps({"id": "msg_bdrk_2", "type": "message", "role": "assistant", "content": content, "stop_reason": stop,
                                      "usage": {"input_tokens": tokens, "output_tokens": 20}}).decode()
                kind = "application/json"
            url = (f"https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-haiku-20240307-v1%3A0/{'invoke-with-response-stream' if streamed else 'invoke'}"
                   if cloud == "bedrock" else
                   f"https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:{'streamRawPredict' if streamed else 'rawPredict'}")
            interactions.append({"request": {"method": "POST", "body": orjson.dumps(body).decode(), "headers": {"Content-Type": ["application/json"]}, "url": url},
                                 "response": {"body": reply, "headers": {"Content-Type": [kind]}, "code": 200}})
        path = tmp_path / name
        path.write_text(yaml.safe_dump({"version": 2, "interactions": interactions}), encoding="utf-8")
        return str(path)

    for streamed in (False, True):
        assert code_lines(json_report(cassette(f"clean-{streamed}.yaml", streamed, False))) == []
        report = json_report(cassette(f"dropped-{streamed}.yaml", streamed, True))
        assert {f["code"] for f in report["findings"]} == {"CTX016"}
        assert report["summary"]["token_counters"] == {"server": 2} and report["sessions"][0]["requests"] == 2
    models = {record.model for record in read_inputs([cassette("model.yaml", False, False)]).records}
    assert models == {"us.anthropic.claude-3-haiku-20240307-v1:0" if cloud == "bedrock" else "claude-haiku-4-5@20251001"}


def test_a_bedrock_converse_stream_reply_is_reassembled(tmp_path):
    """ConverseStream sends its own events in AWS event-stream frames (no `bytes`): each
    block's deltas are joined, reasoning text and signature, a tool call's input JSON. The
    turn sent back with its reasoningContent block is clean; without it, CTX004."""
    tools = {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}}]}
    asked = {"role": "user", "content": [{"text": "Weather in Oslo?"}]}
    events = [{"role": "assistant"},
              {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Call the "}}},
              {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "weather tool."}}},
              {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkgIBRAB"}}},
              {"contentBlockIndex": 0},
              {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_9", "name": "weather"}}},
              {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"city\": "}}},
              {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "\"Oslo\"}"}}},
              {"contentBlockIndex": 1},
              {"stopReason": "tool_use"},
              {"usage": {"inputTokens": 120, "outputTokens": 30, "totalTokens": 150}, "metrics": {"latencyMs": 900}}]
    reasoning = {"reasoningContent": {"reasoningText": {"text": "Call the weather tool.", "signature": "EqQBCkgIBRAB"}}}
    use = {"toolUse": {"toolUseId": "tooluse_9", "name": "weather", "input": {"city": "Oslo"}}}
    result = {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_9", "content": [{"json": {"c": 3}}]}}]}
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"

    def cassette(name, turn):
        interactions = []
        for messages, reply in (([asked], b"".join(_aws_frame({**event, "p": "abcd"}) for event in events)),
                                ([asked, {"role": "assistant", "content": turn}, result], orjson.dumps(
                                    {"output": {"message": {"role": "assistant", "content": [{"text": "3 C in Oslo."}]}},
                                     "stopReason": "end_turn", "usage": {"inputTokens": 180, "outputTokens": 8}}))):
            body = {"messages": messages, "toolConfig": tools, "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
            interactions.append({"request": {"method": "POST", "body": orjson.dumps(body).decode(), "url": url},
                                 "response": {"body": reply, "headers": {"Content-Type": ["application/vnd.amazon.eventstream"]}, "code": 200}})
        path = tmp_path / name
        path.write_text(yaml.safe_dump({"version": 2, "interactions": interactions}), encoding="utf-8")
        return str(path)

    clean = json_report(cassette("kept.yaml", [reasoning, use]))
    assert (clean["findings"], [t["prompt_tokens"] for t in clean["sessions"][0]["turns"]]) == ([], [120, 180])
    assert [f["code"] for f in json_report(cassette("dropped.yaml", [use]))["findings"]] == ["CTX004"]


def test_an_aws_event_stream_exception_frame_is_an_error_and_broken_frames_are_no_stream():
    assert eventstream.events(_aws_frame({"message": "Too many requests"}, "exception")) == [{"type": "error", "error": {"message": "Too many requests"}}]
    assert eventstream.events(_aws_frame({"bytes": "e30="})[:-9]) is None  # cut short


def test_a_request_to_an_azure_deployment_is_the_deployments_model(tmp_path):
    """Azure OpenAI names the model in the URL (…/openai/deployments/o3-mini/chat/completions)
    and the body often names none: the deployment is read as the model, in a cassette and
    in an HTTP logger's envelope."""
    url = "https://acme.openai.azure.com/openai/deployments/o3-mini/chat/completions?api-version=2024-10-21"
    body = {"messages": [{"role": "user", "content": "Summarize the ticket in one line."}], "reasoning_effort": "minimal"}
    cassette = tmp_path / "azure.yaml"
    cassette.write_text(yaml.safe_dump({"version": 1, "interactions": [{"request": {"method": "POST", "uri": url, "body": orjson.dumps(body).decode()}}]}), encoding="utf-8")
    envelope = write_records(tmp_path / "azure.jsonl", [{"request": {"method": "POST", "url": url, "body": body}}])
    for log in (str(cassette), envelope):
        assert [(f["code"], f["evidence"]["profile"]) for f in json_report(log)["findings"]] == [("CTX005", "o-series")]


def test_pydantic_ai_cassettes_with_typed_bodies_are_read():
    """pydantic-ai's newer cassettes store each body as {type: json, content: ...}: the
    request and its reply are read from it (the reply's usage counts the prompt), and the
    tool-call turn the second request dropped is found."""
    report = json_report(str(FIXTURES / "readers" / "pydantic_typed_body_tool_turn_dropped.yaml"))
    assert sorted(f["code"] for f in report["findings"]) == ["CTX016"]
    assert report["summary"]["token_counters"] == {"server": 2}


def test_streamed_content_parts_are_joined_as_the_replys_text():
    """Mistral streams content as parts (thinking, then text): the text parts make the reply."""
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Okay"}]}]}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": "Look both ways."}]}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": " Then cross."}, "finish_reason": "stop"}]}]
    assert parse_response(chunks).message == {"role": "assistant", "content": "Look both ways. Then cross."}


def test_a_streamed_delta_whose_tool_calls_is_not_a_list_carries_no_calls():
    """A chunk's `tool_calls` of another type (a log cut or rewritten) is no call, not a crash."""
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi", "tool_calls": 7}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]}]
    assert parse_response(chunks).message == {"role": "assistant", "content": "Hi!"}


def test_a_reply_under_message_is_read_and_a_list_of_unknown_objects_is_no_empty_reply(tmp_path):
    """A reply logged as `{"message": {...}, "finish_reason": ...}` is that message. A list
    of objects none of which is a stream chunk says nothing of the reply: it is not an
    empty (filtered) one, which would excuse the two user messages that follow it."""
    import orjson

    assert parse_response({"message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}).message == {"role": "assistant", "content": "Hi"}
    unknown = parse_response([{"message": {"role": "assistant", "content": "Hi"}}, {"note": "cached"}])
    assert unknown.message is None and unknown.finish_reason is None and not unknown.failed
    asked = {"role": "user", "content": "Weather in Paris today?"}
    lines = [{"session_id": "a", "request": {"model": "gpt-4o", "messages": [asked]}, "response": [{"message": {"role": "assistant", "content": "Sunny."}}]},
             {"session_id": "a", "request": {"model": "gpt-4o", "messages": [asked, {"role": "user", "content": "And tomorrow?"}]}}]
    log = tmp_path / "replies.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert code_lines(json_report(str(log))) == [("CTX003", 2)]


def test_a_json_document_or_a_cassette_is_read_from_stdin():
    """`-` with --input-format json or cassette reads the whole of stdin as that document."""
    document = (FIXTURES / "readers" / "request_log_as_json_list.json").read_bytes()
    assert code_lines(json_report("-", "--input-format", "json", input=document)) == code_lines(
        json_report(str(FIXTURES / "readers" / "request_log_as_json_list.json")))
    cassette = (FIXTURES / "readers" / "pydantic_typed_body_tool_turn_dropped.yaml").read_bytes()
    assert sorted(f["code"] for f in json_report("-", "--input-format", "cassette", input=cassette)["findings"]) == ["CTX016"]


def test_gzipped_json_documents_and_ndjson_logs_are_found_in_a_directory(tmp_path):
    (tmp_path / "export.json.gz").write_bytes(gzip.compress((FIXTURES / "readers" / "request_log_as_json_list.json").read_bytes()))
    (tmp_path / "app.ndjson.gz").write_bytes(gzip.compress((FIXTURES / "demo" / "broken-agent.jsonl").read_bytes()))
    report = json_report(str(tmp_path))
    assert report["summary"]["files"] == 2 and report["summary"]["records"] == 10


def test_a_streamed_tool_call_keeps_its_thought_signature():
    """Gemini's OpenAI-compatible stream sends a call's thought signature on its first
    fragment (extra_content): the assembled call keeps it, so a request that drops it is found."""
    signed = {"google": {"thought_signature": "CiQBsig"}}
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                  {"index": 0, "id": "fc-1", "type": "function", "function": {"name": "get_weather", "arguments": ""}, "extra_content": signed}]}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]},
                                                               "finish_reason": "tool_calls"}]}]
    call = parse_response(chunks).message["tool_calls"][0]
    assert call["extra_content"] == signed and call["function"]["arguments"] == '{"city": "Paris"}'


def test_a_broken_message_in_a_trajectory_ends_what_can_be_read_of_it(tmp_path):
    """Found by fuzzing, a crash before: a trajectory's messages were not held to the
    schema. The requests before the broken message are checked (here the two user
    messages in a row of the first), the problem names its place, the next trajectory is
    read whole."""
    first = {"task_id": 1, "traj": [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Change my flight."}, {"role": "user", "content": "To Friday."},
        {"role": "assistant", "content": "Which booking?"},
        {"role": "user", "content": "ABC123"}, True,
        {"role": "assistant", "content": "Done."}]}
    second = {"task_id": 2, "traj": [
        {"role": "system", "content": "You are an airline agent."}, {"role": "user", "content": "Cancel ABC123."},
        {"role": "assistant", "content": "Cancelled."}]}
    dump = tmp_path / "trajectories.json"
    dump.write_bytes(orjson.dumps([first, second]))
    report = json_report(str(dump))
    found = sorted((f["code"], f["line"], f.get("pointer"), f["message"]) for f in report["findings"])
    assert [row[:3] for row in found] == [("CTX003", 1, "/0/traj/2"), ("CTX900", 1, "/0/traj/5")]
    assert "its requests from message 5 on are not checked" in found[1][3]
    assert report["summary"]["records"] == 2
    # pretty-printed, each finding is at the line where the message it is about starts
    dump.write_bytes(orjson.dumps([first, second], option=orjson.OPT_INDENT_2))
    text = dump.read_text().splitlines()
    report = json_report(str(dump))
    assert sorted((f["code"], f["pointer"], text[f["line"] - 1].strip(), text[f["line"]].strip()) for f in report["findings"]) == [
        ("CTX003", "/0/traj/2", "{", '"role": "user",'), ("CTX900", "/0/traj/5", "true,", '{')]
    # each request at the line of the assistant message it stands for
    assert [(s["id"].rsplit("#", 1)[1], text[t["line"] - 1].strip(), text[t["line"]].strip()) for s in report["sessions"] for t in s["turns"]] == [
        ("task_id=1", "{", '"role": "assistant",'), ("task_id=2", "{", '"role": "assistant",')]


def test_a_single_trajectory_document_points_into_itself(tmp_path):
    """A file that is one conversation (not a list of them): pointers start at its root."""
    dump = tmp_path / "run.json"
    dump.write_bytes(orjson.dumps({"messages": [{"role": "system", "content": "You help."}, {"role": "user", "content": "Hi."},
                                                {"role": "user", "content": "Anyone there?"}, {"role": "assistant", "content": "Yes."}]},
                                  option=orjson.OPT_INDENT_2))
    report = json_report(str(dump))
    assert [(f["code"], f["line"], f["pointer"], f["message_index"]) for f in report["findings"]] == [("CTX003", 11, "/messages/2", 2)]


def test_a_mini_swe_agent_trajectory_names_its_model_in_its_run_configuration(tmp_path):
    """mini-SWE-agent's .traj.json keeps the model in `info.config.model.model_name`: the
    rules that need a model's window judge every request; its closing empty user message,
    which no request sent, is no finding."""
    dump = tmp_path / "django__django-11099.traj.json"
    command = {"role": "assistant", "content": "THOUGHT: look first.\n\n```mswea_bash_command\nls\n```", "extra": {"actions": [{"command": "ls"}]}}
    output = {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>", "extra": {"returncode": 0}}
    dump.write_bytes(orjson.dumps({
        "info": {"config": {"model": {"model_name": "anthropic/claude-sonnet-4-5-20250929"}}, "exit_status": "Submitted"},
        "messages": [{"role": "system", "content": "You solve issues in a shell."}, {"role": "user", "content": "Fix the bug."},
                     command, output, command, {"role": "user", "content": "", "extra": {"exit_status": "Submitted"}}],
        "trajectory_format": "mini-swe-agent-1.1"}))
    report = json_report(str(dump))
    assert report["findings"] == []
    assert report["coverage"]["CTX006"]["judged"] == 2 and report["coverage"]["CTX006"]["not_judged"] == {}
    assert "· anthropic/claude-sonnet-4-5-20250929 ·" in run_cli("check", str(dump)).stdout


def swe_agent_trajectory() -> dict:
    """A SWE-agent run with function calling: each step's query is its history as it was."""
    def item(role: str, content: str, message_type: str, **more) -> dict:
        return {"role": role, "content": content, "agent": "main", "message_type": message_type, **more}

    history = [item("system", "You solve issues in a shell.", "system_prompt"), item("user", "Fix the off-by-one in range_sum.", "observation")]
    steps = []
    for number, command in enumerate(["ls", "cat sum.py", "submit"], start=1):
        call = {"id": f"toolu_{number}", "type": "function", "function": {"name": "bash", "arguments": orjson.dumps({"command": command}).decode()}}
        action = item("assistant", f"Step {number}: run {command}.", "action", thought=f"Step {number}", action=command, tool_calls=[call], thinking_blocks=[])
        steps.append({"action": command, "observation": "done", "response": action["content"], "thought": action["content"], "execution_time": 0.5,
                      "state": {}, "query": [dict(message) for message in history], "extra_info": {}})
        history += [action, item("tool", f"OBSERVATION:\noutput of {command}", "observation", tool_call_ids=[f"toolu_{number}"])]
    return {"trajectory": steps, "history": history, "info": {"exit_status": "submitted"},
            "replay_config": orjson.dumps({"agent": {"model": {"name": "claude-sonnet-4-20250514"}}}).decode(), "environment": "swe_main"}


def test_a_swe_agent_trajectory_is_read_step_by_step_as_the_requests_it_sent(tmp_path):
    """Each step's query, as SWE-agent sends it (`tool_call_ids` become `tool_call_id`), is
    a request at the step's line, its reply the history's action message; a requery after a
    format error (the bad output and the error message sent once, then left out) and
    history processors' rewrites (an old observation elided, cache_control) are legal."""
    legal = swe_agent_trajectory()
    legal["trajectory"][1]["query"] += [{"role": "assistant", "content": "I forgot the tool call.", "agent": "main", "message_type": "assistant"},
                                        {"role": "user", "content": "Your last output did not use any tool calls!", "agent": "main", "message_type": "user"}]
    legal["trajectory"][2]["query"][3]["content"] = "Old environment output: (1 line omitted)"
    legal["trajectory"][2]["query"][-1]["cache_control"] = {"type": "ephemeral"}
    clean = tmp_path / "django__django-11099.traj"
    clean.write_bytes(orjson.dumps(legal, option=orjson.OPT_INDENT_2))
    report = json_report(str(tmp_path))
    assert report["findings"] == [] and report["summary"]["records"] == 3
    assert report["coverage"]["CTX006"]["not_judged"] == {}  # the model from the replay configuration
    dropped = swe_agent_trajectory()
    del dropped["trajectory"][2]["query"][4]  # step 3 lost step 2's tool-call turn, and kept its result
    broken = tmp_path / "broken" / "astropy__astropy-12907.traj"
    broken.parent.mkdir()
    text = orjson.dumps(dropped, option=orjson.OPT_INDENT_2).decode()
    broken.write_text(text)
    findings = json_report(str(broken))["findings"]
    lines = text.splitlines()
    steps = [number for number, line in enumerate(lines, start=1) if line == "    {"]  # where each step of `trajectory` starts
    assert [(f["code"], f["pointer"]) for f in findings] == [("CTX016", "/trajectory/2/query/4")]
    assert findings[0]["line"] == steps[2]  # the step's line: the turn is missing, no line of its own
    orphan = json_report(str(broken), "--select", "CTX001")["findings"][0]  # the result's own line
    assert steps[2] < orphan["line"] and lines[orphan["line"] - 1] == "        {" and '"role": "tool"' in lines[orphan["line"]]


def test_a_folder_of_one_request_a_file_is_one_log(tmp_path):
    """OpenHands writes each completion to a JSON file of its own (messages, the response,
    the call's kwargs, a timestamp): each file is a logged request, not a conversation
    dump, and the folder's requests chain into their session; the third request lost the
    first user message (CTX008, in its own file); resent whole, the folder is clean."""
    system = {"role": "system", "content": "You are a travel agent. Never book red-eye flights."}
    said = [("Find me a flight to Paris on Friday.", "AF123 departs 9:00."), ("Book it.", "Booked AF123."), ("Add a hotel near the Louvre.", "Booked.")]

    def write_folder(folder, trimmed: bool) -> list[str]:
        folder.mkdir()
        history, paths = [system], []
        for turn, (question, answer) in enumerate(said):
            history = history + [{"role": "user", "content": question}]
            sent = [system, *history[2:]] if trimmed and turn == 2 else history
            path = folder / f"{1733000000 + 10 * turn}.json"
            path.write_bytes(orjson.dumps({"messages": sent, "kwargs": {"model": "gpt-4o"}, "timestamp": 1733000000 + 10 * turn, "cost": 0.001,
                                           "response": {"object": "chat.completion", "model": "gpt-4o-2024-08-06", "choices": [
                                               {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]}},
                                          option=orjson.OPT_INDENT_2))
            paths.append(str(path))
            history = history + [{"role": "assistant", "content": answer}]
        return paths

    trimmed = write_folder(tmp_path / "trimmed", True)
    report = json_report(str(tmp_path / "trimmed"))
    assert [(f["code"], f["file"], f["line"], f["turn"]) for f in report["findings"]] == [("CTX008", trimmed[2], 1, 3)]
    assert len(report["sessions"]) == 1
    write_folder(tmp_path / "whole", False)
    assert json_report(str(tmp_path / "whole"))["findings"] == []


def test_a_helicone_export_names_its_session_time_and_status(tmp_path):
    """Helicone's export: the session in `request_properties["Helicone-Session-Id"]`, the
    time in `request_created_at`, the HTTP status in `response_status` (a 429 whose body
    is the proxy's text is still the rate limit it was)."""
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Plan my trip to Rome."}]
    reply = {"object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sure."}, "finish_reason": "stop"}]}
    records = [{"request_created_at": f"2025-03-01T10:00:0{second}.000Z", "request_properties": {"Helicone-Session-Id": "trip-7"},
                "request_body": {"model": "gpt-4o", "messages": messages}, "response_status": status, "response_body": body}
               for second, status, body in ((5, 200, reply), (1, 429, "Too Many Requests"))]
    report = json_report(write_records(tmp_path / "export.jsonl", records))
    assert [session["id"] for session in report["sessions"]] == ["trip-7"]
    assert [turn["line"] for turn in report["sessions"][0]["turns"]] == [2, 1]
    assert [(f["code"], f["line"], "HTTP 429" in f["message"]) for f in report["findings"]] == [("CTX022", 2, True)]


def test_a_calls_keyword_arguments_logged_beside_its_messages_are_its_settings(tmp_path):
    """OpenHands logs a call's tools and settings as `kwargs` beside its messages: a tool
    the history calls that they do not declare is CTX014; declared, nothing."""
    call = {"id": "call_1", "type": "function", "function": {"name": "book_hotel", "arguments": "{\"city\": \"Rome\"}"}}
    messages = [{"role": "user", "content": "Book me a hotel in Rome."}, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "Booked Hotel Roma."}]
    reply = {"object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]}

    def logged(tool: str) -> str:
        path = tmp_path / f"{tool}.json"
        tools = [{"type": "function", "function": {"name": tool, "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
        path.write_bytes(orjson.dumps({"messages": messages, "response": reply, "args": [], "timestamp": 1733000000.0,
                                       "kwargs": {"model": "gpt-4o", "temperature": 0.0, "tools": tools, "tool_choice": "auto"}}))
        return str(path)

    assert code_lines(json_report(logged("get_weather"))) == [("CTX014", 1)]
    assert json_report(logged("book_hotel"))["findings"] == []


def test_an_api_page_of_records_is_read_as_its_records(tmp_path):
    """Langfuse's observations API answers `{"data": [...], "meta": {...}}`, newest first:
    the page is read as the log its records are, from its last record up, each at its line."""
    fixture = READERS / "langfuse_langchain_generations_call_turn_dropped.jsonl"
    lines = fixture.read_text(encoding="utf-8").splitlines()
    page = tmp_path / "observations.json"
    page.write_text('{"data": [\n' + ",\n".join(reversed(lines)) + '\n],\n"meta": {"page": 1, "totalItems": %d}}\n' % len(lines))
    report = json_report(str(page))
    expected = [(code, len(lines) - line + 2) for code, line in code_lines(json_report(str(fixture)))]  # line n of the log is element len - n, at its line + 2
    assert expected and code_lines(report) == expected
    assert report["read_backwards"] == [str(page)]


def test_a_transcript_one_message_a_line_is_told_for_what_it_is(tmp_path):
    log = write_records(tmp_path / "run.traj.jsonl", [{"role": "system", "content": "You help."}, {"role": "user", "content": "Hi."}])
    problems = [f["message"] for f in json_report(log)["findings"]]
    assert len(problems) == 2 and all("one chat message" in problem and "not a request" in problem for problem in problems)
    assert "(role `user`)" in problems[1]


REPLY_LINES = READERS / "reply_lines_apart_from_their_requests.jsonl"


def test_reply_lines_join_the_request_they_answer():
    """A logger that writes each reply on a line of its own: the reply joins its request by
    request id (in any order among concurrent sessions) or, naming none, as its session's
    latest; a reply that answers no logged request is counted as skipped; one that names
    neither request nor session is CTX900."""
    report = json_report(str(REPLY_LINES))
    assert code_lines(report) == [("CTX016", 7), ("CTX900", 12)]
    assert report["summary"]["records"] == 6
    assert list(report["summary"]["skipped"].values()) == [1]
    assert code_lines(json_report(str(REPLY_LINES), "--jobs", "2")) == code_lines(report)


def test_a_joined_reply_is_what_the_next_request_must_carry(tmp_path):
    """Drop the reply that a request-id-only line (4) and a session-only line (9) logged
    from the next requests: each is CTX016 there, which only the joined reply can tell."""
    lines = REPLY_LINES.read_text(encoding="utf-8").splitlines()
    fifth, tenth = orjson.loads(lines[4]), orjson.loads(lines[9])
    del fifth["request"]["messages"][2]  # the assistant's tool call, whose result stays: CTX001 too
    del tenth["request"]["messages"][2]
    lines[4], lines[9] = orjson.dumps(fifth).decode(), orjson.dumps(tenth).decode()
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = code_lines(json_report(str(log)))
    assert ("CTX016", 5) in found and ("CTX016", 10) in found


OLLAMA = READERS / "ollama_api_chat.jsonl"


def test_ollama_native_chat_bodies_are_read_in_chat_completions_terms():
    """Ollama's /api/chat: calls without ids and with object arguments, tool results that
    name only their function, `thinking` for reasoning, replies plain or streamed one object
    per line. The legal tool loop is clean (no CTX010, CTX027); a dropped tool-call turn and a
    result that answers nothing are reported as for any provider."""
    report = json_report(str(OLLAMA))
    assert sorted(code_lines(report)) == [("CTX001", 6), ("CTX016", 5)]


def test_ollama_thinking_is_the_turns_reasoning(tmp_path):
    """On a model whose reasoning must come back (GLM-4.6 served by Ollama), thinking sent
    back changed is CTX015, named and pointed at as Ollama names it."""
    text = OLLAMA.read_text(encoding="utf-8").replace("qwen3:8b", "glm-4.6:cloud").splitlines()
    text[1] = text[1].replace("Two cities, two calls.", "Two cities.")
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(text) + "\n", encoding="utf-8")
    first = json_report(str(log))["findings"][0]
    assert (first["code"], first["line"], first["pointer"]) == ("CTX015", 2, "/messages/1/thinking")
    assert "sends back thinking changed" in first["message"]


def test_an_ollama_cassette_is_read_by_its_endpoint(tmp_path):
    """A cassette of /api/chat is read, even a plain chat with nothing only Ollama writes."""
    def interaction(messages, reply):
        return {"request": {"method": "POST", "uri": "http://localhost:11434/api/chat",
                            "body": orjson.dumps({"model": "llama3.2", "messages": messages, "stream": False}).decode()},
                "response": {"status": {"code": 200, "message": "OK"},
                             "body": {"string": orjson.dumps({"model": "llama3.2", "message": reply, "done": True, "done_reason": "stop"}).decode()}}}
    hello = {"role": "user", "content": "Hello"}
    hi = {"role": "assistant", "content": "Hi! How can I help?"}
    cassette = tmp_path / "ollama.yaml"
    cassette.write_text(yaml.safe_dump({"interactions": [
        interaction([hello], hi),
        interaction([hello, {"role": "user", "content": "Tell me a joke."}], {"role": "assistant", "content": "..."})]}), encoding="utf-8")
    report = json_report(str(cassette))
    assert report["summary"]["records"] == 2 and report["summary"]["skipped"] == {}
    assert sorted(f["code"] for f in report["findings"]) == ["CTX016"]


def test_ollama_think_false_turns_the_thinking_off(tmp_path):
    """`think` is Ollama's thinking switch: the GLM tool loop with its thinking left out is
    CTX004 while thinking, and legal with `think: false`."""
    records = [orjson.loads(line) for line in OLLAMA.read_text(encoding="utf-8").replace("qwen3:8b", "glm-4.6:cloud").splitlines()[:3]]
    for record in records:
        for message in record["request"]["messages"]:
            message.pop("thinking", None)
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(record) for record in records) + b"\n")
    assert code_lines(json_report(str(log))) == [("CTX004", 2)]
    for record in records:
        record["request"]["think"] = False
    log.write_bytes(b"\n".join(orjson.dumps(record) for record in records) + b"\n")
    assert code_lines(json_report(str(log))) == []


def test_other_api_calls_an_app_logs_beside_its_chat_requests_are_skipped_by_what_they_are(tmp_path):
    """An app's request log holds its embeddings, moderation, completion and image calls too.
    They have no conversation: counted as skipped, by what they are, logged in an envelope or
    bare, not reported as broken chat requests (CTX900), which would fail a CI gate on legal traffic. A Responses API body
    beside them, whose `input` is items, is still read."""
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Summarize the retrieved passage about tides."}]}
    log = write_records(tmp_path / "app.jsonl", [
        {"request": {"model": "text-embedding-3-small", "input": "How do tides work?"},
         "response": {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}]}},
        {"request": {"model": "my-encoder", "input": ["passage one", "passage two"], "encoding_format": "float"}},
        {"model": "bge-m3", "input": [[101, 2054, 102]]},
        {"request": {"model": "omni-moderation-latest", "input": "How do tides work?"}},
        {"request": {"model": "gpt-3.5-turbo-instruct", "prompt": "Tides are", "max_tokens": 16}},
        {"request": {"model": "dall-e-3", "prompt": "a tide chart", "size": "1024x1024"}},
        {"request": chat, "response": {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Tides follow the moon."}, "finish_reason": "stop"}]}},
        {"request": {"model": "gpt-4.1", "input": [{"role": "user", "content": "And spring tides?"}]}},
    ])
    result = run_cli("check", "--format", "json", log)
    report = orjson.loads(result.stdout)
    assert result.exit_code == 0 and report["findings"] == [] and report["summary"]["records"] == 2
    assert report["summary"]["skipped"] == {"not a chat call: a completions or image body (a `prompt`, no `messages`)": 2,
                                            "not a chat call: a moderation body": 1, "not a chat call: an embeddings body": 3}


def test_litellm_logging_payload_settings_and_failures_are_read():
    """LiteLLM's StandardLoggingPayload keeps the request's settings in `model_parameters`
    and logs a failed call as `status: failure` with `error_str`. Its tools and thinking
    switch are the request's (CTX013 on line 2, GLM-4.6 legal with thinking off on line 3,
    CTX005 pointing into model_parameters on line 4), the failure is the reply (CTX006 on
    line 5), and Anthropic-form tools of a Claude deployment are left out (line 6 clean).
    Its embedding and image calls keep their input under `messages` too: they are skipped,
    by call type, not reported as broken chat requests."""
    report = json_report(str(READERS / "litellm_logging_payload.jsonl"))
    assert [(f["code"], f["line"], f.get("pointer")) for f in report["findings"]] == [
        ("CTX013", 2, "/messages/1/tool_calls/0/function/arguments"), ("CTX005", 4, "/model_parameters/thinking/type"), ("CTX006", 5, None)]
    assert report["summary"]["records"] == 6
    assert report["summary"]["skipped"] == {"not chat-completions: LiteLLM aembedding call": 1, "not chat-completions: LiteLLM aimage_generation call": 1}


def test_a_litellm_failure_logged_without_a_response_is_its_error(tmp_path):
    """Found by mutation, a crash before: a failed call whose payload has no `response` member."""
    line = orjson.loads((READERS / "litellm_logging_payload.jsonl").read_bytes().splitlines()[4])
    del line["response"]
    report = json_report(write_records(tmp_path / "failure.jsonl", [line]))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX006", 1)]


def test_litellm_spend_log_rows_are_read_with_their_messages_stored_as_text():
    """LiteLLM's spend logs (a `LiteLLM_SpendLogs` export) store `messages` and `response` as
    JSON text: they are decoded, the rows put in the order of their `startTime` (the second
    turn's row is written first) and joined by `session_id`, so the reply turn 2 lost is
    reported there (CTX003, CTX016 on line 2); a row that stored no prompt is counted as
    skipped, not reported as a broken request."""
    report = json_report(str(READERS / "litellm_spend_logs_reply_lost.jsonl"))
    assert [(f["code"], f["line"], f["turn"]) for f in report["findings"]] == [("CTX016", 2, 2)]
    assert report["summary"]["skipped"] == {"a log row that stored no prompt (`messages` empty: LiteLLM's store_prompts_in_spend_logs off)": 1}


def test_a_messages_member_holding_text_that_is_no_json_list_is_a_located_problem(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "gpt-4o", "messages": "[{\\"role\\": \\"user\\""}\n', encoding="utf-8")
    report = json_report(str(log))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/messages")]


def test_a_reply_line_written_before_its_request_joins_it(tmp_path):
    """Threads sharing a log can write a reply before the request line it answers: it
    waits for its request, and the next request must carry it (CTX016 when it does not)."""
    lines = REPLY_LINES.read_text(encoding="utf-8").splitlines()
    lines[0], lines[2] = lines[2], lines[0]  # B's reply before A's request, two lines before its own request
    lines[1], lines[2] = lines[2], lines[1]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = json_report(str(log))
    assert code_lines(report) == [("CTX016", 7), ("CTX900", 12)]
    assert list(report["summary"]["skipped"].values()) == [1]


def test_a_reply_line_with_its_own_event_id_joins_by_session(tmp_path):
    """Loggers give every line an `id` of its own: a reply line whose `id` is not its
    request's still joins its session's latest request (an `id` names no request); a
    `request_id` that names another request does not."""
    request = {"id": "evt-1", "session_id": "s", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}
    reply = {"id": "evt-2", "session_id": "s", "response": {"id": "c1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}]}}
    follow = {"id": "evt-3", "session_id": "s", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]}}
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(line) for line in (request, reply, follow)) + b"\n")
    report = json_report(str(log))
    assert code_lines(report) == [("CTX016", 3)] and report["summary"]["skipped"] == {}
    other = [{**request, "request_id": "r1"}, {**reply, "request_id": "r9"}, {**follow, "request_id": "r2"}]
    log.write_bytes(b"\n".join(orjson.dumps(line) for line in other) + b"\n")
    report = json_report(str(log))
    assert code_lines(report) == [("CTX003", 3)] and list(report["summary"]["skipped"].values()) == [1]


def test_a_rotated_log_s_files_take_their_places_oldest_first():
    """Only a rotated log's own files move, among the places they had; the rest keep theirs."""
    from ctxlint.ingest.sources import Source, oldest_first

    given = ["a/app.jsonl", "notes.jsonl", "a/app.jsonl.1", "b/app.jsonl.3.gz", "a/app.jsonl.10.gz", "a/app.jsonl-20261204",
             "a/app.jsonl-20261203.gz", "b/app.jsonl"]
    ordered = [source.path for source in oldest_first([Source(path, "jsonl") for path in given])]
    assert ordered == ["a/app.jsonl.10.gz", "notes.jsonl", "a/app.jsonl.1", "b/app.jsonl.3.gz", "a/app.jsonl-20261203.gz",
                       "a/app.jsonl-20261204", "a/app.jsonl", "b/app.jsonl"]


WRAPPERS = {
    "cloud_logging": lambda record: {"insertId": "x1", "timestamp": "2026-12-04T10:00:00Z", "severity": "INFO", "jsonPayload": record},
    "docker_json_file": lambda record: {"log": orjson.dumps(record).decode() + "\n", "stream": "stdout", "time": "2026-12-04T10:00:00Z"},
    "structured_logger": lambda record: {"level": "info", "msg": "llm call", "data": record},
}


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_record_a_logger_wrapped_is_read_as_the_record(tmp_path, wrapper):
    """The demo log with each line wrapped as a logging system writes it: the same findings
    at the same lines, in the same sessions (their keys inside the wrapper)."""
    demo = FIXTURES / "demo" / "broken-agent.jsonl"
    records = [orjson.loads(line) for line in demo.read_bytes().splitlines()]
    report = json_report(write_records(tmp_path / "wrapped.jsonl", [WRAPPERS[wrapper](record) for record in records]))
    plain = json_report(str(demo))
    assert located_findings(report) == located_findings(plain)
    assert [s["id"] for s in report["sessions"]] == [s["id"] for s in plain["sessions"]]


def test_a_wrapped_record_takes_the_line_s_key_and_time_and_its_problems_point_into_the_member(tmp_path):
    first = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Two rooms in Lyon, please."}]},
             "response": {"choices": [{"message": {"role": "assistant", "content": "Booked."}, "finish_reason": "stop"}]}}
    second = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Two rooms in Lyon, please."},
                                                          {"role": "user", "content": "And breakfast."}]}}
    lines = [{"session_id": "s9", "time": "2026-12-04T10:00:05Z", "data": second},  # written before the earlier request
             {"session_id": "s9", "time": "2026-12-04T10:00:00Z", "data": first},
             {"level": "info", "data": {"request": {"model": "gpt-4o", "messages": [{"role": 5}]}}},
             {"level": "info", "a": {"request": {"model": "gpt-4o", "messages": []}}, "b": {"request": {"model": "gpt-4o", "messages": []}}}]
    report = json_report(write_records(tmp_path / "wrapped.jsonl", lines))
    assert [(f["code"], f["line"], f["session"], f["pointer"]) for f in report["findings"]] == [
        ("CTX016", 1, "s9", "/messages/1"),
        ("CTX900", 3, None, "/data/request/messages/0/role"), ("CTX900", 4, None, None)]
    assert "schema at /data/request/messages/0/role:" in report["findings"][1]["message"]
    assert report["findings"][2]["message"].startswith("not a known record shape")


def test_jobs_give_the_same_report_on_wrapped_records_keyed_inside_the_wrapper(tmp_path):
    """Lines are shared out by the key their bytes show; a wrapped record's key is inside
    its member, so the run goes on in one process rather than lose a session."""
    lines = []
    for n in range(60):
        session = f"s{n % 7}"
        history = [{"role": "user", "content": f"Plan day {k} of trip {session}."} for k in range(1 + n // 7)]
        messages = [message for k, user in enumerate(history) for message in (user, {"role": "assistant", "content": f"Day {k} planned."})][:-1]
        lines.append({"jsonPayload": {"session_id": session, "request": {"model": "gpt-4o", "messages": messages},
                                      "response": {"choices": [{"message": {"role": "assistant", "content": f"Day {n // 7} planned."}, "finish_reason": "stop"}]}}})
    log = write_records(tmp_path / "wrapped.jsonl", lines)
    single, double = (run_cli("check", log, "--format", "json", "--jobs", jobs) for jobs in ("1", "2"))
    assert single.stdout == double.stdout and orjson.loads(single.stdout)["summary"]["sessions"] == 7


@pytest.mark.parametrize("packing", ["bz2", "xz"])
def test_a_log_compressed_with_bzip2_or_xz_reads_as_the_plain_log(tmp_path, packing):
    import bz2
    import lzma

    demo = FIXTURES / "demo" / "broken-agent.jsonl"
    packed = tmp_path / "logs" / f"demo.jsonl.{packing}"
    packed.parent.mkdir()
    packed.write_bytes((bz2 if packing == "bz2" else lzma).compress(demo.read_bytes()))
    plain = located_findings(json_report(str(demo)))
    assert located_findings(json_report(str(packed))) == plain
    assert located_findings(json_report(str(packed.parent))) == plain  # found in a folder
    assert located_findings(json_report("-", input=packed.read_bytes())) == plain


@pytest.mark.parametrize(("magic", "said"), [
    (b"\x28\xb5\x2f\xfd", "zstd-compressed; ctxlint reads plain, gzip, bzip2 and xz files: unpack it first (zstd -dc "),
    (b"PK\x03\x04", "a zip archive; ctxlint reads plain, gzip, bzip2 and xz files: unpack it first (unzip -p "),
])
def test_a_packing_ctxlint_cannot_read_is_one_error_naming_it_not_a_flood_of_ctx900(tmp_path, magic, said):
    packed = tmp_path / "logs" / "requests.jsonl.zst"
    packed.parent.mkdir()
    packed.write_bytes(magic + bytes(range(256)) * 40)
    for given in (str(packed), str(packed.parent)):
        result = run_cli("check", "--format", "json", given)
        assert result.exit_code == 2 and said in result.stderr
        assert orjson.loads(result.stdout)["findings"] == []


def test_a_wrapped_record_is_read_beside_a_member_that_only_looks_like_one(tmp_path):
    """A logger's metadata member that reads as a broken reply does not hide the record."""
    line = {"level": "info", "meta": {"response": {"choices": []}},
            "data": {"session_id": "z", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Two rooms in Lyon."},
                                                                                  {"role": "user", "content": "And breakfast."}]}}}
    report = json_report(write_records(tmp_path / "wrapped.jsonl", [line]))
    assert [(f["code"], f["session"]) for f in report["findings"]] == [("CTX003", "z")]


def test_a_har_recording_is_read_as_a_cassette_its_page_traffic_counted_as_skipped():
    """A browser's HAR export (Playwright's here) of a web app that calls DeepSeek: the page,
    its script and its own API are no model calls; a streamed reply is reassembled from the recorded
    event stream, a base64 one decoded; the request that lost the reasoning is flagged at
    the line of its entry, the one that kept it is clean."""
    dropped = json_report(str(READERS / "playwright_har_streamed_reasoning_dropped.har"))
    assert code_lines(dropped) == [("CTX004", 143)]
    assert dropped["summary"]["skipped"] == {"HTTP request without a body (no model call)": 2, "HTTP request that is no model call": 1}
    verbatim = json_report(str(READERS / "playwright_har_streamed_verbatim.har"))
    assert code_lines(verbatim) == [] and verbatim["summary"]["records"] == 2
    first, second = read_inputs([str(READERS / "playwright_har_streamed_verbatim.har")]).records
    assert first.response.message["tool_calls"][0]["function"]["arguments"] == '{"city": "Hangzhou"}'
    assert first.response.usage["prompt_tokens"] == 120
    assert second.response.message["content"] == "Yes, take an umbrella: rain is likely (80%)."


def test_a_har_file_saved_as_json_or_under_a_name_no_reader_claims_is_read_alike(tmp_path):
    text = (READERS / "playwright_har_streamed_reasoning_dropped.har").read_text(encoding="utf-8")
    for name in ("capture.json", "capture.txt", "capture"):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert code_lines(json_report(str(tmp_path / name))) == [("CTX004", 143)], name


def test_a_file_no_reader_claims_is_read_as_json_lines_when_it_holds_them(tmp_path):
    lines = (FIXTURES / "demo" / "broken-agent.jsonl").read_text(encoding="utf-8")
    (tmp_path / "capture.txt").write_text(lines, encoding="utf-8")
    assert code_lines(json_report(str(tmp_path / "capture.txt"))) == code_lines(json_report(str(FIXTURES / "demo" / "broken-agent.jsonl")))


def test_vcr_cassettes_in_json_and_rubys_http_interactions_are_read():
    """vcrpy's JSON serializer, and Ruby's VCR (`http_interactions`, a body in
    `base64_string`), each flag the tool result sent as a user message at its interaction."""
    as_json = json_report(str(READERS / "vcrpy_json_serializer_result_as_user_message.json"))
    assert code_lines(as_json) == [("CTX009", 47)]
    assert as_json["summary"]["skipped"] == {"HTTP request without a body (no model call)": 1}  # GET /v1/models
    assert code_lines(json_report(str(READERS / "ruby_vcr_call_answered_by_a_user_message.yml"))) == [("CTX009", 23)]
    records = read_inputs([str(READERS / "ruby_vcr_call_answered_by_a_user_message.yml")]).records
    assert records[1].response.message == {"role": "assistant", "content": "I can check."}


def test_a_nock_recording_is_read_by_its_scope_and_path():
    report = json_report(str(READERS / "nock_recording_clean.json"))
    assert code_lines(report) == [] and report["summary"]["records"] == 2 and report["summary"]["skipped"] == {}
    assert [record.line for record in read_inputs([str(READERS / "nock_recording_clean.json")]).records] == [2, 72]


def test_a_nock_recording_with_raw_headers_that_are_not_names_is_read(tmp_path):
    calls = orjson.loads((READERS / "nock_recording_clean.json").read_bytes())
    calls[0]["rawHeaders"] = [{"a": 1}, "x", "content-type", "application/json", None]
    log = tmp_path / "nock.json"
    log.write_bytes(orjson.dumps(calls))
    report = json_report(str(log))
    assert code_lines(report) == [] and report["summary"]["records"] == 2


def test_a_cohere_v2_chat_interaction_is_read_as_chat_completions():
    """pydantic-ai hands a conversation from OpenAI's Responses API to Cohere's v2 chat,
    which sends chat-completions messages: one session across the two, read whole, the
    prompt tokens from Cohere's `usage.tokens`."""
    report = json_report(str(READERS / "cohere_v2_chat_after_an_openai_responses_turn.yaml"))
    assert code_lines(report) == [] and report["summary"]["skipped"] == {}
    assert [(s["requests"]) for s in report["sessions"]] == [2]
    assert report["summary"]["token_counters"] == {"server": 2}
    cohere = read_inputs([str(READERS / "cohere_v2_chat_after_an_openai_responses_turn.yaml")]).records[1]
    assert cohere.model == "command-r7b-12-2024" and cohere.response.message["content"][0]["text"].startswith("Crossing a river")


def test_a_cassette_recorded_with_its_request_body_stubbed_says_so(tmp_path):
    """A test suite that records only the model and settings (llm-anthropic's thinking
    round-trip cassettes): each interaction is a located CTX900 that says what the body
    holds, not a hint about log envelopes."""
    stub = {"interactions": [{"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                                          "body": '{"model": "claude-haiku-4-5-20251001", "stream": true, "thinking": {"type": "enabled"}}'},
                              "response": {"status": {"code": 200}, "body": {"string": "{}"}}}]}
    cassette = tmp_path / "stubbed.yaml"
    cassette.write_text(yaml.safe_dump(stub), encoding="utf-8")
    report = json_report(str(cassette))
    assert code_lines(report) == [("CTX900", 2)]
    assert "sends no `messages` (only `model`, `stream`, `thinking`)" in report["findings"][0]["message"]


# -- LangSmith runs ---------------------------------------------------------------------------------

LANGSMITH_SKIPS = {"LangSmith chain run (no model call)": 3, "LangSmith tool run (no model call)": 3}


def test_a_langsmith_export_is_read_by_thread_not_by_project():
    """list_runs gives every run of a project (its session_id), newest first: the model
    runs are the requests, grouped by the thread their metadata names and put in time order;
    the agent's answer the thread's memory lost is found at the run that left it out."""
    log = str(READERS / "langsmith_runs_answer_dropped_from_thread_memory.jsonl")
    report = json_report(log)
    assert located_findings(report) == [("CTX016", 3, None, "/inputs/messages/0/4", None)]
    assert sorted((s["id"], s["requests"]) for s in report["sessions"]) == [("thread-7", 4), ("thread-8", 2)]
    assert report["summary"]["skipped"] == LANGSMITH_SKIPS
    # the run's project is no conversation, whatever the key: a trace's runs are one
    by_trace = json_report(log, "--session-key", "trace_id")
    assert sorted(s["requests"] for s in by_trace["sessions"]) == [2, 2, 2] and by_trace["findings"] == []
    two = run_cli("check", log, "--format", "json", "--jobs", "2")
    assert two.stdout == run_cli("check", log, "--format", "json").stdout


def test_a_langsmith_trace_tree_is_read_run_by_run():
    """A trace as read_run(load_child_runs=True) gives it: its model runs are the requests,
    each at the line its trace starts on, pointing into its run. ChatAnthropic sends its
    thinking blocks as the message's content: one left out in the tool loop is CTX004."""
    dropped = json_report(str(READERS / "langsmith_trace_tree_thinking_dropped.json"))
    assert located_findings(dropped) == [("CTX004", 2, 1, "/child_runs/2/inputs/messages/0/1", "toolu_01")]
    clean = json_report(str(READERS / "langsmith_trace_tree_clean.json"))
    assert clean["findings"] == [] and clean["coverage"]["CTX004"]["not_judged"] == {}
    assert [s["requests"] for s in clean["sessions"]] == [3]
    assert clean["summary"]["skipped"] == {"LangSmith chain run (no model call)": 1, "LangSmith tool run (no model call)": 2}


def test_langsmith_runs_of_sdk_calls_failures_and_prompts():
    """A run traced around an SDK call keeps the body it sent, read as that body; a failed
    run's error is the provider's answer; a prompt traced as text is skipped; a message of
    no role is a located problem."""
    report = json_report(str(READERS / "langsmith_sdk_traced_runs.jsonl"))
    assert code_lines(report) == [("CTX016", 2), ("CTX900", 4)]  # its message-order error is the lost reply's
    assert "HTTP 400" in json_report(str(READERS / "langsmith_sdk_traced_runs.jsonl"), "--select", "CTX022")["findings"][0]["message"]
    assert report["findings"][1]["pointer"] == "/inputs/messages/0/0" and "(RemoveMessage)" in report["findings"][1]["message"]
    assert report["summary"]["skipped"] == {"LangSmith model run recorded without its messages (a prompt as text)": 1}


def _deepseek_run(messages, reply, minute):
    kind = {"human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}
    return {"id": f"run-{minute}", "run_type": "llm", "start_time": f"2026-11-30T10:{minute:02d}:00", "trace_id": "t", "session_id": "project",
            "extra": {"invocation_params": {"model": "deepseek-reasoner", "_type": "openai-chat"}, "metadata": {"thread_id": "d"}},
            "inputs": {"messages": [[{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind[m["type"]]], "kwargs": m}
                                     for m in messages]]},
            "outputs": {"generations": [[{"message": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
                                                      "kwargs": reply}}]]}}


def test_reasoning_an_integration_keeps_beside_the_message_is_not_judged(tmp_path):
    """langchain-openai keeps DeepSeek's reasoning_content in additional_kwargs and leaves it
    out of what it sends: a LangChain message with or without it says nothing of the wire."""
    user = {"type": "human", "content": "Weather in Paris?"}
    call = {"type": "ai", "content": "", "additional_kwargs": {"reasoning_content": "Need the tool."},
            "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]}
    result = {"type": "tool", "content": "18C", "tool_call_id": "call_1"}
    log = write_records(tmp_path / "runs.jsonl", [
        _deepseek_run([user], call, 1),
        _deepseek_run([user, {**call, "additional_kwargs": {}}, result], {"type": "ai", "content": "18C."}, 2)])
    report = json_report(log)
    assert report["findings"] == []
    assert report["coverage"]["CTX004"]["not_judged"] == {"the log does not record the reasoning sent back": 2}


def test_a_braintrust_llm_span_is_read_with_the_parameters_it_keeps_as_metadata():
    """Braintrust's wrap_openai logs the messages as the span's input, the call's parameters
    (model, tools, settings) as its metadata and the reply's choices as its output: a tool
    exchange kept without the turn that made the calls is found, the prompt's size is the
    span's own count."""
    report = json_report(str(READERS / "braintrust_llm_spans_call_turn_dropped.jsonl"))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX016", 3, "/input/4")]
    assert [s["requests"] for s in report["sessions"]] == [3] and report["summary"]["token_counters"] == {"server": 3}
    assert report["coverage"]["CTX006"]["not_judged"] == {}  # the model is read from the metadata


def test_langsmith_messages_plain_or_serialized_read_alike(tmp_path):
    """A run's messages as plain dicts (LangChain's `type`, or a `role` with LangChain's
    tool calls) read as their serialized form does."""
    user = {"type": "human", "content": "Weather in Paris?"}
    call = {"type": "ai", "content": "", "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}]}
    result = {"type": "tool", "content": "18C", "tool_call_id": "call_1"}
    answer = {"type": "ai", "content": "18C."}
    roles = {"human": "user", "ai": "assistant", "tool": "tool"}

    def as_role(message):
        return {("role" if name == "type" else name): (roles[value] if name == "type" else value) for name, value in message.items()}

    def runs(form):
        return [_deepseek_run([user], call, 1) | {"inputs": {"messages": [[form(user)]]}},
                _deepseek_run([user], answer, 2) | {"inputs": {"messages": [[form(user), form(call), form(result)]]}},
                _deepseek_run([user], answer, 3) | {"inputs": {"messages": [[form(user), form(result)]]}}]
    def as_data(message):  # messages_to_dict
        return {"type": message["type"], "data": {name: value for name, value in message.items() if name != "type"}}

    def as_type_role(message):  # LangChain's type as the role
        return {("role" if name == "type" else name): value for name, value in message.items()}
    forms = (("plain", lambda m: m), ("roles", as_role), ("data", as_data), ("type_roles", as_type_role))
    found = [code_lines(json_report(write_records(tmp_path / f"{name}.jsonl", runs(form)))) for name, form in forms]
    assert found == [[("CTX001", 3)]] * 4
    assert code_lines(json_report(write_records(tmp_path / "lc.jsonl", [_deepseek_run([user], call, 1), _deepseek_run([user, call, result], answer, 2),
                                                                         _deepseek_run([user, result], answer, 3)]))) == [("CTX001", 3)]


def test_a_langfuse_generation_of_a_langchain_app_keeps_langchains_messages():
    """Langfuse's LangChain handler records the messages as LangChain holds them (tool calls
    as `name`/`args`, the provider's in `additional_kwargs`) and a tool-call reply as its
    additional_kwargs: read as what was sent, the call turn left out is found at its line,
    and the prompt's size is the handler's count with the cached tokens. The export's other
    observations (the graph's spans, an agent's, an event) are no model calls, though a
    span's input holds the agent's messages: skipped, by type."""
    report = json_report(str(READERS / "langfuse_langchain_generations_call_turn_dropped.jsonl"))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX016", 8, "/input/4")]
    assert report["summary"]["skipped"] == {"Langfuse AGENT observation (no model call)": 1, "Langfuse EVENT observation (no model call)": 1,
                                            "Langfuse SPAN observation (no model call)": 2}
    assert [s["requests"] for s in report["sessions"]] == [4] and report["summary"]["token_counters"] == {"server": 4}
    assert report["coverage"]["CTX004"]["not_judged"] == {"the log does not record the reasoning sent back": 2}


def test_langchain_messages_of_no_role_are_located_problems(tmp_path):
    call = {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c"}]}
    log = write_records(tmp_path / "gen.jsonl", [
        {"model": "gpt-4o", "input": [{"role": ["user"], "content": "hi"}, call], "output": "ok", "traceId": "t"},
        {"model": "gpt-4o", "input": [{"content": "hi"}, call], "output": "ok", "traceId": "t"}])
    report = json_report(log)
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/input/0"), ("CTX900", 2, "/input/0")]
    assert "no role ctxlint knows" in report["findings"][0]["message"]


def test_an_agents_sdk_generation_span_is_read_with_its_reply():
    """The OpenAI Agents SDK exports a model call as a `trace.span` whose span_data holds
    the messages as `input` and the reply as the one message of `output`: read one level
    down as a traced generation (not as a Responses API body), its reply and its count
    kept; the export's other lines (its trace header, agent and function spans) are skipped."""
    log = str(READERS / "agents_sdk_generation_spans_call_turn_dropped.jsonl")
    report = json_report(log)
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX001", 7, "/span_data/input/2")]
    assert report["summary"]["token_counters"] == {"server": 3} and report["coverage"]["CTX016"]["not_judged"] == {}
    assert report["summary"]["skipped"] == {"OpenAI Agents SDK trace header (no model call)": 1,
                                            "OpenAI Agents SDK agent span (no model call)": 1,
                                            "OpenAI Agents SDK function span (no model call)": 2}
    records = read_inputs([log]).records
    assert [record.response.message["tool_calls"][0]["id"] for record in records[:2]] == ["call_lookup", "call_refund"]


def test_weave_calls_are_read_as_the_exchanges_they_record():
    """Weave records a call of a provider's client with the body it sent as `inputs` and the
    reply as `output`; the app's own ops (the agent, its tools) are no model calls."""
    report = json_report(str(READERS / "weave_calls_result_sent_as_user_message.jsonl"))
    assert code_lines(report) == [("CTX009", 4)]
    assert report["summary"]["skipped"] == {"Weave call of op get_weather (no model call)": 1, "Weave call of op run_agent (no model call)": 1}
    assert [s["id"] for s in report["sessions"]] == ["0193-trace"]


def test_the_v2_apis_capital_run_types_and_thread_id_are_read(tmp_path):
    user, answer = {"type": "human", "content": "hi"}, {"type": "ai", "content": "Hello."}
    runs = [_deepseek_run([user], answer, 1) | {"run_type": "LLM", "thread_id": "th-1", "extra": {"invocation_params": {"model": "gpt-4o"}}},
            _deepseek_run([user], answer, 2) | {"run_type": "CHAIN", "inputs": {}, "thread_id": "th-1"}]
    report = json_report(write_records(tmp_path / "v2.jsonl", runs))
    assert [(s["id"], s["requests"]) for s in report["sessions"]] == [("th-1", 1)]
    assert report["summary"]["skipped"] == {"LangSmith chain run (no model call)": 1}


@pytest.mark.parametrize(("error", "codes"), [
    ("openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}", [("CTX022", 1)]),
    ("CancelledError()", []),  # the app gave up on the call: no answer came
    ("KeyError('messages')\nTraceback (most recent call last): ...", []),
])
def test_a_failed_langsmith_model_run_is_the_providers_answer_only_when_the_provider_gave_it(tmp_path, error, codes):
    run = _deepseek_run([{"type": "human", "content": "hi"}], {"type": "ai", "content": ""}, 1) | {"error": error, "outputs": None}
    assert code_lines(json_report(write_records(tmp_path / "runs.jsonl", [run]))) == codes


def test_an_mlflow_trace_is_read_span_by_span():
    """MLflow keeps a chat model span's request body and reply as JSON text
    (mlflow.spanInputs, mlflow.spanOutputs): read as that exchange, in the session the
    trace's metadata names; its agent's and tool's spans are skipped by type."""
    report = json_report(str(READERS / "mlflow_trace_call_turn_dropped.json"))
    assert [(f["code"], f["session"], f["pointer"]) for f in report["findings"]] == [("CTX016", "chat-77", "/messages/2")]
    assert report["summary"]["skipped"] == {"MLflow AGENT span (no model call)": 1, "MLflow TOOL span (no model call)": 1}
    assert report["summary"]["token_counters"] == {"server": 2}
    one_span = {"name": "c", "span_id": "s1", "attributes": {"mlflow.spanType": '"CHAT_MODEL"', "mlflow.spanInputs": '"hello"'}}
    assert json_report("-", input=orjson.dumps(one_span))["summary"]["skipped"] == {"MLflow model-call span whose inputs are no chat request body": 1}


def test_an_apps_own_record_with_a_run_type_is_not_taken_for_a_langsmith_run(tmp_path):
    line = {"run_type": "nightly", "trace_id": "t1", "inputs": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}
    report = json_report(write_records(tmp_path / "own.jsonl", [line]))
    assert report["summary"]["records"] == 1 and report["summary"]["skipped"] == {} and report["findings"] == []


def test_posthog_ai_generation_events_are_read_and_its_other_events_skipped(tmp_path):
    """PostHog keeps a model call's messages, tools, reply and counts in a $ai_generation
    event's properties: read as a traced generation in its $ai_session_id, findings pointing
    into $ai_input; the product's other events and the $ai_span events are skipped."""
    log = str(READERS / "posthog_ai_events_call_turn_dropped.jsonl")
    report = json_report(log)
    assert [(f["code"], f["line"], f["session"], f["pointer"]) for f in report["findings"]] == [
        ("CTX016", 5, "billing-81", "/properties/$ai_input/3")]
    assert report["summary"]["skipped"] == {"PostHog $ai_span event (no model call)": 1, "PostHog $pageview event (no model call)": 1}
    assert report["summary"]["token_counters"] == {"server": 3}
    by_user = json_report(log, "--session-key", "distinct_id")
    assert [s["id"] for s in by_user["sessions"]] == ["user-81"]
    failed = {"event": "$ai_generation", "distinct_id": "u", "properties": {"$ai_model": "gpt-4o", "$ai_input": [{"role": "user", "content": "hi"}],
                                                                            "$ai_is_error": True, "$ai_error": "Rate limit reached (429)"}}
    assert code_lines(json_report(write_records(tmp_path / "failed.jsonl", [failed]))) == [("CTX022", 1)]


def test_a_traced_generation_of_anthropic_blocks_is_read_as_a_messages_body(tmp_path):
    """A trace that keeps Claude's messages as the Messages API's blocks (tool_use,
    tool_result) is read as that body, its findings pointing into it."""
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]}
    user = {"role": "user", "content": "Weather in Paris?"}
    lines = [{"model": "claude-sonnet-4-5", "input": [user, call, result], "output": "18C.", "traceId": "t"},
             {"event": "$ai_generation", "distinct_id": "u",
              "properties": {"$ai_model": "claude-sonnet-4-5", "$ai_input": [user, result], "$ai_session_id": "s",
                             "$ai_output_choices": [{"role": "assistant", "content": [{"type": "text", "text": "18C."}]}]}}]
    report = json_report(write_records(tmp_path / "claude.jsonl", lines))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX001", 2, "/messages/1/content/0")]


def test_settings_logged_apart_from_a_messages_body_are_its_settings(tmp_path):
    """A trace that keeps Claude's messages as blocks and the call's settings apart
    (Langfuse's modelParameters): the thinking switch is the request's, as in a chat body."""
    story = [{"role": "user", "content": "Write a long story about a lighthouse keeper."},
             {"role": "assistant", "content": [{"type": "thinking", "thinking": "Three parts.", "signature": "EqQBCkYIBRgCKkBx"},
                                               {"type": "text", "text": "Part one."}]}]
    lines = [{"model": "claude-sonnet-4-5", "input": story, "output": "Part two.", "traceId": "on",
              "modelParameters": {"max_tokens": 16000, "thinking": {"type": "enabled", "budget_tokens": 4000}}},
             {"model": "claude-fable-5", "input": story[:1], "output": "Part one.", "traceId": "off",
              "modelParameters": {"thinking": {"type": "disabled"}}}]
    report = json_report(write_records(tmp_path / "apart.jsonl", lines))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX005", 2, "/modelParameters/thinking/type")]


def test_a_switch_a_trace_does_not_show_is_unknown_not_the_models_default(tmp_path):
    """A traced generation keeps the call's settings as far as its tracer took them: GLM's
    thinking switch sent in extra_body is not there, so a tool-call turn without reasoning is
    no defect unless the model's reply showed reasoning the app then dropped; a Claude
    prefill with thinking blocks is not judged against a switch the trace does not show;
    CTX014 cannot tell a forced output tool from a lost tool list."""
    user = {"role": "user", "content": "Weather in Paris?"}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "18C"}
    reasoned = {**call, "reasoning_content": "Call the tool."}

    def generation(session, messages, output):
        return {"model": "glm-4.6", "input": messages, "output": output, "sessionId": session}
    lines = [generation("off", [user], call), generation("off", [user, call, result], "18C."),
             generation("on", [user], reasoned), generation("on", [user, call, result], "18C.")]
    report = json_report(write_records(tmp_path / "glm.jsonl", lines))
    assert [(f["code"], f["line"], f["session"]) for f in report["findings"]] == [("CTX004", 4, "on")]
    assert report["coverage"]["CTX014"]["not_judged"] == {"the log does not record the request's settings": 4}
    prefill = {"model": "claude-sonnet-4-5", "sessionId": "p", "output": "Part two.", "input": [
        {"role": "user", "content": "Write a story."},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Three parts.", "signature": "EqQB"}, {"type": "text", "text": "Part one."}]}]}
    assert json_report(write_records(tmp_path / "claude.jsonl", [prefill]))["findings"] == []


BEDROCK_LOG = READERS / "bedrock_invocation_logs_thinking_dropped.jsonl"
BEDROCK_SKIPS = {"Bedrock InvokeModel call with no messages list (a text or embedding input body)": 1,
                 "Bedrock InvokeModel call whose request body went to S3 (inputBodyS3Path), not into the log": 1,
                 "failed Bedrock ConverseStream call (ThrottlingException) logged without its request body": 1}


def _bedrock_lines() -> list[dict]:
    return [orjson.loads(line) for line in BEDROCK_LOG.read_bytes().splitlines()]


def test_bedrock_invocation_logs_are_read_as_the_calls_they_record():
    """An invocation log keeps the body sent (a Converse request, or Anthropic's own body
    for InvokeModel), the model beside it, the reply (a stream's events too) and the
    session the app tagged the call with in requestMetadata. The Converse tool loop sent
    its call back without the thinking Claude returned with it: CTX004 where it starts,
    pointing into the body. Calls with no chat messages, bodies delivered to S3 and a
    failed call logged without its body are skipped, each saying why."""
    report = json_report(str(BEDROCK_LOG))
    assert [(f["code"], f["line"], f["session"], f["pointer"], f["tool_call_id"]) for f in report["findings"]] == [
        ("CTX004", 3, "support-42", "/messages/1", "tooluse_kXq2")]
    assert [(s["id"], s["requests"]) for s in report["sessions"]] == [("support-42", 2), ("support-45", 2)]
    assert report["summary"]["skipped"] == BEDROCK_SKIPS
    assert report["summary"]["token_counters"] == {"server": 4}
    assert [turn["window"] for turn in report["sessions"][0]["turns"]] == [200_000, 200_000]  # the model the log names beside the body


def test_a_bedrock_tool_loop_that_sends_its_thinking_back_is_clean(tmp_path):
    lines = _bedrock_lines()
    lines[2]["input"]["inputBodyJson"]["messages"][1] = lines[0]["output"]["outputBodyJson"]["output"]["message"]
    report = json_report(write_records(tmp_path / "kept.jsonl", lines))
    assert report["findings"] == [] and report["summary"]["records"] == 4


def test_bedrock_invocation_logs_as_cloudwatch_hands_them_out(tmp_path):
    """The same records from CloudWatch Logs: a Logs Insights export (JSON lines, or a JSON
    list, of `@timestamp` and `@message`), `aws logs filter-log-events` output and a Logs
    Insights query's results."""
    lines = _bedrock_lines()
    wrapped = [{"@timestamp": line["timestamp"], "@message": orjson.dumps(line).decode()} for line in lines]
    insights = write_records(tmp_path / "insights.jsonl", wrapped)
    download = tmp_path / "insights.json"
    download.write_bytes(orjson.dumps(wrapped, option=orjson.OPT_INDENT_2))
    events = tmp_path / "events.json"
    events.write_bytes(orjson.dumps({"events": [{"logStreamName": "aws/bedrock/modelinvocations", "timestamp": 1764579600000 + index,
                                                  "message": message["@message"], "eventId": str(index)} for index, message in enumerate(wrapped)],
                                     "searchedLogStreams": []}, option=orjson.OPT_INDENT_2))
    query = tmp_path / "query.json"  # `aws logs get-query-results`: each row a list of its fields
    query.write_bytes(orjson.dumps({"results": [[{"field": name, "value": value} for name, value in row.items()] for row in wrapped],
                                    "statistics": {"recordsMatched": 7.0}, "status": "Complete"}, option=orjson.OPT_INDENT_2))
    # the third record starts on line 3 of the JSON lines, 10 of the list (each element takes four lines
    # after the opening "["), 15 of the events (each takes six lines after the two that open the document),
    # 23 of the query's results (each row takes ten)
    for log, line in ((insights, 3), (str(download), 10), (str(events), 15), (str(query), 23)):
        report = json_report(log)
        assert [(f["code"], f["line"], f["session"]) for f in report["findings"]] == [("CTX004", line, "support-42")], log
        assert report["summary"]["skipped"] == BEDROCK_SKIPS


def test_a_json_list_of_nothing_a_log_holds_is_skipped_as_a_file(tmp_path):
    (tmp_path / "other.json").write_text('[{"a": 1}, {"b": 2}]')
    report = json_report(str(tmp_path / "other.json"))
    assert report["summary"]["skipped"] == {"JSON file that holds neither log records nor agent trajectories": 1}
    assert report["findings"] == []


def test_bedrock_bodies_an_export_wrote_as_text_read_as_the_bodies(tmp_path):
    """An export that writes the log's JSON columns as text (Athena, Glue) keeps the same
    calls; text that is no JSON is a CTX900 at the body."""
    lines = _bedrock_lines()
    for line in lines:
        for half, member in (("input", "inputBodyJson"), ("output", "outputBodyJson")):
            if member in line.get(half, {}):
                line[half][member] = orjson.dumps(line[half][member]).decode()
    report = json_report(write_records(tmp_path / "text.jsonl", lines))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX004", 3, "/messages/1")]
    assert report["summary"]["skipped"] == BEDROCK_SKIPS and report["summary"]["token_counters"] == {"server": 4}
    lines[0]["input"]["inputBodyJson"] = '{"messages": [tru'
    broken = json_report(write_records(tmp_path / "broken.jsonl", lines[:1]))
    assert [(f["code"], f["pointer"]) for f in broken["findings"]] == [("CTX900", "/input/inputBodyJson")]


def test_a_bedrock_session_key_path_and_jobs_read_the_same_sessions():
    by_path = json_report(str(BEDROCK_LOG), "--session-key", "requestMetadata.session_id")
    assert [(s["id"], s["requests"]) for s in by_path["sessions"]] == [("support-42", 2), ("support-45", 2)]
    single = run_cli("check", "--format", "json", str(BEDROCK_LOG))
    parallel = run_cli("check", "--format", "json", "--jobs", "2", str(BEDROCK_LOG))
    assert parallel.stdout == single.stdout


@pytest.mark.parametrize(("error", "codes", "severity"), [
    ("ThrottlingException", [("CTX022", 1)], "info"),  # a rate limit: retrying is right
    ("ValidationException", [("CTX022", 1)], "error"),
])
def test_a_failed_bedrock_call_logged_with_its_body_is_the_providers_answer(tmp_path, error, codes, severity):
    line = _bedrock_lines()[0]
    del line["output"]
    line["errorCode"] = error
    report = json_report(write_records(tmp_path / "failed.jsonl", [line]))
    assert code_lines(report) == codes and report["findings"][0]["severity"] == severity


def test_converse_stream_events_kept_under_their_names_are_one_reply():
    """boto3 yields ConverseStream's events each under its event's name; an app that logs
    them so logged the reply they make."""
    events = [{"messageStart": {"role": "assistant"}},
              {"contentBlockDelta": {"delta": {"text": "Let me look."}, "contentBlockIndex": 0}},
              {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tu_1", "name": "get_order"}}, "contentBlockIndex": 1}},
              {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"order_id": '}}, "contentBlockIndex": 1}},
              {"contentBlockDelta": {"delta": {"toolUse": {"input": '"7"}'}}, "contentBlockIndex": 1}},
              {"messageStop": {"stopReason": "tool_use"}},
              {"metadata": {"usage": {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39}, "metrics": {"latencyMs": 400}}}]
    response = parse_response(events)
    assert response.finish_reason == "tool_calls" and response.usage["prompt_tokens"] == 30
    assert response.message["content"] == "Let me look."
    assert [(call["id"], call["function"]["name"], orjson.loads(call["function"]["arguments"])) for call in response.message["tool_calls"]] == [
        ("tu_1", "get_order", {"order_id": "7"})]


@pytest.mark.parametrize(("sent_back", "codes"), [("whole", []), ("without its thinking", [("CTX004", 2)])])
def test_claude_trace_pairs_read_the_stream_it_kept_as_text(tmp_path, sent_back, codes):
    """claude-trace logs each call as a pair of HTTP halves; a streamed reply's SSE is kept
    as text in the response's `body_raw` (it has no `body`). It is the reply."""
    body = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32000, "stream": True, "thinking": {"type": "enabled", "budget_tokens": 4000},
            "tools": [{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "List the files."}]}]}
    thinking = {"type": "thinking", "thinking": "Run ls.", "signature": "EqQBsig"}
    call = {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}
    kept = [thinking, call] if sent_back == "whole" else [call]
    second = {**body, "messages": [*body["messages"], {"role": "assistant", "content": kept},
                                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]}]}
    pairs = [{"request": {"timestamp": 1764583200000 + step, "method": "POST", "url": "https://api.anthropic.com/v1/messages?beta=true",
                          "headers": {}, "body": sent},
              "response": {"timestamp": 1764583201000 + step, "status_code": 200, "headers": {"content-type": "text/event-stream"},
                           "body_raw": _sse([thinking, call], "tool_use", 90)}, "logged_at": "2026-12-01T10:00:00.000Z"}
             for step, sent in ((0, body), (5000, second))]
    report = json_report(write_records(tmp_path / "trace.jsonl", pairs))
    assert code_lines(report) == codes
    assert report["summary"]["token_counters"] == {"server": 2}  # the usage of each reply's stream
    if codes:
        assert "without the thinking blocks the model returned for it (turn 1 response)" in report["findings"][0]["message"]


def test_dashscope_bodies_are_read_as_the_chat_bodies_they_stand_for(tmp_path):
    """The DashScope SDK sends its messages under `input` and its settings under
    `parameters`; its replies keep their choices under `output`. A tool result whose call
    turn was dropped, a thinking-only model sent enable_thinking false and the error that
    came back are found, pointing into the body as sent; the multimodal session (content
    parts named by their member, a reply's parts as its text) is clean."""
    log = READERS / "dashscope_generation_tool_turn_dropped.jsonl"
    report = json_report(str(log))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [
        ("CTX016", 2, "/input/messages/2"), ("CTX005", 5, "/parameters/enable_thinking")]  # and the error it got
    assert code_lines(json_report(str(log), "--ignore", "CTX005"))[-1] == ("CTX022", 5)
    assert report["summary"]["token_counters"] == {"server": 4, "tiktoken:cl100k_base (approximation)": 1}
    lines = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    other_names = [{"req": line["request"], "resp": line["response"], "session_id": line["session_id"]} for line in lines]
    bare = [{**line["request"], "response": line["response"], "session_id": line["session_id"]} for line in lines]
    for variant, written in (("named", other_names), ("bare", bare)):
        again = json_report(write_records(tmp_path / f"{variant}.jsonl", written))
        assert [(f["code"], f["line"], f["pointer"]) for f in again["findings"]] == [(f["code"], f["line"], f["pointer"]) for f in report["findings"]]
    # a logger's own halves, `input` holding a whole chat body (its model inside), stay an envelope
    halves = [{"input": {"model": "qwen-plus", "messages": line["request"]["input"]["messages"]}, "output": line["response"]} for line in lines[:2]]
    assert [(f["code"], f["pointer"]) for f in json_report(write_records(tmp_path / "halves.jsonl", halves))["findings"]] == [
        ("CTX016", "/messages/2")]  # pointing into the body it holds


def _dashscope_chunk(content: str = "", reasoning: str = "", calls: list | None = None, finish: str = "null") -> dict:
    message = {"role": "assistant", "content": content, "reasoning_content": reasoning} | ({"tool_calls": calls} if calls else {})
    return {"output": {"choices": [{"message": message, "finish_reason": finish}]}, "request_id": "r1",
            "usage": {"input_tokens": 120, "output_tokens": 9, "total_tokens": 129}}


def _call_part(arguments: str, name: str = "") -> list:
    return [{"index": 0, "id": "call_1" if name else "", "type": "function", "function": {"name": name, "arguments": arguments}}]


@pytest.mark.parametrize("mode", ["incremental_output", "each chunk the reply so far"])
def test_a_dashscope_stream_is_one_reply_either_way_it_streams(mode):
    """With `incremental_output` each chunk holds what it adds; without, the reply so far
    (DashScope's default). Both, as SSE text, make the same reply."""
    incremental = [_dashscope_chunk(reasoning="查一下"), _dashscope_chunk(reasoning="订单。"), _dashscope_chunk(content="好的，"),
                   _dashscope_chunk(calls=_call_part('{"order_id": ', "query_order")), _dashscope_chunk(calls=_call_part('"8812"}')),
                   _dashscope_chunk(finish="tool_calls")]
    so_far = [_dashscope_chunk(reasoning="查一下"), _dashscope_chunk(reasoning="查一下订单。"), _dashscope_chunk(content="好的，", reasoning="查一下订单。"),
              _dashscope_chunk(content="好的，", reasoning="查一下订单。", calls=_call_part('{"order_id": ', "query_order")),
              _dashscope_chunk(content="好的，", reasoning="查一下订单。", calls=_call_part('{"order_id": "8812"}', "query_order")),
              _dashscope_chunk(content="好的，", reasoning="查一下订单。", calls=_call_part('{"order_id": "8812"}', "query_order"), finish="tool_calls")]
    chunks = incremental if mode == "incremental_output" else so_far
    text = "".join(f"id:{index}\nevent:result\n:HTTP_STATUS/200\ndata:{orjson.dumps(chunk).decode()}\n\n" for index, chunk in enumerate(chunks, 1))
    response = parse_response(text)
    assert response.finish_reason == "tool_calls" and response.usage == {"prompt_tokens": 120}
    assert (response.message["content"], response.message["reasoning_content"]) == ("好的，", "查一下订单。")
    assert [(call["id"], call["function"]["name"], call["function"]["arguments"]) for call in response.message["tool_calls"]] == [
        ("call_1", "query_order", '{"order_id": "8812"}')]


def test_a_dashscope_body_that_breaks_the_schema_is_located_in_the_body_sent(tmp_path):
    """Found by mutation, a crash before: a DashScope body's messages are checked as any
    chat body's are, the problem pointing where the body sent has it."""
    lines = [{"model": "qwen-plus", "input": {"messages": [{"role": "user", "content": "hi"}, True]}, "parameters": {"result_format": "message"}},
             {"model": "qwen-plus", "input": {"messages": [{"role": "user", "content": "hi"}]}, "parameters": {"tools": "all"}}]
    report = json_report(write_records(tmp_path / "broken.jsonl", lines))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/input/messages/1"), ("CTX900", 2, "/parameters/tools")]


def test_a_streamed_block_that_opens_with_no_text_string_still_makes_a_reply():
    """Found by mutation, a crash before: a content block opened with a `text` that is not a string."""
    events = _messages_events([{"type": "text", "text": "fine"}], "end_turn", 10)
    events[1]["content_block"]["text"] = True
    assert parse_response(events).message["content"] == "fine"


def test_a_streamed_block_with_an_index_that_is_no_number_still_makes_a_reply():
    """Found by mutation, crashes before: a block event whose `index` is not a number, a
    message_start whose usage is not an object."""
    events = _messages_events([{"type": "text", "text": "fine"}], "end_turn", 10)
    events[1]["index"] = "0"
    assert parse_response(events).message is not None
    events = _messages_events([{"type": "text", "text": "fine"}], "end_turn", 10)
    events[0]["message"]["usage"] = "n/a"
    assert parse_response(events).message["content"] == "fine"


def test_a_dashscope_status_that_is_no_http_status_is_not_taken(tmp_path):
    """Found by mutation, a crash before: a reply's `status_code` past any HTTP status."""
    line = {"model": "qwen-plus", "input": {"messages": [{"role": "user", "content": "hi"}]},
            "response": {"status_code": "STATUS", "request_id": "r", "output": {"choices": [{"message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}}}
    (tmp_path / "status.jsonl").write_text(orjson.dumps(line).decode().replace('"STATUS"', str(2 ** 64 - 1)) + "\n")
    report = json_report(str(tmp_path / "status.jsonl"))
    assert report["findings"] == [] and report["summary"]["records"] == 1


def test_agents_session_transcripts_are_skipped_saying_what_they_are(tmp_path):
    """Claude Code's and Codex's own session files record the conversation as stored, not
    the requests sent: counted as skipped with that reason (CTX900s and unanswered reply
    lines before), in one process or several."""
    claude = [{"type": "summary", "summary": "Fixing the build", "leafUuid": "a1"},
              {"type": "user", "message": {"role": "user", "content": "Hello"}, "uuid": "u1", "parentUuid": None, "sessionId": "s1",
               "isSidechain": False, "timestamp": "2026-12-01T10:00:00Z"},
              {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1", "requestId": "req_1",
               "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 2}}}]
    codex = [{"timestamp": "2026-12-01T10:00:00Z", "type": "session_meta", "payload": {"id": "s2", "cwd": "/w"}},
             {"timestamp": "2026-12-01T10:00:01Z", "type": "response_item",
              "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}}]
    logs = [write_records(tmp_path / "claude.jsonl", claude), write_records(tmp_path / "codex.jsonl", codex)]
    report = json_report(*logs)
    assert report["findings"] == [] and report["summary"]["records"] == 0
    assert report["summary"]["skipped"] == {
        "Claude Code session transcript line: the conversation as stored, not a request sent (log requests with claude-trace or a proxy)": 3,
        "Codex session rollout line: the conversation as stored, not a request sent (log requests with a proxy)": 2}
    assert run_cli("check", "--format", "json", "--jobs", "2", *logs).stdout == run_cli("check", "--format", "json", *logs).stdout
    # a line that holds a request is read as one, whatever else it names
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    lines = [{"sessionId": "s3", "parentUuid": None, "type": "user", "request": body},
             {"sessionId": "s4", "parentUuid": None, "type": "assistant", "body": body}]
    assert json_report(write_records(tmp_path / "own.jsonl", lines))["summary"]["records"] == 2


def test_deprecated_function_calling_is_judged_as_tool_calling(tmp_path):
    """A request that declares `functions` is read as tool calling: the call turn the app
    dropped from its history is found; the same call made twice, and a function result
    the app injected with no call before it (that API took one), are legal. Its
    calls' arguments are checked where they are, under `function_call`."""
    log = READERS / "legacy_function_calling_call_turn_dropped.jsonl"
    report = json_report(str(log))
    assert [(f["code"], f["line"], f["session"]) for f in report["findings"]] == [("CTX016", 3, "wx-1")]
    lines = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    broken = lines[1]
    broken["request"]["messages"][2]["function_call"]["arguments"] = '{"city": "Bos'
    unanswered = lines[2]
    unanswered["request"]["messages"] = [*lines[1]["request"]["messages"][:3], {"role": "user", "content": "{\"temp_c\": 22}"}]
    found = json_report(write_records(tmp_path / "broken.jsonl", [broken, unanswered]))
    assert [(f["code"], f["line"], f["pointer"]) for f in found["findings"] if f["code"] in ("CTX012", "CTX009")] == [
        ("CTX012", 1, "/messages/2/function_call/arguments"), ("CTX009", 2, "/messages/3")]


def test_deprecated_function_calls_named_by_no_string_are_read_not_crashed_on(tmp_path):
    """Found by mutation, crashes before: a function call or result whose name is no
    string, and a `functions` member that is no list (CTX013 read it as one)."""
    call = {"role": "assistant", "content": None, "function_call": {"name": {"n": 1}, "arguments": "{}"}}
    result = {"role": "function", "name": {"n": 1}, "content": "r"}
    lines = [{"model": "gpt-4-0613", "functions": [{"name": "f"}], "messages": [{"role": "user", "content": "hi"}, call, result]},
             {"model": "gpt-4-0613", "functions": True, "tools": [{"type": "function", "function": {"name": "f"}}],
              "messages": [{"role": "user", "content": "hi"}]}]
    report = json_report(write_records(tmp_path / "odd.jsonl", lines))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/messages/1/function_call/name")]
    assert report["summary"]["records"] == 1


def test_a_streamed_deprecated_function_call_is_the_replys_call(tmp_path):
    """The deprecated API streams its one call as `delta.function_call` pieces (they were
    lost, the reply read as empty); the next request that leaves the call out drops it."""
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "function_call": {"name": "get_weather", "arguments": ""}}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"function_call": {"arguments": '{"city": '}}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"function_call": {"arguments": '"Oslo"}'}}}]},
              {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "function_call"}]}]
    response = parse_response(chunks)
    assert response.message["function_call"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    functions = [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    asked = {"role": "user", "content": "Weather in Oslo?"}
    call = {"role": "assistant", "content": None, "function_call": response.message["function_call"]}
    answered = {"role": "function", "name": "get_weather", "content": '{"temp": 3}'}
    lines = [{"session_id": "s", "request": {"model": "gpt-4-0613", "functions": functions, "messages": [asked]}, "response": chunks},
             {"session_id": "s", "request": {"model": "gpt-4-0613", "functions": functions, "messages": [asked, call, answered]}}]
    assert json_report(write_records(tmp_path / "kept.jsonl", lines))["findings"] == []
    lines[1]["request"]["messages"] = [asked, {"role": "user", "content": "Weather in Oslo, please?"}]
    assert code_lines(json_report(write_records(tmp_path / "dropped.jsonl", lines))) == [("CTX016", 2)]


def _kong_entry(step: int, body: dict | None, reply: dict | None, layout: str = "3.9") -> dict:
    """A Kong log entry of a call its ai-proxy plugin proxied (`layout` 3.8: the request
    payload beside the plugins, counts as `prompt_token`), or of no AI call (body None)."""
    entry = {"workspace": "w1", "upstream_uri": "/v1/chat/completions", "latencies": {"kong": 2, "proxy": 900}, "started_at": 1787113201719 + step * 1000,
             "request": {"id": f"req{step}", "uri": "/chat", "method": "POST", "headers": {"content-type": "application/json"}},
             "response": {"status": 200, "headers": {"content-type": "application/json"}}, "service": {"name": "llm"}}
    if body is None:
        return entry
    plugin = {"meta": {"request_model": "gpt-4o", "provider_name": "openai"}, "usage": {"prompt_tokens": 100 + step, "completion_tokens": 10}}
    if layout == "3.8":
        plugin["usage"] = {"prompt_token": 100 + step, "completion_token": 10}
        entry["ai"] = {"payload": {"request": orjson.dumps(body).decode()}, "proxy": {**plugin, "payload": {"response": orjson.dumps(reply).decode()}}}
    elif layout == "no payloads":
        entry["ai"] = {"proxy": plugin}
    else:
        entry["ai"] = {"proxy": {**plugin, "payload": {"request": orjson.dumps(body).decode(), "response": orjson.dumps(reply).decode()}}}
    return entry


@pytest.mark.parametrize("layout", ["3.9", "3.8"])
def test_kong_ai_gateway_entries_are_read_as_the_calls_they_log(tmp_path, layout):
    """A Kong log entry's `request` is the HTTP exchange's metadata, not a body (a CTX900
    before); the call is in the AI plugin's payloads, JSON text, the model in its meta."""
    ask = [{"role": "user", "content": "Where is order 55?"}]
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_k1", "type": "function", "function": {"name": "lookup", "arguments": '{"id": "55"}'}}]}
    first = {"choices": [{"index": 0, "message": call, "finish_reason": "tool_calls"}]}
    second = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Shipped."}, "finish_reason": "stop"}]}
    result = {"role": "tool", "tool_call_id": "call_k1", "content": "shipped"}
    entries = [_kong_entry(0, {"messages": ask}, first, layout), _kong_entry(1, {"messages": [*ask, result]}, second, layout),
               _kong_entry(2, None, None), _kong_entry(3, {"messages": ask}, first, "no payloads")]
    report = json_report(write_records(tmp_path / "kong.jsonl", entries))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX016", 2, "/messages/1")]
    assert report["summary"]["skipped"] == {"Kong Gateway log entry of no AI call": 1,
                                            "Kong AI Gateway log entry without its payloads (the AI plugin's log_payloads off)": 1}
    assert report["summary"]["token_counters"] == {"server": 2} and report["sessions"][0]["turns"][0]["window"] == 128_000
    entries[1] = _kong_entry(1, {"messages": [*ask, call, result]}, second, layout)
    assert json_report(write_records(tmp_path / "kept.jsonl", entries))["findings"] == []
    broken = _kong_entry(0, {"messages": ask}, first)
    broken["ai"]["proxy"]["payload"]["request"] = '{"messages": [tru'
    problem = json_report(write_records(tmp_path / "broken.jsonl", [broken]))["findings"]
    assert [(f["code"], f["pointer"]) for f in problem] == [("CTX900", "/ai/proxy/payload/request")]


def test_an_apps_own_log_with_an_ai_member_is_not_taken_for_kongs(tmp_path):
    line = {"ai": {"proxy": {"usage": {"prompt_tokens": 9}}}, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}
    report = json_report(write_records(tmp_path / "own.jsonl", [line]))
    assert report["summary"]["records"] == 1 and report["summary"]["skipped"] == {}


def test_a_kong_log_file_reads_its_ai_calls_and_skips_the_rest():
    report = json_report(str(READERS / "kong_ai_gateway_entries_call_turn_dropped.jsonl"))
    assert code_lines(report) == [("CTX016", 2)]
    assert report["summary"]["records"] == 2 and sum(report["summary"]["skipped"].values()) == 2


def test_a_snapshot_runs_own_files_read_on_their_own_are_skipped_as_in_their_folder(tmp_path):
    """An Agent TARS run's event stream and a loop's tool executions, given by themselves
    rather than in their snapshot folder, are what they are there (CTX900s before)."""
    events = [{"id": "cc8b", "type": "user_message", "timestamp": 1756136674506, "content": "How's the weather today?"},
              {"id": "a89e", "type": "assistant_message", "timestamp": 1756136674525, "content": "Locating you…", "finishReason": "tool_calls",
               "toolCalls": [{"id": "call_1", "type": "function", "function": {"name": "getCurrentLocation", "arguments": "{}"}}]},
              {"id": "3dc1", "type": "tool_call", "timestamp": 1756136674526, "toolCallId": "call_1", "name": "getCurrentLocation", "arguments": {}},
              {"id": "2743", "type": "tool_result", "timestamp": 1756136674527, "toolCallId": "call_1", "name": "getCurrentLocation", "content": {"location": "Boston"}}]
    stream = tmp_path / "event-stream.jsonl"
    stream.write_bytes(orjson.dumps(events, option=orjson.OPT_INDENT_2))  # as the run writes it: one indented array
    calls = tmp_path / "tool-calls.jsonl"
    calls.write_bytes(orjson.dumps([{"toolCallId": "call_1", "name": "getCurrentLocation", "args": {}, "result": {"location": "Boston"}, "executionTime": 1}],
                                   option=orjson.OPT_INDENT_2))
    report = json_report(str(stream), str(calls))
    assert report["findings"] == []
    assert report["summary"]["skipped"] == {"a snapshot run's event stream (agent events, not requests)": 4,
                                            "a snapshot loop's tool executions (their results come back in the next request)": 1}


def test_an_apps_debug_log_of_the_openai_sdk_is_read_among_its_own_lines():
    """A Python app's log at DEBUG: the SDK prints each request's options (the body in
    json_data), the app logs its tools' calls and a traceback. The tool result sent without
    the call turn is found at its request's line; nothing the app logged of its own is a finding."""
    report = json_report(str(READERS / "openai_sdk_debug_log_call_turn_dropped.log"))
    assert code_lines(report) == [("CTX001", 6)]
    assert report["summary"]["records"] == 2
    assert report["summary"]["skipped"] == {TEXT_LINE: 9, OTHER_OBJECT: 2}


def test_a_go_apps_logfmt_log_is_read_from_the_json_its_quoted_values_hold():
    """Go's slog text handler quotes a value that holds JSON as a Go string (`body="{\\"model\\": …}"`):
    the pairs of such a line are its record, the session key read from them, the JSON read
    from the quote; the app's other lines are its own."""
    report = json_report(str(READERS / "go_slog_text_log_call_turn_dropped.log"))
    assert code_lines(report) == [("CTX001", 3)]
    assert [session["id"] for session in report["sessions"]] == ["s-42"]
    assert report["summary"]["skipped"] == {TEXT_LINE: 2}


def test_a_logfmt_value_cut_short_or_holding_no_request_is_told_apart(tmp_path):
    lines = (READERS / "go_slog_text_log_call_turn_dropped.log").read_text(encoding="utf-8").splitlines()
    log = tmp_path / "app.log"
    log.write_text("\n".join([*lines, lines[2][:300], 'time=2026-12-07T10:01:00Z level=DEBUG msg=config value="{\\"retries\\": 3}"',
                              'time=2026-12-07T10:01:01Z level=INFO msg=request body="{\\"messages\\": [1}"']) + "\n", encoding="utf-8")
    report = json_report(str(log))
    problems = [(finding["line"], finding["message"]) for finding in report["findings"] if finding["code"] == "CTX900"]
    assert problems == [(6, "the quoted logfmt value `body` (from column 73) has no closing quote: the line was cut short"),
                        (8, "the JSON in the quoted logfmt value `body` (from column 50) does not parse: unexpected character, expected ',' or ']'")]
    assert report["summary"]["skipped"] == {TEXT_LINE: 2, OTHER_OBJECT: 1}


def test_a_go_string_reads_the_escapes_json_has_no_form_for():
    from ctxlint.ingest.text_logs import _go_string

    assert _go_string('"bell\\a tab\\v byte\\x41 rune\\U0001F600 quote\\" slash\\\\x41"') == 'bell\a tab\v byteA rune\U0001F600 quote" slash\\x41'
    assert _go_string('"unterminated') is None
