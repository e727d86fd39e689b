from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_made, role_of, text_of, tool_calls_of
from ctxlint.rules.base import Rule, Violation


class ToolCallLoop(Rule):
    """
    ## What it does
    Warns when the same tool is called with the same arguments N times in a row within a
    session (default 3, option `repeats`) and gets the same result each time. Arguments
    are compared as parsed JSON, so key order and spacing do not matter; any other call in
    between breaks the run, and so does a result that differs from the one before: an
    agent polling a job whose status moves on ("queued", "running", "done") is learning
    something. A call whose result is not in the history (not answered yet, or dropped)
    continues the run. Two identical calls are often a legitimate retry after a transient
    tool failure; three in a row is where retries stop explaining it, hence the default.
    Only function calls are compared: a call that names no function (a custom tool's
    freeform input, the Responses API's computer, shell and patch calls, whose actions
    are not kept as arguments) starts no run. Opt-in (select it: `--extend-select
    CTX026`): it judges what the model did with what it was sent, not what was sent (a
    result lost on the way is CTX002's or CTX016's).

    ## Why is this bad?
    The agent is stuck: the result it got did not change its next step, usually because
    the result was lost (dropped tool message, truncated output) or misread. Every repeat
    costs a full request and the session never converges.

    ## Example
    Three consecutive assistant turns each calling `get_order({"id": 42})`.

    Use instead: check that the tool result reaches the model; cap identical calls in the
    agent loop and surface the failure.
    """

    code = "CTX026"
    name = "tool-call-loop"
    severity = "warning"
    opt_in = True
    options = {"repeats": 3}
    remediation = "Check that tool results reach the model, and cap identical repeated calls in the agent loop."

    def check(self, ctx) -> Iterable[Violation]:
        repeats = ctx.option(self, "repeats")
        messages = ctx.messages
        start = ctx.unchanged(self)
        # The shared calls a run may continue from (judged already): back while they repeat,
        # up to `repeats` of them, since a longer run was reported when it reached `repeats`.
        earlier = []
        for index, call in _calls_backwards(messages, start):
            if len(earlier) == repeats or (earlier and not _repeats(messages, (index, call), earlier[-1])):
                break
            earlier.append((index, call))
        calls = earlier[::-1] + [(index, call) for index, _, call in assistant_calls(messages, start)]
        run_start, run = 0, 0
        for position, (index, call) in enumerate(calls):
            if position and _repeats(messages, calls[position - 1], (index, call)):
                run += 1
            else:
                run_start, run = position, 1
            if run == repeats and position >= len(earlier):
                name, arguments = call_made(call)
                first_index, first_call = calls[run_start]
                yield Violation(
                    f"{name} was called {repeats} times in a row with the same arguments (first at message {ctx.label(first_index)})",
                    key=(name, arguments, first_call.get("id"), first_index), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}", evidence={"tool": name, "repeats": repeats},
                )


def _repeats(messages: list[dict], before: tuple[int, dict], after: tuple[int, dict]) -> bool:
    """Whether the later call repeats the earlier one: same tool, same arguments, and no
    different result came back in between."""
    made = call_made(before[1])
    if made[0] is None or made != call_made(after[1]):
        return False  # a call of no named function: what it does is not compared
    first, second = _result_of(messages, *before), _result_of(messages, *after)
    return first is None or second is None or first == second


def _result_of(messages: list[dict], index: int, call: dict) -> str | None:
    """The text of the tool message that answers the call of assistant message `index`."""
    call_id = call.get("id")
    for later in range(index + 1, len(messages)):
        message = messages[later]
        if role_of(message) != "tool":
            return None
        if message.get("tool_call_id") == call_id:
            return text_of(message.get("content"))
    return None


def _calls_backwards(messages: list[dict], end: int):
    """(message index, call) of the calls before `end`, newest first."""
    for index in range(end - 1, -1, -1):
        if role_of(messages[index]) == "assistant":
            for call in reversed(tool_calls_of(messages[index])):
                yield index, call
