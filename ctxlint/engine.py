"""Run the rules over sessions, request by request, in the order the requests arrive.

Each rule sees each request once, with what the session's earlier requests left behind:
the previous request, the reasoning each assistant turn carried, the defects already
reported. A request that re-sends the previous request's messages (the same objects:
ingest shares them) is judged only from where it differs, since the part it shares was
judged already, under the same settings; a defect is reported once, where it starts.
"""

from __future__ import annotations

from array import array
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import islice
from typing import Any, Callable, Iterable, Iterator, NamedTuple

import orjson

from ctxlint.chat import ReasoningSeen, call_made, greeting_only, last_user_index, message_identity, returned_reasoning, role_of, sealed, short_hash, text_of, tool_calls_of
from ctxlint.ingest.record import InputProblem, Record, too_deep
from ctxlint.ingest.shapes import LOG_FIELDS
from ctxlint.profiles import Profile, ProfileBook, passback_required, settings_sent, tool_loop_start
from ctxlint.profiles.lookup import summary_message, thinking_binding
from ctxlint.rules.base import NO_CHAIN, Finding, Rule, Violation
from ctxlint.sessions.grouping import ROUTED_PARTS, SessionAssembler, Thread, carrying_older, note_reply, part_name, route
from ctxlint.sessions.history import Transition, align, side_request_on
from ctxlint.sessions.model import Session, Turn, make_turn, opening_kind
from ctxlint.sessions.thinking_prefix import ThinkingPrefix, thinking_prefix
from ctxlint.spill import Spill
from ctxlint.tokens.counter import TOKENS_PER_REPLY, TokenCount, TokenCounter, message_text, prompt_tokens


HOT_SESSIONS = 384  # sessions kept awake (their previous request held whole) while streaming
UNFINISHED = ("length", "pause_turn")  # how a reply ends that the next one may go on with
# The most tokens an offline count gives a character of text read as a whole: about 1.08 on
# Chinese for cl100k_base, less on other text (counted_past_window's first, cheap test)
MAX_TOKENS_PER_CHARACTER = 1.5


def order(record: Record) -> int:
    """Where a record is checked in a stream: in input order, except that an OpenAI Batch
    input waits for its output (ingest.sort_items) and comes after the others."""
    return (record.custom_id is not None) << 62 | record.seq


@dataclass(slots=True)
class LintOptions:
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    severities: dict[str, str] = field(default_factory=dict)


class ReasoningLedger:
    """The reasoning each assistant turn first carried in this session, by turn identity.

    An entry with no fields means the turn was seen (in a logged response or a request)
    without any reasoning: the model did not think there, so there is nothing to pass back.
    Such an entry is kept as its origin alone, and a reasoning value as its digest. An
    entry also names the model profile it was seen under (`_family`), the fields whose
    value the provider verifies (`_sealed`: signed blocks, encrypted items), and the other
    values a field had where the model returned the same turn again with other reasoning
    (`_also`: the same calls, ids and all, which recorded traffic repeats), any of which
    may come back.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple, dict[str, Any] | str] = {}

    def get(self, identity: tuple, message: dict[str, Any]) -> dict[str, Any] | None:
        entry = self._seen.get(_turn_key(identity, message))
        return {"_origin": entry} if isinstance(entry, str) else entry

    def record(self, identity: tuple, message: dict[str, Any], origin: str, family: str | None) -> None:
        identity = _turn_key(identity, message)
        entry = self._seen.get(identity)
        for name, value in returned_reasoning(message):
            if entry is None or isinstance(entry, str):
                entry = self._seen[identity] = {"_origin": entry or origin, "_family": family}
            seen = ReasoningSeen.of(value)
            if name not in entry:
                entry[name] = seen
                if sealed(name, value):
                    entry["_sealed"] = (*entry.get("_sealed", ()), name)
            elif seen != entry[name]:
                entry.setdefault("_also", {}).setdefault(name, set()).add(seen)
        if entry is None:
            self._seen[identity] = origin


def _turn_key(identity: tuple, message: dict[str, Any]) -> tuple:
    """A turn in the ledger: its identity, and for a call turn what its calls do, for a
    server may give other calls the same ids (recorded traffic draws them from a small pool)."""
    return (*identity, hash(tuple(map(call_made, tool_calls_of(message))))) if identity[:2] == ("assistant", "calls") else identity


def thinking_enabled(request: dict[str, Any], profile: Profile, replied_with_reasoning: bool = False,
                     settings_recorded: bool = True) -> bool | None:
    """Whether the request runs the model in thinking mode: True, False, or None (unknown).
    Where the request does not say, a logged reply that carries reasoning says it thought
    (a host may switch thinking on by default where the maker's API does not); else the
    model's default, where the log records the request's settings at all."""
    if profile.thinking_mode == "always":
        return True
    if profile.thinking_mode == "never":
        return False
    thinking = request.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        return thinking["type"] == "enabled"
    if isinstance(thinking, dict) and thinking.get("type") in ("auto", "adaptive"):
        return None  # the model decides per request whether to think
    if isinstance(request.get("enable_thinking"), bool):
        return request["enable_thinking"]
    think = request.get("think")  # Ollama: true/false, or an effort for the models that take one
    if isinstance(think, bool) or think in ("low", "medium", "high"):
        return bool(think)
    template = request.get("chat_template_kwargs")  # vLLM and SGLang hosts: the chat template's switch
    if isinstance(template, dict):
        switch = template.get("enable_thinking", template.get("thinking"))
        if isinstance(switch, bool):
            return switch
    if request.get("reasoning_effort") == "none":
        return False
    if replied_with_reasoning:
        return True
    if profile.thinking_mode == "toggle" and settings_recorded:
        return profile.thinking_default
    return None


def settings_digest(request: dict[str, Any]) -> str:
    """Identity of everything a request sets besides its messages (model, tools, thinking…),
    not what a logger wrote beside a bare body (its time, its session key)."""
    return short_hash({name: value for name, value in request.items() if name != "messages" and name not in LOG_FIELDS})


@dataclass(slots=True)
class TurnMetrics:
    number: int
    file: str
    line: int
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


_ROW = 10  # numbers kept per request: see SessionSummary.add
_NONE = -1


class SessionSummary:
    """What the report keeps of a session: its identity and one row of facts per request,
    packed as numbers (with the few texts they name kept once per session), so a log of a
    million requests keeps a few tens of bytes for each."""

    __slots__ = ("id", "file", "explicit_key", "order", "_rows", "_texts")

    def __init__(self, session_id: str, file: str, explicit_key: bool, order: int) -> None:
        self.id = session_id
        self.file = file
        self.explicit_key = explicit_key
        self.order = order  # where its first request is in the input (see `order`)
        self._rows = array("q")
        self._texts: list[str | None] = [None]

    def _text(self, value: str | None) -> int:
        try:
            return self._texts.index(value)
        except ValueError:
            self._texts.append(value)
            return len(self._texts) - 1

    def add(self, row: TurnMetrics) -> None:
        self._rows.extend((row.line, row.messages, row.tokens, _NONE if row.window is None else row.window,
                           _NONE if row.status is None else row.status, self._text(row.file), self._text(row.counter),
                           self._text(row.window_source), self._text(row.finish_reason), self._text(row.model)))

    def __len__(self) -> int:
        return len(self._rows) // _ROW

    @property
    def turns(self) -> list[TurnMetrics]:
        rows, texts = self._rows, self._texts
        return [TurnMetrics(number=n + 1, file=texts[rows[at + 5]], line=rows[at], messages=rows[at + 1], tokens=rows[at + 2],
                            counter=texts[rows[at + 6]], window=None if rows[at + 3] == _NONE else rows[at + 3],
                            window_source=texts[rows[at + 7]], finish_reason=texts[rows[at + 8]],
                            status=None if rows[at + 4] == _NONE else rows[at + 4], model=texts[rows[at + 9]])
                for n, at in enumerate(range(0, len(rows), _ROW))]

    def last_tokens(self) -> int:
        return self._rows[-_ROW + 2]

    def counters(self) -> Counter:
        """How many of the session's requests each token counter counted."""
        return Counter(self._texts[text] for text in self._rows[6::_ROW])


class Taken(NamedTuple):
    """What a host answered, of a session's requests to one model: a request with a
    successful reply, and the unanswered requests to the same model after it. What such a
    host took, a maker's API may refuse (CTX004, CTX029–CTX034, CTX036 and CTX037 spare it)."""

    model: str | None
    messages: int  # leading messages every request of the run sent
    settings: frozenset[tuple[str, str]]  # what every request of the run sent of the settings an API may refuse (settings_sent)


class SessionCheck:
    """What the engine keeps of one session between its requests: of its first request the
    line and opening messages, the previous request (slimmed once the session is idle),
    the reasoning ledger, the replies that were cut off, the defects reported."""

    __slots__ = ("summary", "first_line", "opening", "previous", "ledger", "reported", "judged", "pending", "settings", "fingerprint_base",
                 "greeting", "unfinished", "summaries", "refused", "asked_aside", "history_cut", "thread", "tools_offered", "recurring",
                 "taken", "thought_under", "thinking_prefix", "unstored_items",
                 "tools_declared")

    def __init__(self, session_id: str, file: str, explicit_key: bool, first: int) -> None:
        self.summary = SessionSummary(session_id, file, explicit_key, first)
        self.first_line = 0
        # "system"/"user" -> (index, message, turn, label) of what the session must keep sending:
        # its first system and user message, or what replaced one legitimately (an edit, a
        # summary: CTX008 moves it there, with a label that names it)
        self.opening: dict[str, tuple[int, dict[str, Any], int, str | None, str]] = {}
        # (index, identity) of the greeting alone the session opened with: the first user
        # message that says something is the one to keep, once a request sends it (CTX008)
        self.greeting: tuple[int, tuple] | None = None
        self.previous: Turn | None = None
        self.ledger = ReasoningLedger()
        self.reported: set[tuple] | None = None
        self.judged = 0  # bit per rule: judged the previous request
        self.pending = 0  # bit per rule: judging waits for a second request to show the chain
        self.settings: str | None = None  # settings_digest of the previous request
        self.fingerprint_base: str | None = None
        # identities of replies the session got cut off (finish_reason length) or paused
        # (Anthropic's pause_turn): the next reply may continue them (CTX024, CTX025)
        self.unfinished: frozenset[tuple] = frozenset()
        self.summaries: frozenset[tuple] = frozenset()  # identities of messages put in place of cut history (CTX003)
        self.refused: frozenset[tuple] = frozenset()  # identities of user messages whose request got an error reply (CTX003)
        # identities of what requests asked after the history and the next one asked no more (CTX016)
        self.asked_aside: frozenset[tuple] = frozenset()
        # a request has left out messages of the one before: the app trims or folds its history
        # (CTX016 does not read a tool exchange that vanishes after that as a turn stored as text)
        self.history_cut = False
        self.thread: Thread | None = None  # what routing the key's next request needs (grouping.route); keyed sessions only
        self.tools_offered: Any = None  # whose tools the session last declared, and earlier agents' (CTX014)
        # bit per recurring rule (Rule.recurs) whose defect goes on, in the live turn (after
        # the request's last user message) and in the stored history (before it): a message
        # stored right ends the defect of its part only (an app may send its tool loop right
        # and store it wrong)
        self.recurring = (0, 0)
        self.taken: Taken | None = None  # what a host answered, to the model the session's requests go to since
        # settings_digest of the latest request whose logged reply carried reasoning: a request
        # sent with the same settings thinks too, its own reply logged or not (CTX004)
        self.thought_under: str | None = None
        # what the previous request showed of the prefixes its thinking blocks are bound to,
        # where its model binds them (CTX038)
        self.thinking_prefix: ThinkingPrefix | None = None
        # ids of the Responses API reasoning items the session's replies to requests sent with
        # `store: false` returned: the provider kept none of them (CTX040)
        self.unstored_items: frozenset[str] = frozenset()
        # a request of the session declared tools: the log records them where they are sent (CTX039)
        self.tools_declared = False

    @property
    def id(self) -> str:
        return self.summary.id

    @property
    def explicit_key(self) -> bool:
        return self.summary.explicit_key

    @property
    def turns(self) -> int:
        return len(self.summary)


class Dormant:
    """A session no request has come for in a while, packed into the spill whole (its
    summary too), its previous request slimmed first (Turn.slimmed)."""

    __slots__ = ("handle",)

    def __init__(self, session: SessionCheck, spill: Spill) -> None:
        if session.previous is not None:
            session.previous = session.previous.slimmed()
        self.handle = spill.put(tuple(getattr(session, name) for name in SessionCheck.__slots__))

    def wake(self, spill: Spill) -> SessionCheck:
        session = SessionCheck.__new__(SessionCheck)
        for name, value in zip(SessionCheck.__slots__, spill.take(self.handle)):
            setattr(session, name, value)
        return session


class SummaryShelf:
    """The summaries of closed sessions, packed into the spill and read back one at a time,
    in input order of their first requests: a report over a million sessions keeps a few
    bytes of each in memory until it is written."""

    def __init__(self, spill: Spill) -> None:
        self._spill = spill
        self._orders = array("q")
        self._handles = array("q")
        self._sorted = True

    def append(self, summary: SessionSummary) -> None:
        self._orders.append(summary.order)
        self._handles.append(self._spill.put(summary))
        self._sorted = self._sorted and (len(self._orders) < 2 or self._orders[-2] <= self._orders[-1])

    def _in_order(self) -> None:
        if not self._sorted:
            positions = sorted(range(len(self._orders)), key=self._orders.__getitem__)
            self._orders = array("q", (self._orders[p] for p in positions))
            self._handles = array("q", (self._handles[p] for p in positions))
            self._sorted = True

    def __len__(self) -> int:
        return len(self._handles)

    def __iter__(self) -> Iterator[SessionSummary]:
        self._in_order()
        return (self._spill.get(handle) for handle in self._handles)

    def __getitem__(self, index: int | slice) -> SessionSummary | list[SessionSummary]:
        self._in_order()
        if isinstance(index, slice):
            return [self._spill.get(handle) for handle in self._handles[index]]
        return self._spill.get(self._handles[index])


class TurnContext:
    """Everything a rule may read about one request. Expensive parts are computed on demand."""

    def __init__(self, engine: "Engine", session: SessionCheck, turn: Turn) -> None:
        self.engine = engine
        self.session = session
        self.turn = turn
        self.previous = session.previous
        self.ledger = session.ledger

    @property
    def request(self) -> dict[str, Any]:
        return self.turn.record.request

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.turn.messages

    def label(self, index: int) -> str:
        """How a finding's text names message `index` of this request: as the body that was
        sent numbers it (an Anthropic body's top-level system prompt, its tool_result blocks)."""
        return self.turn.record.label(index)

    def unchanged(self, rule: Rule) -> int:
        """How many leading messages this request shares with the previous one, when the
        rule judged that request under the same settings and the provider did not refuse it:
        what is left to judge starts there. After a refusal the whole request is judged again,
        so that a defect reported before is seen here too and explains the refusal of its
        resending (a 429 first, then a 400 to the same request)."""
        if not self.turn.shared or not self.session.judged & self.engine.bit[rule.code] or self.settings != self.session.settings:
            return 0
        response = self.previous.record.response
        return 0 if response is not None and response.failed else self.turn.shared

    @cached_property
    def settings(self) -> str:
        return settings_digest(self.request)

    @cached_property
    def transition(self) -> Transition | None:
        return align(self.previous, self.turn) if self.previous is not None else None

    @cached_property
    def side_request(self) -> bool:
        """Whether this request is a side request on the previous one's history as it stood
        (history.side_request_on): the conversation goes on from the previous request."""
        return self.previous is not None and side_request_on(self.previous, self.turn, self.transition)

    @cached_property
    def first_stored(self) -> list[int]:
        """Indexes of the messages this request holds as history for the first time (Transition.first_stored)."""
        if self.transition is None:
            return list(range(len(self.messages)))
        return self.transition.first_stored(self.previous.identities, self.turn.identities)

    @cached_property
    def last_user(self) -> int:
        return last_user_index(self.messages)

    def in_stored_history(self, index: int | None) -> bool:
        """Whether message `index` stands before the request's last user message: history the
        app stored, not the tool loop still going (a finding about no message: the live turn)."""
        return index is not None and index < self.last_user

    def stores_again(self, rule: Rule, in_stored_history: bool) -> bool:
        """Whether the request holds for the first time, in the stored history or in the live
        turn, a message the rule's recurring defect is about."""
        return any(rule.stores_again(self.messages[index]) for index in self.first_stored
                   if self.in_stored_history(index) == in_stored_history)

    @cached_property
    def profile(self) -> Profile:
        return self.engine.profiles.for_record(self.turn.record)

    @cached_property
    def replied_with_reasoning(self) -> bool:
        reply = self.turn.response_message
        return reply is not None and any(returned_reasoning(reply))

    @cached_property
    def thinking(self) -> bool | None:
        thought = self.replied_with_reasoning or self.session.thought_under == self.settings
        return thinking_enabled(self.request, self.profile, thought, self.turn.record.settings_recorded)

    @cached_property
    def thinking_prefix(self) -> ThinkingPrefix | None:
        """What this request shows of its thinking blocks' prefixes, where its model binds
        thinking blocks to them (profile data's thinking_binding); else None."""
        binding = thinking_binding(self.turn.record.model)
        if binding is None:
            return None
        return thinking_prefix(self.turn.record, self.session.thinking_prefix, self.turn.shared, tuple(binding.get("system_lines_apart", ())))

    @cached_property
    def counting_error(self) -> float:
        """How far the prompt's token count can be off (TokenCount.counting_error_of)."""
        return self.tokens.counting_error_of(self.messages, self.profile.tokens_per_cjk_character)

    def past_window(self, window: int) -> bool:
        """Whether the prompt is past the window even if its count is off by as much as it
        can be (the counter's own error tested first: most prompts are far from the window)."""
        return self.tokens.over(window) and self.tokens.over(window, self.counting_error)

    @cached_property
    def tokens(self) -> TokenCount:
        response = self.turn.record.response
        server = prompt_tokens(response.usage) if response is not None else None
        if server is not None:
            return TokenCount(server, "server")
        return self.engine.prompt_tokens(self.turn, self.previous)

    def counted_past_window(self, window: int) -> TokenCount | None:
        """ctxlint's own count of a prompt the server counted within the window, where that
        count is past the window even if off by as much as it can be: the logged usage is not
        this body's, or a gateway cut the prompt to fit it (OpenRouter's middle-out)."""
        if self.tokens.counter != "server" or self.tokens.tokens > window:
            return None
        if self.engine.prompt_characters(self.turn, self.previous) * MAX_TOKENS_PER_CHARACTER <= window:
            return None  # too short to pass the window, however its text is counted
        counted = self.engine.prompt_tokens(self.turn, self.previous)
        return counted if counted.over(window, counted.counting_error_of(self.messages, self.profile.tokens_per_cjk_character)) else None

    @property
    def previous_tokens(self) -> int | None:
        return self.session.summary.last_tokens() if self.previous is not None else None

    def option(self, rule: Rule, name: str) -> Any:
        return self.engine.options.rule_options.get(rule.code, {}).get(name, rule.options[name])

    def passback_required(self, index: int) -> bool:
        """Whether the profile says the reasoning of assistant message `index` must go back."""
        return passback_required(self.profile, self.turn.record, self.messages[index], index > self.tool_loop_start)

    @cached_property
    def tool_loop_start(self) -> int:
        return tool_loop_start(self.profile, self.messages)

    @property
    def taken(self) -> Taken | None:
        """What a host answered of the session's requests to this request's model (Taken)."""
        taken = self.session.taken
        return taken if taken is not None and taken.model == self.turn.record.model and self.previous is not None else None

    def host_took(self, sent: tuple[str, str]) -> bool:
        """Whether a host answered a request of the session to this model that sent the same
        of what a maker's API may refuse (settings_sent names it `sent`), every request since
        sending it too."""
        taken = self.taken
        return taken is not None and sent in taken.settings

    @cached_property
    def taken_before(self) -> int:
        """How many leading messages of this request a host answered before, sent to the same
        model (by identity, which a slimmed previous request keeps): taken as they are."""
        taken = self.taken
        if taken is None:
            return 0
        shared = next((index for index, (before, now) in enumerate(zip(self.previous.identities, self.turn.identities)) if before != now),
                      min(len(self.previous.identities), len(self.turn.identities)))
        return min(taken.messages, shared)

    def taken_after(self) -> Taken | None:
        """Session.taken once this request is judged: its own, where it was answered; else the
        run of requests to its model goes on, narrowed to what this one sent too."""
        record = self.turn.record
        if record.answered:
            return Taken(record.model, len(self.turn.identities), settings_sent(record, self.profile))
        taken = self.taken
        return None if taken is None else Taken(taken.model, self.taken_before, taken.settings & settings_sent(record, self.profile))

    def known_reasoning(self, index: int) -> dict[str, Any] | None:
        """What the ledger knows of the reasoning of message `index`'s turn. Reasoning another
        model returned (the conversation moved to another model, as frameworks that switch
        models do) is not this model's to get back: the turn is judged by this model's profile alone."""
        known = self.ledger.get(self.turn.identities[index], self.messages[index])
        family = known.get("_family") if known else None
        if family is not None and self.profile.known and family != self.profile.id:
            return None
        return known


@dataclass(slots=True)
class LintResult:
    findings: list[Finding]
    sessions: list[SessionSummary] | SummaryShelf
    coverage: dict[str, dict[str, Any]]
    problems: list[InputProblem] = field(default_factory=list)  # records that could not be checked (CTX900)


@dataclass(slots=True)
class Tally:
    """What checking some sessions produced; tallies of disjoint sessions merge exactly.
    A log-scope rule's shards wait here, per rule code, until they are judged together
    (Engine.judge_log)."""

    findings: list[Finding] = field(default_factory=list)
    sessions: list[SessionSummary] | SummaryShelf = field(default_factory=list)
    judged: Counter = field(default_factory=Counter)
    unjudged: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    caveats: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    shards: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    problems: list[InputProblem] = field(default_factory=list)  # records that could not be checked
    unplaced: int = 0  # of those, read as records but in no session

    def merge(self, other: "Tally") -> None:
        self.findings += other.findings
        self.problems += other.problems
        self.unplaced += other.unplaced
        self.sessions += other.sessions
        self.judged.update(other.judged)
        for code, shards in other.shards.items():
            self.shards[code] += shards
        for mine, theirs in ((self.unjudged, other.unjudged), (self.caveats, other.caveats)):
            for code, reasons in theirs.items():
                mine[code].update(reasons)


class Engine:
    def __init__(self, rules: list[Rule], profiles: ProfileBook | None = None, counter: TokenCounter | None = None,
                 options: LintOptions | None = None) -> None:
        self.rules = rules
        self.profiles = profiles or ProfileBook()
        self.counter = counter or TokenCounter()
        self.options = options or LintOptions()
        self.bit = {rule.code: 1 << position for position, rule in enumerate(rules)}
        # Most rules need nothing and have no caveat: skip asking them, request after request.
        self._asks = {rule.code: bool(rule.needs) or type(rule).cannot_judge is not Rule.cannot_judge for rule in rules}
        self._warns = {rule.code: "tokens" in rule.needs or type(rule).caveat is not Rule.caveat for rule in rules}
        self._tool_tokens: dict[tuple[str, str], int] = {}  # (counter, tools' hash): one count per tokenizer
        self._plans: dict[tuple[Rule, ...], list[tuple[Rule, int, bool, bool]]] = {}

    def prompt_tokens(self, turn: Turn, previous: Turn | None = None) -> TokenCount:
        """The prompt's tokens by ctxlint's counter; the messages shared with the previous
        request are counted by the running sums kept on it."""
        model = turn.record.model
        name = self.counter.counter_name(model)
        total = self._running_sum(turn, previous, name, lambda message: self.counter.count_message(message, model).tokens)
        count = TokenCount(TOKENS_PER_REPLY + total, name)
        tools = turn.record.request.get("tools")
        if tools:
            key = (name, short_hash(tools))
            if key not in self._tool_tokens:
                self._tool_tokens[key] = self.counter.count_text(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS).decode(), model).tokens
            count = TokenCount(count.tokens + self._tool_tokens[key], count.counter)
        return count

    def prompt_characters(self, turn: Turn, previous: Turn | None = None) -> int:
        """How many characters of the prompt's messages the model reads as tokens."""
        return self._running_sum(turn, previous, "characters", lambda message: len(message_text(message)))

    @staticmethod
    def _running_sum(turn: Turn, previous: Turn | None, name: str, measure: Callable[[dict[str, Any]], int]) -> int:
        """The sum of `measure` over the turn's messages, those shared with the previous
        request taken from the running sums kept on it when it was measured alike; the
        turn keeps its own."""
        shared = turn.shared
        if previous is not None and shared and previous.running_sums is not None and previous.running_sums[0] == name:
            sums = previous.running_sums[1][:shared]
        else:
            sums, shared = [], 0
        total = sums[-1] if sums else 0
        for message in turn.messages[shared:]:
            total += measure(message)
            sums.append(total)
        turn.running_sums = (name, sums)
        return total

    def finding(self, rule: Rule, place: "Place", violation: Violation) -> Finding:
        line = place.line
        if place.source_map is not None:
            line = place.source_map.line_of(violation.message_index) or line  # the message's own line, in a JSON document
            violation = place.source_map.relocate(violation)
        return Finding(
            code=rule.code, name=rule.name,
            severity=self.options.severities.get(rule.code) or violation.severity or rule.severity,
            message=violation.message, file=place.file, line=line,
            session=place.session, turn=place.turn,
            message_index=violation.message_index, tool_call_id=violation.tool_call_id,
            pointer=violation.pointer, evidence=violation.evidence,
            remediation=rule.remediation,
            # Line numbers stay out of the fingerprint, so appending records keeps a baseline valid.
            fingerprint=short_hash(rule.code, place.base, place.content, repr(violation.key)),
        )

    # -- one request ---------------------------------------------------------------------

    def check_turn(self, session: SessionCheck, record: Record, tally: Tally, rules: list[Rule], log: "LogCheck | None") -> None:
        """Judge the session's next request with the given rules, then remember what it left."""
        turn = make_turn(session.turns + 1, record, session.previous)
        if turn.number == 1:
            session.first_line = record.line
            for index, message in enumerate(record.messages):
                key = opening_kind(role_of(message))
                if key in ("system", "user") and key not in session.opening:
                    if key == "user" and greeting_only(text_of(message.get("content"))):
                        session.greeting = session.greeting or (index, turn.identities[index])
                        continue
                    session.opening[key] = (index, message, 1, None, record.label(index))
            first_user = session.opening.get("user")
            question = last_user_index(record.messages)
            if first_user is not None and any(role_of(m) == "assistant" for m in record.messages[first_user[0]:question]):
                # the first request's own question after an exchange (examples, or a history
                # resumed): what CTX008 keeps instead when the exchange is swapped for another
                label = f"the session's first question after the exchange it opened with (turn 1, message {record.label(question)})"
                session.opening["question"] = (question, record.messages[question], 1, label, record.label(question))
            session.fingerprint_base = session.id if session.explicit_key else short_hash([list(map(str, ident)) for ident in turn.identities[:4]])
        if session.pending and turn.number == 2:  # the chain is there: the first request counts as judged
            for rule in rules:
                if session.pending & self.bit[rule.code]:
                    tally.judged[rule.code] += 1
            session.pending = 0
        ctx = TurnContext(self, session, turn)
        judged = 0
        live, stored = session.recurring
        # every rule judges the request before any finding is reported, so that one may
        # explain another's (Violation.explained_by, Violation.shows_as)
        seen: list[tuple[Rule, int, list[Violation]]] = []
        for rule, bit, asks, warns in self._plan(rules):
            reason = rule.cannot_judge(ctx) if asks else None
            if reason == NO_CHAIN and turn.number == 1:
                session.pending |= bit  # decided when a second request comes, or at the end
                continue
            if reason:
                tally.unjudged[rule.code][reason] += 1
                found_in_part = list(rule.check_in_part(ctx))
                if found_in_part:
                    seen.append((rule, bit, found_in_part))
                continue
            tally.judged[rule.code] += 1
            judged |= bit
            caveat = rule.caveat(ctx) if warns else None
            if caveat:
                tally.caveats[rule.code][caveat] += 1
            violations = list(rule.check(ctx))
            if violations or (live | stored) & bit:  # a rule with nothing found and no defect going on has nothing to update
                seen.append((rule, bit, violations))
        seen_here = {rule.code for rule, _, violations in seen if violations}
        shown_elsewhere = {place for _, _, violations in seen for violation in violations for place in violation.shows_as}
        for rule, bit, violations in seen:
            # its defect of the requests before goes on: reported where it started
            going_on = rule.recurs and bool((live | stored) & bit)
            shown = [False, False]  # in the live turn, in the stored history
            # where the finding of a recurring defect's instance in this request stands in the
            # tally, per part: more messages of that part showing it are that instance
            reported_at: list[int | None] = [None, None]
            for violation in violations:
                part = ctx.in_stored_history(violation.standing)
                explained = not seen_here.isdisjoint(violation.explained_by) or (rule.code, violation.standing) in shown_elsewhere
                folded = rule.recurs and reported_at[part] is not None
                count = len(tally.findings)
                new = self._report(rule, session, turn, violation, tally, quiet=going_on or explained or folded)
                if new and folded:
                    self._fold(tally, reported_at[part], self.finding(rule, Place.of(session, turn), violation))
                elif len(tally.findings) > count:
                    reported_at[part] = count
                # shown again: a new instance, or one this request stores for the first time
                # (a result named as another was, stored without its call again)
                if new or (rule.recurs and violation.standing in ctx.first_stored):
                    shown[part] = True
            if rule.recurs:
                # it goes on in a part where it showed again, or that stored nothing it is about
                live = live | bit if shown[0] or (live & bit and not ctx.stores_again(rule, False)) else live & ~bit
                stored = stored | bit if shown[1] or (stored & bit and not ctx.stores_again(rule, True)) else stored & ~bit
        if log is not None:
            judged |= log.check(ctx, tally)
        session.summary.add(self._metrics(ctx))
        if ctx.previous is not None and not session.history_cut and ctx.transition.edited_at is None:  # an edit branches, cuts nothing
            # a summary put in place of what the request left out stands for it: the history
            # was compacted, not trimmed, and goes on whole after the summary
            session.history_cut = bool(ctx.transition.left_out(ctx.previous.identities)) and not any(
                summary_message(ctx.messages[index]) for index in ctx.transition.put_in(ctx.messages))
        self._learn(session.ledger, turn, ctx.profile.id if ctx.profile.known else None)
        if record.response is not None and record.response.finish_reason in UNFINISHED and turn.response_message is not None:
            session.unfinished |= {turn.response_identity()}
        if ctx.side_request:
            return  # the conversation goes on from the request before this side request
        session.taken = ctx.taken_after()
        if ctx.replied_with_reasoning:
            session.thought_under = ctx.settings
        session.thinking_prefix = ctx.thinking_prefix
        session.previous = turn
        session.judged = judged
        session.recurring = (live, stored)
        session.settings = ctx.settings

    def check_record(self, session: SessionCheck, record: Record, tally: Tally, rules: list[Rule], log: "LogCheck | None") -> None:
        """check_turn, except that a record nested past what can be hashed or walked is a
        located problem (CTX900) and the log goes on."""
        turns = len(session.summary)
        try:
            self.check_turn(session, record, tally, rules, log)
        except (RecursionError, TypeError) as error:
            self._unreadable(record, error, tally, True, placed=len(session.summary) > turns)

    @staticmethod
    def _unreadable(record: Record, error: BaseException, tally: Tally, report: bool, placed: bool = False) -> None:
        """A record nested too deep to hash or walk is a located problem (CTX900), and the
        log goes on; any other error is a bug, and is raised. `placed`: the record is a turn
        of its session all the same (it failed after being counted there)."""
        problem = too_deep(error, record.file, record.line)
        if report:
            tally.problems.append(problem)
            tally.unplaced += not placed

    def _plan(self, rules: list[Rule]) -> list[tuple[Rule, int, bool, bool]]:
        """Per rule: its bit, whether to ask it cannot_judge, whether to ask it caveat."""
        key = tuple(rules)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = [(rule, self.bit[rule.code], self._asks[rule.code], self._warns[rule.code]) for rule in rules]
        return plan

    def _report(self, rule: Rule, session: SessionCheck, turn: Turn, violation: Violation, tally: Tally, quiet: bool = False) -> bool:
        """Report a defect once, where it starts; `quiet`: remember it without reporting it
        (a recurring defect going on). Whether the defect was new."""
        markers = [(rule.code, key) for key in (violation.key, *violation.covers)]
        if session.reported is None:
            session.reported = set()
        if not session.reported.isdisjoint(markers):
            return False
        session.reported.update(markers)
        if not quiet:
            tally.findings.append(self.finding(rule, Place.of(session, turn), violation))
        return True

    @staticmethod
    def _fold(tally: Tally, at: int, also: Finding) -> None:
        """Name in the finding at `at` another message that shows the same defect at its request."""
        first = tally.findings[at]
        where = {key: value for key, value in (("message_index", also.message_index), ("tool_call_id", also.tool_call_id), ("pointer", also.pointer))
                 if value is not None}
        also_at = [*first.evidence.get("also_at", ()), where]
        places = [f"call {place['tool_call_id']}" if "tool_call_id" in place else f"message {place['message_index']}"
                  for place in also_at if "tool_call_id" in place or "message_index" in place]
        message = first.message.split(" (the same at ")[0] + (f" (the same at {', '.join(places)})" if places else "")
        tally.findings[at] = replace(first, message=message, evidence={**first.evidence, "also_at": also_at})

    def close(self, session: SessionCheck, tally: Tally) -> None:
        """The session has no more requests: rules that waited for a chain could not judge it."""
        for rule in self.rules:
            if session.pending & self.bit[rule.code]:
                tally.unjudged[rule.code][NO_CHAIN] += 1
        session.pending = 0
        tally.sessions.append(session.summary)

    # -- many requests -------------------------------------------------------------------

    def check_stream(self, records: Iterable[Record], share: Any = None) -> Tally:
        """What checking records as they arrive gives, sessions assembled on the way. Given
        a share (ingest.Share), only the sessions it owns are checked (records it does not
        own can reach it: batch lines, and keyless records when every worker infers their
        sessions), and the tally is left for the parent process: summaries whole, not
        shelved, and the log-scope rules' shards not judged."""
        assembler = SessionAssembler()
        spill = Spill()
        sessions: dict[tuple[str, bool, int], SessionCheck | Dormant] = {}
        # Only the sessions active most recently stay awake; memory follows the sessions
        # open at once, not the length of the log.
        awake: OrderedDict[tuple[str, bool, int], SessionCheck] = OrderedDict()
        # Keys with more than one conversation: their parts, most recently used last (a dict
        # as an ordered set). The threads themselves stay with their sessions (and sleep with them).
        parts_of: dict[tuple[str, bool], dict[int, None]] = {}
        # per key with more than one conversation, its parts' last replies (hashed identities):
        # a request that carries one goes on from that part even when it is not among the
        # most recently used (grouping.ROUTED_PARTS). A key of one conversation keeps none: in
        # a log of a million sessions that would be a dict for each.
        replies_of: dict[tuple[str, bool], dict[int, int]] = {}
        interned: dict[str, str] = {}
        tally = Tally() if share is not None else Tally(sessions=SummaryShelf(spill))
        turn_rules, log = self._split(("request", "session", "log"))
        for record in records:
            try:
                key = assembler.session_of(record)
            except (RecursionError, TypeError) as error:  # keyless: reported once, by worker 0, which reads every keyless line
                self._unreadable(record, error, tally, share is None or share.index == 0)
                continue
            if share is not None and not share.checks(key):
                continue
            try:
                part = self._part(key, record, sessions, parts_of, replies_of, spill) if key[1] else 1
            except (RecursionError, TypeError) as error:  # reported by the process that owns the session
                self._unreadable(record, error, tally, True)
                continue
            place = (*key, part)
            session = sessions.get(place)
            if isinstance(session, Dormant):
                session = session.wake(spill)
            if session is None:
                session = SessionCheck(part_name(key[0], part), record.file, key[1], order(record))
            sessions[place] = session
            self.check_record(session, record, tally, turn_rules, log)
            if not len(session.summary):  # its only request could not be checked: no session to show
                del sessions[place]
                continue
            if key[1] and session.previous is not None:
                before = session.thread
                session.thread = Thread.after(part, session.previous, interned, before)
                if key in replies_of:
                    note_reply(replies_of[key], part, before, session.thread)
            awake.pop(place, None)
            awake[place] = session
            if len(awake) > HOT_SESSIONS:
                idle_key, idle = awake.popitem(last=False)
                sessions[idle_key] = Dormant(idle, spill)
        for key in list(sessions):
            session = sessions.pop(key)
            self.close(session.wake(spill) if isinstance(session, Dormant) else session, tally)
        if log is not None:
            log.leave(tally)
            if share is None:
                self.judge_log(tally)
        return tally

    @staticmethod
    def _part(key: tuple[str, bool], record: Record, sessions: dict, parts_of: dict[tuple[str, bool], dict[int, None]],
              replies_of: dict[tuple[str, bool], dict[int, int]], spill: Spill) -> int:
        """The part of its key a keyed record goes to (grouping.route, among the key's
        ROUTED_PARTS most recently used and any older one whose last reply the record
        carries), their sessions woken to read their threads; a key that gains a second part
        has its parts listed, and its parts' last replies kept from then on (note_reply)."""
        listed = parts_of.get(key)
        known = list(islice(reversed(listed), ROUTED_PARTS))[::-1] if listed else [1]
        if listed is not None and len(listed) > ROUTED_PARTS and replies_of[key]:
            known[:0] = carrying_older(record, replies_of[key], set(known))
        threads, woken, unchecked = [], [], []
        for part in known:
            session = sessions.get((*key, part))
            if isinstance(session, Dormant):
                session = sessions[(*key, part)] = session.wake(spill)
                woken.append(part)
            if session is None or session.thread is None:  # none of its requests could be checked: a place to start again
                unchecked.append(part)
            else:
                threads.append(session.thread)
        chosen = route(threads, record) or (unchecked[-1] if unchecked else len(listed or known) + 1)  # parts are numbered 1, 2, …
        for part in woken:
            if part != chosen:  # back to sleep: only the chosen one is checked now
                sessions[(*key, part)] = Dormant(sessions[(*key, part)], spill)
        if chosen != 1 or listed is not None:
            if listed is None:  # the second part: the first's last reply is in its thread (threads holds at most that one)
                replies_of[key] = {thread.replied: thread.part for thread in threads if thread.replied is not None}
            listed = parts_of.setdefault(key, {1: None})
            listed.pop(chosen, None)
            listed[chosen] = None  # most recently used last
        return chosen

    def judge_log(self, tally: Tally) -> None:
        """The log-scope rules' verdicts on the shards in the tally (one from each process
        that checked sessions), a defect reported once per session, where it starts."""
        for rule in self.rules:
            shards = tally.shards.pop(rule.code, None)
            if shards is None:
                continue
            reported: set[tuple] = set()
            for place, violation in rule.judge_shards(shards):
                if (place.session, violation.key) not in reported:
                    reported.add((place.session, violation.key))
                    tally.findings.append(self.finding(rule, place, violation))

    def result(self, tally: Tally) -> LintResult:
        if isinstance(tally.sessions, list):  # a shelf keeps itself in order
            tally.sessions.sort(key=lambda summary: summary.order)
        return self._result(tally)

    def check_sessions(self, sessions: Iterable[Session]) -> Tally:
        """The request- and session-scope rules over sessions already assembled."""
        tally = Tally()
        turn_rules, _ = self._split(("request", "session"))
        for session in sessions:
            check = SessionCheck(session.id, session.file, session.explicit_key, order(session.first.record))
            for turn in session.turns:
                self.check_record(check, turn.record, tally, turn_rules, None)
            self.close(check, tally)
        return tally

    def check_log(self, sessions: list[Session]) -> Tally:
        """The rules that compare sessions with each other, over all turns in input order."""
        tally = Tally()
        _, log = self._split(("log",))
        if log is None:
            return tally
        checks = {id(s): SessionCheck(s.id, s.file, s.explicit_key, order(s.first.record)) for s in sessions}
        for _, session, turn in sorted(((t.record.seq, s, t) for s in sessions for t in s.turns), key=lambda item: item[0]):
            self.check_record(checks[id(session)], turn.record, tally, [], log)
        log.leave(tally)
        self.judge_log(tally)
        return tally

    def run(self, sessions: list[Session]) -> LintResult:
        """Findings and coverage for sessions already assembled (records held)."""
        tally = self.check_sessions(sessions)
        tally.merge(self.check_log(sessions))
        return self.result(tally)

    def _split(self, scopes: tuple[str, ...]) -> tuple[list[Rule], "LogCheck | None"]:
        turn_rules = [r for r in self.rules if r.scope in scopes and r.scope != "log"]
        log_rules = [r for r in self.rules if r.scope == "log" and "log" in scopes]
        return turn_rules, LogCheck(self, log_rules) if log_rules else None

    def _result(self, tally: Tally) -> LintResult:
        coverage = {
            rule.code: {"judged": tally.judged[rule.code], "not_judged": dict(sorted(tally.unjudged[rule.code].items())),
                        "judged_with_caveats": dict(sorted(tally.caveats[rule.code].items()))}
            for rule in self.rules
        }
        tally.findings.sort(key=Finding.sort_key)  # stable: a session's findings keep their order
        return LintResult(tally.findings, tally.sessions, coverage, tally.problems)

    @staticmethod
    def _learn(ledger: ReasoningLedger, turn: Turn, family: str | None) -> None:
        """Into the ledger: the reasoning of the turn's new assistant messages and of its
        response, under the model profile (`family`) the request went to."""
        for message, identity in zip(turn.messages[turn.shared:], turn.identities[turn.shared:]):
            if role_of(message) == "assistant":
                ledger.record(identity, message, f"turn {turn.number} request", family)
        response = turn.response_message
        if response is not None:
            ledger.record(message_identity(response), response, f"turn {turn.number} response", family)

    @staticmethod
    def _metrics(ctx: TurnContext) -> TurnMetrics:
        response = ctx.turn.record.response
        tokens = ctx.tokens
        return TurnMetrics(
            number=ctx.turn.number, file=ctx.turn.record.file, line=ctx.turn.record.line,
            messages=len(ctx.messages), tokens=tokens.tokens, counter=tokens.counter,
            window=ctx.profile.context_window, window_source=ctx.profile.window_source,
            finish_reason=response.finish_reason if response else None,
            status=response.status if response else None,
            model=ctx.turn.record.model or ctx.profile.name,  # else the one its reply names, or --model
        )


@dataclass(slots=True, frozen=True)
class Place:
    """Where a finding is: file and line, and the session and turn when it is about one."""

    file: str
    line: int
    session: str | None = None
    turn: int | None = None
    base: str = ""  # what the fingerprint knows the session by
    content: str = ""  # hash of the turn's message identities, for the fingerprint
    source_map: Any = None  # the record's map back into a body of another API (ingest.anthropic)

    @classmethod
    def of(cls, session: SessionCheck, turn: Turn) -> "Place":
        record = turn.record
        return cls(record.file, record.line, session.id, turn.number, session.fingerprint_base, turn.content_hash(), record.source_map)

    def label(self, index: int) -> str:
        """How a finding's text names message `index` of the request here."""
        return str(index) if self.source_map is None else self.source_map.label(index)


class LogCheck:
    """The log-scope rules, fed every turn in input order: each reads what its judgment
    needs into this process's shard (Rule.read), and leaves the shard in the tally."""

    def __init__(self, engine: Engine, rules: list[Rule]) -> None:
        self.engine = engine
        self.rules = rules
        self.shards = {rule.code: rule.start_shard() for rule in rules}

    def check(self, ctx: TurnContext, tally: Tally) -> int:
        """Read the turn into every log rule's shard; the bits of the rules that judged it."""
        judged = 0
        rank = order(ctx.turn.record)
        for rule in self.rules:
            tally.judged[rule.code] += 1
            judged |= self.engine.bit[rule.code]
            rule.read(self.shards[rule.code], rule.facts(ctx), rank, lambda: Place.of(ctx.session, ctx.turn))
        return judged

    def leave(self, tally: Tally) -> None:
        for code, shard in self.shards.items():
            tally.shards[code].append(shard)


def problem_findings(problems: Iterable[InputProblem], rule: Rule, engine: Engine) -> list[Finding]:
    """CTX900 findings for lines that never became records."""
    return [
        engine.finding(rule, Place(p.file, p.line, base=p.file), Violation(p.message, key=(p.message, p.pointer), pointer=p.pointer))
        for p in problems
    ]

