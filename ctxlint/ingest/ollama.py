"""Ollama's native chat API (`/api/chat`) as the one normalized (chat-completions) shape.

Its messages are chat-completions messages but for three things: a tool call has no id
and its `arguments` is an object, a tool message names no call (at most its function, as
`tool_name`), and an assistant message's reasoning is its `thinking`. So a call is named
by its function and arguments (call_ids), its arguments written as the JSON string a
chat-completions call holds (keys sorted), and each tool message answers the first call
of the turn before it not yet answered (of its function, when it names one); one that
finds none keeps an id no call has, which CTX001 reports. `thinking` is the turn's
reasoning (read as `reasoning_content`): whether the model needs it back is for its
profile to say, as on any host. Messages keep their place, so findings point into the
body as sent.
A reply (`{"message", "done", "done_reason"}`), plain or streamed as one object per line,
is read the same way.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import orjson

from ctxlint.chat import object_member, str_or_none
from ctxlint.ingest.call_ids import unnamed_call_id, unpaired_id
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import SourceMap, kept_in_place

NAME = "Ollama /api/chat"
STOPS = {"stop": "stop", "length": "length"}


def is_ollama_body(body: dict[str, Any]) -> bool:
    """An /api/chat body: a member only Ollama takes, or a message only Ollama writes (a
    tool call with neither id nor type and object arguments, a tool message naming its
    function as `tool_name`)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    if "options" in body or "keep_alive" in body or "think" in body:
        return True
    for message in messages:  # every request of every log passes here: a plain loop, no calls
        if type(message) is dict:
            if "tool_name" in message:
                return True
            calls = message.get("tool_calls")
            if calls and type(calls) is list:
                call = calls[0]  # Ollama gives no call an id: the first tells
                if type(call) is dict and "id" not in call and "type" not in call and type(call.get("function")) is dict \
                        and type(call["function"].get("arguments")) is dict:
                    return True
    return False


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body the /api/chat body stands for, message for message, and
    the map that names a turn's reasoning `thinking` in findings."""
    seen: dict[str, int] = {}
    waiting: deque[tuple[Any, str]] = deque()  # the last assistant turn's calls not yet answered: (function, id)
    messages = []
    for message in body["messages"]:
        if isinstance(message, dict) and message.get("role") == "assistant":
            message = assistant_message(message, seen)
            calls = message["tool_calls"] if isinstance(message.get("tool_calls"), list) else []
            waiting = deque((call["function"].get("name"), call["id"]) for call in calls if isinstance(call, dict))
        elif isinstance(message, dict) and message.get("role") == "tool" and "tool_call_id" not in message:
            message = _answer(message, waiting)
        messages.append(message)  # anything else as it is: the schema check reports what is wrong
    return {**body, "messages": messages}, kept_in_place(messages, reasoning="thinking")


def assistant_message(message: dict[str, Any], seen: dict[str, int]) -> dict[str, Any]:
    """An assistant message with its calls named and their arguments as JSON strings, and
    its thinking as reasoning_content."""
    normalized = {name: value for name, value in message.items() if name != "thinking"}
    if isinstance(message.get("thinking"), str) and message["thinking"]:
        normalized["reasoning_content"] = message["thinking"]
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        normalized["tool_calls"] = [_call(call, seen) if isinstance(call, dict) else call for call in calls]
    return normalized


def _call(call: dict[str, Any], seen: dict[str, int]) -> dict[str, Any]:
    function = object_member(call, "function")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = orjson.dumps(arguments if arguments is not None else {}, option=orjson.OPT_SORT_KEYS).decode()
    name = function.get("name")
    call_id = call.get("id") if isinstance(call.get("id"), str) and call["id"] else unnamed_call_id(name, arguments, seen)
    return {"id": call_id, "type": "function", "function": {**function, "arguments": arguments}}


def _answer(message: dict[str, Any], waiting: deque[tuple[Any, str]]) -> dict[str, Any]:
    """A tool message with the id of the call it answers: the first unanswered one (of its
    function, when it names one)."""
    named = message.get("tool_name")
    match = next((entry for entry in waiting if named is None or entry[0] == named), None)
    if match is not None:
        waiting.remove(match)
        call_id = match[1]
    else:
        call_id = unpaired_id(named or "tool")
    return {**message, "tool_call_id": call_id}


def is_reply(body: dict[str, Any]) -> bool:
    return isinstance(body.get("message"), dict) and "done" in body


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and is_reply(chunks[0])


def parse_reply(body: dict[str, Any], status: int | None = None) -> Response:
    return assemble_events([body], status)


def assemble_events(chunks: list[dict[str, Any]], status: int | None = None) -> Response:
    """One reply from /api/chat's chunks (one object, or one per line when streamed): text
    and thinking joined, tool calls gathered, the last chunk's reason and counts."""
    texts, thoughts, calls = [], [], []
    done = last = chunks[-1] if chunks else {}
    for chunk in chunks:
        message = object_member(chunk, "message")
        if isinstance(message.get("content"), str):
            texts.append(message["content"])
        if isinstance(message.get("thinking"), str):
            thoughts.append(message["thinking"])
        if isinstance(message.get("tool_calls"), list):
            calls += message["tool_calls"]
        if chunk.get("done"):
            done = chunk
    if isinstance(last.get("error"), str):
        return Response(error={"message": last["error"]}, status=status, model=str_or_none(last.get("model")))
    raw: dict[str, Any] = {"role": "assistant", "content": "".join(texts), "thinking": "".join(thoughts)}
    if calls:
        raw["tool_calls"] = calls
    message = assistant_message(raw, {})  # numbered after the request's calls where the record is made
    reason = STOPS.get(str(done.get("done_reason")), str_or_none(done.get("done_reason")))
    prompt = done.get("prompt_eval_count")
    return Response(message=message, finish_reason="tool_calls" if calls else reason, status=status,
                    usage={"prompt_tokens": prompt} if isinstance(prompt, int) else None, model=str_or_none(done.get("model")))
