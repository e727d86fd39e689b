from __future__ import annotations

from typing import Iterable

from ctxlint.chat import text_of, tool_call_ids
from ctxlint.request_terms import purpose
from ctxlint.rules.base import Rule, Violation


class EmptyToolCallRetry(Rule):
    """
    ## What it does
    Warns when request N+1 repeats request N (adds nothing after it) although N's logged
    response was a valid tool-call turn with empty content: the app read "no text" as
    "failed reply" and retried instead of running the tools. A retry after an error
    status (429, 5xx) or an error body is legal and not flagged, and so is a record that
    repeats request N with the reply N got (the same response id, or, where the replies
    carry none, the same reply logged at the same time): one exchange logged twice (a log
    shipper's at-least-once delivery), not a retry; nor one whose newest
    message is not the one request N ended with (a result with the call id the model
    returned again, and new text: the tools ran). Nor is a request that
    sends the same messages for another purpose (other tools offered, another
    `tool_choice` or `response_format`): an app's router or classifier gets a structured
    answer through a forced tool call, then its agent takes the turn. Without session keys, an
    answered first request sent again reads as another conversation that opens alike (a
    test run's scenario), so a resent opening is judged in keyed logs only.

    ## Why is this bad?
    The tool calls are thrown away, the same request is paid for again, and the app may
    loop until its retry budget runs out. The model was right; the app misread it.

    ## Example
    Response N: `{"content": null, "tool_calls": [...]}, "finish_reason": "tool_calls"`;
    request N+1 equals request N.

    Use instead: treat `tool_calls` (or `finish_reason: "tool_calls"`) as a complete
    reply, run the tools and send their results.
    """

    code = "CTX017"
    name = "empty-tool-call-retry"
    severity = "warning"
    needs = ("chain", "previous_response")
    scope = "session"
    remediation = "Treat a response with tool_calls and empty content as complete: run the tools instead of retrying."

    def check(self, ctx) -> Iterable[Violation]:
        transition, previous = ctx.transition, ctx.previous
        if transition is None or not transition.is_repeat:
            return
        response = previous.record.response
        if response.failed:
            return
        if _logged_twice(previous, ctx.turn):
            return
        if purpose(previous.record.request) != purpose(ctx.request):
            return  # another call on the same messages (a router's structured answer, then the agent's turn)
        message = previous.response_message
        ids = tool_call_ids(message)
        if ids and not text_of(message.get("content")).strip():
            yield Violation(
                f"this request repeats turn {previous.number} although its response was a tool-call turn ({', '.join(ids)}) with empty content",
                key=("retry", previous.number), tool_call_id=ids[0],
                evidence={"previous_line": previous.record.line, "finish_reason": response.finish_reason},
            )


def _logged_twice(previous, turn) -> bool:
    """Whether a request that repeats the previous one is that exchange logged again (a log
    shipper's at-least-once delivery): the same reply id, or, where the replies carry none,
    the same reply logged at the same time."""
    first, again = previous.record.response, turn.record.response
    if again is None:
        return False
    if first.id is not None or again.id is not None:
        return first.id == again.id
    return previous.record.timestamp is not None and turn.record.timestamp == previous.record.timestamp \
        and turn.response_identity() == previous.response_identity()
