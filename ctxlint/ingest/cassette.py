"""HTTP recordings as records: vcr cassettes (vcrpy, pytest-recording, pydantic-ai's
serializer, go-vcr, Ruby's VCR) in YAML or JSON, and the recordings `recordings` turns
into their interactions (HAR, nock)."""

from __future__ import annotations

import base64
import gzip
import math
import zlib
from typing import Any, Iterator
from urllib.parse import urlparse

import orjson
import yaml

from ctxlint.chat import object_member
from ctxlint.ingest.jsonl import read_whole
from ctxlint.ingest.record import InputProblem, Record, Skipped, http_status, json_text, nested_too_deep
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest import anthropic, converse, eventstream, gemini, ollama, openai_responses
from ctxlint.ingest.shapes import body_record, closest_shape_hint, history_held_by_provider, named_by_url, translated_record, url_host
from ctxlint.ingest.sources import Source

# Endpoints that are not chat-completions, and the reason a skip names.
# Anthropic Messages, the Responses API and Gemini are read: their bodies are normalized.
OTHER_ENDPOINTS = (
    ("/v1/messages", anthropic.NAME),
    ("/messages", anthropic.NAME),
    ("/responses", openai_responses.NAME),
    (":generatecontent", gemini.NAME),
    (":streamgeneratecontent", gemini.NAME),
    ("/api/chat", ollama.NAME),
    ("/converse", converse.NAME),
    ("/converse-stream", converse.NAME),
    ("/embeddings", "embeddings"),
    ("/completions", "legacy completions"),
)


# vcrpy and go-vcr list them under `interactions`, Ruby's VCR under `http_interactions`.
INTERACTION_KEYS = ("interactions", "http_interactions")


def _load_nodes(path: str) -> tuple[Any, list[int]]:
    """The cassette as data (safe loader only) and the 1-based line of each interaction."""
    text = read_whole(path)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, []
        lines: list[int] = []
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if getattr(key, "value", None) in INTERACTION_KEYS and isinstance(value, yaml.SequenceNode):
                    lines = [item.start_mark.line + 1 for item in value.value]
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


def _decode_body(body: Any, headers: Any = None) -> Any:
    """A body as JSON data or text: vcrpy `{string: ...}`, pydantic-ai's `{type, content}`
    (content parsed already when the type is json), raw strings, base64/gzip bytes."""
    if isinstance(body, dict) and "string" in body:
        body = body["string"]
    elif isinstance(body, dict) and isinstance(body.get("base64_string"), str):  # Ruby's VCR, for a body that is not UTF-8
        body = _base64_bytes(body["base64_string"])
    elif isinstance(body, dict) and set(body) == {"type", "content"} and isinstance(body["type"], str):
        if body["type"] == "json":
            return _as_json_data(body["content"])
        body = body["content"]
    if isinstance(body, bytes) and _header(headers, "content-type") == eventstream.CONTENT_TYPE:
        decoded = eventstream.events(body)
        if decoded is not None:
            return decoded
    if isinstance(body, bytes):
        if body[:2] == b"\x1f\x8b":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError, zlib.error):
                return None
        elif _header(headers, "content-encoding") == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:
                return None
        body = body.decode("utf-8", "replace")
    return json_text(body)


def _base64_bytes(text: str) -> bytes | None:
    try:
        return base64.b64decode(text)
    except ValueError:
        return None


def _as_json_data(value: Any) -> Any:
    """A body the cassette holds as YAML data, as the JSON it stands for: YAML also has
    integers past 64 bits, dates, bytes and keys that are not strings, which a JSON log
    line cannot hold (orjson reads a huge integer as a float; this does the same)."""
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except TypeError as error:
        if nested_too_deep(error):
            return value  # reported as too deep where the record is checked
    try:
        return _json_like(value)
    except RecursionError:
        return value


def _json_like(value: Any) -> Any:
    if isinstance(value, dict):
        return {key if isinstance(key, str) else str(key): _json_like(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_like(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -2**63 <= value < 2**64 else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)  # a date or time


def _header(headers: Any, name: str) -> str | None:
    if not isinstance(headers, dict):
        return None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            value = value[0] if isinstance(value, list) and value else value
            return value.lower() if isinstance(value, str) else None
    return None


def _status(response: dict[str, Any]) -> int | None:
    status = response.get("status")
    code = http_status(status.get("code")) if isinstance(status, dict) else None
    return code if code is not None else http_status(response.get("code"))


def _endpoint_kind(url: str, body: Any) -> str | None:
    """None for chat-completions; else the name of the API the interaction used."""
    path = urlparse(url).path.lower() if url else ""
    if path.endswith(("/chat/completions", "/v2/chat")):
        return None  # Cohere's v2 chat sends chat-completions messages and tools
    if anthropic.model_in_url(url, body) is not None:
        return anthropic.NAME
    for suffix, name in OTHER_ENDPOINTS:
        if path.endswith(suffix):
            return name
    if isinstance(body, dict) and isinstance(body.get("messages"), list) and not path:
        return None
    return f"endpoint {path or '(none)'}"


MODEL_CALL_MEMBERS = ("messages", "contents", "input", "prompt")  # what a request to a model API sends


def _sends_model_input(body: Any) -> bool:
    return isinstance(body, dict) and any(member in body for member in MODEL_CALL_MEMBERS)


def _skip_reason(kind: str, body: Any) -> str:
    """Why an interaction is not read. A recording of a browser or of a whole app holds its
    other traffic too (pages, scripts, the app's own API): one reason for all of that."""
    if body in (None, ""):
        return "HTTP request without a body (no model call)"
    if kind.startswith("endpoint ") and not _sends_model_input(body):
        return "HTTP request that is no model call"
    return f"not chat-completions: {kind}"


def _without_messages(body: dict[str, Any]) -> str:
    """What a request body sent to a chat endpoint without `messages` is: one a test
    recorded stubbed or filtered (its model and settings only), or another shape."""
    if "model" in body and not _sends_model_input(body):
        return (f"the recorded request body sends no `messages` (only {', '.join(f'`{key}`' for key in list(body)[:6])}): "
                "a recording made with the body stubbed or filtered out holds no conversation to check")
    return closest_shape_hint(body)


def interactions_of(data: Any) -> tuple[str, list[Any]] | None:
    """(the pointer of the list, the interactions) of a cassette's data, else None."""
    if isinstance(data, dict):
        for key in INTERACTION_KEYS:
            if isinstance(data.get(key), list):
                return f"/{key}", data[key]
    return None


def read_cassette(source: Source, session_key: str | None = None) -> Iterator[Record | InputProblem | Skipped]:
    path = source.path
    try:
        data, lines = _load_nodes(path)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        yield InputProblem(path, (mark.line + 1) if mark else 1, f"not a readable YAML cassette: {getattr(error, 'problem', None) or error}")
        return
    found = interactions_of(data)
    if found is None:
        what = f"a YAML {type(data).__name__}" if not isinstance(data, dict) else f"a YAML mapping with keys {', '.join(map(str, list(data)[:5]))}"
        yield InputProblem(path, 1, f"not a vcr cassette (no `interactions` list): it looks like {what}")
        return
    yield from read_interactions(path, found[1], lines)


def read_interactions(path: str, interactions: list[Any], lines: list[int]) -> Iterator[Record | InputProblem | Skipped]:
    """Each recorded interaction as a record at its line (`lines`, by position; else line 1)."""
    for index, interaction in enumerate(interactions):
        line = lines[index] if index < len(lines) else 1
        if not isinstance(interaction, dict) or not isinstance(interaction.get("request"), dict):
            yield InputProblem(path, line, f"cassette interaction {index} has no request mapping")
            continue
        request = interaction["request"]
        response = object_member(interaction, "response")
        body = _as_json_data(request["parsed_body"]) if "parsed_body" in request else _decode_body(request.get("body"), request.get("headers"))
        url = request.get("uri") or request.get("url") or ""
        kind = _endpoint_kind(url if isinstance(url, str) else "", body)
        if kind not in (None, anthropic.NAME, openai_responses.NAME, gemini.NAME, ollama.NAME, converse.NAME):
            yield Skipped(path, line, _skip_reason(kind, body))
            continue
        api = kind or "chat-completions"
        if not isinstance(body, dict):
            yield InputProblem(path, line, f"{api} interaction {index} has a request body that is not a JSON object")
            continue
        held = history_held_by_provider(body, kind == openai_responses.NAME)
        if held is not None:
            yield Skipped(path, line, held)
            continue
        if "messages" not in body and kind not in (openai_responses.NAME, gemini.NAME):
            yield InputProblem(path, line, f"{api} interaction {index}: {_without_messages(body)}")
            continue
        body, host = named_by_url(body, url), url_host(url)
        response_body = _as_json_data(response["parsed_body"]) if "parsed_body" in response else _decode_body(response.get("body"), response.get("headers"))
        parsed = parse_response(response_body, _status(response)) if response else None
        if kind == openai_responses.NAME:
            yield translated_record(openai_responses, body, path, line, "cassette", "", response=parsed, scope=path, host=host)
            continue
        if kind == gemini.NAME:
            if not gemini.is_gemini_body(body):
                yield InputProblem(path, line, f"{api} interaction {index}: {closest_shape_hint(body)}")
                continue
            yield translated_record(gemini, body, path, line, "cassette", "", response=parsed, scope=path, host=host)
            continue
        if kind == converse.NAME:
            yield translated_record(converse, body, path, line, "cassette", "", response=parsed, scope=path, host=host)
            continue
        if kind == anthropic.NAME:  # by its endpoint, though its body may look like chat-completions
            yield translated_record(anthropic, body, path, line, "cassette", "", response=parsed, scope=path, host=host)
            continue
        yield body_record(body, path, line, "cassette", "", response=parsed, scope=path, host=host)
