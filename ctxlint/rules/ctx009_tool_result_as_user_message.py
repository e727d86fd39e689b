from __future__ import annotations

from typing import Iterable

from ctxlint.chat import role_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


def answered_as_user(messages: list[dict], index: int) -> bool:
    """The assistant tool-call message at index is followed directly by a user message, and
    no tool message answers any of its calls before the next assistant message (a result
    that comes after a user's interjection is late, not sent as a user turn: CTX002)."""
    if index + 1 >= len(messages) or role_of(messages[index + 1]) != "user":
        return False
    ids = set(tool_call_ids(messages[index]))
    for later in messages[index + 2:]:
        role = role_of(later)
        if role == "assistant":
            break
        if role == "tool" and later.get("tool_call_id") in ids:
            return False
    return True


class ToolResultAsUserMessage(Rule):
    """
    ## What it does
    Flags an assistant message with native `tool_calls` that is followed directly by a
    `user` message, with no `tool` message answering any of its calls: the tool output
    was sent as a user turn instead of a `tool` message bound by `tool_call_id`.
    (When some calls are answered and others are not, CTX002 reports the missing ones.)

    ## Why is this bad?
    The model sees its call go unanswered and a user saying something that looks like
    data. It cannot tell which call the text answers, often repeats the call, and
    strict providers reject the request because the calls have no results.
    Prompt-engineered tool calling (tool calls as text in `content`, no `tool_calls`
    field) is not judged: there, results as user messages are the protocol.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\\"q\\": \\"nvda\\"}"}}]}
    {"role": "user", "content": "Tool: search\\nResult: NVDA 181.2"}
    ```

    Use instead:
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": "NVDA 181.2"}
    ```
    """

    code = "CTX009"
    name = "tool-result-as-user-message"
    severity = "error"
    recurs = True
    recurs_on = ("tool",)
    remediation = "Send each tool's output as a tool message with the tool_call_id of the call it answers."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(max(0, ctx.unchanged(self) - 1), len(messages)):  # the last shared call may be answered now
            message = messages[index]
            if role_of(message) == "assistant" and tool_call_ids(message) and answered_as_user(messages, index):
                ids = tool_call_ids(message)
                yield Violation(
                    f"the calls of assistant message {ctx.label(index)} ({', '.join(ids)}) are answered by a user message, not tool messages",
                    key=tuple(ids), message_index=index + 1, tool_call_id=ids[0], pointer=f"/messages/{index + 1}", stands_at=index,
                    evidence={"tool_call_ids": ids} if len(ids) > 1 else {},
                )
