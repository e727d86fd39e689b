"""OpenAI Responses API bodies as the one normalized (chat-completions) shape, with a map
back to the input items each normalized message came from.

`instructions` is the first system message; a string `input` is the user's message. In a
list of input items, each user, system or developer message is a message; each run of
what one response returned (`reasoning` items, assistant `message` items, `*_call` items
with a `call_id`) is one assistant turn, with the calls as its tool calls and the
reasoning items, kept whole, as its reasoning; each `*_call_output` item is a tool message
(a `local_shell_call_output` names its call by `id`, as the API defines it).
Items the provider runs and answers itself (web search, file search, code interpreter:
no `call_id`) are left out, on both the request and the response side. A function or
custom tool call must carry its `call_id` (a located input error without it); an output
of one without it is a tool message without an id, which CTX010 reports. A reasoning item
sent with its `id` and followed by what cannot be the item its reply followed it with (the
end of the input, another role's message, a tool output, an assistant message without its
`id`) is noted on its turn for CTX041, and an item whose `id` an earlier item holds on
its message for CTX042.

A request that continues a stored response (`previous_response_id`) sends only its new
input: ingest.stored_responses puts back the conversation the provider holds, when the
log holds that response. One that continues a stored conversation (`conversation`,
`item_reference` items) does not carry its history and nothing in the log rebuilds it:
it is counted as skipped, with that reason.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import COMPACTION, DUPLICATE_ITEM_IDS, MESSAGE_ITEM_IDS, UNPAIRED_REASONING, object_member, str_or_none, text_of
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import BodyProblem, Origin, SourceMap, assistant_turn, tool_name_pointers

NAME = "OpenAI Responses API"

CALL_PARTS = {"/function/arguments": "/arguments", "/function/name": "/name", "/id": "/call_id"}
SETTINGS = {"/reasoning_effort": "/reasoning/effort"}
# Keys only a Responses body has, beside a string `input` (an embeddings body has `input` too).
RESPONSES_KEYS = ("instructions", "previous_response_id", "max_output_tokens", "reasoning", "text", "store", "include", "truncation", "tools")
INSTRUCTIONS = "/instructions"  # where the prompt the first normalized message holds came from
STORED = "not linted: a Responses API request that continues a stored conversation (conversation or item_reference), whose history the provider holds"
# The calls the app runs and answers itself: each must carry the call_id its output names.
CLIENT_CALLS = ("function_call", "custom_tool_call")
CLIENT_OUTPUTS = ("function_call_output", "custom_tool_call_output")
# The output item that names its call by `id` (the call's call_id), as the API defines it.
OUTPUTS_NAMING_THEIR_CALL_BY_ID = ("local_shell_call_output",)
STOPS = {"max_output_tokens": "length", "content_filter": "content_filter"}


def is_responses_body(body: dict[str, Any]) -> bool:
    """A Responses request: input items, or any `input` beside a key only Responses bodies
    have (a malformed one is then read as one, and its problem located)."""
    if "messages" in body or "input" not in body or holds_chat_messages(body):
        return False
    items = body["input"]
    if isinstance(items, list) and any(isinstance(item, dict) and ("type" in item or "role" in item) for item in items):
        return True
    return any(key in body for key in RESPONSES_KEYS)


def holds_chat_messages(body: dict[str, Any]) -> bool:
    """An `input` list with chat-completions messages the Responses API does not take (a
    `tool` role, `tool_calls`, `tool_call_id`): a trace export's copy of the messages,
    not a Responses request; read as one, its tool turns would be lost."""
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(item, dict) and "type" not in item and (item.get("role") == "tool" or "tool_calls" in item or "tool_call_id" in item)
        for item in items)


def continues_stored_conversation(body: dict[str, Any]) -> bool:
    """The provider holds the history this request goes on from, and no logged reply
    gives it: a stored conversation (its items are prepended to the input), or items by
    reference."""
    items = body.get("input")
    return bool(body.get("conversation")) or (
        isinstance(items, list) and any(isinstance(item, dict) and item.get("type") == "item_reference" for item in items))


def previous_response(body: dict[str, Any]) -> str | None:
    """The stored response this request goes on from (the provider prepends its history);
    an id that is no string names none the log holds, and the request is skipped."""
    previous = body.get("previous_response_id")
    return str(previous) if previous else None


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The normalized request of a Responses API body, and where its messages came from."""
    messages: list[dict[str, Any]] = []
    origins: list[Origin] = []
    instructions = body.get("instructions")
    if isinstance(instructions, (str, list)):  # a list holds instruction messages: their text is the prompt
        text = instructions if isinstance(instructions, str) else "\n".join(
            text_of(item.get("content")) for item in instructions if isinstance(item, dict))
        messages.append({"role": "system", "content": text})
        origins.append(Origin(None, INSTRUCTIONS, content="", name="instructions"))
    items = body.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        origins.append(Origin(None, "/input", content="", name="input"))
    elif isinstance(items, list):
        turn = _Turn()
        first_with_id: dict[str, int] = {}
        for index, item in enumerate(items):
            pointer = f"/input/{index}"
            kind = _kind(item, pointer)
            turn.follow(item, kind, index)
            repeated = _repeated_id(item, kind, index, first_with_id)
            answers, member = _answered_call(item, kind)
            if answers is not None and not isinstance(answers, str):
                raise BodyProblem(f"{pointer}/{member} is not a string", f"{pointer}/{member}")
            if kind == "message" and item.get("role") != "assistant":
                turn.close(messages, origins)
                messages.append(_noted({"role": item.get("role"), "content": _content(item.get("content"))}, repeated))
                origins.append(Origin(index, pointer))
            elif kind in CLIENT_OUTPUTS or (kind.endswith("_output") and answers is not None):
                turn.close(messages, origins)
                output = item.get("output")  # without its call_id it answers nothing: CTX010 says so
                messages.append(_noted({"role": "tool", "tool_call_id": answers, "content": text_of(output)}, repeated))
                origins.append(Origin(index, pointer, content="/output"))
            else:
                turn.add(item, kind, index, pointer)
                if repeated:
                    turn.repeated.append(repeated)
        turn.follow(None, None, None)
        turn.close(messages, origins)
    else:
        raise BodyProblem("`input` is neither a string nor a list of items", "/input")
    request = {name: value for name, value in body.items() if name not in ("input", "instructions", "tools")}
    request["messages"] = messages
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        request["reasoning_effort"] = reasoning["effort"]
    settings = SETTINGS
    if isinstance(body.get("tools"), list):
        request["tools"] = [_tool(tool) for tool in body["tools"]]
        settings = {**SETTINGS, **tool_name_pointers(request["tools"], (f"/tools/{index}/name" for index in range(len(body["tools"]))))}
    return request, SourceMap(tuple(origins), CALL_PARTS, settings, reasoning="reasoning items", api=NAME)


class _Turn:
    """The items of one response being gathered into one assistant message."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.texts: list[str] = []
        self.message_ids: list[str] = []  # of its assistant message items sent with their id
        self.calls: list[dict[str, Any]] = []
        self.reasoning: list[dict[str, Any]] = []
        self.call_pointers: list[str] = []
        self.reasoning_pointer: str | None = None
        self.compaction: str | None = None  # a compaction item's (encrypted) summary of the history before it
        self.first: int | None = None
        # what findings about the turn point at: its assistant message item, else its first call
        self.message: int | None = None
        self.first_call: int | None = None
        # the reasoning item sent with its id that the next item must follow as in its reply
        self.awaiting: tuple[int, str] | None = None
        self.unpaired: list[dict[str, Any]] = []
        self.repeated: list[dict[str, Any]] = []  # its items whose id an earlier item holds

    def follow(self, item: dict[str, Any] | None, kind: str | None, index: int | None) -> None:
        """Notes the reasoning item awaiting its following item where `item` (None: the end of
        the input) cannot be that item: the API pairs a reasoning item sent with its id with
        the item its reply followed it with, which must come next, with its own id."""
        if self.awaiting is None:
            return
        position, item_id = self.awaiting
        self.awaiting = None
        if item is None:
            where = "is the last input item"
        elif kind == "message":
            role = item.get("role")
            if role == "assistant" and isinstance(item.get("id"), str):
                return
            where = "is followed by an assistant message sent without its `id`" if role == "assistant" else f"is followed by a {role} message"
        elif kind.endswith("_output"):
            where = f"is followed by a {kind} item"
        else:
            return  # a call, another reasoning item, an item the provider runs: not known to be refused
        self.unpaired.append({"id": item_id, "item": position, "where": where, "next_item": index})

    def add(self, item: dict[str, Any], kind: str, index: int, pointer: str) -> None:
        if kind == "message":
            self.texts.append(text_of(item.get("content")))
            if isinstance(item.get("id"), str):
                self.message_ids.append(item["id"])
            self.message = index if self.message is None else self.message
        elif kind == "reasoning":
            self.reasoning.append(_reasoning_item(item))
            self.reasoning_pointer = self.reasoning_pointer or pointer
            if isinstance(item.get("id"), str):
                self.awaiting = (index, item["id"])
        elif kind == COMPACTION:  # the output of /responses/compact, standing for the history before it
            self.compaction = str(item.get("encrypted_content") or "")
        elif kind in CLIENT_CALLS and item.get("call_id") is None:
            raise BodyProblem(f"{pointer} is a {kind} without its `call_id`", pointer)
        elif kind.endswith("_call") and item.get("call_id") is not None:
            self.calls.append(_call(item, kind))
            self.call_pointers.append(pointer)
            self.first_call = index if self.first_call is None else self.first_call
        else:
            return  # run by the provider, and answered inside the same response
        self.first = index if self.first is None else self.first

    def close(self, messages: list[dict[str, Any]], origins: list[Origin]) -> None:
        if self.first is None:
            return
        messages.append(self.assistant())
        where = self.message if self.message is not None else self.first_call if self.first_call is not None else self.first
        origins.append(Origin(where, f"/input/{where}", tuple(self.call_pointers), reasoning=self.reasoning_pointer))
        self._reset()

    def assistant(self) -> dict[str, Any]:
        message = assistant_turn(self.texts, self.reasoning, self.calls)
        if self.compaction is not None:
            message[COMPACTION] = self.compaction
        if self.unpaired:
            message[UNPAIRED_REASONING] = self.unpaired
        if self.message_ids:
            message[MESSAGE_ITEM_IDS] = self.message_ids
        if self.repeated:
            message[DUPLICATE_ITEM_IDS] = self.repeated
        return message


def _repeated_id(item: dict[str, Any], kind: str, index: int, first_with_id: dict[str, int]) -> dict[str, Any] | None:
    """Where an input item holds an `id` an earlier item of the input holds: the id, and
    both items' indexes (an output that names its call by `id` holds its call's id)."""
    item_id = item.get("id")
    if not isinstance(item_id, str) or kind in OUTPUTS_NAMING_THEIR_CALL_BY_ID:
        return None
    first = first_with_id.setdefault(item_id, index)
    return None if first == index else {"id": item_id, "item": index, "first": first}


def _noted(message: dict[str, Any], repeated: dict[str, Any] | None) -> dict[str, Any]:
    if repeated:
        message[DUPLICATE_ITEM_IDS] = [repeated]
    return message


def _kind(item: Any, pointer: str) -> str:
    if isinstance(item, dict):
        kind = item.get("type")
        if isinstance(kind, str):
            return kind
        if isinstance(item.get("role"), str):
            return "message"  # an easy input message: {"role", "content"}
    raise BodyProblem(f"{pointer} is not an input item (an object with a `type` or a `role`)", pointer)


def _answered_call(item: dict[str, Any], kind: str) -> tuple[Any, str]:
    """The call id an item carries, and the member that holds it: `call_id`, or the `id`
    of an output that names its call so (an SDK that writes `call_id` there is read too)."""
    if item.get("call_id") is None and kind in OUTPUTS_NAMING_THEIR_CALL_BY_ID:
        return item.get("id"), "id"
    return item.get("call_id"), "call_id"


def _call(item: dict[str, Any], kind: str) -> dict[str, Any]:
    if kind == "function_call":
        call = {"id": item["call_id"], "type": "function", "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
    elif kind == "custom_tool_call":
        call = {"id": item["call_id"], "type": "custom", "custom": {"name": item.get("name"), "input": item.get("input")}}
    else:
        call = {"id": item["call_id"], "type": kind}  # computer, shell, tool search…: no JSON arguments
    if isinstance(item.get("id"), str):
        call["item_id"] = item["id"]  # the provider links a call sent with its item id to the reasoning before it
    return call


def _reasoning_item(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item as what it carries: SDKs echo it back with or without its output
    `status` and null fields, which is not a change to the reasoning."""
    return {name: value for name, value in item.items() if value is not None and name != "status"}


def _content(content: Any) -> Any:
    """A message's content the same however the app wrapped it: text parts read as text."""
    if isinstance(content, list) and all(isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text") for part in content):
        return text_of(content)
    return content



def _tool(tool: Any) -> Any:
    """A function tool as chat-completions declares it; other tools keep their type."""
    if not isinstance(tool, dict):
        return tool
    if tool.get("type") == "function":
        return {"type": "function", "function": {"name": tool.get("name"), "description": tool.get("description"), "parameters": tool.get("parameters")}}
    if tool.get("type") == "custom":
        return {"type": "custom", "custom": {"name": tool.get("name"), "description": tool.get("description")}}
    return tool


def is_response_body(body: Any) -> bool:
    return isinstance(body, dict) and body.get("object") == "response" and isinstance(body.get("output"), list)


def parse_response_object(body: dict[str, Any], status: int | None = None) -> Response:
    """The Response of a Responses API reply: its output items as one assistant message."""
    if isinstance(body.get("error"), dict):
        error = body["error"]
        return Response(error={key: error.get(key) for key in ("message", "type", "code") if key in error}, status=status, model=str_or_none(body.get("model")))
    turn = _Turn()
    for index, item in enumerate(body["output"]):
        try:
            turn.add(item, _kind(item, f"/output/{index}"), index, f"/output/{index}")
        except BodyProblem:
            continue  # a malformed item of a reply: the request that carries it back is judged
    message = turn.assistant()
    details = object_member(body, "incomplete_details")
    if body.get("status") == "incomplete":
        finish = STOPS.get(details.get("reason"), "length")
    elif "status" not in body:
        finish = None  # a stream cut before it said how it ended
    else:
        finish = "tool_calls" if message.get("tool_calls") else "stop"
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    return Response(message=message, finish_reason=finish, usage=usage, status=status, model=str_or_none(body.get("model")),
                    id=str_or_none(body.get("id")))


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and str(chunks[0].get("type") or "").startswith("response.")


def assemble_events(events: list[dict[str, Any]], status: int | None = None) -> Response:
    """The reply of a Responses event stream: the final response object it ends with."""
    for event in reversed(events):
        if event.get("type") in ("response.completed", "response.incomplete", "response.failed") and is_response_body(event.get("response")):
            return parse_response_object(event["response"], status)
        if event.get("type") == "error":
            return Response(error={key: event.get(key) for key in ("message", "code") if key in event}, status=status)
    done = [event["item"] for event in events if event.get("type") == "response.output_item.done" and isinstance(event.get("item"), dict)]
    return parse_response_object({"output": done}, status)  # a stream cut before its end: what finished
