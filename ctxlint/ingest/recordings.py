"""HTTP recordings that are not vcr cassettes, as the interactions a cassette holds: a HAR
file (what browsers' developer tools, Charles, mitmproxy, Playwright and Polly.js save)
and nock's recorded calls (Node.js test fixtures). The cassette reader reads them."""

from __future__ import annotations

import base64
import binascii
from typing import Any


def recorded_interactions(data: Any) -> tuple[str, list[Any]] | None:
    """(the pointer of the list, its items as cassette interactions) of a HAR file or a
    nock recording; None for other data."""
    log = data.get("log") if isinstance(data, dict) else None
    if isinstance(log, dict) and isinstance(log.get("entries"), list):
        return "/log/entries", [_har_interaction(entry) for entry in log["entries"]]
    if isinstance(data, list) and data and all(_is_nock_call(item) for item in data):
        return "", [_nock_interaction(item) for item in data]
    return None


def _har_interaction(entry: Any) -> Any:
    """A HAR entry as a cassette interaction; one without a request stays as it is (the
    cassette reader says what it lacks)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
        return entry
    request = entry["request"]
    response = entry.get("response") if isinstance(entry.get("response"), dict) else None
    interaction: dict[str, Any] = {"request": {"method": request.get("method"), "uri": request.get("url"),
                                               "headers": _har_headers(request.get("headers")),
                                               "body": _har_text(request.get("postData"))}}
    if response is not None:
        interaction["response"] = {"status": {"code": response.get("status")}, "headers": _har_headers(response.get("headers")),
                                   "body": _har_text(response.get("content"))}
    return interaction


def _har_headers(headers: Any) -> dict[str, str]:
    """HAR's list of {name, value} as a mapping (the last value of a name repeated)."""
    if not isinstance(headers, list):
        return {}
    return {header["name"]: header.get("value") for header in headers if isinstance(header, dict) and isinstance(header.get("name"), str)}


def _har_text(part: Any) -> str | bytes | None:
    """The text of a HAR postData or content, decoded where HAR stored it as base64
    (a binary or compressed body: the event stream of Bedrock's replies, say)."""
    if not isinstance(part, dict) or not isinstance(part.get("text"), str):
        return None
    if part.get("encoding") == "base64":
        try:
            return base64.b64decode(part["text"], validate=True)
        except (binascii.Error, ValueError):
            return part["text"]
    return part["text"]


def _is_nock_call(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("scope"), str) and isinstance(item.get("path"), str) and "method" in item


def _nock_interaction(call: dict[str, Any]) -> dict[str, Any]:
    """nock's recorded call: its scope (scheme and host) and path are the URL; a body
    that is JSON is recorded as data, else as text."""
    headers = call.get("rawHeaders")  # a flat list, name then value
    response_headers = ({name: value for name, value in zip(headers[::2], headers[1::2]) if isinstance(name, str)}
                        if isinstance(headers, list) else (headers if isinstance(headers, dict) else {}))
    return {"request": {"method": call.get("method"), "uri": call["scope"] + call["path"], "body": call.get("body")},
            "response": {"status": {"code": call.get("status")}, "headers": response_headers, "body": _nock_body(call.get("response"))}}


def _nock_body(body: Any) -> Any:
    """A body nock recorded as a list of hex chunks (a compressed reply) as its bytes."""
    if isinstance(body, list) and body and all(isinstance(chunk, str) for chunk in body):
        try:
            return bytes.fromhex("".join(body))
        except ValueError:
            pass
    return body
