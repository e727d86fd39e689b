"""Line-per-finding formats: concise (file:line: CODE message), jsonl, GitHub workflow commands."""

from __future__ import annotations

import orjson

from ctxlint.report import Report
from ctxlint.report.json_format import finding_dict
from ctxlint.report.text import safe
from ctxlint.rules.base import Finding

GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def where(finding: Finding) -> str:
    parts = []
    if finding.session is not None:
        parts.append(f"session {finding.session}")
    if finding.turn is not None:
        parts.append(f"turn {finding.turn}")
    if finding.tool_call_id:
        parts.append(finding.tool_call_id)
    elif finding.message_index is not None:
        parts.append(f"message {finding.message_index}")
    return ", ".join(parts)


def _with_where(text: str, finding: Finding) -> str:
    context = where(finding)
    return f"{text} ({context})" if context else text


def render_concise(report: Report) -> str:
    return "".join(safe(_with_where(f"{f.file}:{f.line}: {f.code} {f.message}", f)) + "\n" for f in report.findings)


def render_jsonl(report: Report) -> str:
    return "".join(orjson.dumps(finding_dict(f)).decode() + "\n" for f in report.findings)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on its log line."""
    out = []
    for f in report.findings:
        properties = f"file={_escape_property(f.file)},line={f.line},title={_escape_property(f'ctxlint {f.code}')}"
        body = _escape_data(safe(_with_where(f"{f.name}: {f.message}", f) + f". Fix: {f.remediation}"))
        out.append(f"::{GITHUB_LEVEL[f.severity]} {properties}::{body}\n")
    return "".join(out)
