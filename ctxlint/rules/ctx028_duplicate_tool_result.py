from __future__ import annotations

from collections import Counter
from typing import Iterable

from ctxlint.chat import last_assistant_before, role_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


class DuplicateToolResult(Rule):
    """
    ## What it does
    Flags a tool call that two `tool` messages answer: between an assistant message and
    the next one, a second `tool` message with a `tool_call_id` already answered. The same
    id reused by a call of a later assistant turn, answered once there, is not a
    duplicate; neither are the results of two calls that share an id (CTX011 reports
    those).

    ## Why is this bad?
    A call has exactly one result. An error handler and the normal path both appended
    one, or a retry replayed the tool step into the history. OpenAI answers HTTP 400
    ("Duplicate value for 'tool_call_id'"), Anthropic "each tool_use must have a single
    result", Mistral "Not the same number of function calls and responses"; lenient hosts
    show the model two outputs for one call, often different ones.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": "Error: timeout"}
    {"role": "tool", "tool_call_id": "call_1", "content": "18°C"}
    ```

    Use instead: record one result per call: the final one, or the error.
    """

    code = "CTX028"
    name = "duplicate-tool-result"
    severity = "error"
    recurs = True
    recurs_on = ("tool",)
    remediation = "Append exactly one tool message per tool call id: replace a failed attempt's result instead of adding another."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        start = ctx.unchanged(self)
        caller = last_assistant_before(messages, start)
        begin = caller if caller is not None else start  # the open call block is read from its assistant message
        calls: Counter = Counter()
        answered: dict[str, int] = {}
        for index in range(begin, len(messages)):
            message = messages[index]
            role = role_of(message)
            if role == "assistant":
                caller, calls, answered = index, Counter(tool_call_ids(message)), {}
                continue
            if role != "tool" or caller is None:
                continue
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or calls[call_id] != 1:
                continue  # no such call (CTX001), or calls that share an id (CTX011)
            first = answered.setdefault(call_id, index)
            if first != index and index >= start:
                yield Violation(
                    f"tool call {call_id!r} of assistant message {ctx.label(caller)} is answered twice, "
                    + (f"by messages {ctx.label(first)} and {ctx.label(index)}" if ctx.label(first) != ctx.label(index)
                       else f"both in message {ctx.label(index)}"),  # one content of another API can hold both
                    key=(ctx.turn.identities[caller], call_id), message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
                    evidence={"first_result_index": first, "same_content": message.get("content") == messages[first].get("content")},
                )
