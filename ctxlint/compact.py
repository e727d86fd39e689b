"""A map of 64-bit ints to 64-bit ints that grows by 16 bytes an entry, for state that must
span the whole log (CTX023 remembers where every distinct message was first seen).

A dict of ints costs about 100 bytes an entry; a gigabyte of requests holds a few hundred
thousand distinct messages. New entries go to a small dict; when it fills, it becomes a
sorted run of two arrays, and runs of like size are merged (as a binary counter carries),
so a lookup searches the dict and at most log2(entries / RUN) runs.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from heapq import merge
from typing import Iterable

RUN = 1 << 13  # entries the dict holds before it is packed into a run


class CompactIntMap:
    __slots__ = ("_recent", "_runs")

    def __init__(self) -> None:
        self._recent: dict[int, int] = {}
        self._runs: list[tuple[array, array]] = []  # (sorted keys, their values), largest first

    def get(self, key: int) -> int | None:
        value = self._recent.get(key)
        if value is not None:
            return value
        for keys, values in self._runs:
            at = bisect_left(keys, key)
            if at < len(keys) and keys[at] == key:
                return values[at]
        return None

    def __contains__(self, key: int) -> bool:
        return self.get(key) is not None

    def setdefault(self, key: int, value: int) -> None:
        """Set the key's value unless it has one (a key is never in two places)."""
        if self.get(key) is None:
            self._recent[key] = value
            if len(self._recent) >= RUN:
                self._pack()

    def _pack(self) -> None:
        keys, values = _arrays(sorted(self._recent.items()))
        self._recent = {}
        while self._runs and len(self._runs[-1][0]) <= len(keys):
            # Streamed, not sorted as one list: a list of a million pairs would raise the
            # peak (and so the RSS, which the allocator keeps) by tens of MB.
            keys, values = _arrays(merge(zip(*self._runs.pop()), zip(keys, values)))
        self._runs.append((keys, values))

    def __getstate__(self) -> tuple:
        return self._recent, self._runs

    def __setstate__(self, state: tuple) -> None:
        self._recent, self._runs = state


def _arrays(pairs: Iterable[tuple[int, int]]) -> tuple[array, array]:
    """Sorted (key, value) pairs as a run: its keys and its values."""
    keys, values = array("q"), array("q")
    for key, value in pairs:
        keys.append(key)
        values.append(value)
    return keys, values
