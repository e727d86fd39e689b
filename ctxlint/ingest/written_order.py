"""Whether a log was written newest first, judged by the times of its first records."""

from __future__ import annotations

import os

import orjson

from ctxlint.ingest.jsonl import HEAD_LINES, READ_ERRORS, head_lines, open_binary
from ctxlint.ingest.shapes import record_time
from ctxlint.ingest.sources import Source

# Dashboards export newest first (Helicone's export sorts by time, descending; so does a
# LangSmith runs listing); a log an app writes as it goes runs oldest first, give or take
# the few lines that threads or workers sharing it write out of order. A file is read
# backwards when the times of its first records fall at least this many times, and rise
# at most once for every FALLS_PER_RISE falls.
FALLS_NEEDED = 2
FALLS_PER_RISE = 20


def newest_first(head: list[bytes]) -> bool:
    """Whether the times the first lines' records give fall from line to line."""
    return _falling(_line_times(head))


def listed_newest_first(values: list[object]) -> bool:
    """Whether the times the first of these records give fall from one to the next."""
    return _falling(_record_times(values[:HEAD_LINES]))


def pages_oldest_first(sources: list[Source]) -> list[Source]:
    """The files of a paged export turned around: when each JSONL file was written newest
    first and each holds older records than the one before it (pages given in the order
    they were exported), the oldest page comes first. Other sources keep their order."""
    if len(sources) < 2 or not all(source.format == "jsonl" and os.path.isfile(source.path) for source in sources):
        return sources  # a pipe (stdin, a shell's `<(…)`) is read once: its first lines are not read ahead
    newest_times = []
    for source in sources:
        try:
            with open_binary(source.path) as stream:
                times = _line_times(head_lines(stream))
        except READ_ERRORS:
            return sources  # reading it again reports the error
        if not _falling(times):
            return sources
        newest_times.append(times[0])
    return sources[::-1] if all(later < earlier for earlier, later in zip(newest_times, newest_times[1:])) else sources


def _line_times(head: list[bytes]) -> list[float]:
    values = []
    for line_bytes in head:
        try:
            values.append(orjson.loads(line_bytes))
        except orjson.JSONDecodeError:
            continue
    return _record_times(values)


def _record_times(values: list[object]) -> list[float]:
    return [time for time in (record_time(value) for value in values if isinstance(value, dict)) if time is not None]


def _falling(times: list[float]) -> bool:
    falls = sum(later < earlier for earlier, later in zip(times, times[1:]))
    rises = sum(later > earlier for earlier, later in zip(times, times[1:]))
    return falls >= FALLS_NEEDED and rises * FALLS_PER_RISE <= falls
