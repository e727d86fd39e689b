"""Whether a log was written newest first, judged by the times of its first records."""

from __future__ import annotations

import orjson

from ctxlint.ingest.jsonl import HEAD_LINES
from ctxlint.ingest.shapes import record_time

# Dashboards export newest first (Helicone's export sorts by time, descending); a log an
# app writes as it goes runs oldest first, give or take the few lines that threads or
# workers sharing it write out of order. A file is read backwards when the times of its
# first records fall at least this many times, and rise at most once for every
# FALLS_PER_RISE falls.
FALLS_NEEDED = 2
FALLS_PER_RISE = 20


def newest_first(head: list[bytes]) -> bool:
    """Whether the times the first lines' records give fall from line to line."""
    values = []
    for line_bytes in head:
        try:
            values.append(orjson.loads(line_bytes))
        except orjson.JSONDecodeError:
            continue
    return listed_newest_first(values)


def listed_newest_first(values: list[object]) -> bool:
    """Whether the times the first of these records give fall from one to the next."""
    times = [time for time in (record_time(value) for value in values[:HEAD_LINES] if isinstance(value, dict)) if time is not None]
    falls = sum(later < earlier for earlier, later in zip(times, times[1:]))
    rises = sum(later > earlier for earlier, later in zip(times, times[1:]))
    return falls >= FALLS_NEEDED and rises * FALLS_PER_RISE <= falls
