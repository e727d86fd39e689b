"""An application's own text log: the records its logger writes after a prefix (a time, a
level, a message), as JSON or as the dict a Python logger prints, among lines of its own."""

from __future__ import annotations

import ast
import json
import re
from collections import deque
from typing import Any, Callable, Iterator

import orjson

# What may end the text a logger writes before a record (a time, a level, a logger's name,
# a message: `2026-01-02 10:00:01,123 INFO app.llm: request {…}`, a container runtime's
# `2026-01-02T10:00:01.12Z stdout F {…}`, logfmt's `payload={…}`); a record glued to the
# end of another (`…"}}{"session_id"…`, writes interleaved) follows none of these.
LOG_PREFIX_ENDS = frozenset(b" \t:=|])>")
# The members a line that was to hold a request names, quoted as JSON or Python prints them,
# or as JSON inside a quoted logfmt value (not the word in a traceback's `create(messages=history)`)
REQUEST_MARKS = tuple(quote + name + quote for name in (b"messages", b"contents", b"input", b"request") for quote in (b'"', b"'", b'\\"'))
# logfmt's key=value pairs (Go's slog text handler, logrus, zap's logfmt encoder): a value
# quoted as a Go string literal, or bare up to the next space
LOGFMT_KEY = r"[A-Za-z_][\w.\-/]*"
GO_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
LOGFMT_PAIR = re.compile(rf'(?:^|(?<=\s))({LOGFMT_KEY})=({GO_QUOTED.pattern}|[^\s"]*)')
LOGFMT_JSON_VALUE = re.compile(rf'({LOGFMT_KEY})="\{{')  # a key whose quoted value opens a JSON object
# what a Go string literal escapes that a JSON string does not (strconv.Quote)
GO_ESCAPES = re.compile(r"\\(?:(\\)|([av])|x([0-9A-Fa-f]{2})|U([0-9A-Fa-f]{8}))")
LOGFMT_JSON = b'="{'  # a quoted logfmt value that holds a JSON object

# The most a record a logger spread over lines is gathered from: past it, its lines are read one by one
BLOCK_LINES = 100_000
BLOCK_BYTES = 64 << 20

TEXT_LINE = "a line of an application's text log that holds no record (its own: a startup line, a traceback)"
OTHER_OBJECT = "an object an application's text log holds that is no request (its own: a config, a metric)"


class LoggedObject(dict):
    """An object read off a line of a text log, after its logger's prefix: one of no known
    record shape is the application's own (OTHER_OBJECT), not a broken record."""


def logged_object(text: bytes, loads: Callable[[bytes], Any] = orjson.loads) -> dict | None:
    """The object a line of an application's text log holds, or None: the JSON object after
    the text its logger wrote before it (and before any it wrote after it), or a dict as
    Python prints one (the OpenAI and Anthropic SDKs' debug log, `Request options: {'method':
    'post', …, 'json_data': {…}}`; an app's `logger.info("request %s", kwargs)`). A line of
    a JSON document spread over many lines (`"metadata": {…},`) is none: it opens with a
    quote, or JSON goes on after its object. `loads` parses JSON (a SharedPrefixDecoder's,
    which reuses the history a record repeats)."""
    start = object_start(text)
    if start is None:
        return _logfmt_object(text) if LOGFMT_JSON in text else None
    payload = text[start:]
    if payload.startswith(b"{'"):  # no JSON object opens so: Python's repr of a dict with string keys
        return _printed_dict(payload)
    if start == 0:
        return None  # a JSON line that did not parse: not a logger's
    try:
        value = loads(payload)
    except orjson.JSONDecodeError as error:
        if "trailing" not in error.msg and "after document" not in error.msg:
            return None
        try:  # text after the record too (`… {…} in 312 ms`): the record is what one JSON value reads
            decoded = payload.decode("utf-8")
            value, end = json.JSONDecoder().raw_decode(decoded)
        except (ValueError, RecursionError):
            return None
        if decoded[end:].lstrip()[:1] in (",", "]", "}"):
            return None  # JSON goes on after it: a member of a document spread over lines
    return value if isinstance(value, dict) else None


def _logfmt_object(text: bytes) -> dict | None:
    """A logfmt line whose quoted values hold JSON objects (`time=… level=INFO msg="llm call"
    request="{\\"model\\": …}"`, Go's slog text handler) as the object of its pairs, each
    such value read as the object it holds, or None."""
    pairs = {}
    for key, value in LOGFMT_PAIR.findall(text.decode("utf-8", "replace")):
        if value.startswith('"'):
            value = _go_string(value)
            if value is None:
                return None  # a value cut short or misquoted: the line's record is broken
            if value.lstrip().startswith("{"):
                try:
                    value = orjson.loads(value)
                except orjson.JSONDecodeError:
                    return None
        pairs[key] = value
    return pairs if any(isinstance(value, dict) for value in pairs.values()) else None


def logfmt_problem(text: bytes) -> str | None:
    """What is wrong with the first quoted logfmt value of a line that opens a JSON object
    and does not hold a whole one (the line cut short, a quote missing), or None."""
    if LOGFMT_JSON not in text or object_start(text) is not None:
        return None
    decoded = text.decode("utf-8", "replace")
    for found in LOGFMT_JSON_VALUE.finditer(decoded):
        key, column = found.group(1), found.start(1) + 1
        quoted = GO_QUOTED.match(decoded, found.end(1) + 1)
        if quoted is None:
            return f"the quoted logfmt value `{key}` (from column {column}) has no closing quote: the line was cut short"
        value = _go_string(quoted.group())
        if value is None:
            return f"the quoted logfmt value `{key}` (from column {column}) is not a well-formed quoted string"
        try:
            orjson.loads(value)
        except orjson.JSONDecodeError as error:
            return f"the JSON in the quoted logfmt value `{key}` (from column {column}) does not parse: {error.msg}"
    return None


def _go_string(quoted: str) -> str | None:
    """A Go string literal's text (strconv.Quote's escapes, read as JSON's where they differ), or None."""
    def as_json(found: re.Match) -> str:
        backslash, control, byte, rune = found.groups()
        if backslash:
            return "\\\\"
        if control:
            return {"a": "\\u0007", "v": "\\u000b"}[control]
        code = int(byte or rune, 16)
        return json.dumps(chr(code) if code <= 0x10FFFF else "\ufffd")[1:-1]
    try:
        value = orjson.loads(GO_ESCAPES.sub(as_json, quoted) if "\\" in quoted else quoted)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def object_start(text: bytes) -> int | None:
    """Where the object of a line opens: at its start, or after the text a logger wrote
    before it; None for a line whose first `{` follows no such text."""
    start = text.find(b"{")
    if start < 0 or (start > 0 and (text[start - 1] not in LOG_PREFIX_ENDS or b"}" in text[:start] or text[:1] == b'"')):
        return None
    return start


def _printed_dict(payload: bytes) -> dict | None:
    """A dict as Python prints it, read as the JSON it stands for, or None. Its text is
    parsed, never run (Python's parser refuses nesting past 200 levels); a value JSON has
    no form for (an object's repr, `Timeout(connect=5.0)`, `NOT_GIVEN`; a set; bytes) is
    kept as the text Python printed for it."""
    text = payload.decode("utf-8", "replace").strip()
    for printed in (text, text[:text.rfind("}") + 1]):  # the dict alone, where text follows it (`{…} in 312 ms`)
        try:
            tree = ast.parse(printed, mode="eval").body
            return _as_json(tree) if isinstance(tree, ast.Dict) else None
        except (ValueError, SyntaxError, MemoryError, RecursionError, _NoKey):
            continue
    return None


class _NoKey(Exception):
    """A printed dict whose key is no constant: not a dict Python printed."""


def _as_json(node: ast.expr) -> Any:
    if isinstance(node, ast.Dict):
        if any(key is None or not isinstance(key, ast.Constant) for key in node.keys):
            raise _NoKey
        return {str(key.value): _as_json(value) for key, value in zip(node.keys, node.values)}  # type: ignore[union-attr]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_as_json(item) for item in node.elts]
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bool, int, float))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    return ast.unparse(node)


def _after_a_prefix(line: bytes) -> bool:
    return line[:1] != b"{" and logged_object(line.strip()) is not None


def is_text_log(head: list[bytes]) -> bool:
    """Whether a file's first lines show a text log whose records follow a text prefix."""
    return any(map(_after_a_prefix, head))


def logs_requests(head: list[bytes]) -> bool:
    """Whether a text log's first lines hold a request after the text its logger wrote
    before it (`… INFO app.llm: request {"messages": …}`)."""
    return any(names_a_request(line) and _after_a_prefix(line) for line in head)


def names_a_request(text: bytes) -> bool:
    return any(mark in text for mark in REQUEST_MARKS)


def was_a_record(text: bytes) -> bool:
    """Whether a line of a text log that holds no readable object was to hold a record (one
    cut short): it names a request's members, or opens an object it does not close. Any
    other line is the application's own."""
    return names_a_request(text) or _left_open(text)


Line = tuple[int, bytes, bool]  # (line number, its bytes, whether it ends the file)


def joined_records(lines: Iterator[Line]) -> Iterator[Line]:
    """A text log's lines, with each record its logger spread over lines (JSON printed with
    an indent, `logger.info("request: %s", json.dumps(body, indent=2))`) joined into one,
    numbered as its first line. A line that opens an object and ends before closing it
    (ends with `{`) begins one; indented lines and lines that close a bracket go on with
    it; it ends with the line that closes it. Where nothing closes it (a line of another
    kind comes, the file ends, or it passes BLOCK_LINES or BLOCK_BYTES), its lines come
    one by one, as they were: a record cut short is still one line's problem."""
    waiting: deque[Line] = deque()

    def take() -> Line | None:
        return waiting.popleft() if waiting else next(lines, None)

    while (first := take()) is not None:
        if first[2] or not _opens_unclosed(first[1]):
            yield first
            continue
        block, size = [first], len(first[1])
        while (line := take()) is not None:
            if line[1][:1] not in b" \t}]" or len(block) >= BLOCK_LINES or size + len(line[1]) > BLOCK_BYTES:
                waiting.appendleft(line)
                break
            block.append(line)
            size += len(line[1])
            if line[1][:1] == b"}":
                joined = b"".join(part for _, part, _ in block)
                if _closed(joined):
                    yield first[0], joined, line[2]
                    block = []
                    break
            if line[2]:
                break
        if block:  # nothing closed it: its lines come as they were
            waiting.extendleft(reversed(block[1:]))
            yield first


def _opens_unclosed(line: bytes) -> bool:
    """Whether a line ends opening the object it leaves open (`… request {`, `{`)."""
    text = line.rstrip()
    return text.endswith(b"{") and _left_open(text)


def _left_open(text: bytes) -> bool:
    """Whether a line opens an object (at its start or after a logger's prefix) and does not close it."""
    start = object_start(text)
    return start is not None and text.count(b"{", start) > text.count(b"}", start)


def _closed(joined: bytes) -> bool:
    """Whether the lines joined so far hold the whole object their first line opened."""
    text = joined.rstrip()
    start = object_start(text)
    if start is None:
        return False
    try:
        orjson.loads(text[start:])
    except orjson.JSONDecodeError:
        return False
    return True
