from __future__ import annotations

from typing import Iterable

from ctxlint.chat import REASONING_FIELDS, THOUGHT_SIGNATURES, ReasoningSeen, reasoning_text, reasoning_value, role_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation

COMPARED_FIELDS = (*REASONING_FIELDS, THOUGHT_SIGNATURES)  # each compared with what the model returned under its own name


class ModifiedReasoningContent(Rule):
    """
    ## What it does
    Flags an assistant message whose reasoning (`reasoning_content`, `reasoning` or
    `reasoning_details`) differs from what the model returned for that turn: the logged
    response, or the first copy of the message in the session (a call turn is known by its
    call ids and what its calls do: a server that reuses ids gives them to other calls).
    Only messages whose
    reasoning the model's profile says must be passed back are judged; the same field is
    compared (a `reasoning_details` passed back verbatim while the plain `reasoning`
    string is dropped is OpenRouter's documented way and is not flagged). For Claude the
    reasoning is the `thinking` / `redacted_thinking` blocks, text and signature.
    `reasoning_details` are compared item by item, by what the provider checks: when some
    items are sealed (a `signature`, or encrypted `data`), those must come back unchanged
    and an unsigned text or summary beside them may be left out (Gemini through OpenRouter
    needs its encrypted item back, not the readable copy); an item's `index` is its place
    in the list, and the fragments a stream sends of one item count as that item, joined.
    Gemini's thought signatures are compared as the bytes they encode: standard and
    URL-safe base64 spell the same signature.

    ## Why is this bad?
    Reasoning is passed back so the model can continue its own plan. Trimmed, stripped,
    re-joined or translated reasoning is a plan the model did not write; providers that
    sign or cache it reject or ignore it (Anthropic checks each thinking block against its
    signature), and the model acts on the edited version.

    ## Example
    The response carried `"reasoning_content": "\\nCheck the weather, then book."`; the
    next request sends `"reasoning_content": "Check the weather, then book."`.

    Use instead: store the field as received, byte for byte, leading newline included.
    """

    code = "CTX015"
    name = "modified-reasoning-content"
    severity = "error"
    recurs = True
    recurs_on = ("assistant",)
    scope = "session"
    needs = ("thinking_profile", "chain", "reasoning")
    remediation = "Pass reasoning back exactly as the response carried it; do not strip, trim or re-join it."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(ctx.unchanged(self), len(messages)):
            message = messages[index]
            if role_of(message) != "assistant" or not ctx.passback_required(index):
                continue
            known = ctx.known_reasoning(index)
            if not known:
                continue
            for name in COMPARED_FIELDS:
                sent = reasoning_value(message, name) if name in known else None
                if sent not in (None, "", []) and ReasoningSeen.of(sent) not in {known[name], *known.get("_also", {}).get(name, ())}:
                    ids = tool_call_ids(message)
                    yield Violation(
                        f"assistant message {ctx.label(index)} sends back {ctx.turn.record.field_label(name)} changed from what the model returned ({known['_origin']})",
                        key=(ctx.turn.identities[index], name), message_index=index, tool_call_id=ids[0] if ids else None,
                        pointer=f"/messages/{index}/tool_calls" if name == THOUGHT_SIGNATURES else f"/messages/{index}/{name}",
                        evidence={"field": name, "returned_length": known[name].length, "sent_length": len(reasoning_text(sent)), "seen_in": known["_origin"]},
                    )
