from __future__ import annotations

from typing import Iterable

from ctxlint.chat import SERVER_TOOL_BLOCKS, role_of, text_of, tool_calls_of
from ctxlint.profiles import refused_orders
from ctxlint.rules.base import Rule, Violation


# the rules whose finding at the same request is the defect that put the roles in that order
EXPLAINED_BY = ("CTX001", "CTX002", "CTX009", "CTX016")
# what comes before a message that opens the conversation: nothing, or the top-level prompt alone
START = "start"


class RefusedRoleOrder(Rule):
    """
    ## What it does
    Flags a message whose role the model's API refuses right after the role of the
    message before it. In a chat-completions request: Mistral's API refuses a `user`
    message right after `tool` results (`mistral-large-…`, `devstral-…`, `codestral-…`
    and its other models as its API names them), while OpenAI's takes it; the request
    must name the model as that API does (no `org/` prefix or `:tag`: other hosts serve
    the open models under rules of their own). In an Anthropic Messages body for a model
    that takes system messages in the conversation (Claude Opus 4.8 and newer): a system
    message there must come right after a user message (tool results count) or an
    assistant message ending in a server tool result, and right before an assistant
    message or at the end, so one right before a user message or right after the
    model's reply is flagged, once, at the system message; its directive-only form (no
    content, an `output_config`) goes anywhere. In a Gemini body (generateContent): a
    model turn that makes function calls right after another model turn (one reply's
    text and calls stored as two turns), where CTX024's warning is this error. The model
    profiles' data holds each API's order, with its sources. A request whose successful reply is logged is left
    alone, and so is a message an earlier request of the session sent to the same model
    and got a successful reply to (every request since sending it too): the host that
    answered took it. Each pair is reported once, at the request that first carries it,
    and not where the rule that explains it reports the same request: the model's reply
    to the results dropped (CTX016), results sent as user messages (CTX009), calls left
    without results (CTX002), or results left without their call (CTX001).

    ## Why is this bad?
    The API answers 400 ("Unexpected role 'user' after role 'tool'", code 3230;
    Anthropic: "role 'system' must precede an 'assistant' message or end the array";
    Gemini: "Please ensure that function call turn comes immediately after a user turn
    or after a function response turn."),
    and since the history keeps the pair, every later request of the session fails the
    same way. It happens when a user speaks before the model answered the tool results
    (a cancelled or interrupted tool run), when an app written for OpenAI's order leaves
    the reply to the results out of the history, or when an app puts a summary or a note
    as a system message right before the user's next message, or stores a reply's text
    and its calls as two messages.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "D681PevKs", "type": "function", "function": {"name": "bash", "arguments": "{\\"cmd\\": \\"pytest\\"}"}}]},
    {"role": "tool", "tool_call_id": "D681PevKs", "content": "Skipped: the user cancelled the command."},
    {"role": "user", "content": "Run it with -x instead."}
    ```

    Use instead: keep the model's reply to the results between them and the next user
    message; where the user spoke before the model replied, put a short assistant
    message there (`"The command was cancelled."`).
    """

    code = "CTX036"
    name = "refused-role-order"
    severity = "error"
    remediation = ("Send the roles in the order the model's API takes: the model's reply between tool results and the next user "
                   "message (a short one where the user spoke first); a system message right after a user message and before "
                   "the model's turn; a reply's text and calls in one model turn.")

    def check(self, ctx) -> Iterable[Violation]:
        orders = refused_orders(ctx.turn.record, ctx.profile)
        if not orders:
            return
        messages = ctx.messages
        # every message, those reported before too: the error each later request gets is theirs
        # (CTX022); not those a host took before (ctx.taken_before)
        for index in range(ctx.taken_before, len(messages)):
            before, role = _role_before(ctx, index), role_of(messages[index])
            for order in orders:
                if before in order["after"] and role in order["refuses"] and (not order.get("calls_only") or tool_calls_of(messages[index])):
                    violation = self._misplaced(ctx, order, index) if "misplaced" in order else self._pair(ctx, order, index, before)
                    if violation is not None:
                        yield violation

    @staticmethod
    def _pair(ctx, order: dict, index: int, before: str | None) -> Violation:
        """A message whose role the API refuses right after the role of the one before it, or
        at the start of the conversation."""
        role = role_of(ctx.messages[index])
        evidence = {"after": before, "role": role, "model": ctx.turn.record.model, "provider_error": order["error"], "sources": order["sources"]}
        if before == START:
            return Violation(
                f"{role} message {ctx.label(index)} opens the conversation: {order['by']} refuses that ({order['error']!r})",
                # a history cut to open there at one request, and at others later: one defect
                key=(START,), message_index=index, pointer=f"/messages/{index}", explained_by=EXPLAINED_BY,
                evidence=evidence,
            )
        return Violation(
            f"{role} message {ctx.label(index)} comes right after {before} message {ctx.label(index - 1)}: "
            f"{order['by']} refuses that order ({order['error']!r})",
            key=(ctx.turn.identities[index - 1], ctx.turn.identities[index]), message_index=index,
            pointer=f"/messages/{index}", stands_at=index - 1, explained_by=EXPLAINED_BY,
            shows_as=(("CTX024", index - 1),),  # two assistant messages in a row, which the API refuses
            evidence=evidence,
        )

    @staticmethod
    def _misplaced(ctx, order: dict, index: int) -> Violation | None:
        """The message of the pair that the API refuses where it stands (a system message in
        the conversation: the top-level prompt opens it, _role_before), once; not its
        directive-only form (no content), nor a place after an assistant message that holds
        server tool blocks."""
        at, other = (index - 1, index) if order["misplaced"] == "after" else (index, index - 1)
        message, record = ctx.messages[at], ctx.turn.record
        if not text_of(message.get("content")).strip():
            return None
        if order.get("unless_server_tools") and ctx.messages[index - 1].get(SERVER_TOOL_BLOCKS):
            return None
        role, other_role = role_of(message), role_of(ctx.messages[other])
        return Violation(
            f"{role} message {ctx.label(at)} comes right {'before' if other > at else 'after'} {other_role} message {ctx.label(other)}: "
            f"{order['by']} refuses it there ({order['error']!r})",
            key=("misplaced", ctx.turn.identities[at]), message_index=at, pointer=f"/messages/{at}", explained_by=EXPLAINED_BY,
            evidence={"role": role, "next_to": other_role, "model": record.model, "provider_error": order["error"], "sources": order["sources"]},
        )


def _role_before(ctx, index: int) -> str | None:
    """The role of the message before message `index`, or START where nothing of the
    conversation comes before it (the top-level prompt at most)."""
    source_map = ctx.turn.record.source_map
    if index == 0 or (index == 1 and source_map is not None and source_map.index_of(0) is None):
        return START
    return role_of(ctx.messages[index - 1])
