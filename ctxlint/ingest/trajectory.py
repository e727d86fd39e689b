"""Agent trajectory dumps: a JSON list of conversations (tau-bench style), each one session.

Each assistant message stands for one chat-completions request whose messages were
everything before it; the assistant message itself is that request's response.
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson

from ctxlint.ingest.jsonl import ReadError
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
from ctxlint.ingest.sources import Source

CONVERSATION_KEYS = ("traj", "messages", "conversation")


def _conversation(item: Any) -> list[Any] | None:
    if isinstance(item, dict):
        for key in CONVERSATION_KEYS:
            if isinstance(item.get(key), list):
                return item[key]
    return None


def read_trajectory(source: Source, session_key: str | None = None) -> Iterator[Record | InputProblem | Skipped]:
    try:
        with open(source.path, "rb") as handle:
            data = orjson.loads(handle.read())
    except OSError as error:
        raise ReadError(f"{source.path}: cannot open: {error.strerror or error}") from error
    except orjson.JSONDecodeError as error:
        yield InputProblem(source.path, error.lineno or 1, f"not JSON: {error.msg}")
        return
    items = data if isinstance(data, list) else [data]
    if not any(_conversation(item) is not None for item in items):
        yield Skipped(source.path, 1, "JSON file that is not a list of agent trajectories")
        return
    for position, item in enumerate(items):
        messages = _conversation(item)
        if messages is None:
            yield InputProblem(source.path, 1, f"trajectory {position} has no message list (looked for {', '.join(CONVERSATION_KEYS)})", f"/{position}")
            continue
        named = [f"{k}={item[k]}" for k in ("task_id", "trial") if k in item]  # item is a dict: it had a message list
        key = ",".join(named) if named else str(position)
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "assistant" and index > 0:
                yield Record(
                    file=source.path, line=1, shape="trajectory",
                    request={"model": item.get("model") if isinstance(item.get("model"), str) else None, "messages": messages[:index]},
                    response=Response(message=message),
                    session_key=f"{source.path}#{key}",
                    scope=source.path,
                    extra={"pointer": f"/{position}/traj/{index}"},
                )
