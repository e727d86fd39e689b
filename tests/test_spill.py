"""The spill: packed objects in memory up to a budget, then in an unlinked temporary file."""

from __future__ import annotations

import tempfile

from ctxlint.spill import Spill


def test_values_come_back_from_memory_and_from_the_file():
    spill = Spill(budget=1_000)
    values = [{"session": n, "rows": list(range(n * 50))} for n in range(20)]
    handles = [spill.put(value) for value in values]
    assert spill.file_bytes > 0  # the budget was passed: the oldest went to the file
    assert [spill.get(handle) for handle in handles] == values  # left in place
    assert spill.take(handles[0]) == values[0] and spill.take(handles[-1]) == values[-1]
    assert [spill.get(handle) for handle in handles[1:-1]] == values[1:-1]


def test_within_the_budget_no_file_is_made():
    spill = Spill(budget=1 << 20)
    handle = spill.put(("a", 1))
    assert spill.take(handle) == ("a", 1) and spill.file_bytes == 0


def test_a_temp_folder_that_cannot_be_written_keeps_everything_in_memory(monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_space)
    spill = Spill(budget=10)
    handles = [spill.put(n) for n in range(100)]
    assert [spill.take(handle) for handle in handles] == list(range(100)) and spill.file_bytes == 0
