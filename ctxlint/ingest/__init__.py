"""Ingest: every input format to a stream of normalized Records (plus problems and skips)."""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import orjson

from ctxlint.ingest.jsonl import READ_ERRORS, SKIP, ReadError, iter_lines, open_binary
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped, too_deep
from ctxlint.ingest.reuse import SharedPrefixDecoder
from ctxlint.ingest.shapes import NO_KEY, BatchOutput, ReplyLine, as_items, awaits_reply, line_session_key, session_key_in_bytes
from ctxlint.ingest.sources import Source, expand
from ctxlint.ingest.stored_responses import StoredResponses
from ctxlint.ingest.written_order import newest_first, pages_oldest_first
from ctxlint.progress import NoProgress

Item = Record | InputProblem | Skipped | BatchOutput | ReplyLine


@dataclass(slots=True)
class Ingested:
    records: list[Record] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> lines: a text log may skip millions
    io_errors: list[str] = field(default_factory=list)
    read_backwards: list[str] = field(default_factory=list)  # files written newest first, read last line first
    files: int = 0
    record_count: int = 0

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(sorted(self.skipped.items()))

    def skip(self, skipped: Skipped) -> None:
        self.skipped[skipped.reason] += 1


def readable_records(ingested: Ingested) -> list[Record]:
    """The records held, less those nested too deep to hash or walk: those become located
    problems (CTX900), as the stream reports them."""
    readable = []
    for record in ingested.records:
        try:
            orjson.dumps([record.request, record.response.message if record.response is not None else None])
        except TypeError as error:
            ingested.problems.append(too_deep(error, record.file, record.line))
            ingested.record_count -= 1
            continue
        readable.append(record)
    return readable


class Misrouted(Exception):
    """A line was routed by the key read off its bytes, and its parse found another key; or
    a reply line names no session, so the request it answers may be another worker's."""


# What a line without a key counts for when sessions are shared out: inferring its session
# (and, as such lines seldom log a response, counting its tokens) made it cost 1.6 times
# a keyed line in the benchmark (bench/run.py logs, timed per request: 391 µs against
# 248 µs on 100 MB; 1.7 times from the two workers' times on 1 GB; earlier runs on this
# noisy 2-core machine gave 1.4 to 2.7).
KEYLESS_WEIGHT = 1.6


class Share:
    """The part of the input that worker `index` of `parts` checks: whole sessions, and
    every line that is not a record (worker 0).

    Every worker reads every line's bytes. A line whose session key they show
    (session_key_in_bytes) is parsed only by the worker that owns the session; a line
    that names no key only by worker 0, which infers and checks every session without a
    key; any other line by every worker, which keeps what its parse gives it. A session
    is owned by the worker with the fewest lines so far (KEYLESS_WEIGHT) when its first
    line is read: every worker reads the same bytes, so all of them assign alike.

    When more than a worker's share of the lines have no key (`infer_everywhere`), every
    worker parses those and infers their sessions, and checks the ones whose id hashes
    to it, so that one worker does not do most of the work."""

    def __init__(self, index: int, parts: int, session_key: str | None = None, infer_everywhere: bool = False) -> None:
        self.index = index
        self.parts = parts
        self.session_key = session_key
        self.infer_everywhere = infer_everywhere
        self._owners: dict[str, int] = {}
        self._lines = [0.0] * parts  # lines given to each worker so far, weighed

    def _owner(self, key: str) -> int:
        owner = self._owners.get(key)
        if owner is None:
            owner = self._owners[key] = min(range(self.parts), key=self._lines.__getitem__)
        return owner

    def _takes(self, key: str | None) -> bool:
        """Count a line of session `key` (None or NO_KEY: a keyless line, worker 0's) to
        its worker; whether that is this one."""
        owner, weight = (self._owner(key), 1.0) if key else (0, KEYLESS_WEIGHT)
        self._lines[owner] += weight
        return owner == self.index

    def route(self, text: bytes) -> object:
        """SKIP for another worker's line; for this worker's, the key read off its bytes
        (NO_KEY: none); None when the bytes do not say (the parse decides: reads_line)."""
        key = session_key_in_bytes(text, self.session_key)
        if key is None or (key == NO_KEY and self.infer_everywhere):
            return None
        return key if self._takes(key) else SKIP

    def confirm(self, obj: object, key: str) -> None:
        """A line routed here by `key`: raises Misrouted unless its parse has that key."""
        if isinstance(obj, dict) and ("custom_id" in obj or (line_session_key(obj, self.session_key) or NO_KEY) != key):
            raise Misrouted(key)

    def agrees(self, obj: object, item: Item) -> None:
        """Raises Misrouted when the line's record has a session key the line did not show
        where lines are shared out by (a record a logger wrapped, its key inside): the
        worker that owns that session may never have read it."""
        if isinstance(item, (Record, ReplyLine)) and getattr(item, "custom_id", None) is None and isinstance(obj, dict) \
                and item.session_key != line_session_key(obj, self.session_key):
            raise Misrouted(item.session_key)

    def reads_line(self, obj: object) -> bool:
        """Of a line every worker parsed: whether this one reads it on."""
        if not isinstance(obj, dict):
            return self.index == 0  # a problem, reported once
        if "custom_id" in obj:
            return True  # batch lines are joined on custom_id in every worker, then checked by their session's owner
        key = line_session_key(obj, self.session_key)
        return (key is None and self.infer_everywhere) or self._takes(key)

    def owns_line(self, obj: object) -> bool:
        """Of a line this worker reads on (reads_line): whether it is this worker's alone, a
        line of a session it owns, all of whose items (skips and problems too) it keeps."""
        return isinstance(obj, dict) and "custom_id" not in obj and line_session_key(obj, self.session_key) is not None

    def keeps(self, item: Item) -> bool:
        if isinstance(item, Record):
            if item.custom_id is not None:
                return True
            if item.session_key is None:
                return self.infer_everywhere or self.index == 0
            return self._owner(item.session_key) == self.index
        if isinstance(item, ReplyLine) and item.session_key is not None:
            return self._owner(item.session_key) == self.index
        return isinstance(item, BatchOutput) or self.index == 0

    def checks(self, session: tuple[str, bool]) -> bool:
        """Whether this worker checks the session (id, whether the id is the log's own key)."""
        if session[1]:
            return self._owner(session[0]) == self.index
        if self.infer_everywhere:
            digest = hashlib.blake2b(session[0].encode("utf-8", "surrogatepass"), digest_size=8).digest()
            return int.from_bytes(digest, "big") % self.parts == self.index
        return self.index == 0


def keyless_fraction(paths: list[str], input_format: str | None, session_key: str | None, lines: int = 2000) -> float:
    """Of the first `lines` lines of the JSONL inputs, the share that name no session key
    (how --jobs shares out the sessions without one: Share.infer_everywhere)."""
    keyless = total = 0
    for source in expand(paths, input_format)[0]:
        if total >= lines:
            break
        if source.format != "jsonl":
            continue
        try:
            with open_binary(source.path) as stream:
                for text in itertools.islice(stream, lines - total):
                    total += 1
                    keyless += session_key_in_bytes(text, session_key) == NO_KEY
        except READ_ERRORS:
            continue  # reading it again reports the error
    return keyless / total if total else 0.0


def infers_everywhere(paths: list[str], input_format: str | None, session_key: str | None, parts: int) -> bool:
    """Whether the keyless lines, weighed, are more than worker 0's share of the work
    (Share.infer_everywhere), as the first lines of the inputs show."""
    return KEYLESS_WEIGHT * keyless_fraction(paths, input_format, session_key) > 1 / parts


def read_jsonl(source: Source, session_key: str | None, progress: NoProgress, decoder: SharedPrefixDecoder,
               into: Ingested, share: Share | None = None) -> Iterator[Item]:
    route = share.route if share is not None else None

    def backwards(head: list[bytes]) -> bool:
        if newest_first(head):
            into.read_backwards.append(source.path)
            return True
        return False

    for number, obj, routed in iter_lines(source.path, progress.advance, decoder, route, backwards):
        if routed is not None:
            share.confirm(obj, routed)
        elif share is not None and not share.reads_line(obj):
            continue
        owned = share is None or routed is not None or share.owns_line(obj)
        for item in as_items(obj, source.path, number, session_key, decoder.reused if decoder.trusted else 0):
            if share is not None:
                share.agrees(obj, item)
            if isinstance(item, Record) and item.source_map is None:
                decoder.mark_record()  # its messages passed the chat schema as sent (a body of another API's did not)
            if owned or share.keeps(item):
                yield item


def _readers(backwards: list[str]) -> dict[str, Callable[[Source, str | None], Iterable[Item]]]:
    """The reader of each format but JSONL; a JSON document's list written newest first is
    read last first, its path noted in `backwards`."""
    from ctxlint.ingest.cassette import read_cassette
    from ctxlint.ingest.snapshot import read_snapshot
    from ctxlint.ingest.json_document import read_json_document

    return {"cassette": read_cassette, "snapshot": read_snapshot, "json": functools.partial(read_json_document, backwards=backwards)}


REPLY_WINDOW = 64  # requests a reply line may come after (or, written by another thread, before) its request line by


def sort_items(items: Iterable[Item], into: Ingested, report_unmatched: bool = True) -> Iterator[Record]:
    """The records, in input order, each with its reply and, where it goes on from a stored
    response the log holds, that response's history (ingest.stored_responses); problems
    and skips go into `into`."""
    stored = StoredResponses()
    for record in _replies_joined(items, into, report_unmatched):
        rebuilt = stored.rebuilt(record)
        if isinstance(rebuilt, Skipped):
            into.skip(rebuilt)
            into.record_count -= 1
        else:
            yield rebuilt


def _replies_joined(items: Iterable[Item], into: Ingested, report_unmatched: bool) -> Iterator[Record]:
    """The records, in input order; problems and skips go into `into`. A record that
    logged no reply is held (and the records after it) until a reply line joins it or
    REPLY_WINDOW records have come after it; a reply line that answers no held record
    waits as long for its request. An OpenAI Batch input line waits for the
    end, when the output lines have been joined to it on custom_id. (Of workers that all
    read the batch lines, one reports the outputs left unmatched.)"""
    waiting: dict[str, Record] = {}
    outputs: list[BatchOutput] = []
    held: deque[Record] = deque()
    early: deque[ReplyLine] = deque()  # replies written before their requests (threads sharing a log)
    for item in items:
        if isinstance(item, Record):
            into.record_count += 1
            if item.custom_id is None:
                if early and awaits_reply(item):
                    reply = _reply_before(early, item)
                    if reply is not None:
                        early.remove(reply)
                        item.response = reply.response
                held.append(item)
                if len(held) > REPLY_WINDOW:
                    yield held.popleft()
                yield from _unjoinable_head(held)
            else:
                waiting[item.custom_id] = item
        elif isinstance(item, ReplyLine):
            answered = _answered(held, item)
            if answered is None:
                early.append(item)
                if len(early) > REPLY_WINDOW:
                    into.skip(_unanswering(early.popleft()))
            else:
                answered.response = item.response
                yield from _unjoinable_head(held)
        elif isinstance(item, BatchOutput):
            outputs.append(item)
        elif isinstance(item, InputProblem):
            into.problems.append(item)
        else:
            into.skip(item)
    for output in outputs:
        record = waiting.get(output.custom_id)
        if record is None and report_unmatched:
            into.skip(Skipped(output.file, output.line, "batch output line whose input line was not given"))
        elif record is not None:
            record.response = output.response
    for reply in early:
        into.skip(_unanswering(reply))
    yield from held
    yield from waiting.values()


def _unanswering(reply: ReplyLine) -> Skipped:
    return Skipped(reply.file, reply.line, f"reply line that answers no request logged without a reply within {REPLY_WINDOW} requests of it")


def _unjoinable_head(held: deque[Record]) -> Iterator[Record]:
    """The held records up to the first one a reply line may still join: one that logged
    no reply and that a reply can name (by a request id or its session)."""
    while held and not (awaits_reply(held[0]) and (held[0].session_key is not None or "links" in held[0].extra)):
        yield held.popleft()


def _answered(held: deque[Record], reply: ReplyLine) -> Record | None:
    """The request a reply line answers: the latest held one that carries one of its
    request ids, else its session's latest, provided that one awaits a reply and the two
    do not name different requests."""
    if reply.links:
        for record in reversed(held):
            if _same_request(reply, record) and awaits_reply(record):
                return record
    if reply.session_key is not None:
        latest = next((record for record in reversed(held) if record.session_key == reply.session_key), None)
        if latest is not None and awaits_reply(latest) and not _names_another(reply, latest):
            return latest
    return None


def _reply_before(early: deque[ReplyLine], record: Record) -> ReplyLine | None:
    """The reply line, written before it, that answers a request: the first that carries
    one of its request ids, else the first of its session that names no other request."""
    found = next((reply for reply in early if reply.links and _same_request(reply, record)), None)
    return found or next((reply for reply in early if reply.session_key is not None and reply.session_key == record.session_key
                          and not _names_another(reply, record)), None)


def _same_request(reply: ReplyLine, record: Record) -> bool:
    return any(link in reply.links for link in record.extra.get("links", ()))


def _names_another(reply: ReplyLine, record: Record) -> bool:
    """Both lines name their request under one name, each another (a line's own `id` is
    often its event's, and names no request)."""
    theirs = dict(record.extra.get("links", ()))
    return any(name != "id" and name in theirs and theirs[name] != value for name, value in reply.links)


def collect(items: Iterable[Item], into: Ingested) -> None:
    """All records into the result, in input order."""
    into.records.extend(sort_items(items, into))
    into.records.sort(key=lambda record: record.seq)


def _place(line: int, backwards: bool) -> int:
    """A JSONL line's place in the input: its number, or, in a file read from its last line
    up, how far from the end it is."""
    return (1 << 40) - line if backwards else line


def _size(source: Source) -> int:
    try:
        return os.stat(source.path).st_size if source.path != "-" and os.path.isfile(source.path) else 0
    except OSError:
        return 0


def read_inputs(paths: list[str], session_key: str | None = None, input_format: str | None = None,
                progress: NoProgress | None = None) -> Ingested:
    """Every record of the inputs, held: for views that look at whole sessions."""
    result = Ingested()
    collect(stream_inputs(paths, result, session_key, input_format, progress), result)
    return result


def stream_inputs(paths: list[str], result: Ingested, session_key: str | None = None, input_format: str | None = None,
                  progress: NoProgress | None = None, share: Share | None = None) -> Iterator[Item]:
    """Every item of the inputs (or of one share of them) as it is read; files and I/O
    errors are counted into `result`. A record's seq is its place in the input."""
    progress = progress or NoProgress()
    sources, result.io_errors = expand(paths, input_format)
    sources = pages_oldest_first(sources)
    readers = _readers(result.read_backwards)
    decoder = SharedPrefixDecoder()  # one for all files: a session may go on in the next file
    progress.reading(sum(map(_size, sources)))

    def guarded(source: Source) -> Iterator[Item]:
        try:
            if source.format == "jsonl":
                yield from read_jsonl(source, session_key, progress, decoder, result, share)
            else:
                yield from readers[source.format](source, session_key)
                progress.advance(_size(source))
        except ReadError as error:
            result.io_errors.append(str(error))

    for position, source in enumerate(sources):
        result.files += 1
        for ordinal, item in enumerate(guarded(source)):
            if isinstance(item, Record):  # a JSONL line's records share its place; other readers count items
                item.seq = (position << 40) | (_place(item.line, result.read_backwards[-1:] == [source.path]) if source.format == "jsonl" else ordinal)
            if share is None or source.format == "jsonl" or share.keeps(item):  # JSONL lines are shared out unread
                if share is not None and isinstance(item, ReplyLine) and item.session_key is None:
                    raise Misrouted(NO_KEY)  # the request it answers may be another worker's: the run goes on in one process
                yield item


__all__ = ["Ingested", "InputProblem", "Misrouted", "Record", "Response", "Share", "Skipped", "infers_everywhere", "keyless_fraction", "read_inputs", "sort_items", "stream_inputs"]
