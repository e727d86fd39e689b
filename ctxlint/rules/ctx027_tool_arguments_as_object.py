from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_function
from ctxlint.rules.base import Rule, Violation


class ToolArgumentsAsObject(Rule):
    """
    ## What it does
    Flags a tool call in the history whose `function.arguments` is a JSON object instead
    of a string holding JSON. ctxlint reads such arguments (and checks them against the
    tool's schema), so this is a warning, not an error. The calls of one message stored so
    are one finding, naming them all.

    ## Why is this bad?
    The chat-completions format defines `arguments` as a string: the model produced text,
    and the history should carry that text back. Several SDKs and gateways parse it and
    send the object instead; OpenAI-compatible servers differ on what they do with it:
    some accept it, some reject the request with a 400, some re-serialize it with other
    key order or spacing, so the model no longer sees the call it made.

    ## Example
    ```json
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}}
    ```

    Use instead: keep the string the response carried,
    `"arguments": "{\\"city\\": \\"Paris\\"}"`.
    """

    code = "CTX027"
    name = "tool-arguments-as-object"
    severity = "warning"
    recurs = True
    recurs_on = ("calls",)
    remediation = "Send function.arguments back as the JSON string the response carried, not as a parsed object."

    def check(self, ctx) -> Iterable[Violation]:
        # the calls of one message stored so are one defect: one finding, naming them all
        by_message: dict[int, list[tuple[int, dict, str]]] = {}
        for index, position, call in assistant_calls(ctx.messages, ctx.unchanged(self)):
            name, arguments = call_function(call)
            if isinstance(arguments, dict):
                by_message.setdefault(index, []).append((position, call, name))
        for index, calls in by_message.items():
            position, first, _ = calls[0]
            named = ", ".join(f"{call.get('id')!r} ({name})" for _, call, name in calls)
            yield Violation(
                f"tool call {named} carries its arguments as a JSON object, not a string" if len(calls) == 1 else
                f"tool calls {named} carry their arguments as JSON objects, not strings",
                key=(first.get("id"), calls[0][2]), covers=tuple((call.get("id"), name) for _, call, name in calls[1:]),
                message_index=index, tool_call_id=first.get("id"),
                pointer=f"/messages/{index}/tool_calls/{position}/function/arguments",
                evidence={"tool_call_ids": [call.get("id") for _, call, _ in calls]} if len(calls) > 1 else {},
            )
