"""What a rule is, what it reports, and the small values that carry a finding."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable

from ctxlint.chat import role_of, tool_calls_of

if TYPE_CHECKING:
    from ctxlint.engine import Place, TurnContext

SEVERITIES = ("info", "warning", "error")
NO_CHAIN = "no session key and no chain found"
SECTIONS = ("What it does", "Why is this bad?", "Example")


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass(frozen=True, slots=True)
class Violation:
    """What a rule saw at one request; the engine adds the location."""

    message: str
    key: Any  # what identifies the defect across requests, so it is reported once
    message_index: int | None = None
    tool_call_id: str | None = None
    pointer: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    # keys of defects this one covers: when any was reported, this one was too (and once
    # this one is, they all are)
    covers: tuple = ()
    # codes of rules whose finding at the same request explains this one (a provider's error
    # about the defect they report): when one of them sees a defect there, this one is not
    # reported (nothing is lost when they are not selected)
    explained_by: tuple[str, ...] = ()
    # (code, message index) where another rule sees this same defect at the same request (a
    # lost reply as the user messages it stood between, a result as its call turn lost): that
    # rule's finding standing there is not reported (it is, when this rule is not selected)
    shows_as: tuple[tuple[str, int], ...] = ()
    # a severity below the rule's default, for a class of cases the rule's docs name; a
    # severity the user configured for the rule wins over both
    severity: str | None = None
    # where in the request the defect stands, when not at message_index: a message missing
    # or two that should not be adjacent stand after the message before (a recurring
    # defect goes on in the part of the request it stands in: TurnContext.in_stored_history)
    stands_at: int | None = None

    @property
    def standing(self) -> int | None:
        """Where in the request the defect stands: stands_at, else the message it is about."""
        return self.message_index if self.stands_at is None else self.stands_at


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    severity: str
    message: str
    file: str
    line: int
    session: str | None
    turn: int | None
    message_index: int | None
    tool_call_id: str | None
    pointer: str | None
    evidence: dict[str, Any]
    remediation: str
    fingerprint: str

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.turn or 0, self.code, self.message_index if self.message_index is not None else -1, self.tool_call_id or "")


class Rule:
    """Base of every rule. A subclass sets the class attributes and one check method.

    scope: "request" (one messages array), "session" (also reads earlier requests of
    the session through the context), "log" (across sessions: reads the facts of each
    request into a shard, one per process that checks sessions, and judges the shards of
    the whole log at once; a --jobs worker keeps in its shard only what that judgment
    needs, so the parent does not receive every request's facts).

    A request's messages up to ctx.unchanged(rule) are the previous request's, judged by
    this rule already: a rule whose verdict on a message depends only on what comes before
    it (plus a known lookahead) starts there, and its findings are the same.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    scope: ClassVar[str] = "request"
    remediation: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}
    # What a judgment depends on (window, thinking_profile, chain, previous_response, reasoning, settings, tokens),
    # so the coverage report can say which requests could not be judged, and why.
    needs: ClassVar[tuple[str, ...]] = ()
    # An app's way of storing or assembling history that, once wrong, is wrong again at each
    # request that adds a turn (a reply stored without its reasoning, a result sent as a user
    # message): one defect, reported where it starts. It goes on through the requests that
    # store no message it is about (recurs_on: roles, "calls" for an assistant message with
    # tool calls), and ends at one that stores such a message right; a new instance after
    # that is a new defect.
    recurs: ClassVar[bool] = False
    recurs_on: ClassVar[tuple[str, ...]] = ()
    # Run only when selected (by code, name, prefix or ALL), not by default: a rule that
    # judges no defect of the request as sent (a prompt near its window, a large tool
    # result), so its findings on legal traffic are advice, not alarms.
    opt_in: ClassVar[bool] = False

    def stores_again(self, message: dict[str, Any]) -> bool:
        """Whether storing this message gives the app the chance to repeat the rule's defect."""
        role = role_of(message)
        return role in self.recurs_on or ("calls" in self.recurs_on and role == "assistant" and bool(tool_calls_of(message)))

    def cannot_judge(self, ctx: "TurnContext") -> str | None:
        """Why this request cannot be judged by the rule (for the coverage report), or None."""
        for need in self.needs:
            if need == "window" and ctx.profile.context_window is None:
                return "unknown model: no context window"
            if need == "thinking_profile" and ctx.profile.thinking_mode is None:
                return "unknown model: no thinking profile"
            if need == "chain" and not ctx.session.explicit_key and ctx.turn.number == 1:
                return NO_CHAIN  # until a second request shows the chain: the engine decides later
            if need == "previous_response" and ctx.previous is not None and ctx.previous.record.response is None:
                return "no response logged for the previous request"
            if need == "reasoning" and not ctx.turn.record.reasoning_recorded:
                return "the log does not record the reasoning sent back"
            if need == "settings" and not ctx.turn.record.settings_recorded:
                return "the log does not record the request's settings"
        return None

    def check_in_part(self, ctx: "TurnContext") -> Iterable[Violation]:
        """What the rule still finds in a request it cannot judge whole (cannot_judge gave a
        reason): defects that need none of what is missing. The request stays unjudged in the
        coverage report."""
        return ()

    def caveat(self, ctx: "TurnContext") -> str | None:
        """What makes a judgment of this request less than certain, for the coverage report."""
        if "tokens" in self.needs and not ctx.tokens.exact:
            return f"tokens {'estimated' if ctx.tokens.counter == 'estimate' else 'approximated'}, not counted ({ctx.tokens.counter})"
        return None

    def check(self, ctx: "TurnContext") -> Iterable[Violation]:
        return ()

    def start_shard(self) -> Any:
        """A log-scope rule's shard before the first request: what one process will keep
        of the requests it reads."""
        return None

    def facts(self, ctx: "TurnContext") -> Any:
        """What a log-scope rule reads of one request, apart from the rest of the log."""
        return None

    def read(self, shard: Any, facts: Any, rank: int, where: Callable[[], "Place"]) -> None:
        """Keep in the shard what judging this request against the whole log needs. The
        requests of a session come in input order, `rank` says where in it, and where()
        gives the request's Place for a finding."""

    def judge_shards(self, shards: list[Any]) -> Iterable[tuple["Place", Violation]]:
        """A log-scope rule's verdicts on the whole log, from every process's shard, in
        input order."""
        return ()

    @classmethod
    def listed_severity(cls) -> str:
        """The default severity as rule lists show it, marked when the rule runs only if selected."""
        return f"{cls.severity} (opt-in)" if cls.opt_in else cls.severity

    @classmethod
    def summary(cls) -> str:
        first_paragraph = docs_sections(cls)["What it does"].split("\n\n")[0].replace("\n", " ")
        return re.split(r"(?<=[.!?])\s", first_paragraph, maxsplit=1)[0]


def docs_sections(rule: type[Rule]) -> dict[str, str]:
    """The docstring's three sections: What it does / Why is this bad? / Example."""
    text = inspect.cleandoc(rule.__doc__ or "")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    sections = {title.strip(): body.strip() for title, body in zip(parts[1::2], parts[2::2])}
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise ValueError(f"{rule.code} docstring lacks sections: {', '.join(missing)}")
    return sections
