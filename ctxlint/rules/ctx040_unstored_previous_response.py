from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import refused_unstored_reply
from ctxlint.rules.base import Rule, Violation


class UnstoredPreviousResponse(Rule):
    """
    ## What it does
    Flags a Responses API request whose `previous_response_id` names a reply the log
    shows was made by a request sent with `store: false`: the provider did not keep that
    reply, so it cannot go on from it. The request is linted as the app meant it (the
    earlier conversation before its new input), and this finding says the model never got
    that far. A request whose successful reply is logged is left alone: a transport that
    keeps the connection's replies in a cache of its own (Codex's Responses API over
    WebSocket) resolves the id without storing it. Reported once per session, where it
    starts. A request that names a reply the log does not hold is not linted at all, and
    the summary counts it as skipped with that reason.

    ## Why is this bad?
    The API answers 400 (`previous_response_not_found`: "Previous response with id
    'resp_…' not found.") and the conversation is lost from that request on: the app sends
    only its new input, trusting the provider with the rest. It happens when an app turns
    `store` off (for privacy, or because a gateway or an organization with zero data
    retention forces it) and keeps chaining turns by id; the fix for one setting breaks
    the other.

    ## Example
    ```json
    {"model": "gpt-5", "store": false, "input": [{"role": "user", "content": "My name is Ana."}]}
    {"model": "gpt-5", "store": false, "previous_response_id": "resp_68b1", "input": [{"role": "user", "content": "What is my name?"}]}
    ```

    Use instead: with `store: false`, send the whole conversation as `input` every turn
    (with the reasoning items, `include: ["reasoning.encrypted_content"]`); chain by
    `previous_response_id` only to replies made with `store: true`.
    """

    code = "CTX040"
    name = "unstored-previous-response"
    severity = "error"
    remediation = ("With store false, send the whole conversation as input every turn; chain by previous_response_id "
                   "only to replies made with store true.")

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        refusal = refused_unstored_reply(record)
        if refusal is None:
            return
        file, line = record.unstored_reply_at
        where = f"line {line}" if file == record.file else f"{file}:{line}"
        yield Violation(
            f"`previous_response_id` names {record.continues!r}, the reply to the request at {where}, which was sent with "
            f"`store: false`: {refusal['by']} did not keep it and answers 400 ({refusal['code']}: {refusal['error']!r}), "
            f"so the model sees none of the conversation before this request's input",
            key=("previous_response_id",), pointer="/previous_response_id",
            evidence={"previous_response_id": record.continues, "sent_with_store_false": {"file": file, "line": line},
                      "provider_error": refusal["error"], "sources": refusal["sources"]},
        )
