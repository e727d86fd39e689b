from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import assistant_calls
from ctxlint.profiles import call_id_format
from ctxlint.rules.base import Rule, Violation


class MalformedToolCallId(Rule):
    """
    ## What it does
    Flags a tool call of the history whose id is not in the form the model's API takes, in a
    chat-completions request: Mistral's API takes 9 letters or digits alone
    (`mistral-large-…`, `devstral-…`, `codestral-…` and its other models as its API names
    them), so an id such as `call_PTLP8xhu3uwZk4l3nlnrrJha`, a UUID or `turn1_0` is refused;
    OpenAI's takes at most 40 characters (`gpt-4o`, `gpt-5`, the o-series), so a Responses
    item id (`fc_…`, 53 characters) or a gateway's `portkey-<uuid>` is refused; and in a
    Responses API body, OpenAI's models take a `call_id` of at most 64 characters, so a
    gateway's two ids joined (`call_…|fc_…`) are refused. The model profiles' data holds
    each API's form, with its sources. The request must name the model as that API does (no
    `org/` prefix, nor a `:tag` in a chat-completions body: other hosts serve the open
    models under such names, most with no such check). A request whose successful reply is
    logged is left alone, and so is a call an earlier request of the session sent to the
    same model and got a successful reply to (every request since sending it too): the host
    that answered took it. An app that gives every call such an id is reported once, where
    it starts.

    ## Why is this bad?
    The API answers 400 ("Tool call id was call_0fypS1hVX but must be a-z, A-Z, 0-9, with a
    length of 9.", OpenAI's "Invalid 'messages[10].tool_calls[0].id': string too long.
    Expected a string with maximum length 40", the Responses API's "Invalid
    'input[3].call_id': string too long. Expected a string with maximum length 64"), and
    since the history keeps the call, every later request of the session fails the same way:
    the first tool call works, the next request does not. It happens when an app makes up
    its own ids, or a conversation moves to a model whose API takes another form of id than
    the provider that made the calls.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_PTLP8xhu3uwZk4l3nlnrrJha", "type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}}]}
    ```

    Use instead: keep the ids the model returned (`D681PevKs`), or map another provider's
    ids to the form the API takes (for Mistral, 9 letters or digits), in the call and in
    its tool message alike.
    """

    code = "CTX034"
    name = "malformed-tool-call-id"
    severity = "error"
    recurs = True
    recurs_on = ("calls",)
    remediation = "Keep the tool call ids the model returned; map ids made elsewhere to the form the model's API takes, in the call and its result alike."

    def check(self, ctx) -> Iterable[Violation]:
        required = call_id_format(ctx.turn.record)
        if required is None:
            return
        pattern = re.compile(required["pattern"])
        # every message, those reported before too: the error each later request gets is theirs
        # (CTX022); not those a host took before (ctx.taken_before)
        for index, position, call in assistant_calls(ctx.messages, ctx.taken_before):
            call_id = call.get("id")
            if isinstance(call_id, str) and not pattern.fullmatch(call_id):
                yield Violation(
                    f"tool call id {call_id!r} of assistant message {ctx.label(index)} is not {required['form']}: "
                    f"{required['by']} refuses it ({required['error']!r})",
                    key=(ctx.turn.identities[index], call_id), message_index=index, tool_call_id=call_id,
                    pointer=f"/messages/{index}/tool_calls/{position}/id",
                    evidence={"form": required["pattern"], "model": ctx.turn.record.model, "provider_error": required["error"],
                              "sources": required["sources"]},
                )
