from __future__ import annotations

from typing import Iterable

from ctxlint.chat import call_function, different_participants, hand_back_call, role_of, tool_call_ids, tool_calls_of
from ctxlint.profiles.lookup import summary_message
from ctxlint.rules.base import Rule, Violation


class ConsecutiveAssistantMessages(Rule):
    """
    ## What it does
    Warns about two assistant messages that follow each other, unless different `name`
    fields tell them apart as two agents of a multi-agent conversation, or the second only
    hands the conversation back (LangGraph's supervisor appends "Transferring back to
    supervisor" with a `transfer_back_to_…` call after a worker's answer). Nor where the
    first made tool calls that no tool message of the request answers: the results are
    what is missing between them, which CTX002 reports where it starts. Nor where the first
    is a summary of the conversation so far that the app put in as an assistant message,
    in words of its own or with a known agent's opening line (the model profiles list
    them; the OpenAI Agents SDK hands a conversation to the next agent so: "For context, here
    is the conversation so far between the user and the previous agent: <CONVERSATION
    HISTORY>…"), followed by the model's own reply. Nor where the first is a reply the
    session got cut off (`finish_reason: "length"`) or paused (Anthropic's `pause_turn`,
    which a long server-tool turn ends with and which is sent back as it came for the
    model to go on) and the second goes on with it: Anthropic's API joins consecutive
    assistant messages into one turn.

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
    scope = "session"  # reads which replies the session got cut off or paused
    recurs = True
    recurs_on = ("calls",)  # a streamed reply is split in two (an empty message and its calls) on tool-call turns
    remediation = "Store each model reply as one assistant message (content and tool_calls together)."

    def check(self, ctx) -> Iterable[Violation]:
        for index in range(max(1, ctx.unchanged(self)), len(ctx.messages)):
            if role_of(ctx.messages[index]) == "assistant" and role_of(ctx.messages[index - 1]) == "assistant" \
                    and not different_participants(ctx.messages[index - 1], ctx.messages[index]) \
                    and not _hands_back(ctx.messages[index]) and not _calls_unanswered(ctx.messages, index - 1) \
                    and not summary_message(ctx.messages[index - 1]) \
                    and ctx.turn.identities[index - 1] not in ctx.session.unfinished:
                yield Violation(
                    f"messages {ctx.label(index - 1)} and {ctx.label(index)} are both assistant messages",
                    key=(ctx.turn.identities[index - 1], ctx.turn.identities[index]), message_index=index, pointer=f"/messages/{index}", stands_at=index - 1,
                )


def _hands_back(message: dict) -> bool:
    """Whether an assistant message only hands the conversation back to another agent."""
    names = [call_function(call)[0] for call in tool_calls_of(message)]
    return bool(names) and all(hand_back_call(name) for name in names)


def _calls_unanswered(messages: list, index: int) -> bool:
    """Whether the assistant message at `index` made calls (with ids) that no later tool
    message of the request answers: its results were lost (CTX002), not its reply split in two."""
    ids = set(tool_call_ids(messages[index]))
    return bool(ids) and not any(role_of(message) == "tool" and message.get("tool_call_id") in ids for message in messages[index + 1:])
