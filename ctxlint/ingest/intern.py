"""One object per distinct message: a log re-sends the whole history in every request, so
most messages of a request are byte-equal to messages already read. Sharing them keeps
memory near the log's distinct content, and lets per-message work (identity, tokens,
schema) be done once per message instead of once per request."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import orjson

INTERN_LIMIT = 16_000  # distinct messages kept for sharing; past it, the oldest are forgotten


class MessageInterner:
    def __init__(self, limit: int = INTERN_LIMIT) -> None:
        self._canonical: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._limit = limit

    def intern(self, messages: list[Any], start: int = 0) -> None:
        """Put, in place, the one object kept for its content in each message's place from
        `start` (the messages before it are shared already: ingest.reuse)."""
        for index in range(start, len(messages)):
            message = messages[index]
            if not isinstance(message, dict):
                continue
            try:
                digest = hashlib.blake2b(orjson.dumps(message), digest_size=16).digest()
            except TypeError:  # a value orjson cannot write back: keep the message as read
                continue
            canonical = self._canonical.get(digest)
            if canonical is None:
                self._canonical[digest] = message
                if len(self._canonical) > self._limit:
                    self._canonical.popitem(last=False)
            else:
                messages[index] = canonical


INTERNER = MessageInterner()
