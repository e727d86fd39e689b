"""Progress on stderr for large inputs at a terminal; silent everywhere else."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

LARGE_INPUT_BYTES = 4 * 1024 * 1024


class NoProgress:
    """The default: every hook does nothing."""

    def reading(self, total_bytes: int) -> None:
        pass

    def advance(self, read_bytes: int) -> None:
        pass

    def checking(self, sessions: int) -> None:
        pass

    def checked(self) -> None:
        pass

    def close(self) -> None:
        pass


class BarProgress(NoProgress):
    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task = None

    def reading(self, total_bytes: int) -> None:
        if total_bytes < LARGE_INPUT_BYTES:
            return
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                             console=Console(file=sys.stderr), transient=True)
        self._bar.start()
        self._task = self._bar.add_task("reading", total=total_bytes)

    def advance(self, read_bytes: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, read_bytes)

    def checking(self, sessions: int) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=Console(file=sys.stderr), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("checking sessions", total=sessions)

    def checked(self) -> None:
        self.advance(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def progress_for(enabled: bool) -> NoProgress:
    """A bar only for a person at a terminal: not in CI, not when asked to be quiet."""
    if enabled and sys.stderr.isatty() and not os.environ.get("CI"):
        return BarProgress()
    return NoProgress()
