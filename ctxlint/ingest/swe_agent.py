"""SWE-agent's trajectory files (`<instance>.traj`): each step keeps, as `query`, the
messages the agent sent the model at that step, and, as `response`, the text it got back.

A step's query is SWE-agent's own history items (`agent`, `message_type`, a tool result's
`tool_call_ids`) after its history processors ran; the request that reached the model is
what SWE-agent makes of them (`_history_to_messages`): a tool result's first
`tool_call_ids` entry as its `tool_call_id`, `tool_calls` and `thinking_blocks` on the
assistant turns that have them, `cache_control` where a processor put one, the rest
dropped. The reply of a step is the history's next `action` message whose content is
the step's response (the history keeps its tool calls; a step alone keeps only the text),
and the model is the one the run's `replay_config` names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

import orjson

from ctxlint.chat import dotted
from ctxlint.ingest.pointer_lines import pointer_lines
from ctxlint.ingest.record import InputProblem, Record, Response
from ctxlint.ingest.schema import schema_problem
from ctxlint.ingest.source_map import SourceMap, kept_in_place


def is_trajectory(data: Any) -> bool:
    """A SWE-agent trajectory: `trajectory` steps that each hold the `query` they sent."""
    steps = data.get("trajectory") if isinstance(data, dict) else None
    return isinstance(steps, list) and bool(steps) and all(isinstance(step, dict) and isinstance(step.get("query"), list) for step in steps)


def read_trajectory(path: str, data: dict[str, Any], text: str) -> Iterator[Record | InputProblem]:
    """Each step's query as the request it was, at the line where the step starts."""
    steps = data["trajectory"]
    model = _model(data)
    wanted = {f"/trajectory/{n}" for n in range(len(steps))} | {
        f"/trajectory/{n}/query/{i}" for n, step in enumerate(steps) for i in range(len(step["query"]))}
    lines = pointer_lines(text, wanted)
    replies = _replies(data.get("history"), steps)
    for n, step in enumerate(steps):
        at = f"/trajectory/{n}"
        line = lines.get(at, 1)
        body = {**({"model": model} if model else {}), "messages": [sent_message(item) for item in step["query"]]}
        problem = schema_problem(body, path, line, at, sent=_in_query)
        if problem is not None:
            yield problem
            continue
        yield Record(file=path, line=line, shape="trajectory", request=body,
                     response=Response(message=replies[n]) if replies[n] is not None else None,
                     session_key=f"{path}#trajectory", scope=path, source_map=_source_map(step["query"], at, lines),
                     settings_recorded=False)


def sent_message(item: Any) -> Any:
    """The chat message SWE-agent sends for one history item."""
    if not isinstance(item, dict):
        return item
    role = item.get("role")
    if role == "tool":
        ids = item.get("tool_call_ids")
        message = {"role": role, "content": item.get("content"), "tool_call_id": ids[0] if isinstance(ids, list) and ids else None}
    elif item.get("tool_calls") is not None:
        message = {"role": role, "content": item.get("content"), "tool_calls": item["tool_calls"]}
        if item.get("thinking_blocks"):
            message["thinking_blocks"] = item["thinking_blocks"]
    else:
        message = {"role": role, "content": item.get("content")}
    if "cache_control" in item:
        message["cache_control"] = item["cache_control"]
    return message


def _model(data: dict[str, Any]) -> str | None:
    """The model the run's replay configuration (a JSON string, or its object) names."""
    config = data.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return None
    name = dotted(config, "agent.model.name") if isinstance(config, dict) else None
    return name if isinstance(name, str) else None


def _replies(history: Any, steps: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Per step, the assistant message the history kept for its response (None where no
    action message in turn holds that response)."""
    actions = iter([item for item in history if isinstance(item, dict) and item.get("role") == "assistant"
                    and item.get("message_type") == "action" and not item.get("is_demo")] if isinstance(history, list) else [])
    replies: list[dict[str, Any] | None] = []
    for step in steps:
        reply = next((action for action in actions if action.get("content") == step.get("response")), None)
        replies.append(sent_message(reply) if reply is not None else None)
        if reply is None:
            actions = iter(())  # out of step with the history from here on: no more replies are known
    return replies


def _in_query(pointer: str) -> str:
    """Where a pointer into the request body points in the step: its messages are `query`."""
    return "/query" + pointer.removeprefix("/messages") if pointer.startswith("/messages") else pointer


def _source_map(query: list[Any], at: str, lines: dict[str, int]) -> SourceMap:
    """The step's messages kept in place under its `query`, each at its line of the file."""
    kept = kept_in_place(query, f"{at.removeprefix('/')}/query")
    return replace(kept, origins=tuple(replace(origin, line=lines.get(origin.pointer)) for origin in kept.origins))
