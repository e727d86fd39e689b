"""Where each message of a normalized request came from in a body of another API
(Anthropic Messages, OpenAI Responses, Gemini), so findings point into the body that was sent."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, NamedTuple

from ctxlint.chat import REASONING_FIELDS
from ctxlint.ingest.schema import json_pointer

_MESSAGE_POINTER = re.compile(r"/messages/(\d+)(.*)")
_CALL_POINTER = re.compile(r"/tool_calls/(\d+)(.*)")


def assistant_turn(texts: list[str], reasoning: list[Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The normalized assistant message of another API's turn: its text parts joined (None
    when it had none), its reasoning kept whole as reasoning_details, its tool calls."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if reasoning:
        message["reasoning_details"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return message


def member_pointers(value: dict[str, Any], prefix: str = "", depth: int = 3) -> list[str]:
    """JSON pointers of an object's members, and of their members, `depth` levels down
    (how a setting logged apart from the body is found again)."""
    pointers = []
    for name, member in value.items():
        pointer = prefix + json_pointer((name,))
        pointers.append(pointer)
        if isinstance(member, dict) and depth > 1:
            pointers += member_pointers(member, pointer, depth - 1)
    return pointers


class BodyProblem(ValueError):
    """A body that cannot be read, and where (a JSON pointer into it)."""

    def __init__(self, message: str, pointer: str) -> None:
        super().__init__(message)
        self.pointer = pointer


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one normalized message is in the body that was sent."""

    index: int | None  # the body's own message (or input item) index; None for a top-level prompt
    pointer: str  # JSON pointer of the message, block or item
    calls: tuple[str, ...] = ()  # pointer of each tool call's block or item, in tool_calls order
    content: str = "/content"  # where its content is, under `pointer`
    name: str | None = None  # how findings name it when it has no index ("system", "instructions")
    reasoning: str | None = None  # pointer of its reasoning, where that is an item of its own
    line: int | None = None  # the line of the file where it starts, where that is not the record's (a JSON document)


class CacheBreakpoint(NamedTuple):
    """A block of the sent body marked for the provider's prompt cache (Anthropic's
    `cache_control`), which normalization leaves out of what the block says."""

    message_index: int | None  # the normalized message the block is in (None: a tool definition, the top-level marker)
    pointer: str  # the block, as a normalized pointer (SourceMap.pointer puts it back in the body's terms)
    ttl: str | None  # the `ttl` it asks for (None: the default, five minutes)
    automatic: bool = False  # the request's top-level marker (automatic caching), which takes a breakpoint of its own


class ImageBlock(NamedTuple):
    """An image a body sends as a content block (in a user message or a tool result), as
    far as what the provider refuses of it goes: its size, read from its header."""

    message_index: int  # the normalized message it is in
    pointer: str  # the block, as a normalized pointer (SourceMap.pointer puts it back in the body's terms)
    encoded: int | None  # the length of its base64 data (None: sent by URL or file id)
    size: tuple[int, int] | None  # (width, height) in pixels, where its header says
    digest: str  # the same image sent again has the same digest (its data's length, ends and middle)


class SplitResponses(NamedTuple):
    """A turn of parallel calls whose responses a body spreads over consecutive contents,
    where its API wants them in the one content right after the calls (Gemini's)."""

    calls_at: int  # the normalized message that makes the calls
    split_at: int  # the normalized message of the first response past the first content
    calls: int  # how many calls the turn makes
    contents: tuple[int, ...]  # the body's indexes of the contents that hold the responses
    first_content: int  # how many of the responses the first of them holds


@dataclass(frozen=True, slots=True)
class SourceMap:
    """Per normalized message, its Origin: how findings are put back into the sent body."""

    origins: tuple[Origin, ...]
    call_parts: dict[str, str] = field(default_factory=dict)  # a tool call's normalized sub-pointer -> the body's
    settings: dict[str, str] = field(default_factory=dict)  # a normalized top-level pointer -> the body's
    reasoning: str | None = "reasoning"  # what the body calls a turn's reasoning (None: as chat-completions does)
    api: str | None = None  # the API whose body was read into chat-completions terms, where the rules ask (profile data names it)
    # the body's prompt-cache breakpoints in the order the provider reads them (tools, system, messages)
    cache_breakpoints: tuple[CacheBreakpoint, ...] = ()
    images: tuple[ImageBlock, ...] = ()  # the images the body sends, in its order
    # the normalized tools whose schema the body gave in an OpenAPI subset the API checks (Gemini's `parameters`)
    openapi_schemas: frozenset[int] = frozenset()
    # the body's turns of parallel calls whose responses it spreads over more than one content (Gemini's)
    split_responses: tuple[SplitResponses, ...] = ()

    def label(self, index: int) -> str:
        """How a finding's text names normalized message `index`: by the body's own index."""
        if not 0 <= index < len(self.origins):
            return str(index)
        origin = self.origins[index]
        return str(origin.index) if origin.index is not None else origin.name or str(index)

    def line_of(self, index: int | None) -> int | None:
        """The line where normalized message `index` starts in the file, when the map knows it."""
        return self.origins[index].line if index is not None and 0 <= index < len(self.origins) else None

    def field(self, name: str) -> str:
        """How a finding's text names a normalized field, in the body's terms."""
        return self.reasoning if self.reasoning is not None and name in REASONING_FIELDS else name

    def index_of(self, index: int | None) -> int | None:
        """The body's own index of normalized message `index` (None for a top-level prompt)."""
        return self.origins[index].index if index is not None and 0 <= index < len(self.origins) else index

    def relocate(self, violation: Any) -> Any:
        """The violation with its message index and JSON pointer in the sent body's terms."""
        index = self.index_of(violation.message_index)
        pointer = self.pointer(violation.pointer)
        if index == violation.message_index and pointer == violation.pointer:
            return violation
        return replace(violation, message_index=index, pointer=pointer)

    def pointer(self, pointer: str | None) -> str | None:
        if pointer in self.settings:
            return self.settings[pointer]
        found = _MESSAGE_POINTER.fullmatch(pointer or "")
        if found is None or int(found.group(1)) >= len(self.origins):
            return pointer
        origin, rest = self.origins[int(found.group(1))], found.group(2)
        call = _CALL_POINTER.fullmatch(rest)
        if call is not None and int(call.group(1)) < len(origin.calls):
            return origin.calls[int(call.group(1))] + self.call_parts.get(call.group(2), "")
        if origin.reasoning is not None and rest[1:] in REASONING_FIELDS:
            return origin.reasoning
        if origin.index is None or not rest:
            return origin.pointer
        # a part of the content (`/content/2`, a block) is that part of the body's content
        return origin.pointer + origin.content + (rest[len("/content"):] if rest.startswith("/content/") else "")


def tool_name_pointers(tools: list[Any], body_pointers: Iterable[str | None]) -> dict[str, str]:
    """SourceMap.settings entries that put the name of each function a normalized `tools`
    list declares back where the body names it (`body_pointers`, one per normalized tool)."""
    return {f"/tools/{index}/function/name": pointer for index, (tool, pointer) in enumerate(zip(tools, body_pointers))
            if pointer is not None and isinstance(tool, dict) and isinstance(tool.get("function"), dict)}


SAME_CALL_PARTS = {"/function/arguments": "/function/arguments", "/function/name": "/function/name"}


def kept_in_place(messages: list[Any], member: str = "messages", reasoning: str | None = None) -> SourceMap:
    """The map of a body whose messages are chat messages in their own places, under
    `member` (a trace export's `input`), its reasoning under the field `reasoning` (Ollama's
    `thinking`) where a normalized message has some."""
    origins = []
    for index, message in enumerate(messages):
        pointer = f"/{member}/{index}"
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        origins.append(Origin(index, pointer, tuple(f"{pointer}/tool_calls/{j}" for j in range(len(calls))) if isinstance(calls, list) else (),
                              reasoning=f"{pointer}/{reasoning}" if reasoning and isinstance(message, dict) and "reasoning_content" in message else None))
    return SourceMap(tuple(origins), SAME_CALL_PARTS, reasoning=reasoning)
