"""JSONL logs: one record per line, plain or gzip, streamed line by line."""

from __future__ import annotations

import contextlib
import gzip
import sys
import zlib
from typing import IO, Callable, Iterator

import orjson

from ctxlint.ingest.record import InputProblem

GZIP_MAGIC = b"\x1f\x8b"
NUL = b"\x00"


class ReadError(Exception):
    """The input stopped being readable; the lines before it were read."""


def open_binary(path: str) -> IO[bytes]:
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")
    if hasattr(raw, "peek") and raw.peek(2)[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def decode_error(error: orjson.JSONDecodeError, line_bytes: bytes, last: bool) -> str:
    if last and not line_bytes.endswith(b"\n"):
        return f"not JSON: the line is cut off (no newline at end of file; is the log still being written?): {error.msg}"
    if NUL in line_bytes:
        return f"not JSON: the line holds a NUL byte at column {line_bytes.index(NUL) + 1}"
    try:
        line_bytes.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not JSON: invalid UTF-8 byte at column {bad.start + 1}"
    return f"not JSON: {error.msg} at column {error.colno}"


def iter_lines(path: str, on_bytes: Callable[[int], None] | None = None) -> Iterator[tuple[int, object | InputProblem]]:
    """(line number, parsed object or problem) for every non-blank line; raises ReadError.

    on_bytes hears how many bytes were read, for a progress bar."""
    try:
        stream = open_binary(path)
    except OSError as error:
        raise ReadError(f"{path}: cannot open: {error.strerror or error}") from error
    number = 0
    try:
        with stream if path != "-" else contextlib.nullcontext(stream):
            pending = stream.readline()
            while pending:
                line_bytes, pending = pending, stream.readline()
                number += 1
                if on_bytes is not None:
                    on_bytes(len(line_bytes))
                text = line_bytes
                if number == 1 and text.startswith(b"\xef\xbb\xbf"):
                    text = text[3:]
                text = text.rstrip(b"\r\n")
                if not text.strip():
                    continue
                try:
                    yield number, orjson.loads(text)
                except orjson.JSONDecodeError as error:
                    yield number, InputProblem(path, number, decode_error(error, line_bytes, not pending))
                except RecursionError:
                    yield number, InputProblem(path, number, "not JSON this reader can hold: nested too deeply")
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as error:
        where = f"after line {number}" if number else "before the first line"
        raise ReadError(f"{path}: read stopped {where}: {error}") from error
