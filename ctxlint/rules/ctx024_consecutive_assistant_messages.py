from __future__ import annotations

from typing import Iterable

from ctxlint.chat import different_participants, role_of
from ctxlint.rules.base import Rule, Violation


class ConsecutiveAssistantMessages(Rule):
    """
    ## What it does
    Warns about two assistant messages that follow each other, unless different `name`
    fields tell them apart as two agents of a multi-agent conversation.

    ## Why is this bad?
    One model reply was stored as two messages (a streamed reply split into an empty
    message and a tool-call message), or a user turn between them was lost. Some
    providers reject it; others merge the two and lose the pairing of calls and results.

    ## Example
    `[user, assistant(content: "Let me check"), assistant(tool_calls: [...]), tool]`

    Use instead: one assistant message per reply, with `content` and `tool_calls` together.
    """

    code = "CTX024"
    name = "consecutive-assistant-messages"
    severity = "warning"
    recurs = True
    remediation = "Store each model reply as one assistant message (content and tool_calls together)."

    def check(self, ctx) -> Iterable[Violation]:
        for index in range(max(1, ctx.unchanged(self)), len(ctx.messages)):
            if role_of(ctx.messages[index]) == "assistant" and role_of(ctx.messages[index - 1]) == "assistant" \
                    and not different_participants(ctx.messages[index - 1], ctx.messages[index]):
                yield Violation(
                    f"messages {ctx.label(index - 1)} and {ctx.label(index)} are both assistant messages",
                    key=(ctx.turn.identities[index - 1], ctx.turn.identities[index]), message_index=index, pointer=f"/messages/{index}",
                )
