"""How one request relates to the one before it in its session."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ctxlint.chat import (call_function, comparable_text, edited_message, last_user_index, message_identity_of, role_of, tagged_blocks_only,
                          text_of, tool_call_ids, tool_calls_of)
from ctxlint.ingest.call_ids import unpaired_form
from ctxlint.request_terms import call_kind, declared_tool_names, other_kinds
from ctxlint.sessions.model import STEERING_ROLES, Turn, last_of

SUMMARY_ROLES = ("system", "developer", "user")  # the roles a summary of cut history is sent in


@dataclass(slots=True, frozen=True)
class Transition:
    """previous request (+ its logged response) mapped onto the next request.

    mapping[i] is the index in the next request of the previous request's message i
    (the logged response is the last entry, index len(previous messages)), or None.
    """

    mapping: tuple[int | None, ...]
    response_index: int | None  # position of the logged response in `mapping`, if logged
    new_from: int  # first index of the next request after everything matched
    adds_messages: bool = False  # the next request holds messages the previous one did not send
    # the next request ends on the message the previous one ended on, as it was (not a tool
    # result of the same call id with new text: a call id the model returned again)
    ends_alike: bool = False
    edited_at: int | None = None  # see edited_user_message
    asked_instead: int | None = None  # see asked_in_place_of_last
    stored: tuple[int, int] | None = None  # see stored_user_message: (its index before, its index now)

    @property
    def response_position(self) -> int | None:
        """Index in the next request of the previous request's logged response, if carried."""
        return self.mapping[self.response_index] if self.response_index is not None else None

    @property
    def _sent(self) -> int:
        """How many entries of `mapping` are the previous request's messages (not its response)."""
        return self.response_index if self.response_index is not None else len(self.mapping)

    @property
    def cut(self) -> bool:
        """The next request left out some of the previous request's messages."""
        return None in self.mapping[:self._sent]

    def cut_between(self, first: int, second: int) -> list[int]:
        """The previous request's messages (their indexes there) that stood between the
        messages now at `first` and `second`, when it sent both and this request left out
        what was between them (history trimmed from the middle); else none."""
        sent = self.mapping[:self._sent]
        if first not in sent or second not in sent:
            return []
        return list(range(sent.index(first) + 1, sent.index(second)))

    def sent_together(self, first: int, second: int) -> bool:
        """Whether the previous request sent the messages now at `first` and `second` next to each other."""
        sent = self.mapping[:self._sent]
        return first in sent and second in sent and sent.index(second) == sent.index(first) + 1

    def trimmed_between(self, first: int, second: int, identities: list[tuple]) -> bool:
        """Whether what the previous request (whose own `identities` these are) sent between
        the messages now at `first` and `second` was cut as a trim of the history cuts:
        right after the conversation's opening (no reply before it), or whole turns (a user
        message among them). A cut of the reply alone to the message at `first` is not one:
        that reply was lost."""
        cut = self.cut_between(first, second)
        return bool(cut) and (not any(identity[0] == "assistant" for identity in identities[:cut[0] - 1])
                              or any(identities[index][0] == "user" for index in cut))

    @property
    def last_carried(self) -> int:
        """Index in the next request of the last of the previous request's messages it carries, or -1."""
        return max((index for index in self.mapping[:self._sent] if index is not None), default=-1)

    def cut_before(self, position: int, identities: list[tuple]) -> bool:
        """Whether this request left out conversation messages the previous one (whose own
        `identities` these are) sent before the first of its messages this request carries
        after `position`, or anywhere when it carries none after it: what a message put at
        `position` could stand in place of."""
        sent = self.mapping[:self._sent]
        until = min((k for k, index in enumerate(sent) if index is not None and index > position), default=len(sent))
        return any(k < until for k in self.left_out(identities))

    def carries_after(self, position: int) -> bool:
        """Whether the next request carries a message the previous one sent after `position`."""
        return any(index is not None and index > position for index in self.mapping[:self._sent])

    def left_out(self, identities: list[tuple]) -> list[int]:
        """Indexes of the previous request's conversation messages (`identities` are its
        own) that the next request left out; not its system prompt, which apps refresh."""
        return [i for i in range(self._sent) if self.mapping[i] is None and identities[i][0] not in STEERING_ROLES]

    def first_stored(self, previous: list[tuple], identities: list[tuple]) -> list[int]:
        """Indexes of the messages the next request (`identities`) holds as stored history
        for the first time: the previous request's (`previous`) newest input and its logged
        reply, carried on, and whatever stands before the next request's newest input that
        the previous request did not send (a message stored in another form)."""
        carried = [self.mapping[i] for i in range(_newest_input(previous), self._sent)]
        carried.append(self.response_position)
        mapped = set(self.mapping)
        stored = {index for index in carried if index is not None}
        stored.update(index for index in range(_newest_input(identities)) if index not in mapped)
        return sorted(stored)

    def put_in(self, messages: list) -> list[int]:
        """Indexes of the messages the next request put into its history rather than
        carried or appended: not the previous request's, and before a carried message, or
        a system/user message ahead of the request's last user message (an assistant
        message there may be the previous request's unlogged response). A summary that
        replaces cut history stands there."""
        carried = set(self.mapping)
        last_user = last_user_index(messages)
        return [index for index, message in enumerate(messages) if index not in carried and (
            (index < self.new_from and role_of(message) != "tool") or (index < last_user and role_of(message) in SUMMARY_ROLES))]

    @property
    def is_repeat(self) -> bool:
        """The next request adds nothing after the previous one and ends as it did: a resend or retry."""
        return self.response_index is not None and self.response_position is None and not self.adds_messages and self.ends_alike


def _newest_input(identities: list[tuple]) -> int:
    """Where a request's newest input starts: right after its last assistant message, or at
    its last user message when that comes later (a history that lost its replies)."""
    assistant, user = last_of(identities, "assistant"), last_of(identities, "user")
    return max(0 if assistant is None else assistant + 1, user or 0)


def align(previous: Turn, following: Turn) -> Transition:
    """Greedy in-order match of the previous request's messages onto the next one's.

    The messages the next request shares with the previous one (the same objects) match
    themselves, so only what follows them is searched. A tool result whose text changed
    still matches by its call id: apps clear or shorten old tool output in place (a
    client-side compaction), and the result is still there; so does a result left unpaired
    when the call it answers, one the API named none, was cut (ingest.call_ids)."""
    shared = following.shared
    positions: dict[tuple, list[int]] = defaultdict(list)
    for index in range(shared, len(following.identities)):
        identity = following.identities[index]
        positions[identity].append(index)
        if identity[0] == "tool":
            positions[identity[:2]].append(index)
    sources = previous.identities[shared:]
    response_index = None
    continued = _continued_reply(previous) if shared < len(previous.identities) else None
    if continued not in positions:
        continued = None
    if previous.response_message is not None:
        response_index = len(previous.identities)
        if continued is not None:
            sources[-1] = continued  # the prefill and its continuation, stored as one message
        else:
            sources.append(previous.response_identity())
    mapping: list[int | None] = list(range(shared))
    cursor = shared - 1
    for at, identity in enumerate(sources):
        found = next((p for p in positions.get(identity, ()) if p > cursor), None)
        if found is None and identity is not None and identity[0] == "tool":
            found = next((p for p in positions.get(identity[:2], ()) if p > cursor), None)
            if found is None:  # the result of a call without an id, the call cut since
                found = next((p for p in positions.get(unpaired_form(identity), ()) if p > cursor), None)
        if found is not None and found > cursor + 1 and not _among_results(following.identities, cursor + 1, found) \
                and _passes_over_later(sources, at, following.identities, cursor, found):
            found = None  # the message was cut, and one like it comes later (a tool call id used again)
        if found is None and identity is not None and identity[0] == "tool":
            found = _result_placed_earlier(positions, identity, following.identities, cursor, mapping)
            if found is not None:
                mapping.append(found)  # the cursor stays at the later result it passed over
                continue
        mapping.append(found)
        if found is not None:
            cursor = found
    if continued is not None:
        mapping.append(mapping[-1])  # the reply stands where its prefill does
    new_from = cursor + 1
    stored = stored_user_message(previous, following, mapping)
    if stored is not None:
        mapping[stored[0]] = stored[1]
    carried = len(set(mapping) - {None})  # messages put in before the last one carried are added too
    branch = _branch(previous, following, mapping)
    asked_instead = asked_in_place_of_last(previous, branch)
    return Transition(tuple(mapping), response_index, new_from, adds_messages=carried < len(following.identities),
                      ends_alike=following.identities[-1:] == previous.identities[-1:],
                      edited_at=edited_user_message(previous, following, branch, asked_instead), asked_instead=asked_instead, stored=stored)


def _continued_reply(previous: Turn) -> tuple | None:
    """When the previous request ended with an assistant message that its logged reply
    continued (a prefill: Anthropic's, DeepSeek's prefix completion), the identity of the
    one message an app stores for the two: their texts joined, the reply's tool calls."""
    reply = previous.response_message
    if reply is None or not previous.identities or previous.identities[-1][0] != "assistant":
        return None
    prefill = previous.messages[-1]
    return message_identity_of({"role": "assistant", "content": text_of(prefill.get("content")) + text_of(reply.get("content")),
                                "tool_calls": reply.get("tool_calls")})


def _among_results(identities: list[tuple], start: int, end: int) -> bool:
    """Whether the messages from `start` up to `end` are all tool results: the results of
    one set of parallel calls, which the API pairs by call id, in whatever order they come."""
    return all(identities[position][0] == "tool" for position in range(start, end))


def _result_placed_earlier(positions: dict, identity: tuple, identities: list[tuple], cursor: int,
                           mapping: list[int | None]) -> int | None:
    """Where the next request put a tool result among the results just matched, before the
    one the cursor is at: parallel results sent back in another order than before."""
    for key in (identity, identity[:2]):
        for position in positions.get(key, ()):
            if position <= cursor and _among_results(identities, position, cursor + 1) and position not in mapping:
                return position
    return None


def _passes_over_later(sources: list, at: int, identities: list[tuple], cursor: int, found: int) -> bool:
    """Whether matching source `at` at `found` would pass over a message that a later source
    is: then the source was left out, and what it matched is a later message like it (a
    call id the model returned again, found where its new call stands)."""
    later = set(sources[at + 1:])
    return any(identities[position] in later for position in range(cursor + 1, found))


def stored_user_message(previous: Turn, following: Turn, mapping: list[int | None]) -> tuple[int, int] | None:
    """(u, j) when the previous request's last user message u is not carried as sent, and in
    its place (right after what is carried before it, right before what is carried after
    it: the reply, the tool exchange) the next request has a user message j whose text
    holds u's, or is part of it while the rest of u stands in tags of its own
    (`<environment_details>…</environment_details>`) or wraps the next request's newest
    user message again (a line of it). Apps send the newest user message wrapped (retrieved
    context, environment details, instructions for this turn) and keep the user's own words
    in the history: that message is carried, as the app stores it."""
    u = last_of(previous.identities, "user")
    if u is None or mapping[u] is not None:
        return None
    j = 1 + max((p for p in mapping[:u] if p is not None), default=-1)
    identities = following.identities
    if j >= len(identities) or identities[j][0] != "user" or j in mapping:
        return None
    if u + 1 < len(mapping):
        if mapping[u + 1] != j + 1:
            return None  # what came after it (the reply, the tool exchange) is not right after it
    elif j + 1 >= len(identities) or identities[j + 1][0] != "assistant":
        return None  # no reply logged: the one the next request carries must follow it
    sent_text = previous.last_user_text()
    if sent_text is None:
        return None
    kept_text = text_of(following.messages[j].get("content"))
    sent, kept = comparable_text(sent_text), comparable_text(kept_text)
    if not kept:
        return None
    if sent in kept:
        return u, j  # kept whole (spaced otherwise, or more said around it)
    if kept not in sent:
        return None
    # kept shorter: the words around it were the app's wrapping of the newest message, not
    # the user's own words cut (a constraint lost): blocks in tags of their own
    # (<environment_details>…</environment_details>), or lines the next request's newest
    # message is wrapped in again
    if all(tagged_blocks_only(part) for part in sent.split(kept, 1) if part.strip()):
        return u, j
    newest = last_user_index(following.messages)
    wrapping = _lines(sent_text) - _lines(kept_text)
    return (u, j) if newest > j and wrapping & _lines(text_of(following.messages[newest].get("content"))) else None


def _lines(text: str) -> set[str]:
    return {" ".join(line.split()) for line in text.splitlines()} - {""}


def _branch(previous: Turn, following: Turn, mapping: list[int | None]) -> int | None:
    """k when the next request is the previous one's first k messages followed by a user
    message in place of its message k, and nothing else: the conversation branched there
    (what came after message k, the response too, is left behind)."""
    branch = len(following.identities) - 1
    if not 0 <= branch < len(previous.identities):
        return None  # nothing in its place
    if set(mapping[:branch]) != set(range(branch)) or any(p is not None for p in mapping[branch:]):
        return None  # not the same messages before it (parallel results may come back reordered)
    return branch if role_of(following.messages[branch]) == "user" else None


def asked_in_place_of_last(previous: Turn, branch: int | None) -> int | None:
    """The branch point when it is the previous request's last message, a user's or a
    system message asked after an exchange: the previous request asked something of the
    history that the next one asks no more."""
    if branch is None or branch != len(previous.identities) - 1 or role_of(previous.messages[branch]) not in ("user", *STEERING_ROLES):
        return None
    return branch if any(identity[0] == "assistant" for identity in previous.identities[:branch]) else None


def edited_user_message(previous: Turn, following: Turn, branch: int | None, asked_instead: int | None) -> int | None:
    """The branch point (_branch) when the conversation goes on from there: a new text of
    the user message k is a chat UI's edit-and-resend. Another message asked in place of
    the previous request's last one (asked_in_place_of_last) is a branch too when the two
    requests were made to other models or for other purposes (request_terms.call_kind):
    the previous one was a side request on the history (an instruction put after it, with
    a response format or a tool of its own, or to a smaller model: suggest follow-up
    questions, name the chat), which the conversation goes on without. Made alike, the
    two are one conversation that lost the exchange."""
    if branch is None:
        return None
    old, new = previous.messages[branch], following.messages[branch]
    if role_of(old) == "user" and edited_message(text_of(old.get("content")), text_of(new.get("content"))):
        return branch
    return branch if asked_instead is not None and other_kinds(call_kind(previous.record), call_kind(following.record)) else None


def side_request_on(previous: Turn, following: Turn, transition: Transition) -> bool:
    """Whether the next request is a side request on the previous one's history as it
    stood: made to another model or for another purpose, it carries all the previous one
    sent, in place, and more, but not its reply, which made tool calls; and it neither
    answers them nor offers the tools called (a progress line asked of a smaller model
    while the agent's tool loop goes on). It cannot be the next step of that exchange: the
    conversation goes on from the previous request."""
    reply = previous.response_message
    if reply is None or transition.response_position is not None or not transition.adds_messages:
        return False
    if transition.mapping[:transition.response_index] != tuple(range(transition.response_index)):
        return False
    if not other_kinds(call_kind(previous.record), call_kind(following.record)):
        return False
    ids = tool_call_ids(reply)
    if not ids:
        return False  # a text reply left out is the conversation going on without it
    called = {name for name in (call_function(call)[0] for call in tool_calls_of(reply)) if name is not None}
    answered = any(role_of(message) == "tool" and message.get("tool_call_id") in ids for message in following.messages)
    return not answered and not called & declared_tool_names(following.record.request)
