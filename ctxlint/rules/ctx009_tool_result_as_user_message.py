from __future__ import annotations

import re
from typing import Iterable

import orjson

from ctxlint.chat import resume_at_last_calls, role_of, text_of, tool_call_ids
from ctxlint.rules.base import Rule, Violation


def answered_as_user(messages: list[dict], index: int) -> bool:
    """The assistant tool-call message at index is followed directly by a user message, and
    no tool message answers any of its calls before the next assistant message (a result
    that comes after a user's interjection is late, not sent as a user turn: CTX002)."""
    if index + 1 >= len(messages) or role_of(messages[index + 1]) != "user":
        return False
    ids = set(tool_call_ids(messages[index]))
    for later in messages[index + 2:]:
        role = role_of(later)
        if role == "assistant":
            break
        if role == "tool" and later.get("tool_call_id") in ids:
            return False
    return True


def results_sent_as_user(messages: list[dict], index: int) -> list[tuple[int, str]]:
    """(user message index, call id) for the calls of the assistant tool-call message at
    index that a user message among its tool messages stands for, when tool messages
    answer some of them: one that carries the call's `tool_call_id`, or whose text is a
    JSON object or array (data, not what a user writes), taken in call order. A user's
    words there ("and?") end the results: CTX002 reports the calls left unanswered."""
    answered = answering_run(messages, index)
    return [(position, call_id) for position, call_id in answered if role_of(messages[position]) == "user"]


def answering_run(messages: list[dict], index: int) -> list[tuple[int, str | None]]:
    """(message index, call id) for the messages right after the assistant tool-call
    message at index that answer its calls: its tool messages, and among them, when there
    are any, the user messages that stand for a result (results_sent_as_user)."""
    unanswered = tool_call_ids(messages[index])
    run: list[tuple[int, str | None]] = []
    position = index + 1
    while position < len(messages):
        message = messages[position]
        if role_of(message) == "tool":
            call_id = message.get("tool_call_id")
            if call_id in unanswered:
                unanswered.remove(call_id)
        elif role_of(message) == "user" and run and unanswered and _stands_for_a_result(messages, position, unanswered):
            call_id = message.get("tool_call_id") if message.get("tool_call_id") in unanswered else unanswered[0]
            unanswered.remove(call_id)
        else:
            break
        run.append((position, call_id))
        position += 1
    return run


def answered_under_other_ids(messages: list[dict], caller: int) -> bool:
    """Whether every call of the assistant message at `caller` that no tool message answers
    has a result of its own all the same, among the tool messages right after it, naming
    another id or none (an id rewritten or left out): one defect per result (CTX001,
    CTX010), not also the calls unanswered (CTX002)."""
    calls = tool_call_ids(messages[caller])
    run = [position for position, _ in answering_run(messages, caller) if role_of(messages[position]) == "tool"]
    named = {messages[position].get("tool_call_id") for position in run}
    unanswered = [call_id for call_id in calls if call_id not in named]
    return bool(unanswered) and len(unanswered) == sum(messages[position].get("tool_call_id") not in calls for position in run)


def user_stand_ins(messages: list[dict], index: int) -> list[int]:
    """The user messages that stand for results of the tool-call turn at `index`: after a
    turn answered by user messages, as many as it made calls (those that follow each other
    right after it); after its tool messages, those that stand for the results they leave
    out (results_sent_as_user)."""
    if not tool_call_ids(messages[index]):
        return []  # no call, no result to stand for (most assistant messages: checked first)
    if not answered_as_user(messages, index):
        return [position for position, _ in results_sent_as_user(messages, index)]
    positions = []
    for position in range(index + 1, min(index + 1 + len(tool_call_ids(messages[index])), len(messages))):
        if role_of(messages[position]) != "user":
            break
        positions.append(position)
    return positions


def _question_sent_with_the_results(ctx, last: int) -> tuple[tuple[str, int], ...]:
    """The user's next words right after the results sent as user messages (`last` the last
    of them), both new in this request: as tool messages, the results and the words would be
    a legal order, so the two user messages are this defect (CTX003 sees them), not a reply
    lost between. Results sent before, and replied to, are another matter: that reply lost."""
    messages = ctx.messages
    if last + 1 >= len(messages) or role_of(messages[last]) != "user" or role_of(messages[last + 1]) != "user":
        return ()
    if ctx.previous is not None and ctx.turn.identities[last] in set(ctx.previous.identities):
        return ()
    return (("CTX003", last),)


def _stands_for_a_result(messages: list[dict], position: int, unanswered: list[str]) -> bool:
    """Whether the user message at `position`, after tool messages that leave calls open,
    is one of their results: it carries an open call's `tool_call_id`, reads as a tool's
    output (data, a labelled result, a terse reading such as "40 C"), or a tool message
    after it (past more such user messages) answers a call still open."""
    message = messages[position]
    if message.get("tool_call_id") in unanswered:
        return True
    text = text_of(message.get("content")).strip()
    if _data(text) or _LABELLED_OUTPUT.match(text) or _terse_reading(text):
        return True
    for later in messages[position + 1:]:
        if role_of(later) != "user":
            return role_of(later) == "tool" and later.get("tool_call_id") in unanswered
    return False


# "Tool: weather\nResult: 22C", "Observation: …", "Result of add: 6", "Error: timed out", "Traceback (…):": how apps
# label an output they send as text, and how a tool reports its failure
_LABELLED_OUTPUT = re.compile(r"(?i)(?:tool|result|observation|output|function|error|exception|traceback|stdout|stderr)\b[^:\n]{0,40}:")


def _terse_reading(text: str) -> bool:
    """A few words with a number and no question ("40 C", "6", "Rome: 24C, sun"): an
    output, not what a user writes in the middle of a tool exchange."""
    return bool(text) and len(text.split()) <= 6 and "?" not in text and any(character.isdigit() for character in text)


def _data(text: str) -> bool:
    """Whether a text is a JSON object or array."""
    text = text.strip()
    if not text.startswith(("{", "[")):
        return False
    try:
        return isinstance(orjson.loads(text), (dict, list))
    except orjson.JSONDecodeError:
        return False


class ToolResultAsUserMessage(Rule):
    """
    ## What it does
    Flags an assistant message with native `tool_calls` that is followed directly by a
    `user` message, with no `tool` message answering any of its calls: the tool output
    was sent as a user turn instead of a `tool` message bound by `tool_call_id`. Where
    tool messages answer some of the calls, a user message right after them stands for
    the result of one left unanswered when it carries that call's `tool_call_id`, reads
    as a tool's output (a JSON object or array, a labelled result such as "Result: 22C",
    a tool's failure such as "Error: timed out" or a traceback, or a few words with a
    number and no question, such as "40 C"), or comes before a
    tool message that answers another of them; otherwise (the user's words: "and
    Paris?") CTX002 reports the calls left without a result. The user's next words sent
    with such results, right after them, are this defect too, not two user messages in a
    row (CTX003): as tool messages, results then the user's words are a legal order.

    ## Why is this bad?
    The model sees its call go unanswered and a user saying something that looks like
    data. It cannot tell which call the text answers, often repeats the call, and
    strict providers reject the request because the calls have no results.
    Prompt-engineered tool calling (tool calls as text in `content`, no `tool_calls`
    field) is not judged: there, results as user messages are the protocol.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\\"q\\": \\"nvda\\"}"}}]}
    {"role": "user", "content": "Tool: search\\nResult: NVDA 181.2"}
    ```

    Use instead:
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": "NVDA 181.2"}
    ```
    """

    code = "CTX009"
    name = "tool-result-as-user-message"
    severity = "error"
    recurs = True
    recurs_on = ("tool",)
    remediation = "Send each tool's output as a tool message with the tool_call_id of the call it answers."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        for index in range(resume_at_last_calls(messages, ctx.unchanged(self)), len(messages)):
            message = messages[index]
            if role_of(message) != "assistant" or not tool_call_ids(message):
                continue
            if answered_as_user(messages, index):
                ids = tool_call_ids(message)
                yield Violation(
                    f"the calls of assistant message {ctx.label(index)} ({', '.join(ids)}) are answered by a user message, not tool messages",
                    key=tuple(ids), message_index=index + 1, tool_call_id=ids[0], pointer=f"/messages/{index + 1}", stands_at=index,
                    evidence={"tool_call_ids": ids} if len(ids) > 1 else {},
                    shows_as=_question_sent_with_the_results(ctx, user_stand_ins(messages, index)[-1]),
                )
                continue
            sent_as_user = results_sent_as_user(messages, index)
            if sent_as_user:
                first, ids = sent_as_user[0][0], [call_id for _, call_id in sent_as_user]
                where = ", ".join(ctx.label(position) for position, _ in sent_as_user)
                yield Violation(
                    f"the result of call {ids[0]} of assistant message {ctx.label(index)} is sent as a user message ({where}), not a tool message"
                    if len(ids) == 1 else
                    f"the results of calls {', '.join(ids)} of assistant message {ctx.label(index)} are sent as user messages ({where}), not tool messages",
                    key=tuple(ids), message_index=first, tool_call_id=ids[0], pointer=f"/messages/{first}", stands_at=first - 1,
                    evidence={"tool_call_ids": ids} if len(ids) > 1 else {},
                    shows_as=_question_sent_with_the_results(ctx, sent_as_user[-1][0]),
                )
