from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import excerpt, role_of, text_of
from ctxlint.rules.base import Rule, Violation
from ctxlint.sessions.model import STEERING_ROLES

REPAIR_MARKERS = re.compile(
    r"\[System: (?:Tool execution (?:skipped|interrupted)[^\]]*|Empty message content saniti[sz]ed to satisfy protocol)\]",
    re.IGNORECASE,
)
CONTINUE_FILLER = "please continue."


class RepairedHistory(Rule):
    """
    ## What it does
    Warns when the history carries a gateway's synthetic repair text: LiteLLM's
    `[System: Tool execution skipped/interrupted by user…]` and `[System: Empty message
    content sanitised to satisfy protocol]`, or an injected `Please continue.` user
    message where no user would write one (between two assistant messages, or as the
    first conversation message). After a reply the session got cut off
    (`finish_reason: "length"`) or paused (Anthropic's `pause_turn`), "Please continue."
    is how an app asks for the rest, not a repair.

    ## Why is this bad?
    A proxy papered over a broken history: the app sent unanswered tool calls, empty
    messages or wrong role order, and the gateway filled the holes with placeholder text
    the model now reads as real turns. The real defect is upstream, in the app.

    ## Example
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": "[System: Tool execution skipped/interrupted by user. No result provided for tool 'search'.]"}
    ```

    Use instead: fix the history the app builds (see CTX002, CTX024) so the gateway has
    nothing to repair.
    """

    code = "CTX025"
    name = "repaired-history"
    severity = "warning"
    scope = "session"  # reads which replies the session got cut off
    remediation = "Fix the history at its source (unanswered calls, empty messages, role order) instead of relying on gateway repairs."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        opening = next((i for i, m in enumerate(messages) if role_of(m) not in STEERING_ROLES), None)
        for index in range(max(0, ctx.unchanged(self) - 1), len(messages)):  # a filler is judged by its neighbours
            message = messages[index]
            text = text_of(message.get("content"))
            marker = REPAIR_MARKERS.search(text)
            filler = (
                role_of(message) == "user" and text.strip().lower() == CONTINUE_FILLER
                and (index == opening
                     or (0 < index < len(messages) - 1 and role_of(messages[index - 1]) == role_of(messages[index + 1]) == "assistant"
                         and ctx.turn.identities[index - 1] not in ctx.session.unfinished))
            )
            if marker or filler:
                repair_text = excerpt(marker.group() if marker else text, 80)
                yield Violation(
                    f"message {ctx.label(index)} is a gateway's repair text: {repair_text}",
                    key=ctx.turn.identities[index], message_index=index, pointer=f"/messages/{index}/content",
                    evidence={"repair_text": repair_text},
                )
