"""Report: the findings and per-turn facts of one run, and the renderers that print them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctxlint.engine import SessionSummary
from ctxlint.rules.base import Finding, severity_rank
from ctxlint.sessions.model import Session


@dataclass(slots=True)
class Report:
    findings: list[Finding]
    sessions: list[SessionSummary]
    coverage: dict[str, dict[str, Any]]
    files: int
    records: int
    skipped: dict[str, int] = field(default_factory=dict)
    io_errors: list[str] = field(default_factory=list)
    read_backwards: list[str] = field(default_factory=list)  # files written newest first, read last line first
    suppressed: dict[str, int] = field(default_factory=dict)  # by per-file-ignores / baseline
    baseline_stale: list[dict[str, Any]] = field(default_factory=list)
    redacted: bool = False
    conversations: list[Session] = field(default_factory=list)  # the records of each session, when held
    _by_session: dict[str | None, list[Finding]] | None = None

    def session_findings(self, session: SessionSummary | Session) -> list[Finding]:
        if self._by_session is None:
            self._by_session = {}
            for finding in self.findings:
                self._by_session.setdefault(finding.session, []).append(finding)
        return self._by_session.get(session.id, [])

    def first_error_turn(self, session: SessionSummary) -> int | None:
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
        used: Counter = Counter()
        for session in self.sessions:
            used.update(session.counters())
        return dict(sorted(used.items()))

    def summary_of(self, session_id: str) -> SessionSummary:
        return next(s for s in self.sessions if s.id == session_id)

    def unchecked(self) -> dict[str, dict[str, int]]:
        """Rules that could not judge some request: code -> reason -> requests."""
        return {code: cov["not_judged"] for code, cov in self.coverage.items() if cov["not_judged"]}

    def statistics(self) -> list[tuple[str, str, str, int]]:
        """(code, name, severity, findings) per rule that reported, most findings first."""
        counts = Counter((f.code, f.name, f.severity) for f in self.findings)
        return sorted(((code, name, severity, n) for (code, name, severity), n in counts.items()), key=lambda row: (-row[3], row[0]))

    def fails(self, fail_on: str) -> bool:
        threshold = severity_rank(fail_on)
        return any(severity_rank(f.severity) >= threshold for f in self.findings)
