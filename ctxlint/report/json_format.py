"""JSON output: one stable document (version 1), documented in the README."""

from __future__ import annotations

from typing import IO, Any

import orjson

from ctxlint.report import Report
from ctxlint.rules.base import Finding
from ctxlint.engine import SessionSummary, TurnMetrics

FINDING_KEYS = ("code", "name", "severity", "message", "file", "line", "session", "turn", "message_index",
                "tool_call_id", "pointer", "evidence", "remediation", "fingerprint")


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {key: getattr(finding, key) for key in FINDING_KEYS}


def turn_dict(turn: TurnMetrics) -> dict[str, Any]:
    return {"turn": turn.number, "file": turn.file, "line": turn.line, "messages": turn.messages,
            "prompt_tokens": turn.tokens, "counter": turn.counter, "window": turn.window}


def session_dict(report: Report, session: SessionSummary) -> dict[str, Any]:
    return {"id": session.id, "file": session.file, "requests": len(session), "first_error_turn": report.first_error_turn(session),
            "turns": [turn_dict(t) for t in session.turns]}


def report_dict(report: Report) -> dict[str, Any]:
    return {
        "version": 1,
        "findings": [finding_dict(f) for f in report.findings],
        "sessions": [session_dict(report, s) for s in report.sessions],
        **_tail(report),
    }


def _tail(report: Report) -> dict[str, Any]:
    return {
        "summary": {**report.summary(), "skipped": report.skipped, "token_counters": report.counters_used()},
        "coverage": report.coverage,
        "suppressed": report.suppressed,
        "baseline_stale": report.baseline_stale,
        "redacted": report.redacted,
        "io_errors": report.io_errors,
        "read_backwards": report.read_backwards,
    }


def write_json(report: Report, out: IO[str]) -> None:
    """The document of report_dict, byte for byte, written a session at a time: a log of a
    million requests never becomes one string."""
    def nested(value: Any, depth: int) -> str:  # JSON strings hold no raw newline: re-indenting is safe
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n" + "  " * depth)

    head = {"version": 1, "findings": [finding_dict(f) for f in report.findings]}
    out.write(nested(head, 0)[:-2] + ",\n")
    if report.sessions:
        out.write('  "sessions": [\n')
        for position, session in enumerate(report.sessions):
            out.write(("" if position == 0 else ",\n") + "    " + nested(session_dict(report, session), 2))
        out.write("\n  ],\n")
    else:
        out.write('  "sessions": [],\n')
    out.write(nested(_tail(report), 0)[2:] + "\n")


def render_statistics_json(report: Report) -> str:
    rows = [{"code": code, "name": name, "severity": severity, "count": count} for code, name, severity, count in report.statistics()]
    return orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n"
