from __future__ import annotations

from typing import Iterable

from ctxlint.chat import SERVER_TOOL_BLOCKS, message_identity, reasoning_of, role_of, says_nothing, text_of, tool_calls_of
from ctxlint.profiles import refused_prefill
from ctxlint.rules.base import Rule, Violation


class RefusedPrefill(Rule):
    """
    ## What it does
    Flags a request that ends with an assistant message (a prefill: the reply is to go
    on from it) that the model refuses: any prefill, text or thinking, sent to Claude
    Opus 4.6, Sonnet 4.6 and newer (Opus 4.7, 4.8 and 5, Sonnet 5, Fable 5), whichever
    API or gateway the request goes through; to an older Claude model on the Messages
    API, a prefill whose text ends in whitespace (a space, a newline) or one that carries a
    thinking block alone (a reply cut off while it thought, replayed to go on); and to Mistral's
    API, a final assistant message not marked `prefix: true` (the request must name the
    model as that API does, with no `org/` prefix or `:tag`: other hosts serve Mistral's
    open models under rules of their own). The model profiles' data names the models and
    APIs, with its sources. A final assistant message with tool calls is not a prefill
    (CTX002 reports calls left without results), nor is one that says nothing, nor a
    turn of server tools (web search, code execution) sent back as it came after the API
    paused it (`stop_reason` `pause_turn`): that is how the API goes on with it. A
    request whose successful reply is logged is left alone: the host that answered took
    it.

    ## Why is this bad?
    The API answers 400 ("This model does not support assistant message prefill. The
    conversation must end with a user message.", "final assistant content cannot end
    with trailing whitespace", "The final block in an assistant message cannot be
    `thinking`", Mistral's "Expected last role User or Tool (or Assistant with prefix
    True)") before the model sees anything. A history that ends with the
    assistant's own last reply is the usual cause on newer models: the app lost the
    user's next message, resumed an interrupted turn, or appended a hint as an assistant
    message. Prefill code written for older models (`{` to force JSON) fails the same
    way after an upgrade.

    ## Example
    ```json
    {"model": "claude-sonnet-4-6", "messages": [
      {"role": "user", "content": "List three primes as JSON."},
      {"role": "assistant", "content": "{"}]}
    ```

    Use instead: end with the user's message, and ask for the format with structured
    outputs (`output_config.format`) or in the system prompt:
    ```json
    {"model": "claude-sonnet-4-6", "system": "Answer with a JSON object only.", "messages": [
      {"role": "user", "content": "List three primes as JSON."}]}
    ```
    """

    code = "CTX035"
    name = "refused-prefill"
    severity = "error"
    remediation = ("End the request with a user message (the user's next message, or an instruction in place of the "
                   "prefill; structured outputs for a format); strip trailing whitespace from a prefill Claude takes, "
                   "and mark one Mistral takes `prefix: true`.")

    def check(self, ctx) -> Iterable[Violation]:
        last = len(ctx.messages) - 1
        final = ctx.messages[last] if last >= 0 else None
        if final is None or role_of(final) != "assistant" or tool_calls_of(final) or final.get(SERVER_TOOL_BLOCKS):
            return  # calls left open are CTX002's; a turn of server tools, sent back to go on after a pause, is no prefill
        refusal, refused = next(((entry, refused) for entry in refused_prefill(ctx.turn.record)
                                 if (refused := _refused_as(final, entry["refuses"])) is not None), (None, None))
        if refusal is None:
            return
        said, evidence = refused
        model = ctx.turn.record.model
        yield Violation(
            f"the request ends with assistant message {ctx.label(last)} (a prefill){said}, which {model} refuses "
            f"({refusal['by']}: {refusal['error']!r})",
            key=("prefill", message_identity(final)), message_index=last,
            pointer=f"/messages/{last}" + ("/content" if refusal["refuses"] == "trailing_whitespace" else ""),
            evidence={"model": model, "provider_error": refusal["error"], "sources": refusal["sources"], **evidence},
        )


def _refused_as(final: dict, refuses: str) -> tuple[str, dict] | None:
    """What makes the final assistant message refused (said after "a prefill"), and the
    evidence of it; None where it is taken."""
    if refuses == "trailing_whitespace":
        text = text_of(final.get("content"))
        trailing = text[len(text.rstrip()):]
        return (f" whose text ends in whitespace ({trailing[-8:]!r})", {"trailing_whitespace": trailing}) if trailing else None
    if says_nothing(final) and reasoning_of(final)[0] is None:
        return None  # an empty final message: not known to be refused
    if refuses == "trailing_thinking":  # no text or call after its thinking: the thinking block is its last
        return (" that carries thinking alone", {}) if says_nothing(final) else None
    if refuses == "prefill_without_prefix":
        return None if final.get("prefix") is True else (" not marked `prefix: true`", {})
    return "", {}
