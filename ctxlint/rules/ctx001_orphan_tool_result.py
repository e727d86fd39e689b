from __future__ import annotations

from typing import Iterable

from ctxlint.chat import last_assistant_before, role_of, short_hash, text_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


class OrphanToolResult(Rule):
    """
    ## What it does
    Flags a `tool` message whose `tool_call_id` matches no `tool_calls` id of the nearest
    preceding assistant message, or that has no preceding assistant message at all.

    ## Why is this bad?
    A tool result is bound to the call that asked for it. When the assistant turn that
    carried the call was dropped or trimmed away, or the id was rewritten, the result
    answers a question the model never asked: OpenAI-compatible APIs reject the request
    ("messages with role 'tool' must be a response to a preceding message with
    'tool_calls'"), and lenient ones feed the model an output it cannot place.

    ## Example
    ```json
    {"role": "user", "content": "Weather in Paris?"}
    {"role": "tool", "tool_call_id": "call_1", "content": "18°C"}
    ```

    Use instead: keep the assistant turn that made the call, right before its results:
    ```json
    {"role": "user", "content": "Weather in Paris?"}
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": "18°C"}
    ```
    """

    code = "CTX001"
    name = "orphan-tool-result"
    severity = "error"
    remediation = "Keep the assistant message that carries the matching tool_calls entry immediately before its tool results."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        start = ctx.unchanged(self)
        caller = last_assistant_before(messages, start)  # the calls open where judging resumes
        open_ids: set[str] | None = set(tool_call_ids(messages[caller])) if caller is not None else None
        for index in range(start, len(messages)):
            message = messages[index]
            role = role_of(message)
            if role == "assistant":
                open_ids = set(tool_call_ids(message))
            elif role == "tool":
                call_id = message.get("tool_call_id")
                if not isinstance(call_id, str):
                    continue  # CTX010 reports a missing id
                if open_ids is None or call_id not in open_ids:
                    where = "there is no assistant message before it" if open_ids is None else "the nearest assistant message before it made no call with that id"
                    yield Violation(
                        f"tool result for {call_id!r} at message {ctx.label(index)} answers no call: {where}",
                        key=(call_id, short_hash(text_of(message.get("content")))),
                        message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
                    )
