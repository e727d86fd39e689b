"""Ingest: every input format to a stream of normalized Records (plus problems and skips)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ctxlint.ingest.jsonl import ReadError, iter_lines
from ctxlint.ingest.record import InputProblem, Record, Response, Skipped
from ctxlint.ingest.shapes import BatchOutput, normalize
from ctxlint.ingest.sources import Source, expand

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


def read_jsonl(source: Source, session_key: str | None) -> Iterator[Item]:
    for number, obj in iter_lines(source.path):
        yield obj if isinstance(obj, InputProblem) else normalize(obj, source.path, number, session_key)


def _readers() -> dict[str, Callable[[Source, str | None], Iterable[Item]]]:
    from ctxlint.ingest.cassette import read_cassette
    from ctxlint.ingest.snapshot import read_snapshot
    from ctxlint.ingest.trajectory import read_trajectory

    return {"jsonl": read_jsonl, "cassette": read_cassette, "snapshot": read_snapshot, "trajectory": read_trajectory}


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


def read_inputs(paths: list[str], session_key: str | None = None, input_format: str | None = None) -> Ingested:
    result = Ingested()
    sources, result.io_errors = expand(paths, input_format)
    readers = _readers()
    items: list[Item] = []

    def guarded(source: Source) -> Iterator[Item]:
        try:
            yield from readers[source.format](source, session_key)
        except ReadError as error:
            result.io_errors.append(str(error))

    for source in sources:
        result.files += 1
        items.extend(guarded(source))
    collect(items, result)
    return result


__all__ = ["Ingested", "InputProblem", "Record", "Response", "Skipped", "read_inputs"]
