from __future__ import annotations

from typing import Iterable

from ctxlint.chat import tool_call_ids
from ctxlint.rules.base import Rule, Violation


class TruncatedResponseReused(Rule):
    """
    ## What it does
    Warns when a response cut off by `finish_reason: "length"` is carried into the next
    request of the session as if it were complete.

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
        if position is not None:
            ids = tool_call_ids(previous.response_message)
            yield Violation(
                f"message {position} is turn {previous.number}'s reply, which was cut off (finish_reason 'length')",
                key=("truncated", previous.number), message_index=position, tool_call_id=ids[0] if ids else None,
                pointer=f"/messages/{position}", evidence={"returned_in_line": previous.record.line},
            )
