from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from ctxlint.chat import excerpt, role_of, text_of
from ctxlint.rules.base import Rule, Violation

# What agents legitimately rewrite inside an unchanged prompt: clocks, dates and ids in any
# message; in the system prompt also counters ("step 3 of 10", "4 tools loaded").
_CLOCKS_AND_IDS = (
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}/\d{1,2}/\d{2,4},?"
    r"|\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_VOLATILE = {"user": re.compile(_CLOCKS_AND_IDS), "system": re.compile(_CLOCKS_AND_IDS + r"|\d+(?:[.,]\d+)*")}
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def constraint_lines(text: str, role: str) -> frozenset[str]:
    """The message's lines with volatile values masked and whitespace folded."""
    volatile = _VOLATILE[role]
    lines = set()
    for line in text.splitlines():
        folded = _SPACE.sub(" ", volatile.sub("#", line)).strip()
        if folded:
            lines.add(folded)
    return frozenset(lines)


class LostFirstTurnConstraint(Rule):
    """
    ## What it does
    Flags a request that no longer carries what the session's first system message or
    first user message said, when both were present in the session's first request.
    A message counts as kept when every line of it is still there, in a message of the
    same role, after masking what agents legitimately refresh every turn (times, dates,
    counters, ids): a `Current time: …` line rewritten each turn is not a loss, and
    neither is a prompt that only grew.

    ## Why is this bad?
    The first system and user messages hold the user's constraints: the persona, the
    budget, "never book red-eye flights". Keep-last-N trimming and sliding windows cut
    them first, because they are oldest. The model then forgets the constraint at
    exactly this turn, and no error is raised anywhere.

    ## Example
    Turn 1 sends `[system: "Answer in French.", user: "Plan a trip, budget 500€"]`; turn 9
    sends only the last six messages.

    Use instead: trim from the middle; always keep the first system message and the first
    user message (or a summary that restates their constraints, as a system message).
    """

    code = "CTX008"
    name = "lost-first-turn-constraint"
    severity = "error"
    needs = ("chain",)
    scope = "session"
    remediation = "Trim history from the middle: always resend the first system message and the first user message."

    def check(self, ctx) -> Iterable[Violation]:
        if ctx.turn.number == 1:
            return
        for role in ("system", "user"):
            found = ctx.session.opening.get(role)
            if found is None:
                continue
            index, original = found
            if index < len(ctx.messages) and ctx.messages[index] is original:
                continue  # still sent where it was: the common case, decided without reading
            original_text = text_of(original.get("content"))
            sent = [text_of(m.get("content")) for m in ctx.messages if role_of(m) == role]
            if original_text in sent:
                continue  # sent verbatim: the common case, decided without masking
            wanted = constraint_lines(original_text, role)
            if not wanted:
                continue
            present: set[str] = set()
            for text in sent:
                present |= constraint_lines(text, role)
            lost = wanted - present
            if lost:
                yield Violation(
                    f"the session's first {role} message (turn 1, message {index}) is no longer sent"
                    if len(lost) == len(wanted) else
                    f"the session's first {role} message (turn 1, message {index}) lost {len(lost)} of its {len(wanted)} lines",
                    key=role,
                    evidence={"first_request_line": ctx.session.first_line, "first_turn_index": index, "lost_line": excerpt(sorted(lost)[0], 80)},
                )
