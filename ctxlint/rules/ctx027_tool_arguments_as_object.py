from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_function
from ctxlint.rules.base import Rule, Violation


class ToolArgumentsAsObject(Rule):
    """
    ## What it does
    Flags a tool call in the history whose `function.arguments` is a JSON object instead
    of a string holding JSON. ctxlint reads such arguments (and checks them against the
    tool's schema), so this is a warning, not an error.

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
        for index, position, call in assistant_calls(ctx.messages, ctx.unchanged(self)):
            name, arguments = call_function(call)
            if isinstance(arguments, dict):
                yield Violation(
                    f"tool call {call.get('id')!r} ({name}) carries its arguments as a JSON object, not a string",
                    key=(call.get("id"), name), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}/tool_calls/{position}/function/arguments",
                )
