"""JSONL logs: one record per line, plain or compressed (gzip, bzip2, xz), streamed line by line."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import shutil
import sys
import tempfile
import zlib
from typing import IO, Callable, Iterator

import orjson

from ctxlint.ingest.record import InputProblem, Skipped
from ctxlint.ingest.reuse import SharedPrefixDecoder
from ctxlint.ingest.sources import named_as_text_log
from ctxlint.ingest.text_logs import TEXT_LINE, LoggedObject, is_text_log, joined_records, logged_object, logfmt_problem, object_start, was_a_record

GZIP_MAGIC = b"\x1f\x8b"
NUL = b"\x00"
JSON_DEPTH_LIMIT = 1024  # orjson's; a chat request is never near it


class ReadError(Exception):
    """The input stopped being readable; the lines before it were read."""


READ_BUFFER = 1 << 20  # lines of a request log run to many KB: the default 8 KB buffer reads each in pieces


class _RecodedUtf16:
    """A UTF-16 text file (Windows PowerShell's `>` writes one) read as UTF-8 bytes."""

    def __init__(self, raw: IO[bytes]) -> None:
        # a byte that is no UTF-16 becomes U+FFFD, and the line is still read (and reported if broken)
        self._text = io.TextIOWrapper(raw, encoding="utf-16", errors="replace", newline="")

    def readline(self, size: int = -1) -> bytes:
        return self._text.readline(size).encode("utf-8", "surrogatepass")

    def read(self, size: int = -1) -> bytes:
        return self._text.read(size).encode("utf-8", "surrogatepass")

    def close(self) -> None:
        self._text.close()

    def __enter__(self) -> "_RecodedUtf16":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def is_utf16_text(start: bytes) -> bool:
    """Whether a file's first bytes are a UTF-16 byte order mark and a first character
    that is ASCII text (`{`, `[`, a letter…): text recoded as it is read, not bytes that
    happen to begin with the mark."""
    if len(start) < 4:
        return False
    if start[:2] == b"\xff\xfe":  # little-endian
        return start[3] == 0 and 0x09 <= start[2] < 0x7F
    if start[:2] == b"\xfe\xff":  # big-endian
        return start[2] == 0 and 0x09 <= start[3] < 0x7F
    return False


# Compressed files Python unpacks, by their magic bytes.
UNPACKERS = ((GZIP_MAGIC, gzip), (b"BZh", bz2), (b"\xfd7zXZ\x00", lzma))
# Compressed or archived files ctxlint cannot unpack with Python alone, by their magic
# bytes: one clear error for the file, not a CTX900 for every "line" of its bytes.
UNREADABLE_PACKING = {
    b"\x28\xb5\x2f\xfd": ("zstd-compressed", "zstd -dc {path} | ctxlint check -"),
    b"\x04\x22\x4d\x18": ("lz4-compressed", "lz4 -dc {path} | ctxlint check -"),
    b"PK\x03\x04": ("a zip archive", "unzip -p {path} | ctxlint check -"),
    b"7z\xbc\xaf": ("a 7-Zip archive", "7z x -so {path} | ctxlint check -"),
}


def open_binary(path: str) -> IO[bytes]:
    """The file (or stdin) as bytes, decompressed when it starts with gzip's, bzip2's or
    xz's magic, recoded to UTF-8 when it starts with a UTF-16 byte order mark; closing
    what it returns closes the file. Raises OSError for a packing it cannot read."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb", buffering=READ_BUFFER)
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)  # a stdin that cannot peek (a test runner's)
    start = raw.peek(6)[:6]
    if is_utf16_text(start):
        return _RecodedUtf16(raw)  # type: ignore[return-value]
    opener = next((module for magic, module in UNPACKERS if start.startswith(magic)), None)
    if opener is not None:
        if path == "-":
            return opener.open(raw, "rb")  # stdin stays open: it is not the reader's to close
        raw.close()
        return opener.open(path, "rb")  # owns its file, unlike one given a file object
    if start[:4] in UNREADABLE_PACKING:
        if path != "-":
            raw.close()
        what, how = UNREADABLE_PACKING[start[:4]]
        raise OSError(f"{what}; ctxlint reads plain, gzip, bzip2 and xz files: unpack it first ({how.format(path=path if path != '-' else 'FILE')})")
    return raw


def decode_error(error: orjson.JSONDecodeError, line_bytes: bytes, last: bool) -> str:
    bad_utf8 = None
    try:
        line_bytes.decode("utf-8")
    except UnicodeDecodeError as bad:
        bad_utf8 = bad.start
    # a record cut short: it opens as one, and at most its last character was cut in two
    opens_a_record = line_bytes.lstrip(b"\xef\xbb\xbf \t")[:1] in (b"{", b"[")
    if last and not line_bytes.endswith(b"\n") and opens_a_record and NUL not in line_bytes \
            and (bad_utf8 is None or bad_utf8 >= len(line_bytes) - 3):
        return f"not JSON: the line is cut off (no newline at end of file; is the log still being written?): {error.msg}"
    if NUL in line_bytes:
        return f"not JSON: the line holds a NUL byte at column {line_bytes.index(NUL) + 1}" + ("" if opens_a_record else " (a binary file?)")
    if bad_utf8 is not None:
        return f"not JSON: invalid UTF-8 byte at column {bad_utf8 + 1}"
    if "depth limit" in error.msg or "recursion" in error.msg:
        return f"not JSON ctxlint can read: nested deeper than {JSON_DEPTH_LIMIT} levels (column {error.colno})"
    return f"not JSON: {error.msg} at column {error.colno}"


NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _read_past_doubles(text: bytes, error: orjson.JSONDecodeError) -> tuple[object, str] | None:
    """A line orjson refuses only for a number no double holds, read rather than lost:
    (its value, what was read in place of what). JSON allows numbers past a double's
    range; Python's json.dumps writes NaN and Infinity, which JSON does not have, for a
    float that is one (a latency or cost field of a Python logger)."""
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return NON_FINITE[name]

    if "infinity" not in error.msg and not text[error.pos:error.pos + 9].lstrip(b"-").startswith((b"NaN", b"Infinity")):
        return None
    try:
        value = json.loads(text, parse_int=_int_like_orjson, parse_constant=constant)
    except (ValueError, RecursionError):
        return None
    if constants:
        return value, (f"{constants[0]} at column {error.colno} is not JSON (Python's json.dumps writes it for a float"
                       " that is not a number; parsers that follow JSON refuse the line); read as Python reads it")
    return value, f"a number at column {error.colno} overflows a double; read as infinity"


def _int_like_orjson(digits: str) -> int | float:
    """orjson reads integers past 64 bits as floats; do the same, so hashing never fails."""
    value = int(digits)
    return value if -(1 << 63) <= value < (1 << 64) else float(value)


class _Duplicate(Exception):
    pass


def duplicate_key(text: bytes) -> tuple[str, str] | None:
    """(key, JSON pointer of its object) of the first key given twice in one object, or None.

    Only run on lines that name "messages" twice, so the common line pays nothing."""
    def pairs(items: list[tuple[str, object]]) -> dict:
        seen = set()
        for key, _ in items:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except _Duplicate as found:
        key = str(found.args[0])
        try:
            return key, _pointer_of_key(orjson.loads(text), key) or ""
        except RecursionError:
            return key, ""
    except (ValueError, RecursionError):
        return None
    return None


def _pointer_of_key(value: object, key: str, path: str = "") -> str | None:
    """The JSON pointer of the first object (depth-first) that holds key."""
    if isinstance(value, dict):
        if key in value:
            return path
        children = value.items()
    elif isinstance(value, list):
        children = enumerate(value)
    else:
        return None
    for name, item in children:
        found = _pointer_of_key(item, key, f"{path}/{name}")
        if found is not None:
            return found
    return None


def _problem_after_log_prefix(text: bytes, line_bytes: bytes, last: bool) -> str | None:
    """What is wrong with the JSON a logger wrote after its prefix, where the line (`text`,
    without its line end) has one."""
    start = object_start(text)
    if not start:
        return logfmt_problem(text)
    try:
        orjson.loads(text[start:])
    except orjson.JSONDecodeError as error:
        line_end = line_bytes[len(line_bytes.rstrip(b"\r\n")):]
        return f"{decode_error(error, text[start:] + line_end, last)} (of the JSON after the log prefix, from column {start + 1})"
    return None


def parse_line(line_bytes: bytes, path: str, number: int, first: bool = False, last: bool = False,
               decoder: SharedPrefixDecoder | None = None, text_log: bool = False) -> list[object | InputProblem | Skipped]:
    """One log line: [] when blank, else the parsed value and/or the problems found in it.
    A record may follow the text a logger wrote before it (text_logs.logged_object); in a
    text log (a .log, or text_logs.is_text_log) a line that was no record (text_logs.was_a_record)
    is the application's own, skipped, and so is an object of no known record shape (a
    LoggedObject)."""
    text = line_bytes
    if first and text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    text = text.rstrip(b"\r\n")
    if not text.strip():
        return []
    found: list[object | InputProblem | Skipped] = []
    try:
        value = decoder.loads(text) if decoder is not None else orjson.loads(text)
    except orjson.JSONDecodeError as error:
        logged = logged_object(text, decoder.loads if decoder is not None else orjson.loads)
        if logged is not None:
            return [LoggedObject(logged) if text_log else logged]
        if text_log and not was_a_record(text):
            return [Skipped(path, number, TEXT_LINE)]
        read = _read_past_doubles(text, error)
        if read is None:
            said = _problem_after_log_prefix(text, line_bytes, last) or decode_error(error, line_bytes, last)
            if first and text.strip() in (b"[", b"{"):
                said += ("; the file opens one JSON document spread over many lines, not JSON Lines (one record per line):"
                         " name it .json or pass --input-format json")
            return [InputProblem(path, number, said)]
        value, said = read
        found.append(InputProblem(path, number, said))
    if isinstance(value, str) and value.lstrip().startswith("{"):  # a record encoded twice: a JSON string holding its JSON
        try:
            inner = orjson.loads(value)
        except orjson.JSONDecodeError:
            inner = None
        if isinstance(inner, dict):
            value = inner
    found.insert(0, value)
    if text.count(b'"messages"') > 1:
        duplicate = duplicate_key(text)
        if duplicate is not None:
            found.append(InputProblem(path, number, f"duplicate key {duplicate[0]!r} in the object at {duplicate[1] or '/'}: the last one was read, providers may read another"))
    return found


SKIP = object()  # a route's word for a line this process leaves to another


def iter_lines(path: str, on_bytes: Callable[[int], None] | None = None,
               decoder: SharedPrefixDecoder | None = None,
               route: Callable[[bytes], object] | None = None,
               newest_first: Callable[[list[bytes]], bool] | None = None) -> Iterator[tuple[int, object | InputProblem, object]]:
    """(line number, parsed object or problem, route's word on the line) for every
    non-blank line; raises ReadError.

    on_bytes hears how many bytes were read, for a progress bar; a decoder shares the
    history a line repeats with the line it repeats it from; a line that route answers
    SKIP for is not parsed (another process reads it). When newest_first says of the
    file's first lines that it was written newest first (a dashboard's export), its lines
    come last first, each still with its own number."""
    stream = _opened(path)
    number = 0
    try:
        with _closing(stream, path):
            head = head_lines(stream)
            text_log = named_as_text_log(path) or is_text_log(head)
            if newest_first is not None and newest_first(head):
                lines = _backwards(stream, head)
            else:
                lines = _forwards(stream, head)
                if text_log:
                    lines = joined_records(lines)
            for number, line_bytes, last in lines:
                if on_bytes is not None:
                    on_bytes(len(line_bytes))
                word = route(line_bytes) if route is not None else None
                if word is SKIP:
                    continue
                yield from ((number, item, word) for item in parse_line(line_bytes, path, number, first=number == 1, last=last,
                                                                                decoder=decoder, text_log=text_log))
    except READ_ERRORS as error:
        where = f"after line {number}" if number else "before the first line"
        raise ReadError(f"{path}: read stopped {where}: {error}") from error


HEAD_LINES = 64  # lines newest_first judges a file's order by
HEAD_BYTES = 4 << 20


def head_lines(stream: IO[bytes]) -> list[bytes]:
    """The file's first lines, as many as HEAD_LINES and HEAD_BYTES allow (at least one)."""
    head: list[bytes] = []
    size = 0
    while len(head) < HEAD_LINES and size < HEAD_BYTES:
        line_bytes = stream.readline()
        if not line_bytes:
            break
        head.append(line_bytes)
        size += len(line_bytes)
    return head


def _forwards(stream: IO[bytes], head: list[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, whether it is the file's last line) of each line, first first."""
    pending = head[0] if head else stream.readline()
    rest = iter(head[1:])
    number = 0
    while pending:
        line_bytes, pending = pending, next(rest, None) or stream.readline()
        number += 1
        yield number, line_bytes, not pending


def _backwards(stream: IO[bytes], head: list[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, whether it is the file's last line) of each line, last first.
    A plain file is read from its end; a compressed one, or a pipe (stdin, a shell's
    `<(…)`), is first copied unpacked into a temporary file (on this machine's disk,
    deleted once read), read from its end."""
    if isinstance(stream, io.BufferedReader) and stream.seekable():
        yield from _numbered_from_the_end(stream, _line_count(stream))
        return
    with tempfile.TemporaryFile() as unpacked:
        unpacked.writelines(head)
        shutil.copyfileobj(stream, unpacked, READ_BUFFER)
        yield from _numbered_from_the_end(unpacked, _line_count(unpacked))


def _line_count(stream: IO[bytes]) -> int:
    """How many lines readline finds in the file."""
    count, last = 0, b"\n"
    stream.seek(0)
    for block in iter(lambda: stream.read(READ_BUFFER), b""):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")


def _numbered_from_the_end(stream: IO[bytes], count: int) -> Iterator[tuple[int, bytes, bool]]:
    for offset, line_bytes in enumerate(_lines_from_the_end(stream)):
        yield count - offset, line_bytes, offset == 0


def _lines_from_the_end(stream: IO[bytes], block: int = READ_BUFFER) -> Iterator[bytes]:
    """The lines of a seekable file, last first, each as readline gives it."""
    start = stream.seek(0, io.SEEK_END)
    buffer, stop = b"", 0  # buffer holds the file from `start` on; its lines before `stop` are still to come
    while True:
        cut = buffer.rfind(b"\n", 0, stop - 1) if stop > 1 else -1  # the newline that ends the line before the next one
        if cut >= 0:
            yield buffer[cut + 1:stop]
            stop = cut + 1
        elif start == 0:
            if stop:
                yield buffer[:stop]
            return
        else:
            read_from = max(0, start - block)
            stream.seek(read_from)
            buffer = stream.read(start - read_from) + buffer[:stop]
            start, stop = read_from, len(buffer)


def read_whole(path: str) -> bytes:
    """All of a file (or stdin) as open_binary reads it, less a UTF-8 byte order mark (as
    Windows tools write one): a JSON document or a cassette; raises ReadError."""
    stream = _opened(path)
    try:
        with _closing(stream, path):
            return stream.read().removeprefix(b"\xef\xbb\xbf")
    except READ_ERRORS as error:
        raise ReadError(f"{path}: read stopped before its end: {error}") from error


READ_ERRORS = (OSError, EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError)  # a file that breaks off, a compressed stream cut short


def _opened(path: str) -> IO[bytes]:
    try:
        return open_binary(path)
    except OSError as error:
        raise ReadError(f"{path}: cannot open: {error.strerror or error}") from error


def _closing(stream: IO[bytes], path: str) -> contextlib.AbstractContextManager:
    """What closes the stream when reading ends: not stdin, which is not the reader's."""
    return stream if path != "-" else contextlib.nullcontext(stream)
