from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ctxlint.chat import Quoted, comparable_text, excerpt, role_of, short_hash, text_of, tool_calls_of
from ctxlint.rules.base import Rule, Violation

# Shorter texts ("继续", "ok, thanks", "How can I help?") recur across unrelated sessions.
MIN_TEXT = 40


def content_fingerprint(message: dict) -> str | None:
    """Content identity across sessions: text and call arguments, never ids (providers reuse them)."""
    role = role_of(message)
    if role not in ("user", "assistant", "tool"):
        return None
    text = text_of(message.get("content"))
    if role == "assistant":  # replies come back with think blocks stripped or spacing changed
        text = comparable_text(text)
    calls = [(c.get("function") or {}).get("arguments") for c in tool_calls_of(message) if isinstance(c.get("function"), dict)]
    if len(text) + sum(len(a) for a in calls if isinstance(a, str)) < MIN_TEXT:
        return None
    return short_hash(role, text, [str(a) for a in calls])


class CrossSessionLeak(Rule):
    """
    ## What it does
    Flags a request of session B that carries another session's messages: content first
    seen in session A appears in B's history without being B's own new input — inserted
    into history B had already sent, or A's exchange appended before B's new message (a
    history list shared across users). Only texts of 40 characters or more are compared,
    and a session's own first request and newest input are never judged: the same
    prompt sent independently by many sessions (test suites, benchmarks) is not a leak.

    ## Why is this bad?
    One user's conversation in another user's context is a privacy incident and a
    correctness bug: the model answers B with A's constraints and data.

    ## Example
    Session A sends "My passport number is X1234567, book me to Lima". Session B's third
    request carries that message in its history.

    Use instead: keep one history object per session key; never share a mutable list
    between requests of different users.
    """

    code = "CTX023"
    name = "cross-session-leak"
    severity = "error"
    scope = "log"
    remediation = "Keep one history per session; never share a mutable message list between sessions or users."

    def start_log(self) -> tuple[dict[str, str], dict[str, set[str]]]:
        # fingerprint -> the session that sent it first; session -> every fingerprint it had
        return {}, {}

    def facts(self, ctx) -> "TurnFacts":
        """What judging the turn against the rest of the log needs, read from the turn alone
        (so that worker processes can read their sessions' turns and one process judge)."""
        messages = ctx.messages
        start = ctx.unchanged(self)  # the previous request's messages are this session's already
        newest = len(messages)
        while newest > start and role_of(messages[newest - 1]) != "assistant":
            newest -= 1
        sent = []
        for index in range(start, len(messages)):
            fingerprint = content_fingerprint(messages[index])
            if fingerprint is not None:
                sent.append((index, fingerprint, excerpt(text_of(messages[index].get("content")), 60) if index < newest else None))
        response = ctx.turn.response_message
        returned = content_fingerprint(response) if response is not None else None
        return TurnFacts(ctx.session.id, ctx.turn.number, sent, returned)

    def judge(self, memory, facts: "TurnFacts") -> Iterable[Violation]:
        first_seen, own = memory
        session = facts.session
        known = own.get(session, ())
        for index, fingerprint, quoted in facts.sent:
            if fingerprint in known:
                continue
            origin = first_seen.get(fingerprint)
            if facts.turn > 1 and quoted is not None and origin is not None and origin != session:
                yield Violation(
                    f"message {index} was first sent by session {origin}, and this session never had it",
                    key=origin, message_index=index, pointer=f"/messages/{index}",
                    evidence={"first_seen_in_session": origin, "excerpt": quoted},
                )
        for fingerprint in [f for _, f, _ in facts.sent] + ([facts.returned] if facts.returned else []):
            if not isinstance(known, set):
                known = own[session] = set()
            known.add(fingerprint)
            first_seen.setdefault(fingerprint, session)



@dataclass(slots=True)
class TurnFacts:
    session: str
    turn: int
    sent: list[tuple[int, str, Quoted | None]]  # (message index, fingerprint, excerpt if judged)
    returned: str | None  # fingerprint of the logged response
