"""Coding agents' own session transcripts: what was said, not what was sent.

Claude Code keeps each session as JSON lines under `~/.claude/projects/` (`{"type": "user"
| "assistant" | "system", "uuid", "parentUuid", "sessionId", "message"}`, and `summary`
lines naming a `leafUuid`), Codex CLI its rollouts under `~/.codex/sessions/`
(`{"timestamp", "type": "session_meta" | "response_item" | "event_msg" | "turn_context",
"payload"}`). They record the conversation as the agent stored it, one message or event a
line (a streamed reply split over several), not the requests it sent: a line of one is
counted as skipped, saying what it is and how to log the requests instead.
"""

from __future__ import annotations

from typing import Any

CLAUDE_CODE_TYPES = ("user", "assistant", "system", "summary", "attachment", "progress", "file-history-snapshot", "queue-operation")
CODEX_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
# where a log line keeps a request body: a line with one is read as one, whatever else it names
REQUEST_MEMBERS = ("messages", "request", "body", "input", "params", "contents")
NOT_SENT = "the conversation as stored, not a request sent"


def skipped_reason(obj: dict[str, Any]) -> str | None:
    """Why a line of an agent's session transcript holds no request, or None for any other line."""
    kind = obj.get("type")
    if not isinstance(kind, str) or any(member in obj for member in REQUEST_MEMBERS):
        return None
    if kind in CLAUDE_CODE_TYPES and (("sessionId" in obj and "parentUuid" in obj) or (kind == "summary" and "leafUuid" in obj)):
        return f"Claude Code session transcript line: {NOT_SENT} (log requests with claude-trace or a proxy)"
    if kind in CODEX_TYPES and "payload" in obj:
        return f"Codex session rollout line: {NOT_SENT} (log requests with a proxy)"
    return None
