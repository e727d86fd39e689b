"""Group records into sessions: by session key when the log has one, else by history chaining.

Request B continues request A when A's newest conversation message (its anchor: the
last user or tool message it sent) reappears in B and the messages just before it agree,
or B's history is cut right at the anchor (nothing of A's before it: only a summary of
what was cut, or nothing) with a reply after it, and the anchor is A's own, not an "ok"
any conversation sends; or B opens with the reply A got (its history kept from there
on), a reply no other open conversation got; or B repeats the opening A's first
request sent, then a reply (a trim kept the opening and the newest messages and cut the
anchor with the middle): the reply A's last request got, or, nothing else tying B, any,
after an opening no other conversation sent. Two runs of one script share texts (replies,
results, even call ids): a request that opens with a message A never had, as another
conversation opened, goes on from that one, not from A.
Matching is on turn identity (role, user/tool text, tool_call ids), never on reasoning
or system prompts, so the defects ctxlint reports (dropped reasoning, a dropped assistant
turn, a trimmed prefix, a rewritten system prompt) do not split a session in two.

A session key spans files (rotated logs). Under one key, a request that goes on from
none of the key's conversations begins a new session, named key#2, key#3...: another
agent's conversation (a sub-agent, a summarizer: another system prompt), or in a later
file the conversation started over (test runs that name their sessions alike). The same
agent without its history, in the same log (a rotated log's files are one), is the
no-history defect, not a new session.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ctxlint.chat import CJK_CHARACTER, edited_message, message_identity, role_of, short_hash, similar, summary_section_at, text_of, tool_call_ids
from ctxlint.ingest.call_ids import unnumbered_call_id, unpaired_form
from ctxlint.ingest.record import Record
from ctxlint.ingest.sources import live_path
from ctxlint.request_terms import call_kind, other_kinds
from ctxlint.sessions.model import STEERING_ROLES, Session, Turn, last_of, make_turn, prompts_opening
from ctxlint.sessions.ordering import in_time_order


@dataclass(slots=True, eq=False)
class _Open:
    session_id: str
    history: list[tuple] = field(default_factory=list)  # conversation identities of the last request (+ response)
    anchor: tuple | None = None
    # when the last request ended in a tool exchange: the user message that opened it, which
    # a next request that kept the turn's final text alone goes on from
    question: tuple | None = None
    sent: int = 0  # how many of `history` the last request sent (the rest is its logged response)
    # its opening request (a first message alone) was sent again: a retry, or another
    # conversation that opens the same way (a scripted test run); then only a request that
    # repeats its messages goes on from it, not one that has lost some (a turn stored as
    # text, an edit), which may be the other conversation's
    resent: bool = False
    prompt: str | None = None  # whose conversation it is: its agent's prompt and model (agent_prompt)
    model: str | None = None
    asked: str | None = None  # when the last request ends on a user message after an exchange: its text (edited_by)
    kind: tuple | None = None  # the last request's request_terms.call_kind (edited_by)
    asked_after_reply: bool = False  # the last request asked its last message right after the reply it went on from (edited_by)
    opened: int = 0  # how many conversation messages its first request sent
    response_calls: tuple[str, ...] = ()
    last_seen: int = 0
    past_opening: bool = False  # a request went past its opening: it is found by it (ChainInference._by_opening)

    @property
    def reply(self) -> tuple | None:
        """The reply its last request got, when logged."""
        return self.history[self.sent] if len(self.history) > self.sent else None

    @property
    def before_anchor(self) -> tuple | None:
        """_before its anchor: what finds the message before it."""
        return None if self.anchor is None else _before(self.history, _last_position(self.history, self.anchor))

    @property
    def edit_point(self) -> tuple | None:
        """When the last request ended with a user message after an exchange or more, one
        sent after the conversation's first request: the message before it, which a resend
        with that user message edited ends on too (a chat UI's edit-and-resend, which
        branches the conversation there). The first request's question edited reads as
        another conversation: after the same few-shot examples, it is one as often."""
        if self.sent >= 3 and self.sent > self.opened and self.history[self.sent - 1][0] == "user":
            return self.history[self.sent - 2]
        return None

    @property
    def before_question(self) -> tuple | None:
        """When the last request ended on a user message after an exchange: the message
        before it, which a next request that keeps that user message in another form
        carries right before it (_kept_in_other_form)."""
        sent = self.sent
        if sent >= 2 and self.history[sent - 1][0] == "user" and (
                sent > self.opened or any(identity[0] == "assistant" for identity in self.history[:sent - 1])):
            return self.history[sent - 2]
        return None

    def edited_by(self, identities: list[tuple], asked: str, kind: tuple | None) -> bool:
        """Whether a request is the last one with its final user message replaced: another
        text that reads as an edit of it, or any other where the last one asked it right
        after a reply this conversation got (something asked of the history: a side
        request, history.edited_user_message, or an exchange the next request lost) or
        was a call of another kind. One made alike that says something else after
        messages no request got as its reply is another conversation's opening question
        after the same scaffold (few-shot examples)."""
        sent = self.sent
        return (len(identities) == sent and identities[-1][0] == "user" and identities[-1] != self.history[sent - 1]
                and identities[:-1] == self.history[:sent - 1] and self.asked is not None
                and (edited_message(self.asked, asked) or self.asked_after_reply or other_kinds(self.kind, kind)))


    def asked_aside_by(self, identities: list[tuple], kind: tuple | None) -> bool:
        """Whether a request is a side request on this conversation's history as it stood
        (history.side_request_on): made to another model or for another purpose than its
        last request, it carries all that request sent and more, but neither the reply,
        which made tool calls, nor a result of them."""
        sent = self.sent
        return (bool(self.response_calls) and other_kinds(self.kind, kind) and self.reply not in identities
                and len(identities) > sent and identities[:sent] == self.history[:sent]
                and not any(identity[0] == "tool" and identity[1] in self.response_calls for identity in identities))


def _key(identity: tuple) -> tuple:
    """What finds a message again in a later request: its identity, or for a tool result
    its call id alone (apps clear or shorten old tool output in place)."""
    return identity[:2] if identity[0] == "tool" else identity


def _position(identities: list[tuple], wanted: tuple, last: bool = False) -> int | None:
    """Where a message first stands in a request, or last: the message itself, else one
    found by _key (a tool result whose text was cleared). The message itself first, as a
    call id may come back in a later call of the same conversation (recorded gpt-4o
    traffic reuses ids), whose result is not the one wanted."""
    order = range(len(identities) - 1, -1, -1) if last else range(len(identities))
    key = _key(wanted)
    found = next((j for j in order if identities[j] == wanted), None)
    return found if found is not None else next((j for j in order if _key(identities[j]) == key), None)


def _last_position(history: list[tuple], identity: tuple) -> int:
    """Where a message of a conversation's history last stands (it stands there)."""
    return len(history) - 1 - history[::-1].index(identity)


_EMPTY_RESULT = (short_hash(""),)  # a tool result that says nothing (a `think` tool's, a void function's)


def _agreement(candidate: _Open, identities: list[tuple], anchor: tuple | None = None) -> tuple[int, bool]:
    """(how many, whether all): of the candidate's last messages, walking back from its
    anchor (or another message of its history), how many the request repeats, and whether
    the walk went back to the candidate's first message. A tool result whose text changed
    (found by its call id), or that is empty, is walked through without counting: a call
    id alone may be one many conversations use ("functions.search:0", Gemini's calls named
    by their arguments, ids drawn from a small pool in recorded gpt-4o traffic)."""
    anchor = anchor or candidate.anchor
    if anchor is None:
        return 0, False
    position = _position(identities, anchor, last=True)
    if position is None:
        return 0, False
    if anchor == candidate.anchor and candidate.response_calls and position + 1 < len(identities):
        following = identities[position + 1]
        if following[:2] == ("assistant", "calls") and {unnumbered_call_id(call_id) for call_id in following[2]}.isdisjoint(
                map(unnumbered_call_id, candidate.response_calls)):
            return 0, False  # the next request answered the anchor with other calls: another conversation
    history = candidate.history
    i = _last_position(history, anchor)
    j = position
    agreed = 0
    while i >= 0 and j >= 0:
        if history[i] == identities[j] or (history[i][0] == "tool" and _key(history[i]) == _key(identities[j])):
            agreed += history[i] == identities[j] and history[i][2:] != _EMPTY_RESULT
            i -= 1
            j -= 1
        elif history[i][0] == "assistant":
            i -= 1  # an assistant turn the next request dropped: a defect to report, still the same session
        else:
            break
    return agreed, i < 0


# A user message one conversation alone is taken to have sent: 12 characters, or 4 Han,
# kana or hangul ones (each says about as much as a word); "ok", "继续" are everyone's.
DISTINCTIVE_TEXT, DISTINCTIVE_CJK = 12, 4


def _cut_at_anchor(candidate: _Open, messages: list, conversation: list[tuple[int, tuple]]) -> bool:
    """Whether a request is the candidate's history cut short right at its anchor: a reply
    follows the anchor (a new conversation opens with its question alone), nothing before
    it is a message the candidate sent but its opening exchange, which a trim may keep
    (what else stands there is new: a summary of what was cut), and the anchor is one
    conversation's own (a tool result or a user message of some length, not an "ok" or an
    empty result many conversations send)."""
    identities = [identity for _, identity in conversation]
    position = _position(identities, candidate.anchor)
    if position is None:
        return False
    if position + 1 >= len(identities) or identities[position + 1][0] != "assistant":
        return False
    pinned = candidate.history[:candidate.opened + 1]  # its opening and the first reply: what a trim may keep
    if any(identity in candidate.history and identity not in pinned for identity in identities[:position]):
        return False
    # the anchor itself, of some length: a tool result found by its call id alone may be
    # another conversation's (recorded gpt-4o traffic reuses ids across conversations)
    return (identities[position] == candidate.anchor and candidate.anchor[0] in ("tool", "user")
            and _distinctive(messages[conversation[position][0]]))


def _distinctive(message: dict) -> bool:
    """Whether a message's text is one conversation's own, not an "ok" many conversations send."""
    text = " ".join(text_of(message.get("content")).split())
    return len(text) >= DISTINCTIVE_TEXT or len(CJK_CHARACTER.findall(text, 0, 64)) >= DISTINCTIVE_CJK


def _went_on_without_exchange(candidate: _Open, messages: list, conversation: list[tuple[int, tuple]]) -> int:
    """The agreement of a request that carries the user message which opened the candidate's
    closing tool exchange, then a text reply and more, but not the exchange as sent: none
    of it (the turn was stored as its final text alone, a defect CTX016 reports), or its
    calls with their results left out or stored as user messages (CTX002, CTX009 report
    those); still the same session."""
    identities = [identity for _, identity in conversation]
    try:
        position = identities.index(candidate.question)
    except ValueError:
        return 0
    exchange = candidate.history[candidate.history.index(candidate.question) + 1:]
    calls = {identity for identity in exchange if identity[:2] == ("assistant", "calls")}
    results = {identity[2] for identity in exchange if identity[0] == "tool"}
    reply = position + 1
    while reply < len(identities) and (identities[reply] in calls or (identities[reply][0] == "user" and identities[reply][1] in results)):
        reply += 1
    if reply + 1 >= len(identities) or identities[reply][0] != "assistant" or identities[reply][1] == "calls":
        return 0
    if not _distinctive(messages[conversation[position][0]]):
        return 0
    return _agreement(candidate, identities, candidate.question)[0]


def _carried_after_anchor(candidate: _Open, anchor_at: int, identities: list[tuple], at: int) -> int:
    """How many of what followed the candidate's anchor (at `anchor_at` in its history: the
    assistant turns its last request sent after it, then the reply it got) the request
    carries right after the anchor, at `at`: a request that goes on from that conversation
    repeats them (a call turn's ids are one conversation's own, where the texts around it
    may be everyone's)."""
    after = candidate.history[anchor_at + 1:]
    carried = 0
    while carried < len(after) and at + 1 + carried < len(identities) and identities[at + 1 + carried] == after[carried]:
        carried += 1
    return carried


def _not_kept_in_order(kept: list[tuple], sent: list[tuple]) -> list[tuple[str, str]]:
    """The messages of a trimmed history `kept` that are not those of `sent` it keeps, in
    their order: (its role, the role of the message it stands in place of, or "" for none),
    as a rewrite in place is counted."""
    differing, position = [], 0
    for identity in kept:
        found = next((k for k in range(position, len(sent)) if sent[k] == identity), None)
        if found is None:
            differing.append((identity[0], sent[position][0] if position < len(sent) else ""))
            position += 1
        else:
            position = found + 1
    return differing


def _anchor(history: list[tuple]) -> tuple | None:
    for identity in reversed(history):
        if identity[0] != "assistant":
            return identity
    return history[-1] if history else None


def _question(sent: list[tuple]) -> tuple | None:
    """The user message that opened the tool exchange a request ended in, if it did."""
    if not sent or sent[-1][0] != "tool":
        return None
    return next((identity for identity in reversed(sent) if identity[0] == "user"), None)


class ChainInference:
    """Session inference for one scope, one record at a time, in order."""

    def __init__(self) -> None:
        self._by_anchor: dict[tuple, list[_Open]] = defaultdict(list)
        # by its anchor and the message before it (_Open.before_anchor), for an anchor many ended on
        self._by_anchor_before: dict[tuple, list[_Open]] = defaultdict(list)
        self._by_question: dict[tuple, list[_Open]] = defaultdict(list)
        self._by_edit_point: dict[tuple, list[_Open]] = defaultdict(list)
        self._by_reply: dict[tuple, list[_Open]] = defaultdict(list)
        self._by_before_question: dict[tuple, list[_Open]] = defaultdict(list)
        self._by_call: dict[str, list[_Open]] = defaultdict(list)  # the calls of its logged reply, by id
        # by its anchor as it reads with its call cut, when that is a result to a call the API named none
        self._by_unpaired_anchor: dict[tuple, list[_Open]] = defaultdict(list)
        # by its opening (its first request's conversation messages, hashed) once a request went
        # past it, what a trim that keeps it and the newest messages still sends: None where
        # several conversations opened so (kept so, not as a list: many may open alike, "Hi")
        self._by_opening: dict[int, _Open | None] = {}
        self._texts: dict[str, str] = {}  # one copy of each prompt and model name (_shared)
        self._sequence = 0
        # how many requests sent each opening alone (hashed): one many send is no tie of its own
        self._openings: dict[int, int] = {}
        # how many sessions a first request started with each history before its last message
        # (hashed): one many started with is an opening they share (few-shot examples)
        self._started_after: dict[int, int] = {}

    def _places(self, conversation: _Open) -> list[tuple[dict[tuple, list[_Open]], tuple]]:
        """Each index an open conversation is found by, with its key there."""
        places = [(self._by_anchor, _key(conversation.anchor) if conversation.anchor is not None else None),
                  (self._by_anchor_before, (_key(conversation.anchor), conversation.before_anchor) if conversation.anchor is not None else None),
                  (self._by_question, conversation.question), (self._by_edit_point, conversation.edit_point),
                  (self._by_reply, conversation.reply), (self._by_before_question, conversation.before_question)]
        places += [(self._by_call, call_id) for call_id in conversation.response_calls]
        if conversation.anchor is not None:
            places.append((self._by_unpaired_anchor, unpaired_form(conversation.anchor)))
        return [(index, key) for index, key in places if key is not None]

    def _paired(self, conversation: list[tuple[int, tuple]]) -> list[tuple[int, tuple]]:
        """The request's messages, each result left unpaired by a window that cut its call
        read as the result an open conversation ended on, when one did (or several, with the
        same call): the request then goes on from it as from any anchor."""
        paired = []
        for index, identity in conversation:
            owners = self._by_unpaired_anchor.get(identity) if identity[0] == "tool" else None
            if owners and all(owner.anchor == owners[0].anchor for owner in owners):
                identity = owners[0].anchor
            paired.append((index, identity))
        return paired

    def _candidates(self, identities: list[tuple]) -> list[_Open]:
        """The open conversations whose anchor the request carries. An anchor more than
        SHARED_ANCHOR conversations ended on ("Thanks!", a greeting every chat opens with)
        says little alone: those count only where the message before it agrees too, or
        nothing came before it (then the most recent SHARED_ANCHOR), so a log of many
        conversations that end alike is checked in time that grows with it, not its square."""
        found: dict[int, _Open] = {}
        for key in set(map(_key, identities)):
            owners = self._by_anchor.get(key, ())
            if len(owners) > SHARED_ANCHOR:
                owners = [owner for before in _befores(identities, key) | {None}
                          for owner in self._by_anchor_before.get((key, before), ())[-SHARED_ANCHOR:]]
            found.update((id(owner), owner) for owner in owners)
        return list(found.values())

    def add(self, record: Record) -> tuple[str, bool]:
        """(id of the session the record continues or starts, whether it starts one)."""
        probe = make_turn(0, record)
        conversation = self._paired(probe.conversation_identities())
        identities = [identity for _, identity in conversation]
        candidates = self._candidates(identities)
        best, best_rank, best_cut, best_whole = None, (0,), False, False
        # the best-ranked conversation of this agent whose whole history the request opens with
        extended, extended_rank = None, (0,)
        cut_at_anchor = 0  # candidates tied by their anchor alone, where a cut history starts at it
        prompt, model = (_shared(text, self._texts) for text in (agent_prompt(record.messages), record.model))
        if len(identities) == 1:
            if len(self._openings) >= OPENINGS_COUNTED:
                self._openings.clear()
            self._openings[hash(identities[0])] = self._openings.get(hash(identities[0]), 0) + 1
        for candidate in candidates:
            same_agent = _same_agent(candidate.prompt, candidate.model, prompt, model)
            if len(identities) == candidate.sent and identities == candidate.history[:candidate.sent]:
                if not same_agent:
                    continue  # the same messages sent by another agent: another conversation that opens alike
                if candidate.sent == candidate.opened and len(candidate.history) > candidate.sent:
                    # its opening sent again once it was answered: another conversation that
                    # opens alike (a test run's scenario, a first question many users ask),
                    # or a regeneration, whose reply the conversation goes on from
                    continue
            elif len(identities) == candidate.opened < candidate.sent and identities == candidate.history[:candidate.opened]:
                continue  # its opening alone once the conversation went past it: another that opens alike
            score, whole = _agreement(candidate, identities)
            reply = candidate.reply
            anchor_at = _last_position(candidate.history, candidate.anchor)
            at = _position(identities, candidate.anchor, last=True) if score else None
            if at is not None:
                score += _carried_after_anchor(candidate, anchor_at, identities, at)
            # Two agreeing messages, or all there are before the anchor in a session's first
            # request; or the anchor alone where a kept-last-N history (or a summary of what
            # it cut) starts right at it.
            needed = min(2, anchor_at + 1)
            # (a trim keeps the prompt or cuts it; it does not send another)
            cut = score == 1 and needed == 2 and (prompt is None or candidate.prompt is None or _same_prompt(candidate.prompt, prompt)) \
                and _cut_at_anchor(candidate, record.messages, conversation)
            if cut:
                needed = 1
            if not (score >= needed or (score and whole)):
                continue
            if score < 2 and (_other_agent(candidate.prompt, candidate.model, prompt, model)
                              or None not in (candidate.model, model) and candidate.model != model):
                continue  # one message in common (an opening many send alike) and another agent's or model's request
            cut_at_anchor += cut
            # the most messages agreeing; among as many, the one whose reply the request
            # carries or whose reply's calls it answers (a reply stored otherwise, its results
            # kept), then one it carries whole past its opening (not one whose earlier turns it
            # does not carry, tied by texts everyone sends), then the one it goes on from
            # furthest along, its own agent's, its model's, the latest
            goes_on = (reply is not None and reply in identities) or any(
                identity[0] == "tool" and identity[1] in candidate.response_calls for identity in identities)
            if score <= 2 and not goes_on and None not in (prompt, candidate.prompt) and not same_agent:
                continue  # two messages in common (an acknowledgement, a question many ask) under another prompt: another agent's
            carried_whole = whole and candidate.sent > candidate.opened
            rank = (score, goes_on, carried_whole, at or 0, same_agent, candidate.model == model, candidate.last_seen)
            if rank > best_rank:
                best, best_rank, best_cut, best_whole = candidate, rank, cut, whole
            if same_agent and whole and len(identities) > candidate.sent and identities[:candidate.sent] == candidate.history[:candidate.sent] \
                    and rank > extended_rank:
                extended, extended_rank = candidate, rank
        if best is not None and best_cut and cut_at_anchor > 1:
            # tied by its anchor alone, which more than one conversation ended on ("Yes, please
            # proceed."): whose history was cut cannot be told
            best = None
        if best is not None and not best_whole and identities[0] not in best.history:
            # the request opens with a message that conversation never had, as another one
            # opened: it goes on from all that one sent, or from its opening (a trim cut the
            # anchor). The first agrees on later messages only, texts two runs of a script
            # share (replies, results, even call ids), and would have had its opening
            # replaced by the other's.
            best = (extended or self._trimmed_past_anchor(record.messages, conversation, prompt, model, replied=True)
                    or self._trimmed_past_anchor(record.messages, conversation, prompt, model, replied=False) or best)
        elif best is not None and best_rank[:2] == (1, False):
            # tied by one message alone, not carrying that conversation's reply: one whose
            # logged reply the request carries after their shared opening goes on (the trim
            # cut its anchor; the other sent that opening alone, a run that opens alike)
            best = self._trimmed_past_anchor(record.messages, conversation, prompt, model, replied=True) or best
        if best is None or not best_rank[1]:
            # tied to no conversation whose reply it carries: one whose history it sends with
            # a message rewritten in place, its logged reply right after, goes on further
            rewritten = self._rewritten_in_place(record.messages, conversation, prompt, model)
            if rewritten is not None and rewritten[1] > best_rank[0]:
                best = rewritten[0]
        # weaker ties, made to the same agent's conversation only: a turn stored as its text, an edit
        if best is None:
            best = self._gone_on_without_exchange(record.messages, conversation, prompt, model)
        asked = _asked(record.messages, conversation)
        if best is None:
            best = self._opened_with_reply(record.messages, conversation, prompt, model)
        if best is None:
            best = self._trimmed_past_anchor(record.messages, conversation, prompt, model, replied=True)
        kind = call_kind(record)
        if best is None and len(identities) >= 2 and asked is not None:
            best = next((o for o in reversed(self._by_edit_point.get(identities[-2], ()))
                         if not o.resent and _same_agent(o.prompt, o.model, prompt, model) and o.edited_by(identities, asked, kind)), None)
        if best is None:
            best = self._kept_in_other_form(record.messages, conversation, prompt, model)
        if best is None:
            best = self._exchange_stored_otherwise(record.messages, conversation, prompt, model)
        if best is None:
            best = self._trimmed_past_anchor(record.messages, conversation, prompt, model, replied=False)
        started = best is None
        if best is None:
            best = _Open(f"{record.file}:{record.line}", opened=len(identities))
            if len(identities) >= 2:
                if len(self._started_after) >= OPENINGS_COUNTED:
                    self._started_after.clear()
                before = hash(tuple(identities[:-1]))
                self._started_after[before] = self._started_after.get(before, 0) + 1
        elif best.asked_aside_by(identities, kind):
            # the conversation goes on from where it stood, and from this request if it is
            # what goes on (a model switched): a second open end of the same session
            best = _Open(best.session_id, opened=best.opened)
        else:
            for index, key in self._places(best):
                index[key].remove(best)
            best.resent |= best.sent == len(identities) == 1 and identities == best.history[:1]
        went_on_from = None if started else best.reply
        best.history = identities[:]
        best.sent = len(identities)
        best.prompt, best.model = prompt, model
        best.asked = asked if best.edit_point is not None else None
        best.kind = kind
        best.asked_after_reply = went_on_from is not None and len(identities) >= 2 and identities[-2] == went_on_from
        best.response_calls = ()
        response = record.response.message if record.response is not None else None
        if response is not None:
            best.history.append(message_identity(response))
            best.response_calls = tuple(tool_call_ids(response))
        best.anchor = _anchor(identities)
        best.question = _question(identities)  # what it sent: its logged reply comes after
        best.last_seen = self._sequence
        self._sequence += 1
        if not best.past_opening and 0 < best.opened < best.sent:
            best.past_opening = True  # its opening stays what it was: indexed once
            key = hash(tuple(best.history[:best.opened]))
            owner = self._by_opening.get(key, best)
            self._by_opening[key] = owner if owner is not None and owner.session_id == best.session_id else None
        for index, key in self._places(best):
            index[key].append(best)
        return best.session_id, started

    def _rewritten_in_place(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None) -> tuple[_Open, int] | None:
        """(the open conversation, how many messages agree) whose logged reply the request
        carries right after what its last request sent, all in place, or trimmed to its
        opening and newest messages in their order, but for one rewrite in four messages at
        most (a call id left out; results sent as user messages, or as tool messages again,
        count as one): the rewrite may have changed the message that conversation ended on,
        which no longer ties it. Only a reply one conversation alone got (tool calls, or a
        text of some length)."""
        identities = [identity for _, identity in conversation]
        for at, (index, identity) in enumerate(conversation):
            owners = self._by_reply.get(identity) if identity[0] == "assistant" else None
            if not owners:
                continue
            found = [o for o in owners if o.sent >= at and _same_agent(o.prompt, o.model, prompt, model)]
            if len(found) != 1 or not (identity[1] == "calls" or _distinctive(messages[index])):
                continue
            sent = found[0].history[:found[0].sent]
            differing = [(mine[0], theirs[0]) for mine, theirs in zip(identities[:at], sent) if mine != theirs] if at == len(sent) \
                else _not_kept_in_order(identities[:at], sent)
            as_user = {("tool", "user"), ("user", "tool")}
            rewrites = sum(roles not in as_user for roles in differing) + any(roles in as_user for roles in differing)
            if identities[0] == sent[0] and rewrites <= max(1, at // 4) and at - len(differing) >= min(2, at):
                return found[0], at - len(differing)
        return None

    def _gone_on_without_exchange(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None) -> _Open | None:
        """The open conversation of this agent that this request goes on from having lost its
        closing tool exchange, when two of its messages up to that exchange agree, or all there
        are; not the opening alone when several requests sent it (runs that open alike)."""
        candidates = {id(o): o for _, identity in conversation for o in self._by_question.get(identity, ())
                      if not o.resent and _same_agent(o.prompt, o.model, prompt, model)}.values()
        scored = [(score, candidate.last_seen, candidate) for candidate in candidates
                  if (score := _went_on_without_exchange(candidate, messages, conversation)) >= self._needed_before(candidate)]
        return max(scored, key=lambda entry: entry[:2])[2] if scored else None

    def _opened_with_reply(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None) -> _Open | None:
        """The open conversation whose logged reply this request's conversation opens with,
        or the results of that reply's calls, more following: its history kept from there on
        (keep-last-N cut the anchor and all before it, a defect CTX008 reports). Only a
        reply one conversation alone got (tool calls, or a text of some length), and not
        another agent's request."""
        if len(conversation) < 2:
            return None
        index, first = conversation[0]
        if first[0] == "tool":  # kept from the reply's results on: they answer its calls
            leading: list[str] = []
            for _, identity in conversation:
                if identity[0] != "tool":
                    break
                leading.append(identity[1])
            found = list({id(o): o for call_id in leading for o in self._by_call.get(call_id, ())
                          if set(leading) <= set(o.response_calls) and not _other_agent(o.prompt, o.model, prompt, model)}.values())
            return found[0] if len(found) == 1 else None
        if first[0] != "assistant":
            return None
        found = [o for o in self._by_reply.get(first, ()) if not _other_agent(o.prompt, o.model, prompt, model)]
        if len(found) != 1 or not (first[1] == "calls" or _distinctive(messages[index])):
            return None
        return found[0]

    def _kept_in_other_form(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None) -> _Open | None:
        """The open conversation whose last request ended on a user message that this request
        keeps in another form (the app sent it wrapped in retrieved context and stores the
        user's words, history.stored_user_message): the request repeats the conversation's
        history before that message, or opens there (keep-last-N cut it), a user message
        stands in its place, then the reply the conversation got, more following. The reply
        is one conversation alone got (tool calls, or a text of some length). Tied by the
        history before that message instead, an assistant message follows it, or (its reply
        logged, and dropped: a defect CTX016 reports) the user's next message, and that
        history holds an exchange: more than the conversation's first request sent, or what
        no other session's first request started with (not an opening many conversations
        share, few-shot examples). One conversation must fit, not another agent's."""
        identities = [identity for _, identity in conversation]
        found: dict[int, _Open] = {}
        for slot in range(len(identities) - 1):
            following = identities[slot + 1]
            if identities[slot][0] != "user" or following[0] not in ("assistant", "user") or (following[0] == "assistant" and slot + 2 == len(identities)):
                continue  # a reply is followed by more
            candidates: list[_Open] = []
            if following[0] == "assistant" and (following[1] == "calls" or _distinctive(messages[conversation[slot + 1][0]])):
                candidates += self._by_reply.get(following, ())
            if slot:
                candidates += [o for o in self._by_before_question.get(identities[slot - 1], ())
                               if (following[0] == "assistant" or o.reply is not None)
                               and (o.sent > o.opened or self._started_after.get(hash(tuple(o.history[:o.sent - 1]))) == 1)]
            for candidate in candidates:
                sent = candidate.sent
                if (sent - 1 == slot or not slot) and candidate.history[sent - 1][0] == "user" and candidate.history[sent - 1] != identities[slot] \
                        and candidate.history[:slot] == identities[:slot] and not _other_agent(candidate.prompt, candidate.model, prompt, model):
                    found[id(candidate)] = candidate
        return next(iter(found.values())) if len(found) == 1 else None

    def _exchange_stored_otherwise(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None) -> _Open | None:
        """The open conversation whose last request ended in a tool exchange, when this
        request repeats its history up to the user message that opened the exchange, then
        carries the reply that request got, more following: the exchange was stored in
        another form between them (its results as user messages, or left out: defects CTX009
        and CTX002 report), and the rest is the same conversation. The reply is one
        conversation alone got (tool calls, or a text of some length), and one conversation
        must fit, not another agent's."""
        identities = [identity for _, identity in conversation]
        found: dict[int, _Open] = {}
        for position in range(len(identities) - 1):
            reply = identities[position]
            if reply[0] != "assistant" or not (reply[1] == "calls" or _distinctive(messages[conversation[position][0]])):
                continue
            for candidate in self._by_reply.get(reply, ()):
                sent = candidate.history[:candidate.sent]
                asked = last_of(sent, "user")
                if not sent or sent[-1][0] != "tool" or asked is None or asked >= position - 1:
                    continue
                if identities[:asked + 1] == sent[:asked + 1] and not _other_agent(candidate.prompt, candidate.model, prompt, model):
                    found[id(candidate)] = candidate
        return next(iter(found.values())) if len(found) == 1 else None

    def _trimmed_past_anchor(self, messages: list, conversation: list[tuple[int, tuple]], prompt: str | None, model: str | None,
                             replied: bool) -> _Open | None:
        """The open conversation whose opening (what its first request sent, ending on a
        question) this request repeats, then a reply and more: a trim that keeps the opening
        and the newest messages cut the anchor with the middle. `replied`: the reply is the
        one the conversation's last request got, logged, and one conversation of that opening
        alone got it. Else, its reply not logged, nothing else ties them: one conversation of
        this agent must have opened so, with a question one conversation alone asks and not
        several requests sent alone (runs that open alike), and gone past its opening."""
        identities = [identity for _, identity in conversation]
        for end in range(1, len(identities) - 1):
            if identities[end - 1][0] != "user" or identities[end][0] != "assistant":
                continue
            if replied:
                found = [o for o in self._by_reply.get(identities[end], ())
                         if o.opened == end and o.history[:end] == identities[:end] and not _other_agent(o.prompt, o.model, prompt, model)]
            elif (end == 1 and self._openings.get(hash(identities[0]), 0) > 1) or not _distinctive(messages[conversation[end - 1][0]]):
                continue
            else:
                owner = self._by_opening.get(hash(tuple(identities[:end])))
                found = [owner] if owner is not None and owner.opened == end and _same_agent(owner.prompt, owner.model, prompt, model) else []
            if len(found) == 1:
                return found[0]
        return None

    def _needed_before(self, candidate: _Open) -> int:
        """How many of a conversation's messages up to its closing tool exchange a request
        must repeat to go on from it without the exchange: two, or all there are, unless
        that is an opening several requests sent alone."""
        before = candidate.history.index(candidate.question) + 1
        if before == 1 and self._openings.get(hash(candidate.question), 0) > 1:
            return 2
        return min(2, before)


@dataclass(slots=True, eq=False)
class Thread:
    """One conversation under a session key, as the next request is routed by: what going
    on from its last request means (carrying that request's reply or its newest message;
    in the same log, the message its conversation opens with), the prompt of the agent
    that holds it, and the log it was last seen in (a rotated log's files are one log)."""

    part: int
    log: str
    prompt: str | None
    model: str | None
    # identities as hash() ints: a key's conversations stay known for the whole log, so
    # each keeps a few machine words, not the messages' identity tuples
    replied: int | None  # its last request's reply: any agent that goes on from it carries it
    newest: int | None  # its last request's newest message
    opening: int | None
    # the start of the user message the conversation first opened with, and of the one its
    # last request opens with (a trimmed or summarized history), when they say enough to be
    # recognized quoted: a title or summary call about the conversation quotes one
    opening_texts: tuple[str, ...] = ()
    given: tuple[int, ...] = ()  # the newest messages of its last few requests
    calls: tuple[int, ...] = ()  # the ids of the calls its last request's reply made
    # its newest message as it reads with its call cut, when that is a result to a call the
    # API named none: a window that opens at it goes on from this thread
    newest_unpaired: int | None = None
    kind: int | None = None  # its last request's request_terms.call_kind, hashed
    task: int | None = None  # its last request's task_header, hashed, when that request asked one message alone
    started: int | None = None  # its first request's conversation messages, hashed as one
    started_size: int = 0  # how many they are
    past_start: bool = False  # whether a request went past them (_starts_over)

    @classmethod
    def after(cls, part: int, turn: Turn, interned: dict[str, str], before: "Thread | None" = None) -> "Thread":
        """The thread once `turn` was checked; `before`, the thread before it, if any."""
        newest = next((identity for identity in reversed(turn.identities) if identity[0] not in STEERING_ROLES), None)
        opening = next((index for index, identity in enumerate(turn.identities) if identity[0] not in STEERING_ROLES), None)
        prompt, model = (_shared(text, interned) for text in (agent_prompt(turn.record.messages), turn.record.model))
        reply = turn.response_identity()
        replied, newest_hash = (None if identity is None else hash(identity) for identity in (reply, newest))
        first = before.opening_texts[:1] if before is not None else ()
        current = _quotable(turn.record.messages[opening]) if opening is not None else None
        texts = first + ((current,) if current is not None and current not in first else ())
        given = ((before.given if before is not None else ()) + ((newest_hash,) if newest_hash is not None else ()))[-GIVEN_KEPT:]
        calls = tuple(hash(call_id) for call_id in reply[2]) if reply is not None and reply[:2] == ("assistant", "calls") else ()
        unpaired = unpaired_form(newest) if newest is not None else None
        kind, task = call_kind(turn.record), _task_of(turn.record)
        if before is not None and before.past_start:
            started, size, past = before.started, before.started_size, True
        else:
            conversation = [identity for _, identity in turn.conversation_identities()]
            if before is None:
                started, size, past = hash(tuple(conversation)), len(conversation), False
            else:
                started, size = before.started, before.started_size
                past = len(conversation) != size or hash(tuple(conversation)) != started
        return cls(part, live_path(turn.record.file), prompt, model, replied, newest_hash,
                   None if opening is None else hash(turn.identities[opening]), texts, given, calls,
                   None if unpaired is None else hash(unpaired), None if kind is None else hash(kind),
                   None if task is None else hash(task), started, size, past)

    def shadows(self, threads: list["Thread"]) -> bool:
        """Whether another agent's thread of the key was given this one's newest message in
        one of its last few requests: this one is an agent called beside the conversation (a
        router, a classifier), whose next call without the last one's history is no history
        lost."""
        return self.newest is not None and any(
            other is not self and self.newest in other.given and not _same_agent(other.prompt, other.model, self.prompt, self.model)
            for other in threads)


INTERNED_TEXTS = 4096
GIVEN_KEPT = 4  # newest messages a thread remembers it was given (Thread.shadows)
OPENINGS_COUNTED = 1 << 16  # past as many distinct openings, the count starts again
SHARED_ANCHOR = 64  # conversations ended on one message past which it ties only with the one before it


def _before(identities: list[tuple], at: int) -> tuple | None:
    """What finds the message before position `at` (_key), passing over assistant turns (a
    request that goes on may have dropped one); None where nothing comes before."""
    return next((_key(identity) for identity in reversed(identities[:at]) if identity[0] != "assistant"), None)


def _befores(identities: list[tuple], key: tuple) -> set[tuple | None]:
    """_before each place `key` stands in a request."""
    return {_before(identities, at) for at, identity in enumerate(identities) if _key(identity) == key}


def _shared(text: str | None, interned: dict[str, str]) -> str | None:
    """One copy of a text the sessions of one app share (their prompt, their model). A log
    whose prompts change with every request (a clock in them) must not fill the table:
    past its size it starts again."""
    if text is None:
        return None
    if len(interned) >= INTERNED_TEXTS:
        interned.clear()
    return interned.setdefault(text, text)


def _asked(messages: list, conversation: list[tuple[int, tuple]]) -> str | None:
    """The text of the request's final conversation message when it is a user message."""
    if not conversation or conversation[-1][1][0] != "user":
        return None
    return text_of(messages[conversation[-1][0]].get("content"))[:PROMPT_COMPARED]


def agent_prompt(messages: list) -> str | None:
    """The text of the system (or developer) message a request opens with: whose conversation it is."""
    return text_of(messages[0].get("content"))[:PROMPT_COMPARED] if prompts_opening(messages) else None


PROMPT_COMPARED = 2000  # as much of a prompt as chat.similar reads


def _same_prompt(known_prompt: str | None, prompt: str | None) -> bool:
    """Whether two requests send one prompt: the same text or an edit of it, or none both."""
    if known_prompt is None or prompt is None:
        return known_prompt is prompt
    return known_prompt == prompt or similar(known_prompt, prompt) or _same_under_a_summary(known_prompt, prompt)


def _same_under_a_summary(known_prompt: str, prompt: str) -> bool:
    """Whether a prompt is the known one, or an edit of it, with a summary of the
    conversation so far added or replaced (chat.summary_section_at): an app that keeps a
    running summary in its system prompt, in place of the history it cut. What comes
    before the summary is the agent's prompt; a prompt that is a summary alone is none."""
    at = summary_section_at(prompt)
    if not at:
        return False
    known_at = summary_section_at(known_prompt)
    base, known_base = prompt[:at].strip(), known_prompt[:known_at].strip()
    return bool(base) and (base == known_base or similar(base, known_base))


def _other_agent(known_prompt: str | None, known_model: str | None, prompt: str | None, model: str | None) -> bool:
    """Whether a request is clearly another agent's than a known conversation's: another
    model and another prompt (one of them alone changes when an app switches models, or
    drops or rewrites its prompt, a defect to report)."""
    return None not in (known_model, model) and known_model != model and not _same_prompt(known_prompt, prompt)


def _same_agent(known_prompt: str | None, known_model: str | None, prompt: str | None, model: str | None) -> bool:
    """Whether a request (prompt, model) is the agent of a known conversation: its prompt,
    or an edit of it; without a prompt on either side, the same model (a side call without
    one, a title or an intent classifier, is most often made to a smaller model)."""
    return _same_prompt(known_prompt, prompt) and (known_prompt is not None or known_model == model or None in (known_model, model))


QUOTED = 48  # characters of a conversation's opening message looked for in another request


def _quotable(message: dict) -> str | None:
    """The start of a user message, whitespace folded, when it is one conversation's own."""
    if role_of(message) != "user" or not _distinctive(message):
        return None
    return " ".join(text_of(message.get("content")).split())[:QUOTED]


def _about(thread: Thread, record: Record) -> bool:
    """Whether the request is a call about the thread's conversation rather than its next
    turn: its last message is a user message that quotes, inside a longer text, a message
    the conversation opened with (a title, summary or tagging call that gets the chat
    pasted in). A quoting message followed by more of the conversation is a summary put
    in place of the history, before the user's next message."""
    message = record.messages[-1] if record.messages else None
    if message is None or role_of(message) != "user":
        return False
    text = " ".join(text_of(message.get("content")).split())
    return any(len(text) > len(quoted) and quoted in text and not text.startswith(quoted) for quoted in thread.opening_texts)


def route(threads: list[Thread], record: Record) -> int | None:
    """The part (1, 2, ...) of its session key a keyed request belongs to, or None for a
    new one. It goes on from the thread whose last request's reply or newest message it
    carries (rotated logs across files too), or in the same log the message its
    conversation opens with (a rotated log's files are one log). A
    request that goes on from none is the same agent having lost its history (a defect
    the thread reports) when a thread in the same log is its agent's (_same_agent) and
    the request is not a call about that thread's conversation (_about), nor the same task
    over another input where both ask one message alone (_task_of);
    otherwise it opens a new part: another agent's conversation under the same key (a
    sub-agent, a summarizer, a title call) or, in another log, the key reused for a new
    conversation (test runs that name their sessions alike). `threads` is kept in order
    of use; the caller records the request's thread afterwards (remember)."""
    if _starts_over(threads, record):
        return None
    prompt = agent_prompt(record.messages)
    chosen = _gone_on_from(threads, record, prompt) or _answering(threads, record) or _cut_at_its_head(threads, record, prompt)
    if chosen is None:
        kind, task = call_kind(record), _task_of(record)
        kind, task = (None if value is None else hash(value) for value in (kind, task))
        chosen = next((thread for thread in reversed(threads)
                       if thread.log == live_path(record.file)
                       and (_same_agent(thread.prompt, thread.model, prompt, record.model) or _cut_with_its_prompt(thread, prompt, kind))
                       and not (task is not None and task == thread.task)
                       and not _about(thread, record) and not thread.shadows(threads)), None)
    return None if chosen is None else chosen.part


def _starts_over(threads: list[Thread], record: Record) -> bool:
    """Whether the request sends again, alone, the conversation a thread's first request
    sent, in the same log, once the latest thread that started so went past it: a new run
    of that task under the same key (a sub-agent given the same task again, a scenario run
    again), not a turn of the run before. Sent again before the thread went on, it is a
    retry of its first request."""
    sizes = {thread.started_size for thread in threads if thread.past_start}
    if not sizes:
        return False
    conversation, longest = [], max(sizes)
    for message in record.messages:  # read no further than the longest start: most requests are longer
        if role_of(message) not in STEERING_ROLES:
            conversation.append(message_identity(message))
            if len(conversation) > longest:
                return False
    if len(conversation) not in sizes:
        return False
    started = hash(tuple(conversation))
    latest = next((thread for thread in reversed(threads) if thread.started == started and thread.log == live_path(record.file)), None)
    return latest is not None and latest.past_start


TASK_HEADER = (12, 200)  # the length of the instruction a templated message opens with, in characters


def task_header(text: str) -> str | None:
    """The instruction a templated user message opens with before its input ("Summarize
    the following article:", "Classify this ticket: …"): its text up to its first line
    break, or to a colon and a space, when that is TASK_HEADER long and input follows."""
    text = text.lstrip()
    stops = [at for at in (text.find("\n", 0, TASK_HEADER[1]), text.find(": ", 0, TASK_HEADER[1])) if at >= TASK_HEADER[0]]
    if not stops or not text[min(stops) + 1:].strip():
        return None
    return text[:min(stops)].rstrip(":").strip()


def _task_of(record: Record) -> str | None:
    """The task header of a request that asks one user message alone (after its prompt): the
    same instruction over another input is another task of a map over many inputs (one
    summary per article under a trace id), not the conversation that asked the first one
    having lost its history."""
    conversation = [message for message in record.messages if role_of(message) not in STEERING_ROLES]
    if len(conversation) != 1 or role_of(conversation[0]) != "user":
        return None
    return task_header(text_of(conversation[0].get("content")))


def _cut_with_its_prompt(thread: Thread, prompt: str | None, kind: int | None) -> bool:
    """Whether a request that sends no prompt is the thread's agent having lost its prompt
    with its history (keep-last-N down to the newest message: CTX008): a call of the same
    kind (the same model, asked for the same purpose: its tools, its reply's form), where
    the thread's agent sent a prompt. Another agent called without one (a router, a
    classifier) is most often made for another purpose or to another model."""
    return prompt is None and thread.prompt is not None and kind is not None and kind == thread.kind


def _cut_at_its_head(threads: list[Thread], record: Record, prompt: str | None) -> Thread | None:
    """The thread a request goes on from whose conversation opens with an assistant or tool
    message: a history cut at its head (keep-last-N, its prompt often cut with it: a defect
    CTX008 reports). It goes on from the key's latest conversation in the same log held by
    its model, and by its prompt where it still sends one (another prompt is another
    agent, whose conversation may open with its own greeting)."""
    first = _opening_message(record)
    if first is None or role_of(first) not in ("assistant", "tool"):
        return None
    return next((thread for thread in reversed(threads) if thread.log == live_path(record.file) and thread.model == record.model
                 and (prompt is None or _same_prompt(thread.prompt, prompt))), None)


def _opening_message(record: Record) -> dict | None:
    """The first message of the request's conversation (after its system prompt)."""
    return next((message for message in record.messages if role_of(message) not in STEERING_ROLES), None)


def _answering(threads: list[Thread], record: Record) -> Thread | None:
    """The thread whose last reply's calls the request's conversation opens by answering:
    its history kept from those results on (keep-last-N inside a tool exchange)."""
    first = _opening_message(record)
    if first is None or role_of(first) != "tool" or not isinstance(first.get("tool_call_id"), str):
        return None
    answered = hash(first["tool_call_id"])
    return next((thread for thread in reversed(threads) if answered in thread.calls), None)


def _gone_on_from(threads: list[Thread], record: Record, prompt: str | None) -> Thread | None:
    """The thread the request goes on from, its messages read newest first: a request that
    goes on meets the reply or newest message it goes on from within its last few. The
    newest message (a user's message, the question) or the opening, as the request's last
    message, ties only the same agent's thread: another agent that was given the same
    message (a router, a classifier) is not the conversation this request goes on with."""
    if not threads:
        return None
    messages = record.messages
    last = len(messages) - 1
    # a thread whose newest message the request ends on sends it again (a retry), unless the
    # request carries another thread's reply before it: it goes on from that reply (two runs
    # of one task make the same call, get the same result, where calls have no ids of their own)
    resent = None
    for position in range(last, -1, -1):
        identity = hash(message_identity(messages[position]))
        for thread in reversed(threads):
            if identity == thread.replied:
                return thread
            if resent is None and (identity in (thread.newest, thread.newest_unpaired) or (identity == thread.opening and thread.log == live_path(record.file))) \
                    and (position < last or _same_agent(thread.prompt, thread.model, prompt, record.model)):
                if position < last:
                    return thread
                resent = thread
    return resent


# The conversations of a key a request is routed among: the most recently used, and an
# older one only when the request carries its last reply (carrying_older). A key can hold
# thousands (a map over many inputs under one trace id opens one per input): routing costs
# the same however many there are.
ROUTED_PARTS = 32


def carrying_older(record: Record, replies: dict[int, int], recent: set[int]) -> list[int]:
    """The parts, not among `recent`, whose last reply (`replies`: hashed identity to part)
    the record carries: a conversation gone on with after many others of its key."""
    found = (replies.get(hash(message_identity(message))) for message in record.messages if role_of(message) == "assistant")
    return list(dict.fromkeys(part for part in found if part is not None and part not in recent))


def note_reply(replies: dict[int, int], part: int, before: Thread | None, after: Thread) -> None:
    """Keep a key's parts by their last reply (`replies`, for carrying_older) as `part`'s
    thread moves on from `before` to `after`."""
    if before is not None and replies.get(before.replied) == part:
        del replies[before.replied]
    if after.replied is not None:
        replies[after.replied] = part


def remember(threads: list[Thread], turn: Turn, part: int, interned: dict[str, str]) -> None:
    """After a request of `part` was checked: its thread, most recently used last (of the
    ROUTED_PARTS most recent)."""
    before = next((thread for thread in threads if thread.part == part), None)
    threads[:] = [thread for thread in threads if thread.part != part][-(ROUTED_PARTS - 1):]
    threads.append(Thread.after(part, turn, interned, before))


def part_name(key: str, part: int) -> str:
    return key if part == 1 else f"{key}#{part}"


def _infer(records: list[Record]) -> list[Session]:
    sessions: dict[str, Session] = {}
    inference = ChainInference()
    for record in records:
        session_id, _ = inference.add(record)
        session = sessions.setdefault(session_id, Session(id=session_id, file=record.file, turns=[]))
        previous = session.turns[-1] if session.turns else None
        session.turns.append(make_turn(len(session.turns) + 1, record, previous))
    return list(sessions.values())


def build_sessions(records: list[Record]) -> list[Session]:
    """Sessions in the order their first request appears in the input, each request in
    the order the streaming check takes it (ordering.in_time_order)."""
    keyed: dict[str, list[Record]] = {}
    unkeyed: dict[str, list[Record]] = {}
    order: list[tuple[str, str]] = []
    for record in in_time_order(records):
        if record.session_key is not None:
            if record.session_key not in keyed:
                keyed[record.session_key] = []
                order.append(("key", record.session_key))
            keyed[record.session_key].append(record)
        else:
            scope = record.scope or live_path(record.file)  # a rotated log's files are one log
            if scope not in unkeyed:
                unkeyed[scope] = []
                order.append(("scope", scope))
            unkeyed[scope].append(record)
    sessions: list[Session] = []
    for kind, name in order:
        if kind == "key":
            threads: list[Thread] = []  # the ROUTED_PARTS most recently used
            latest: dict[int, Thread] = {}  # every part's thread
            replies: dict[int, int] = {}  # every part by its last reply (note_reply)
            interned: dict[str, str] = {}
            parts: dict[int, Session] = {}
            for record in keyed[name]:
                recent = {thread.part for thread in threads}
                older = carrying_older(record, replies, recent) if len(parts) > ROUTED_PARTS else []
                part = route([latest[part] for part in older] + threads, record) or len(parts) + 1
                if part not in parts:
                    parts[part] = Session(id=part_name(name, part), file=record.file, turns=[], explicit_key=True)
                    sessions.append(parts[part])
                session = parts[part]
                session.turns.append(make_turn(len(session.turns) + 1, record, session.turns[-1] if session.turns else None))
                before = latest.get(part)
                if before is not None and part not in recent:
                    threads.append(before)  # back among the most recent, to be remembered
                remember(threads, session.turns[-1], part, interned)
                latest[part] = threads[-1]
                note_reply(replies, part, before, threads[-1])
        else:
            inferred = _infer(unkeyed[name])
            sessions.extend(inferred)
    return sorted(sessions, key=lambda session: min(turn.record.seq for turn in session.turns))


class SessionAssembler:
    """The streaming form of build_sessions: each record's session as the record arrives."""

    def __init__(self) -> None:
        self._scopes: dict[str, ChainInference] = {}

    def session_of(self, record: Record) -> tuple[str, bool]:
        """(session id, whether the id is the log's own session key)."""
        if record.session_key is not None:
            return record.session_key, True
        scope = record.scope or live_path(record.file)  # a rotated log's files are one log
        inference = self._scopes.get(scope)
        if inference is None:
            inference = self._scopes[scope] = ChainInference()
        return inference.add(record)[0], False
