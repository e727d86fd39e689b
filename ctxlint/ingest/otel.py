"""OpenTelemetry spans of model calls, as the requests they record.

A tracer records a model call as a span whose attributes hold what was sent and what came
back, in one of three spellings: the GenAI semantic conventions' messages
(`gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`: JSON
arrays of `{role, parts}`); their older indexed attributes, as OpenLLMetry writes them
(`gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, `gen_ai.completion.0.tool_calls.0.name`);
or OpenInference's, as Arize Phoenix writes them (`llm.input_messages.0.message.role`,
`llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments`); or the Vercel AI
SDK's, on the span of each call to the provider (`ai.generateText.doGenerate`,
`ai.streamText.doStream`): `ai.prompt.messages` (its own message parts: `tool-call`,
`tool-result`, `reasoning`), `ai.prompt.tools`, `ai.response.text` and
`ai.response.toolCalls` (the span around a whole generateText/streamText call holds the
user's prompt, not a request, and is skipped); or, as earlier semantic conventions had it,
in the span's `gen_ai.content.prompt` and `gen_ai.content.completion` events (their
`gen_ai.prompt` and `gen_ai.completion` attributes, the JSON of the chat messages). A line holds
one span, or an OTLP export (`resourceSpans`) of many: each model-call span is one request,
at the line, and its findings point at the attribute that holds the messages. The other
spans (an agent's, a tool's) and model-call spans recorded without their messages (the
default of most instrumentations) are counted as skipped, by reason.

MLflow's spans keep what a call was given and gave back as JSON text
(`mlflow.spanInputs`, `mlflow.spanOutputs`): a chat model's span (`mlflow.spanType`
`CHAT_MODEL` or `LLM`) whose inputs are the body an autologged client sent is read as
that body (`read_body`, shapes.body_record), its outputs as the reply. A trace as MLflow
exports it (`{"info": …, "data": {"spans": […]}}`) is a line of spans.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

import orjson

from ctxlint.chat import object_member
from ctxlint.ingest import ai_sdk
from ctxlint.ingest.intern import INTERNER
from ctxlint.ingest.record import InputProblem, ReadBody, Record, Skipped, iso_seconds
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest.schema import json_pointer, schema_problem
from ctxlint.ingest.source_map import Origin, SourceMap

SEMCONV_INPUT, SEMCONV_OUTPUT, SEMCONV_SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
INDEXED_INPUT, INDEXED_OUTPUT = "gen_ai.prompt", "gen_ai.completion"
INFERENCE_INPUT, INFERENCE_OUTPUT = "llm.input_messages", "llm.output_messages"
AI_SDK_INPUT = "ai.prompt.messages"
PROMPT_EVENT, COMPLETION_EVENT = "gen_ai.content.prompt", "gen_ai.content.completion"
# The AI SDK's spans around a whole call (its steps, `….doGenerate` / `….doStream`, are the requests)
AI_SDK_CALLS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "ai.model.id")
SESSION_KEYS = ("gen_ai.conversation.id", "session.id", "conversation.id", "mlflow.trace.session", "ai.telemetry.metadata.sessionId")
PROMPT_TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
                     "ai.usage.inputTokens", "ai.usage.promptTokens")
MODEL_CALLS = ("chat", "text_completion", "generate_content")
MLFLOW_INPUTS, MLFLOW_MODEL_CALLS = "mlflow.spanInputs", ("CHAT_MODEL", "LLM")
# the semantic conventions' finish reasons in chat-completions terms
FINISH_REASONS = {"tool_call": "tool_calls", "tool_calls": "tool_calls", "stop": "stop", "length": "length",
                  "content_filter": "content_filter", "error": "error", "tool-calls": "tool_calls", "content-filter": "content_filter"}
_INDEX = re.compile(r"\d+")


def _list(value: Any) -> list[Any]:
    """A value that should be a list, or an empty one: a span export is read as far as it is well formed."""
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in _list(value) if isinstance(item, dict)]


def holds_spans(obj: Any) -> bool:
    """Whether a parsed line is an OTLP export of spans, an MLflow trace, or one span."""
    return isinstance(obj, dict) and (isinstance(obj.get("resourceSpans"), list) or _mlflow_spans(obj) is not None or _is_span(obj))


def _mlflow_spans(obj: dict[str, Any]) -> list[Any] | None:
    data = obj.get("data")
    return data["spans"] if isinstance(data, dict) and isinstance(data.get("spans"), list) and "info" in obj else None


def _is_span(obj: dict[str, Any]) -> bool:
    context = obj.get("context")
    return isinstance(obj.get("attributes"), (list, dict)) and (
        "spanId" in obj or "span_id" in obj or (isinstance(context, dict) and "span_id" in context))


def items(obj: dict[str, Any], file: str, line: int, session_key_path: str | None, read_body: ReadBody) -> list[Record | InputProblem | Skipped]:
    """What a line of spans holds: a record per model-call span, a skip per other span.
    `read_body` reads the body an MLflow span kept (shapes.body_record)."""
    return [_item(span, pointer, resource, file, line, session_key_path, read_body) for pointer, span, resource in _spans(obj)]


def _spans(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(JSON pointer, span, its resource's attributes) of each span on the line."""
    mlflow = _mlflow_spans(obj)
    if mlflow is not None:  # the trace's metadata names its session (mlflow.trace.session), as a resource's attributes would
        info = obj["info"] if isinstance(obj["info"], dict) else {}
        metadata = next((info[key] for key in ("trace_metadata", "request_metadata") if isinstance(info.get(key), dict)), {})
        yield from ((f"/data/spans/{i}", span, metadata) for i, span in enumerate(mlflow) if isinstance(span, dict))
        return
    if not isinstance(obj.get("resourceSpans"), list):
        resource = obj.get("resource")
        yield "", obj, attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
        return
    for r, resource_spans in enumerate(obj["resourceSpans"]):
        if not isinstance(resource_spans, dict):
            continue
        resource = resource_spans.get("resource")
        resource_attributes = attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
        for scope_name in ("scopeSpans", "instrumentationLibrarySpans"):
            for s, scope in enumerate(_list(resource_spans.get(scope_name))):
                for i, span in enumerate(_list(scope.get("spans")) if isinstance(scope, dict) else []):
                    if isinstance(span, dict):
                        yield f"/resourceSpans/{r}/{scope_name}/{s}/spans/{i}", span, resource_attributes


def attributes(raw: Any) -> dict[str, Any]:
    """A span's attributes as name -> value: an OTLP list of `{key, value: {stringValue…}}`, or
    an object of them as an SDK's exporter writes it."""
    if isinstance(raw, dict):
        return raw
    found = {}
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            found[entry["key"]] = _value(entry.get("value"))
    return found


def _value(value: Any) -> Any:
    """An OTLP AnyValue as the plain value it holds (intValue is a string in OTLP JSON)."""
    if not isinstance(value, dict):
        return value
    for kind in ("stringValue", "boolValue", "doubleValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if isinstance(value.get("arrayValue"), dict):
        return [_value(item) for item in _list(value["arrayValue"].get("values"))]
    if isinstance(value.get("kvlistValue"), dict):
        return attributes(value["kvlistValue"].get("values"))
    return None


def _attribute_pointers(span: dict[str, Any], pointer: str) -> dict[str, str]:
    """Attribute name -> the JSON pointer of its value in the span."""
    raw = span.get("attributes")
    if isinstance(raw, dict):
        return {name: f"{pointer}/attributes{json_pointer((name,))}" for name in raw}
    return {entry["key"]: f"{pointer}/attributes/{k}/value" for k, entry in enumerate(_list(raw))
            if isinstance(entry, dict) and isinstance(entry.get("key"), str)}


def _item(span: dict[str, Any], pointer: str, resource: dict[str, Any], file: str, line: int,
          session_key_path: str | None, read_body: ReadBody) -> Record | InputProblem | Skipped:
    attrs = attributes(span.get("attributes"))
    if MLFLOW_INPUTS in attrs:
        return _mlflow_item(span, pointer, attrs, resource, file, line, session_key_path, read_body)
    if attrs.get("ai.operationId") in AI_SDK_CALLS:
        return Skipped(file, line, "Vercel AI SDK call span (the spans of its steps hold the requests)")
    events = _content_events(span, pointer)
    attrs = {**attrs, **{name: value for name, (value, _) in events.items()}}  # read as attributes under the events' names
    dialect = _dialect(attrs)
    if dialect is None:
        if attrs.get("gen_ai.operation.name") in MODEL_CALLS or any(key in attrs for key in MODEL_KEYS):
            return Skipped(file, line, "OpenTelemetry model-call span recorded without its messages (content capture off)")
        return Skipped(file, line, "OpenTelemetry span of no model call (an agent's, a tool's)")
    messages, origins_of, reply = dialect(attrs)
    where = {**_attribute_pointers(span, pointer), **{name: at for name, (_, at) in events.items()}}
    body: dict[str, Any] = {"model": next((attrs[key] for key in MODEL_KEYS if isinstance(attrs.get(key), str)), None),
                            "messages": messages}
    tools = _tools(attrs)
    if tools:
        body["tools"] = tools
    problem = schema_problem(body, file, line, pointer + "/attributes")
    if problem is not None:  # what the span holds does not make a chat request (a message without its role…)
        return problem
    origins = tuple(Origin(index, where.get(origins_of[index], pointer or "/"), content="") for index in range(len(messages)))
    INTERNER.intern(messages)
    # a tracer that records reasoning parts shows some in what was sent; one that records only
    # text and calls (OpenLLMetry's and OpenInference's attributes, and many semantic-
    # conventions tracers) says nothing of the reasoning an app passed back
    recorded = dialect in (_semconv, _ai_sdk) and any("reasoning_content" in message for message in messages)
    return Record(file=file, line=line, shape="otel", request=body, response=_response(reply, attrs, span),
                  session_key=_session(attrs, resource, session_key_path), timestamp=_start(span),
                  source_map=SourceMap(origins, reasoning="reasoning part" if dialect in (_semconv, _ai_sdk) else None),
                  reasoning_recorded=recorded, settings_recorded=False)


def _mlflow_item(span: dict[str, Any], pointer: str, attrs: dict[str, Any], resource: dict[str, Any], file: str, line: int,
                 session_key_path: str | None, read_body: ReadBody) -> Record | InputProblem | Skipped:
    """An MLflow span: a chat model's call, read as the body its inputs keep; any other
    step (an agent's, a chain's, a tool's) is skipped."""
    kind = _json(attrs.get("mlflow.spanType"))
    if kind not in MLFLOW_MODEL_CALLS:
        return Skipped(file, line, f"MLflow {kind or 'untyped'} span (no model call)")
    body = _json(attrs[MLFLOW_INPUTS])
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return Skipped(file, line, "MLflow model-call span whose inputs are no chat request body")
    where = _attribute_pointers(span, pointer).get(MLFLOW_INPUTS, pointer)
    return read_body(body, file, line, "otel", where, response=parse_response(_json(attrs.get("mlflow.spanOutputs"))),
                     session_key=_session(attrs, resource, session_key_path), timestamp=_start(span))


def _dialect(attrs: dict[str, Any]) -> Any:
    """How the span spells its messages: the function that reads them, or None."""
    if SEMCONV_INPUT in attrs:
        return _semconv
    if any(key.startswith(INDEXED_INPUT + ".") for key in attrs):
        return _indexed
    if any(key.startswith(INFERENCE_INPUT + ".") for key in attrs):
        return _inference
    if AI_SDK_INPUT in attrs:
        return _ai_sdk
    if PROMPT_EVENT in attrs:
        return _event_messages
    return None


def _content_events(span: dict[str, Any], pointer: str) -> dict[str, tuple[Any, str]]:
    """The messages the span's content events hold (the semantic conventions' earlier
    `gen_ai.content.prompt` / `gen_ai.content.completion` events, whose `gen_ai.prompt` /
    `gen_ai.completion` attribute is the JSON of what was sent and said): event name ->
    (that value, its JSON pointer)."""
    found = {}
    for index, event in enumerate(_list(span.get("events"))):
        if isinstance(event, dict) and event.get("name") in (PROMPT_EVENT, COMPLETION_EVENT):
            key = "gen_ai.prompt" if event["name"] == PROMPT_EVENT else "gen_ai.completion"
            value = attributes(event.get("attributes")).get(key)
            if value is not None:
                found[event["name"]] = (value, _attribute_pointers(event, f"{pointer}/events/{index}").get(key, pointer or "/"))
    return found


# -- the semantic conventions' JSON messages -----------------------------------------------------

def _semconv(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    messages: list[dict[str, Any]] = []
    origins: list[str] = []
    instructions = _dicts(_json(attrs.get(SEMCONV_SYSTEM)))
    if instructions:
        messages.append({"role": "system", "content": _texts(instructions)})
        origins.append(SEMCONV_SYSTEM)
    for message in _dicts(_json(attrs.get(SEMCONV_INPUT))):
        converted = _from_parts(message.get("role"), message.get("parts"))
        messages += converted
        origins += [SEMCONV_INPUT] * len(converted)
    output = _dicts(_json(attrs.get(SEMCONV_OUTPUT)))
    reply = None
    if output:
        converted = _from_parts("assistant", output[0].get("parts"))
        if converted[0]["role"] == "assistant":  # not a tool result recorded as the output
            reply = {"message": converted[0], "finish_reason": output[0].get("finish_reason")}
    return messages, origins, reply


def _from_parts(role: Any, parts: Any) -> list[dict[str, Any]]:
    """One message of the semantic conventions' parts as chat messages: the message, or a
    tool message per tool result part."""
    parts = _dicts(parts)
    results = [{"role": "tool", "tool_call_id": _id(part.get("id")), "content": _as_text(part.get("response"))}
               for part in parts if part.get("type") == "tool_call_response"]
    said = [part for part in parts if part.get("type") != "tool_call_response"]
    if results and not said:
        return results
    calls = [_call(part.get("id"), part.get("name"), part.get("arguments")) for part in said if part.get("type") == "tool_call"]
    content = _texts([part for part in said if part.get("type") != "tool_call" and "reasoning" not in str(part.get("type"))])
    message: dict[str, Any] = {"role": role if isinstance(role, str) else "user",
                               "content": content if content or role != "assistant" else None}
    reasoning = "".join(str(part.get("content") or "") for part in said if part.get("type") == "reasoning")
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return [message, *results]


def _texts(parts: list[dict[str, Any]]) -> Any:
    """Text parts as a message's content: one text as a string, else content parts (media
    parts as the image or file they name)."""
    texts = [str(part.get("content") or "") for part in parts if part.get("type") == "text"]
    media = [part for part in parts if part.get("type") != "text"]
    if not media:
        return texts[0] if len(texts) == 1 else "".join(texts)
    return [{"type": "text", "text": text} for text in texts] + [
        {"type": "image_url", "image_url": {"url": str(part.get("uri") or part.get("file_id") or "")}} for part in media]


# -- content events: the JSON of the chat messages sent and said ----------------------------------

def _event_messages(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    sent = _json(attrs[PROMPT_EVENT])
    messages = [message for message in _dicts(sent if isinstance(sent, list) else [sent]) if isinstance(message.get("role"), str)]
    said = _json(attrs.get(COMPLETION_EVENT))
    said = said[0] if isinstance(said, list) and said else said
    said = said.get("message", said) if isinstance(said, dict) else said
    reply = None
    if isinstance(said, dict):
        reply = {"message": {**said, "role": "assistant"}, "finish_reason": said.get("finish_reason")}
    elif isinstance(said, str):
        reply = {"message": {"role": "assistant", "content": said}, "finish_reason": None}
    return messages, [PROMPT_EVENT] * len(messages), reply


# -- the Vercel AI SDK's messages ------------------------------------------------------------------

def _ai_sdk(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    messages: list[dict[str, Any]] = []
    for message in _dicts(_json(attrs.get(AI_SDK_INPUT))):
        messages += _from_ai_sdk(message.get("role"), message.get("content"))
    calls = [ai_sdk.tool_call(call) for call in _dicts(_json(attrs.get("ai.response.toolCalls")))]
    text = attrs.get("ai.response.text")
    reply = None
    if calls or isinstance(text, str):
        message: dict[str, Any] = {"role": "assistant", "content": text if isinstance(text, str) and text else None}
        if calls:
            message["tool_calls"] = calls
        reply = {"message": message, "finish_reason": attrs.get("ai.response.finishReason")}
    return messages, [AI_SDK_INPUT] * len(messages), reply


def _from_ai_sdk(role: Any, content: Any) -> list[dict[str, Any]]:
    """One AI SDK message as chat messages: a string content as it is, parts as parts are."""
    if isinstance(content, list):
        return ai_sdk.chat_messages({"role": role if isinstance(role, str) else "user", "content": content}, AI_SDK_INPUT)[0]
    return [{"role": role if isinstance(role, str) else "user", "content": content if isinstance(content, str) else _as_text(content)}]


# -- flattened attributes: OpenLLMetry's indexed ones, OpenInference's ---------------------------

def _indexed(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    messages, origins = _flat_messages(attrs, INDEXED_INPUT, lambda item: item)
    output = _unflatten(attrs, INDEXED_OUTPUT)
    reply = None
    if output:
        message = _flat_message(output[0])
        message["role"] = "assistant"
        reply = {"message": message, "finish_reason": output[0].get("finish_reason")}
    return messages, origins, reply


def _inference(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str], dict[str, Any] | None]:
    messages, origins = _flat_messages(attrs, INFERENCE_INPUT, lambda item: item.get("message"))
    output = [item.get("message") for item in _unflatten(attrs, INFERENCE_OUTPUT) if isinstance(item.get("message"), dict)]
    reply = None
    if output:
        message = _flat_message(output[0])
        message["role"] = "assistant"
        reply = {"message": message, "finish_reason": None}
    return messages, origins, reply


def _flat_messages(attrs: dict[str, Any], prefix: str, unwrap: Any) -> tuple[list[dict[str, Any]], list[str]]:
    messages, origins = [], []
    for index, item in enumerate(_unflatten(attrs, prefix)):
        inner = unwrap(item)
        if isinstance(inner, dict):
            messages.append(_flat_message(inner))
            origins.append(next((key for key in attrs if key.startswith(f"{prefix}.{index}.")), prefix))
    return messages, origins


def _flat_message(item: dict[str, Any]) -> dict[str, Any]:
    """A flattened message (OpenLLMetry's or OpenInference's fields) as a chat message."""
    role = item.get("role") if isinstance(item.get("role"), str) else "user"
    content = item.get("content")
    if content is None and isinstance(item.get("contents"), list):  # OpenInference's content parts
        content = "".join(str(part["message_content"].get("text") or "") for part in _dicts(item["contents"])
                          if isinstance(part.get("message_content"), dict))
    parsed = _json(content) if isinstance(content, str) and content.startswith("[") else None
    if isinstance(parsed, list) and all(isinstance(part, dict) and "type" in part for part in parsed):
        content = parsed  # content parts serialized as a JSON string
    elif content is not None and not isinstance(content, str):
        content = _as_text(content)
    message: dict[str, Any] = {"role": role, "content": content if content is not None or role != "user" else ""}
    calls = []
    for call in _dicts(item.get("tool_calls")):
        call = call["tool_call"] if isinstance(call.get("tool_call"), dict) else call
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        calls.append(_call(call.get("id"), function.get("name"), function.get("arguments")))
    if calls:
        message["tool_calls"] = calls
    if item.get("tool_call_id") is not None:
        message["tool_call_id"] = _id(item["tool_call_id"])
    return message


def _unflatten(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items `prefix.0.…`, `prefix.1.…` as nested objects, numbered members as lists."""
    root: dict[str, Any] = {}
    start = len(prefix) + 1
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            node = root
            path = key[start:].split(".")
            for segment in path[:-1]:
                node = node.setdefault(segment, {})
                if not isinstance(node, dict):
                    break
            else:
                node[path[-1]] = value
    listed = _listed(root)
    return [item for item in listed if isinstance(item, dict)] if isinstance(listed, list) else []


def _listed(node: Any) -> Any:
    """An object whose members are all numbers, as the list they number (in order)."""
    if not isinstance(node, dict):
        return node
    if node and all(_INDEX.fullmatch(name) for name in node):
        return [_listed(node[name]) for name in sorted(node, key=int)]
    return {name: _listed(value) for name, value in node.items()}


# -- what every dialect shares ---------------------------------------------------------------

def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A tool call in chat-completions form: its arguments as the JSON string that holds them."""
    text = arguments if isinstance(arguments, str) else _as_text(arguments if arguments is not None else {})
    return {"id": _id(call_id), "type": "function", "function": {"name": name if isinstance(name, str) else None, "arguments": text}}


def _id(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else _as_text(value)


def _as_text(value: Any) -> str:
    """A value as the text a chat message holds: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode() if value is not None else ""
    except TypeError:  # not JSON data orjson writes (an integer past 64 bits)
        return str(value)


def _json(value: Any) -> Any:
    """An attribute holding JSON: parsed when a string, as it is when already structured."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _tools(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools the call offered, in chat-completions form."""
    definitions = _dicts(_json(attrs.get("gen_ai.tool.definitions")))
    definitions += [{**tool, "parameters": tool.get("parameters", tool.get("inputSchema"))}  # the AI SDK's: a list of JSON texts
                    for tool in _dicts([_json(text) for text in _list(attrs.get("ai.prompt.tools"))])]
    tools = []
    for tool in definitions:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        tools.append({"type": "function", "function": {key: function[key] for key in ("name", "description", "parameters") if key in function}})
    for tool in _unflatten(attrs, "llm.tools"):  # OpenInference: each tool's JSON schema as a string
        schema = _json((tool.get("tool") or {}).get("json_schema")) if isinstance(tool.get("tool"), dict) else None
        if isinstance(schema, dict):
            tools.append(schema if "function" in schema else {"type": "function", "function": schema})
    for function in _unflatten(attrs, "llm.request.functions"):  # OpenLLMetry
        if isinstance(function.get("name"), str):
            parameters = _json(function.get("parameters"))
            tools.append({"type": "function", "function": {"name": function["name"], **({"parameters": parameters} if isinstance(parameters, dict) else {})}})
    return tools


def _response(reply: dict[str, Any] | None, attrs: dict[str, Any], span: dict[str, Any]) -> Any:
    """The reply the span recorded, its prompt tokens, or the error it ended with."""
    usage = next(({"prompt_tokens": int(attrs[key])} for key in PROMPT_TOKEN_KEYS
                  if isinstance(attrs.get(key), int) or (isinstance(attrs.get(key), str) and attrs[key].isdigit())), None)
    status = object_member(span, "status")
    if reply is None and status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"):
        kind = attrs.get("error.type")
        return parse_response({"error": {"message": str(status.get("message") or "the span ended with an error"),
                                         "type": kind if isinstance(kind, str) else None}})
    if reply is None:
        return None
    finish = FINISH_REASONS.get(str(reply.get("finish_reason")), None)
    if finish is None and reply["message"].get("tool_calls"):
        finish = "tool_calls"
    body = {"choices": [{"index": 0, "message": reply["message"], "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return parse_response(body)


def _session(attrs: dict[str, Any], resource: dict[str, Any], session_key_path: str | None) -> str | None:
    for source in (attrs, resource):
        for key in (session_key_path,) if session_key_path else SESSION_KEYS:
            if isinstance(source.get(key), (str, int)) and not isinstance(source.get(key), bool):
                return str(source[key])
    return None


def _start(span: dict[str, Any]) -> float | None:
    """When the call started, in epoch seconds: OTLP's nanoseconds (a string in JSON, or
    MLflow's number), or the ISO 8601 time an SDK's console exporter writes."""
    nanos, iso = span.get("startTimeUnixNano", span.get("start_time_unix_nano")), span.get("start_time")
    if isinstance(iso, str):
        return iso_seconds(iso)
    if isinstance(iso, int) and not isinstance(iso, bool):  # MLflow's span: nanoseconds
        nanos = iso
    try:
        return int(nanos) / 1e9 if nanos is not None else None
    except (TypeError, ValueError):
        return None
