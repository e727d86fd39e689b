"""--redact: no text quoted from a log reaches any output, only its length and a short hash."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxlint.chat import Quoted, short_hash
from ctxlint.rules.base import Finding


def placeholder(text: str) -> str:
    return f"<redacted {len(text)} chars #{short_hash(text)[:8]}>"


def _scrub(value: Any, quoted: list[str]) -> Any:
    if isinstance(value, Quoted):
        quoted.append(str(value))
        return placeholder(value)
    if isinstance(value, dict):
        return {key: _scrub(item, quoted) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(item, quoted) for item in value]
    return value


def redact_finding(finding: Finding) -> Finding:
    """Quoted evidence replaced; where a message repeats a quote, the message is rewritten too."""
    quoted: list[str] = []
    evidence = _scrub(finding.evidence, quoted)
    message = finding.message
    for text in sorted(quoted, key=len, reverse=True):
        if text:
            message = message.replace(text, placeholder(text))
    return replace(finding, evidence=evidence, message=message)
