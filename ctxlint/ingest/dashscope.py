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

from ctxlint.chat import str_or_none
from ctxlint.ingest.record import Response, http_status
from ctxlint.ingest.source_map import kept_in_place, member_pointers

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


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The chat-completions body a DashScope body stands for, and the map back into it."""
    settings = body.get(SETTINGS) if isinstance(body.get(SETTINGS), dict) else {}
    request = {**settings, **{name: value for name, value in body.items() if name not in ("input", SETTINGS)}}
    request["messages"] = [_message(message) for message in body["input"]["messages"]]
    source_map = kept_in_place(request["messages"], MESSAGES)
    return request, replace(source_map, settings={pointer: f"/{SETTINGS}{pointer}" for pointer in member_pointers(settings)})


def sent_pointer(body: dict[str, Any]) -> Callable[[str], str]:
    """Where a JSON pointer into the chat body to_chat makes points in the DashScope body:
    the messages under `input`, the settings under `parameters`."""
    settings = body.get(SETTINGS) if isinstance(body.get(SETTINGS), dict) else {}

    def pointer(normalized: str) -> str:
        name = normalized.split("/", 2)[1] if normalized.startswith("/") else ""
        if name == "messages":
            return f"/input{normalized}"
        return f"/{SETTINGS}{normalized}" if name in settings else normalized
    return pointer


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


def parse_reply(body: dict[str, Any], status: int | None = None) -> Response:
    return assemble_events([body], status)


def assemble_events(chunks: list[dict[str, Any]], status: int | None = None) -> Response:
    """One reply from DashScope's chunks (one object, or one per event when streamed)."""
    last = chunks[-1]
    code = str_or_none(last.get("code"))
    status = status or http_status(last.get("status_code"))
    if code or (status is not None and status >= 400):
        return Response(error={"code": code, "message": str_or_none(last.get("message")) or code}, status=status)
    messages, finish_reason = [], None
    for chunk in chunks:
        output = chunk.get("output") if isinstance(chunk.get("output"), dict) else {}
        choices = output.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if choice is not None and isinstance(choice.get("message"), dict):
            messages.append(choice["message"])
        elif isinstance(output.get("text"), str):  # result_format "text"
            messages.append({"role": "assistant", "content": output["text"]})
        reason = (choice or output).get("finish_reason")
        if isinstance(reason, str) and reason != STILL_GENERATING:
            finish_reason = reason
    usage = last.get("usage") if isinstance(last.get("usage"), dict) else {}
    prompt = usage.get("input_tokens")
    return Response(message=_joined(messages) if messages else None, finish_reason=finish_reason, status=status,
                    usage={"prompt_tokens": prompt} if isinstance(prompt, int) else None, id=str_or_none(last.get("request_id")))


def _joined(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply the chunks' messages make: the last, when each holds the reply so far
    (DashScope's default), else their text and reasoning joined and their calls merged."""
    so_far = [_generated(message) for message in messages]
    if all(later.startswith(earlier) for earlier, later in zip(so_far, so_far[1:])):
        return _reply_message(messages[-1])
    joined: dict[str, Any] = {"role": "assistant", "content": "".join(_text(message.get("content")) for message in messages)}
    reasoning = "".join(message["reasoning_content"] for message in messages if isinstance(message.get("reasoning_content"), str))
    if reasoning:
        joined["reasoning_content"] = reasoning
    calls: dict[int, dict[str, Any]] = {}
    for message in messages:
        for position, call in enumerate(message.get("tool_calls") or ()):
            if isinstance(call, dict):
                _merge_call(calls, call.get("index", position), call)
    if calls:
        joined["tool_calls"] = [calls[index] for index in sorted(calls)]
    return joined


def _generated(message: dict[str, Any]) -> str:
    """What a chunk's message holds, in the order a model writes it (reasoning, text, calls):
    each chunk's begins with the one before's when each holds the reply so far."""
    calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else ()
    written = [str_or_none(call["function"].get(part)) or "" for call in calls
               if isinstance(call, dict) and isinstance(call.get("function"), dict) for part in ("name", "arguments")]
    return "".join((str_or_none(message.get("reasoning_content")) or "", _text(message.get("content")), *written))


def _merge_call(calls: dict[int, dict[str, Any]], index: Any, call: dict[str, Any]) -> None:
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    merged = calls.setdefault(index if isinstance(index, int) else len(calls), {"id": None, "type": "function", "function": {"name": None, "arguments": ""}})
    merged["id"] = merged["id"] or str_or_none(call.get("id"))
    merged["function"]["name"] = merged["function"]["name"] or str_or_none(function.get("name"))
    if isinstance(function.get("arguments"), str):
        merged["function"]["arguments"] += function["arguments"]


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
