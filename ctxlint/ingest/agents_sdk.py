"""The OpenAI Agents SDK's trace export: what of it is no model call.

A tracing processor that writes the SDK's traces out (`trace.export()`, `span.export()`,
one per line) writes a trace header (`"object": "trace"`) and a span per step
(`"object": "trace.span"`, its `span_data` typed `agent`, `function`, `handoff`,
`guardrail`, `generation`, `response`…). A `generation` span holds a chat-completions
call's messages and reply, and is read one level down as a traced generation (shapes);
a `response` span keeps only the id of its Responses API call, not what was sent. Every
other line of the export is counted as skipped, by what it is.
"""

from __future__ import annotations

from typing import Any


def skipped_reason(obj: dict[str, Any]) -> str | None:
    """Why a line of an Agents SDK trace export holds no request to read, or None when it
    is none of the export's, or a generation span with its messages."""
    if obj.get("object") == "trace" and "workflow_name" in obj:
        return "OpenAI Agents SDK trace header (no model call)"
    data = obj.get("span_data")
    if obj.get("object") != "trace.span" or not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind == "generation":
        return None if isinstance(data.get("input"), list) else "OpenAI Agents SDK generation span recorded without its messages"
    if kind == "response":
        return "OpenAI Agents SDK response span (its Responses API call is not in the export, only its response_id)"
    return f"OpenAI Agents SDK {kind} span (no model call)"
