from __future__ import annotations

from typing import Iterable

from ctxlint.chat import UNCALLED_SERVER_RESULTS, last_assistant_before, role_of, short_hash, text_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx009_tool_result_as_user_message import answered_under_other_ids


class OrphanToolResult(Rule):
    """
    ## What it does
    Flags a `tool` message whose `tool_call_id` matches no `tool_calls` id of the nearest
    preceding assistant message, or that has no preceding assistant message at all.
    The results after one assistant message that answer none of its calls are one defect
    (the turn that made their calls lost), one finding naming them all. Results a history
    opens with (no assistant message before them) are one defect per session: a
    keep-last-N window that starts inside a tool exchange leaves such results at its head,
    again and again as it slides, and they are reported where that starts.
    A result reported once is not reported again when the app later clears or shortens
    its text (old tool output replaced by a placeholder to save context). The result of a
    tool the provider runs itself (Anthropic's `advisor_tool_result`,
    `web_search_tool_result`, `mcp_tool_result`, …) is flagged when the assistant's turn
    (its consecutive assistant messages, which the API joins) holds no `server_tool_use`
    or `mcp_tool_use` with its id before it; a call with no result is legal (a paused turn
    is sent back so). Where CTX016 finds the call turn lost against the reply the previous
    request logged, that is the defect, reported once as CTX016's.

    ## Why is this bad?
    A tool result is bound to the call that asked for it. When the assistant turn that
    carried the call was dropped or trimmed away, or the id was rewritten, the result
    answers a question the model never asked: OpenAI-compatible APIs reject the request
    ("messages with role 'tool' must be a response to a preceding message with
    'tool_calls'"; Anthropic: "Each `advisor_tool_result` block must have a corresponding
    `server_tool_use` block before it"), and lenient ones feed the model an output it
    cannot place.

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
    recurs = True
    recurs_on = ("tool",)
    remediation = "Keep the assistant message that carries the matching tool_calls entry immediately before its tool results."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        start = ctx.unchanged(self)
        caller = last_assistant_before(messages, start)  # the calls open where judging resumes
        open_ids: set[str] | None = set(tool_call_ids(messages[caller])) if caller is not None else None
        # results that answer no call, by the assistant message before them (None: before any,
        # the history opening with them): each group one defect, its calls' turn lost
        orphans: dict[int | None, list[tuple[int, str, tuple]]] = {}
        for index in range(start, len(messages)):
            message = messages[index]
            role = role_of(message)
            if role == "assistant":
                caller, open_ids = index, set(tool_call_ids(message))
                yield from self._uncalled_server_results(ctx, index, message)
            elif role == "tool":
                call_id = message.get("tool_call_id")
                if not isinstance(call_id, str):
                    continue  # CTX010 reports a missing id
                if open_ids is None or call_id not in open_ids:
                    orphans.setdefault(caller if open_ids is not None else None, []).append(
                        (index, call_id, (call_id, short_hash(text_of(message.get("content"))))))
        for caller, group in orphans.items():
            index, call_id, result = group[0]
            ids, labels = (", ".join(dict.fromkeys(texts)) for texts in zip(*((repr(c), ctx.label(i)) for i, c, _ in group)))
            results = (f"tool result for {call_id!r} at message {ctx.label(index)} answers" if len(group) == 1 else
                       f"{len(group)} tool results ({ids}) at {'messages' if ',' in labels else 'message'} {labels} answer")
            # the same results, their text cleared or shortened later
            covers = tuple(key for _, call_id, result in group for key in (result, ("result", call_id)))
            evidence = {"tool_call_ids": [c for _, c, _ in group]} if len(group) > 1 else {}
            if caller is None:
                yield Violation(
                    f"{results} no call: there is no assistant message before {'it' if len(group) == 1 else 'them'}",
                    # a result reported before (its call dropped, then the history cut up to it) is this defect too
                    key=("opens the history",), covers=covers, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
                    evidence=evidence,
                )
                continue
            yield Violation(
                f"{results} no call: the nearest assistant message before {'it' if len(group) == 1 else 'them'} made no call with "
                f"{'that id' if len(group) == 1 else 'those ids'}",
                key=result, covers=covers[1:], message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}", evidence=evidence,
                # the calls they stand for, left unanswered: their ids rewritten, one defect
                shows_as=(("CTX002", caller),) if answered_under_other_ids(messages, caller) else (),
            )

    @staticmethod
    def _uncalled_server_results(ctx, index: int, message: dict) -> Iterable[Violation]:
        """A result of a call the provider ran (Anthropic's server tools) whose call the
        assistant's turn does not hold before it: the app stored the turn's blocks apart."""
        for result in message.get(UNCALLED_SERVER_RESULTS, ()):
            call_id, kind = result["tool_use_id"], result["type"]
            yield Violation(
                f"{kind} block {result['block']} of assistant message {ctx.label(index)} answers server tool call {call_id!r}, "
                f"but the assistant's turn holds no server_tool_use with that id before it: store the turn's content blocks whole, in order",
                key=("server result", call_id), message_index=index, tool_call_id=call_id,
                pointer=f"/messages/{index}/content/{result['block']}", evidence={"block_type": kind},
            )
