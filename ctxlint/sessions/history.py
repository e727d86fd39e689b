"""How one request relates to the one before it in its session."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ctxlint.chat import last_user_index, role_of, similar, text_of
from ctxlint.sessions.model import STEERING_ROLES, Turn

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
    adds_messages: bool = False
    edited_at: int | None = None  # see edited_user_message

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

    def left_out(self, identities: list[tuple]) -> list[int]:
        """Indexes of the previous request's conversation messages (`identities` are its
        own) that the next request left out; not its system prompt, which apps refresh."""
        return [i for i in range(self._sent) if self.mapping[i] is None and identities[i][0] not in STEERING_ROLES]

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
        """The next request adds nothing after the previous one: a resend or retry."""
        return self.response_index is not None and self.response_position is None and not self.adds_messages


def align(previous: Turn, following: Turn) -> Transition:
    """Greedy in-order match of the previous request's messages onto the next one's.

    The messages the next request shares with the previous one (the same objects) match
    themselves, so only what follows them is searched. A tool result whose text changed
    still matches by its call id: apps clear or shorten old tool output in place (a
    client-side compaction), and the result is still there."""
    shared = following.shared
    positions: dict[tuple, list[int]] = defaultdict(list)
    for index in range(shared, len(following.identities)):
        identity = following.identities[index]
        positions[identity].append(index)
        if identity[0] == "tool":
            positions[identity[:2]].append(index)
    sources = previous.identities[shared:]
    response_index = None
    if previous.response_message is not None:
        response_index = len(previous.identities)
        sources.append(previous.response_identity())
    mapping: list[int | None] = list(range(shared))
    cursor = shared - 1
    for identity in sources:
        found = next((p for p in positions.get(identity, ()) if p > cursor), None)
        if found is None and identity is not None and identity[0] == "tool":
            found = next((p for p in positions.get(identity[:2], ()) if p > cursor), None)
        mapping.append(found)
        if found is not None:
            cursor = found
    new_from = cursor + 1
    return Transition(tuple(mapping), response_index, new_from, adds_messages=new_from < len(following.identities),
                      edited_at=edited_user_message(previous, following, mapping))


def edited_user_message(previous: Turn, following: Turn, mapping: list[int | None]) -> int | None:
    """k when the next request is the previous one's first k messages followed by a new text
    of its user message k, and nothing else: a chat UI's edit-and-resend, which branches
    the conversation there (what came after message k, the response too, is left behind)."""
    edited = len(following.identities) - 1
    if not 0 <= edited < len(previous.identities) or len(previous.messages) != len(previous.identities):
        return None  # nothing to edit, or the previous request was slimmed (bodies let go)
    if any(mapping[i] != i for i in range(edited)) or any(p is not None for p in mapping[edited:]):
        return None
    old, new = previous.messages[edited], following.messages[edited]
    if role_of(old) != "user" or role_of(new) != "user":
        return None
    return edited if similar(text_of(old.get("content")), text_of(new.get("content"))) else None
