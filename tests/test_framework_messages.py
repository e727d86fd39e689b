"""Logs of apps that record the messages they hand their framework, in its own spelling:
the Vercel AI SDK's (tool-call and tool-result parts, a top-level system prompt, tools by
name), LangChain's, LlamaIndex's and Pydantic AI's, read as chat-completions, findings
pointing into the body as logged."""

from __future__ import annotations

import copy
import importlib.util

import orjson

from conftest import FIXTURES
from helpers import json_report, write_records

LOG = FIXTURES / "readers" / "ai_sdk_messages_call_turn_dropped.jsonl"
HAS_O200K = importlib.util.find_spec("bpe_openai") is not None


def lines() -> list[dict]:
    return [orjson.loads(line) for line in LOG.read_bytes().splitlines()]


def findings(tmp_path, records: list[dict], name: str = "log.jsonl") -> list[tuple]:
    report = json_report(write_records(tmp_path / name, records))
    return [(f["code"], f["line"], f["pointer"]) for f in report["findings"]]


def test_a_tool_message_kept_without_the_call_turn_is_reported_where_it_starts():
    """trip-1 is a legal loop (two calls answered in one tool message, a text answer, a
    follow-up); trip-2 keeps the tool message and drops the turn that made the call. The
    replies are the SDK's results: their `usage.inputTokens` is the server's count."""
    report = json_report(str(LOG))
    assert [(f["code"], f["line"], f["session"], f["pointer"], f["tool_call_id"]) for f in report["findings"]] == [
        ("CTX016", 5, "trip-2", "/messages/1/content/0", "call_b1")]
    assert report["summary"]["token_counters"].get("server") == 4
    assert report["summary"]["skipped"] == {} and report["summary"]["records"] == 5


def test_a_result_sent_as_the_users_words_and_arguments_off_the_schema_point_into_the_parts(tmp_path):
    records = lines()[:3]
    results = records[1]["request"]["messages"][2]
    records[1]["request"]["messages"][2] = {"role": "user", "content": [{"type": "text", "text": orjson.dumps(
        [part["output"]["value"] for part in results["content"]]).decode()}]}
    records[2]["request"]["messages"][2] = records[1]["request"]["messages"][2]
    assert findings(tmp_path, records) == [("CTX009", 2, "/messages/2")]
    records = lines()[:1]
    records[0]["request"]["messages"].append(copy.deepcopy(lines()[1]["request"]["messages"][1]))
    del records[0]["request"]["messages"][1]["content"][1]["input"]["destination"]
    records[0]["request"]["messages"].append(lines()[1]["request"]["messages"][2])
    assert [(code, pointer) for code, _, pointer in findings(tmp_path, records, "schema.jsonl")] == [
        ("CTX013", "/messages/1/content/1/input")]


def test_the_sdks_earlier_spelling_and_a_reply_logged_as_its_messages_are_read_alike(tmp_path):
    """Before v5 a call's arguments were `args` and a result's value `result`; an app may log
    the reply as the assistant message of parts the SDK appends to the history. Legal, then
    the call turn dropped."""
    q = {"role": "user", "content": "Weather in Oslo?"}
    turn = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_1", "toolName": "weather", "args": {"city": "Oslo"}}]}
    results = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "weather", "result": {"c": 3}}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "3C in Oslo."}]}

    def record(messages: list, reply: dict | None = None) -> dict:
        return {"session_id": "v4", "request": {"model": "gpt-4o-mini", "messages": messages}, **({"response": reply} if reply else {})}

    legal = [record([q], turn), record([q, turn, results], answer), record([q, turn, results, answer, {"role": "user", "content": "Thanks"}])]
    assert findings(tmp_path, legal) == []
    dropped = [record([q], turn), record([q, results])]
    assert findings(tmp_path, dropped, "dropped.jsonl") == [("CTX016", 2, "/messages/1/content/0")]


def test_calls_the_provider_ran_and_tool_approvals_wait_for_no_result(tmp_path):
    """A web search the provider ran (its call and result in the assistant's content) and a
    call the user approved before the app ran it are legal; a call nothing answers is not."""
    q = {"role": "user", "content": "Search the news, then delete my draft."}
    searched = [{"type": "tool-call", "toolCallId": "ws_1", "toolName": "web_search", "input": {"query": "news"}, "providerExecuted": True},
                {"type": "tool-result", "toolCallId": "ws_1", "toolName": "web_search", "output": {"type": "json", "value": []}, "providerExecuted": True},
                {"type": "text", "text": "Nothing new."},
                {"type": "tool-call", "toolCallId": "call_d", "toolName": "deleteDraft", "input": {}},
                {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_d"}]
    approved = {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "ap_1", "approved": True},
                                            {"type": "tool-result", "toolCallId": "call_d", "toolName": "deleteDraft",
                                             "output": {"type": "text", "value": "deleted"}}]}
    request = {"model": "claude-sonnet-4-5", "system": "Be brief.", "messages": [q, {"role": "assistant", "content": searched}, approved]}
    assert findings(tmp_path, [request]) == []
    unanswered = copy.deepcopy(request)
    unanswered["messages"][2]["content"].pop()
    assert findings(tmp_path, [unanswered], "unanswered.jsonl") == [("CTX002", 1, "/messages/1/content/3")]


def test_a_reasoning_part_left_out_of_a_tool_call_turn_is_lost_reasoning(tmp_path):
    """DeepSeek's reasoner must see the reasoning of its tool-call turns again; the SDK
    keeps it as a reasoning part, which the app dropped."""
    q = {"role": "user", "content": "What is 17 * 23? Use the calculator."}
    call = {"type": "tool-call", "toolCallId": "call_m", "toolName": "multiply", "input": {"a": 17, "b": 23}}
    reply = {"text": "", "reasoningText": "Multiply with the tool.", "toolCalls": [call], "finishReason": "tool-calls",
             "usage": {"inputTokens": 40, "outputTokens": 12}, "response": {"id": "ds-1", "modelId": "deepseek-reasoner"}}
    results = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_m", "toolName": "multiply",
                                            "output": {"type": "json", "value": 391}}]}
    kept = {"role": "assistant", "content": [{"type": "reasoning", "text": "Multiply with the tool."}, call]}

    def session(turn: dict) -> list:
        return [{"session_id": "ds", "request": {"model": "deepseek-reasoner", "messages": [q]}, "response": reply},
                {"session_id": "ds", "request": {"model": "deepseek-reasoner", "messages": [q, turn, results]}}]

    assert findings(tmp_path, session(kept)) == []
    report = json_report(write_records(tmp_path / "dropped.jsonl", session({"role": "assistant", "content": [call]})))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX004", 2, "/messages/1")]
    assert "reasoning part" in report["findings"][0]["message"]


def test_a_body_with_the_sdks_tools_is_its_own_though_its_system_prompt_is_top_level(tmp_path):
    """A top-level system prompt alone reads as Anthropic's; tools given by name are the
    SDK's, so the body is judged as the chat request the SDK sends to gpt-4o, which takes a
    whitespace-only reply Anthropic would refuse (CTX029)."""
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": " "}, {"role": "user", "content": "Still there?"}]
    sdk = {"model": "gpt-4o", "system": "Be brief.", "tools": {"weather": {"description": "Weather", "inputSchema": {}}}, "messages": messages}
    assert findings(tmp_path, [sdk]) == []
    anthropic = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": "Be brief.", "messages": messages}
    assert [code for code, _, _ in findings(tmp_path, [anthropic], "anthropic.jsonl")] == ["CTX029"]


def framework_session(tmp_path, name: str, system: dict, question: dict, call_turn: dict, result: dict) -> list[tuple]:
    """Findings on a session that asks, gets a call turn and sends its result (legal), then
    sends the result again without the turn that made the call (CTX001, at line 3)."""
    def record(messages: list) -> dict:
        return {"session_id": name, "request": {"model": "gpt-4o", "messages": messages}}
    return findings(tmp_path, [record([system, question]), record([system, question, call_turn, result]),
                               record([system, question, result])], f"{name}.jsonl")


def test_langchains_messages_logged_as_a_request_body_are_read(tmp_path):
    """As `messages_to_dict` writes them, and as LangChain serializes them."""
    dicts = framework_session(tmp_path, "as-dicts", {"type": "system", "data": {"content": "Be brief."}},
                              {"type": "human", "data": {"content": "Weather in Paris?"}},
                              {"type": "ai", "data": {"content": "", "tool_calls": [
                                  {"name": "weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}]}},
                              {"type": "tool", "data": {"content": "18C", "tool_call_id": "call_1"}})
    assert dicts == [("CTX001", 3, "/messages/2")]

    def serialized(kind: str, **kwargs) -> dict:
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}
    constructed = framework_session(tmp_path, "serialized", serialized("SystemMessage", content="Be brief."),
                                    serialized("HumanMessage", content="Weather in Paris?"),
                                    serialized("AIMessage", content="", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}]),
                                    serialized("ToolMessage", content="18C", tool_call_id="call_1"))
    assert constructed == [("CTX001", 3, "/messages/2")]


def test_a_langchain_message_that_cannot_be_read_is_a_located_error(tmp_path):
    unknown = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "WizardMessage"], "kwargs": {"content": "?"}}
    record = {"model": "gpt-4o", "messages": [{"type": "human", "data": {"content": "hi"}}, unknown]}
    report = json_report(write_records(tmp_path / "bad.jsonl", [record]))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX900", 1, "/messages/1")]
    assert report["findings"][0]["message"].startswith("LangChain messages: ")


def test_llama_indexs_messages_are_read_with_their_blocks_and_additional_kwargs(tmp_path):
    """Blocks (text, a tool_call block) in current releases; `content` and the provider's calls
    under `additional_kwargs` in earlier ones. Before, the tool message had no call id (CTX010)."""
    blocks = framework_session(tmp_path, "blocks", {"role": "system", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Be brief."}]},
                               {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Weather in Paris?"}]},
                               {"role": "assistant", "additional_kwargs": {}, "blocks": [
                                   {"block_type": "thinking", "content": "Use the tool."},
                                   {"block_type": "tool_call", "tool_call_id": "call_1", "tool_name": "weather", "tool_kwargs": {"city": "Paris"}}]},
                               {"role": "tool", "additional_kwargs": {"tool_call_id": "call_1", "name": "weather"},
                                "blocks": [{"block_type": "text", "text": "18C"}]})
    assert blocks == [("CTX001", 3, "/messages/2")]
    kwargs = framework_session(tmp_path, "kwargs", {"role": "system", "content": "Be brief.", "additional_kwargs": {}},
                               {"role": "user", "content": "Weather in Paris?", "additional_kwargs": {}},
                               {"role": "assistant", "content": None, "additional_kwargs": {"tool_calls": [
                                   {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]}},
                               {"role": "tool", "content": "18C", "additional_kwargs": {"tool_call_id": "call_1", "name": "weather"}})
    assert kwargs == [("CTX001", 3, "/messages/2")]


def test_a_llama_index_call_whose_arguments_break_the_schema_points_at_its_block(tmp_path):
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    request = {"model": "gpt-4o", "tools": tools, "messages": [
        {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Weather?"}]},
        {"role": "assistant", "additional_kwargs": {}, "blocks": [
            {"block_type": "tool_call", "tool_call_id": "call_1", "tool_name": "weather", "tool_kwargs": {"town": "Paris"}}]},
        {"role": "tool", "additional_kwargs": {"tool_call_id": "call_1"}, "blocks": [{"block_type": "text", "text": "?"}]}]}
    assert findings(tmp_path, [request]) == [("CTX013", 1, "/messages/1/blocks/0/tool_kwargs")]


def test_the_framework_fixtures_report_the_dropped_call_turn_where_it_starts():
    for name in ("langchain", "llama_index"):
        report = json_report(str(FIXTURES / "readers" / f"{name}_messages_call_turn_dropped.jsonl"))
        assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX001", 3, "/messages/2")], name


def test_framework_messages_of_odd_types_are_read_or_refused_not_crashed_on(tmp_path):
    """Found by mutation, crashes before: a part's or message's `type` that is an object, a
    call id that is a list, the SDK's `toolCalls` that is a number."""
    call = {"type": "tool-call", "toolCallId": ["c"], "toolName": "f", "input": {}, "providerExecuted": False}
    records = [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": {"t": 1}}, {"type": "tool-result", "toolCallId": "c"}]}]},
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [call]}]},
        {"session_id": "r", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
         "response": {"text": "", "toolCalls": 1.5, "finishReason": "stop"}},
        {"model": "gpt-4o", "messages": [{"type": ["human"], "data": {"content": "hi"}}, {"type": "human", "data": {"content": "hi"}}]},
    ]
    report = json_report(write_records(tmp_path / "odd.jsonl", records))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"] if f["code"] == "CTX900"] == [
        ("CTX900", 2, "/messages/1/content/0/toolCallId"), ("CTX900", 4, "/messages/0")]
    assert report["summary"]["records"] == 2  # the first line and the third, its reply read without calls


def test_pydantic_ais_model_messages_are_read_as_the_requests_they_stand_for():
    """trip-1: instructions, a call whose arguments failed validation answered by a retry
    prompt, the call made again and answered, a text reply, a follow-up (legal); trip-2 keeps
    a tool return without the response that made its call. Each reply is logged as the
    model response, its usage the server's count. The model is named as Pydantic AI names
    it, after its provider."""
    report = json_report(str(FIXTURES / "readers" / "pydantic_ai_messages_call_turn_dropped.jsonl"))
    assert [(f["code"], f["line"], f["session"], f["pointer"]) for f in report["findings"]] == [("CTX016", 6, "trip-2", "/messages/1/parts/0")]
    assert [turn["counter"] for session in report["sessions"] for turn in session["turns"]] == ["server"] * 5 + [
        "tiktoken:o200k_base" if HAS_O200K else "tiktoken:cl100k_base (approximation)"]
    assert report["sessions"][0]["turns"][0]["window"] == 128_000  # openai:gpt-4o is gpt-4o


def test_a_pydantic_ai_call_and_its_thinking_point_at_their_parts(tmp_path):
    """Arguments off the schema point at the call part's `args`; a thinking part left out of
    a DeepSeek tool-call turn is lost reasoning, named as the messages name it."""
    tools = [{"type": "function", "function": {"name": "multiply", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}]
    ask = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "17 * 23?"}]}
    call = {"part_kind": "tool-call", "tool_name": "multiply", "args": {"a": 17}, "tool_call_id": "call_m"}
    answered = {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "multiply", "content": 391, "tool_call_id": "call_m"}]}
    request = {"model": "gpt-4o", "tools": tools, "messages": [ask, {"kind": "response", "parts": [call]}, answered]}
    assert findings(tmp_path, [request]) == [("CTX013", 1, "/messages/1/parts/0/args")]
    call["args"] = {"a": 17, "b": 23}
    thought = {"part_kind": "thinking", "content": "Use the tool."}
    reply = {"id": "ds-1", "object": "chat.completion", "model": "deepseek-reasoner", "choices": [{"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": "", "reasoning_content": "Use the tool.", "tool_calls": [
                 {"id": "call_m", "type": "function", "function": {"name": "multiply", "arguments": '{"a":17,"b":23}'}}]}}]}
    records = [{"session_id": "m", "request": {"model": "deepseek-reasoner", "messages": [ask]}, "response": reply},
               {"session_id": "m", "request": {"model": "deepseek-reasoner", "messages": [ask, {"kind": "response", "parts": [thought, call]}, answered]}}]
    assert findings(tmp_path, records, "kept.jsonl") == []
    records[1]["request"]["messages"][1] = {"kind": "response", "parts": [call]}
    report = json_report(write_records(tmp_path / "dropped.jsonl", records))
    assert [(f["code"], f["line"], f["pointer"]) for f in report["findings"]] == [("CTX004", 2, "/messages/1")]
    assert "thinking part" in report["findings"][0]["message"]


def test_a_reply_logged_as_pydantic_ais_model_response_is_the_reply(tmp_path):
    """Its usage is the server's count, and a next request that leaves it out lost it (CTX016)."""
    ask = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Plan two nights in Rome under 500 EUR."}]}
    reply = {"kind": "response", "parts": [{"part_kind": "text", "content": "Which dates?"}], "model_name": "gpt-4o",
             "usage": {"input_tokens": 42, "output_tokens": 3}, "finish_reason": "stop", "provider_response_id": "chatcmpl-1"}
    follow = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Next weekend."}]}

    def session(history: list) -> list:
        return [{"session_id": "p", "request": {"model": "openai:gpt-4o", "messages": [ask]}, "response": reply},
                {"session_id": "p", "request": {"model": "openai:gpt-4o", "messages": history}}]

    report = json_report(write_records(tmp_path / "kept.jsonl", session([ask, reply, follow])))
    assert report["findings"] == [] and report["sessions"][0]["turns"][0]["prompt_tokens"] == 42
    assert findings(tmp_path, session([ask, follow]), "lost.jsonl") == [("CTX016", 2, "/messages/1/parts/0")]


def test_replies_logged_as_langchains_or_llama_indexs_messages_are_the_replies(tmp_path):
    """LangChain's AIMessage (its usage_metadata the server's count) and LlamaIndex's
    ChatResponse (its message in blocks, the provider's reply as `raw`): kept, clean; left
    out of the next request, the reply lost (CTX016)."""
    def session(name: str, ask: dict, reply: dict, answer: dict, follow: dict, keep: bool) -> list:
        history = [ask, answer, follow] if keep else [ask, follow]
        return [{"session_id": name, "request": {"model": "gpt-4o", "messages": [ask]}, "response": reply},
                {"session_id": name, "request": {"model": "gpt-4o", "messages": history}}]

    lc = ({"type": "human", "data": {"content": "Plan two nights in Rome under 500 EUR."}},
          {"content": "Which dates?", "type": "ai", "id": "chatcmpl-lc1", "tool_calls": [], "additional_kwargs": {},
           "response_metadata": {"model_name": "gpt-4o-2024-08-06", "finish_reason": "stop"},
           "usage_metadata": {"input_tokens": 31, "output_tokens": 3, "total_tokens": 34}},
          {"type": "ai", "data": {"content": "Which dates?"}}, {"type": "human", "data": {"content": "Next weekend."}})
    li_answer = {"role": "assistant", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Which dates?"}]}
    li = ({"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Plan two nights in Rome under 500 EUR."}]},
          {"message": li_answer, "raw": {"id": "chatcmpl-li1", "model": "gpt-4o-2024-08-06", "usage": {"prompt_tokens": 29}}, "delta": None},
          li_answer, {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "Next weekend."}]})
    for name, (ask, reply, answer, follow), tokens in (("lc", lc, 31), ("li", li, 29)):
        kept = json_report(write_records(tmp_path / f"{name}-kept.jsonl", session(name, ask, reply, answer, follow, True)))
        assert kept["findings"] == [] and kept["sessions"][0]["turns"][0]["prompt_tokens"] == tokens, name
        assert [code for code, _, _ in findings(tmp_path, session(name, ask, reply, answer, follow, False), f"{name}-lost.jsonl")] == ["CTX016"], name


def test_an_empty_langchain_ai_message_goes_out_as_empty_text_not_null(tmp_path):
    """langchain-openai sends an AIMessage's empty text as "" and null only beside tool
    calls ("If tool calls present, content null value should be None not empty string"), so
    an empty reply in the history is no null content OpenAI refuses (CTX029)."""
    record = {"model": "gpt-4o", "messages": [{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {"content": ""}},
                                             {"type": "human", "data": {"content": "hello?"}}]}
    assert findings(tmp_path, [record]) == []
