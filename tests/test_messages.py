"""What a finding says: the change it asks for, where the log alone cannot show it."""

from __future__ import annotations

import orjson
from conftest import FIXTURES
from helpers import json_report

RULE_CASES = FIXTURES / "rules"


def test_a_result_whose_call_has_no_id_either_says_the_call_needs_one():
    report = json_report(str(RULE_CASES / "CTX010" / "fail_call_and_result_both_without_id.jsonl"))
    [finding] = report["findings"]
    assert finding["message"] == ("tool message 2 has no tool_call_id, nor has the call of assistant message 1 it answers: "
                                  "give each call an id (one of the app's own where the reply gave none) and its result the same")


def test_a_result_without_id_after_a_call_with_one_says_only_that():
    report = json_report(str(RULE_CASES / "CTX010" / "fail_tool_message_without_id.jsonl"))
    assert all(finding["message"].endswith("has no tool_call_id") for finding in report["findings"] if finding["code"] == "CTX010")


def test_modified_reasoning_names_the_reply_of_the_turn_that_reused_a_call_id():
    report = json_report(str(RULE_CASES / "CTX015" / "fail_reasoning_edited_on_a_turn_reusing_a_call_id.jsonl"))
    [finding] = report["findings"]
    assert finding["message"].endswith("changed from what the model returned (turn 2 response)")
    assert finding["evidence"]["seen_in"] == "turn 2 response"


def test_provider_errors_are_classified_by_what_the_provider_said(tmp_path):
    """Errors as DeepSeek, Moonshot, OpenAI, Anthropic, Gemini, Bedrock and Mistral word them:
    the class names the rule family to look at (message order, thinking/reasoning, blank content)."""

    said = [
        ("deepseek-reasoner", "Missing `reasoning_content` field in the assistant message at message index 2.", "thinking/reasoning"),
        ("kimi-k2.5", "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", "thinking/reasoning"),
        ("gpt-4o", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.", "message order"),
        ("claude-sonnet-4-5", "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_x.", "message order"),
        ("deepseek-reasoner", "deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in "
                              "your input). You should interleave the user/assistant messages in the message sequence.", "message order"),
        ("gemini-2.5-flash", "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
         "message order"),
        ("mistral-large-latest", "Unexpected role 'user' after role 'tool'", "message order"),
        # blank content (CTX029), as Anthropic, Moonshot, Gemini, Bedrock Converse, Mistral and vLLM word it
        ("claude-sonnet-4-5", "messages.1: all messages must have non-empty content except for the optional final assistant message", "blank content"),
        ("claude-sonnet-4-5", "system: text content blocks must be non-empty", "blank content"),
        ("kimi-k2.5", "Invalid request: the message at position 8 with role 'assistant' must not be empty", "blank content"),
        ("gemini-2.5-flash", "* GenerateContentRequest.contents[6].parts: contents.parts must not be empty.", "blank content"),
        ("claude-sonnet-4-5", "The text field in the ContentBlock object at messages.11.content.0 is blank. Add text to the text field, and try again.",
         "blank content"),
        ("mistral-large-latest", "Assistant message must have either content or tool_calls, but not none.", "blank content"),
        ("gpt-4o-mini", "Invalid value for 'content': expected a string, got null.", "blank content"),
        # a list sent empty (CTX030, CTX031), as OpenAI and DeepSeek word it
        ("gpt-4o", "Invalid 'messages[2].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.",
         "empty list"),
        ("deepseek-chat", "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.", "empty list"),
        # a content part the API does not take (CTX032), as DeepSeek words it now and did before
        ("deepseek-chat", "Failed to deserialize the JSON body into the target type: messages[466]: unknown variant `image_url`, expected `text` "
                          "at line 1 column 690848", "content type"),
        ("deepseek-reasoner", "Failed to deserialize the JSON body into the target type: messages[0]: data did not match any variant of untagged "
                              "enum ChatCompletionRequestContent at line 1 column 286017", "content type"),
        # a tool call id the API does not take (CTX011, CTX033, CTX034), as Anthropic and Mistral word it
        ("claude-sonnet-4-5", "messages.43.content.2: `tool_use` ids must be unique", "call id"),
        ("mistral-large-latest", "Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but must be a-z, A-Z, 0-9, with a length of 9.", "call id"),
        ("gpt-4o-mini", "Invalid 'messages[10].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string "
                        "with length 53 instead.", "call id"),
        # a request ending with an assistant message the model refuses (CTX035), as Anthropic and Mistral word it
        ("claude-sonnet-4-6", "This model does not support assistant message prefill. The conversation must end with a user message.", "prefill"),
        ("claude-sonnet-4-5", "messages: final assistant content cannot end with trailing whitespace", "prefill"),
        ("mistral-large-latest", "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant", "prefill"),
        # a setting the model's API refuses (CTX037), as OpenAI words it
        ("gpt-5-mini", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "setting"),
        ("o3", "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.", "setting"),
        # the provider's trouble, logged without its HTTP status: OpenAI's 500, a gateway's timeout
        ("gpt-4o", "The server had an error while processing your request. Sorry about that!", "server error"),
        ("deepseek-chat", "upstream connect error or disconnect/reset before headers. reset reason: connection timeout", "server error"),
    ]
    log = tmp_path / "errors.jsonl"
    log.write_bytes(b"".join(orjson.dumps({"session_id": f"s{n}", "request": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
                                           "response": {"error": {"message": message, "type": "invalid_request_error"}}, "status": 400}) + b"\n"
                             for n, (model, message, _) in enumerate(said)))
    classes = [finding["message"].split("(")[1].split(",")[0] for finding in json_report(str(log))["findings"]]
    assert classes == [kind for _, _, kind in said]


def test_an_error_that_names_no_cause_is_left_to_the_rule_that_finds_the_defect(tmp_path):
    """Bedrock logs a refused call by its error code alone: where a rule reports what the
    API refuses at that request, the code is its error; where none does, it is reported."""
    def logged(request_id: str, messages: list[dict]) -> bytes:
        return orjson.dumps({"schemaType": "ModelInvocationLog", "operation": "Converse", "requestId": request_id,
                             "modelId": "us.anthropic.claude-opus-4-6-v1", "errorCode": "ValidationException", "requestMetadata": {"session_id": request_id},
                             "input": {"inputBodyJson": {"messages": messages}}}) + b"\n"
    user = {"role": "user", "content": [{"text": "Which release fixed the Safari login?"}]}
    log = tmp_path / "bedrock.jsonl"
    log.write_bytes(logged("prefill", [user, {"role": "assistant", "content": [{"text": "Recalled: release 2.4."}]}])
                    + logged("unexplained", [user]))
    findings = [(finding["code"], finding["line"], finding["evidence"].get("class")) for finding in json_report(str(log))["findings"]]
    assert findings == [("CTX035", 1, None), ("CTX022", 2, "other")]


def test_a_result_after_text_in_its_message_says_results_come_first():
    report = json_report(str(RULE_CASES / "CTX002" / "fail_claude_text_before_the_tool_result.jsonl"))
    [finding] = report["findings"]
    assert finding["message"] == ("tool call 'toolu_01' of the assistant message 1 is answered only after other content of message 2: "
                                  "tool results must open the message that answers the calls (Anthropic: tool_result blocks first, text after them)")
    assert finding["pointer"] == "/messages/1/content/0"


def test_a_window_finding_names_the_model_as_the_request_names_it(tmp_path):
    """gpt-3.5-turbo is read under the gpt-4 profile; its window is its own, and so is its name."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(orjson.dumps({"request": {"model": "gpt-3.5-turbo-0125", "messages": [{"role": "user", "content": "word " * 20000}]}}) + b"\n")
    [finding] = json_report(str(log))["findings"]
    assert finding["code"] == "CTX006"
    assert finding["message"].endswith("over the 16,384-token window of gpt-3.5-turbo-0125")
