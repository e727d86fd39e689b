"""LlamaIndex's chat messages (`ChatMessage`, as `model_dump` writes it), read as
chat-completions messages.

A LlamaIndex app, or a tracer of one, logs the messages it handed the LLM as LlamaIndex
keeps them: a message's text in `blocks` (`{"block_type": "text", "text"}`; `content` in
releases before blocks), its reasoning as a `thinking` block, its tool calls as
`tool_call` blocks (`tool_call_id`, `tool_name`, `tool_kwargs`) or, as the OpenAI
integration stores them, the provider's calls under `additional_kwargs.tool_calls`, and a
tool message's call id under `additional_kwargs.tool_call_id`. Read as chat: the text
blocks joined by newlines (as `ChatMessage.content` joins them), thinking as
`reasoning_content`, the calls as tool calls (arguments as the JSON of `tool_kwargs`), the
call id in its place; LlamaIndex's `chatbot` and `model` roles are the assistant's.
Findings point where the log has the call (`/messages/2/blocks/1/tool_kwargs`).
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import canonical_json, object_member, str_or_none
from ctxlint.ingest.source_map import SAME_CALL_PARTS, Origin, SourceMap

NAME = "LlamaIndex"
ROLES = {"chatbot": "assistant", "model": "assistant"}  # LlamaIndex's other names for the assistant
BLOCK_CALL_PARTS = {"/function/arguments": "/tool_kwargs", "/function/name": "/tool_name", "/id": "/tool_call_id"}


def is_body(body: dict[str, Any], known: int = 0) -> bool:
    """A request whose messages (after the first `known`, which an earlier chat-completions
    record had) keep their text in blocks, or their calls or call id in `additional_kwargs`."""
    messages = body.get("messages")
    return isinstance(messages, list) and any(_spelled_by_llama_index(message) for message in messages[known:])


def _spelled_by_llama_index(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    extra = message.get("additional_kwargs")
    return (isinstance(message.get("blocks"), list) and "content" not in message) or (
        isinstance(extra, dict) and ("tool_calls" in extra or "tool_call_id" in extra) and "tool_calls" not in message and "tool_call_id" not in message)


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body LlamaIndex's messages stand for, and the map back into it."""
    in_blocks = any(isinstance(block, dict) and block.get("block_type") == "tool_call"
                    for message in body["messages"] if isinstance(message, dict) for block in _blocks(message))
    messages, origins = [], []
    for index, message in enumerate(body["messages"]):
        converted, calls = chat_message(message, f"/messages/{index}")
        messages.append(converted)
        origins.append(Origin(index, f"/messages/{index}", calls, content="/blocks" if isinstance(message, dict) and "blocks" in message else "/content"))
    return {**body, "messages": messages}, SourceMap(tuple(origins), BLOCK_CALL_PARTS if in_blocks else SAME_CALL_PARTS, reasoning="thinking block")


def reasoning_sent(messages: list[dict[str, Any]]) -> bool:
    """LlamaIndex's integrations send thinking blocks back as their provider takes them."""
    return True


def chat_message(message: Any, pointer: str) -> tuple[Any, tuple[str, ...]]:
    """One LlamaIndex message as a chat message, and the pointers of its tool calls."""
    if not isinstance(message, dict):
        return message, ()
    extra = object_member(message, "additional_kwargs")
    role = message.get("role")
    converted: dict[str, Any] = {"role": ROLES.get(role, role) if isinstance(role, str) else role}
    blocks = list(enumerate(_blocks(message)))
    if "blocks" in message:
        texts = [str(block.get("text") or "") for _, block in blocks if block.get("block_type") == "text"]
        media = [_media(block) for _, block in blocks if block.get("block_type") in ("image", "audio", "document", "video")]
        text = "\n".join(texts) if texts else None
        # text alone as a string, as ChatMessage.content reads it; with media, content parts
        converted["content"] = (([{"type": "text", "text": text}] if text else []) + media) if media else text
        thinking = [str(block.get("content") or "") for _, block in blocks if block.get("block_type") == "thinking"]
        if thinking:
            converted["reasoning_content"] = "".join(thinking)
    else:
        converted["content"] = message.get("content")
    calls = [(f"{pointer}/blocks/{position}", _block_call(block)) for position, block in blocks if block.get("block_type") == "tool_call"]
    if not calls and isinstance(extra.get("tool_calls"), list):
        calls = [(f"{pointer}/additional_kwargs/tool_calls/{position}", call) for position, call in enumerate(extra["tool_calls"])]
    if calls:
        converted["tool_calls"] = [call for _, call in calls]
    if "tool_call_id" in extra:
        converted["tool_call_id"] = str_or_none(extra["tool_call_id"])
    return converted, tuple(at for at, _ in calls)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message.get("blocks")
    return [block for block in blocks if isinstance(block, dict)] if isinstance(blocks, list) else []


def _block_call(block: dict[str, Any]) -> dict[str, Any]:
    given = block.get("tool_kwargs")
    return {"id": str_or_none(block.get("tool_call_id")), "type": "function",
            "function": {"name": str_or_none(block.get("tool_name")), "arguments": canonical_json(given if given is not None else {})}}


def _media(block: dict[str, Any]) -> dict[str, Any]:
    """An image, audio, video or document block as a content part naming what it holds."""
    url = block.get("url") or block.get("path")
    return {"type": "image_url", "image_url": {"url": str(url) if url else ""}} if block.get("block_type") == "image" \
        else {"type": "file", "file": {"filename": str(url or block.get("title") or "")}}


def reply_message(message: dict[str, Any]) -> dict[str, Any]:
    """A reply's message as LlamaIndex keeps it (a ChatResponse's `message`) as the chat
    message it stands for; any other as it is."""
    return chat_message(message, "")[0] if _spelled_by_llama_index(message) else message
