from __future__ import annotations

from typing import Iterable

from ctxlint.chat import (context_heading, different_participants, excerpt, last_user_index, message_identity, no_reply, role_of, short_hash,
                          tagged_blocks_only, text_of)
from ctxlint.profiles.lookup import agent_context, agent_context_after, blank_as_a_whole, retries_an_empty_reply, summary_message
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx008_lost_first_turn_constraint import restates_cut_history
from ctxlint.rules.ctx009_tool_result_as_user_message import user_stand_ins
from ctxlint.sessions.model import conversation_end, ended_on


class ConsecutiveUserMessages(Rule):
    """
    ## What it does
    Flags two `user` messages that follow each other with nothing between them. So are
    two with only system messages between them that the previous request sent after the
    first, which it ended its conversation on (a reminder or state line after the user's
    message: the model's reply to it belongs after them). Two
    participants of a group chat, told apart by different `name` fields (the field
    chat-completions defines for that), are not flagged, and neither is a summary that a
    request puts in place of the history it cut (before the messages it kept, where it cut
    messages that came before them; or restating what it cut in five content words or
    more, unless it follows the model's reply to the previous request, logged or not,
    where the user's next words stand; or opening with the line a known agent's summary
    opens with, or saying it is one: "Summary of our conversation so far: …",
    "以下是之前对话的摘要：…"), sent as a user message next to one (LangChain's
    SummarizationMiddleware sends its summary so, before the messages it kept; Claude
    Code's compaction summary comes before the user's next prompt),
    nor an attachment sent as a user message of its own (only images, audio or files, no
    text) next to the message that says what to do with it, or an agent's context sent
    so before the user's words, nothing but blocks in tags of their own (Codex CLI's
    `<user_instructions>` and `<environment_context>` before the prompt) or opening with
    the line a known agent's context opens with (SWE-agent's demonstration before the
    task; the model profiles list them, with their sources), or retrieved material under a
    heading that says so ("Context:", "Relevant documents:", "参考资料：") before the
    question (unless it was sent alone first, and asked), or nothing but tagged blocks
    right after the conversation's first prompt (OpenHands describes its workspace so,
    `<RUNTIME_INFORMATION>`, `<REPOSITORY_INFO>`), or after any user message in the tags
    of a known agent's recalled context (OpenHands' `<EXTRA_INFO>`, the knowledge a
    keyword of the message triggered; listed in the model profiles): that is one user
    turn. An observation sent after a tool result (a screenshot with its caption) is not
    context for a prompt, and is reported. Nor are
    two messages the previous request sent with others between them that this request
    cut: history trimmed from the middle (the first user message kept, the newest turns
    after it), which leaves the user's first message next to the oldest one kept (also
    where the previous request had cut that first message and this one sends it again,
    before history older than its newest question), or whole turns cut between two kept
    ones. A cut of the reply alone, later in the conversation
    (what the previous request sent between the two was the reply to the first), is that
    reply lost, and reported. Nor is
    a message whose request the provider refused (an error reply, logged) or whose reply
    said nothing (no text and no tool calls: filtered, `finish_reason` `content_filter`,
    or empty) followed by the user's next one: no reply came to keep between them (unless
    a retry of the request got one); nor
    the retry prompt a framework sends after leaving a reply with no usable output out of
    the history (pydantic-ai's "Please return text."; the model profiles list them, with
    their sources). Nor are the user messages that stand, one per call, for the results of
    the tool-call turn right before them: CTX009 reports that turn, once; nor a message
    the API refuses as blank, which is no turn: CTX029 reports it. Where CTX016 finds the
    reply between the two lost against the one the previous request logged, that is the
    defect, reported once as CTX016's.

    ## Why is this bad?
    Chat models are trained on alternating turns. Two user messages in a row mean the
    assistant's reply between them was lost (not stored, overwritten by a retry), or a
    tool result or injected context was sent as a user turn. Several providers reject
    the request outright; others merge the two and the model answers only one of them.

    ## Example
    ```json
    {"role": "user", "content": "Book the 9am flight."}
    {"role": "user", "content": "Also add a hotel."}
    ```

    Use instead: keep the assistant reply between them, or send one user message:
    ```json
    {"role": "user", "content": "Book the 9am flight."}
    {"role": "assistant", "content": "Booked: AF123 at 9:00."}
    {"role": "user", "content": "Also add a hotel."}
    ```
    """

    code = "CTX003"
    name = "consecutive-user-messages"
    severity = "error"
    recurs = True
    recurs_on = ("user",)
    remediation = "Keep the assistant reply between user turns, or merge the two user messages into one."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        identities = ctx.turn.identities
        transition = ctx.transition
        if transition is not None and transition.cut:
            # a summary stands where the cut history was: before messages carried on, not among the new ones;
            # later requests carry it on, and it stays a summary there
            ctx.session.summaries |= {identities[i] for i in transition.put_in(messages) if (
                i < transition.new_from and transition.cut_before(i, ctx.previous.identities)) or (
                not _after_the_reply(identities, transition, i) and restates_cut_history(ctx, i))}
        previous = ctx.previous
        response = previous.record.response if previous is not None else None
        asked_last = ended_on(previous.identities) if previous is not None else None
        if response is not None and asked_last is not None and asked_last[0] == "user":
            # the provider refused the request that asked it, or its reply said nothing (filtered):
            # no reply came to keep before the next message; unless a retry of it got one
            asked = {asked_last}
            ctx.session.refused = ctx.session.refused | asked if no_reply(response) else ctx.session.refused - asked
        summaries, refused = ctx.session.summaries, ctx.session.refused
        start = max(1, ctx.unchanged(self))
        results_as_user = _results_sent_as_user(messages, start)
        for index in range(start, len(messages)):
            if index in results_as_user:
                continue  # one of the call turn's results sent as a user message: CTX009's finding
            before = _user_before(messages, identities, index, previous.identities if previous is not None else None, asked_last) if role_of(messages[index]) == "user" else None
            if before is not None \
                    and not different_participants(messages[before], messages[index]) \
                    and identities[index] not in summaries and identities[before] not in summaries \
                    and identities[before] not in refused and not summary_message(messages[before]) \
                    and not retries_an_empty_reply(messages[index]):
                first, second = (text_of(messages[i].get("content")) for i in (before, index))
                if _attachment_only(messages[before], first) or _attachment_only(messages[index], second):
                    continue
                if blank_as_a_whole(messages[before]) or blank_as_a_whole(messages[index]):
                    continue  # a message the API refuses as blank, not a second turn: CTX029's finding
                if (tagged_blocks_only(first) or context_heading(first) or agent_context(messages[before])) and not (
                        asked_last == identities[before]):
                    continue  # context or retrieved material before the user's words, not asked alone: one user turn
                if agent_context_after(messages[index]) or (
                        tagged_blocks_only(second) and all(role_of(message) in ("system", "developer") for message in messages[:before])):
                    continue  # what an agent recalls for the user's words (its workspace, knowledge): one user turn
                if transition is not None and transition.sent_together(before, index):
                    continue  # judged where they first stood together (a request that rewrote what comes before them re-reads them)
                if transition is not None and (transition.trimmed_between(before, index, ctx.previous.identities)
                                               or _opening_sent_again_before_kept_history(ctx, index)):
                    continue  # history trimmed from the middle: what stood between them was cut, not lost
                yield Violation(
                    f"messages {ctx.label(before)} and {ctx.label(index)} are both user messages"
                    + (", with only the system messages the last request sent after the first between them" if before < index - 1 else ""),
                    key=(short_hash(first), short_hash(second)),
                    message_index=index, pointer=f"/messages/{index}", stands_at=index - 1,
                    evidence={"previous": excerpt(first, 60), "this": excerpt(second, 60)},
                )


def _opening_sent_again_before_kept_history(ctx, index: int) -> bool:
    """Whether message `index - 1` is the session's first user message, sent again after the
    previous request cut it, and message `index` is not the request's newest question: what
    stood between them cannot be read from the previous request, and the history kept after
    an opening is the newest part of it, as a trim from the middle keeps it."""
    opening = ctx.session.opening.get("user")
    first = ctx.turn.identities[index - 1]
    return opening is not None and first == message_identity(opening[1]) and first not in set(ctx.previous.identities) \
        and index < last_user_index(ctx.messages)


def _results_sent_as_user(messages: list[dict], start: int) -> set[int]:
    """The user messages that stand for results of the tool-call turns of the run of results
    and user messages that reaches `start` and goes on from it (CTX009's user_stand_ins)."""
    standing_in: set[int] = set()
    begin = min(start, len(messages)) - 1
    while begin > 0 and role_of(messages[begin]) in ("user", "tool"):
        begin -= 1  # back to the turn a run of results and user messages reaching `start` follows
    for index in range(max(0, begin), len(messages) - 1):
        if role_of(messages[index]) == "assistant":
            standing_in.update(user_stand_ins(messages, index))
    return standing_in


def _after_the_reply(identities: list[tuple], transition, index: int) -> bool:
    """Whether an assistant message stands between the last message this request carries
    of the previous one and message `index`: the model's reply to the previous request,
    logged or not. What follows it is the user's next input, not a summary put where the
    history was cut."""
    return any(identity[0] == "assistant" for identity in identities[transition.last_carried + 1:index])


def _attachment_only(message: dict, text: str) -> bool:
    """A user message of content parts none of which is text (an image, audio, a file)."""
    content = message.get("content")
    return isinstance(content, list) and bool(content) and not text.strip()


def _user_before(messages: list, identities: list[tuple], index: int, previous_identities: list[tuple] | None,
                 asked_last: tuple | None) -> int | None:
    """The user message right before message `index`; or, past system messages, the one the
    previous request's conversation ended on (`asked_last`), when those system messages are
    the ones that request sent after it (a reminder or state line after the conversation:
    the reply to that message belongs after them)."""
    before = conversation_end(identities, index) - 1
    if before < 0 or role_of(messages[before]) != "user":
        return None
    if before == index - 1:
        return before
    if previous_identities is None or asked_last != identities[before]:
        return None
    trailing = set(previous_identities[conversation_end(previous_identities):])  # read only here: the rare case
    return before if all(identity in trailing for identity in identities[before + 1:index]) else None

