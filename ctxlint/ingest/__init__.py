"""Ingest: every input format to a stream of normalized Records (plus problems and skips)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ctxlint.ingest.jsonl import ReadError, iter_lines
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
from ctxlint.ingest.reuse import SharedPrefixDecoder
from ctxlint.ingest.shapes import BatchOutput, normalize
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


def read_jsonl(source: Source, session_key: str | None, progress: NoProgress, decoder: SharedPrefixDecoder) -> Iterator[Item]:
    for number, obj in iter_lines(source.path, progress.advance, decoder):
        item = as_item(obj, source.path, number, session_key, decoder.reused)
        if not isinstance(item, Record) and not isinstance(obj, InputProblem):
            decoder.forget_last()
        yield item


def _readers() -> dict[str, Callable[[Source, str | None], Iterable[Item]]]:
    from ctxlint.ingest.cassette import read_cassette
    from ctxlint.ingest.snapshot import read_snapshot
    from ctxlint.ingest.trajectory import read_trajectory

    return {"cassette": read_cassette, "snapshot": read_snapshot, "trajectory": read_trajectory}


def sort_items(items: Iterable[Item], into: Ingested) -> Iterator[Record]:
    """The records, as they come; problems and skips go into `into`. An OpenAI Batch input
    line waits for the end, when the output lines have been joined to it on custom_id."""
    waiting: dict[str, Record] = {}
    outputs: list[BatchOutput] = []
    for item in items:
        if isinstance(item, Record):
            item.seq = into.record_count
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
        if record is None:
            into.skipped.append(Skipped(output.file, output.line, "batch output line whose input line was not given"))
        else:
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
                  progress: NoProgress | None = None) -> Iterator[Item]:
    """Every item of the inputs as it is read; files and I/O errors are counted into `result`."""
    progress = progress or NoProgress()
    sources, result.io_errors = expand(paths, input_format)
    readers = _readers()
    decoder = SharedPrefixDecoder()  # one for all files: a session may go on in the next file
    progress.reading(sum(map(_size, sources)))

    def guarded(source: Source) -> Iterator[Item]:
        try:
            if source.format == "jsonl":
                yield from read_jsonl(source, session_key, progress, decoder)
            else:
                yield from readers[source.format](source, session_key)
                progress.advance(_size(source))
        except ReadError as error:
            result.io_errors.append(str(error))

    for source in sources:
        result.files += 1
        yield from guarded(source)


__all__ = ["Ingested", "InputProblem", "Record", "Response", "Skipped", "read_inputs", "sort_items", "stream_inputs"]
