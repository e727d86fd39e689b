from __future__ import annotations

from typing import Any, Iterable

from ctxlint.profiles import cache_refusal_sent, past_cache_limit, refusals_for_body
from ctxlint.rules.base import Rule, Violation


class RefusedCacheBreakpoints(Rule):
    """
    ## What it does
    Flags a Messages API request to a Claude model whose prompt-cache breakpoints
    (`cache_control` on tool definitions, system blocks and message content blocks) the
    API refuses: more than four of them, the top-level `cache_control` of automatic
    caching counted as one more where the request's final block holds none; or a
    breakpoint with `ttl: "1h"` after one of five minutes (`ttl: "5m"`, or no `ttl`), in
    the order the API reads them: tools, then system, then messages. The model profiles'
    data says what the API refuses, with its sources. Judged where the request names the
    model without a gateway's `org/` prefix (a gateway may trim the markers), the log
    records its settings and no successful reply to it is logged; a session whose host
    answered such a request before is left alone (every request since sending one too).
    Markers inside a tool result's own content are not counted, nor are markers in a
    chat-completions body (a gateway translates those). Reported once per session, where
    it starts.

    ## Why is this bad?
    The API answers 400 ("A maximum of 4 blocks with cache_control may be provided. Found
    5.", "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control
    block") before the model sees anything, and every later request that keeps the
    markers fails the same way. The usual cause is an app that marks the newest message
    at every turn and never takes the marker off the one before, so the session works
    for a few turns and stops at the turn where the fifth marker appears; or two layers
    (an SDK's own markers, a proxy's, automatic caching) that each add theirs.

    ## Example
    ```json
    {"model": "claude-sonnet-4-6", "system": [{"type": "text", "text": "You are a travel agent.", "cache_control": {"type": "ephemeral"}}],
     "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Rome, 500 EUR.", "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": "Which dates?"},
      {"role": "user", "content": [{"type": "text", "text": "May 3 to 5.", "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": "Two hotels near Termini fit."},
      {"role": "user", "content": [{"type": "text", "text": "The cheaper one.", "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": "Booked."},
      {"role": "user", "content": [{"type": "text", "text": "Now a flight.", "cache_control": {"type": "ephemeral"}}]}]}
    ```

    Use instead: keep one marker on the system prompt (and one on the tools) and move the
    conversation's marker to the newest message each turn, taking it off the one before:
    ```json
    {"model": "claude-sonnet-4-6", "system": [{"type": "text", "text": "You are a travel agent.", "cache_control": {"type": "ephemeral"}}],
     "messages": [
      {"role": "user", "content": "Rome, 500 EUR."},
      {"role": "assistant", "content": "Which dates?"},
      {"role": "user", "content": "May 3 to 5."},
      {"role": "assistant", "content": "Two hotels near Termini fit."},
      {"role": "user", "content": "The cheaper one."},
      {"role": "assistant", "content": "Booked."},
      {"role": "user", "content": [{"type": "text", "text": "Now a flight.", "cache_control": {"type": "ephemeral"}}]}]}
    ```
    """

    code = "CTX043"
    name = "refused-cache-breakpoints"
    severity = "error"
    remediation = ("Send at most four cache_control markers (automatic caching's top-level one counts), moving the "
                   "conversation's marker to the newest message each turn instead of adding another; put 1-hour markers "
                   "before 5-minute ones (tools, then system, then messages).")

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        breakpoints = record.source_map.cache_breakpoints if record.source_map is not None else ()
        if not breakpoints:
            return
        for refusal in refusals_for_body(record, "cache_breakpoints"):
            broken = past_cache_limit(refusal, breakpoints)
            if not broken or ctx.host_took(cache_refusal_sent(refusal)):
                continue  # within what the API takes, or the host answered the same before
            judge = _too_many if refusal["refuses"] == "more_breakpoints" else _longer_after_shorter
            says, evidence = judge(breakpoints, broken, record.source_map.pointer, refusal)
            at = broken[-1]
            yield Violation(
                f"{says}: {refusal['by']} answers {refusal['status']} ({refusal['error']!r})", key=cache_refusal_sent(refusal),
                message_index=at.message_index, pointer=at.pointer,
                evidence={**evidence, "model": record.model, "provider_error": refusal["error"], "sources": refusal["sources"]},
            )


def _too_many(breakpoints, broken, body_pointer, refusal: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    explicit = [body_pointer(breakpoint.pointer) for breakpoint in breakpoints if not breakpoint.automatic]
    automatic = len(explicit) < len(breakpoints)
    says = (f"the request marks {len(explicit)} blocks with cache_control ({', '.join(explicit)})"
            + (" and sets the top-level cache_control (automatic caching), which takes a breakpoint of its own" if automatic else "")
            + f": {len(breakpoints)} breakpoints, {len(breakpoints) - refusal['most']} more than the {refusal['most']} the API takes")
    in_messages = [pointer for pointer in explicit if pointer.startswith("/messages/")]
    if len(in_messages) > 1:
        says += f"; keep the conversation's marker on its newest message and take it off the earlier ones ({', '.join(in_messages[:-1])})"
    return says, {"breakpoints": len(breakpoints), "most": refusal["most"], "marked_blocks": explicit, "automatic_caching": automatic}


def _longer_after_shorter(breakpoints, broken, body_pointer, refusal: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    shorter, longer = broken
    shorter_ttl = shorter.ttl or refusal["default_ttl"]
    says = (f"the cache_control at {body_pointer(longer.pointer)} asks for ttl {longer.ttl!r} after the one at "
            f"{body_pointer(shorter.pointer)} with ttl {shorter_ttl!r}{'' if shorter.ttl else ' (it sets none: the default)'}, and the API "
            "reads them in the order tools, system, messages")
    return says, {"longer_ttl": longer.ttl, "longer_at": body_pointer(longer.pointer), "shorter_ttl": shorter_ttl,
                  "shorter_at": body_pointer(shorter.pointer)}
