"""The order requests are checked in: input order, or the time the log gives them."""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

from ctxlint.ingest.record import Record

# How far apart in the input two timestamped records may be and still be put in time
# order: a stream is reordered through a window of this many records, so memory stays
# bounded; loggers that write out of order (one line per finished request, threads,
# workers sharing a file) are out by a few lines, not thousands.
TIME_ORDER_WINDOW = 512


def in_time_order(records: Iterable[Record], window: int = TIME_ORDER_WINDOW) -> Iterator[Record]:
    """The records, each run of records that all carry a timestamp in time order (input
    order among equal times), as far as `window` records apart; a record without one is
    a boundary that keeps its place in the input."""
    # (time, place in the input, arrival): records one line holds (an OTel export's spans) share a place
    pending: list[tuple[float, int, int, Record]] = []
    for arrival, record in enumerate(records):
        if record.timestamp is None:
            while pending:
                yield heapq.heappop(pending)[3]
            yield record
            continue
        heapq.heappush(pending, (record.timestamp, record.seq, arrival, record))
        if len(pending) > window:
            yield heapq.heappop(pending)[3]
    while pending:
        yield heapq.heappop(pending)[3]
