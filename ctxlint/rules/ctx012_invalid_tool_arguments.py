from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_function, key_text, parsed_arguments
from ctxlint.rules.base import Rule, Violation


class InvalidToolArguments(Rule):
    """
    ## What it does
    Flags a tool call whose `arguments` is not a complete JSON object: a fragment of a
    streamed call executed before the stream finished, a truncated string, a bare value,
    the object encoded twice (a JSON string holding the JSON string the model returned).
    An empty string is read as `{}`: several models (Claude on Bedrock, some
    OpenAI-compatible hosts) call a tool that takes no parameters that way. When the tool's
    schema requires parameters, CTX013 reports the missing ones. Calls of custom tools
    (`"type": "custom"`, whose input is free text) are not judged.

    ## Why is this bad?
    The tool ran (or failed) on arguments the model never finished writing, and the
    history now shows the model a call it did not make. Providers that validate the
    history reject the request; others let the model build on a broken call.

    ## Example
    ```json
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\\"city\\": \\"Par"}}
    ```

    Use instead: accumulate the streamed argument fragments per tool-call index until
    `finish_reason`, then parse and execute.
    """

    code = "CTX012"
    name = "invalid-tool-arguments"
    severity = "error"
    remediation = "Execute a tool call only after its streamed arguments are complete, and send them back as the one JSON string the model returned, encoded once."

    def check(self, ctx) -> Iterable[Violation]:
        for index, position, call in assistant_calls(ctx.messages, ctx.unchanged(self)):
            if call.get("type") not in (None, "function"):
                continue  # a custom (freeform) tool's input is plain text, not JSON arguments
            name, arguments = call_function(call)
            _, problem = parsed_arguments(arguments)
            if problem:
                yield Violation(
                    f"tool call {call.get('id')!r} ({name}): {problem}",
                    key=(call.get("id"), name, key_text(arguments)[:200]), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}/tool_calls/{position}/function/arguments",
                )
