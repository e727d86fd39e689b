"""What of a tracer's export is no model call, and why.

Tracers export every step of an app, and a model call is one kind among many. A line of
an export that records no model call is counted as skipped, by what it is:

- Langfuse's observations (`traceId` and a `type`): a `GENERATION` is a model call, read as
  a traced generation (shapes); a `SPAN`, `EVENT`, `AGENT`, `TOOL`, `CHAIN`… is not, though
  its input may hold the agent's messages.
- The OpenAI Agents SDK's trace export (a tracing processor writing `trace.export()` and
  `span.export()`): a trace header (`"object": "trace"`) and a span per step (`"object":
  "trace.span"`, its `span_data` typed `agent`, `function`, `handoff`, `guardrail`,
  `generation`, `response`…). A `generation` span holds a chat-completions call's messages
  and reply, and is read one level down as a traced generation; a `response` span keeps
  only the id of its Responses API call, not what was sent.
- An OpenTelemetry collector's file export of metrics (`resourceMetrics`) or logs
  (`resourceLogs`) beside its spans: no request; messages a tracer logs as events are not
  joined to their spans.
- Weave's calls (an `op_name` that is a `weave:///` reference): a call of a provider's
  client keeps the body it sent as `inputs` and the reply as `output`, and is read as that
  exchange; a call of the app's own ops that reads as no request is no model call.
"""

from __future__ import annotations

import re
from typing import Any

WEAVE_OP = re.compile(r"weave:///(?:[^/]+/)*op/([^:]+)")
LANGFUSE_TYPES = ("GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING", "GUARDRAIL")


def skipped_reason(obj: dict[str, Any]) -> str | None:
    """Why a line of a tracer's export holds no request to read, or None when it is none
    of an export's, or a model call with its messages."""
    if isinstance(obj.get("resourceMetrics"), list):
        return "OpenTelemetry metrics export (no model call)"
    if isinstance(obj.get("resourceLogs"), list):
        return "OpenTelemetry logs export (messages logged as events are not joined to their spans)"
    kind = obj.get("type")
    if kind in LANGFUSE_TYPES and "traceId" in obj:
        return None if kind == "GENERATION" else f"Langfuse {kind} observation (no model call)"
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


def unread_step(obj: dict[str, Any]) -> str | None:
    """Why a line that reads as no request is a step of a tracer's export, not a broken
    record: a Weave call of one of the app's ops. None when it is no such line."""
    found = WEAVE_OP.match(obj["op_name"]) if isinstance(obj.get("op_name"), str) else None
    return f"Weave call of op {found.group(1)} (no model call)" if found else None
