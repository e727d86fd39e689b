from __future__ import annotations

from typing import Iterable

from ctxlint.chat import last_assistant_before, role_of, short_hash, text_of, tool_calls_of
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx009_tool_result_as_user_message import answered_under_other_ids


class MissingToolCallId(Rule):
    """
    ## What it does
    Flags a `tool` message that has no `tool_call_id` (absent, null or empty). When the
    call it answers has none either (a model server that gives its calls no ids, passed
    back as it came), the finding says so: the app must give the call an id.

    ## Why is this bad?
    The id is the only thing that binds a result to its call. Without it the provider
    rejects the message, or, with parallel calls, the model cannot tell which result
    belongs to which call and mixes them up.

    ## Example
    ```json
    {"role": "tool", "content": "22C sunny"}
    ```

    Use instead:
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": "22C sunny"}
    ```
    """

    code = "CTX010"
    name = "missing-tool-call-id"
    severity = "error"
    recurs = True
    recurs_on = ("tool",)
    remediation = "Copy the id of the tool call into the tool message's tool_call_id."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(ctx.unchanged(self), len(messages)):
            message = messages[index]
            if role_of(message) == "tool" and not message.get("tool_call_id"):
                caller = last_assistant_before(messages, index)
                unnamed = caller is not None and any(not call.get("id") for call in tool_calls_of(messages[caller]))
                yield Violation(
                    f"tool message {ctx.label(index)} has no tool_call_id" + (
                        f", nor has the call of assistant message {ctx.label(caller)} it answers: give each call an id "
                        "(one of the app's own where the reply gave none) and its result the same" if unnamed else ""),
                    key=short_hash(text_of(message.get("content")), str(ctx.turn.identities[index - 1] if index else "")),
                    message_index=index, pointer=f"/messages/{index}",
                    # the call it answers, left unanswered for want of the id: one defect
                    shows_as=(("CTX002", caller),) if caller is not None and answered_under_other_ids(messages, caller) else (),
                )
