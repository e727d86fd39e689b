"""Lint logs too big for one machine with Dask (`pip install 'ctxlint[dask]'`).

Each file is read line by line on a worker, records are grouped by session (the session key,
or the log for logs without keys, since sessions are inferred within a log: a file, or a
rotated log's files, oldest first), and each group
is linted by ctxlint.lint. The findings equal `ctxlint check` on the same files, except that
CTX023 (cross-session leak) compares sessions within a group only."""

from __future__ import annotations

from typing import Any

from ctxlint.api import CheckOptions, lint, records_from_line
from ctxlint.ingest.jsonl import open_binary
from ctxlint.ingest.record import InputProblem, Record
from ctxlint.ingest.shapes import ReplyLine
from ctxlint.ingest.sources import live_path, rotation_age
from ctxlint.rules import Finding


def read_file(path: str, session_key: str | None = None) -> list[Any]:
    with open_binary(path) as log:  # gunzipped when gzipped
        return [item for number, line in enumerate(log, 1) for item in records_from_line(line, path, number, session_key)]


def partition_key(item: Any) -> str:
    """The group an item is linted in: its session's, or its file's without a key (a reply
    line that names no session, only its request, joins its request there only)."""
    if isinstance(item, (Record, ReplyLine)) and item.session_key is not None:
        return f"key:{item.session_key}"
    return f"file:{live_path(item.file)}"  # a rotated log's files are one log


def lint_group(group: tuple[str, list[Any]], options: CheckOptions | None) -> list[Finding]:
    _, items = group
    ordered = sorted(items, key=lambda item: (live_path(item.file), rotation_age(item.file), item.file, item.line, isinstance(item, InputProblem)))
    return lint(ordered, options)


def lint_with_dask(paths: list[str], options: CheckOptions | None = None, partitions: int | None = None) -> list[Finding]:
    """All findings, in the CLI's order. Runs on the current Dask client (or the local scheduler)."""
    import dask.bag as db

    files = sorted(paths)
    bag = db.from_sequence(files, npartitions=partitions or len(files) or 1)
    items = bag.map(read_file, options.session_key if options else None).flatten()
    findings = items.groupby(partition_key).map(lint_group, options).flatten().compute()
    return sorted(findings, key=Finding.sort_key)
