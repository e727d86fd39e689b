"""Baseline files: today's findings recorded, so a gate reports only new ones.

Entries are matched by fingerprint (code, session, turn content, what the finding is about;
never the line number) as a multiset: two equal findings need two entries."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ctxlint.rules import Finding

BASELINE_VERSION = 1


class BaselineError(ValueError):
    pass


@dataclass(slots=True)
class BaselineResult:
    kept: list[Finding]
    suppressed: int = 0
    stale: list[dict[str, Any]] = field(default_factory=list)  # entries that no longer occur


def read(path: str) -> list[dict[str, Any]]:
    try:
        data = orjson.loads(Path(path).read_bytes())
    except OSError as error:
        raise BaselineError(f"{path}: cannot read baseline: {error.strerror or error}") from None
    except orjson.JSONDecodeError as error:
        raise BaselineError(f"{path}: baseline is not JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}: not a ctxlint baseline (expected {{\"version\": {BASELINE_VERSION}, \"findings\": [...]}})")
    for number, entry in enumerate(data["findings"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise BaselineError(f"{path}: findings[{number}] has no fingerprint")
    return data["findings"]


def apply(findings: list[Finding], entries: list[dict[str, Any]]) -> BaselineResult:
    remaining = Counter(entry["fingerprint"] for entry in entries)
    kept = []
    for finding in findings:
        if remaining[finding.fingerprint] > 0:
            remaining[finding.fingerprint] -= 1
        else:
            kept.append(finding)
    stale = []
    for entry in reversed(entries):  # the last copies of a fingerprint are the unmatched ones
        if remaining[entry["fingerprint"]] > 0:
            remaining[entry["fingerprint"]] -= 1
            stale.append(entry)
    stale.reverse()
    return BaselineResult(kept, len(findings) - len(kept), stale)


def document(findings: list[Finding], previous: list[dict[str, Any]] | None = None) -> bytes:
    """The baseline for these findings; reasons written earlier are kept by fingerprint."""
    reasons = {entry["fingerprint"]: entry["reason"] for entry in previous or () if entry.get("reason")}
    entries = []
    for finding in findings:
        entry = {"fingerprint": finding.fingerprint, "code": finding.code, "file": finding.file, "line": finding.line,
                 "session": finding.session, "turn": finding.turn, "message": finding.message}
        if finding.fingerprint in reasons:
            entry["reason"] = reasons[finding.fingerprint]
        entries.append(entry)
    return orjson.dumps({"version": BASELINE_VERSION, "tool": "ctxlint", "findings": entries}, option=orjson.OPT_INDENT_2) + b"\n"
