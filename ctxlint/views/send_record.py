"""The send record of one session: for every message the session ever had, what became of it
in every later request — sent verbatim, sent modified (which field), dropped (legal or not),
or replaced by a summary. It answers "what did the model actually see when it forgot?"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxlint.chat import REASONING_FIELDS, Quoted, excerpt, message_identity, returned_reasoning, role_of, sealed, similar, text_of, tool_call_ids
from ctxlint.ingest.call_ids import unpaired_form
from ctxlint.profiles import ProfileBook, passback_required, sealed_only, tool_loop_start
from ctxlint.rules.base import Finding
from ctxlint.sessions.history import Transition, align, side_request_on
from ctxlint.sessions.model import STEERING_ROLES, Session, Turn, prompts_opening
from ctxlint.tokens.counter import TokenCounter

SENT, MODIFIED, DROPPED, SUMMARIZED = "sent", "modified", "dropped", "summarized"


@dataclass(slots=True)
class Status:
    kind: str  # sent, modified, dropped, summarized
    index: int | None = None  # position in that turn's request, when sent
    changed: tuple[str, ...] = ()  # fields that differ from the message as first seen
    legal: bool = True
    why: str = ""


@dataclass(slots=True)
class Entry:
    row: int
    role: str
    origin: str  # "turn 2 request" or "turn 1 response"
    first_turn: int
    tokens: int
    counter: str
    excerpt: Quoted
    tool_call_ids: tuple[str, ...]
    original: dict[str, Any]
    statuses: dict[int, Status] = field(default_factory=dict)


@dataclass(slots=True)
class SendRecord:
    session: Session
    entries: list[Entry]
    turn_tokens: dict[int, tuple[int, str]]  # turn -> (prompt tokens, counter)
    first_loss: tuple[int, int] | None  # (row, turn) of the first illegal drop or change
    unlogged: list[Finding] = field(default_factory=list)  # losses of messages no row shows: the log never held them


def _changed_fields(original: dict[str, Any], sent: dict[str, Any]) -> tuple[str, ...]:
    changed = []
    if text_of(original.get("content")) != text_of(sent.get("content")):
        changed.append("content")
    for name in REASONING_FIELDS:
        if original.get(name) not in (None, "", []) and original.get(name) != sent.get(name):
            changed.append(name)
    if (original.get("tool_calls") or None) != (sent.get("tool_calls") or None):
        changed.append("tool_calls")
    return tuple(changed)


# What a message first sent without can be said of it though no request carried it whole
# before: the reasoning its turn had (the reply that returned it was not logged).
SENT_WITHOUT = ("CTX004",)
# What a message sent as it came can be against: its API refuses it as blank, its empty
# `tool_calls` list (a server that returns `[]` for a reply that made no call), a content
# part it does not take (an image a vision model was sent), a call id not in its form
# (another backend's ids), the place it is sent in (a prefill the model refuses, a user
# message right after tool results to Mistral). CTX033's reused ids are left out: rows are
# matched by call id, and a reused one matches the first use too.
SENT_REFUSED = ("CTX029", "CTX030", "CTX032", "CTX034", "CTX035", "CTX036")
# A loss of a message the log may never have held (a reply that was never logged nor sent
# back): no row stands for it, so the record names it apart.
UNLOGGED_LOSSES = ("CTX016",)


def _findings_for(findings: list[Finding], turn: Turn, entry: Entry, index: int | None) -> list[Finding]:
    """The findings of this turn that are about this message (by tool_call id, index,
    first-turn slot, or the turn whose reply it was); `index` is the message's place in the
    normalized request, which findings name as the body that was sent numbers it."""
    source_map = turn.record.source_map
    sent = source_map.index_of(index) if source_map is not None else index
    prompt = index is not None and index < prompts_opening(turn.messages)
    return [finding for finding in findings if finding.turn == turn.number and finding.severity != "info"
            and (_about_entry(finding, entry, sent) or _edited_there(finding, sent, prompt))]


def _edited_there(finding: Finding, index: int | None, prompt: bool) -> bool:
    """Whether the finding names this message as the edit that broke what came after it
    (CTX038's evidence: the system prompt changed, or the message edited or put in)."""
    return (prompt and finding.evidence.get("changed") == "system") or (index is not None and finding.evidence.get("edited_message") == index)


def _about_entry(finding: Finding, entry: Entry, index: int | None) -> bool:
    if finding.tool_call_id and not set(entry.tool_call_ids).isdisjoint(finding.evidence.get("tool_call_ids", (finding.tool_call_id,))):
        return True  # about one of its calls (a finding about several names them all in its evidence)
    if index is not None and finding.message_index == index:
        return True
    # ... or another message of the request that shows the same defect (Engine._fold)
    if any(place.get("tool_call_id") in entry.tool_call_ids or (index is not None and place.get("message_index") == index)
           for place in finding.evidence.get("also_at", ())):
        return True
    # ... or the reply a turn returned, no longer sent (CTX016 names the turn)
    return _is_cut_opening(finding, entry) or entry.origin == f"turn {finding.evidence.get('returned_in_turn')} response"


def _is_cut_opening(finding: Finding, entry: Entry) -> bool:
    """Whether the finding says this message, a first system/user message or what replaced
    one (an edit, a summary), is no longer sent (CTX008's evidence names its turn and index,
    and those of the others one trim cut with it)."""
    for evidence in (finding.evidence, *finding.evidence.get("also_lost", ())):
        turn, index = evidence.get("since_turn", 1), evidence.get("since_index", evidence.get("first_turn_index"))
        then = entry.statuses.get(turn)  # the message sent at that index of that turn (a stored form carries on an older entry)
        if index is not None and then is not None and then.kind != DROPPED and then.index == index:
            return True
    return False


def _unlogged_reply(previous: Turn, turn: Turn, transition: Transition) -> int | None:
    """Where this request carries the reply the previous one got, when that reply was not
    logged: right after the message it answered, or, where a window cut that message (the
    previous request ended on a user or tool message), the request's first assistant
    message, when nothing the previous request sent is carried before it."""
    if transition.response_index is not None or not transition.mapping:
        return None
    if transition.mapping[-1] is not None:
        return transition.new_from  # after the last message carried (parallel results may come back reordered)
    if not previous.identities or previous.identities[-1][0] not in ("user", "tool"):
        return None
    first = next((index for index, message in enumerate(turn.messages) if role_of(message) == "assistant"), None)
    if first is None or any(position is not None and position < first for position in transition.mapping):
        return None
    return first


class SendRecordBuilder:
    def __init__(self, session: Session, findings: list[Finding], profiles: ProfileBook, counter: TokenCounter,
                 turn_tokens: dict[int, tuple[int, str]]) -> None:
        self.session = session
        self.findings = findings
        self.profiles = profiles
        self.counter = counter
        self.turn_tokens = turn_tokens
        self.entries: list[Entry] = []
        self.placed: set[int] = set()  # the findings a row's status tells (by id)

    def _told(self, findings: list[Finding]) -> str:
        """A status's why, told by the findings about its message, which the row now shows
        (the first in words, the codes of the others beside it)."""
        self.placed.update(map(id, findings))
        first = findings[0]
        others = sorted({finding.code for finding in findings[1:]} - {first.code})
        return f"{first.code}: {first.message}" + (f" (also {', '.join(others)})" if others else "")

    def _add(self, message: dict[str, Any], origin: str, turn: Turn) -> Entry:
        tokens = self.counter.count_message(message, turn.record.model)
        entry = Entry(
            row=len(self.entries) + 1, role=role_of(message) or "?", origin=origin, first_turn=turn.number,
            tokens=tokens.tokens, counter=tokens.counter,
            excerpt=excerpt(text_of(message.get("content")) or ("(tool calls " + ", ".join(tool_call_ids(message)) + ")" if message.get("tool_calls") else ""), 48),
            tool_call_ids=tuple(tool_call_ids(message) or ([str(message["tool_call_id"])] if message.get("tool_call_id") else [])),
            original=message,
        )
        self.entries.append(entry)
        return entry

    def build(self) -> SendRecord:
        by_identity: dict[tuple, Entry] = {}
        previous_turn: Turn | None = None
        side_requests: set[int] = set()  # turns that were side requests on the history (history.side_request_on)
        for turn in self.session.turns:
            profile = self.profiles.for_record(turn.record)
            before = previous_turn.number if previous_turn is not None else 0  # the turn this one goes on from
            transition = align(previous_turn, turn) if previous_turn is not None else None
            edited = transition.edited_at if transition is not None else None
            stored = transition.stored if transition is not None else None
            unlogged_reply = _unlogged_reply(previous_turn, turn, transition) if transition is not None else None
            if transition is not None and side_request_on(previous_turn, turn, transition):
                side_requests.add(turn.number)  # the conversation goes on from the request before it
            else:
                previous_turn = turn
            matched: dict[int, Entry] = {}
            cursor = -1
            positions: dict[tuple, list[int]] = {}
            for index, identity in enumerate(turn.identities):
                positions.setdefault(identity, []).append(index)
            for identity, entry in by_identity.items():
                found = positions.get(identity) or positions.get(unpaired_form(identity), ())  # its call cut since
                index = next((p for p in found if p > cursor), None)
                if index is None:
                    index = next((p for p in found if p not in matched), None)
                if index is not None:
                    matched[index] = entry
                    cursor = max(cursor, index)
            self._pair_edited(turn, matched)
            if stored is not None and stored[1] not in matched:
                # the previous request's newest user message, kept in the form the app stores it
                sent_before = next((entry for entry in self.entries if (last := entry.statuses.get(turn.number - 1)) is not None
                                    and last.index == stored[0] and last.kind != DROPPED), None)
                if sent_before is not None and id(sent_before) not in set(map(id, matched.values())):
                    matched[stored[1]] = sent_before
                    by_identity[turn.identities[stored[1]]] = sent_before  # later requests carry the stored form
            last_kept = max(matched, default=-1)
            # A summary is a new message put into the history rather than new input: inserted
            # before kept messages, or an assistant/system message no response returned, sent
            # ahead of this turn's new user input; a text, not a turn that made tool calls.
            new = [i for i in range(len(turn.messages)) if i not in matched and not tool_call_ids(turn.messages[i])]
            first_new_user = next((i for i in new if role_of(turn.messages[i]) == "user"), len(turn.messages))
            inserted = [i for i in new if i < last_kept or (turn.number > 1 and i < first_new_user and i != unlogged_reply
                                                              and role_of(turn.messages[i]) in ("assistant", *STEERING_ROLES))]
            for index, message in enumerate(turn.messages):
                if index not in matched:
                    entry = self._add(message, f"turn {turn.number} request", turn)
                    by_identity.setdefault(turn.identities[index], entry)
                    matched[index] = entry
                    entry.statuses[turn.number] = Status(SENT, index)
                    found = [f for f in _findings_for(self.findings, turn, entry, index)
                             if f.code in SENT_REFUSED or (f.code in SENT_WITHOUT and entry.role == "assistant")]
                    if found:
                        entry.statuses[turn.number] = Status(SENT, index, legal=False, why=self._told(found))
                    continue
                entry = matched[index]
                changed = _changed_fields(entry.original, message)
                status = Status(MODIFIED if changed else SENT, index, changed)
                if not changed and (found := [f for f in _findings_for(self.findings, turn, entry, index) if f.code in SENT_REFUSED]):
                    status.legal, status.why = False, self._told(found)  # a reply stored as it came, which the API refuses
                elif changed:
                    found = _findings_for(self.findings, turn, entry, index)
                    reasoning_only = all(name in REASONING_FIELDS for name in changed)
                    if found:
                        status.legal, status.why = False, self._told(found)
                    elif reasoning_only and (kept := [name for name, _ in returned_reasoning(message)]):
                        # one of the copies a reply carries is enough (OpenRouter's reasoning and reasoning_details)
                        status.why = f"its reasoning came back as {', '.join(kept)}"
                    elif (reasoning_only and role_of(message) == "assistant"
                          and passback_required(profile, turn.record, entry.original, index > tool_loop_start(profile, turn.messages))
                          and not (sealed_only(profile, turn.record.request) and not any(sealed(*carried) for carried in returned_reasoning(entry.original)))):
                        status.legal, status.why = False, f"{profile.id} requires this reasoning to be passed back"
                    elif reasoning_only:
                        status.why = f"dropping reasoning here is allowed by {profile.id or 'the unknown model'}"
                    elif stored is not None and index == stored[1]:
                        status.why = "kept as the app stores it: the user's words, without the wrapping it was sent in"
                        entry.original = message  # what later requests must carry
                entry.statuses[turn.number] = status
            kept = set(map(id, matched.values()))
            for entry in self.entries:
                if id(entry) in kept or entry.first_turn > turn.number or (entry.first_turn == turn.number and "response" in entry.origin):
                    continue
                if not entry.statuses and "response" not in entry.origin:
                    continue
                found = _findings_for(self.findings, turn, entry, None)
                previous = entry.statuses.get(before)
                if found:
                    status = Status(DROPPED, legal=False, why=self._told(found))
                elif previous is not None and previous.kind in (DROPPED, SUMMARIZED):
                    status = Status(previous.kind, legal=previous.legal, why="still not sent" if previous.legal else previous.why)
                elif turn.number in side_requests:
                    status = Status(DROPPED, why="not in this side request, asked on the history as it stood")
                elif entry.first_turn in side_requests:
                    status = Status(DROPPED, why=f"left behind with the side request of turn {entry.first_turn}")
                elif edited is not None:
                    status = Status(DROPPED, why=f"left behind: the conversation branched at message {edited} (an edit resent from there, or a side request it went on without)")
                elif inserted:
                    status = Status(SUMMARIZED, why=f"replaced by message {inserted[0]} of this request")
                else:
                    status = Status(DROPPED, why="trimmed; nothing later refers to it")
                entry.statuses[turn.number] = status
            response = turn.response_message
            if response is not None and message_identity(response) not in by_identity:
                by_identity[message_identity(response)] = self._add(response, f"turn {turn.number} response", turn)
        unlogged = [f for f in self.findings if f.code in UNLOGGED_LOSSES and f.severity != "info" and id(f) not in self.placed]
        return SendRecord(self.session, self.entries, self.turn_tokens, self._first_loss(), unlogged)

    def _pair_edited(self, turn: Turn, matched: dict[int, Entry]) -> None:
        """A system prompt sent last turn at index k, now missing, whose slot k holds a mostly equal
        new system prompt (a fresh timestamp, say), was edited in place, not replaced."""
        taken = set(map(id, matched.values()))
        for entry in self.entries:
            last = entry.statuses.get(turn.number - 1)
            if entry.role not in STEERING_ROLES or id(entry) in taken or last is None or last.index is None or last.kind == DROPPED:
                continue
            slot = last.index
            if (slot < len(turn.messages) and slot not in matched and role_of(turn.messages[slot]) == entry.role
                    and similar(text_of(entry.original.get("content")), text_of(turn.messages[slot].get("content")))):
                matched[slot] = entry
                taken.add(id(entry))

    def _first_loss(self) -> tuple[int, int] | None:
        losses = [(turn, entry.row) for entry in self.entries for turn, status in entry.statuses.items() if not status.legal]
        if not losses:
            return None
        turn, row = min(losses)
        return row, turn


def send_record(session: Session, findings: list[Finding], profiles: ProfileBook, counter: TokenCounter,
                turn_tokens: dict[int, tuple[int, str]]) -> SendRecord:
    return SendRecordBuilder(session, findings, profiles, counter, turn_tokens).build()
