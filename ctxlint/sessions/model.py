"""A session is the ordered list of requests of one conversation; a turn is one request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxlint.chat import message_identity, role_of
from ctxlint.ingest.record import Record

STEERING_ROLES = ("system", "developer")


@dataclass(slots=True, eq=False)
class Turn:
    number: int  # 1-based position in the session
    record: Record
    identities: list[tuple] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.record.messages

    @property
    def response_message(self) -> dict[str, Any] | None:
        response = self.record.response
        return response.message if response is not None else None

    def conversation_identities(self) -> list[tuple[int, tuple]]:
        """(message index, identity) of the messages that carry the conversation (not system)."""
        return [(i, ident) for i, ident in enumerate(self.identities) if role_of(self.messages[i]) not in STEERING_ROLES]


def make_turn(number: int, record: Record) -> Turn:
    return Turn(number, record, [message_identity(m) for m in record.messages])


@dataclass(slots=True, eq=False)
class Session:
    id: str
    file: str
    turns: list[Turn]
    explicit_key: bool = False

    @property
    def first(self) -> Turn:
        return self.turns[0]
