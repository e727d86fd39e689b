"""AWS event-stream bodies (`application/vnd.amazon.eventstream`), as Bedrock sends them:
binary frames whose payloads carry, base64 under `bytes`, the events of the model's own
stream (InvokeModelWithResponseStream: Anthropic's message_start, deltas…), or Converse's
own events as they are (ConverseStream: contentBlockDelta, messageStop, metadata)."""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

import orjson

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_PRELUDE = struct.Struct(">III")  # total length, headers length, prelude CRC
_TRAILER = 4  # the message CRC


def events(data: bytes) -> list[dict[str, Any]] | None:
    """The stream's events in order; None when the bytes are not whole frames. A frame
    that reports an exception becomes an error event, as the model's stream spells one."""
    found: list[dict[str, Any]] = []
    position = 0
    while position < len(data):
        if len(data) - position < _PRELUDE.size + _TRAILER:
            return None
        total, headers, _ = _PRELUDE.unpack_from(data, position)
        start = position + _PRELUDE.size + headers
        end = position + total - _TRAILER
        if total < _PRELUDE.size + _TRAILER + headers or end > len(data):
            return None
        event = _event(data[start:end])
        if event is not None:
            found.append(event)
        position += total
    return found


def _event(payload: bytes) -> dict[str, Any] | None:
    try:
        wrapped = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(wrapped, dict):
        return None
    if isinstance(wrapped.get("bytes"), str):
        try:
            event = orjson.loads(base64.b64decode(wrapped["bytes"], validate=True))
        except (binascii.Error, ValueError, orjson.JSONDecodeError):
            return None
        return event if isinstance(event, dict) else None
    if isinstance(wrapped.get("message"), str):  # an exception frame: {"message": "..."}
        return {"type": "error", "error": {"message": wrapped["message"]}}
    return wrapped  # ConverseStream's own event (contentBlockDelta, messageStop…), told by its members
