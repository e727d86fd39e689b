"""Alibaba Cloud Model Studio's own API (DashScope: `…/aigc/text-generation/generation`,
`…/aigc/multimodal-generation/generation`) as the one normalized shape.

The DashScope SDK (`dashscope.Generation.call`, `MultiModalConversation.call`) sends the
model beside `input.messages` (chat-completions messages, Qwen's `reasoning_content`,
`tool_calls` and tool messages included) and the call's settings under `parameters`
(`enable_thinking`, `tools`, `result_format`…). So the body is the chat body these make:
messages in their places under `input`, findings about a setting pointing under
`parameters`. A multimodal message's content is a list of parts each named by its one
member (`{"text": …}`, `{"image": url}`), read as chat content parts.

A reply keeps its choices under `output` (with `result_format: "text"`, only the text, as
`output.text`), its prompt's size as `usage.input_tokens`, and a failure as `code` and
`message` beside the HTTP `status_code`; streamed, each chunk holds the reply so far, or
(with `incremental_output`) only what it adds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from ctxlint.chat import object_member, str_or_none
from ctxlint.ingest.record import http_status
from ctxlint.ingest.source_map import SourceMap, kept_in_place, member_pointers

NAME = "DashScope generation"
MESSAGES = "input/messages"
SETTINGS = "parameters"
STILL_GENERATING = "null"  # a streamed chunk's finish_reason until the last, as a string


def is_body(body: dict[str, Any]) -> bool:
    """A DashScope request: its messages under `input`, its model or settings beside it (a
    logger's `{"input": <request body>, "output": <reply>}` names the model inside)."""
    held = body.get("input")
    return (type(held) is dict and isinstance(held.get("messages"), list) and "model" not in held and "messages" not in body
            and ("model" in body or "parameters" in body))


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body a DashScope body stands for, and the map back into it."""
    settings = _settings(body)
    request = {**settings, **{name: value for name, value in body.items() if name not in ("input", SETTINGS)}}
    request["messages"] = [_message(message) for message in body["input"]["messages"]]
    source_map = kept_in_place(request["messages"], MESSAGES)
    return request, replace(source_map, settings={pointer: f"/{SETTINGS}{pointer}" for pointer in member_pointers(settings)})


def sent_pointer(body: dict[str, Any]) -> Callable[[str], str]:
    """Where a JSON pointer into the chat body to_chat makes points in the DashScope body:
    the messages under `input`, the settings under `parameters`."""
    settings = _settings(body)

    def pointer(normalized: str) -> str:
        name = normalized.split("/", 2)[1] if normalized.startswith("/") else ""
        if name == "messages":
            return f"/input{normalized}"
        return f"/{SETTINGS}{normalized}" if name in settings else normalized
    return pointer


def _settings(body: dict[str, Any]) -> dict[str, Any]:
    settings = body.get(SETTINGS)
    return settings if isinstance(settings, dict) else {}


def _message(message: Any) -> Any:
    """A message with a multimodal content list written as chat content parts."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message  # anything else as it is: the schema check reports what is wrong
    return {**message, "content": [_part(part) for part in message["content"]]}


def _part(part: Any) -> Any:
    if not isinstance(part, dict) or "type" in part or len(part) != 1:
        return part
    kind, value = next(iter(part.items()))
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": value}}
    return {"type": kind, kind: value}


def is_reply(body: dict[str, Any]) -> bool:
    """A DashScope reply, or its failure: `output` (or a `code`) beside a `request_id`."""
    return "request_id" in body and (isinstance(body.get("output"), dict) or bool(body.get("code")))


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and is_reply(chunks[0])


def as_chat_chunks(chunks: list[dict[str, Any]], status: int | None = None) -> tuple[list[dict[str, Any]], int | None]:
    """DashScope's chunks (one object, or one per event when streamed) as chat.completion
    chunks, and the HTTP status: a failure as their error, choices and counts as theirs; of
    chunks that each hold the reply so far (DashScope's default), the last alone."""
    last = chunks[-1]
    code = str_or_none(last.get("code"))
    status = status or http_status(last.get("status_code"))
    if code or (status is not None and status >= 400):
        return [{"error": {"code": code, "message": str_or_none(last.get("message")) or code}}], status
    messages = [_message_of(chunk) for chunk in chunks]
    so_far = [_generated(message) for message in messages if message is not None]
    if all(later.startswith(earlier) for earlier, later in zip(so_far, so_far[1:])):
        chunks, messages = chunks[-1:], messages[-1:]
    return [_chat_chunk(chunk, message) for chunk, message in zip(chunks, messages)], status


def _message_of(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """The message a chunk holds (with `result_format: "text"`, its text)."""
    output = object_member(chunk, "output")
    choice = _choice(output)
    if choice is not None and isinstance(choice.get("message"), dict):
        return _reply_message(choice["message"])
    return {"role": "assistant", "content": output["text"]} if isinstance(output.get("text"), str) else None


def _choice(output: dict[str, Any]) -> dict[str, Any] | None:
    choices = output.get("choices")
    return choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None


def _chat_chunk(chunk: dict[str, Any], message: dict[str, Any] | None) -> dict[str, Any]:
    output = object_member(chunk, "output")
    reason = (_choice(output) or output).get("finish_reason")
    usage = object_member(chunk, "usage")
    prompt = usage.get("input_tokens")
    return {"id": chunk.get("request_id"), "usage": {"prompt_tokens": prompt} if isinstance(prompt, int) else None,
            "choices": [{"index": 0, "message": message, "finish_reason": None if reason == STILL_GENERATING else reason}]}


def _generated(message: dict[str, Any]) -> str:
    """What a chunk's message holds, in the order a model writes it (reasoning, text, calls):
    each chunk's begins with the one before's when each holds the reply so far."""
    calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else ()
    written = [str_or_none(call["function"].get(part)) or "" for call in calls
               if isinstance(call, dict) and isinstance(call.get("function"), dict) for part in ("name", "arguments")]
    return "".join((str_or_none(message.get("reasoning_content")) or "", _text(message.get("content")), *written))


def _reply_message(message: dict[str, Any]) -> dict[str, Any]:
    """A reply message as chat-completions holds it: a multimodal reply's parts as its text."""
    if isinstance(message.get("content"), list):
        return {**message, "content": _text(message["content"])}
    return message


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""
