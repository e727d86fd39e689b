from __future__ import annotations

from typing import Iterable

from ctxlint.chat import message_identity, role_of
from ctxlint.profiles import refused_empty
from ctxlint.rules.base import Rule, Violation


class EmptyToolCalls(Rule):
    """
    ## What it does
    Flags an assistant message of the history whose `tool_calls` is an empty list, in a
    chat-completions request to a model whose maker's API refuses that: OpenAI's models
    and the models of DeepSeek's API (`deepseek-chat`, `deepseek-reasoner`, DeepSeek V4;
    the model profiles' data names them, with its sources). The request must name the
    model as that API does (no `org/` prefix or `:tag`: other hosts serve it under such
    names, and some take the list; DeepSeek's open models other hosts serve as
    `deepseek-v3…` are not judged). A request whose successful reply is logged is left
    alone, and so is a message an earlier request of the session sent to the same model
    and got a successful reply to (every request since sending it too): the host that
    answered took it. An app that stores every reply so is reported once, where it
    starts; a message that made no call and carries no `tool_calls` member, or
    `tool_calls: null`, is legal.

    ## Why is this bad?
    The API answers the request with a 400 ("Invalid 'messages[2].tool_calls': empty
    array. Expected an array with minimum length 1, but got an empty array instead."),
    and since the message stays in the history, every later request of the session fails
    the same way. The list comes from an SDK or app that fills in `tool_calls: []` when a
    reply made no call (the OpenAI Node SDK's parser did, until it was fixed).

    ## Example
    ```json
    {"role": "assistant", "content": "Your order ships on Monday.", "tool_calls": []}
    ```

    Use instead: leave the member out of a reply that made no call:
    ```json
    {"role": "assistant", "content": "Your order ships on Monday."}
    ```
    """

    code = "CTX030"
    name = "empty-tool-calls"
    severity = "error"
    recurs = True
    recurs_on = ("assistant",)
    remediation = "Leave `tool_calls` out of an assistant message that made no call, rather than sending an empty list."

    def check(self, ctx) -> Iterable[Violation]:
        refusal = refused_empty(ctx.turn.record, "tool_calls")
        if refusal is None:
            return
        messages = ctx.messages
        # every message, those reported before too: the error each later request gets is theirs
        # (CTX022); not those a host took before (ctx.taken_before)
        for index in range(ctx.taken_before, len(messages)):
            message = messages[index]
            if role_of(message) == "assistant" and message.get("tool_calls") == []:
                yield Violation(
                    f"assistant message {ctx.label(index)} carries an empty `tool_calls` list: {refusal['by']} refuses it "
                    f"({refusal['error']!r}), so every later request of the session fails too",
                    key=message_identity(message), message_index=index, pointer=f"/messages/{index}/tool_calls",
                    evidence={"model": ctx.turn.record.model, "provider_error": refusal["error"], "sources": refusal["sources"]},
                )
