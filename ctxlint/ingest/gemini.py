"""Gemini generateContent bodies as the one normalized (chat-completions) shape, with a
map back to the contents and parts each normalized message came from.

`systemInstruction` is the first system message. A `model` content is an assistant
message: its text parts are its content, its `functionCall` parts its tool calls, and
the thought signatures its parts carry (kept whole) its reasoning; thought summaries
(`thought: true`) are not, since nothing requires them back. In a `user` content, each
`functionResponse` part is a tool message and the other parts, in order, user messages.
The REST API takes both camelCase and snake_case field names; so does this. A content
with no parts (the API returns an empty reply so) is an empty message, marked for CTX029.

A call the provider did not give an id is named by its function and arguments
(`name:hash`, `#k` for the k-th same call in the conversation, the reply's calls counted
after the request's), and the responses that follow
are paired with the preceding turn's calls by name, in order, as Gemini pairs them; a
response left without a call keeps an id no call has, which CTX001 reports. Responses to
one turn's calls spread over several contents read as that turn's tool messages all the
same; the map notes the spread (SourceMap.split_responses), which some hosts refuse.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any, Iterable

import orjson

from ctxlint.chat import BLANK_CONTENT, str_or_none, text_of
from ctxlint.ingest.call_ids import unnamed_call_id, unpaired_id
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import BodyProblem, Origin, SourceMap, SplitResponses, assistant_turn, tool_name_pointers

NAME = "Gemini generateContent"
CALL_PARTS = {"/function/arguments": "/args", "/function/name": "/name", "/id": "/id"}
# a content with no parts, which the API refuses (CTX029)
EMPTY_CONTENT = ({"api": NAME, "shape": "empty_message"},)
# Gemini finish reasons in chat-completions terms, so rules read one vocabulary.
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
                  "BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter"}


def field(obj: dict[str, Any], camel: str) -> Any:
    """A field under its camelCase name or its snake_case one."""
    return obj.get(_key(obj, camel))


def _key(obj: dict[str, Any], camel: str) -> str:
    """The spelling of a field the object uses (camelCase unless only snake_case is there)."""
    return camel if camel in obj else "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def is_gemini_body(body: dict[str, Any]) -> bool:
    return "messages" not in body and isinstance(body.get("contents"), list)


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The normalized request of a generateContent body, and where its messages came from."""
    messages: list[dict[str, Any]] = []
    origins: list[Origin] = []
    system = field(body, "systemInstruction")
    if system is not None:
        pointer = "/" + _key(body, "systemInstruction")
        if isinstance(system, str):
            text = system
        elif isinstance(system, dict) and isinstance(system.get("parts"), list):
            text = text_of(system["parts"])
        else:
            raise BodyProblem("`systemInstruction` is neither a string nor a content with parts", pointer)
        messages.append({"role": "system", "content": text})
        origins.append(Origin(None, pointer, content="", name="systemInstruction"))
    calls: dict[str, deque[str]] = {}  # the last model turn's call ids not yet answered, per function name
    given: dict[str, deque[str]] = {}  # the ids of its calls, per id the body gave the call
    seen: dict[str, int] = {}  # how many calls each name:hash has had so far
    answers: dict[tuple[Any, str], str] = {}  # (name, response) -> the call the contents since the last model turn answered with it
    for index, content in enumerate(body["contents"]):
        pointer = f"/contents/{index}"
        # a content without parts is how the API returns an empty reply (stored as it came: CTX029)
        parts = content.get("parts", []) if isinstance(content, dict) else None
        if not isinstance(parts, list):
            raise BodyProblem(f"content {index} is not an object with a `parts` list", pointer)
        where = "/parts" if "parts" in content else ""
        if content.get("role") == "model":
            message, call_pointers, given_ids = model_message(parts, pointer, seen)
            if not parts:
                message[BLANK_CONTENT] = EMPTY_CONTENT
            messages.append(message)
            origins.append(Origin(index, pointer, call_pointers, content=where, reasoning=pointer + where))
            calls, given, answers = defaultdict(deque), defaultdict(deque), {}
            for call, given_id in zip(message.get("tool_calls", ()), given_ids):
                calls[call["function"]["name"]].append(call["id"])
                if given_id is not None:
                    given[given_id].append(call["id"])
        else:
            for message, origin in _user_messages(parts, index, pointer, calls, given, answers, where):
                messages.append(message)
                origins.append(origin)
    request = {name: value for name, value in body.items()
               if name not in ("contents", "tools", "systemInstruction", "system_instruction")}
    request["messages"] = messages
    tools, names, openapi = body.get("tools"), {}, frozenset()
    if isinstance(tools, (list, dict)):
        declared = list(_tools(tools if isinstance(tools, list) else [tools], "/tools" if isinstance(tools, list) else None))
        request["tools"] = [tool for tool, _, _ in declared]
        names = tool_name_pointers(request["tools"], (pointer for _, pointer, _ in declared))
        openapi = frozenset(index for index, (_, _, in_openapi) in enumerate(declared) if in_openapi)
    return request, SourceMap(tuple(origins), CALL_PARTS, names, reasoning="thought signatures", api=NAME, openapi_schemas=openapi,
                              split_responses=_split_responses(body["contents"], messages, origins))


def _split_responses(contents: list[Any], messages: list[dict[str, Any]], origins: list[Origin]) -> tuple[SplitResponses, ...]:
    """The turns of two or more calls whose responses the contents after them spread over
    more than one content (each holding functionResponse parts), where the API pairs a turn's
    calls with the responses of the one content right after it."""
    split = []
    for at, message in enumerate(messages):
        calls = len(message.get("tool_calls") or ())
        if message.get("role") != "assistant" or calls < 2:
            continue
        held: list[tuple[int, int]] = []  # (content, how many responses it holds)
        following = origins[at].index + 1
        while following < len(contents) and sum(count for _, count in held) < calls:
            content = contents[following]
            parts = content.get("parts") if isinstance(content, dict) and content.get("role") != "model" else None
            count = sum(1 for part in parts if isinstance(part, dict) and isinstance(field(part, "functionResponse"), dict)) if isinstance(parts, list) else 0
            if not count:
                break
            held.append((following, count))
            following += 1
        if len(held) > 1:
            second = held[1][0]
            split_at = next(index for index in range(at + 1, len(messages)) if origins[index].index == second and messages[index].get("role") == "tool")
            split.append(SplitResponses(at, split_at, calls, tuple(content for content, _ in held), held[0][1]))
    return tuple(split)


_URL_SAFE = str.maketrans("-_", "+/")


def standard_base64(signature: str) -> str:
    """A thought signature in standard base64 without padding: it is protobuf bytes, which
    the API reads in standard or URL-safe base64 alike (google-genai for Python decodes the
    reply's and sends it back URL-safe), so either spelling is the same signature."""
    return signature.translate(_URL_SAFE).rstrip("=")


def model_message(parts: list[Any], pointer: str = "", seen: dict[str, int] | None = None
                  ) -> tuple[dict[str, Any], tuple[str, ...], tuple[str | None, ...]]:
    """The assistant message of a model content, the pointer of each call's part and the id
    the body gave each call (or None); `seen` counts the calls met so far, per name:hash.

    Every call is named by its function and arguments (call_ids), the id it was given or
    not: Gemini's replies mostly give none, and a client that adds its own when it sends
    the turn back (`"id": "1"`) sends the same call."""
    texts: list[str] = []
    signatures: list[dict[str, Any]] = []
    tool_calls: list[dict[str, Any]] = []
    call_pointers: list[str] = []
    given_ids: list[str | None] = []
    seen = {} if seen is None else seen
    for position, part in enumerate(parts):
        if not isinstance(part, dict):
            raise BodyProblem(f"{pointer}/parts/{position} is not a part (an object)", f"{pointer}/parts/{position}")
        signature = field(part, "thoughtSignature")
        if isinstance(signature, str):
            signatures.append({"type": "thought_signature", "signature": standard_base64(signature)})
        call = field(part, "functionCall")
        if isinstance(call, dict):
            name = call.get("name")
            if not isinstance(name, str):
                where = f"{pointer}/parts/{position}/{_key(part, 'functionCall')}/name"
                raise BodyProblem(f"{where} is not a string", where)
            arguments = orjson.dumps(call.get("args", {}), option=orjson.OPT_SORT_KEYS).decode()
            given = call.get("id")
            given_ids.append(given if isinstance(given, str) and given else None)
            tool_calls.append({"id": unnamed_call_id(name, arguments, seen), "type": "function", "function": {"name": name, "arguments": arguments}})
            call_pointers.append(f"{pointer}/parts/{position}/{_key(part, 'functionCall')}")
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
    return assistant_turn(texts, signatures, tool_calls), tuple(call_pointers), tuple(given_ids)


def _user_messages(parts: list[Any], index: int, pointer: str, calls: dict[str, deque[str]],
                   given: dict[str, deque[str]], answers: dict[tuple[Any, str], str], where: str) -> Iterable[tuple[dict[str, Any], Origin]]:
    """A user content's tool messages (its functionResponse parts) and user messages (runs
    of its other parts), in order. A response with an id answers the call given that id
    (none, if no call was); one without, or any once the calls were given no ids, answers
    the first call of its name not yet answered; past them, the very response the contents
    since the last model turn gave before (`answers`, this content's or an earlier one's:
    responses spread over contents) answers that call again (a result sent twice), and any
    other answers none (its call was dropped). `where`: the content's `parts` member, or ""
    where it has none."""
    run: list[Any] = []
    for position, part in enumerate(parts):
        if not isinstance(part, dict):
            raise BodyProblem(f"{pointer}/parts/{position} is not a part (an object)", f"{pointer}/parts/{position}")
        answer = field(part, "functionResponse")
        if not isinstance(answer, dict):
            run.append(part)
            continue
        if run:
            yield _user(run), Origin(index, pointer, content="/parts")
            run = []
        name = answer.get("name")
        if not isinstance(name, str):
            where = f"{pointer}/parts/{position}/{_key(part, 'functionResponse')}/name"
            raise BodyProblem(f"{where} is not a string", where)
        result = answer.get("response")
        content = result if isinstance(result, str) else orjson.dumps(result, option=orjson.OPT_SORT_KEYS).decode()
        waiting = calls.get(name)
        answered = answer.get("id")
        if isinstance(answered, str) and answered and given:  # the calls were given ids: the response names its own
            ids = given.get(answered)  # the last call given that id keeps it: a result sent twice answers it twice
            call_id = (ids.popleft() if len(ids) > 1 else ids[0]) if ids else answered
            if waiting and call_id in waiting:
                waiting.remove(call_id)
        else:  # calls without ids are answered by name, in order, whatever id a response carries
            call_id = waiting.popleft() if waiting else answers.get((name, content), unpaired_id(name))
        answers.setdefault((name, content), call_id)
        yield ({"role": "tool", "tool_call_id": call_id, "content": content},
               Origin(index, f"{pointer}/parts/{position}", content="/" + _key(part, "functionResponse")))
    if run:
        yield _user(run), Origin(index, pointer, content="/parts")
    elif not parts:  # kept in its place, for CTX029
        yield {"role": "user", "content": "", BLANK_CONTENT: EMPTY_CONTENT}, Origin(index, pointer, content=where)


def _user(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if all(isinstance(part.get("text"), str) for part in parts):
        return {"role": "user", "content": "\n".join(part["text"] for part in parts)}
    return {"role": "user", "content": parts}


def _tools(tools: list[Any], pointer: str | None) -> Iterable[tuple[Any, str | None, bool]]:
    """Function declarations as chat-completions declares functions, each with the pointer
    of its name in the body (`pointer`: the body's tools list; None for a single tool
    object) and whether the body gave its schema as `parameters`, the OpenAPI subset the API
    checks (rather than `parametersJsonSchema`); the provider's own tools (googleSearch,
    codeExecution…) keep their kind as their type."""
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict):
            yield tool, None, False
            continue
        member = _key(tool, "functionDeclarations")
        declarations = tool.get(member)
        for index, declaration in enumerate(declarations if isinstance(declarations, list) else ()):
            if isinstance(declaration, dict):
                schema = _as_json_schema(declaration["parameters"]) if "parameters" in declaration else field(declaration, "parametersJsonSchema")
                name_at = f"{pointer}/{position}/{member}/{index}/name" if pointer is not None else f"/tools/{member}/{index}/name"
                yield ({"type": "function", "function": {"name": declaration.get("name"), "description": declaration.get("description"), "parameters": schema}},
                       name_at, "parameters" in declaration)
        for kind in sorted(tool):  # an object's keys have no order to keep
            if kind not in ("functionDeclarations", "function_declarations"):
                yield {"type": kind}, None, False


def _as_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-style `parameters` as JSON Schema: its types are upper case
    (`OBJECT`, `STRING`) and null is allowed by `nullable`, which JSON Schema does not know."""
    if isinstance(schema, list):
        return [_as_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: _as_json_schema(value) for key, value in schema.items()}
    if isinstance(schema.get("type"), str):
        converted["type"] = schema["type"].lower()
        if schema.get("nullable") is True:  # OpenAPI's way of saying null is allowed too
            converted["type"] = [converted["type"], "null"]
    return converted


BATCH_MEMBERS = frozenset(("key", "request", "response", "error", "status", "metadata"))


def batch_key(line: dict[str, Any]) -> str | None:
    """The key of a line of a Gemini Batch API file, which joins a request
    (`{"key", "request"}`, the input file's) to its answer (`{"key", "response"}`, or an
    error status, the output file's); None for any other line."""
    key = line.get("key")
    if not isinstance(key, str) or not line.keys() <= BATCH_MEMBERS or ("request" in line and "response" in line):
        return None  # a request logged with its response is an envelope
    request = line.get("request")
    if request is not None:
        return key if isinstance(request, dict) and is_gemini_body(request) else None
    return key if is_response_body(line.get("response")) or isinstance(line.get("error") or line.get("status"), dict) else None


def batch_failure(line: dict[str, Any]) -> Response:
    """The error status a Gemini batch output line holds in place of a response."""
    status = line.get("error") or line.get("status")
    code = status.get("code")
    return Response(error={"message": str_or_none(status.get("message")) or "the request failed", "code": None if code is None else str(code)})


def is_response_body(body: Any) -> bool:
    return isinstance(body, dict) and (isinstance(body.get("candidates"), list) or isinstance(field(body, "usageMetadata"), dict)
                                       or isinstance(field(body, "promptFeedback"), dict))


def parse_response_object(body: dict[str, Any], status: int | None = None) -> Response:
    """The Response of a generateContent reply: its first candidate as one assistant message."""
    return assemble_events([body], status)


def is_event_stream(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and is_response_body(chunks[0])


def assemble_events(chunks: list[dict[str, Any]], status: int | None = None) -> Response:
    """One reply from streamed generateContent chunks: the first candidate's parts in order,
    text parts of a run joined, the last finish reason and usage."""
    parts: list[dict[str, Any]] = []
    finish = usage = model = reply_id = None
    for chunk in chunks:
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict) else {}
        content = candidate.get("content")
        for part in content.get("parts", ()) if isinstance(content, dict) and isinstance(content.get("parts"), list) else ():
            if not isinstance(part, dict):
                continue
            previous = parts[-1] if parts else None
            if previous is not None and set(part) == {"text"} and set(previous) == {"text"}:
                parts[-1] = {"text": previous["text"] + part["text"]}
            else:
                parts.append(part)
        feedback = field(chunk, "promptFeedback")
        finish = field(candidate, "finishReason") or finish or (
            "PROHIBITED_CONTENT" if isinstance(feedback, dict) and field(feedback, "blockReason") else None)  # the prompt was blocked
        usage = field(chunk, "usageMetadata") or usage
        model = field(chunk, "modelVersion") or model
        reply_id = field(chunk, "responseId") or reply_id
    try:
        message, _, _ = model_message(parts)
    except BodyProblem:  # a reply that breaks the format says nothing about what was sent back
        message, parts = {}, []
    if isinstance(finish, str):
        finish = "tool_calls" if finish == "STOP" and message.get("tool_calls") else FINISH_REASONS.get(finish, finish.lower())
    prompt = field(usage, "promptTokenCount") if isinstance(usage, dict) else None
    counted = {"prompt_tokens": prompt, "completion_tokens": field(usage, "candidatesTokenCount")} if isinstance(prompt, int) else None
    return Response(message=message if parts else None, finish_reason=finish, usage=counted, status=status,
                    model=str_or_none(model), id=str_or_none(reply_id))


def model_from_url(url: str) -> str | None:
    """The model a generateContent URL names: …/models/gemini-2.5-pro:generateContent."""
    _, found, rest = url.partition("/models/")
    name = rest.split(":", 1)[0].split("?", 1)[0] if found else ""
    return name or None
