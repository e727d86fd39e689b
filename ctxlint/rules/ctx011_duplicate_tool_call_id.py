from __future__ import annotations

from collections import Counter
from typing import Iterable

from ctxlint.chat import role_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


class DuplicateToolCallId(Rule):
    """
    ## What it does
    Flags two tool calls of one assistant message that share an id.

    ## Why is this bad?
    Results are paired with calls by id. When an app hard-codes the id (`call_demo`) or
    rebuilds calls with a counter that restarts, the second result overwrites the first
    and the model reads one answer for two questions. An id reused in a later turn is
    legal: pairing is per turn, and providers reuse ids themselves (recorded gpt-4o
    traffic does), so only ids repeated inside one message are flagged (in a body of an
    API that wants every id of the request unique, Anthropic's, CTX033 flags the reuse).

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_demo", "type": "function", "function": {"name": "add", "arguments": "{}"}}, {"id": "call_demo", "type": "function", "function": {"name": "mul", "arguments": "{}"}}]}
    ```

    Use instead: keep the ids the model returned; they are unique within the turn.
    """

    code = "CTX011"
    name = "duplicate-tool-call-id"
    severity = "error"
    remediation = "Keep the tool call ids the model returned; never hard-code or regenerate them."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(ctx.unchanged(self), len(messages)):
            message = messages[index]
            if role_of(message) != "assistant":
                continue
            for call_id, count in Counter(tool_call_ids(message)).items():
                if count > 1:
                    yield Violation(
                        f"assistant message {ctx.label(index)} has {count} tool calls with the id {call_id!r}",
                        key=ctx.turn.identities[index], message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}/tool_calls",
                    )
