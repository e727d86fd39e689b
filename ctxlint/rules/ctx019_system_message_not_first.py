from __future__ import annotations

from typing import Iterable

from ctxlint.chat import role_of
from ctxlint.rules.base import Rule, Violation
from ctxlint.sessions.model import STEERING_ROLES


class SystemMessageNotFirst(Rule):
    """
    ## What it does
    Notes, once per session, a system message that appears after other (non-system)
    messages, unless the model's profile documents them (Claude Opus 4.8 and newer take a
    system message right after a user turn). Opt-in (select it: `--extend-select
    CTX019`): most providers take such a message, and where one refuses it, CTX036 says
    so.

    ## Why is this bad?
    Some providers reject a system message that is not at the start, and some chat
    templates move or drop it, so the instruction is not where the app thinks it is.
    Others accept it, and agents use a trailing system message as a dynamic state layer
    ("Current plan status: …"), so this is information, not an error.

    ## Example
    `[system, user, assistant, system("Current plan: step 2"), user]`

    Use instead: fold dynamic state into the first system message, or send it as part of
    the user turn, when the provider does not document mid-conversation system messages.
    """

    code = "CTX019"
    name = "system-message-not-first"
    severity = "info"
    opt_in = True
    remediation = "Keep system messages at the start, or confirm the provider honours mid-conversation system messages."

    def check(self, ctx) -> Iterable[Violation]:
        if ctx.profile.mid_conversation_system:
            return  # the model documents them (Claude Opus 4.8 and newer)
        messages = ctx.messages
        start = ctx.unchanged(self)
        seen_other = any(role_of(m) not in STEERING_ROLES for m in messages[:start])
        for index in range(start, len(messages)):
            message = messages[index]
            role = role_of(message)
            if role == "system" and seen_other:
                count = sum(1 for m in ctx.messages[index:] if role_of(m) == "system")
                yield Violation(f"system message {ctx.label(index)} comes after the conversation started ({count} such message{'s' if count != 1 else ''} in this request)",
                                key="system-not-first", message_index=index, pointer=f"/messages/{index}")
                return
            if role not in STEERING_ROLES:
                seen_other = True
