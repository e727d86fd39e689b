"""Amazon Bedrock's Converse API, read as the Anthropic Messages body it spells differently.

A Converse block is an object with one member naming its kind: `{"text": …}`, `{"toolUse":
{toolUseId, name, input}}`, `{"toolResult": {toolUseId, content, status}}`,
`{"reasoningContent": {"reasoningText": {text, signature}}}` or `{"redactedContent": …}`,
`{"cachePoint": …}` (a prompt-cache breakpoint, not content), an image or a document.
`system` is a list of text blocks, tools are `toolConfig.tools[].toolSpec` with their
schema under `inputSchema.json`, and model-specific settings (Claude's `thinking`) ride in
`additionalModelRequestFields`. Each maps one to one onto a Messages block, so the body is
rewritten block for block and read by ingest.anthropic; findings point into the Converse
body (its settings under `additionalModelRequestFields`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from ctxlint.chat import object_member, str_or_none
from ctxlint.ingest import anthropic
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import BodyProblem, SourceMap, member_pointers

NAME = "Bedrock Converse API"
BLOCK_KINDS = ("text", "toolUse", "toolResult", "reasoningContent", "image", "document", "video", "cachePoint",
               "guardContent", "citationsContent")
SETTINGS_APART = "additionalModelRequestFields"
STREAM_EVENTS = ("messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata")
# Converse stop reasons in chat-completions terms
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "model_context_window_exceeded": "length", "guardrail_intervened": "content_filter",
                  "content_filtered": "content_filter"}
_MODEL_IN_URL = re.compile(r".*/model/([^/]+)/converse(?:-stream)?")


def model_from_url(url: Any) -> str | None:
    """The model a Converse URL names: …/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse."""
    found = _MODEL_IN_URL.fullmatch(urlparse(url).path) if isinstance(url, str) else None
    return unquote(found.group(1)) if found else None


def is_converse_body(body: Any) -> bool:
    """A Converse request: its settings (`inferenceConfig`, `toolConfig`,
    `additionalModelRequestFields`), or messages whose blocks carry no `type` but one of
    Converse's block members, in a body without a top-level `tools` list (Converse's are
    in `toolConfig`)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    if any(_chat_shaped(message) for message in body["messages"]):
        return False  # a chat-completions body that carries another API's settings (a gateway passing them on)
    if isinstance(body.get("tools"), list) and body["tools"]:
        return False  # Converse declares its tools in toolConfig: another API's body, its parts perhaps untyped
    if any(key in body for key in ("inferenceConfig", "toolConfig", SETTINGS_APART)):
        return True
    for message in body["messages"][:2]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and content and isinstance(content[0], dict) and "type" not in content[0]:
            return any(kind in content[0] for kind in BLOCK_KINDS)
    return False


def _chat_shaped(message: Any) -> bool:
    """A chat-completions message, which a Converse body never holds: text content as a
    string, tool calls, or a system, developer or tool role."""
    return isinstance(message, dict) and (isinstance(message.get("content"), str) or "tool_calls" in message
                                          or message.get("role") in ("system", "developer", "tool"))


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The normalized request of a Converse body, and where its messages came from."""
    request, source_map = anthropic.to_chat(_as_messages_body(body), NAME)
    apart = body.get(SETTINGS_APART)
    settings = {pointer: f"/{SETTINGS_APART}{pointer}" for pointer in member_pointers(apart)} if isinstance(apart, dict) else {}
    return request, replace(source_map, settings={**source_map.settings, **settings}, reasoning="reasoningContent blocks")


def _as_messages_body(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    rewritten = {name: value for name, value in body.items() if name not in ("messages", "system", "toolConfig", SETTINGS_APART)}
    if "model" not in body and isinstance(body.get("modelId"), str):
        rewritten["model"] = body["modelId"]  # boto3's converse(modelId=…, messages=…) as an app logs its arguments
    apart = body.get(SETTINGS_APART)
    if isinstance(apart, dict):
        rewritten.update(apart)  # what the model reads as its own request fields (Claude's thinking)
    system = body.get("system")
    if system is not None:
        if not isinstance(system, list):
            raise BodyProblem("`system` is not a list of blocks", "/system")
        rewritten["system"] = [_block(block, f"/system/{index}") for index, block in enumerate(system) if not _cache_point(block)]
    rewritten["messages"] = [_message(message, f"/messages/{index}") for index, message in enumerate(messages)]
    tools = body.get("toolConfig", {}).get("tools") if isinstance(body.get("toolConfig"), dict) else None
    if isinstance(tools, list):
        rewritten["tools"] = [_tool(tool) for tool in tools if not _cache_point(tool)]
    return rewritten


def _message(message: Any, pointer: str) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message  # ingest.anthropic says what is wrong with it, and where
    return {**message, "content": [_block(block, f"{pointer}/content/{position}")
                                   for position, block in enumerate(message["content"]) if not _cache_point(block)]}


def _cache_point(block: Any) -> bool:
    return isinstance(block, dict) and "cachePoint" in block


def _block(block: Any, pointer: str) -> dict[str, Any]:
    """A Converse block as the Messages block it stands for."""
    if not isinstance(block, dict):
        raise BodyProblem(f"{pointer} is not a content block (an object)", pointer)
    if "text" in block:
        return {"type": "text", "text": block["text"]}
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        return {"type": "tool_use", "id": use.get("toolUseId"), "name": use.get("name"), "input": use.get("input", {})}
    if isinstance(block.get("toolResult"), dict):
        result = block["toolResult"]
        content = result.get("content")
        parts = [_result_part(part) for part in content] if isinstance(content, list) else content
        return {"type": "tool_result", "tool_use_id": result.get("toolUseId"), "content": parts, "is_error": result.get("status") == "error"}
    if isinstance(block.get("reasoningContent"), dict):
        reasoning = block["reasoningContent"]
        text = reasoning.get("reasoningText")
        if isinstance(text, dict):
            return {"type": "thinking", "thinking": text.get("text"), "signature": text.get("signature")}
        return {"type": "redacted_thinking", "data": reasoning.get("redactedContent")}
    kind = next((name for name in BLOCK_KINDS if name in block), None)
    if kind is None:
        raise BodyProblem(f"{pointer} is not a Converse content block (none of {', '.join(BLOCK_KINDS)})", pointer)
    return {"type": kind, **block}  # an image, a document: what the user sent, kept as it was


def _result_part(part: Any) -> Any:
    """A tool result's content item as a Messages block: its text, or its JSON as text."""
    if isinstance(part, dict) and "text" in part:
        return {"type": "text", "text": part["text"]}
    if isinstance(part, dict) and "json" in part:
        return {"type": "text", "text": orjson.dumps(part["json"], option=orjson.OPT_SORT_KEYS).decode()}
    return {"type": next(iter(part), "part"), **part} if isinstance(part, dict) and part else part


def _tool(tool: Any) -> Any:
    spec = tool.get("toolSpec") if isinstance(tool, dict) else None
    if not isinstance(spec, dict):
        return tool
    schema = spec.get("inputSchema")
    return {"name": spec.get("name"), "description": spec.get("description"),
            "input_schema": schema.get("json") if isinstance(schema, dict) else schema}


def is_response_body(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("output"), dict) and "stopReason" in body


def parse_response_object(body: dict[str, Any], status: int | None = None) -> Response:
    """The Response of a Converse reply: `output.message`, its stop reason and usage."""
    output = body["output"].get("message")
    message = None
    if isinstance(output, dict) and isinstance(output.get("content"), list):
        try:
            message, _ = anthropic.assistant_message([_block(block, "") for block in output["content"] if not _cache_point(block)])
        except BodyProblem:  # a reply that breaks the format says nothing about what was sent back
            message = None
    stop = str_or_none(body.get("stopReason"))
    usage = object_member(body, "usage")
    prompt = usage.get("inputTokens")
    counted = None
    if isinstance(prompt, int):
        cached = sum(usage.get(name) or 0 for name in ("cacheReadInputTokens", "cacheWriteInputTokens") if isinstance(usage.get(name), int))
        counted = {"prompt_tokens": prompt + cached, "completion_tokens": usage.get("outputTokens")}
    return Response(message=message, finish_reason=FINISH_REASONS.get(stop, stop) if stop else None, usage=counted, status=status)


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    """ConverseStream's events: each names its block (`contentBlockIndex`) or the message's end."""
    chunks = _event_payloads(chunks)
    return bool(chunks) and all("type" not in chunk and "choices" not in chunk for chunk in chunks) and any(
        "contentBlockIndex" in chunk or "stopReason" in chunk for chunk in chunks)


def _event_payloads(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ConverseStream's events as the HTTP stream carries them, also where an SDK keeps each
    under its event's name (`{"contentBlockDelta": {…}}`, as boto3 yields them)."""
    return [_payload(chunk) for chunk in chunks]


def _payload(chunk: dict[str, Any]) -> dict[str, Any]:
    if len(chunk) == 1:
        name, payload = next(iter(chunk.items()))
        if name in STREAM_EVENTS and isinstance(payload, dict):
            return payload
    return chunk


def assemble_events(chunks: list[dict[str, Any]], status: int | None = None) -> Response:
    """One reply from ConverseStream's events: each block's deltas joined (text, a tool
    call's input JSON, reasoning text and signature), the stop reason and the usage."""
    blocks: dict[int, dict[str, Any]] = {}
    stop: Any = None
    usage: Any = None
    for chunk in _event_payloads(chunks):
        if chunk.get("type") == "error":
            return Response(error=chunk.get("error"), status=status)
        index = chunk.get("contentBlockIndex")
        start = chunk.get("start")
        if isinstance(index, int) and isinstance(start, dict) and isinstance(start.get("toolUse"), dict):
            blocks[index] = {"toolUse": {**start["toolUse"], "input": ""}}
        delta = chunk.get("delta")
        if isinstance(index, int) and isinstance(delta, dict):
            _add_delta(blocks, index, delta)
        stop = chunk.get("stopReason", stop)
        usage = chunk.get("usage", usage)
    content = [blocks[index] for index in sorted(blocks)]
    for block in content:
        use = block.get("toolUse")
        if isinstance(use, dict) and isinstance(use.get("input"), str):
            try:
                use["input"] = orjson.loads(use["input"] or "{}")
            except orjson.JSONDecodeError:
                pass  # arguments cut off: CTX012 reads them as they are
    return parse_response_object({"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop, "usage": usage}, status)


def _add_delta(blocks: dict[int, dict[str, Any]], index: int, delta: dict[str, Any]) -> None:
    if isinstance(delta.get("text"), str):
        block = blocks.setdefault(index, {"text": ""})
        block["text"] = block.get("text", "") + delta["text"]
    elif isinstance(delta.get("toolUse"), dict) and isinstance(delta["toolUse"].get("input"), str):
        use = blocks.setdefault(index, {"toolUse": {"input": ""}})["toolUse"]
        use["input"] = (use.get("input") if isinstance(use.get("input"), str) else "") + delta["toolUse"]["input"]
    elif isinstance(delta.get("reasoningContent"), dict):
        reasoning = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})["reasoningContent"]
        part = delta["reasoningContent"]
        if "redactedContent" in part:
            reasoning.pop("reasoningText", None)
            reasoning["redactedContent"] = part["redactedContent"]
            return
        text = reasoning.setdefault("reasoningText", {"text": ""})
        if isinstance(part.get("text"), str):
            text["text"] = (text.get("text") or "") + part["text"]
        if isinstance(part.get("signature"), str):
            text["signature"] = part["signature"]

