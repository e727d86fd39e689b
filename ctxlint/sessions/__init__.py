"""Sessions: group records into conversations, order them, relate consecutive requests."""

from ctxlint.sessions.grouping import build_sessions
from ctxlint.sessions.model import Session, Turn

__all__ = ["Session", "Turn", "build_sessions"]
