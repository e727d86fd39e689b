"""Agent-run snapshot folders: loop-N/llm-request.jsonl (+ llm-response.jsonl chunks).

A run folder also holds the agent's event stream (event-stream.jsonl) and each loop its
tool executions (tool-calls.jsonl): the run's story told again, not requests. They are
counted as skipped, by what they are, as is any other file there."""

from __future__ import annotations

import os
from typing import Iterator

import orjson

from ctxlint.ingest.jsonl import ReadError
from ctxlint.ingest.record import InputProblem, Record, Skipped
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest.schema import schema_problem
from ctxlint.ingest.sources import LOOP_DIR, Source


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ReadError(f"{path}: cannot open: {error.strerror or error}") from error


REQUEST, RESPONSE = "llm-request.jsonl", "llm-response.jsonl"
NOT_REQUESTS = {  # the other files a snapshot run holds, by what they are
    "event-stream.jsonl": "a snapshot run's event stream (agent events, not requests)",
    "tool-calls.jsonl": "a snapshot loop's tool executions (their results come back in the next request)",
}


def _others(folder: str, own: tuple[str, ...]) -> Iterator[Skipped]:
    """A Skipped for each file of a snapshot folder that is not one of its own."""
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name not in own and os.path.isfile(path):
            yield Skipped(path, 1, NOT_REQUESTS.get(name, "a file in a snapshot folder that is not one of its requests or replies"))


def read_snapshot(source: Source, session_key: str | None = None) -> Iterator[Record | InputProblem | Skipped]:
    try:
        names = os.listdir(source.path)
    except OSError as error:  # a file, or a folder that cannot be listed
        raise ReadError(f"{source.path}: cannot read as a snapshot run (a folder of loop-N folders): {error.strerror or error}") from error
    loops = sorted(
        (int(match.group(1)), name)
        for name in names
        if (match := LOOP_DIR.match(name)) and os.path.isdir(os.path.join(source.path, name))
    )
    yield from _others(source.path, ())
    for _, name in loops:
        yield from _others(os.path.join(source.path, name), (REQUEST, RESPONSE))
        request_path = os.path.join(source.path, name, REQUEST)
        raw = _read(request_path)
        if raw is None:
            yield InputProblem(request_path, 1, "snapshot loop has no llm-request.jsonl")
            continue
        try:
            snapshot = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            yield InputProblem(request_path, error.lineno or 1, f"not JSON: {error.msg}")
            continue
        body = snapshot.get("request") if isinstance(snapshot, dict) and isinstance(snapshot.get("request"), dict) else snapshot
        if not isinstance(body, dict) or "messages" not in body:
            yield InputProblem(request_path, 1, "snapshot request is not a chat-completions body (expected {provider, request: {messages, ...}})")
            continue
        problem = schema_problem(body, request_path, 1, "/request")
        if problem is not None:
            yield problem
            continue
        response_raw = _read(os.path.join(source.path, name, RESPONSE))
        yield Record(
            file=request_path, line=1, shape="snapshot", request=body,
            response=parse_response(response_raw.decode("utf-8", "replace")) if response_raw is not None else None,
            scope=source.path,
        )
