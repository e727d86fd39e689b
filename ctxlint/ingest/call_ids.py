"""Ids for tool calls an API gives none (Gemini's functionCall parts, Ollama's tool calls).

A call is named by its function and arguments (`name:hash`), and the k-th same call in a
conversation `name:hash#k`, counted across the request; a reply's calls are counted after
the request's, as the next request, carrying the reply, will count them. So the same call
gets the same id in every request that carries it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ctxlint.chat import short_hash
from ctxlint.ingest.record import Response


def unnamed_call_id(name: Any, arguments: str, seen: dict[str, int]) -> str:
    """The id of a call without one; `seen` counts the calls met so far, per name:hash."""
    base = f"{name}:{short_hash(arguments)[:8]}"
    count = seen.get(base, 0)
    seen[base] = count + 1
    return base if not count else f"{base}#{count}"


def unpaired_id(name: Any) -> str:
    """The id of a result to a call without one that the request does not carry (cut away
    with the history before it, or never sent): it answers no call."""
    return f"{name}:unpaired"


_UNNAMED_CALL_ID = re.compile(r"(.*):[0-9a-f]{8}(?:#[0-9]+)?\Z", re.S)


def unpaired_form(identity: tuple) -> tuple | None:
    """A tool result's message identity (chat.message_identity) as it reads once the call it
    answers is cut from the request, when that call is one the API named none: a keep-last-N
    window that opens at the result leaves it unpaired, and it is still the same result."""
    if identity[0] != "tool":
        return None
    unpaired = unpaired_call_id(identity[1])
    return None if unpaired is None else ("tool", unpaired, *identity[2:])


def unnumbered_call_id(call_id: Any) -> Any:
    """A call id without the number we gave it among same calls (`name:hash#k`): a trim that
    cuts an earlier same call renumbers the ones after it. Ids an API gave stay as they are."""
    named = _UNNAMED_CALL_ID.match(call_id) if isinstance(call_id, str) else None
    return call_id if named is None else call_id.split("#", 1)[0]


def unpaired_call_id(call_id: str) -> str | None:
    """The id a result of this call has once the call is cut from the request, when the API
    named the call none (we numbered it), else None."""
    named = _UNNAMED_CALL_ID.match(call_id)
    return None if named is None else unpaired_id(named[1])


def numbered_reply(messages: list[dict[str, Any]], response: Response | None) -> Response | None:
    """The reply with its unnamed calls numbered after the request's own, as the next
    request, carrying the reply as one more turn, will number them."""
    calls = (response.message or {}).get("tool_calls") if response is not None else None
    if not calls or not isinstance(calls, list):
        return response
    seen: dict[str, int] = {}
    for message in messages:
        for call in _calls(message) if isinstance(message, dict) and message.get("role") == "assistant" else ():
            _number(call, seen)
    renamed = [dict(call) for call in _calls(response.message)]
    for call in renamed:
        _number(call, seen)
    return replace(response, message={**response.message, "tool_calls": renamed})


def _calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's tool calls that are objects (the schema check reports the others)."""
    calls = message.get("tool_calls")
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _number(call: dict[str, Any], seen: dict[str, int]) -> None:
    """Give an unnamed call (its id made from its name and arguments) its number in `seen`."""
    function = call.get("function") or {}
    base = f"{function.get('name')}:{short_hash(function.get('arguments'))[:8]}"
    if str(call.get("id")).split("#", 1)[0] == base:
        call["id"] = unnamed_call_id(function.get("name"), function.get("arguments"), seen)
