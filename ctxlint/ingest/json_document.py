"""JSON documents: agent trajectory dumps, a JSON list of conversations (tau-bench style),
each one session; or a JSON list of the records a JSONL log holds, one per element.

In a trajectory, each assistant message stands for one chat-completions request whose
messages were everything before it; the assistant message itself is that request's response.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, replace
from typing import Any, Iterator

import orjson

from ctxlint.chat import dotted
from ctxlint.ingest import langsmith, otel, swe_agent
from ctxlint.ingest.cassette import interactions_of, read_interactions
from ctxlint.ingest.jsonl import iter_lines, read_whole
from ctxlint.ingest.pointer_lines import pointer_lines
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
from ctxlint.ingest.recordings import recorded_interactions
from ctxlint.ingest.schema import request_problems
from ctxlint.ingest.shapes import BatchOutput, as_items, holds_reply_beside
from ctxlint.ingest.source_map import SAME_CALL_PARTS, Origin, SourceMap
from ctxlint.ingest.sources import Source, named_as_lines
from ctxlint.ingest.written_order import listed_newest_first

CONVERSATION_KEYS = ("traj", "messages", "conversation")
# where a trajectory names its model: its own `model`, or mini-SWE-agent's run configuration
TRAJECTORY_MODEL_PATHS = ("model", "info.config.model.model_name")


def _conversation_key(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in CONVERSATION_KEYS:
            if isinstance(item.get(key), list):
                return key
    return None


def _is_trajectory(item: Any) -> bool:
    """A conversation dump: its messages under `traj` or `conversation`, or under
    `messages` with no model beside them (a request body names its model) and no reply (a
    logged call keeps the reply it got)."""
    return isinstance(item, dict) and "request" not in item and (
        any(isinstance(item.get(key), list) for key in ("traj", "conversation"))
        or (isinstance(item.get("messages"), list) and "model" not in item and not holds_reply_beside(item)))


def _is_log_record(item: Any) -> bool:
    """What a line of a JSONL request log holds: an envelope, a request body (with its model,
    or with the reply it got), a batch line, OpenTelemetry spans, a LangSmith run."""
    return isinstance(item, dict) and ("request" in item or "custom_id" in item or "model" in item or otel.holds_spans(item)
                                       or langsmith.holds_runs(item) or (isinstance(item.get("messages"), list) and holds_reply_beside(item)))


def _first_message(pointer: str) -> int:
    """The message a schema problem's pointer (/messages/3/content) is in; 0 for the body."""
    parts = pointer.split("/")
    return int(parts[2]) if len(parts) > 2 and parts[1] == "messages" and parts[2].isdigit() else 0


_GAP = re.compile(r"[\s,]*")


def _log_records(path: str, text: str, data: Any, session_key: str | None,
                 backwards: list[str] | None = None, member: str | None = None) -> Iterator[Record | InputProblem | Skipped | BatchOutput]:
    """Each element of a JSON list of log records (the document, or its `member`: an API's
    page of them) read as a JSONL line would be, at the line of the file where it starts;
    last first when the list was written newest first (its path then goes into
    `backwards`). A single record is at line 1, and its sessions are inferred among the
    records of its folder: a logger that writes each request to a file of its own
    (OpenHands' completion logs) keeps a log in a folder, not in a file."""
    if not isinstance(data, list):
        for item in as_items(data, path, 1, session_key):
            if isinstance(item, Record) and not item.scope and path != "-":
                item.scope = os.path.dirname(os.path.abspath(path))
            yield item
        return
    if member is None:
        lines = list(_element_lines(text, data))
    else:
        found = pointer_lines(text, {f"/{member}/{index}" for index in range(len(data))})
        lines = [found.get(f"/{member}/{index}", 1) for index in range(len(data))]
    placed = list(zip(lines, data))
    if listed_newest_first(data):
        placed.reverse()
        if backwards is not None:
            backwards.append(path)
    for line, item in placed:
        yield from as_items(item, path, line, session_key)


def _element_lines(text: str, data: list[Any]) -> Iterator[int]:
    """The line each element of the JSON list the text holds starts at."""
    decoder = json.JSONDecoder()
    position = text.index("[") + 1
    line = 1 + text.count("\n", 0, position)
    for element in range(len(data)):
        start = _GAP.match(text, position).end()
        line += text.count("\n", position, start)
        try:
            _, position = decoder.raw_decode(text, start)
        except RecursionError:  # nested deeper than json's scanner goes (orjson read it): no more lines to tell
            yield from (line for _ in range(element, len(data)))
            return
        yield line
        line += text.count("\n", start, position)


PAGE_MEMBER = "data"  # where an API's list endpoint puts a page of its records (Langfuse's, Helicone's, OpenAI's)


def _page_of_records(data: Any) -> list[Any] | None:
    """The records of an API's page of them, `{"data": [...], "meta": {...}}`; None for any
    other document."""
    page = data.get(PAGE_MEMBER) if isinstance(data, dict) else None
    if isinstance(page, list) and any(_is_log_record(item) for item in page) and not any(_is_trajectory(item) for item in page):
        return page
    return None


def _log_events(data: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """CloudWatch Logs' events as its CLI prints them, and the member that holds them:
    `aws logs filter-log-events` and `get-log-events` (`{"events": [{"timestamp",
    "message"}, …]}`), a Logs Insights query's `get-query-results` (`{"results": [[{"field":
    "@message", "value"}, …], …]}`, each row read as the object of its fields). None for
    any other document."""
    if not isinstance(data, dict):
        return None
    events, rows = data.get("events"), data.get("results")
    if isinstance(events, list) and events and all(isinstance(event, dict) and isinstance(event.get("message"), str) for event in events):
        return "events", events
    if isinstance(rows, list) and rows and all(isinstance(row, list) for row in rows) and all(
            isinstance(cell, dict) and isinstance(cell.get("field"), str) and "value" in cell for row in rows for cell in row):
        return "results", [{cell["field"]: cell["value"] for cell in row} for row in rows]
    return None


def _read_log_events(path: str, text: str, member: str, events: list[dict[str, Any]],
                     session_key: str | None) -> Iterator[Record | InputProblem | Skipped | BatchOutput]:
    """Each event read as the log line its message is, at the line of the file where the event starts."""
    pointers = [f"/{member}/{index}" for index in range(len(events))]
    lines = pointer_lines(text, set(pointers))
    for pointer, event in zip(pointers, events):
        yield from as_items(event, path, lines.get(pointer, 1), session_key)


def _value_stream(text: str) -> list[tuple[int, Any]] | None:
    """(line, value) of each JSON value of a text that holds several, one after another, as
    jq writes them without -c. A value that is not JSON is a _Broken (what is wrong with
    it), and reading goes on at the next line that opens a value at its first column.
    None when the text is not such a stream: it opens with no value, or holds one alone."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, Any]] = []
    position, line = 0, 1
    while True:
        start = _SPACE.match(text, position).end()
        line += text.count("\n", position, start)
        if start >= len(text):
            return found if len(found) > 1 or (found and isinstance(found[0][1], _Broken)) else None
        try:
            value, position = decoder.raw_decode(text, start)
            found.append((line, value))
            line += text.count("\n", start, position)
        except (ValueError, RecursionError) as error:
            if not found:
                return None
            found.append((line, _Broken(getattr(error, "msg", "nested too deep"))))
            resume = _VALUE_OPENS.search(text, start + 1)
            position = resume.start() + 1 if resume else len(text)
            line += text.count("\n", start, position)


class _Broken(str):
    """What is wrong with a value of a value stream that is not JSON."""


_SPACE = re.compile(r"\s*")
_VALUE_OPENS = re.compile(r"\n[{\[]")


def read_json_document(source: Source, session_key: str | None = None,
                       backwards: list[str] | None = None) -> Iterator[Record | InputProblem | Skipped]:
    raw = read_whole(source.path)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        stream = _value_stream(raw.decode("utf-8", "replace"))
        if stream is None and named_as_lines(source.path):
            # named JSON Lines and no JSON read from its first line on: each line says what is wrong with it
            yield from (item for number, obj, _ in iter_lines(source.path) for item in as_items(obj, source.path, number, session_key))
            return
        if stream is None:
            yield InputProblem(source.path, error.lineno or 1, f"not JSON: {error.msg}")
            return
        for line, value in stream:  # several documents one after another: each one a log line
            if isinstance(value, _Broken):
                yield InputProblem(source.path, line, f"not JSON: {value}")
            else:
                yield from as_items(value, source.path, line, session_key)
        return
    recorded = interactions_of(data) or recorded_interactions(data)
    if recorded is not None:  # a vcr cassette saved as JSON, a HAR file, a nock recording
        at, interactions = recorded
        pointers = [f"{at}/{index}" for index in range(len(interactions))]
        lines = pointer_lines(raw.decode("utf-8", "replace"), set(pointers))
        yield from read_interactions(source.path, interactions, [lines.get(pointer, 1) for pointer in pointers])
        return
    held = _log_events(data)
    if held is not None:
        yield from _read_log_events(source.path, raw.decode("utf-8", "replace"), *held, session_key)
        return
    page = _page_of_records(data)
    if page is not None:
        yield from _log_records(source.path, raw.decode("utf-8", "replace"), page, session_key, backwards, member=PAGE_MEMBER)
        return
    if swe_agent.is_trajectory(data):
        yield from swe_agent.read_trajectory(source.path, data, raw.decode("utf-8", "replace"))
        return
    if _is_tau2_results(data):
        trajectories = list(_tau2_trajectories(data))
    else:
        items = data if isinstance(data, list) else [data]
        if any(_is_log_record(item) for item in items) and not any(_is_trajectory(item) for item in items):
            yield from _log_records(source.path, raw.decode("utf-8"), data, session_key, backwards)
            return
        if not any(_conversation_key(item) is not None for item in items):
            # a list of what log lines hold in a logger's wrapping (a Logs Insights download: `@message`), or nothing to read
            read = list(_log_records(source.path, raw.decode("utf-8"), data, session_key, backwards)) if isinstance(data, list) else []
            found = any(isinstance(item, (Record, Skipped, BatchOutput)) for item in read)
            yield from read if found else (Skipped(source.path, 1, "JSON file that holds neither log records nor agent trajectories"),)
            return
        trajectories = list(_listed_trajectories(source.path, items, "" if isinstance(data, dict) else None))
    wanted = {pointer for trajectory in trajectories for pointer in (trajectory.pointers if isinstance(trajectory, Trajectory) else (trajectory.pointer,))}
    lines = pointer_lines(raw.decode("utf-8", "replace"), wanted)
    for trajectory in trajectories:
        if isinstance(trajectory, Trajectory):
            yield from _trajectory_records(source, trajectory, lines)
        else:
            yield replace(trajectory, line=lines.get(trajectory.pointer, 1))


@dataclass(slots=True)
class Trajectory:
    """One conversation of a trajectory dump, as the agent saw it: its messages (each with
    the pointer of the message it was in the file), the model, the session it names."""

    key: str
    model: str | None
    messages: list[Any]
    pointers: list[str]
    calls: list[tuple[str, ...]]  # of each message, the pointer of each of its tool calls in the file
    call_parts: dict[str, str]  # a tool call's normalized sub-pointer -> the file's

    def source_map(self, lines: dict[str, int]) -> SourceMap:
        """Where each message is in the file, and at which line it starts."""
        return SourceMap(tuple(Origin(int(pointer.rsplit("/", 1)[1]), pointer, calls, line=lines.get(pointer))
                               for pointer, calls in zip(self.pointers, self.calls)), self.call_parts, reasoning=None)


def _listed_trajectories(path: str, items: list[Any], root: str | None) -> Iterator[Trajectory | InputProblem]:
    """tau-bench's list of trajectories (`traj`), or any list of conversations (`root`: the
    pointer of the one conversation a file that is not a list holds)."""
    for position, item in enumerate(items):
        at = f"/{position}" if root is None else root
        member = _conversation_key(item)
        if member is None:
            yield InputProblem(path, 1, f"trajectory {position} has no message list (looked for {', '.join(CONVERSATION_KEYS)})", at)
            continue
        messages = item[member]
        named = [f"{k}={item[k]}" for k in ("task_id", "trial") if k in item]  # item is a dict: it had a message list
        model = next((name for name in map(functools.partial(dotted, item), TRAJECTORY_MODEL_PATHS) if isinstance(name, str)), None)
        pointers = [f"{at}/{member}/{index}" for index in range(len(messages))]
        calls = [tuple(f"{pointer}/tool_calls/{j}" for j in range(len(message["tool_calls"])))
                 if isinstance(message, dict) and isinstance(message.get("tool_calls"), list) else () for pointer, message in zip(pointers, messages)]
        yield Trajectory(",".join(named) if named else str(position), model, messages, pointers, calls, SAME_CALL_PARTS)


def _is_tau2_results(data: Any) -> bool:
    """τ²-bench's results file: `info` (the agent's model) and `simulations`, each with its messages."""
    return (isinstance(data, dict) and isinstance(data.get("simulations"), list) and isinstance(data.get("info"), dict)
            and all(isinstance(run, dict) and isinstance(run.get("messages"), list) for run in data["simulations"]))


def _tau2_trajectories(data: dict[str, Any]) -> Iterator[Trajectory]:
    """Each τ²-bench simulation as the agent saw it. The user simulator's own tool calls and
    their results (requestor "user") are not the agent's; a call is `{id, name, arguments}`
    and its result a tool message with the call's `id`, written here the chat-completions
    way. The reasoning a logged reply carried (`raw_data`) is left out: the file does not
    say what the agent sent back, only what was said."""
    agent = data["info"].get("agent_info")
    model = agent.get("llm") if isinstance(agent, dict) and isinstance(agent.get("llm"), str) else None
    for position, run in enumerate(data["simulations"]):
        messages, pointers, calls_at = [], [], []
        for index, message in enumerate(run["messages"]):
            pointer = f"/simulations/{position}/messages/{index}"
            kept: tuple[str, ...] = ()
            if not isinstance(message, dict):
                messages.append(message)  # the schema check reports it, at its place
            elif message.get("role") == "tool":
                if message.get("requestor") == "user":
                    continue
                messages.append({"role": "tool", "tool_call_id": message.get("id"), "content": message.get("content")})
            elif message.get("role") == "user" and not message.get("content") and message.get("tool_calls"):
                continue  # the user simulator only ran its own tools
            else:
                listed = message.get("tool_calls")
                calls = [(j, call) for j, call in enumerate(listed if isinstance(listed, list) else ())
                         if isinstance(call, dict) and call.get("requestor") != "user"]
                converted = {"role": message.get("role"), "content": message.get("content")}
                if listed is not None and not isinstance(listed, list):
                    converted["tool_calls"] = listed  # the schema check reports it, at its place
                elif calls and message.get("role") == "assistant":
                    converted["tool_calls"] = [_tau2_call(call) for _, call in calls]
                    kept = tuple(f"{pointer}/tool_calls/{j}" for j, _ in calls)
                messages.append(converted)
            pointers.append(pointer)
            calls_at.append(kept)
        named = [f"{k}={run[k]}" for k in ("task_id", "trial") if k in run]
        yield Trajectory(",".join(named) if named else str(run.get("id", position)), model, messages, pointers, calls_at, TAU2_CALL_PARTS)


TAU2_CALL_PARTS = {"/function/arguments": "/arguments", "/function/name": "/name"}  # τ²'s calls are {id, name, arguments}


def _tau2_call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    return {"id": call.get("id"), "type": "function",
            "function": {"name": call.get("name"), "arguments": arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()}}


def _trajectory_records(source: Source, trajectory: Trajectory, lines: dict[str, int]) -> Iterator[Record | InputProblem]:
    """Each assistant message of a trajectory as the request of everything before it, at the
    line where that message starts; findings about a message point at its own line."""
    messages = trajectory.messages
    source_map = trajectory.source_map(lines)
    # every request of a trajectory is a prefix of it: the first broken message ends the ones that can be read
    # (one with no messages makes no request: there is none to be empty)
    problems = request_problems({"model": trajectory.model, "messages": messages}) if messages else []
    broken = _first_message(problems[0][0]) if problems else len(messages)
    for index, message in enumerate(messages[:broken + 1]):
        if isinstance(message, dict) and message.get("role") == "assistant" and index > 0:
            yield Record(
                file=source.path, line=lines.get(trajectory.pointers[index], 1), shape="trajectory",
                request={"model": trajectory.model, "messages": messages[:index]},
                response=Response(message=message),
                session_key=f"{source.path}#{trajectory.key}",
                scope=source.path,
                source_map=source_map,
            )
    if problems:
        pointer, what = problems[0]
        where = trajectory.pointers[broken] + pointer.removeprefix(f"/messages/{broken}") if pointer.startswith("/messages/") and broken < len(trajectory.pointers) else pointer
        line = lines.get(trajectory.pointers[broken], 1) if broken < len(trajectory.pointers) else 1
        yield InputProblem(source.path, line, f"trajectory {trajectory.key} breaks the chat-completions schema at {where}: {what}; "
                                           f"its requests from message {broken} on are not checked", where)
