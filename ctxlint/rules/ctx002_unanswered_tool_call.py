from __future__ import annotations

from typing import Iterable

from ctxlint.chat import resume_at_last_calls, role_of, tool_calls_of
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx009_tool_result_as_user_message import answered_as_user, answering_run


class UnansweredToolCall(Rule):
    """
    ## What it does
    Flags an assistant `tool_calls` entry whose id no `tool` message answers before the
    next non-tool message, or before the end of the request. Where each call left so has a
    result all the same, one that names another id (CTX001) or none (CTX010), the id was
    rewritten or left out: one defect, reported there. A result sent after other content
    of the message that carries it (text before the `tool_result` blocks of an Anthropic
    user message) does not follow the call either: the API refuses it, and the finding
    says so.

    ## Why is this bad?
    Every call the model made must get its result, in the tool messages that directly
    follow the call. A missing result usually means the app dropped it, ran only the
    first of several parallel calls, or appended a user message before the results came
    in. Providers reject the request ("An assistant message with 'tool_calls' must be
    followed by tool messages responding to each 'tool_call_id'"), or the model
    re-issues the call and the agent loops.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{}"}}, {"id": "call_b", "type": "function", "function": {"name": "mul", "arguments": "{}"}}]}
    {"role": "tool", "tool_call_id": "call_a", "content": "3"}
    {"role": "user", "content": "and?"}
    ```

    Use instead: answer every call, then continue:
    ```json
    {"role": "tool", "tool_call_id": "call_a", "content": "3"}
    {"role": "tool", "tool_call_id": "call_b", "content": "2"}
    ```
    """

    code = "CTX002"
    name = "unanswered-tool-call"
    severity = "error"
    recurs = True
    recurs_on = ("calls",)
    remediation = "Send one tool message per tool_call_id right after the assistant message that made the calls."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(resume_at_last_calls(messages, ctx.unchanged(self)), len(messages)):
            message = messages[index]
            if role_of(message) != "assistant":
                continue
            run = answering_run(messages, index)  # its tool messages, and results sent as user messages among them (CTX009's)
            answered, end = {call_id for _, call_id in run}, index + 1 + len(run)
            if not answered and answered_as_user(messages, index):
                continue  # every result came back as a user message: CTX009 reports it once
            stop = "the end of the request" if end == len(messages) else f"message {ctx.label(end)} ({role_of(messages[end])})"
            behind = None  # read only where a call goes unanswered
            for position, call in enumerate(tool_calls_of(message)):
                call_id = call.get("id")
                if isinstance(call_id, str) and call_id not in answered:
                    behind = _results_behind(ctx, end) if behind is None else behind
                    where = (f"is answered only after other content of message {ctx.label(end)}: tool results must open the message that"
                             " answers the calls (Anthropic: tool_result blocks first, text after them)") if call_id in behind else (
                        f"gets no tool result before {stop}")
                    yield Violation(
                        f"tool call {call_id!r} of the assistant message {ctx.label(index)} {where}",
                        key=call_id, message_index=index, tool_call_id=call_id,
                        pointer=f"/messages/{index}/tool_calls/{position}",
                    )


def _results_behind(ctx, end: int) -> set[str]:
    """The call ids answered by tool results that the sent body put in one message with
    message `end` but after it (a text block before the tool_result blocks of one
    Anthropic user message): the result is there, in a place the API refuses."""
    messages = ctx.messages
    if end >= len(messages):
        return set()
    place = ctx.label(end)
    return {message.get("tool_call_id") for later, message in enumerate(messages[end + 1:], end + 1)
            if role_of(message) == "tool" and ctx.label(later) == place}
