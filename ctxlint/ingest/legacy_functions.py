"""Chat completions' deprecated function calling, read as the tool calling that replaced it.

A request that declares `functions` (the API before `tools`) lets the model answer with
one `function_call` (`{name, arguments}`, no id) per assistant message, and takes its
result as a `function` message that names the function. Read as tools: each declared
function is a function tool, `function_call` in the request is `tool_choice`, an
assistant `function_call` is its one tool call, named by its function and arguments
(call_ids) as the reply that made it is, and a `function` message that answers the call
before it (of its function) is that call's tool message. So the rules that pair calls
with results, check their arguments and their functions judge these too. A `function`
message no call waits for is left as it is: that API took function results the model
had not asked for (context an app injected), and ctxlint does not call them orphans.
Messages keep their places, so findings point into the body as sent (a call's
arguments at `/messages/2/function_call/arguments`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from ctxlint.ingest.call_ids import unnamed_call_id
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import Origin, SourceMap

CALL_PARTS = {"/function/arguments": "/arguments", "/function/name": "/name"}  # a call's parts, under its function_call
SETTINGS = {"/tools": "/functions", "/tool_choice": "/function_call"}


def is_body(body: dict[str, Any]) -> bool:
    """A request that declares functions, and no tools: the deprecated API's."""
    return isinstance(body.get("functions"), list) and "tools" not in body and isinstance(body.get("messages"), list)


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The tool-calling body a functions body stands for, and the map back into it."""
    request = {name: value for name, value in body.items() if name not in ("functions", "function_call")}
    request["tools"] = [{"type": "function", "function": function} for function in body["functions"]]
    if "function_call" in body:
        chosen = body["function_call"]
        request["tool_choice"] = {"type": "function", "function": chosen} if isinstance(chosen, dict) else chosen
    seen: dict[str, int] = {}
    waiting: dict[str | None, str] = {}  # the call the last assistant message made, by its function: its id
    messages, origins = [], []
    for index, message in enumerate(body["messages"]):
        pointer, calls = f"/messages/{index}", ()
        if isinstance(message, dict) and message.get("role") == "assistant" and isinstance(message.get("function_call"), dict):
            message, call_id, name = _with_tool_call(message, seen)
            waiting, calls = {name: call_id}, (f"{pointer}/function_call",)
        elif isinstance(message, dict) and message.get("role") == "function" and _name(message) in waiting:
            message = {**{key: value for key, value in message.items() if key != "role"}, "role": "tool",
                       "tool_call_id": waiting.pop(_name(message))}
        elif isinstance(message, dict) and message.get("role") in ("user", "assistant", "system", "developer"):
            waiting = {}
        messages.append(message)
        origins.append(Origin(index, pointer, calls))
    return {**request, "messages": messages}, SourceMap(tuple(origins), CALL_PARTS, settings=SETTINGS, reasoning=None)


_CALL = re.compile(r"/messages/(\d+)/tool_calls/0/function(.*)")
_TOOL = re.compile(r"/tools/(\d+)(?:/function)?(.*)")


def sent_pointer(body: dict[str, Any]) -> Callable[[str], str]:
    """Where a JSON pointer into the tool-calling body to_chat makes points in the
    functions body: a call under its `function_call`, a tool in `functions`, the tool
    choice at `function_call`."""
    messages = body["messages"]

    def pointer(normalized: str) -> str:
        call = _CALL.fullmatch(normalized)
        if call is not None and int(call[1]) < len(messages) and isinstance(messages[int(call[1])], dict) \
                and "function_call" in messages[int(call[1])]:
            return f"/messages/{call[1]}/function_call{call[2]}"
        tool = _TOOL.fullmatch(normalized)
        if tool is not None:
            return f"/functions/{tool[1]}{tool[2]}"
        if normalized.startswith("/tool_choice"):
            return "/function_call" + normalized[len("/tool_choice"):].removeprefix("/function")
        return normalized
    return pointer


def reply(response: Response | None) -> Response | None:
    """A reply whose message is a function call, as the tool call the next request will
    carry (the request's map numbers it after its own: call_ids.numbered_reply)."""
    message = response.message if response is not None else None
    if not isinstance(message, dict) or not isinstance(message.get("function_call"), dict):
        return response
    converted, _, _ = _with_tool_call(message, {})
    return replace(response, message=converted,
                   finish_reason="tool_calls" if response.finish_reason == "function_call" else response.finish_reason)


def _name(named: dict[str, Any]) -> str | None:
    """A function's name, as a call or a result gives it (anything else: none; the schema check says what is wrong)."""
    name = named.get("name")
    return name if isinstance(name, str) else None


def _with_tool_call(message: dict[str, Any], seen: dict[str, int]) -> tuple[dict[str, Any], str, Any]:
    """The message with its function call as its one tool call; the call's id and function."""
    function = message["function_call"]
    name = _name(function)
    call_id = unnamed_call_id(name, function.get("arguments"), seen)
    converted = {key: value for key, value in message.items() if key != "function_call"}
    converted["tool_calls"] = [{"id": call_id, "type": "function", "function": function}]
    return converted, call_id, name
