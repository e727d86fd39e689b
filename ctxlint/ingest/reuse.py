"""Parse a log line without re-parsing the history it repeats.

Each request re-sends its session's history, and an app serializes it the same way each
time, so a line's messages array usually begins with the bytes of an earlier line's
messages array. The decoder remembers, for recent lines, those bytes and the messages
parsed from them. A line that begins its messages array with remembered bytes, followed by
`,` or `]` (so the remembered messages end there, complete), is parsed with those bytes
cut out and a marker in their place; the marker is then replaced by the remembered message
objects. JSON values do not depend on what surrounds them, so this reads exactly what a
full parse would, and the two records share one object per message.

Anything unexpected (no messages array, the marker not where the request's messages are,
a parse error) falls back to parsing the whole line, which then also reports the error.
`trusted` says whether the reused messages come from a line that became a record of
chat-completions messages as sent (so passed the schema: `mark_record`; a body of another
API's, read into other messages, did not); only then may ingest skip checking them again.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Any

import orjson

MESSAGES_KEY = b'"messages":'
KEY_HINTS = (b'"session_id":', b'"conversation_id":', b'"thread_id":', b'"trace_id":',
             b'"sessionId":', b'"conversationId":', b'"threadId":', b'"traceId":', b'"session":', b'"chat_id":')
PROBE = 256  # bytes of a messages array that index lines without a session key
CANDIDATES = 4  # remembered lines tried per probe
BUDGET = 8 << 20  # bytes of remembered messages arrays, oldest forgotten first
LINES = 2048  # sessions (or probes) remembered: the ones open at once, not all there were


class _Remembered:
    __slots__ = ("body", "messages", "record")

    def __init__(self, body: bytes, messages: list[Any]) -> None:
        self.body = body  # the messages array's bytes from "[" up to, not including, the closing "]"
        self.messages = messages
        self.record = False  # the line became a record


class SharedPrefixDecoder:
    def __init__(self, budget: int = BUDGET) -> None:
        self._by_hint: OrderedDict[bytes, deque[_Remembered]] = OrderedDict()
        self._size = 0
        self._budget = budget
        self._marker = f"\x00ctxlint-reuse-{secrets.token_hex(8)}"
        self._marker_bytes = orjson.dumps(self._marker)
        self.reused = 0  # messages the last line took from a remembered one
        self.trusted = False  # ... from a line that became a record
        self._last: _Remembered | None = None

    def loads(self, text: bytes) -> Any:
        """The parsed line, as orjson.loads would give it; raises orjson.JSONDecodeError."""
        self.reused = 0
        self.trusted = False
        self._last = None
        array = _array_start(text)
        if array < 0:
            return orjson.loads(text)
        hint = _hint(text, array)
        for remembered in reversed(self._by_hint.get(hint, ())):
            end = array + len(remembered.body)
            if text.startswith(remembered.body, array) and text[end:end + 1] in (b",", b"]"):
                value = self._reuse(text, array, remembered, hint)
                if value is not None:
                    return value
                break
        value = orjson.loads(text)
        messages = _messages_of(value)
        if isinstance(messages, list) and messages:
            body = _array_body(text, array, messages)
            if body is not None:
                self._remember(hint, _Remembered(body, messages))
        return value

    def _reuse(self, text: bytes, array: int, remembered: _Remembered, hint: bytes) -> Any:
        shortened = b"".join((memoryview(text)[:array], b"[", self._marker_bytes, memoryview(text)[array + len(remembered.body):]))
        try:
            value = orjson.loads(shortened)
        except orjson.JSONDecodeError:
            return None  # the full parse says what is wrong, and where
        messages = _messages_of(value)
        if not isinstance(messages, list) or not messages or messages[0] != self._marker:
            return None  # the cut was not in the request's messages
        added = messages[1:]
        messages[0:1] = remembered.messages
        self.reused = len(remembered.messages)
        self.trusted = remembered.record
        if not added:
            body = remembered.body
        else:
            short_body = _array_body(shortened, array, [self._marker, *added])
            body = remembered.body + short_body[1 + len(self._marker_bytes):] if short_body is not None else None
        if body is not None:
            self._remember(hint, _Remembered(body, messages))
        return value

    def _remember(self, hint: bytes, remembered: _Remembered) -> None:
        entries = self._by_hint.pop(hint, None)
        if entries is None:
            entries = deque(maxlen=CANDIDATES if not hint.startswith(b"key:") else 1)
        if len(entries) == entries.maxlen:
            self._size -= len(entries[0].body)
        entries.append(remembered)
        self._size += len(remembered.body)
        self._by_hint[hint] = entries
        self._last = remembered
        while (self._size > self._budget or len(self._by_hint) > LINES) and self._by_hint:
            _, forgotten = self._by_hint.popitem(last=False)
            self._size -= sum(len(entry.body) for entry in forgotten)


    def mark_record(self) -> None:
        """The last line became a record: its messages passed the schema."""
        if self._last is not None:
            self._last.record = True


def _array_start(text: bytes) -> int:
    """Offset of the "[" of the first "messages" array in the line, or -1."""
    key = text.find(MESSAGES_KEY)
    if key < 0:
        return -1
    position = key + len(MESSAGES_KEY)
    while position < len(text) and text[position] in b" \t":
        position += 1
    return position if text[position:position + 1] == b"[" else -1


def _hint(text: bytes, array: int) -> bytes:
    """What finds the line's earlier request: its session key's bytes, when the key comes
    before the messages (as loggers write it), or its array's start. Only a lookup: the
    remembered bytes must still match."""
    for name in KEY_HINTS:
        at = text.find(name, 0, array)
        if at >= 0:
            value = at + len(name)
            stop = text.find(b",", value, value + 300)
            return b"key:" + text[value:stop if stop >= 0 else value + 300]
    return b"probe:" + text[array:array + PROBE]


def _messages_of(value: Any) -> Any:
    """The messages list where shapes.normalize reads it: bare, envelope (its request, or the
    request's HTTP body) or batch line (`body`, Anthropic's `params`), and under `input` (a
    DashScope body, a Bedrock invocation log's `input.inputBodyJson`)."""
    if not isinstance(value, dict):
        return None
    request = value.get("request")
    for holder in (request, request.get("body") if isinstance(request, dict) else None, value.get("body"), value.get("params"), value):
        if not isinstance(holder, dict):
            continue
        if isinstance(holder.get("messages"), list):
            return holder["messages"]
        held = holder.get("input")
        if isinstance(held, dict):
            held = held.get("inputBodyJson", held)
            if isinstance(held, dict) and isinstance(held.get("messages"), list):
                return held["messages"]
    return None


def _array_body(text: bytes, array: int, messages: list[Any]) -> bytes | None:
    """The bytes of the messages array that starts at `array`, without its closing "]";
    None when they cannot be told."""
    try:
        compact = orjson.dumps(messages)
    except TypeError:
        return None
    if text.startswith(compact, array):
        return compact[:-1]  # written the way orjson writes: the common case, no second parse
    rest = text[array:]
    try:
        orjson.loads(rest)
    except orjson.JSONDecodeError as error:
        if not error.msg.startswith("unexpected content after document"):
            return None
        end = error.pos if rest.isascii() else len(rest.decode("utf-8", "replace")[:error.pos].encode("utf-8"))
        return rest[:end - 1] if rest[end - 1:end] == b"]" else None
    return None  # the array ends the line: not a line shape ctxlint reads
