"""JSON output: one stable document (version 1), documented in the README."""

from __future__ import annotations

from typing import Any

import orjson

from ctxlint.report import Report
from ctxlint.rules.base import Finding
from ctxlint.engine import TurnMetrics

FINDING_KEYS = ("code", "name", "severity", "message", "file", "line", "session", "turn", "message_index",
                "tool_call_id", "pointer", "evidence", "remediation", "fingerprint")


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {key: getattr(finding, key) for key in FINDING_KEYS}


def turn_dict(turn: TurnMetrics) -> dict[str, Any]:
    return {"turn": turn.number, "file": turn.file, "line": turn.line, "messages": turn.messages,
            "prompt_tokens": turn.tokens, "counter": turn.counter, "window": turn.window}


def report_dict(report: Report) -> dict[str, Any]:
    return {
        "version": 1,
        "findings": [finding_dict(f) for f in report.findings],
        "sessions": [
            {"id": s.id, "file": s.file, "requests": len(s.turns), "first_error_turn": report.first_error_turn(s),
             "turns": [turn_dict(t) for t in s.turns]}
            for s in report.sessions
        ],
        "summary": {**report.summary(), "skipped": report.skipped, "token_counters": report.counters_used()},
        "coverage": report.coverage,
        "suppressed": report.suppressed,
        "baseline_stale": report.baseline_stale,
        "redacted": report.redacted,
        "io_errors": report.io_errors,
    }


def render_json(report: Report) -> str:
    return orjson.dumps(report_dict(report), option=orjson.OPT_INDENT_2).decode() + "\n"


def render_statistics_json(report: Report) -> str:
    rows = [{"code": code, "name": name, "severity": severity, "count": count} for code, name, severity, count in report.statistics()]
    return orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n"
