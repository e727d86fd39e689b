"""A session is the ordered list of requests of one conversation; a turn is one request."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxlint.chat import SAID_MEMBERS, SILENT_PARTS, last_user_index, message_identity, role_of, text_of, tool_call_ids
from ctxlint.ingest.record import Record, Response
from ctxlint.request_terms import PURPOSE_MEMBERS

# the messages that set up a conversation rather than say something in it: the system
# prompt (developer for OpenAI's newer models), and Moonshot's role "cache" message, first,
# which stands for a cached prefix (its prompt and tools)
STEERING_ROLES = ("system", "developer", "cache")


def last_of(identities: list[tuple], role: str) -> int | None:
    """Index of the last message of this role among a request's message identities, or None."""
    return next((index for index in range(len(identities) - 1, -1, -1) if identities[index][0] == role), None)


def prompts_opening(messages: list[dict[str, Any]]) -> int:
    """How many steering messages a request opens with: its agent's prompt. A state or
    reminder message appended after the conversation is no agent's prompt."""
    return next((index for index, message in enumerate(messages) if role_of(message) not in STEERING_ROLES), len(messages))


def conversation_end(identities: list[tuple], end: int | None = None) -> int:
    """How many of a request's messages the conversation takes up: all but the steering
    messages it ends with (a state or reminder message an agent appends to each request and
    replaces at the next). Given `end`, of its first `end` messages."""
    end = len(identities) if end is None else end
    while end and identities[end - 1][0] in STEERING_ROLES:
        end -= 1
    return end


def ended_on(identities: list[tuple]) -> tuple | None:
    """The message a request's conversation ends on (before a state message it appends after
    it), or None."""
    end = conversation_end(identities)
    return identities[end - 1] if end else None


def opening_kind(role: str | None) -> str | None:
    """What a message is among what a session must keep sending (its first system prompt,
    its first user message): "system" for a system or developer message (OpenAI's newer
    models take the system prompt as developer), else its role."""
    return "system" if role in STEERING_ROLES else role


@dataclass(slots=True, eq=False)
class Turn:
    number: int  # 1-based position in the session
    record: Record
    identities: list[tuple] = field(default_factory=list)
    shared: int = 0  # leading messages that are the previous request's own objects
    _response_identity: tuple | None = None
    # (what was measured: a token counter's name, or "characters"; its running sum over the messages), when measured
    running_sums: tuple[str, list[int]] | None = None
    # content_hash, kept open to go on from: the hash of the identities so far, and the
    # previous turn's when this one extends its identities
    _digest: Any = None
    _digest_base: Any = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.record.messages

    @property
    def response_message(self) -> dict[str, Any] | None:
        response = self.record.response
        return response.message if response is not None else None

    def response_identity(self) -> tuple | None:
        if self._response_identity is None and self.response_message is not None:
            self._response_identity = message_identity(self.response_message)
        return self._response_identity

    def last_user_text(self) -> str | None:
        """The text of the turn's last user message."""
        index = last_user_index(self.messages)
        return text_of(self.messages[index].get("content")) if index >= 0 else None

    def slimmed(self) -> "Turn":
        """The turn as what the next request is judged against needs it, bulk let go: its
        identities; of its messages the roles and texts, tool results by their call id alone
        (what tells a cut from a summary, an edit or a message stored in another form), its
        model, thinking switch and purpose (request_terms.purpose: what tells a side
        request), its time; of its response the status, finish reason, text and tool call
        ids. Its message objects are gone, so the next request is judged from its start."""
        record = self.record
        response = record.response
        slim_response = None
        if response is not None:
            message = response.message
            slim_message = None
            if message is not None:
                self.response_identity()
                slim_message = _slim_reply(message)
            slim_response = Response(slim_message, response.finish_reason, None, response.error, response.status, response.model, response.id)
        request: dict[str, Any] = {"messages": [_slim_message(message) for message in record.messages]}
        request.update((member, record.request[member]) for member in ("model", "thinking", *PURPOSE_MEMBERS) if member in record.request)
        slim = Record(record.file, record.line, record.shape, request, slim_response, record.session_key, seq=record.seq,
                      timestamp=record.timestamp, reasoning_recorded=record.reasoning_recorded, settings_recorded=record.settings_recorded)
        return Turn(self.number, slim, self.identities, self.shared, self._response_identity)

    def content_hash(self) -> str:
        """short_hash of the turn's identities (each as a list of str), hashed on from the
        previous turn's when it was taken there: a finding's fingerprint is then not a
        walk over the whole history of every request."""
        if self._digest is None:
            digest, start = self._digest_base, self.shared
            if digest is None:
                digest, start = hashlib.blake2b(b"[", digest_size=8), 0
            else:
                digest = digest.copy()
            for index in range(start, len(self.identities)):
                digest.update((b"," if index else b"") + orjson.dumps(list(map(str, self.identities[index]))))
            self._digest, self._digest_base = digest, None
        final = self._digest.copy()
        final.update(b"]\x00")
        return final.hexdigest()

    def conversation_identities(self) -> list[tuple[int, tuple]]:
        """(message index, identity) of the messages that carry the conversation (not system)."""
        return [(i, ident) for i, ident in enumerate(self.identities) if role_of(self.messages[i]) not in STEERING_ROLES]


def _slim_reply(message: dict[str, Any]) -> dict[str, Any]:
    """A logged reply as a slimmed turn keeps it: its role, text and tool call ids, and what
    else it said (a legacy function call, a refusal, the types of parts that are not text),
    so that whether it said anything (chat.says_nothing) reads as before."""
    content = message.get("content")
    parts = [{"type": part.get("type")} for part in content if isinstance(part, dict) and part.get("type") not in SILENT_PARTS] \
        if isinstance(content, list) else []
    slim = {"role": message.get("role"), "content": [{"type": "text", "text": text_of(content)}, *parts] if parts else text_of(content),
            "tool_calls": [{"id": call_id} for call_id in tool_call_ids(message)]}
    slim.update({member: True for member in SAID_MEMBERS if message.get(member)})  # that it said it is what is read
    return slim


def _slim_message(message: Any) -> dict[str, Any]:
    """A message as a slimmed turn keeps it: its role and text, a tool result its call id."""
    role = role_of(message)
    if role == "tool":
        return {"role": role, "tool_call_id": message.get("tool_call_id")}
    return {"role": role, "content": text_of(message.get("content")) if type(message) is dict else ""}


def make_turn(number: int, record: Record, previous: Turn | None = None) -> Turn:
    """The turn with its message identities; messages it shares with the previous request
    (the same objects, as ingest shares them) take their identity from it."""
    messages = record.messages
    shared = shared_prefix(previous.messages, messages) if previous is not None else 0
    identities = previous.identities[:shared] if shared else []
    identities += [message_identity(m) for m in messages[shared:]]
    turn = Turn(number, record, identities, shared)
    if previous is not None and previous._digest is not None and shared == len(previous.identities):
        turn._digest_base = previous._digest
    return turn


def shared_prefix(before: list[Any], after: list[Any]) -> int:
    """How many leading messages `after` shares, as the same objects, with `before`."""
    limit = min(len(before), len(after))
    count = 0
    while count < limit and after[count] is before[count]:
        count += 1
    return count


@dataclass(slots=True, eq=False)
class Session:
    id: str
    file: str
    turns: list[Turn]
    explicit_key: bool = False

    @property
    def first(self) -> Turn:
        return self.turns[0]
