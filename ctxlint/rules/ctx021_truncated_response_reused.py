from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import role_of, text_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


class TruncatedResponseReused(Rule):
    """
    ## What it does
    Warns when a response cut off by `finish_reason: "length"` is carried into the next
    request of the session as if it were complete. Carrying it to have it finished is not
    flagged: the reply as the request's last message (a prefix the model continues), or
    followed only by a short user message that asks to continue ("continue", "go on",
    "继续", "続けて"…).

    ## Why is this bad?
    The reply stopped mid-sentence or mid-JSON because `max_tokens` ran out. Replayed as
    history, the model takes the fragment as its finished answer (or a half-written tool
    call as made), and the user's request is silently half-done.

    ## Example
    Response N ends `"finish_reason": "length"` with `"content": "The three options are: 1."`;
    request N+1 carries that content and a new user message.

    Use instead: continue the generation (raise `max_tokens`, ask the model to continue),
    or drop the fragment, before moving on.
    """

    code = "CTX021"
    name = "truncated-response-reused"
    severity = "warning"
    needs = ("chain", "previous_response")
    scope = "session"
    remediation = "Do not store a reply that ended with finish_reason 'length' as complete: continue it or regenerate."

    def check(self, ctx) -> Iterable[Violation]:
        transition, previous = ctx.transition, ctx.previous
        if transition is None or previous.record.response is None or previous.record.response.finish_reason != "length":
            return
        position = transition.response_position
        if position is not None and not _continued(ctx.messages, position):
            ids = tool_call_ids(previous.response_message)
            yield Violation(
                f"message {ctx.label(position)} is turn {previous.number}'s reply, which was cut off (finish_reason 'length')",
                key=("truncated", previous.number), message_index=position, tool_call_id=ids[0] if ids else None,
                pointer=f"/messages/{position}", evidence={"returned_in_line": previous.record.line},
            )


# A short request to finish the cut-off reply, in the languages the profiles cover.
_CONTINUE = re.compile(r"^\W*(?:(?:please\s+)?(?:continue|go on|keep going|carry on|resume|finish (?:it|that|the answer))\b"
                       r"|继续|接着|繼續|続けて|続き|계속)", re.IGNORECASE)


def _continued(messages: list, position: int) -> bool:
    """Whether the request carries the cut-off reply to have it continued."""
    after = messages[position + 1:]
    if not after:
        return True  # the reply is the prefix of the next generation
    if len(after) != 1 or role_of(after[0]) != "user":
        return False
    text = text_of(after[0].get("content")).strip()
    return len(text) <= 80 and _CONTINUE.match(text) is not None
