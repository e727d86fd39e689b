"""The Vercel AI SDK's messages (`ModelMessage`; `CoreMessage` before v5), read as
chat-completions messages.

An app built on the AI SDK keeps its history as the SDK's messages and hands them to
`generateText` / `streamText` again each turn (appending `response.messages`), so that is
what it logs: `{model, system, messages, tools}`. Its messages carry parts the SDK
defines: an assistant's `tool-call` parts (`toolCallId`, `toolName`, `input`; `args` before
v5) and `reasoning` parts; a `tool` message holding one `tool-result` part per call
(`output`, a typed value: `{"type": "text" | "json" | "error-text" | "error-json" |
"content", "value"}`; `result` before v5). Read as chat: the assistant message with its
text, its reasoning as `reasoning_content` and its calls as tool calls (arguments as the
JSON string of the input); a tool message per result. A call the provider ran itself
(`providerExecuted`, a web search) and its result in the assistant's content are the
provider's, not the app's to answer, and are left out; so are tool approval parts. The
top-level `system` prompt comes first; tools given as the SDK takes them (an object by
name) are read as function tools. Findings point into the body as logged: a call's
arguments at `/messages/2/content/1/input`, a result at `/messages/3/content/0`.

A reply logged as the SDK's result (`text`, `toolCalls`, `finishReason`, `usage` with
`inputTokens`) or as an assistant message of parts is read the same way.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import canonical_json, str_or_none
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import Origin, SourceMap

NAME = "AI SDK"
CALL, RESULT = "tool-call", "tool-result"
# part types only the AI SDK spells so (chat-completions and Anthropic use underscores)
OWN_PARTS = frozenset((CALL, RESULT, "tool-approval-request", "tool-approval-response", "redacted-reasoning"))
FINISH_REASONS = {"tool-calls": "tool_calls", "content-filter": "content_filter"}  # others are chat's own words


def is_body(body: dict[str, Any], known: int = 0) -> bool:
    """A request whose messages (after the first `known`, which an earlier chat-completions
    record had) carry parts only the AI SDK defines, or whose tools are the SDK's, by name
    (chat-completions and Anthropic list theirs)."""
    messages = body.get("messages")
    return isinstance(messages, list) and (isinstance(body.get("tools"), dict) or any(_spelled_by_sdk(message) for message in messages[known:]))


def _spelled_by_sdk(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(part, dict) and isinstance(part.get("type"), str) and part["type"] in OWN_PARTS
                                             for part in content)


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body an AI SDK call's arguments stand for, and the map back into it."""
    request = {name: value for name, value in body.items() if name not in ("system", "messages", "tools")}
    messages: list[dict[str, Any]] = []
    origins: list[Origin] = []
    settings: dict[str, str] = {}
    if isinstance(body.get("system"), str):
        messages.append({"role": "system", "content": body["system"]})
        origins.append(Origin(None, "/system", name="system", content=""))
    arguments = "/input"
    for index, message in enumerate(body["messages"]):
        converted, placed = chat_messages(message, f"/messages/{index}", index)
        messages += converted
        origins += placed
        if isinstance(message, dict) and any(isinstance(part, dict) and "args" in part for part in _parts(message)):
            arguments = "/args"
    request["messages"] = messages
    tools = body.get("tools")
    if isinstance(tools, dict):
        request["tools"] = [_tool(name, tool) for name, tool in tools.items()]
        settings = {f"/tools/{position}": f"/tools/{name}" for position, name in enumerate(tools)}
    elif tools is not None:
        request["tools"] = tools
    return request, SourceMap(tuple(origins), {"/function/arguments": arguments, "/function/name": "/toolName", "/id": "/toolCallId"},
                              settings=settings, reasoning="reasoning part")


def reasoning_sent(messages: list[dict[str, Any]]) -> bool:
    """The SDK sends reasoning parts back as the provider takes them: what the messages hold went out."""
    return True


def chat_messages(message: Any, pointer: str, index: int | None = None) -> tuple[list[dict[str, Any]], list[Origin]]:
    """One AI SDK message as chat messages (a tool message per result), each with its origin."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return [message], [Origin(index, pointer)]
    role, parts = message.get("role"), list(enumerate(message["content"]))
    if role == "tool":
        results = [(position, part) for position, part in parts if isinstance(part, dict) and part.get("type") == RESULT]
        return ([_tool_message(part) for _, part in results],
                [Origin(index, f"{pointer}/content/{position}", content="/output" if "output" in part else "/result")
                 for position, part in results])
    ran_by_provider = {part["toolCallId"] for _, part in parts
                       if isinstance(part, dict) and part.get("providerExecuted") and isinstance(part.get("toolCallId"), str)}
    calls = [(position, part) for position, part in parts if isinstance(part, dict) and part.get("type") == CALL
             and not (isinstance(part.get("toolCallId"), str) and part["toolCallId"] in ran_by_provider)]
    converted: dict[str, Any] = {key: value for key, value in message.items() if key not in ("content", "providerOptions")}
    if role == "assistant":
        texts = [str(part.get("text") or "") for _, part in parts if isinstance(part, dict) and part.get("type") == "text"]
        converted["content"] = "".join(texts) if texts else None
        reasoning = [str(part.get("text") or "") for _, part in parts if isinstance(part, dict) and part.get("type") == "reasoning"]
        if reasoning:
            converted["reasoning_content"] = "".join(reasoning)
        if calls:
            converted["tool_calls"] = [tool_call(part) for _, part in calls]
    else:
        converted["content"] = [_content_part(part) for _, part in parts]
    return [converted], [Origin(index, pointer, tuple(f"{pointer}/content/{position}" for position, _ in calls))]


def _parts(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def tool_call(part: dict[str, Any]) -> dict[str, Any]:
    given = part.get("input", part.get("args"))
    return {"id": part.get("toolCallId"), "type": "function",
            "function": {"name": part.get("toolName"), "arguments": canonical_json(given if given is not None else {})}}


def _tool_message(part: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": part.get("toolCallId"), "content": output_text(part.get("output", part.get("result")))}


def output_text(output: Any) -> str:
    """A tool result as the text the model reads: a typed output's value (its text parts,
    for content), any other value as JSON."""
    if isinstance(output, dict) and output.get("type") in ("text", "error-text") and isinstance(output.get("value"), str):
        return output["value"]
    if isinstance(output, dict) and output.get("type") in ("json", "error-json"):
        return canonical_json(output.get("value"))
    if isinstance(output, dict) and output.get("type") == "content" and isinstance(output.get("value"), list):
        return "".join(str(item.get("text") or "") for item in output["value"] if isinstance(item, dict) and item.get("type") == "text")
    if isinstance(output, dict) and output.get("type") == "execution-denied":
        return str(output.get("reason") or "execution denied")
    return canonical_json(output)


def _content_part(part: Any) -> Any:
    """A user's part as a chat content part: text as it is, an image or file by what it names."""
    if not isinstance(part, dict) or part.get("type") == "text":
        return part
    if part.get("type") == "image":
        image = part.get("image")
        return {"type": "image_url", "image_url": {"url": image if isinstance(image, str) else ""}}
    return {"type": "file", "file": {"filename": str_or_none(part.get("filename")) or ""}}


def _tool(name: str, tool: Any) -> dict[str, Any]:
    """A tool the SDK takes by name, as a function tool: its JSON schema where the log kept
    one (the SDK's `jsonSchema()` wrapper, or the schema itself), else any arguments."""
    tool = tool if isinstance(tool, dict) else {}
    schema = tool.get("inputSchema", tool.get("parameters"))
    if isinstance(schema, dict) and isinstance(schema.get("jsonSchema"), dict):
        schema = schema["jsonSchema"]
    schema = schema if isinstance(schema, dict) and ("type" in schema or "properties" in schema) else {}
    function = {"name": name, "parameters": schema}
    if isinstance(tool.get("description"), str):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def is_result(body: dict[str, Any]) -> bool:
    """The result `generateText` returns, as an app logs it: its text and calls, and why it ended."""
    return isinstance(body.get("finishReason"), str) and ("text" in body or "toolCalls" in body)


def parse_result(body: dict[str, Any], status: int | None) -> Response:
    made = body.get("toolCalls") if isinstance(body.get("toolCalls"), list) else []
    calls = [tool_call(call) for call in made if isinstance(call, dict) and not call.get("providerExecuted")]
    message: dict[str, Any] = {"role": "assistant", "content": body["text"] if isinstance(body.get("text"), str) and body["text"] else None}
    if isinstance(body.get("reasoningText"), str) and body["reasoningText"]:
        message["reasoning_content"] = body["reasoningText"]
    if calls:
        message["tool_calls"] = calls
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    response = body.get("response") if isinstance(body.get("response"), dict) else {}
    return Response(message=message, finish_reason=FINISH_REASONS.get(body["finishReason"], body["finishReason"]),
                    usage={"prompt_tokens": usage["inputTokens"]} if isinstance(usage.get("inputTokens"), int) else None,
                    status=status, model=str_or_none(response.get("modelId")), id=str_or_none(response.get("id")))


def reply_message(message: dict[str, Any]) -> dict[str, Any]:
    """A reply logged as the assistant message alone: one of the SDK's parts (what it appends
    to the history) as the chat message it stands for, any other as it is."""
    return chat_messages(message, "")[0][0] if _spelled_by_sdk(message) else message
