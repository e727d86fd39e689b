"""The library entry points the CLI is built on: run_check (paths) and lint (records)."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ctxlint.config import Config, PerFileIgnore

from ctxlint.engine import Engine, LintOptions, LintResult, Tally, problem_findings
from ctxlint.ingest import Ingested, Item, Misrouted, Share, as_items, collect, infers_everywhere, read_inputs, readable_records, sort_items, stream_inputs
from ctxlint.ingest.jsonl import parse_line
from ctxlint.ingest.sources import expand
from ctxlint.profiles import ProfileBook
from ctxlint.progress import NoProgress
from ctxlint.report import Report
from ctxlint.report.redact import placeholder, redact_finding
from ctxlint.rules import RULES, Finding
from ctxlint.selection import selected_codes
from ctxlint.sessions import build_sessions
from ctxlint.sessions.model import Session
from ctxlint.sessions.ordering import in_time_order
from ctxlint.suppression import baseline, per_file
from ctxlint.tokens.counter import TokenCounter
from ctxlint.views.send_record import SendRecord, send_record
from ctxlint.views.stats import Usage, log_usage


@dataclass(slots=True)
class CheckOptions:
    """Everything one check run is told, from the config file and the command line."""

    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    severities: dict[str, str] = field(default_factory=dict)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_key: str | None = None
    input_format: str | None = None
    context_window: int | None = None
    model: str | None = None  # the model of requests that name none
    aliases: dict[str, str] = field(default_factory=dict)
    model_windows: dict[str, int] = field(default_factory=dict)
    per_file_ignores: list[PerFileIgnore] = field(default_factory=list)
    config_root: Path | None = None
    baseline: list[dict[str, Any]] | None = None
    redact: bool = False
    jobs: int = 1
    hold: bool = False  # keep every session's records in the report, for views

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> "CheckOptions":
        options = cls(
            select=config.select or [], extend_select=list(config.extend_select), ignore=list(config.ignore),
            severities=dict(config.severities), rule_options=dict(config.rule_options), session_key=config.session_key,
            context_window=config.context_window, model=config.model, aliases=dict(config.aliases), model_windows=dict(config.model_windows),
            per_file_ignores=list(config.per_file_ignores), config_root=config.root,
        )
        for name, value in overrides.items():
            setattr(options, name, value)
        return options


def profile_book(options: CheckOptions) -> ProfileBook:
    return ProfileBook(options.context_window, options.aliases, options.model_windows, options.model)


def _engine(options: CheckOptions) -> tuple[Engine, list[str]]:
    codes = selected_codes(options.select or None, options.ignore, options.extend_select)
    rules = [RULES[code]() for code in codes if RULES[code].scope != "record"]
    return Engine(rules, profile_book(options), options=LintOptions(options.rule_options, options.severities)), codes


def build_report(ingested: Ingested, options: CheckOptions) -> Report:
    """The report over records already read and held (views, lint())."""
    engine, codes = _engine(options)
    sessions = build_sessions(readable_records(ingested))
    return _report(engine.run(sessions), ingested, options, engine, codes, conversations=sessions)


def stream_report(paths: list[str], options: CheckOptions, progress: NoProgress | None = None) -> Report:
    """The report over the inputs, each record checked as it is read and then let go."""
    engine, codes = _engine(options)
    ingested = Ingested()
    records = in_time_order(sort_items(stream_inputs(paths, ingested, options.session_key, options.input_format, progress), ingested))
    tally = engine.check_stream(records)
    ingested.record_count -= tally.unplaced
    return _report(engine.result(tally), ingested, options, engine, codes)


_SHARED_RUN: tuple[list[str], CheckOptions, bool] | None = None


def _check_share(index: int) -> tuple[Tally, Ingested]:
    """In a forked worker: read all input and check this worker's share of the sessions;
    the log-scope rules' shards are left in the tally, to be judged with the others'."""
    paths, options, infer_everywhere = _SHARED_RUN
    engine, _ = _engine(options)
    ingested = Ingested()
    share = Share(index, options.jobs, options.session_key, infer_everywhere)
    records = in_time_order(sort_items(stream_inputs(paths, ingested, options.session_key, options.input_format, share=share), ingested, index == 0))
    return engine.check_stream(records, share), ingested


def parallel_report(paths: list[str], options: CheckOptions, progress: NoProgress) -> Report:
    """The report of stream_report, from `jobs` forked workers that each check whole
    sessions; this process judges the log-scope rules on the workers' shards.
    Should a line's parse contradict the key its bytes were routed by (escapes can hide
    a key from a byte-level read), the input is checked in this process instead."""
    global _SHARED_RUN
    engine, codes = _engine(options)
    TokenCounter.preload()
    _SHARED_RUN = (paths, options, infers_everywhere(paths, options.input_format, options.session_key, options.jobs))
    try:
        with multiprocessing.get_context("fork").Pool(options.jobs) as pool:
            parts = pool.map(_check_share, range(options.jobs))
    except Misrouted:
        return stream_report(paths, options, progress)
    finally:
        _SHARED_RUN = None
    tally, ingested = Tally(), Ingested()
    for index, (part, part_ingested) in enumerate(parts):
        tally.merge(part)
        ingested.problems += part_ingested.problems
        ingested.skipped += part_ingested.skipped
        if index == 0:  # every worker reads every file
            ingested.files, ingested.io_errors, ingested.read_backwards = part_ingested.files, part_ingested.io_errors, part_ingested.read_backwards
    ingested.record_count = sum(len(summary) for summary in tally.sessions)  # records without a key reach every worker
    engine.judge_log(tally)
    return _report(engine.result(tally), ingested, options, engine, codes)


def _report(result: LintResult, ingested: Ingested, options: CheckOptions, engine: Engine, codes: list[str],
            conversations: list[Session] | None = None) -> Report:
    findings = list(result.findings)
    if "CTX900" in codes:
        findings += problem_findings(ingested.problems + result.problems, RULES["CTX900"](), engine)
        findings.sort(key=Finding.sort_key)
    findings, ignored = per_file.apply(findings, options.per_file_ignores, options.config_root or Path.cwd())
    suppressed = {"per-file-ignores": ignored} if ignored else {}
    stale: list[dict[str, Any]] = []
    if options.baseline is not None:
        matched = baseline.apply(findings, options.baseline)
        findings, stale = matched.kept, matched.stale
        suppressed["baseline"] = matched.suppressed
    if options.redact:
        findings = [redact_finding(f) for f in findings]
        stale = [{**entry, "message": placeholder(str(entry.get("message", "")))} for entry in stale]
    return Report(
        findings=findings, sessions=result.sessions, coverage=result.coverage,
        files=ingested.files, records=ingested.record_count, skipped=ingested.skipped_by_reason,
        io_errors=ingested.io_errors, read_backwards=ingested.read_backwards, suppressed=suppressed, baseline_stale=stale, redacted=options.redact,
        conversations=conversations or [],
    )


def _readable_again(paths: list[str], forced_format: str | None) -> bool:
    """Whether every worker can read the inputs for itself: each is a file or a snapshot
    folder (a path that names nothing gives each worker the same error), none a pipe, given
    as such or found in a folder."""
    sources, _ = expand(paths, forced_format)
    return all(source.format == "snapshot" or (source.path != "-" and os.path.isfile(source.path)) for source in sources)


def run_check(paths: list[str], options: CheckOptions | None = None, progress: NoProgress | None = None) -> Report:
    """Check the inputs. Records are let go once checked, unless the options ask to hold
    them (for views). With jobs > 1, worker processes share out the sessions (a pipe, stdin
    or a shell's `<(…)`, which only one process can read, once, is checked in one)."""
    options = options or CheckOptions()
    progress = progress or NoProgress()
    try:
        if options.hold:
            return build_report(read_inputs(paths, options.session_key, options.input_format, progress), options)
        if options.jobs > 1 and _readable_again(paths, options.input_format) and "fork" in multiprocessing.get_all_start_methods():
            return parallel_report(paths, options, progress)
        return stream_report(paths, options, progress)
    finally:
        progress.close()


def records_from_line(line: bytes | str, file: str, line_number: int, session_key: str | None = None) -> list[Item]:
    """What ctxlint reads from one JSONL line: records and/or located problems."""
    raw = line.encode("utf-8") if isinstance(line, str) else line
    return [item for parsed in parse_line(raw, file, line_number) for item in as_items(parsed, file, line_number, session_key)]


def lint(records: Iterable[Item], config: CheckOptions | Config | None = None) -> list[Finding]:
    """Findings for already-read records (from records_from_line) of one or many sessions.

    Give each call whole sessions: partition a log by session key (or, for logs without
    keys, by file) and lint each partition; CTX023 then compares sessions within a partition."""
    options = CheckOptions.from_config(config) if isinstance(config, Config) else (config or CheckOptions())
    ingested = Ingested()
    collect(_read_items(records), ingested)
    return build_report(ingested, options).findings


def _read_items(records: Iterable[Any]) -> Iterable[Item]:
    """The items as given, each checked to be one records_from_line reads: a log line's
    object parsed by the caller carries no file or line, and is not guessed at."""
    for item in records:
        if not isinstance(item, Item):
            raise TypeError(f"lint() takes what records_from_line reads (records and located problems), not {type(item).__name__}: "
                            "read each log line with records_from_line(line, file, line_number)")
        yield item


def find_session(report: Report, wanted: str) -> Session | None:
    """The session with this id, or the only one whose id starts with it."""
    exact = next((s for s in report.conversations if s.id == wanted), None)
    if exact is not None:
        return exact
    prefixed = [s for s in report.conversations if s.id.startswith(wanted)]
    return prefixed[0] if len(prefixed) == 1 else None


def session_send_record(report: Report, session: Session, options: CheckOptions) -> SendRecord:
    turn_tokens = {t.number: (t.tokens, t.counter) for t in report.summary_of(session.id).turns}
    return send_record(session, report.session_findings(session), profile_book(options), TokenCounter(), turn_tokens)


def log_usage_of(report: Report) -> tuple[list[Usage], list[Usage]]:
    return log_usage(report.conversations, report.sessions, TokenCounter())
