"""Detect the record shape of one parsed JSON object and normalize it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from ctxlint.chat import dotted, json_type, object_member, str_or_none
from ctxlint.ingest import (ai_sdk, anthropic, bedrock_logs, converse, dashscope, gemini, kong, langchain, langsmith, legacy_functions,
                            llama_index, ollama, openai_responses, otel, posthog, pydantic_ai, trace_exports, transcripts)
from ctxlint.ingest.call_ids import numbered_reply
from ctxlint.ingest.intern import INTERNER
from ctxlint.ingest.record import InputProblem, LoggedCall, Record, Response, Skipped, http_status, iso_seconds, too_deep
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest.schema import json_pointer, schema_problem
from ctxlint.ingest.source_map import BodyProblem, SourceMap, kept_in_place, member_pointers
from ctxlint.ingest.text_logs import OTHER_OBJECT, LoggedObject

# first found wins; then the same names in camelCase, as JavaScript loggers and trace exports write them,
# then a plain `session` and Open WebUI's `chat_id`
# A trace is one interaction of a session (an agent's run, one request in a tracer that
# traces each call): the session's own names come first, the request body's metadata among
# them (apps that trace through LiteLLM name the session there), and the session a Helicone
# export keeps among the request's properties (the Helicone-Session-Id header the app sent).
SESSION_KEYS = ("session_id", "conversation_id", "thread_id", "metadata.session_id", "metadata.conversation_id", "metadata.thread_id",
                "request.metadata.session_id", "request_properties.Helicone-Session-Id", "sessionId", "conversationId", "threadId",
                "session", "session.id", "chat_id", "trace_id", "traceId")
# startTime: LiteLLM, Langfuse; request_created_at: Helicone's export
TIMESTAMP_KEYS = ("ts", "timestamp", "created_at", "time", "startTime", "start_time", "request_created_at")
# what a logger writes beside a bare request body, not anything the request sets
LOG_FIELDS = frozenset(TIMESTAMP_KEYS + tuple(key for key in SESSION_KEYS if "." not in key))


@dataclass(slots=True, frozen=True)
class BatchOutput:
    """A batch's output line (OpenAI's Batch API, Anthropic's Message Batches, the Gemini
    Batch API), joined to its input line on its id (custom_id, Gemini's key)."""

    file: str
    line: int
    custom_id: str
    response: Response


@dataclass(slots=True, frozen=True)
class ReplyLine:
    """A reply logged on a line of its own (a logger that writes the request before sending
    it and the reply when it comes), joined to the request line it answers: the one that
    carries the same request id, else its session's latest request."""

    file: str
    line: int
    links: tuple[tuple[str, str], ...]
    session_key: str | None
    response: Response


# Names under which a logger ties a request line and its reply line together.
REQUEST_ID_KEYS = ("request_id", "call_id", "span_id", "correlation_id", "id")


def request_links(obj: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The request ids a log line carries at its top level."""
    return tuple((name, str(obj[name])) for name in REQUEST_ID_KEYS
                 if isinstance(obj.get(name), (str, int)) and not isinstance(obj[name], bool) and obj[name] != "")


def _session_key(obj: dict[str, Any], key_path: str | None) -> str | None:
    for path in (key_path,) if key_path else SESSION_KEYS:
        value = dotted(obj, path)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return str(value)
    return None


def line_session_key(obj: dict[str, Any], key_path: str | None) -> str | None:
    """The session key normalize will find in this parsed line (a batch line has one only
    with an explicit path)."""
    if _batch_request(obj) is not None:
        return _session_key(obj, key_path) if key_path else None
    if langsmith.holds_runs(obj):
        return langsmith.session_key(obj, key_path)
    if bedrock_logs.is_invocation_log(obj):
        return _invocation_session_key(obj, key_path)
    return _session_key(obj, key_path)


def _batch_request(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The member that holds a batch input line's request body, and the id its output line
    names it by: OpenAI's Batch API's `{"custom_id", "method", "url", "body"}`, Anthropic's
    Message Batches' `{"custom_id", "params"}`, the Gemini Batch API's `{"key", "request"}`;
    None for any other line."""
    custom_id = obj.get("custom_id")
    if isinstance(custom_id, str):
        if "body" in obj and ("method" in obj or "url" in obj):
            return "body", custom_id
        return ("params", custom_id) if isinstance(obj.get("params"), dict) else None
    key = gemini.batch_key(obj)
    return ("request", key) if key is not None and "request" in obj else None


def _batch_answer(obj: dict[str, Any]) -> tuple[str, Response] | None:
    """The id and the answer of a batch output line: OpenAI's `{"custom_id", "response":
    {"status_code", "body"}}` or its `error`, Anthropic's `{"custom_id", "result"}`, the
    Gemini Batch API's `{"key", "response"}` or its error status; None for any other line."""
    custom_id = obj.get("custom_id")
    if isinstance(custom_id, str):
        if isinstance(obj.get("result"), dict):
            return custom_id, anthropic.batch_result(obj["result"])
        if "response" not in obj and "error" not in obj:
            return None
        response = obj.get("response")
        if isinstance(response, dict) and ("body" in response or "status_code" in response):
            parsed = parse_response(response.get("body"), response.get("status_code") if isinstance(response.get("status_code"), int) else None)
        else:
            parsed = Response(error=obj.get("error") if isinstance(obj.get("error"), dict) else {"message": str(obj.get("error"))})
        return custom_id, parsed or Response()
    key = gemini.batch_key(obj)
    if key is None or "request" in obj:
        return None
    return key, reply_of(obj["response"], None) if "response" in obj else gemini.batch_failure(obj)


def _invocation_session_key(obj: dict[str, Any], key_path: str | None) -> str | None:
    """A Bedrock invocation's session: the key the path names, else one on the record or in
    the metadata the app tagged the call with."""
    if key_path:
        return _session_key(obj, key_path)
    return _session_key(obj, None) or _session_key(bedrock_logs.metadata(obj), None)


KEY_READ_LIMIT = 4096  # how far into a line a key is read off its bytes (the members before it are parsed)
NO_KEY = ""  # session_key_in_bytes: the line names no session key at all


def session_key_in_bytes(text: bytes, key_path: str | None) -> str | None:
    """The session key line_session_key would find in this line, read off its bytes
    without parsing the line: the key, NO_KEY when none of the key names appears in the
    line (nor custom_id: it is no batch line), or None when the bytes alone do not settle
    it (the key nested, not a plain string, further than KEY_READ_LIMIT bytes in, a
    dotted path, a batch line: custom_id in the first KEY_READ_LIMIT bytes). Escapes, a
    key given twice or a custom_id further in can still hide the parse's key from this
    reading, so whoever parses a line routed by it checks they agree (Share.confirm)."""
    if text.find(b'"custom_id"', 0, KEY_READ_LIMIT) >= 0:  # batch lines name it first; the whole line is a scan per worker
        return None
    if text.find(b'"run_type"', 0, KEY_READ_LIMIT) >= 0:  # a LangSmith run: its session_id is its project, its thread is in its metadata
        return None
    for names in _quoted_names(key_path):
        if len(names) > 1:  # a dotted path: only a parse can read it, if its names are there
            if all(name in text for name in names):
                return None
            continue
        name = names[0]
        at = text.find(name)
        if at < 0:
            continue  # absent: the next path decides
        if at > KEY_READ_LIMIT or not _at_top_level(text[:at]):
            return None
        match = _PLAIN_STRING_VALUE.match(text, at + len(name))
        if match is None:
            return None
        try:
            return match.group(1).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return NO_KEY


@lru_cache(maxsize=8)
def _quoted_names(key_path: str | None) -> tuple[tuple[bytes, ...], ...]:
    """Per session key path, in the order _session_key tries them, its names as JSON strings."""
    return tuple(tuple(orjson.dumps(part) for part in path.split(".")) for path in ((key_path,) if key_path else SESSION_KEYS))


_PLAIN_STRING_VALUE = re.compile(rb'[ \t]*:[ \t]*"([^"\\]+)"')


def _at_top_level(before: bytes) -> bool:
    """Whether a key that follows these bytes is a member of the line's top-level object."""
    try:
        orjson.loads(before + b'"":0}')
    except orjson.JSONDecodeError:
        return False
    return True


EPOCH_FLOOR = 1e9  # 2001-09-09 in epoch seconds: a smaller number is a duration (a latency), not a time


def record_time(obj: dict[str, Any]) -> float | None:
    """When a record says its request was made: the first of TIMESTAMP_KEYS that holds an
    epoch time (seconds, or milliseconds: one log uses one unit) or an ISO 8601 time (one
    without a zone read as UTC), in epoch seconds or as the number given."""
    for key in TIMESTAMP_KEYS:
        value = obj.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            if value >= EPOCH_FLOOR:
                return float(value)
            continue
        if isinstance(value, str):
            seconds = iso_seconds(value)
            if seconds is not None:
                return seconds
    return None


def closest_shape_hint(obj: dict[str, Any]) -> str:
    """Name the known shape an unknown record most resembles."""
    keys = set(obj)
    if "anthropic_version" in keys or ("messages" in keys and "system" in keys and "max_tokens" in keys):
        return "it looks like an Anthropic Messages body without its `messages` list"
    if openai_responses.holds_chat_messages(obj):
        return "its `input` holds chat-completions messages (a `tool` role, `tool_calls`), as a trace export stores them; log the request body as sent, {\"messages\": [...]}"
    if "input" in keys and "model" in keys:
        return "it looks like an embeddings body, or a Responses API body with neither `instructions` nor input items"
    if "contents" in keys:
        return "it looks like a Gemini generateContent body whose `contents` is not a list"
    if obj.get("object") == "chat.completion" or "choices" in keys:
        return "it looks like a chat.completion response without its request; log the request too, as an envelope {\"request\": ..., \"response\": ...}"
    if "prompt" in keys:
        return "it looks like a legacy completions body (prompt, no messages)"
    if isinstance(obj.get("role"), str) and ("content" in keys or "tool_calls" in keys):
        return (f"it is one chat message (role `{obj['role']}`), not a request: a transcript stores a conversation one message a line"
                " (mini-SWE-agent's live .traj.jsonl); log each request body as sent, {\"messages\": [...]}, or give the conversation"
                " as one JSON document {\"messages\": [...]} to read it as an agent's trajectory")
    return "expected an envelope {\"request\": {...}}, a bare request {\"messages\": [...]}, or a batch line {\"custom_id\", \"body\"}"


# and the results of server tools (web_search_tool_result, mcp_tool_result, …): *_tool_result
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking", "compaction", "server_tool_use", "mcp_tool_use")


def is_anthropic_body(body: dict[str, Any], known: int = 0) -> bool:
    """An Anthropic Messages request: its own version header in the body, its
    `context_management`, a top-level system prompt (chat-completions has none), tools
    declared with `input_schema`, or content blocks only Anthropic defines (its tool and
    thinking blocks, an image or document with a `source`) in the messages after the first
    `known`, which an earlier chat-completions record had."""
    if "anthropic_version" in body or "context_management" in body or ("system" in body and "messages" in body):
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(tool, dict) and "input_schema" in tool for tool in tools):
        return True
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    for message in messages[known:]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in ANTHROPIC_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result")) or _anthropic_source(part):
                    return True
    return False


def _anthropic_source(part: Any) -> bool:
    """An image or document block as Anthropic defines it, with its `source` (base64, URL,
    file id), which no chat-completions content part has."""
    source = part.get("source") if isinstance(part, dict) and part.get("type") in ("image", "document") else None
    return isinstance(source, dict) and source.get("type") in ("base64", "url", "file", "text", "content")


STATUS_KEYS = ("status", "status_code", "response_status")  # response_status: Helicone's export


def _status(obj: dict[str, Any]) -> int | None:
    return next((status for status in map(http_status, map(obj.get, STATUS_KEYS)) if status is not None), None)


def _is_http_exchange(part: Any) -> bool:
    """An HTTP logger's half of an exchange: the JSON body (beside url, method, headers or
    status); neither a chat request nor a completion has a `body` of its own."""
    return isinstance(part, dict) and ("body" in part or "body_raw" in part) and "messages" not in part and "choices" not in part and "error" not in part


def _exchange_body(part: dict[str, Any]) -> tuple[Any, str]:
    """An exchange's body and its member: `body`, or, where a logger kept a stream's text
    apart (claude-trace: `body_raw`, the SSE as it came), that."""
    return (part["body"], "body") if part.get("body") is not None or "body_raw" not in part else (part["body_raw"], "body_raw")


def http_body(request: Any, pointer: str) -> tuple[Any, str]:
    """The request body as HTTP loggers store it: the object itself, a string holding its
    JSON, or {"url", "method", "headers", "body"}."""
    if _is_http_exchange(request):
        body, name = _exchange_body(request)
        return http_body(body, f"{pointer}/{name}")
    if isinstance(request, str) and request.lstrip().startswith("{"):
        try:
            return orjson.loads(request), pointer
        except orjson.JSONDecodeError:
            return request, pointer  # reported as a string body
    return request, pointer


def _named_model(body: Any, envelope: dict[str, Any], url: Any) -> Any:
    """A body that names no model (the URL does): the envelope's `model`, or the model in
    the logged request's `url` (_logged_url), is the body's."""
    if not isinstance(body, dict) or "model" in body:
        return body
    if isinstance(envelope.get("model"), str):
        return {**body, "model": envelope["model"]}
    return named_by_url(body, url)


def _logged_url(envelope: dict[str, Any]) -> Any:
    """The URL a log line names for its request: an HTTP logger's request's, or the envelope's own."""
    request = envelope.get("request")
    url = request.get("url") or request.get("uri") if isinstance(request, dict) else None
    return url or envelope.get("url") or envelope.get("uri")


def url_host(url: Any) -> str | None:
    """The host a request URL names (lower case, without port), or None."""
    if not isinstance(url, str) or "://" not in url:
        return None
    return urlsplit(url.strip()).hostname or None


def named_by_url(body: dict[str, Any], url: Any) -> dict[str, Any]:
    """The body with the model its URL names, when it names none itself (model_in_url)."""
    model = None if "model" in body else model_in_url(url, body)
    return body if model is None else {**body, "model": model}


def model_in_url(url: Any, body: dict[str, Any]) -> str | None:
    """The model a request's URL names when its body does not: an Anthropic body sent
    through Bedrock or Vertex AI, a Gemini model (…/models/gemini-2.5-pro:generateContent),
    an Azure OpenAI deployment (…/openai/deployments/gpt-4o/chat/completions, usually named
    after its model)."""
    if not isinstance(url, str):
        return None
    if isinstance(body.get("anthropic_version"), str):
        return anthropic.model_in_url(url, body)
    if gemini.is_gemini_body(body):
        return gemini.model_from_url(url)
    if converse.is_converse_body(body):
        return converse.model_from_url(url)
    _, found, rest = url.partition("/openai/deployments/")
    deployment = unquote(rest.split("/", 1)[0]) if found and isinstance(body.get("messages"), list) else ""
    return deployment or None


def _described(body: Any) -> str:
    if isinstance(body, str) and body.lstrip().startswith("{"):
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError as error:
            return f"a string of JSON that does not parse ({error.msg} at column {error.colno})"
    return json_type(body)


# Bodies whose messages an agent framework spells its own way (not the provider's), as apps
# built on it log what they hand it
FRAMEWORK_MESSAGES = (ai_sdk, langchain, llama_index, pydantic_ai)


def body_record(body: Any, file: str, line: int, shape: str, pointer_base: str, reused: int = 0, **fields: Any) -> Record | InputProblem | Skipped:
    if not isinstance(body, dict):
        return InputProblem(file, line, f"request body is {_described(body)}, not an object", pointer_base or "/")
    apart = None  # the settings a logger kept apart are the request's, whatever its API
    if any(isinstance(body.get(member), dict) for member in SETTINGS_APART):
        body, apart = sent_body(body)
    # before Anthropic's: the AI SDK's system is top-level too, LangChain keeps Anthropic's blocks
    framework = next((spelling for spelling in FRAMEWORK_MESSAGES if spelling.is_body(body, reused)), None)
    translated = (None if framework is not None
                  else converse if converse.is_converse_body(body)  # before Anthropic's: its blocks carry no `type`, its system may be top-level
                  else anthropic if is_anthropic_body(body, reused) else None)
    if translated is None and framework is None:
        responses = openai_responses.is_responses_body(body)
        held = history_held_by_provider(body, responses)
        if held is not None:
            return Skipped(file, line, held)
        translated = openai_responses if responses else gemini if gemini.is_gemini_body(body) else None
    if translated is not None:
        return translated_record(translated, body, file, line, shape, pointer_base, apart, **fields)
    sent = None  # where a body read in other terms had what the schema check points at
    if framework is not None:
        try:
            body, fields["source_map"] = framework.to_chat(body)
        except BodyProblem as problem:
            return InputProblem(file, line, f"{framework.NAME} messages: {problem}", pointer_base + problem.pointer)
        sent, reused = fields["source_map"].pointer, 0
        fields["reasoning_recorded"] = framework.reasoning_sent(body["messages"])
    elif ollama.is_ollama_body(body):
        body, reused = _ollama_body(body, fields), 0
    elif dashscope.is_body(body):
        sent = dashscope.sent_pointer(body)
        body, fields["source_map"] = dashscope.to_chat(body)
    elif legacy_functions.is_body(body):
        sent = legacy_functions.sent_pointer(body)
        body, fields["source_map"] = legacy_functions.to_chat(body)
        fields["response"] = numbered_reply(body["messages"], legacy_functions.reply(fields.get("response")))
    other = other_api_call(body)
    if other is not None:
        return Skipped(file, line, other)
    if isinstance(body.get("messages"), list):
        INTERNER.intern(body["messages"], reused)
    problem = schema_problem(body, file, line, pointer_base, reused, sent)
    if problem is not None:
        return problem
    if apart is not None:
        kept = fields.get("source_map")
        fields["source_map"] = apart if kept is None else replace(kept, settings={**kept.settings, **apart.settings})
    return Record(file=file, line=line, shape=shape, request=body, **fields)


def _ollama_body(body: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions body of an Ollama /api/chat body; into `fields`, its source
    map and its reply with the unnamed calls numbered after the request's."""
    chat, fields["source_map"] = ollama.to_chat(body)
    if fields.get("response") is not None:
        fields["response"] = numbered_reply(chat["messages"], fields["response"])
    return chat


# Where a logged body keeps settings apart from the rest, merged in this order: a call's
# keyword arguments logged beside its messages (`kwargs`: OpenHands' completion logs keep
# the model, tools and sampling settings there), LiteLLM's logging payload
# (`model_parameters`: tools, thinking, reasoning_effort…), a trace export's
# (`modelParameters`), the OpenAI SDK's call arguments (`extra_body`: how apps pass GLM's
# `thinking`, Qwen's `enable_thinking`).
SETTINGS_APART = ("kwargs", "model_parameters", "modelParameters", "extra_body")


def sent_body(arguments: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The body that was sent: the keys kept apart merged in, winning over the body's own,
    and the map that points findings about them back to where they were logged. LiteLLM
    logs the provider's own parameters: tools not in chat-completions form (an Anthropic
    deployment's) are not the messages' terms, and are left out."""
    body = {name: value for name, value in arguments.items() if name not in SETTINGS_APART}
    settings: dict[str, str] = {}
    for member in SETTINGS_APART:
        kept = arguments.get(member)
        if not isinstance(kept, dict):
            continue
        if member != "extra_body" and not _chat_tools(kept.get("tools")):
            kept = {name: value for name, value in kept.items() if name != "tools"}
        body.update(kept)
        settings.update({pointer: f"/{member}{pointer}" for pointer in member_pointers(kept)})
    return body, SourceMap((), settings=settings, reasoning=None)


def _chat_tools(tools: Any) -> bool:
    return isinstance(tools, list) and all(
        isinstance(tool, dict) and (tool.get("type") != "function" or isinstance(tool.get("function"), dict))
        and isinstance(tool.get("type"), str) for tool in tools)


CONTEXT_HELD = ("not linted: a request in a context the provider holds (Volcengine's Context API, context_id), "
                "which carries only its new messages")
CACHE_HELD = ("not linted: a Gemini request on a cached content (cachedContent), which holds the start of its "
              "conversation")


def history_held_by_provider(body: dict[str, Any], responses: bool) -> str | None:
    """Why a request carries only its new input, the provider holding the history it goes
    on from (there is no session to rebuild from it), or None when it carries its history.
    `responses`: the body is a Responses API one."""
    if responses and openai_responses.continues_stored_conversation(body):
        return openai_responses.STORED
    if "messages" in body and isinstance(body.get("context_id"), str) and body["context_id"]:
        return CONTEXT_HELD
    if gemini.is_gemini_body(body) and gemini.field(body, "cachedContent"):
        return CACHE_HELD
    return None


def other_api_call(body: dict[str, Any]) -> str | None:
    """Why a body with no conversation is a call of another API, which apps log beside their
    chat requests (an embedding of a retrieved passage, a moderation check, a completion or
    an image from a prompt), or None. Told by what only those bodies hold: a `prompt` and no
    messages; an `input` list of texts or token ids (a Responses API input list holds items,
    objects), or an `input` sent to a model named for embeddings or moderation."""
    if "messages" in body or "input" not in body and "prompt" not in body:
        return None
    if "input" not in body:
        return "not a chat call: a completions or image body (a `prompt`, no `messages`)"
    model, given = body.get("model"), body["input"]
    model = model.lower() if isinstance(model, str) else ""
    if "moderation" in model:
        return "not a chat call: a moderation body"
    texts = isinstance(given, list) and given and all(isinstance(item, (str, int, list)) and not isinstance(item, bool) for item in given)
    if texts or "embed" in model or "encoding_format" in body or "dimensions" in body:
        return "not a chat call: an embeddings body"
    return None


def translated_record(api: Any, body: dict[str, Any], file: str, line: int, shape: str, pointer_base: str,
                      apart: SourceMap | None = None, **fields: Any) -> Record | InputProblem:
    """The record of a body of another API (a module: ingest.anthropic, ingest.openai_responses):
    its normalized request, and the map back into the body (which stands for any map the
    caller had: a trace's messages in Anthropic's blocks are pointed at in the body they
    make), with where the settings logged `apart` from it were."""
    fields.pop("source_map", None)
    try:
        request, source_map = api.to_chat(body)
    except BodyProblem as problem:
        return InputProblem(file, line, f"{api.NAME} body: {problem}", pointer_base + problem.pointer)
    if apart is not None:
        source_map = replace(source_map, settings={**source_map.settings, **apart.settings})
    INTERNER.intern(request["messages"])
    if api is gemini:  # its reply's unnamed calls are numbered after the request's
        fields["response"] = numbered_reply(request["messages"], fields.get("response"))
    if api is openai_responses:
        fields["continues"] = openai_responses.previous_response(body)
        fields["reply_stored"] = body.get("store") is not False
    return Record(file=file, line=line, shape=shape, request=request, source_map=source_map, **fields)


def as_items(parsed: object, file: str, line: int, session_key: str | None, reused: int = 0) -> list[Record | InputProblem | BatchOutput | Skipped]:
    """What ctxlint reads from a parsed log line: one item, or one per span of an
    OpenTelemetry export (ingest.otel) or per run of a LangSmith trace (ingest.langsmith)."""
    try:
        if langsmith.holds_runs(parsed):
            return langsmith.items(parsed, file, line, session_key, body_record)
        if otel.holds_spans(parsed):
            return otel.items(parsed, file, line, session_key, body_record)
    except (RecursionError, TypeError) as error:
        return [too_deep(error, file, line)]
    return [as_item(parsed, file, line, session_key, reused)]


def as_item(parsed: object, file: str, line: int, session_key: str | None, reused: int = 0) -> Record | InputProblem | BatchOutput | Skipped:
    """A parsed log line (or element of a JSON list of them) as what ctxlint reads from
    it; a problem found in parsing stays one, and a record nested too deep to walk is one."""
    if isinstance(parsed, (InputProblem, Skipped)):
        return parsed
    try:
        item = normalize(parsed, file, line, session_key, reused)
    except (RecursionError, TypeError) as error:
        return too_deep(error, file, line)
    if isinstance(parsed, LoggedObject) and isinstance(item, InputProblem) and item.message.startswith(NO_SHAPE):
        return Skipped(file, line, OTHER_OBJECT)  # what else the application logs, not a broken record
    return item


def normalize(obj: Any, file: str, line: int, session_key_path: str | None = None, reused: int = 0,
              unwrap: bool = True, within: str = "") -> Record | InputProblem | BatchOutput | Skipped:
    """The record of one parsed line; `reused` leading messages are already shared objects.
    `unwrap`: a line of no known shape may be a logger's wrapping of one (_unwrapped);
    `within`: the JSON pointer of the member the record was found in, where it was."""
    if not isinstance(obj, dict):
        return InputProblem(file, line, f"{NOT_AN_OBJECT}{json_type(obj)}, not an object")
    reason = trace_exports.skipped_reason(obj) or transcripts.skipped_reason(obj)
    if reason is not None:
        return Skipped(file, line, reason)
    if bedrock_logs.is_invocation_log(obj):
        return _logged_call_record(bedrock_logs.invocation(obj), file, line, "bedrock", within, reused,
                                   _invocation_session_key(obj, session_key_path))
    if kong.is_entry(obj):  # before envelopes: its `request` is the HTTP exchange's metadata
        return _logged_call_record(kong.call(obj), file, line, "kong", within, reused, _session_key(obj, session_key_path))
    batched = _batch_request(obj)  # before envelopes: Gemini's batch requests are under `request`
    if batched is not None:
        member, named = batched
        return body_record(obj[member], file, line, "batch", f"/{member}", reused, custom_id=named,
                           session_key=_session_key(obj, session_key_path) if session_key_path else None)
    if isinstance(obj.get("request"), dict) or ("request" in obj and "messages" not in obj):
        return _envelope(obj, "request", "response", file, line, session_key_path, reused)
    answer = _batch_answer(obj)
    if answer is not None:
        return BatchOutput(file, line, *answer)
    if "messages" not in obj and _traced_generation(obj):
        return _generation_record(obj, file, line, session_key_path, within)
    if posthog.is_event(obj):
        generation = posthog.as_generation(obj)
        if generation is None:
            return Skipped(file, line, posthog.skipped_reason(obj))
        if session_key_path:  # the path names a member of the event, not of the generation it holds
            generation["session_id"], generation["trace_id"] = _session_key(obj, session_key_path), None
        return _generation_record(generation, file, line, None, f"{within}/properties", posthog.INPUT)
    other_call = _other_litellm_call(obj)
    if other_call is not None:
        return Skipped(file, line, f"not chat-completions: LiteLLM {other_call} call")
    if "messages" in obj and not isinstance(obj["messages"], list):
        stored = _messages_stored_as_text(obj["messages"])
        if stored == {}:
            return Skipped(file, line, "a log row that stored no prompt (`messages` empty: LiteLLM's store_prompts_in_spend_logs off)")
        if isinstance(stored, list):
            obj = {**obj, "messages": stored}
    if "messages" in obj or openai_responses.is_responses_body(obj) or gemini.is_gemini_body(obj) or dashscope.is_body(obj):
        failed = _logged_failure(obj)
        unanswered = failed is None and obj.get("response") is None
        merged = _merged_reply(obj) if unanswered else ()
        named = _member(obj, _is_reply_body) if unanswered and not merged else None
        if unanswered and not merged and named is None:
            return _linked(body_record(obj, file, line, "bare", "", reused, session_key=_session_key(obj, session_key_path), timestamp=record_time(obj)), obj)
        # a request body with its reply beside the messages, as proxies log them (as
        # `response`, or under a name of the app's: `completion`, `output`), or merged into
        # it (an app that logs the call's arguments and the completion as one object), or the
        # error of a call LiteLLM logged as failed
        beside = merged or ((named or "response",) if failed is None else ("response", "error_str", "error_information"))
        body = {name: value for name, value in obj.items() if name not in beside}
        reply = {name: obj[name] for name in merged} if merged else obj.get(beside[0])  # a failure may log no response at all
        return body_record(body, file, line, "bare", "", reused, response=failed or reply_of(reply, _status(obj)),
                       session_key=_session_key(obj, session_key_path), timestamp=record_time(obj))
    request_name = _member(obj, _is_request_body)
    if request_name is not None:  # an envelope under other names: {"request_body": ..., "response_body": ...}
        return _envelope(obj, request_name, _member(obj, _is_response_body, request_name), file, line, session_key_path, reused)
    reply = _reply_alone(obj, file, line, session_key_path)
    if reply is not None:
        return reply
    wrapped = _unwrapped(obj, file, line, session_key_path) if unwrap else None
    if wrapped is not None:
        return wrapped
    step = trace_exports.unread_step(obj) or (other_api_call(obj) if isinstance(obj.get("model"), str) else None)
    return Skipped(file, line, step) if step is not None else InputProblem(file, line, f"{NO_SHAPE}{closest_shape_hint(obj)}")


# Members a chat.completion adds when it is merged into the request body that got it
# (`{**arguments, **completion}`); `usage` only when it counts tokens (OpenRouter's request
# setting `usage: {"include": true}` is the request's)
COMPLETION_MEMBERS = ("choices", "object", "created", "system_fingerprint", "service_tier", "usage")
TOKEN_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _messages_stored_as_text(messages: Any) -> Any:
    """`messages` as a log row keeps it: as is, or decoded where the logger stored it as the
    JSON text of the list (LiteLLM's spend logs: `"messages": "[{\\"role\\": …}]"`, and `"{}"`
    when it stored no prompt)."""
    if isinstance(messages, str) and messages.lstrip()[:1] in ("[", "{"):
        try:
            return orjson.loads(messages)
        except orjson.JSONDecodeError:
            return messages  # the schema check says what is wrong with it
    return messages


def holds_reply_beside(obj: dict[str, Any]) -> bool:
    """Whether a request body was logged with its reply beside its messages (as `response`,
    under a name of the app's, or merged into it): a logged call, not a conversation dump."""
    return obj.get("response") is not None or bool(_merged_reply(obj)) or _member(obj, _is_reply_body) is not None


def _merged_reply(obj: dict[str, Any]) -> tuple[str, ...]:
    """The members of a chat.completion merged into a request body, or () when it holds none."""
    if not isinstance(obj.get("choices"), list):
        return ()
    usage = obj.get("usage")
    counted = isinstance(usage, dict) and any(name in usage for name in TOKEN_COUNTS)
    return tuple(name for name in COMPLETION_MEMBERS if name in obj and (name != "usage" or counted))


# How normalize's problems open when a value is no record at all (_unwrapped looks past those)
NOT_AN_OBJECT, NO_SHAPE = "record is ", "not a known record shape: "


def _unwrapped(obj: dict[str, Any], file: str, line: int, session_key_path: str | None) -> Any:
    """What a line holds when a logger wrapped the app's log record in a member of its own
    (Google Cloud Logging's `jsonPayload`, Docker's `log` string, a structured logger's
    `data`): the one member that is a record (an object, or a string of one), read one
    level down, with the line's session key and time where the record has none. When no
    member reads as one, the one that opens as a record and breaks is that problem,
    pointing into the member. None when no member, or several, hold one."""
    read, broken = [], []  # members read as records; members that open as records and break
    for name, value in obj.items():
        inner, _ = http_body(value, "")
        if isinstance(inner, dict):
            item = normalize(inner, file, line, session_key_path, unwrap=False, within=json_pointer((name,)))
            if not isinstance(item, InputProblem):
                read.append((name, item))
            elif not item.message.startswith((NOT_AN_OBJECT, NO_SHAPE)):
                broken.append((name, item))
    found = read or broken
    if len(found) != 1:
        return None
    name, item = found[0]
    if isinstance(item, InputProblem):
        pointer = json_pointer((name,)) + (item.pointer or "")
        said = f" at {item.pointer}" if item.pointer else None  # the path the message names, as the pointer now has it
        return replace(item, pointer=pointer, message=item.message.replace(said, f" at {pointer}", 1) if said else item.message)
    if isinstance(item, ReplyLine) and item.session_key is None:
        return replace(item, session_key=_session_key(obj, session_key_path))
    if isinstance(item, Record):
        item.session_key = item.session_key if item.session_key is not None else _session_key(obj, session_key_path)
        item.timestamp = item.timestamp if item.timestamp is not None else record_time(obj)
    return item


def _logged_call_record(call: LoggedCall | str, file: str, line: int, shape: str, within: str, reused: int,
                        session_key: str | None) -> Record | InputProblem | Skipped:
    """The request a gateway's or a cloud's log entry records (ingest.bedrock_logs,
    ingest.kong), with its reply; or why it holds none, as a skip."""
    if isinstance(call, str):
        return Skipped(file, line, call)
    return body_record(call.body, file, line, shape, within + call.pointer, reused,
                       response=_counted_by_log(call.response, call.prompt_tokens), session_key=session_key, timestamp=call.timestamp)


def _counted_by_log(response: Response | None, prompt_tokens: int | None) -> Response | None:
    """The reply, with the prompt's size the log counted where the reply counts none."""
    if prompt_tokens is None or (response is not None and response.usage is not None):
        return response
    response = response or Response()
    response.usage = {"prompt_tokens": prompt_tokens}
    return response


def _traced_generation(obj: dict[str, Any]) -> bool:
    """A trace export's record of one call (as a Langfuse generation keeps it): the chat
    messages sent as `input`, the reply as `output`. Chat messages, not Responses items:
    it has a tool message or tool calls, which the Responses API does not take, or an
    `output` beside plain role messages."""
    items = obj.get("input")
    if not isinstance(items, list) or not items or openai_responses.is_response_body(obj):  # a Responses reply merged into its request
        return False
    return openai_responses.holds_chat_messages(obj) or (
        "output" in obj and all(isinstance(item, dict) and "type" not in item and isinstance(item.get("role"), str) for item in items))


def _generation_record(obj: dict[str, Any], file: str, line: int, session_key_path: str | None, within: str,
                       input_name: str = "input") -> Record | InputProblem | Skipped:
    """The request a traced generation stands for: its model, its input as the messages,
    its tools and model parameters; its output as the reply. A span that names no model
    beside its input keeps the call's parameters as its metadata (Braintrust's: the model,
    the tools, the settings), and its reply's choices as its output. Findings point at the
    input as `within` and `input_name` place it in the line (PostHog's `/properties/$ai_input`)."""
    body: dict[str, Any] = {"model": obj.get("model"), "messages": obj["input"]}
    body.update({name: obj[name] for name in ("tools", *SETTINGS_APART) if name in obj})
    # a trace keeps the call's settings as far as its tracer took them: a switch it does not show is unknown
    source_map, fields = kept_in_place(obj["input"], f"{within}/{input_name}"[1:]), {"settings_recorded": False}
    parameters = obj.get("metadata")
    if langchain.spelled_by_langchain(obj["input"]):  # Langfuse's LangChain handler keeps LangChain's messages
        try:
            body["messages"], origins = langchain.chat_messages(obj["input"], f"{within}/{input_name}")
        except BodyProblem as problem:
            return InputProblem(file, line, f"LangChain messages: {problem}", problem.pointer)
        source_map = SourceMap(origins, reasoning=None)
        provider = parameters.get("ls_provider") if isinstance(parameters, dict) else None
        fields["reasoning_recorded"] = langchain.reasoning_recorded(provider, body["messages"])
    if body["model"] is None and isinstance(parameters, dict) and isinstance(parameters.get("model"), str):
        body.update({name: value for name, value in parameters.items() if body.get(name) is None})
        fields["settings_recorded"] = True  # Braintrust keeps every argument of the call
        source_map = replace(source_map, settings={pointer: f"{within}/metadata{pointer}" for pointer in member_pointers(parameters)})
    return body_record(body, file, line, "bare", "", response=_traced_reply(obj), source_map=source_map,
                   session_key=_session_key(obj, session_key_path), timestamp=record_time(obj), **fields)


def _traced_reply(obj: dict[str, Any]) -> Response | None:
    """The reply a traced generation's `output` holds, as each tracer keeps it (a reply
    body, the message, its text; Braintrust's list of choices, the Agents SDK's list of the
    one message, the calls alone as Langfuse's LangChain handler keeps them), with the
    trace's token counts where the reply has none."""
    output, metrics = obj.get("output"), obj.get("metrics")
    if isinstance(output, list) and output and all(isinstance(choice, dict) and "message" in choice for choice in output):
        counted = isinstance(metrics, dict) and "prompt_tokens" in metrics  # the span's token counts
        output = {"choices": output, "usage": {name: metrics.get(name) for name in TOKEN_COUNTS} if counted else None}
    elif isinstance(output, list) and len(output) == 1 and isinstance(output[0], dict) and output[0].get("role") == "assistant":
        output = output[0]
    elif isinstance(output, dict) and isinstance(output.get("tool_calls"), list) and "role" not in output:
        output = {**output, "role": "assistant"}
    response = reply_of(output, None)
    if response is not None and response.usage is None:
        response.usage = _counted_input(obj.get("usageDetails") or obj.get("usage"))
    return response


def _counted_input(counts: Any) -> dict[str, Any] | None:
    """A trace's token counts as the reply's usage: Langfuse's (`{"input": 40,
    "input_cache_read": 12, …}`: the cached tokens apart) summed, a provider's as they are
    (the OpenAI Agents SDK's `input_tokens`)."""
    if not isinstance(counts, dict):
        return None
    if isinstance(counts.get("input"), int):
        return {"prompt_tokens": sum(value for name, value in counts.items() if name.startswith("input") and isinstance(value, int))}
    return counts if any(isinstance(counts.get(name), int) for name in ("prompt_tokens", "input_tokens")) else None


# LiteLLM's call types (its logging payload's `call_type`) that are no chat call, though
# the payload keeps their input under `messages`: embedding inputs, an image prompt…
OTHER_CALL_TYPES = ("embedding", "image", "moderation", "transcription", "speech", "rerank", "text_completion", "file", "batch", "search")


def _other_litellm_call(obj: dict[str, Any]) -> str | None:
    call_type = obj.get("call_type")
    if isinstance(call_type, str) and "messages" in obj and any(kind in call_type for kind in OTHER_CALL_TYPES):
        return call_type
    return None


def _logged_failure(obj: dict[str, Any]) -> Response | None:
    """The error of a call LiteLLM logged as failed (`status: failure`, `error_str`)."""
    if obj.get("status") != "failure" or not isinstance(obj.get("error_str"), str):
        return None
    information = object_member(obj, "error_information")
    code = information.get("error_code")
    return Response(error={"message": obj["error_str"], "type": str_or_none(information.get("error_class")),
                           "code": str(code) if code not in (None, "") else None},
                    status=http_status(int(code)) if isinstance(code, str) and code.isdigit() else http_status(code))


def _reply_alone(obj: dict[str, Any], file: str, line: int, session_key_path: str | None) -> ReplyLine | InputProblem | None:
    """A line that logs a reply and no request: a ReplyLine when it names its request or
    session, a problem when it names neither; None when it holds no reply either."""
    name = "response" if "response" in obj else _member(obj, _is_response_body)
    if name is None:
        return None
    parsed = _reply_under(obj, name)
    if parsed is None:
        return None
    links, session_key = request_links(obj), _session_key(obj, session_key_path)
    if not links and session_key is None:
        return InputProblem(file, line, f"a reply logged without its request, and nothing on the line names the request it answers "
                                        f"({', '.join(REQUEST_ID_KEYS)}) or its session")
    return ReplyLine(file, line, links, session_key, parsed)


def _envelope(obj: dict[str, Any], request_name: str, response_name: str | None, file: str, line: int,
              session_key_path: str | None, reused: int) -> Record | InputProblem | Skipped:
    """The record of a request logged with what came back, each under its member's name."""
    request, pointer = http_body(obj.get(request_name), json_pointer((request_name,)))
    url = _logged_url(obj)
    record = body_record(
        _named_model(request, obj, url), file, line, "envelope", pointer, reused,
        response=_reply_under(obj, response_name),
        session_key=_session_key(obj, session_key_path), timestamp=record_time(obj), host=url_host(url),
    )
    return _linked(record, obj)


def _reply_under(obj: dict[str, Any], name: str | None) -> Response | None:
    """The reply a log line holds under `name`: as the provider sent it, or in an HTTP
    logger's exchange, whose status wins over the line's."""
    response, status = obj.get(name) if name else None, _status(obj)
    if _is_http_exchange(response):
        response, status = _exchange_body(response)[0], _status(response) or status
    return reply_of(response, status)


def reply_of(value: Any, status: int | None) -> Response | None:
    """The reply a log holds beside its request: as the provider sent it, or the text an
    app logged of it (a string that is no JSON, no stream and no error page)."""
    parsed = parse_response(value, status)
    if (isinstance(value, str) and parsed is not None and parsed.message is None and not parsed.failed
            and value.strip() and not value.lstrip()[:9].lower().startswith(("<!doctype", "<html"))):
        return parse_response({"role": "assistant", "content": value}, status)
    return parsed


def _linked(record: Record | InputProblem | Skipped, line: dict[str, Any]) -> Record | InputProblem | Skipped:
    """A request logged without its reply, with the ids a reply line may name it by."""
    links = request_links(line)
    if links and isinstance(record, Record) and awaits_reply(record):
        record.extra["links"] = links
    return record


def awaits_reply(record: Record) -> bool:
    """The line logged no reply (at most a status) for the request."""
    return record.response is None or (record.response.message is None and not record.response.failed and record.response.id is None)


def _member(obj: dict[str, Any], holds: Any, besides: str | None = None) -> str | None:
    """The name of the one member (other than `besides`) whose value, or the JSON body an
    HTTP logger stored it as, `holds` says yes to; None when none or several do."""
    found = [name for name, value in obj.items() if name != besides and holds(http_body(value, "")[0])]
    return found[0] if len(found) == 1 else None


def _is_request_body(value: Any) -> bool:
    """A request body: chat messages, Responses API input, Gemini contents; not a traced
    generation, whose `input` and `output` are one call's (read one level down)."""
    return isinstance(value, dict) and (isinstance(value.get("messages"), list) or openai_responses.is_responses_body(value)
                                        or gemini.is_gemini_body(value) or dashscope.is_body(value)) and not _traced_generation(value)


def _is_reply_body(value: Any) -> bool:
    """A member of a request body that holds a reply to it: a provider's reply body, or the
    assistant message alone (not an error: a request's own settings may name one)."""
    return isinstance(value, dict) and (isinstance(value.get("choices"), list) or value.get("role") == "assistant"
                                        or anthropic.is_message_body(value) or openai_responses.is_response_body(value)
                                        or isinstance(value.get("candidates"), list))


def _is_response_body(value: Any) -> bool:
    return isinstance(value, dict) and (isinstance(value.get("choices"), list) or isinstance(value.get("error"), (dict, str))
                                        or anthropic.is_message_body(value) or openai_responses.is_response_body(value)
                                        or gemini.is_response_body(value) or dashscope.is_reply(value))
