"""Run the rules over sessions: each rule sees each request once, in order, with context."""

from __future__ import annotations

import heapq
import multiprocessing
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

import orjson

from ctxlint.chat import REASONING_FIELDS, message_identity, role_of, short_hash
from ctxlint.ingest.record import InputProblem
from ctxlint.profiles import Profile, ProfileBook, passback_required
from ctxlint.progress import NoProgress
from ctxlint.rules.base import Finding, Rule, Violation
from ctxlint.sessions.history import Transition, align
from ctxlint.sessions.model import Session, Turn
from ctxlint.tokens.counter import TokenCount, TokenCounter, prompt_tokens


@dataclass(slots=True)
class LintOptions:
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    severities: dict[str, str] = field(default_factory=dict)


class ReasoningLedger:
    """The reasoning each assistant turn first carried in this session, by turn identity.

    An entry with no fields means the turn was seen (in a logged response or a request)
    without any reasoning: the model did not think there, so there is nothing to pass back.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple, dict[str, Any]] = {}

    def get(self, identity: tuple) -> dict[str, Any] | None:
        return self._seen.get(identity)

    def record(self, identity: tuple, message: dict[str, Any], origin: str) -> None:
        entry = self._seen.setdefault(identity, {"_origin": origin})
        for name in REASONING_FIELDS:
            value = message.get(name)
            if value not in (None, "", []) and name not in entry:
                entry[name] = value


def thinking_enabled(request: dict[str, Any], profile: Profile) -> bool | None:
    """Whether the request runs the model in thinking mode: True, False, or None (unknown)."""
    if profile.thinking_mode == "always":
        return True
    if profile.thinking_mode == "never":
        return False
    thinking = request.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        return thinking["type"] == "enabled"
    if isinstance(request.get("enable_thinking"), bool):
        return request["enable_thinking"]
    if request.get("reasoning_effort") == "none":
        return False
    if profile.thinking_mode == "toggle":
        return profile.thinking_default
    return None


class TurnContext:
    """Everything a rule may read about one request. Expensive parts are computed on demand."""

    def __init__(self, engine: "Engine", session: Session, turn: Turn, previous: Turn | None, ledger: ReasoningLedger) -> None:
        self.engine = engine
        self.session = session
        self.turn = turn
        self.previous = previous
        self.ledger = ledger

    @property
    def request(self) -> dict[str, Any]:
        return self.turn.record.request

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.turn.messages

    @cached_property
    def transition(self) -> Transition | None:
        return align(self.previous, self.turn) if self.previous is not None else None

    @cached_property
    def profile(self) -> Profile:
        book = self.engine.profiles
        profile = book.lookup(self.turn.record.model)
        response = self.turn.record.response
        if not profile.known and response is not None and response.model:
            profile = book.lookup(response.model)
        return profile

    @cached_property
    def thinking(self) -> bool | None:
        return thinking_enabled(self.request, self.profile)

    @cached_property
    def tokens(self) -> TokenCount:
        response = self.turn.record.response
        server = prompt_tokens(response.usage) if response is not None else None
        if server is not None:
            return TokenCount(server, "server")
        return self.engine.prompt_tokens(self.turn)

    def option(self, rule: Rule, name: str) -> Any:
        return self.engine.options.rule_options.get(rule.code, {}).get(name, rule.options[name])

    def passback_required(self, message: dict[str, Any]) -> bool:
        """Whether the profile says this assistant message's reasoning must go back."""
        return passback_required(self.profile, self.request, message)

    def known_reasoning(self, identity: tuple) -> dict[str, Any] | None:
        return self.ledger.get(identity)


@dataclass(slots=True)
class TurnMetrics:
    messages: int
    tokens: int
    counter: str
    window: int | None
    window_source: str | None
    finish_reason: str | None
    status: int | None
    model: str | None

    @property
    def ratio(self) -> float | None:
        return self.tokens / self.window if self.window else None


@dataclass(slots=True)
class LintResult:
    findings: list[Finding]
    sessions: list[Session]
    metrics: dict[tuple[str, int], TurnMetrics]
    coverage: dict[str, dict[str, Any]]


@dataclass(slots=True)
class Tally:
    """What checking some sessions produced; tallies of disjoint sessions merge exactly."""

    findings: list[Finding] = field(default_factory=list)
    metrics: dict[tuple[str, int], "TurnMetrics"] = field(default_factory=dict)
    judged: Counter = field(default_factory=Counter)
    unjudged: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    caveats: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    sessions: int = 0

    def merge(self, other: "Tally") -> None:
        self.findings += other.findings
        self.metrics.update(other.metrics)
        self.judged.update(other.judged)
        for mine, theirs in ((self.unjudged, other.unjudged), (self.caveats, other.caveats)):
            for code, reasons in theirs.items():
                mine[code].update(reasons)
        self.sessions += other.sessions


def session_work(session: Session) -> int:
    """How much checking a session takes, about: the messages of all its requests."""
    return sum(len(turn.messages) + 1 for turn in session.turns)


def partition(sessions: list[Session], parts: int) -> list[list[Session]]:
    """Sessions dealt into parts of about equal work, largest first."""
    buckets: list[tuple[int, int, list[Session]]] = [(0, index, []) for index in range(parts)]
    for session in sorted(sessions, key=session_work, reverse=True):
        load, index, members = heapq.heappop(buckets)
        members.append(session)
        heapq.heappush(buckets, (load + session_work(session), index, members))
    return [members for _, _, members in sorted(buckets, key=lambda b: b[1]) if members]


_WORK: tuple["Engine", list[list[Session]]] | None = None


def _check_part(index: int) -> Tally:
    engine, parts = _WORK
    tally = engine.check_sessions(parts[index])
    tally.sessions = len(parts[index])
    return tally


class LogContext:
    """What log-scope rules read: every session with its turns, in input order."""

    def __init__(self, engine: "Engine", sessions: list[Session]) -> None:
        self.engine = engine
        self.sessions = sessions


def session_fingerprint_base(session: Session) -> str:
    if session.explicit_key:
        return session.id
    return short_hash([list(map(str, ident)) for ident in session.first.identities[:4]])


class Engine:
    def __init__(self, rules: list[Rule], profiles: ProfileBook | None = None, counter: TokenCounter | None = None,
                 options: LintOptions | None = None) -> None:
        self.rules = rules
        self.profiles = profiles or ProfileBook()
        self.counter = counter or TokenCounter()
        self.options = options or LintOptions()
        self._tool_tokens: dict[str, int] = {}

    def prompt_tokens(self, turn: Turn) -> TokenCount:
        model = turn.record.model
        count = self.counter.count_messages(turn.messages, model)
        tools = turn.record.request.get("tools")
        if tools:
            key = short_hash(tools)
            if key not in self._tool_tokens:
                self._tool_tokens[key] = self.counter.count_text(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS).decode(), model).tokens
            count = TokenCount(count.tokens + self._tool_tokens[key], count.counter)
        return count

    def _finding(self, rule: Rule, session: Session | None, turn: Turn | None, violation: Violation, file: str, line: int) -> Finding:
        # Line numbers stay out of the fingerprint, so appending records keeps a baseline valid.
        base = session_fingerprint_base(session) if session is not None else file
        turn_content = short_hash([list(map(str, ident)) for ident in turn.identities]) if turn is not None else ""
        return Finding(
            code=rule.code, name=rule.name,
            severity=self.options.severities.get(rule.code, rule.severity),
            message=violation.message, file=file, line=line,
            session=session.id if session else None, turn=turn.number if turn else None,
            message_index=violation.message_index, tool_call_id=violation.tool_call_id,
            pointer=violation.pointer, evidence=violation.evidence,
            remediation=rule.remediation,
            fingerprint=short_hash(rule.code, base, turn_content, repr(violation.key)),
        )

    def run(self, sessions: list[Session], progress: NoProgress | None = None, jobs: int = 1) -> LintResult:
        """Findings, per-turn metrics and coverage; with jobs > 1, sessions are checked in
        forked worker processes (each session wholly in one), with the same result."""
        progress = progress or NoProgress()
        progress.checking(len(sessions))
        if jobs > 1 and len(sessions) > 1 and "fork" in multiprocessing.get_all_start_methods():
            tally = self._check_in_workers(sessions, jobs, progress)
        else:
            tally = self.check_sessions(sessions, progress)
            tally.merge(self.check_log(sessions))
        coverage = {
            rule.code: {"judged": tally.judged[rule.code], "not_judged": dict(sorted(tally.unjudged[rule.code].items())),
                        "judged_with_caveats": dict(sorted(tally.caveats[rule.code].items()))}
            for rule in self.rules
        }
        tally.findings.sort(key=Finding.sort_key)  # stable: a session's findings keep their order
        return LintResult(tally.findings, sessions, tally.metrics, coverage)

    def check_sessions(self, sessions: Iterable[Session], progress: NoProgress | None = None) -> "Tally":
        """The request- and session-scope rules over each session, turn by turn."""
        tally = Tally()
        turn_rules = [r for r in self.rules if r.scope != "log"]
        for session in sessions:
            ledger = ReasoningLedger()
            reported: set[tuple] = set()
            previous = None
            for turn in session.turns:
                ctx = TurnContext(self, session, turn, previous, ledger)
                for rule in turn_rules:
                    reason = rule.cannot_judge(ctx)
                    if reason:
                        tally.unjudged[rule.code][reason] += 1
                        continue
                    tally.judged[rule.code] += 1
                    caveat = rule.caveat(ctx)
                    if caveat:
                        tally.caveats[rule.code][caveat] += 1
                    for violation in rule.check(ctx):
                        marker = (rule.code, violation.key)
                        if marker not in reported:  # a defect is reported once, where it starts
                            reported.add(marker)
                            tally.findings.append(self._finding(rule, session, turn, violation, turn.record.file, turn.record.line))
                tally.metrics[(session.id, turn.number)] = self._metrics(ctx)
                self._learn(ledger, turn)
                previous = turn
            if progress is not None:
                progress.checked()
        return tally

    def check_log(self, sessions: list[Session]) -> "Tally":
        """The rules that compare sessions with each other."""
        tally = Tally()
        log_ctx = LogContext(self, sessions)
        for rule in (r for r in self.rules if r.scope == "log"):
            tally.judged[rule.code] += sum(len(s.turns) for s in sessions)
            reported: set[tuple] = set()
            for session, turn, violation in rule.check_log(log_ctx):
                marker = (session.id, violation.key)
                if marker not in reported:
                    reported.add(marker)
                    tally.findings.append(self._finding(rule, session, turn, violation, turn.record.file, turn.record.line))
        return tally

    def _check_in_workers(self, sessions: list[Session], jobs: int, progress: NoProgress) -> "Tally":
        global _WORK
        parts = partition(sessions, jobs)
        _WORK = (self, parts)  # forked workers inherit the parsed sessions: nothing is pickled in
        tally = Tally()
        try:
            with multiprocessing.get_context("fork").Pool(len(parts)) as pool:
                pending = pool.map_async(_check_part, range(len(parts)))
                log_tally = self.check_log(sessions)  # the parent compares sessions meanwhile
                for part_tally in pending.get():
                    tally.merge(part_tally)
                    for _ in range(part_tally.sessions):
                        progress.checked()
        finally:
            _WORK = None
        tally.merge(log_tally)
        return tally

    @staticmethod
    def _learn(ledger: ReasoningLedger, turn: Turn) -> None:
        for message, identity in zip(turn.messages, turn.identities):
            if role_of(message) == "assistant":
                ledger.record(identity, message, f"turn {turn.number} request")
        response = turn.response_message
        if response is not None:
            ledger.record(message_identity(response), response, f"turn {turn.number} response")

    @staticmethod
    def _metrics(ctx: TurnContext) -> TurnMetrics:
        response = ctx.turn.record.response
        tokens = ctx.tokens
        return TurnMetrics(
            messages=len(ctx.messages), tokens=tokens.tokens, counter=tokens.counter,
            window=ctx.profile.context_window, window_source=ctx.profile.window_source,
            finish_reason=response.finish_reason if response else None,
            status=response.status if response else None,
            model=ctx.turn.record.model,
        )


def problem_findings(problems: Iterable[InputProblem], rule: Rule, engine: Engine) -> list[Finding]:
    """CTX900 findings for lines that never became records."""
    return [
        engine._finding(rule, None, None, Violation(p.message, key=(p.message, p.pointer), pointer=p.pointer), p.file, p.line)
        for p in problems
    ]
