"""The rules that report what ingest noted on a request's input items (a Responses API
body's), where the API the body is for refuses them."""

from __future__ import annotations

from typing import Any, ClassVar, Iterable

from ctxlint.profiles import input_noted, refused_input_item
from ctxlint.rules.base import Rule, Violation


class NotedInputItems(Rule):
    """Reports the first input item ingest noted as `note` (chat.INPUT_ITEM_NOTES), once per
    session, where it starts, where the API refuses such items (profiles.refused_input_item)
    and no host was seen answering a request that sent them (every request since too)."""

    note: ClassVar[str]

    def check(self, ctx) -> Iterable[Violation]:
        refusal = refused_input_item(ctx.turn.record, self.note)
        if refusal is None:
            return
        if ctx.host_took(input_noted(self.note)):
            return  # the host answered the same before
        for index in range(ctx.unchanged(self), len(ctx.messages)):  # what the previous request sent was judged there
            message = ctx.messages[index]
            for noted in message.get(self.note, ()) if type(message) is dict else ():
                yield self.violation(ctx, index, noted, refusal)
                return

    def violation(self, ctx, index: int, noted: dict[str, Any], refusal: dict[str, Any]) -> Violation:
        """The finding about the noted item at normalized message `index`."""
        raise NotImplementedError

    def refused(self, says: str, index: int, pointer: str, evidence: dict[str, Any], refusal: dict[str, Any], **more: Any) -> Violation:
        """A finding that `says` what is wrong, ending with what the API answers to it."""
        return Violation(
            f"{says}: {refusal['by']} answers {refusal['status']} ({refusal['error']!r})", key=(self.note,), message_index=index,
            pointer=pointer, evidence={**evidence, "provider_error": refusal["error"], "sources": refusal["sources"]}, **more,
        )
