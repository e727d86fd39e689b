"""Ingest: every input format to a stream of normalized Records (plus problems and skips)."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ctxlint.ingest.jsonl import ReadError, iter_lines
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
from ctxlint.ingest.reuse import SharedPrefixDecoder
from ctxlint.ingest.shapes import BatchOutput, line_session_key, normalize
from ctxlint.ingest.sources import Source, expand
from ctxlint.progress import NoProgress

Item = Record | InputProblem | Skipped | BatchOutput


@dataclass(slots=True)
class Ingested:
    records: list[Record] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    io_errors: list[str] = field(default_factory=list)
    files: int = 0
    record_count: int = 0

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(sorted(Counter(s.reason for s in self.skipped).items()))


def as_item(parsed: object, file: str, line: int, session_key: str | None, reused: int = 0) -> Item:
    """A parsed JSONL line as what ctxlint reads from it; a problem found in parsing stays one."""
    return parsed if isinstance(parsed, InputProblem) else normalize(parsed, file, line, session_key, reused)


@dataclass(slots=True, frozen=True)
class Share:
    """The part of the input that worker `index` of `parts` checks: whole sessions, by
    session key, and every line that is not a record (worker 0). Each worker reads all
    input but normalizes only its part, the records without a key (whose sessions every
    worker infers alike) and the batch lines (joined on custom_id alike); of those it
    checks only the sessions it owns (`checks`)."""

    index: int
    parts: int

    def owns_session(self, name: str) -> bool:
        return int.from_bytes(hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big") % self.parts == self.index

    def reads_line(self, obj: object, session_key: str | None) -> bool:
        if not isinstance(obj, dict):
            return self.index == 0  # a problem, reported once
        if "custom_id" in obj:
            return True  # batch lines are joined on custom_id in every worker, then checked by their session's owner
        key = line_session_key(obj, session_key)
        return key is None or self.owns_session(key)

    def keeps(self, item: Item) -> bool:
        if isinstance(item, Record):
            return item.custom_id is not None or item.session_key is None or self.owns_session(item.session_key)
        return isinstance(item, BatchOutput) or self.index == 0

    def checks(self, session: tuple[str, bool]) -> bool:
        """Whether this worker checks the session (id, whether the id is the log's own key)."""
        return self.owns_session(session[0] if session[1] else "inferred:" + session[0])


def read_jsonl(source: Source, session_key: str | None, progress: NoProgress, decoder: SharedPrefixDecoder,
               share: Share | None = None) -> Iterator[Item]:
    for number, obj in iter_lines(source.path, progress.advance, decoder):
        if share is not None and not share.reads_line(obj, session_key):
            continue
        item = as_item(obj, source.path, number, session_key, decoder.reused if decoder.trusted else 0)
        if isinstance(item, Record):
            decoder.mark_record()
        if share is None or share.keeps(item):
            yield item


def _readers() -> dict[str, Callable[[Source, str | None], Iterable[Item]]]:
    from ctxlint.ingest.cassette import read_cassette
    from ctxlint.ingest.snapshot import read_snapshot
    from ctxlint.ingest.trajectory import read_trajectory

    return {"cassette": read_cassette, "snapshot": read_snapshot, "trajectory": read_trajectory}


def sort_items(items: Iterable[Item], into: Ingested, report_unmatched: bool = True) -> Iterator[Record]:
    """The records, as they come; problems and skips go into `into`. An OpenAI Batch input
    line waits for the end, when the output lines have been joined to it on custom_id.
    (Of workers that all read the batch lines, one reports the outputs left unmatched.)"""
    waiting: dict[str, Record] = {}
    outputs: list[BatchOutput] = []
    for item in items:
        if isinstance(item, Record):
            into.record_count += 1
            if item.custom_id is None:
                yield item
            else:
                waiting[item.custom_id] = item
        elif isinstance(item, BatchOutput):
            outputs.append(item)
        elif isinstance(item, InputProblem):
            into.problems.append(item)
        else:
            into.skipped.append(item)
    for output in outputs:
        record = waiting.get(output.custom_id)
        if record is None and report_unmatched:
            into.skipped.append(Skipped(output.file, output.line, "batch output line whose input line was not given"))
        elif record is not None:
            record.response = output.response
    yield from waiting.values()


def collect(items: Iterable[Item], into: Ingested) -> None:
    """All records into the result, in input order."""
    into.records.extend(sort_items(items, into))
    into.records.sort(key=lambda record: record.seq)


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
    readers = _readers()
    decoder = SharedPrefixDecoder()  # one for all files: a session may go on in the next file
    progress.reading(sum(map(_size, sources)))

    def guarded(source: Source) -> Iterator[Item]:
        try:
            if source.format == "jsonl":
                yield from read_jsonl(source, session_key, progress, decoder, share)
            else:
                yield from readers[source.format](source, session_key)
                progress.advance(_size(source))
        except ReadError as error:
            result.io_errors.append(str(error))

    for position, source in enumerate(sources):
        result.files += 1
        for ordinal, item in enumerate(guarded(source)):
            if isinstance(item, Record):  # one record per JSONL line at most; other readers count items
                item.seq = (position << 40) | (item.line if source.format == "jsonl" else ordinal)
            if share is None or source.format == "jsonl" or share.keeps(item):  # JSONL lines are shared out unread
                yield item


__all__ = ["Ingested", "InputProblem", "Record", "Response", "Share", "Skipped", "read_inputs", "sort_items", "stream_inputs"]
