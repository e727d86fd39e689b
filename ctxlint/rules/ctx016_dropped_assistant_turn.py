from __future__ import annotations

from typing import Iterable

from ctxlint.chat import comparable_text, excerpt, role_of, says_nothing, text_of, tool_call_ids
from ctxlint.ingest.call_ids import unpaired_call_id
from ctxlint.profiles.lookup import compaction_at, summary_message
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx008_lost_first_turn_constraint import restates
from ctxlint.sessions.history import Transition
from ctxlint.sessions.model import STEERING_ROLES, conversation_end, ended_on, last_of


class DroppedAssistantTurn(Rule):
    """
    ## What it does
    Flags a request N+1 that continues request N (it adds new messages after N's) but no
    longer carries the assistant message that N's logged response returned. Without a
    logged response, a request N that ended with tool results is enough to know the
    model replied: N+1 that carries all of N and goes on with a user message lost that
    reply. Turns are matched by tool_call ids, or by visible text with `<think>` blocks
    and whitespace ignored, so reasoning moved inline or re-wrapped is not a drop; an
    assistant message standing where the reply belongs counts as the reply, re-worded
    (agents that use structured output keep only its text), unless it and the assistant
    messages right after it say nothing (no text, no tool calls) where the reply said
    something: an app that stores only `content` keeps a tool-call reply as an empty
    message, and its call goes unanswered. So does one message holding both the assistant
    message request N ended with (a prefill: Anthropic's, or DeepSeek's prefix
    completion) and the reply that continued it. A resend of request N (a
    retry) is not judged here, and neither is a response that was an error or said
    nothing (no text and no tool calls: filtered by the provider, `finish_reason`
    `content_filter`, or empty; Anthropic refuses an empty text block sent back), nor an edit:
    a request that is N's messages up to one of its user messages, then a corrected text
    of that message (much alike, or the old text kept with words added: a chat UI's
    edit-and-resend branches the conversation there). Nor is
    a request that asks another question in place of the message N ended with, when the
    two were made to other models or for other purposes (N with a `response_format`,
    tools or a `tool_choice` of its own): N was a side request on the history (follow-up
    questions, a title, a verdict) that the conversation goes on without. Made alike, that
    is the exchange lost, and reported once: the same message asked again after the
    history and left behind again is a side request the app makes every turn. Nor is a
    side request on the history as it stood, made to another model or for another
    purpose, that carries all N sent but not its reply, and neither answers that reply's
    calls nor offers the tools they call (a status line asked of a smaller model while
    the agent's loop waits on a call): the next request is judged against N. Nor is
    a reply cut away with everything before it while its tool results open the request:
    a history trimmed at its head inside a tool exchange, which CTX001 (the results left
    without their call) and CTX008 (the first messages lost) report. Nor is a request
    that compacts the history, where the provider compacted it (Anthropic's `compaction`
    block, a Responses API `compaction` item) or the agent did (the summary message of
    Claude Code, Codex CLI, LangChain's SummarizationMiddleware, Aider or Gemini CLI): what
    came before it is in the summary. A summary carried on from an earlier request stands
    for nothing left out since.
    Nor is a text reply folded, with the history before it, into a summary the request
    puts in place of what it cut (one that restates the reply's words, says it is a
    summary, "Summary of our conversation so far: …", or opens as a known agent's summary
    does; or a system prompt that holds one in a section of its own, a line that opens one
    or a `<conversation_summary>` block): CTX008 judges what the summary kept. A history
    compacted so is not read as trimmed: a reply lost after the summary is reported.

    A reply lost between two user messages, and a tool-call turn lost (or kept empty)
    while its results are kept, is one defect: this rule reports it, and CTX003 (the two
    user messages) and CTX001 (the results left without their call; CTX028, a second
    result of an earlier call whose id the lost one reused) do not report it again.
    They report it where this rule cannot see it (no logged reply) or is not selected.
    A reply cut with all of the conversation before it (the prompt alone kept,
    or nothing: the history trimmed to the newest message, or not sent) is the first
    messages lost, which CTX008 reports; this rule reports it where CTX008 does not.

    It also flags a reply to tool results that request N sent, cut from N+1 while the
    results and the message after the reply are kept (whether or not N's own response was
    logged): a trim cuts whole turns, or what
    follows the conversation's opening, not one reply (where the reply stood between two
    user messages, CTX003 reports them).

    It also flags a request N+1 that keeps all of N up to its last user message and the
    model's final reply, but not the tool exchange between them (the assistant tool-call
    turns and their results): the turn was stored as its text alone. In a tool loop, it
    flags a request N+1 that leaves out the tool-call turn N ended with and its results
    while it keeps all before them and the model's reply to them: the newest step
    overwritten by the next (a trim cuts the oldest). Once a session has trimmed or
    folded its history (a request left out messages of the one before), an exchange that
    vanishes is read as more of that, not reported.

    ## Why is this bad?
    The model's own turn vanished: typically an assistant message with empty `content`
    and only `tool_calls` was filtered as "empty" while its tool results were kept, or a
    streaming handler stored nothing. The model then sees results for calls it never
    made, or a user answering a question it never asked. An app that stores only each
    turn's final text loses what the tools returned: asked about it a turn later, the
    model calls the tools again or answers from nothing.

    ## Example
    Response N: `{"role": "assistant", "content": "", "tool_calls": [call_1]}`; request N+1
    ends `[..., user, {"role": "tool", "tool_call_id": "call_1", ...}]`.

    Use instead: append the response message to the history as received, before the
    tool results or the next user message.

    Request N: `[..., user, assistant(tool_calls: call_1), tool(call_1)]`; request N+1:
    `[..., user, assistant("It is 18C in Paris."), user]`. Use instead: keep the
    tool-call turn and its result before the reply.
    """

    code = "CTX016"
    name = "dropped-assistant-turn"
    severity = "error"
    recurs = True
    recurs_on = ("assistant",)
    needs = ("chain", "previous_response")
    scope = "session"
    remediation = "Append every assistant response to the history as received (empty content and tool_calls included)."

    def cannot_judge(self, ctx) -> str | None:
        previous = ctx.previous
        if previous is not None and previous.record.response is None and _ended_with_tool_results(previous):
            return None  # the model replied to those results, logged or not
        return super().cannot_judge(ctx)

    def check(self, ctx) -> Iterable[Violation]:
        return _unless_compacted(ctx, list(self._dropped(ctx)) or list(self._reply_to_results_cut(ctx)))

    def check_in_part(self, ctx) -> Iterable[Violation]:
        # without the previous request's response: a reply that request sent in its history, cut
        return _unless_compacted(ctx, list(self._reply_to_results_cut(ctx)))

    def _dropped(self, ctx) -> Iterable[Violation]:
        transition = ctx.transition
        previous = ctx.previous
        if transition is not None and not ctx.session.history_cut and transition.edited_at is None and not (
                previous.record.response and previous.record.response.failed):
            dropped = _tool_exchange_dropped(previous.identities, transition, ctx.messages) or _newest_exchange_dropped(
                previous.identities, transition)
            if dropped is not None:
                yield self._exchange_dropped(ctx, *dropped)
                return
        if transition is not None and previous.record.response is None:
            yield from self._reply_to_tool_results_missing(ctx)
            return
        if transition is None or transition.response_index is None or previous.response_message is None:
            return
        if previous.record.response.failed or not transition.adds_messages or transition.edited_at is not None:
            return
        if transition.response_position is not None:
            return
        kept = sorted(p for p in transition.mapping[: transition.response_index] if p is not None)  # results may come back reordered
        slot = kept[-1] + 1 if kept else 0
        dropped = previous.response_message
        if says_nothing(dropped):
            return  # a filtered or empty reply: nothing to keep
        hollow = slot < len(ctx.messages) and role_of(ctx.messages[slot]) == "assistant"
        if hollow and not _say_nothing_from(ctx.messages, slot):
            return  # the reply is there, re-worded (structured-output agents keep only its text)
        ids = tool_call_ids(dropped)
        if not ids and kept and _says(ctx.messages[kept[-1]], dropped) and not _says(previous.messages[transition.mapping.index(kept[-1])], dropped):
            return  # its text joined the assistant message before it (Responses API items read as one message)
        if not kept and _opens_with_results_of(ctx.messages, ids):
            return  # cut away with all before it, its results left at the head: trimming (CTX001, CTX008)
        if ctx.side_request:
            return  # a side request on the history as it stood: the conversation goes on from the previous request
        if not ids and transition.cut and any(summary_message(ctx.messages[index]) or restates(
                text_of(ctx.messages[index].get("content")), [text_of(dropped.get("content"))]) for index in transition.put_in(ctx.messages)):
            return  # folded with the history before it into a summary the request carries (CTX008 judges the summary)
        why = ""
        if transition.asked_instead is not None:
            asked = previous.identities[transition.asked_instead]
            if asked in ctx.session.asked_aside:
                return  # asked after the history and left behind again: a side request the app makes each turn
            ctx.session.asked_aside |= {asked}
            why = (f", as is the message turn {previous.number} asked (message {ctx.label(transition.asked_instead)} asks another in its place;"
                   f" if turn {previous.number} was a side request, not a turn of the conversation, it reads so when made with a"
                   " response format, tools or a model of its own)")
        returned = f"the assistant turn that turn {previous.number} returned ({'tool calls ' + ', '.join(ids) if ids else 'text'})"
        evidence = {"returned_in_line": previous.record.line, "returned_in_turn": previous.number, "content": excerpt(text_of(dropped.get("content")), 60)}
        results = _results_kept(ctx.messages, ids)
        if hollow:
            yield Violation(
                f"{returned} is stored as assistant message {ctx.label(slot)}, which has no text and no tool calls: the reply's content was lost",
                key=("dropped", previous.number), message_index=slot, tool_call_id=ids[0] if ids else None, pointer=f"/messages/{slot}", evidence=evidence,
                shows_as=results,
            )
            return
        # its place: after the last message N sent, or after the one that stands for it in
        # other words (a question kept without the wrapping it was sent in)
        asked = transition.response_index - 1
        reworded = (slot < len(ctx.messages) and asked >= 0 and transition.mapping[asked] is None
                    and previous.identities[asked][0] == "user" == role_of(ctx.messages[slot]))
        place = slot + 1 if reworded else slot
        before = place < len(ctx.messages)  # the message it belongs before, when one follows
        # cut with all of the conversation before it (its prompt alone kept, or nothing): the
        # history trimmed to the newest message, or not sent, which CTX008 reports as the
        # first messages lost
        cut_whole = not any(previous.identities[index][0] not in STEERING_ROLES
                            for index, position in enumerate(transition.mapping[: transition.response_index]) if position is not None)
        yield Violation(
            f"{returned} is missing from this request{f', before message {ctx.label(place)}' if before else ''}{why}",
            key=("dropped", previous.number), tool_call_id=ids[0] if ids else None, stands_at=slot - 1 if slot else None, evidence=evidence,
            pointer=f"/messages/{place}" if before else None,
            # or the user messages it stood between
            shows_as=results + tuple(("CTX003", index) for index in range(max(slot - 1, 0), place)),
            explained_by=("CTX008",) if cut_whole else (),
        )

    @staticmethod
    def _exchange_dropped(ctx, dropped: list[int], reply: int) -> Violation:
        previous = ctx.previous
        ids = [call_id for index in dropped if previous.identities[index][:2] == ("assistant", "calls") for call_id in previous.identities[index][2]]
        results = sum(previous.identities[index][0] == "tool" for index in dropped)
        calls = f"tool call{'s' * (len(ids) != 1)} {', '.join(ids)}"
        missing = (f"the tool exchange of turn {previous.number} ({calls} and {results} result{'s' * (results != 1)}) is missing "
                   f"from this request while the reply that followed it (message {ctx.label(reply)}) is kept" if results else
                   f"the assistant message of turn {previous.number} that made {calls} is missing from this request while "
                   f"its results and the reply that followed them (message {ctx.label(reply)}) are kept")
        return Violation(
            missing,
            key=("dropped", previous.number), message_index=reply, tool_call_id=ids[0], pointer=f"/messages/{reply}",
            evidence={"previous_line": previous.record.line, "dropped_messages": dropped}, shows_as=_results_kept(ctx.messages, ids),
        )

    @staticmethod
    def _reply_to_results_cut(ctx) -> Iterable[Violation]:
        """A reply to tool results that the previous request sent, cut from this one while
        the results and the message after the reply are kept: not a trim (a trim cuts whole
        turns, or what follows the conversation's opening), the reply lost. Where the
        results were a user's question, CTX003 reports the two user messages."""
        transition, previous, messages = ctx.transition, ctx.previous, ctx.messages
        if transition is None or ctx.session.history_cut or transition.edited_at is not None:
            return
        for index in range(max(1, ctx.turn.shared), len(messages)):  # the shared prefix is carried whole
            if role_of(messages[index - 1]) != "tool" or role_of(messages[index]) != "user":
                continue
            cut = transition.cut_between(index - 1, index)
            if cut and previous.identities[cut[0]][0] == "assistant" and not transition.trimmed_between(index - 1, index, previous.identities):
                yield Violation(
                    f"the reply to the tool results before message {ctx.label(index)}, which turn {previous.number} sent (its message"
                    f" {previous.record.label(cut[0])}), is missing from this request, while the results and the message after it are kept",
                    key=("cut reply", previous.identities[cut[0]]), message_index=index, pointer=f"/messages/{index}", stands_at=index - 1,
                    evidence={"previous_line": previous.record.line, "cut_messages": cut},
                )

    @staticmethod
    def _reply_to_tool_results_missing(ctx) -> Iterable[Violation]:
        """Without a logged response: request N ended with tool results, so the model
        replied to them; request N+1 carries all of N and goes on with a user message."""
        previous, transition = ctx.previous, ctx.transition
        if not _ended_with_tool_results(previous) or transition.left_out(previous.identities) or transition.edited_at is not None:
            return
        slot = transition.new_from
        if slot < len(ctx.messages) and role_of(ctx.messages[slot]) == "user":
            yield Violation(
                f"the model's reply to the tool results that ended turn {previous.number} is missing: message {ctx.label(slot)} is the user's next message",
                key=("dropped", previous.number), message_index=slot, pointer=f"/messages/{slot}", stands_at=slot - 1,
                evidence={"previous_line": previous.record.line},
            )


def _results_kept(messages: list, call_ids: list[str]) -> tuple[tuple[str, int], ...]:
    """The lost call turn's results the request kept, as CTX001 sees them (results left
    without their call, named as such when the API names calls none), or CTX028 (a second
    result of an earlier call whose id the lost one reused): the same loss, reported
    once, as the turn lost."""
    answering = {*call_ids, *filter(None, map(unpaired_call_id, call_ids))}
    return tuple((code, index) for index, message in enumerate(messages)
                 if role_of(message) == "tool" and message.get("tool_call_id") in answering for code in ("CTX001", "CTX028"))


def _say_nothing_from(messages: list, slot: int) -> bool:
    """Whether the assistant messages from `slot` on, up to the next message of another
    role, say nothing (no text, no tool calls): an app that stores a reply's blocks as
    messages of their own (its thinking apart) keeps what it said in the next one."""
    end = next((index for index in range(slot, len(messages)) if role_of(messages[index]) != "assistant"), len(messages))
    return all(says_nothing(message) for message in messages[slot:end])


def _says(message: dict, reply: dict) -> bool:
    """Whether an assistant message carries the reply's text (besides tool calls of its own)."""
    return role_of(message) == "assistant" and comparable_text(text_of(message.get("content"))) == comparable_text(text_of(reply.get("content")))


def _unless_compacted(ctx, found: list[Violation]) -> list[Violation]:
    """The findings, unless this request compacted the history: what it left out is in the summary."""
    return [] if found and _compacts_what_came_before(ctx) else found


def _compacts_what_came_before(ctx) -> bool:
    """Whether this request puts a compaction summary (compaction_at) in place of the
    previous request's messages: a new one, with none of them carried after it. A summary
    carried on from before stands for nothing left out since, and one followed by messages
    the previous request sent (the ones it keeps) stands for none of those or what came
    after them: the previous reply among them."""
    summary = compaction_at(ctx.messages)
    if summary is None or ctx.turn.identities[summary] in ctx.previous.identities:
        return False
    return not ctx.transition.carries_after(summary)


def _ended_with_tool_results(turn) -> bool:
    last = ended_on(turn.identities)
    return last is not None and last[0] == "tool"


def _tool_exchange_dropped(identities: list[tuple], transition: Transition, messages: list) -> tuple[list[int], int] | None:
    """(indexes of the previous request's messages left out, index of the reply in the next
    request) when the next request carries everything of the previous one up to its last
    user message (and the system notes right after it), then the model's final reply with
    no assistant tool-call turn of the tool exchange that followed that message left
    before it, and goes on: the history kept only the text of the turn (an app that
    stores `content` alone)."""
    last_user, end = last_of(identities, "user"), conversation_end(identities)
    if last_user is None or identities[end - 1][0] != "tool":
        return None
    left_out = transition.left_out(identities)
    if not left_out or left_out[0] <= last_user:
        return None  # history cut before the exchange too: trimmed
    start = last_user + 1
    while start < end and identities[start][0] in STEERING_ROLES:
        start += 1  # a note sent right after the user's message (a system message in the conversation) goes with it
    exchange = range(start, end)
    if not all(identities[i][:2] == ("assistant", "calls") or identities[i][0] == "tool" for i in exchange):
        return None
    mapping = transition.mapping
    carried = {mapping[i] for i in exchange if mapping[i] is not None}
    slot = max(mapping[i] for i in range(last_user, start) if mapping[i] is not None) + 1
    while slot in carried:
        slot += 1
    reply = messages[slot] if slot < len(messages) else None
    if reply is None or role_of(reply) != "assistant" or tool_call_ids(reply) or slot + 1 >= len(messages):
        return None
    calls = [i for i in exchange if identities[i][0] == "assistant"]
    lost = [i for i in calls if mapping[i] is None]
    if not lost or any(mapping[i] is not None for i in calls if i > lost[0]):
        return None  # a later round kept after a lost one: history trimmed, not the turn stored as text
    return left_out, slot


def _newest_exchange_dropped(identities: list[tuple], transition: Transition) -> tuple[list[int], int] | None:
    """(indexes of the previous request's messages left out, index of the reply in the next
    request) when the previous request ended with a tool-call turn and its results, and the
    next one carries everything before that exchange and the model's reply to it, but not
    the exchange: the newest step overwritten by the next (a trim cuts the oldest)."""
    end = conversation_end(identities)
    if not end or identities[end - 1][0] != "tool" or transition.response_index is None:
        return None
    call = end - 1
    while call >= 0 and identities[call][0] == "tool":
        call -= 1
    if call < 0 or identities[call][:2] != ("assistant", "calls"):
        return None
    mapping, reply = transition.mapping, transition.response_position
    if reply is None or any(mapping[index] is not None for index in range(call, end)):
        return None
    # all before the exchange kept (a system prompt refreshed or not), the reply right after it
    if any(index < call for index in transition.left_out(identities)):
        return None
    if reply != max((position + 1 for position in mapping[:call] if position is not None), default=0):
        return None
    return list(range(call, end)), reply


def _opens_with_results_of(messages: list, call_ids: list[str]) -> bool:
    """Whether the request's conversation opens with a tool result for one of these calls."""
    first = next((m for m in messages if role_of(m) not in STEERING_ROLES), None)
    return first is not None and role_of(first) == "tool" and first.get("tool_call_id") in call_ids
