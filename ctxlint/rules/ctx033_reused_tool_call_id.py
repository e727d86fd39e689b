from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls
from ctxlint.profiles import unique_call_ids
from ctxlint.rules.base import Rule, Violation


class ReusedToolCallId(Rule):
    """
    ## What it does
    Flags a tool call whose id an earlier assistant message of the same request already
    gave a call, in a body whose API requires every call id of the request to be unique:
    the Anthropic Messages API (sent to Anthropic, Bedrock's InvokeModel or Vertex AI;
    the model profiles' data names such APIs, with their sources). A request whose
    successful reply is logged is left alone, and so is a call an earlier request of the
    session sent to the same model and got a successful reply to (every request since
    sending it too): the host that answered took it. In a chat-completions body an id
    reused in a later turn is legal (CTX011 flags ids repeated inside one message, in
    any API). An app that gives every turn's calls the same ids is reported once, where
    it starts.

    ## Why is this bad?
    The API answers 400 ("messages.43.content.2: `tool_use` ids must be unique"), and since
    the history keeps both calls, every later request of the session fails the same way.
    It happens when an app rebuilds ids with a counter that restarts each turn, or moves a
    conversation from a backend that reuses ids (`call_0` each turn) to Claude.

    ## Example
    ```json
    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "search", "input": {"q": "Lyon"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "…"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "search", "input": {"q": "Nice"}}]}
    ```

    Use instead: keep the ids the model returned, or give each call of the conversation
    its own (`toolu_…`), rewriting its result's `tool_use_id` with it.
    """

    code = "CTX033"
    name = "reused-tool-call-id"
    severity = "error"
    recurs = True
    recurs_on = ("calls",)
    remediation = "Give every tool call of a conversation its own id (keep the ids the model returned), and pair its result with that id."

    def check(self, ctx) -> Iterable[Violation]:
        unique = unique_call_ids(ctx.turn.record)
        if unique is None:
            return
        used: dict[str, int] = {}  # call id -> the assistant message that gave it first
        # every message, those reported before too: the error each later request gets is theirs (CTX022)
        for index, position, call in assistant_calls(ctx.messages):
            call_id = call.get("id")
            if not isinstance(call_id, str):
                continue
            first = used.setdefault(call_id, index)
            # an id repeated inside one message is CTX011's; one a host took before stands (ctx.taken_before)
            if first != index and index >= ctx.taken_before:
                yield Violation(
                    f"tool call {call_id!r} of assistant message {ctx.label(index)} has the id a call of assistant message "
                    f"{ctx.label(first)} had: the {unique['api']} refuses it ({unique['error']!r})",
                    key=(ctx.turn.identities[index], call_id), message_index=index, tool_call_id=call_id,
                    pointer=f"/messages/{index}/tool_calls/{position}",
                    evidence={"first_used_at": first, "api": unique["api"], "provider_error": unique["error"], "sources": unique["sources"]},
                )
