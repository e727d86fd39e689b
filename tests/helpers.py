"""Small helpers for tests: run the CLI in-process, read expected findings."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
from typer.testing import CliRunner

from ctxlint.cli import app


def run_cli(*args: str, input: str | bytes | None = None):
    return CliRunner().invoke(app, list(args), input=input, catch_exceptions=False)


def json_report(*args: str, input: str | bytes | None = None) -> dict:
    result = run_cli("check", "--format", "json", *args, input=input)
    assert result.exit_code in (0, 1), result.output
    return orjson.loads(result.stdout)


def code_lines(report: dict) -> list[tuple[str, int]]:
    return sorted((f["code"], f["line"]) for f in report["findings"])


def expected_of(case: Path) -> list[tuple[str, int]]:
    expected = []
    for line in case.with_suffix(".expected").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            code, number = line.split()
            expected.append((code, int(number)))
    return sorted(expected)


def write_records(path: Path, records: list) -> str:
    """A JSONL log of `records` at `path`; its path as a string."""
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return str(path)


def located_findings(report: dict) -> list[tuple]:
    """Each finding as (code, line, message index, JSON pointer, tool_call_id)."""
    return [(f["code"], f["line"], f["message_index"], f["pointer"], f["tool_call_id"]) for f in report["findings"]]


def interleaved(script: list[dict], expected: list[tuple[str, int]], copies: int, seed: int = 3) -> tuple[list[dict], list[tuple[str, int]]]:
    """`copies` copies of a one-session script, each under a session key of its own,
    interleaved at random; and the findings expected of the script (code, line in it) at
    the lines of the log where each copy's line landed."""
    pending = {key: [{**record, "session_id": f"k{key}"} for record in script] for key in range(copies)}
    shuffle, records, found = random.Random(seed), [], []
    while pending:
        key = shuffle.choice(sorted(pending))
        records.append(pending[key].pop(0))
        found += [(code, len(records)) for code, line in expected if line == len(script) - len(pending[key])]
        if not pending[key]:
            del pending[key]
    return records, sorted(found, key=lambda finding: finding[1])
