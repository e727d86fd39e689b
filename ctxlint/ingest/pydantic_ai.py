"""Pydantic AI's messages (`ModelMessage`, as `ModelMessagesTypeAdapter` dumps them), read
as chat-completions messages.

An app built on Pydantic AI keeps a run's history as `result.all_messages()` and hands it
back as `message_history`, so that is what it logs: model requests (`{"kind": "request",
"parts": [...], "instructions"}`: `system-prompt`, `user-prompt`, `tool-return` and
`retry-prompt` parts) and model responses (`{"kind": "response", "parts": [...]}`:
`text`, `tool-call` with `tool_name`, `args` and `tool_call_id`, `thinking`). Read as
chat: each request part a message of its own (a tool return a tool message; a retry
prompt a tool message when it answers a call, else the user's), each response one
assistant message with its text, its thinking as `reasoning_content` and its calls as tool
calls (arguments as the JSON of `args`). The newest request's `instructions` open the
conversation, as Pydantic AI sends them. Calls the provider ran itself (`builtin-tool-call`,
`builtin-tool-return`) are the provider's and left out. Findings point at the part
(`/messages/1/parts/0/args`). A reply logged as the model response itself is read alike,
its `usage.input_tokens` (`request_tokens` before) the server's count.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import canonical_json, str_or_none
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import Origin, SourceMap

NAME = "Pydantic AI"
KINDS = ("request", "response")
CALL_PARTS = {"/function/arguments": "/args", "/function/name": "/tool_name", "/id": "/tool_call_id"}
FINISH_REASONS = {"tool_call": "tool_calls"}  # others are chat's own words


def is_body(body: dict[str, Any], known: int = 0) -> bool:
    """A request whose messages (after the first `known`, which an earlier chat-completions
    record had) are model requests and responses of parts."""
    messages = body.get("messages")
    return isinstance(messages, list) and any(_spelled_by_pydantic_ai(message) for message in messages[known:])


def _spelled_by_pydantic_ai(message: Any) -> bool:
    return isinstance(message, dict) and message.get("kind") in KINDS and isinstance(message.get("parts"), list) and "role" not in message


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body Pydantic AI's messages stand for, and the map back into it."""
    messages: list[Any] = []
    origins: list[Origin] = []
    instructed = [index for index, message in enumerate(body["messages"])
                  if _spelled_by_pydantic_ai(message) and message.get("kind") == "request" and isinstance(message.get("instructions"), str)]
    if instructed:
        messages.append({"role": "system", "content": body["messages"][instructed[-1]]["instructions"]})
        origins.append(Origin(None, f"/messages/{instructed[-1]}/instructions", content="", name="instructions"))
    for index, message in enumerate(body["messages"]):
        pointer = f"/messages/{index}"
        if not _spelled_by_pydantic_ai(message):
            messages.append(message)
            origins.append(Origin(index, pointer))
        elif message["kind"] == "response":
            converted, calls = _assistant(message["parts"], pointer)
            messages.append(converted)
            origins.append(Origin(index, pointer, calls, content="/parts"))
        else:
            for position, part in enumerate(message["parts"]):
                converted = _request_part(part)
                if converted is not None:
                    messages.append(converted)
                    origins.append(Origin(index, f"{pointer}/parts/{position}", content="/content"))
    return {**body, "messages": messages}, SourceMap(tuple(origins), CALL_PARTS, reasoning="thinking part")


def reasoning_sent(messages: list[dict[str, Any]]) -> bool:
    """Pydantic AI sends thinking parts back as the provider takes them: what the messages hold went out."""
    return True


def _request_part(part: Any) -> dict[str, Any] | None:
    """A request's part as the chat message it is sent as (None for a part of no kind known)."""
    if not isinstance(part, dict):
        return None
    kind, content = part.get("part_kind"), part.get("content")
    if kind == "system-prompt":
        return {"role": "system", "content": content}
    if kind == "user-prompt":
        return {"role": "user", "content": content if isinstance(content, str) else [_user_item(item) for item in content]
                if isinstance(content, list) else canonical_json(content)}
    if kind == "tool-return" or (kind == "retry-prompt" and part.get("tool_name") is not None):
        return {"role": "tool", "tool_call_id": str_or_none(part.get("tool_call_id")), "content": canonical_json(content)}
    if kind == "retry-prompt":
        return {"role": "user", "content": canonical_json(content)}
    return None


def _user_item(item: Any) -> dict[str, Any]:
    """An item of a user prompt as a content part: text, or an image or file by what it names."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind == "image-url":
        return {"type": "image_url", "image_url": {"url": str(item.get("url") or "")}}
    return {"type": "file", "file": {"filename": str(item.get("url") or item.get("identifier") or "") if isinstance(item, dict) else ""}}


def _assistant(parts: list[Any], pointer: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A model response as one assistant message, and the pointers of its calls."""
    parts = [(position, part) for position, part in enumerate(parts) if isinstance(part, dict)]
    texts = [str(part.get("content") or "") for _, part in parts if part.get("part_kind") == "text"]
    thinking = [str(part.get("content") or "") for _, part in parts if part.get("part_kind") == "thinking"]
    calls = [(position, part) for position, part in parts if part.get("part_kind") == "tool-call"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if thinking:
        message["reasoning_content"] = "".join(thinking)
    if calls:
        message["tool_calls"] = [_call(part) for _, part in calls]
    return message, tuple(f"{pointer}/parts/{position}" for position, _ in calls)


def _call(part: dict[str, Any]) -> dict[str, Any]:
    args = part.get("args")
    return {"id": part.get("tool_call_id"), "type": "function",
            "function": {"name": part.get("tool_name"), "arguments": canonical_json(args if args is not None else {})}}


def is_response(body: dict[str, Any]) -> bool:
    """A model response logged as the reply to its request."""
    return _spelled_by_pydantic_ai(body) and body["kind"] == "response"


def parse_response_object(body: dict[str, Any], status: int | None) -> Response:
    message, _ = _assistant(body["parts"], "")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    tokens = usage.get("input_tokens", usage.get("request_tokens"))
    finish = str_or_none(body.get("finish_reason"))
    return Response(message=message, finish_reason=FINISH_REASONS.get(finish, finish) if finish else None,
                    usage={"prompt_tokens": tokens} if isinstance(tokens, int) else None, status=status,
                    model=str_or_none(body.get("model_name")), id=str_or_none(body.get("provider_response_id")))
