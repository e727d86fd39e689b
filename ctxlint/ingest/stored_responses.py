"""Requests that go on from a stored response (the Responses API's `previous_response_id`),
rebuilt into the whole conversation the provider ran them on.

Such a request sends only its new input items; the provider prepends what the response
it names ran on, less that response's `instructions` (they are not carried over), and
that response's output. When the log holds that response, ctxlint does the same, so the
request is linted as the model saw it. The messages taken from the stored conversation
are named by the response they came with and point at `/previous_response_id`; what the
request itself sent keeps its place in `/input`.

Only a response of the same session (the same key, or both without one) is looked for,
among the last STORED_WINDOW replies the log gave to Responses API requests: a worker of
`--jobs` holds whole sessions, so it joins what one process joins, and memory stays
bounded. A request whose response is not there is counted as skipped, with that reason.
A reply to a request sent with `store: false` was not stored by the provider: a request
that goes on from it is joined all the same (what the app meant to send) and marked
(Record.unstored_reply_at), for CTX040 to report unless its own reply shows a host that
held it (a transport's cache of its own).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

from ctxlint.ingest.openai_responses import INSTRUCTIONS
from ctxlint.ingest.record import Record, Skipped
from ctxlint.ingest.source_map import Origin

# How many of the latest replies a request may go on from (each holds its conversation:
# references to messages other records share, not copies)
STORED_WINDOW = 1024
NOT_HELD = (f"not linted: a Responses API request that goes on from a stored response (previous_response_id) that is not among"
            f" the log's last {STORED_WINDOW:,} replies, in its session, so its history cannot be rebuilt")


class StoredResponses:
    """The conversations of the latest logged responses, by response id, and the requests
    that go on from them rebuilt."""

    def __init__(self, window: int = STORED_WINDOW) -> None:
        self.window = window
        # response id -> (session key, the conversation the response ran on and its output,
        # where its request was, if the provider did not store it)
        self._held: OrderedDict[str, tuple[str | None, tuple[dict[str, Any], ...], tuple[str, int] | None]] = OrderedDict()

    def rebuilt(self, record: Record) -> Record | Skipped:
        """The record as the provider ran it (its stored conversation before its own input;
        where the provider did not keep that reply, as the app meant it), or why it cannot
        be linted; a record that continues nothing is itself. What it answered is then held
        for the requests that go on from it."""
        if record.continues is not None:
            held = self._held.get(record.continues)
            if held is None or held[0] != record.session_key:
                return Skipped(record.file, record.line, NOT_HELD)
            record = _joined(record, held[1], unstored_reply_at=held[2])
        self._hold(record)
        return record

    def _hold(self, record: Record) -> None:
        response = record.response
        if response is None or response.id is None or response.failed or response.message is None:
            return
        self._held.pop(response.id, None)
        self._held[response.id] = (record.session_key, (*_conversation(record), response.message),
                                   None if record.reply_stored else (record.file, record.line))
        if len(self._held) > self.window:
            self._held.popitem(last=False)


def _instructions(record: Record) -> int:
    """How many messages the request's `instructions` make (to_chat puts them first): 0 or 1."""
    origins = record.source_map.origins if record.source_map is not None else ()
    return 1 if origins and origins[0].pointer == INSTRUCTIONS else 0


def _conversation(record: Record) -> list[dict[str, Any]]:
    """What a request carries on to the next: its messages less its `instructions`."""
    return record.messages[_instructions(record):]


def _joined(record: Record, stored: tuple[dict[str, Any], ...], unstored_reply_at: tuple[str, int] | None) -> Record:
    """The record with the stored conversation put after its instructions, before its input."""
    lead = _instructions(record)
    origins = record.source_map.origins
    named = tuple(Origin(None, "/previous_response_id", name=f"{position} of {record.continues}") for position in range(len(stored)))
    messages = [*record.messages[:lead], *stored, *record.messages[lead:]]
    return replace(record, request={**record.request, "messages": messages}, unstored_reply_at=unstored_reply_at,
                   source_map=replace(record.source_map, origins=origins[:lead] + named + origins[lead:]))
