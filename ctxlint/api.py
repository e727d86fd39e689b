"""The library entry points the CLI is built on: run_check (paths) and lint (records)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ctxlint.engine import Engine, LintOptions, problem_findings
from ctxlint.ingest import Ingested, read_inputs
from ctxlint.ingest.record import InputProblem, Record
from ctxlint.profiles import ProfileBook
from ctxlint.report import Report
from ctxlint.rules import RULES, Finding
from ctxlint.selection import selected_codes
from ctxlint.sessions import build_sessions


@dataclass(slots=True)
class CheckOptions:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    session_key: str | None = None
    input_format: str | None = None
    context_window: int | None = None
    aliases: dict[str, str] = field(default_factory=dict)


def build_report(ingested: Ingested, options: CheckOptions) -> Report:
    codes = selected_codes(options.select or None, options.ignore)
    rules = [RULES[code]() for code in codes if RULES[code].scope != "record"]
    engine = Engine(rules, ProfileBook(options.context_window, options.aliases), options=LintOptions())
    sessions = build_sessions(ingested.records)
    result = engine.run(sessions)
    findings = list(result.findings)
    if "CTX900" in codes:
        findings += problem_findings(ingested.problems, RULES["CTX900"](), engine)
        findings.sort(key=Finding.sort_key)
    return Report(
        findings=findings, sessions=sessions, metrics=result.metrics, coverage=result.coverage,
        files=ingested.files, records=len(ingested.records), skipped=ingested.skipped_by_reason,
        io_errors=ingested.io_errors,
    )


def run_check(paths: list[str], options: CheckOptions | None = None) -> Report:
    options = options or CheckOptions()
    return build_report(read_inputs(paths, options.session_key, options.input_format), options)


def lint(records: Iterable[Record], options: CheckOptions | None = None) -> list[Finding]:
    """Findings for already-parsed records of one or many sessions."""
    ingested = Ingested()
    for record in records:
        (ingested.problems if isinstance(record, InputProblem) else ingested.records).append(record)
    return build_report(ingested, options or CheckOptions()).findings
