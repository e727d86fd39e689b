"""Response bodies, plain or streamed, to one Response."""

from __future__ import annotations

from typing import Any, Iterable

import orjson

from ctxlint.chat import merged_details, object_member, REASONING_FIELDS, str_or_none, text_of
from ctxlint.ingest import ai_sdk, anthropic, converse, dashscope, gemini, langchain, llama_index, ollama, openai_responses, pydantic_ai
from ctxlint.ingest.record import Response


def parse_response(body: Any, status: int | None = None) -> Response | None:
    """A Response from a chat.completion body, an error body, a chunk list or SSE text, or
    an Anthropic Messages, Responses API, Gemini generateContent or DashScope reply or stream."""
    if body is None:
        return Response(status=status) if status is not None else None
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")):  # an object, or a stream logged as a JSON array of chunks
            try:
                return parse_response(orjson.loads(stripped), status)
            except orjson.JSONDecodeError:
                pass
        chunks = list(sse_chunks(text))
        if chunks:
            return assemble_chunks(chunks, status)
        return Response(status=status)
    if isinstance(body, list):
        return assemble_chunks([c for c in body if isinstance(c, dict)], status)
    if not isinstance(body, dict):
        return Response(status=status)
    if isinstance(body.get("error"), (dict, str)) or (status is not None and status >= 400):
        return Response(error=_error_of(body), status=status, model=str_or_none(body.get("model")))
    if langchain.is_reply(body):  # before Gemini's: its usage_metadata is spelled as Gemini's snake-case
        return langchain.parse_reply(body)
    if anthropic.is_message_body(body):
        return anthropic.parse_message(body, status)
    if openai_responses.is_response_body(body):
        return openai_responses.parse_response_object(body, status)
    if gemini.is_response_body(body):
        return gemini.parse_response_object(body, status)
    if ollama.is_reply(body):
        return ollama.parse_reply(body, status)
    if converse.is_response_body(body):
        return converse.parse_response_object(body, status)
    if dashscope.is_reply(body):
        return assemble_chunks([body], status)
    if ai_sdk.is_result(body):
        return ai_sdk.parse_result(body, status)
    if pydantic_ai.is_response(body):
        return pydantic_ai.parse_response_object(body, status)
    if body.get("role") == "assistant":  # the reply's message alone, as trace exports keep it
        return Response(message=_framework_message(body), status=status)
    message = body.get("message")
    if isinstance(message, dict) and message.get("role") == "assistant":
        # ... or under `message`, beside its finish reason; LlamaIndex's ChatResponse keeps the
        # provider's reply beside it as `raw`
        raw = body["raw"] if isinstance(body.get("raw"), dict) else body
        return Response(message=_framework_message(message), finish_reason=str_or_none(body.get("finish_reason")),
                        usage=raw.get("usage") if isinstance(raw.get("usage"), dict) else None, status=status,
                        model=str_or_none(raw.get("model")), id=str_or_none(raw.get("id")))
    if body.get("object") == "chat.completion.chunk":
        return assemble_chunks([body], status)
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    return Response(
        message=message if isinstance(message, dict) else None,
        finish_reason=str_or_none(choice.get("finish_reason")),
        usage=body.get("usage") if isinstance(body.get("usage"), dict) else None,
        status=status,
        model=str_or_none(body.get("model")),
        id=str_or_none(body.get("id")),
    )



def _framework_message(message: dict[str, Any]) -> dict[str, Any]:
    """A reply's assistant message as chat spells it, where an agent framework logged it in
    its own spelling (the AI SDK's parts, LlamaIndex's blocks)."""
    return llama_index.reply_message(ai_sdk.reply_message(message))


def _error_of(body: dict[str, Any]) -> dict[str, Any]:
    error = body.get("error")
    if isinstance(error, str):
        return {"message": error}
    if isinstance(error, dict):
        found = {key: error.get(key) for key in ("message", "type", "code", "param") if key in error}
        upstream = _upstream_message(error.get("metadata"))
        if upstream:
            found["message"] = f"{found['message']}: {upstream}" if isinstance(found.get("message"), str) else upstream
        return found
    message = body.get("message") or body.get("detail")
    return {"message": message if isinstance(message, str) else orjson.dumps(body, option=orjson.OPT_SORT_KEYS)[:500].decode("utf-8", "replace")}


def _upstream_message(metadata: Any) -> str | None:
    """What the provider behind a router said, as OpenRouter passes it on under
    `error.metadata.raw` (the provider's error body, as text)."""
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.strip()[:500]
    inner = body.get("error") if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else inner if isinstance(inner, str) else None
    return message if isinstance(message, str) else raw.strip()[:500]


def sse_chunks(text: str) -> Iterable[dict[str, Any]]:
    """Chunk objects of raw SSE text (`data: {...}` lines) or of one chunk object per line."""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("data:"):
            line = line[5:].strip()
        if not line.startswith("{"):
            continue  # `event:` lines, `[DONE]`, keep-alive comments
        try:
            chunk = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(chunk, dict):
            yield chunk


def assemble_chunks(chunks: list[dict[str, Any]], status: int | None = None) -> Response:
    """One assistant message from streamed deltas: text and reasoning concatenated,
    tool calls merged per index (id and name from the first fragment, arguments joined)."""
    if anthropic.is_event_stream(chunks):
        return anthropic.assemble_events(chunks, status)
    if openai_responses.is_event_stream(chunks):
        return openai_responses.assemble_events(chunks, status)
    if gemini.is_event_stream(chunks):
        return gemini.assemble_events(chunks, status)
    if ollama.is_event_stream(chunks):
        return ollama.assemble_events(chunks, status)
    if converse.is_event_stream(chunks):
        return converse.assemble_events(chunks, status)
    if dashscope.is_event_stream(chunks):  # its choices are chat-completions', under `output`
        chunks, status = dashscope.as_chat_chunks(chunks, status)
    parts: dict[str, list[str]] = {"content": [], **{name: [] for name in REASONING_FIELDS[:2]}}
    details: list[Any] = []
    calls: dict[int, dict[str, Any]] = {}
    function_call: dict[str, Any] = {}  # the deprecated API's one call, streamed as its name and its arguments' pieces
    finish_reason = usage = model = error = reply_id = None
    streamed = False  # a chunk carried choices: what came is a stream of one, not objects of another kind
    for chunk in chunks:
        if isinstance(chunk.get("error"), (dict, str)):
            error = _error_of(chunk)
        model = str_or_none(chunk.get("model")) or model
        reply_id = reply_id or str_or_none(chunk.get("id"))
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            continue
        streamed = True
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            finish_reason = str_or_none(choice.get("finish_reason")) or finish_reason
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else choice.get("message")
            if not isinstance(delta, dict):
                continue
            for name in parts:
                if isinstance(delta.get(name), str):
                    parts[name].append(delta[name])
                elif name == "content" and isinstance(delta.get(name), list):  # Mistral streams content parts (text, thinking)
                    parts[name].append(text_of(delta[name]))
            if isinstance(delta.get("reasoning_details"), list):
                details.extend(delta["reasoning_details"])
            fragments = delta.get("tool_calls")
            for position, fragment in enumerate(fragments if isinstance(fragments, list) else ()):
                if isinstance(fragment, dict):
                    _merge_call(calls, fragment, position)
            piece = delta.get("function_call")
            if isinstance(piece, dict):
                function_call.setdefault("name", piece.get("name"))
                function_call["arguments"] = function_call.get("arguments", "") + (piece["arguments"] if isinstance(piece.get("arguments"), str) else "")
    if error is not None:
        return Response(error=error, status=status, model=model)
    if not streamed:
        return Response(status=status, model=model, id=reply_id)  # no reply ctxlint can read: not an empty one
    message: dict[str, Any] = {"role": "assistant", "content": "".join(parts["content"]) or None}
    for name in REASONING_FIELDS[:2]:
        if parts[name]:
            message[name] = "".join(parts[name])
    if details:
        message["reasoning_details"] = merged_details(details)
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    if function_call:
        message["function_call"] = function_call
    return Response(message=message, finish_reason=finish_reason, usage=usage, status=status, model=model, id=reply_id)


def _merge_call(calls: dict[int, dict[str, Any]], fragment: dict[str, Any], position: int) -> None:
    index = fragment.get("index")
    index = index if isinstance(index, int) else position
    function = object_member(fragment, "function")
    call = calls.get(index)
    if call is None:
        calls[index] = {
            "id": fragment.get("id"),
            "type": fragment.get("type") or "function",
            "function": {"name": function.get("name"), "arguments": function.get("arguments") or ""},
        }
        if isinstance(fragment.get("extra_content"), dict):  # Gemini's thought signature rides on the call
            calls[index]["extra_content"] = fragment["extra_content"]
        return
    if not call["id"] and fragment.get("id"):
        call["id"] = fragment["id"]
    if not call["function"]["name"] and function.get("name"):
        call["function"]["name"] = function["name"]
    if isinstance(function.get("arguments"), str):
        call["function"]["arguments"] += function["arguments"]
