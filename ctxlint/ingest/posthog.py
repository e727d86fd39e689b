"""PostHog's LLM analytics events, as the requests they record.

PostHog records a model call as a `$ai_generation` event whose properties hold what was
sent (`$ai_input`, `$ai_tools`, `$ai_model`) and what came back (`$ai_output_choices`, or
`$ai_error` with `$ai_is_error`), its prompt's size (`$ai_input_tokens`), and the session
and trace it belongs to (`$ai_session_id`, `$ai_trace_id`). It is read as a traced
generation (shapes). Its other events (`$ai_span`, `$ai_trace`, `$ai_embedding`, the
product's own) are no model call.
"""

from __future__ import annotations

from typing import Any

GENERATION = "$ai_generation"
INPUT = "$ai_input"


def is_event(obj: dict[str, Any]) -> bool:
    """Whether a line is a PostHog event (as its export or its capture API holds one)."""
    event = obj.get("event")
    return isinstance(event, str) and event.startswith("$") and isinstance(obj.get("properties"), dict) and (
        "distinct_id" in obj or "uuid" in obj or event.startswith("$ai_"))


def as_generation(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A `$ai_generation` event as a traced generation's members, or None for another event."""
    properties = obj["properties"]
    if obj["event"] != GENERATION or not isinstance(properties.get(INPUT), list):
        return None
    generation = {"model": properties.get("$ai_model"), "input": properties[INPUT], "timestamp": obj.get("timestamp"),
                  "session_id": properties.get("$ai_session_id"), "trace_id": properties.get("$ai_trace_id")}
    if isinstance(properties.get("$ai_tools"), list):
        generation["tools"] = properties["$ai_tools"]
    if properties.get("$ai_is_error") is True:
        generation["output"] = {"error": {"message": str(properties.get("$ai_error") or "the call failed")}}
    else:
        generation["output"] = properties.get("$ai_output_choices")
    if isinstance(properties.get("$ai_input_tokens"), int):
        generation["usage"] = {"input_tokens": properties["$ai_input_tokens"]}
    return generation


def skipped_reason(obj: dict[str, Any]) -> str:
    if obj["event"] == GENERATION:
        return "PostHog $ai_generation event recorded without its input messages"
    return f"PostHog {obj['event']} event (no model call)"
