"""Packed objects kept out of the heap: what the engine keeps of idle and closed sessions.

A log of a million short sessions would otherwise hold a million sessions' state until
the report is written. Each object is pickled and compressed; packed objects stay in
memory up to a byte budget, and beyond it the oldest go to an unlinked temporary file
(created mode 0600 in the system's temp folder, gone when ctxlint exits, never named in
any output). If the file cannot be written (no space, no temp folder), everything stays
in memory. Only ctxlint's own objects are ever unpickled here, never input.
"""

from __future__ import annotations

import pickle
import tempfile
import weakref
import zlib
from array import array
from collections import OrderedDict
from typing import IO, Any

SPILL_BUDGET = 32 << 20  # bytes of packed state held in memory before the temp file is used

_IN_MEMORY = -1


class Spill:
    def __init__(self, budget: int | None = None) -> None:
        self._budget = SPILL_BUDGET if budget is None else budget
        self._memory: OrderedDict[int, bytes] = OrderedDict()  # handle -> packed bytes, oldest first
        self._held = 0
        self._file: IO[bytes] | None = None
        self._end = 0
        self._file_failed = False
        # Per handle ever given: where its bytes are in the file (or _IN_MEMORY) and how many.
        self._offsets = array("q")
        self._lengths = array("q")

    def put(self, value: Any) -> int:
        """Pack a value; the handle to get it back by."""
        packed = zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)
        handle = len(self._offsets)
        self._offsets.append(_IN_MEMORY)
        self._lengths.append(len(packed))
        self._memory[handle] = packed
        self._held += len(packed)
        while self._held > self._budget and not self._file_failed:
            self._write_oldest()
        return handle

    def get(self, handle: int) -> Any:
        """The value, left in place."""
        return pickle.loads(zlib.decompress(self._bytes(handle)))

    def take(self, handle: int) -> Any:
        """The value, its memory let go (its place in the file is not reused)."""
        value = self.get(handle)
        packed = self._memory.pop(handle, None)
        if packed is not None:
            self._held -= len(packed)
        return value

    @property
    def file_bytes(self) -> int:
        """Bytes written to the temporary file so far (0: it was never needed)."""
        return self._end

    def _bytes(self, handle: int) -> bytes:
        packed = self._memory.get(handle)
        if packed is not None:
            return packed
        assert self._file is not None
        self._file.seek(self._offsets[handle])
        return self._file.read(self._lengths[handle])

    def _write_oldest(self) -> None:
        handle, packed = next(iter(self._memory.items()))
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="ctxlint-")
                weakref.finalize(self, self._file.close)  # closed, not left to the collector, once the spill is gone
            self._file.seek(self._end)
            self._file.write(packed)
            self._file.flush()
        except OSError:
            self._file_failed = True  # keep it all in memory rather than stop
            return
        del self._memory[handle]
        self._held -= len(packed)
        self._offsets[handle] = self._end
        self._end += len(packed)
