"""Ingest: every input format to a stream of normalized Records (plus problems and skips)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ctxlint.ingest.jsonl import ReadError, iter_lines
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
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

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(sorted(Counter(s.reason for s in self.skipped).items()))


def as_item(parsed: object, file: str, line: int, session_key: str | None) -> Item:
    """A parsed JSONL line as what ctxlint reads from it; a problem found in parsing stays one."""
    return parsed if isinstance(parsed, InputProblem) else normalize(parsed, file, line, session_key)


def read_jsonl(source: Source, session_key: str | None, progress: NoProgress) -> Iterator[Item]:
    for number, obj in iter_lines(source.path, progress.advance):
        yield as_item(obj, source.path, number, session_key)


def _readers() -> dict[str, Callable[[Source, str | None], Iterable[Item]]]:
    from ctxlint.ingest.cassette import read_cassette
    from ctxlint.ingest.snapshot import read_snapshot
    from ctxlint.ingest.trajectory import read_trajectory

    return {"cassette": read_cassette, "snapshot": read_snapshot, "trajectory": read_trajectory}


def collect(items: Iterable[Item], into: Ingested) -> None:
    """Sort items into the result, joining OpenAI Batch output lines to their inputs."""
    by_custom_id: dict[str, Record] = {}
    outputs: list[BatchOutput] = []
    for item in items:
        if isinstance(item, Record):
            item.seq = len(into.records)
            into.records.append(item)
            if item.custom_id is not None:
                by_custom_id[item.custom_id] = item
        elif isinstance(item, BatchOutput):
            outputs.append(item)
        elif isinstance(item, InputProblem):
            into.problems.append(item)
        else:
            into.skipped.append(item)
    for output in outputs:
        record = by_custom_id.get(output.custom_id)
        if record is None:
            into.skipped.append(Skipped(output.file, output.line, "batch output line whose input line was not given"))
        else:
            record.response = output.response


def _size(source: Source) -> int:
    try:
        return os.stat(source.path).st_size if source.path != "-" and os.path.isfile(source.path) else 0
    except OSError:
        return 0


def read_inputs(paths: list[str], session_key: str | None = None, input_format: str | None = None,
                progress: NoProgress | None = None) -> Ingested:
    result = Ingested()
    progress = progress or NoProgress()
    sources, result.io_errors = expand(paths, input_format)
    readers = _readers()
    items: list[Item] = []
    progress.reading(sum(map(_size, sources)))

    def guarded(source: Source) -> Iterator[Item]:
        try:
            if source.format == "jsonl":
                yield from read_jsonl(source, session_key, progress)
            else:
                yield from readers[source.format](source, session_key)
                progress.advance(_size(source))
        except ReadError as error:
            result.io_errors.append(str(error))

    for source in sources:
        result.files += 1
        items.extend(guarded(source))
    collect(items, result)
    return result


__all__ = ["Ingested", "InputProblem", "Record", "Response", "Skipped", "read_inputs"]
