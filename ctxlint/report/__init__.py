"""Report: the findings and per-turn facts of one run, and the renderers that print them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctxlint.engine import TurnMetrics
from ctxlint.rules.base import Finding, severity_rank
from ctxlint.sessions.model import Session


@dataclass(slots=True)
class Report:
    findings: list[Finding]
    sessions: list[Session]
    metrics: dict[tuple[str, int], TurnMetrics]
    coverage: dict[str, dict[str, Any]]
    files: int
    records: int
    skipped: dict[str, int] = field(default_factory=dict)
    io_errors: list[str] = field(default_factory=list)

    def session_findings(self, session: Session) -> list[Finding]:
        return [f for f in self.findings if f.session == session.id]

    def first_error_turn(self, session: Session) -> int | None:
        turns = [f.turn for f in self.session_findings(session) if f.severity == "error" and f.turn is not None]
        return min(turns) if turns else None

    def record_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.session is None]

    def counts(self) -> dict[str, int]:
        by = Counter(f.severity for f in self.findings)
        return {"errors": by["error"], "warnings": by["warning"], "infos": by["info"]}

    def summary(self) -> dict[str, Any]:
        return {"files": self.files, "records": self.records, "sessions": len(self.sessions), **self.counts()}

    def counters_used(self) -> dict[str, int]:
        return dict(sorted(Counter(m.counter for m in self.metrics.values()).items()))

    def fails(self, fail_on: str) -> bool:
        threshold = severity_rank(fail_on)
        return any(severity_rank(f.severity) >= threshold for f in self.findings)
