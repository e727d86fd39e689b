"""Agents' own session files: what was said or done, not what was sent.

Claude Code keeps each session as JSON lines under `~/.claude/projects/` (`{"type": "user"
| "assistant" | "system", "uuid", "parentUuid", "sessionId", "message"}`, and `summary`
lines naming a `leafUuid`), Codex CLI its rollouts under `~/.codex/sessions/`
(`{"timestamp", "type": "session_meta" | "response_item" | "event_msg" | "turn_context",
"payload"}`). They record the conversation as the agent stored it, one message or event a
line (a streamed reply split over several), not the requests it sent: a line of one is
counted as skipped, saying what it is and how to log the requests instead. So are the
files an Agent TARS (tarko) run writes beside its requests, read on their own rather than
in their snapshot folder (ingest.snapshot names them there): its event stream
(`{"id", "type": "user_message" | "assistant_message" | "tool_call"…, "timestamp"}`) and
a loop's tool executions (`{"toolCallId", "name", "args", "result"}`).
"""

from __future__ import annotations

from typing import Any

from ctxlint.ingest import snapshot

CLAUDE_CODE_TYPES = ("user", "assistant", "system", "summary", "attachment", "progress", "file-history-snapshot", "queue-operation")
CODEX_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
# where a log line keeps a request body: a line with one is read as one, whatever else it names
REQUEST_MEMBERS = ("messages", "request", "body", "input", "params", "contents")
# tarko's agent events (its event stream's `type`s)
TARKO_EVENTS = ("user_message", "assistant_message", "assistant_streaming_message", "assistant_thinking_message",
                "assistant_streaming_thinking_message", "tool_call", "tool_result", "agent_run_start",
                "agent_run_end", "environment_input", "plan_start", "plan_update", "plan_finish", "final_answer",
                "final_answer_streaming", "user_interruption")
NOT_SENT = "the conversation as stored, not a request sent"


def skipped_reason(obj: dict[str, Any]) -> str | None:
    """Why a line of an agent's session transcript holds no request, or None for any other line."""
    kind = obj.get("type")
    if "toolCallId" in obj and "args" in obj and ("result" in obj or "error" in obj) and not any(member in obj for member in REQUEST_MEMBERS):
        return snapshot.NOT_REQUESTS["tool-calls.jsonl"]
    if not isinstance(kind, str) or any(member in obj for member in REQUEST_MEMBERS):
        return None
    if kind in CLAUDE_CODE_TYPES and (("sessionId" in obj and "parentUuid" in obj) or (kind == "summary" and "leafUuid" in obj)):
        return f"Claude Code session transcript line: {NOT_SENT} (log requests with claude-trace or a proxy)"
    if kind in CODEX_TYPES and "payload" in obj:
        return f"Codex session rollout line: {NOT_SENT} (log requests with a proxy)"
    if kind in TARKO_EVENTS and "id" in obj and "timestamp" in obj:
        return snapshot.NOT_REQUESTS["event-stream.jsonl"]
    return None
