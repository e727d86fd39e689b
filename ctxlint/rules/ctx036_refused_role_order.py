from __future__ import annotations

from typing import Iterable

from ctxlint.chat import role_of
from ctxlint.profiles import refused_orders
from ctxlint.rules.base import Rule, Violation


class RefusedRoleOrder(Rule):
    """
    ## What it does
    Flags a message whose role the model's API refuses right after the role of the
    message before it, in a chat-completions request: Mistral's API refuses a `user`
    message right after `tool` results (`mistral-large-…`, `devstral-…`, `codestral-…`
    and its other models as its API names them; the model profiles' data holds each
    API's order, with its sources), while OpenAI's takes it. The request must name the
    model as that API does (no `org/` prefix or `:tag`: other hosts serve the open
    models under rules of their own). A request whose successful reply is logged is left
    alone, and so is a message an earlier request of the session sent to the same model
    and got a successful reply to (every request since sending it too): the host that
    answered took it. Each pair is reported once, at the request that first carries it,
    and not where the rule that explains it reports the same request: the model's reply
    to the results dropped (CTX016), results sent as user messages (CTX009), or calls
    left without results (CTX002).

    ## Why is this bad?
    The API answers 400 ("Unexpected role 'user' after role 'tool'", code 3230), and
    since the history keeps the pair, every later request of the session fails the same
    way. It happens when a user speaks before the model answered the tool results (a
    cancelled or interrupted tool run), or when an app written for OpenAI's order leaves
    the reply to the results out of the history.

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
    remediation = ("Keep the model's reply to tool results between them and the next user message; where there was none "
                   "(the user spoke first), put a short assistant message there.")

    def check(self, ctx) -> Iterable[Violation]:
        orders = refused_orders(ctx.turn.record)
        if not orders:
            return
        messages = ctx.messages
        # every message, those reported before too: the error each later request gets is theirs
        # (CTX022); not those a host took before (ctx.taken_before)
        for index in range(max(1, ctx.taken_before), len(messages)):
            before, role = role_of(messages[index - 1]), role_of(messages[index])
            for order in orders:
                if before == order["after"] and role == order["refuses"]:
                    yield Violation(
                        f"{role} message {ctx.label(index)} comes right after {before} message {ctx.label(index - 1)}: "
                        f"{order['by']} refuses that order ({order['error']!r})",
                        key=(ctx.turn.identities[index - 1], ctx.turn.identities[index]), message_index=index,
                        pointer=f"/messages/{index}", stands_at=index - 1, explained_by=("CTX002", "CTX009", "CTX016"),
                        evidence={"after": before, "role": role, "model": ctx.turn.record.model,
                                  "provider_error": order["error"], "sources": order["sources"]},
                    )
