"""The cost picture of a log: per model and per session, requests, prompt tokens, how much of
each prompt re-sends history, and how much of it is tool output."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ctxlint.chat import message_identity, role_of
from ctxlint.engine import SessionSummary
from ctxlint.sessions.model import Session
from ctxlint.tokens.counter import TokenCounter


def percentile(values: list[int], share: float) -> int:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = math.ceil(len(ordered) * share)
    return ordered[min(len(ordered), max(rank, 1)) - 1]


@dataclass(slots=True)
class Usage:
    name: str
    sessions: int = 0
    requests: int = 0
    turns: int = 0  # requests that bring a new user message
    prompt_tokens: list[int] = field(default_factory=list)
    peak_ratio: float | None = None
    counted_tokens: int = 0  # by ctxlint's counter, which also splits the prompt below
    resent_tokens: int = 0
    tool_tokens: int = 0
    counters: set[str] = field(default_factory=set)

    def add(self, other: "Usage") -> None:
        self.sessions += other.sessions
        self.requests += other.requests
        self.turns += other.turns
        self.prompt_tokens += other.prompt_tokens
        if other.peak_ratio is not None:
            self.peak_ratio = max(self.peak_ratio or 0.0, other.peak_ratio)
        self.counted_tokens += other.counted_tokens
        self.resent_tokens += other.resent_tokens
        self.tool_tokens += other.tool_tokens
        self.counters |= other.counters

    def row(self) -> dict:
        share = (lambda part: round(part / self.counted_tokens, 4) if self.counted_tokens else None)
        return {
            "name": self.name, "sessions": self.sessions, "requests": self.requests, "turns": self.turns,
            "prompt_tokens": {"p50": percentile(self.prompt_tokens, 0.5), "p95": percentile(self.prompt_tokens, 0.95),
                              "max": max(self.prompt_tokens, default=0), "total": sum(self.prompt_tokens)},
            "peak_window_ratio": round(self.peak_ratio, 4) if self.peak_ratio is not None else None,
            "resent_history_tokens": self.resent_tokens, "resent_share": share(self.resent_tokens),
            "tool_result_share": share(self.tool_tokens), "counters": sorted(self.counters),
        }


def session_usage(session: Session, summary: SessionSummary, counter: TokenCounter) -> Usage:
    usage = Usage(session.id, sessions=1)
    seen: set[tuple] = set()
    for turn, turn_metrics in zip(session.turns, summary.turns):
        usage.requests += 1
        usage.prompt_tokens.append(turn_metrics.tokens)
        usage.counters.add(turn_metrics.counter)
        if turn_metrics.ratio is not None:
            usage.peak_ratio = max(usage.peak_ratio or 0.0, turn_metrics.ratio)
        new_user = False
        for message, identity in zip(turn.messages, turn.identities):
            tokens = counter.count_message(message, turn.record.model).tokens
            usage.counted_tokens += tokens
            if identity in seen:
                usage.resent_tokens += tokens
            else:
                new_user |= role_of(message) == "user"
            if role_of(message) == "tool":
                usage.tool_tokens += tokens
            seen.add(identity)
        if turn.response_message is not None:
            seen.add(message_identity(turn.response_message))
        usage.turns += new_user
    return usage


def log_usage(sessions: list[Session], summaries: list[SessionSummary], counter: TokenCounter) -> tuple[list[Usage], list[Usage]]:
    """(per model, per session, in the summaries' order); a session counts under the model
    of its first request. Sessions and summaries are paired by id: a log whose records come
    out of time order (an export, newest first) lists its sessions in another order than
    its checks."""
    held = {session.id: session for session in sessions}
    summaries = [summary for summary in summaries if summary.id in held]
    by_session = [session_usage(held[summary.id], summary, counter) for summary in summaries]
    by_model: dict[str, Usage] = {}
    for summary, usage in zip(summaries, by_session):
        model = summary.turns[0].model or "unknown model"
        by_model.setdefault(model, Usage(model)).add(usage)
    return sorted(by_model.values(), key=lambda u: u.name), by_session
