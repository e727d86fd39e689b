"""Run the rules over sessions: each rule sees each request once, in order, with context."""

from __future__ import annotations

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

    def run(self, sessions: list[Session], progress: NoProgress | None = None) -> LintResult:
        progress = progress or NoProgress()
        progress.checking(len(sessions))
        findings: list[Finding] = []
        metrics: dict[tuple[str, int], TurnMetrics] = {}
        judged: Counter = Counter()
        unjudged: dict[str, Counter] = defaultdict(Counter)
        caveats: dict[str, Counter] = defaultdict(Counter)
        reported: set[tuple] = set()
        turn_rules = [r for r in self.rules if r.scope != "log"]
        for session in sessions:
            ledger = ReasoningLedger()
            previous = None
            for turn in session.turns:
                ctx = TurnContext(self, session, turn, previous, ledger)
                for rule in turn_rules:
                    reason = rule.cannot_judge(ctx)
                    if reason:
                        unjudged[rule.code][reason] += 1
                        continue
                    judged[rule.code] += 1
                    caveat = rule.caveat(ctx)
                    if caveat:
                        caveats[rule.code][caveat] += 1
                    for violation in rule.check(ctx):
                        marker = (rule.code, session.id, violation.key)
                        if marker in reported:
                            continue
                        reported.add(marker)
                        findings.append(self._finding(rule, session, turn, violation, turn.record.file, turn.record.line))
                metrics[(session.id, turn.number)] = self._metrics(ctx)
                self._learn(ledger, turn)
                previous = turn
            progress.checked()
        log_ctx = LogContext(self, sessions)
        for rule in (r for r in self.rules if r.scope == "log"):
            judged[rule.code] += sum(len(s.turns) for s in sessions)
            for session, turn, violation in rule.check_log(log_ctx):
                marker = (rule.code, session.id, violation.key)
                if marker not in reported:
                    reported.add(marker)
                    findings.append(self._finding(rule, session, turn, violation, turn.record.file, turn.record.line))
        coverage = {
            rule.code: {"judged": judged[rule.code], "not_judged": dict(sorted(unjudged[rule.code].items())),
                        "judged_with_caveats": dict(sorted(caveats[rule.code].items()))}
            for rule in self.rules
        }
        findings.sort(key=Finding.sort_key)
        return LintResult(findings, sessions, metrics, coverage)

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
