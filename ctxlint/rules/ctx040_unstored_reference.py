from __future__ import annotations

from typing import Any, Iterable

from ctxlint.chat import role_of
from ctxlint.profiles import refused_unstored, responses_body
from ctxlint.rules.base import Rule, Violation


class UnstoredReference(Rule):
    """
    ## What it does
    Flags a Responses API request that refers the provider to what a reply it did not
    keep returned: the log shows that reply was made by a request sent with `store:
    false`. Either the request's `previous_response_id` names that reply (it is then
    linted as the app meant it, the earlier conversation before its new input, and this
    finding says the model never got that far), or the request sends back a reasoning
    item of that reply by its id alone, without the `encrypted_content` the provider
    would read it from (where the item was changed from what the reply returned, CTX015
    reports it). A request whose successful reply is logged is left alone: a transport
    that keeps the connection's replies in a cache of its own (Codex's Responses API over
    WebSocket) resolves the id without storing it. Each kind is reported once per
    session, where it starts. A request that names a reply the log does not hold is not
    linted at all, and the summary counts it as skipped with that reason.

    ## Why is this bad?
    The API answers 400 to the reply's id (`previous_response_not_found`: "Previous
    response with id 'resp_…' not found.") and 404 to the item's ("Item with id 'rs_…'
    not found. Items are not persisted when `store` is set to false."), and the
    conversation stops there: the app trusted the provider with what it had asked it not
    to keep. It happens when an app turns `store` off (for privacy, or because a gateway
    or an organization with zero data retention forces it) and keeps chaining turns by id
    or echoing reasoning items by reference.

    ## Example
    ```json
    {"model": "gpt-5", "store": false, "input": [{"role": "user", "content": "My name is Ana."}]}
    {"model": "gpt-5", "store": false, "previous_response_id": "resp_68b1", "input": [{"role": "user", "content": "What is my name?"}]}
    ```

    Use instead: with `store: false`, send the whole conversation as `input` every turn,
    with each reasoning item as the reply returned it (`include:
    ["reasoning.encrypted_content"]` returns its `encrypted_content`); chain by
    `previous_response_id` only to replies made with `store: true`.
    """

    code = "CTX040"
    name = "unstored-reference"
    severity = "error"
    remediation = ("With store false, send the whole conversation as input every turn, each reasoning item with its "
                   "encrypted_content; chain by previous_response_id only to replies made with store true.")

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        if record.unstored_reply_at is not None:
            refusal = refused_unstored(record, "previous_response_id")
            if refusal is not None:
                file, line = record.unstored_reply_at
                where = f"line {line}" if file == record.file else f"{file}:{line}"
                yield Violation(
                    f"`previous_response_id` names {record.continues!r}, the reply to the request at {where}, which was sent with "
                    f"`store: false`: {refusal['by']} did not keep it and answers {refusal['status']} ({refusal['code']}: "
                    f"{refusal['error']!r}), so the model sees none of the conversation before this request's input",
                    key=("previous_response_id",), pointer="/previous_response_id",
                    evidence={"previous_response_id": record.continues, "sent_with_store_false": {"file": file, "line": line},
                              "provider_error": refusal["error"], "sources": refusal["sources"]},
                )
        unstored = ctx.session.unstored_items
        if unstored:
            yield from self._items_by_id(ctx, unstored)
        if responses_body(record) and not record.reply_stored and record.answered:
            returned = _reasoning_item_ids(record.response.message)
            if returned:
                ctx.session.unstored_items = unstored | returned

    def _items_by_id(self, ctx, unstored: frozenset[str]) -> Iterable[Violation]:
        refusal = refused_unstored(ctx.turn.record, "reasoning item id")
        if refusal is None:
            return
        for index in range(ctx.unchanged(self), len(ctx.messages)):  # what the previous request sent was judged there
            for position, item in enumerate(_reasoning_items(ctx.messages[index])):
                if item.get("id") in unstored and "encrypted_content" not in item:
                    yield Violation(
                        f"assistant message {ctx.label(index)} sends back reasoning item {item['id']!r} by its id alone, without "
                        f"its encrypted_content, and that item came from a reply to a request sent with `store: false`: "
                        f"{refusal['by']} did not keep it and answers {refusal['status']} ({refusal['error']!r})",
                        key=("reasoning item id",), message_index=index, explained_by=("CTX015",),
                        evidence={"item_id": item["id"], "position": position, "provider_error": refusal["error"], "sources": refusal["sources"]},
                    )
                    return


def _reasoning_items(message: Any) -> list[dict[str, Any]]:
    """A Responses API turn's reasoning items, as its normalized message keeps them."""
    if role_of(message) != "assistant" or not isinstance(message.get("reasoning_details"), list):
        return []
    return [item for item in message["reasoning_details"] if isinstance(item, dict) and item.get("type") == "reasoning"]


def _reasoning_item_ids(message: Any) -> frozenset[str]:
    return frozenset(item["id"] for item in _reasoning_items(message) if isinstance(item.get("id"), str)) if message else frozenset()
