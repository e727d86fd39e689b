"""Anthropic Messages bodies as the one normalized (chat-completions) shape, with a map
back to where each normalized message came from, so a finding points into the body the
app actually sent.

The protocol maps one to one: the top-level `system` is the first system message; an
assistant message's `text` blocks are its content, its `tool_use` blocks its tool calls
(`input` as JSON arguments), its `thinking` / `redacted_thinking` blocks its reasoning
(`reasoning_details`, kept whole: the API checks their signatures); a user message's
`tool_result` blocks are tool messages, and its other blocks the user's message; a
`system` message in the list (Claude Opus 4.8 and newer take one after a user turn) is a
system message there.
Server-tool blocks (`server_tool_use`, `web_search_tool_result`, …) run and are answered
inside the provider: they are left out, on both the request and the response side. A
request's server-tool result with no call before it in the assistant's turn (the API
refuses it: "Each `advisor_tool_result` block must have a corresponding `server_tool_use`
block before it") is noted on its message for CTX001.
"""

from __future__ import annotations

import re
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

import orjson

from ctxlint.chat import BLANK_CONTENT, CACHE_CONTROL, COMPACTION, SERVER_TOOL_BLOCKS, UNCALLED_SERVER_RESULTS, object_member, str_or_none, text_of, without_cache_control
from ctxlint.ingest.record import Response, nested_too_deep
from ctxlint.ingest.image_size import image_size
from ctxlint.ingest.source_map import BodyProblem, CacheBreakpoint, ImageBlock, Origin, SourceMap, assistant_turn, tool_name_pointers

THINKING_BLOCKS = ("thinking", "redacted_thinking")
SERVER_CALLS = ("server_tool_use", "mcp_tool_use")  # calls the provider runs, answered by a *_tool_result block after them
# Anthropic stop reasons in chat-completions terms, so rules read one vocabulary.
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "model_context_window_exceeded": "length", "pause_turn": "pause_turn", "refusal": "content_filter"}
NAME = "Anthropic Messages API"
# Bedrock's InvokeModel and Vertex AI's rawPredict take a Messages body (anthropic_version
# "bedrock-…" / "vertex-…") with the model in the URL.
_MODEL_IN_URL = {
    "bedrock": re.compile(r".*/model/([^/]+)/invoke(?:-with-response-stream)?"),
    "vertex": re.compile(r".*/publishers/anthropic/models/([^/:]+):(?:streamRawPredict|rawPredict)"),
}
# Where a tool call's parts are in a tool_use block.
CALL_PARTS = {"/function/arguments": "/input", "/function/name": "/name", "/id": "/id"}


def model_in_url(url: Any, body: Any) -> str | None:
    """The model of a Messages body sent through a cloud that names it in the URL: Bedrock
    (…/model/us.anthropic.claude-3-haiku-20240307-v1%3A0/invoke) or Vertex AI
    (…/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict); else None."""
    if not isinstance(url, str) or not isinstance(body, dict) or not isinstance(body.get("anthropic_version"), str):
        return None
    cloud = body["anthropic_version"].split("-", 1)[0]
    found = _MODEL_IN_URL[cloud].fullmatch(urlparse(url).path) if cloud in _MODEL_IN_URL else None
    return unquote(found.group(1)) if found else None


def to_chat(body: dict[str, Any], api: str = NAME) -> tuple[dict[str, Any], SourceMap]:
    """The normalized request of an Anthropic Messages body, and where its messages came
    from; `api` names the API that takes the body (Converse's is rewritten into one)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BodyProblem("`messages` is not a list", "/messages")
    normalized: list[dict[str, Any]] = []
    origins: list[Origin] = []
    system = body.get("system")
    if system is not None:
        if not isinstance(system, (str, list)):
            raise BodyProblem("`system` is neither a string nor a list of text blocks", "/system")
        prompt = {"role": "system", "content": text_of(system)}
        blank = _blank_prompt(system, api) if api == NAME else []  # Converse's is not known to be refused
        if blank:
            prompt[BLANK_CONTENT] = blank
        normalized.append(prompt)
        origins.append(Origin(None, "/system", name="system"))
    server_calls: set[str] = set()  # the ids of the server calls of the assistant's turn so far
    for index, message in enumerate(messages):
        pointer = f"/messages/{index}"
        if not isinstance(message, dict):
            raise BodyProblem(f"message {index} is not an object", pointer)
        role, content = message.get("role"), message.get("content")
        if not isinstance(content, (str, list)):
            raise BodyProblem(f"message {index} has no content (a string or a list of blocks)", pointer + "/content")
        if role != "assistant":
            server_calls = set()
        blank = blank_content(content, api)
        if role == "assistant":
            assistant, calls = assistant_message(content, pointer)
            uncalled = _uncalled_server_results(content, server_calls)
            if uncalled:
                assistant[UNCALLED_SERVER_RESULTS] = uncalled
            if blank:
                assistant[BLANK_CONTENT] = blank
            normalized.append(assistant)
            origins.append(Origin(index, pointer, calls))
        elif role == "user":
            for part, origin in _user_messages(content, index, pointer):
                if blank and origin.pointer == pointer:  # the first message that stands for the whole turn
                    part[BLANK_CONTENT], blank = blank, None
                normalized.append(part)
                origins.append(origin)
        elif role == "system":  # Claude Opus 4.8 and newer take one mid-conversation (CTX019 notes it for the others)
            normalized.append({"role": "system", "content": text_of(content)})
            origins.append(Origin(index, pointer))
        else:
            raise BodyProblem(f"message {index} has role {role!r}; the Messages API takes user, assistant and (mid-conversation) system", pointer + "/role")
    request = {name: value for name, value in body.items() if name not in ("messages", "system", "tools")}
    request["messages"] = normalized
    names: dict[str, str] = {}
    if isinstance(body.get("tools"), list):
        request["tools"] = [chat_tool(tool) for tool in body["tools"]]
        names = tool_name_pointers(request["tools"], (f"/tools/{index}/name" for index in range(len(body["tools"]))))
    if api != NAME:  # Converse's cache points and images are blocks of its own kinds
        return request, SourceMap(tuple(origins), CALL_PARTS, names, reasoning="thinking blocks", api=api)
    normalized_at: dict[str, int] = {}  # a body pointer -> the first normalized message it stands for
    for normalized_index, origin in enumerate(origins):
        normalized_at.setdefault(origin.pointer, normalized_index)
    return request, SourceMap(tuple(origins), CALL_PARTS, names, reasoning="thinking blocks", api=api,
                              cache_breakpoints=_cache_breakpoints(body, normalized_at), images=_images(body["messages"], normalized_at))


def _cache_breakpoints(body: dict[str, Any], normalized_at: dict[str, int]) -> tuple[CacheBreakpoint, ...]:
    """The blocks the body marks with `cache_control`, in the order the API reads them
    (tools, system, messages: its limits count in that order), each where it is among the
    normalized messages (`normalized_at`: a body pointer -> the first normalized message it
    stands for); the top-level marker (automatic caching) last, where the request's final
    block does not hold a marker of its own for it to share."""
    found = [CacheBreakpoint(None, f"/tools/{position}", _ttl(tool)) for position, tool in _marked(body.get("tools"))]
    found += [CacheBreakpoint(0, f"/system/{position}", _ttl(block)) for position, block in _marked(body.get("system"))]
    for index, message in enumerate(body["messages"]):
        for position, block in _marked(message.get("content")):
            result = normalized_at.get(f"/messages/{index}/content/{position}")  # a tool result is a message of its own
            if result is not None:
                found.append(CacheBreakpoint(result, f"/messages/{result}", _ttl(block)))
            else:
                at = normalized_at[f"/messages/{index}"]
                found.append(CacheBreakpoint(at, f"/messages/{at}/content/{position}", _ttl(block)))
    automatic = body.get("cache_control")
    final = body["messages"][-1].get("content") if body["messages"] else None
    if isinstance(automatic, dict) and not (isinstance(final, list) and final and _marked(final[-1:])):
        found.append(CacheBreakpoint(None, "/cache_control", _ttl(body), automatic=True))
    return tuple(found)


def _images(messages: list[dict[str, Any]], normalized_at: dict[str, int]) -> tuple[ImageBlock, ...]:
    """The image blocks of a body's messages (a user turn's, and those a tool result holds),
    in its order, each where it is among the normalized messages."""
    found = []
    for index, message in enumerate(messages):
        content = message.get("content")
        for position, block in enumerate(content if message.get("role") == "user" and isinstance(content, list) else ()):
            if block.get("type") == "image":
                at = normalized_at[f"/messages/{index}"]
                found.append(_image(block, at, f"/messages/{at}/content/{position}"))
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                result = normalized_at[f"/messages/{index}/content/{position}"]  # a message of its own
                found += [_image(part, result, f"/messages/{result}/content/{place}") for place, part in enumerate(block["content"])
                          if isinstance(part, dict) and part.get("type") == "image"]
    return tuple(found)


def _image(block: dict[str, Any], message_index: int, pointer: str) -> ImageBlock:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) and source.get("type") == "base64" else None
    if not isinstance(data, str):
        return ImageBlock(message_index, pointer, None, None, f"{source!r:.200}")  # by URL or file id: no size to judge
    middle = len(data) // 2
    return ImageBlock(message_index, pointer, len(data), image_size(data), f"{len(data)}:{data[:48]}:{data[middle:middle + 48]}:{data[-48:]}")


def _marked(blocks: Any) -> list[tuple[int, dict[str, Any]]]:
    """The blocks of a list that carry a `cache_control` marker, with their positions."""
    if not isinstance(blocks, list):
        return []
    return [(position, block) for position, block in enumerate(blocks) if isinstance(block, dict) and isinstance(block.get(CACHE_CONTROL), dict)]


def _ttl(holder: dict[str, Any]) -> str | None:
    ttl = holder[CACHE_CONTROL].get("ttl")
    return ttl if isinstance(ttl, str) else None


def assistant_message(content: str | list[Any], pointer: str = "") -> tuple[dict[str, Any], tuple[str, ...]]:
    """An assistant turn in normalized form, and the pointers of its tool_use blocks."""
    if isinstance(content, str):
        return {"role": "assistant", "content": content}, ()
    texts, calls, thinking, call_pointers, compactions = [], [], [], [], []
    server_tools = False
    for position, block in enumerate(_blocks(content, pointer)):
        kind = block.get("type")
        if kind == COMPACTION:  # the server's summary of the history before it (context_management compact)
            compactions.append(text_of(block.get("content")))
        elif kind == "text":
            texts.append(block.get("text") if isinstance(block.get("text"), str) else "")
        elif kind == "tool_use":
            _check_text(block, ("id", "name"), f"{pointer}/content/{position}")
            calls.append({"id": block.get("id"), "type": "function",
                          "function": {"name": block.get("name"), "arguments": arguments_json(block.get("input", {}))}})
            call_pointers.append(f"{pointer}/content/{position}")
        elif kind in THINKING_BLOCKS:
            thinking.append(block)
        elif kind in SERVER_CALLS or (isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"):
            server_tools = True
    message = assistant_turn(texts, thinking, calls)
    if compactions:
        message[COMPACTION] = "\n".join(compactions)
    if server_tools:
        message[SERVER_TOOL_BLOCKS] = True
    return message, tuple(call_pointers)


def blank_content(content: str | list[Any], api: str) -> list[dict[str, Any]]:
    """What of a message's content may be refused as blank (chat.BLANK_CONTENT): no content
    at all, text blocks with no text, or text that is whitespace alone and all the message
    says. A whitespace block beside other content is not: the API takes it."""
    if not content:
        return [{"api": api, "shape": "empty_message"}]
    if isinstance(content, str):
        return [{"api": api, "shape": "whitespace_text"}] if content.isspace() else []
    empty = [{"api": api, "shape": "empty_text_block", "block": position} for position, block in enumerate(content)
             if isinstance(block, dict) and block.get("type") == "text" and block.get("text") == ""]
    if empty:
        return empty
    if all(isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
           and block["text"].isspace() for block in content):
        return [{"api": api, "shape": "whitespace_text"}]
    return []


def _blank_prompt(system: str | list[Any], api: str) -> list[dict[str, Any]]:
    """What of the top-level system prompt may be refused as blank: a string is one text
    block, and an empty list sends no prompt at all."""
    if isinstance(system, str):
        return [] if system and not system.isspace() else [{"api": api, "shape": "whitespace_text" if system else "empty_text_block"}]
    return blank_content(system, api) if system else []


def _uncalled_server_results(content: str | list[Any], server_calls: set[str]) -> list[dict[str, Any]]:
    """The server-tool results of an assistant message whose call the turn does not hold
    before them, each with its block's place; `server_calls` gathers the turn's calls. The
    turn is the run of assistant messages the API joins into one, so a call stored in one
    message and its result in the next still match."""
    uncalled = []
    for position, block in enumerate(content if isinstance(content, list) else ()):
        kind, call_id = block.get("type"), block.get("id")
        if kind in SERVER_CALLS and isinstance(call_id, str):
            server_calls.add(call_id)
        elif kind.endswith("_tool_result") and kind != "tool_result":
            answers = block.get("tool_use_id")
            if isinstance(answers, str) and answers not in server_calls:
                uncalled.append({"type": kind, "tool_use_id": answers, "block": position})
    return uncalled


def arguments_json(tool_input: Any) -> str:
    """A tool_use input as JSON arguments, keys sorted: an object the app stored and sent
    back in another key order is the same call."""
    try:
        return orjson.dumps(tool_input, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError as error:
        if nested_too_deep(error):
            raise  # the record is reported as too deep, not its call as broken JSON
        return str(tool_input)


def _user_messages(content: str | list[Any], index: int, pointer: str) -> Iterable[tuple[dict[str, Any], Origin]]:
    """A user turn as normalized messages: a tool message per tool_result block, and one
    user message for each run of other blocks."""
    if isinstance(content, str):
        yield {"role": "user", "content": content}, Origin(index, pointer)
        return
    run: list[Any] = []
    for position, block in enumerate(_blocks(content, pointer)):
        if block.get("type") == "tool_result":
            _check_text(block, ("tool_use_id",), f"{pointer}/content/{position}")
            if run:
                yield {"role": "user", "content": _user_content(run)}, Origin(index, pointer)
                run = []
            result = block.get("content")
            tool = {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text_of(result)}
            if block.get("is_error") is True:
                tool["is_error"] = True  # the app answered the call with an error (CTX013 reads it)
            yield tool, Origin(index, f"{pointer}/content/{position}")
        else:
            run.append(block)
    if run or not content:
        yield {"role": "user", "content": _user_content(run)}, Origin(index, pointer)


def _user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """What the user said, the same however the app wrapped it: a string and text blocks
    read alike, and `cache_control` (prompt-cache breakpoints, which apps move to the newest
    message every turn) is not part of what was said."""
    if all(block.get("type") == "text" for block in blocks):
        return text_of(blocks)
    return [without_cache_control(block) for block in blocks]


def _check_text(block: dict[str, Any], names: tuple[str, ...], pointer: str) -> None:
    """An id or name a block carries is a string; one left out is for the rules to report."""
    for name in names:
        if block.get(name) is not None and not isinstance(block[name], str):
            raise BodyProblem(f"{pointer}/{name} is not a string", f"{pointer}/{name}")


def _blocks(content: list[Any], pointer: str) -> list[dict[str, Any]]:
    for position, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise BodyProblem(f"{pointer}/content/{position} is not a content block (an object with a `type`)", f"{pointer}/content/{position}")
    return content


def chat_tool(tool: Any) -> Any:
    """A client tool as a function declaration; a server tool (web search, code execution)
    keeps its type, which is how rules know the provider runs it."""
    if not isinstance(tool, dict) or (tool.get("type") not in (None, "custom")):
        return tool
    function = {"name": tool.get("name"), "description": tool.get("description"), "parameters": tool.get("input_schema")}
    if "strict" in tool:  # its schema is compiled into the grammar the reply is sampled with
        function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def is_message_body(body: Any) -> bool:
    """An Anthropic Messages response (chat-completions has no `type: message`)."""
    return isinstance(body, dict) and body.get("type") == "message" and isinstance(body.get("content"), list)


# The HTTP status of each error type (Anthropic's errors reference), for a failure logged without one
ERROR_STATUSES = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402, "permission_error": 403,
                  "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                  "timeout_error": 504, "overloaded_error": 529}


def batch_result(result: dict[str, Any]) -> Response:
    """A Message Batches result: the message of a request that succeeded, the error of one
    that failed; one canceled or expired before it ran got no answer."""
    kind = result.get("type")
    if kind == "succeeded" and is_message_body(result.get("message")):
        return parse_message(result["message"])
    if kind == "errored":
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) and isinstance(error.get("error"), dict) else error
        inner = inner if isinstance(inner, dict) else {"message": str(inner)}
        kind_of_error = str_or_none(inner.get("type"))
        return Response(error={"message": str_or_none(inner.get("message")) or kind_of_error or "errored", "type": kind_of_error},
                        status=ERROR_STATUSES.get(kind_of_error or ""))
    return Response()


def parse_message(body: dict[str, Any], status: int | None = None) -> Response:
    """The Response of a Messages API reply, in normalized terms."""
    try:
        message, _ = assistant_message(body["content"])
    except BodyProblem:
        return Response(status=status, model=str_or_none(body.get("model")))
    reason = str_or_none(body.get("stop_reason"))
    changes = body.get("input_transformations")
    return Response(message=message, finish_reason=FINISH_REASONS.get(reason, reason) if reason else None,
                    usage=usage(body.get("usage")), status=status, model=str_or_none(body.get("model")), id=str_or_none(body.get("id")),
                    input_transformations=tuple(change for change in changes if isinstance(change, dict)) if isinstance(changes, list) else None)


def usage(raw: Any) -> dict[str, Any] | None:
    """Anthropic's usage with the prompt size in chat-completions terms: `input_tokens`
    counts only what was not read from or written to the prompt cache."""
    if not isinstance(raw, dict):
        return None
    parts = [raw.get(name) for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    counted = [part for part in parts if isinstance(part, int) and not isinstance(part, bool)]
    normalized = dict(raw)
    if counted:
        normalized["prompt_tokens"] = sum(counted)
    if isinstance(raw.get("output_tokens"), int):
        normalized["completion_tokens"] = raw["output_tokens"]
    return normalized


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and chunks[0].get("type") in ("message_start", "ping", "error")


def assemble_events(events: list[dict[str, Any]], status: int | None = None) -> Response:
    """One reply from a Messages event stream: blocks opened by content_block_start and
    grown by their deltas (text, tool input JSON, thinking, signature)."""
    message: dict[str, Any] = {"type": "message", "content": []}
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else {"message": str(event.get("error"))}
            return Response(error={key: error.get(key) for key in ("message", "type") if key in error}, status=status)
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message.update({key: value for key, value in event["message"].items() if key != "content"})
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[_block_index(event, len(blocks))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index = _block_index(event, 0)
            _grow(blocks.setdefault(index, {"type": "text", "text": ""}), event["delta"], inputs.setdefault(index, []))
        elif kind == "message_delta":
            delta = object_member(event, "delta")
            message.update({key: value for key, value in delta.items() if key in ("stop_reason", "stop_sequence")})
            if isinstance(event.get("usage"), dict):
                started = message.get("usage")  # message_start's counts, the delta's added
                message["usage"] = {**(started if isinstance(started, dict) else {}), **event["usage"]}
    for index, parts in inputs.items():
        if parts and blocks[index].get("type") == "tool_use":
            try:
                blocks[index]["input"] = orjson.loads("".join(parts))
            except orjson.JSONDecodeError:
                blocks[index]["input"] = "".join(parts)
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return parse_message(message, status)


def _block_index(event: dict[str, Any], default: int) -> int:
    index = event.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else default


def _grow(block: dict[str, Any], delta: dict[str, Any], inputs: list[str]) -> None:
    kind = delta.get("type")
    for name in ("text", "thinking", "signature"):
        if kind == f"{name}_delta":
            so_far = block.get(name)
            block[name] = (so_far if isinstance(so_far, str) else "") + str(delta.get(name) or "")
            return
    if kind == "input_json_delta":
        inputs.append(str(delta.get("partial_json") or ""))
