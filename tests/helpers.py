"""Small helpers for tests: run the CLI in-process, read expected findings."""

from __future__ import annotations

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
