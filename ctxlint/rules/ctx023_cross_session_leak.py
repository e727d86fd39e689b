from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Iterable

from ctxlint.chat import Quoted, comparable_text, excerpt, hash64, role_of, text_of, tool_call_ids, tool_calls_of
from ctxlint.compact import CompactIntMap
from ctxlint.profiles.lookup import summary_message
from ctxlint.rules.base import Rule, Violation

# Shorter texts ("继续", "ok, thanks", "How can I help?") recur across unrelated sessions.
MIN_TEXT = 40


def content_fingerprint(message: dict) -> int | None:
    """Content identity across sessions: text and call arguments, never ids (providers reuse them)."""
    role = role_of(message)
    if role not in ("user", "assistant", "tool"):
        return None
    text = text_of(message.get("content"))
    if role == "assistant":  # replies come back with think blocks stripped or spacing changed
        text = comparable_text(text)
    calls = [(c.get("function") or {}).get("arguments") for c in tool_calls_of(message) if isinstance(c.get("function"), dict)]
    if len(text) + sum(len(a) for a in calls if isinstance(a, str)) < MIN_TEXT:
        return None
    return hash64(role, text, [str(a) for a in calls])


def _results_to_calls_made(messages: list[dict], start: int) -> set[int]:
    """Indexes, from `start` on, of the tool messages that answer a call of the assistant
    message before them: a tool returns the same output to the same call in any session (a
    file read, a lookup), so such a result is the call's, leaked or not with it."""
    results: set[int] = set()
    calls: set[str] = set()
    begin = start
    while begin > 0 and role_of(messages[begin - 1]) == "tool":
        begin -= 1  # back to the call turn the results reaching `start` follow
    for index in range(max(0, begin - 1), len(messages)):
        message = messages[index]
        role = role_of(message)
        if role == "assistant":
            calls = set(tool_call_ids(message))
        elif role == "tool":
            if index >= start and message.get("tool_call_id") in calls:
                results.add(index)
        else:
            calls = set()
    return results


class CrossSessionLeak(Rule):
    """
    ## What it does
    Flags a request of session B that carries another session's messages: what session A
    said first (its new input, or its model's logged reply) appears in B's history without
    being B's own new input — inserted into history B had already sent, or A's exchange
    appended before B's new message (a history list shared across users). What A only had
    in its history is no one's to leak: few-shot examples an app puts before every
    conversation's history, picked anew for each request, are in many sessions' histories.
    Only texts of 40 characters or more are compared,
    and a session's own first request and newest input are never judged, nor its last
    question carried on in the form the app stores it (sent wrapped in retrieved context,
    kept as the user's words): the same prompt sent independently by many sessions (test
    suites, benchmarks, a FAQ question) is not a leak.
    Neither is the model's reply when the log has no responses (the assistant message
    right after what the request kept of the previous one): two sessions' models may
    make the same tool call. Nor is a tool result that answers a call of the assistant
    message right before it: a tool returns the same output to the same call in any
    session (a file read, a lookup), even where the log lacks the request that sent the
    result first. Nor is a summary the app put in place of the history (one that says it is
    one, or an agent's compaction summary): made from the session's own words, it reads
    alike in sessions that said alike. Without a session key, sessions are told apart by their
    history, and two runs of one scripted task can go alike for turns (a benchmark's
    trials at temperature 0): a request that carries the other run's messages where that
    run put them, with nothing of its own after them, is that history going on, not a
    leak. One that carries both conversations is still flagged.

    ## Why is this bad?
    One user's conversation in another user's context is a privacy incident and a
    correctness bug: the model answers B with A's constraints and data.

    ## Example
    Session A sends "My passport number is X1234567, book me to Lima". Session B's third
    request carries that message in its history.

    Use instead: keep one history object per session key; never share a mutable list
    between requests of different users.
    """

    code = "CTX023"
    name = "cross-session-leak"
    severity = "error"
    scope = "log"
    remediation = "Keep one history per session; never share a mutable message list between sessions or users."

    def start_shard(self) -> "LeakShard":
        return LeakShard()

    def facts(self, ctx) -> "TurnFacts":
        """What judging the turn against the rest of the log needs, read from the turn alone."""
        messages = ctx.messages
        start = ctx.unchanged(self)  # the previous request's messages are this session's already
        newest = len(messages)
        while newest > start and role_of(messages[newest - 1]) != "assistant":
            newest -= 1
        reply, kept = self._unlogged_reply(ctx), self._kept_in_other_form(ctx)
        # Sessions told apart by their history alone: where each message stands, so that a
        # request going on from the very request that said it is not judged a leak
        at = _place_in(ctx.turn.identities) if not ctx.session.explicit_key else _no_place
        sent = []
        results = _results_to_calls_made(messages, start)
        for index in range(start, len(messages)):
            fingerprint = content_fingerprint(messages[index])
            if fingerprint is not None:
                # said by this session: its newest input, or its model's reply where the log has no responses
                # a summary put in place of the history is made from the session's own words (alike where sessions said alike)
                judged = index < newest and index != reply and index != kept and index not in results and not (
                    role_of(messages[index]) == "user" and summary_message(messages[index]))
                sent.append((index, fingerprint, messages[index] if judged else None, index >= newest or index == reply, at(index)))
        response = ctx.turn.response_message
        returned = content_fingerprint(response) if response is not None else None
        return TurnFacts(ctx.session.id, ctx.turn.number, sent, returned, at(len(messages)) if returned is not None else 0)

    @staticmethod
    def _unlogged_reply(ctx) -> int | None:
        """Where this request carries the previous request's reply, when that reply was not
        logged: the assistant message right after what it kept of the previous request, past
        the results of that request's calls where it sends them anew (in another form than
        before: a result it had sent as a user message, or under another id). The model may
        well have said the same as in another session (the same tool call)."""
        previous = ctx.previous
        if previous is None or previous.response_message is not None:
            return None
        slot, messages = ctx.transition.new_from, ctx.messages
        while slot < len(messages) and role_of(messages[slot]) == "tool":
            slot += 1
        return slot if slot < len(messages) and role_of(messages[slot]) == "assistant" else None

    @staticmethod
    def _kept_in_other_form(ctx) -> int | None:
        """Where this request carries the previous request's newest user message in the form
        the app stores it (history.stored_user_message): the session's own words, which
        another session may have asked alike (the same FAQ question)."""
        stored = ctx.transition.stored if ctx.previous is not None else None
        return stored[1] if stored is not None else None

    def read(self, shard: "LeakShard", facts: "TurnFacts", rank: int, where) -> None:
        session = facts.session
        own = shard.own
        place = None
        # the last message the session had before: one carried after another session's
        # message means that message was put into this session's own history
        had = max((index for index, fingerprint, judged, _, _ in facts.sent if judged is not None and hash((session, fingerprint)) in own), default=-1)
        for index, fingerprint, judged, _, at in facts.sent:
            # The session's own newest input, or any message of its first request, is never
            # judged; a message it already had is its own.
            if facts.turn > 1 and judged is not None and hash((session, fingerprint)) not in own:
                place = place or where()
                shard.suspects.append((rank, place, index, fingerprint, at if index > had else 0, excerpt(text_of(judged.get("content")), 60)))
        # what the session said first: its newest input, its model's reply (not what it only
        # had in its history, such as few-shot examples many sessions are sent)
        returned = [(facts.returned, facts.returned_at)] if facts.returned else []
        said = [(fingerprint, at) for _, fingerprint, _, its_own, at in facts.sent if its_own] + returned
        for fingerprint in [fingerprint for _, fingerprint, _, _, _ in facts.sent] + [fingerprint for fingerprint, _ in returned]:  # all it had is its own
            own.setdefault(hash((session, fingerprint)), 0)
        for fingerprint, at in said:
            if fingerprint not in shard.first:
                shard.first.setdefault(fingerprint, rank)
                if at:
                    shard.said_at.setdefault(fingerprint, at)
        if said:
            shard.carried_by(rank, session)

    def judge_shards(self, shards: list["LeakShard"]) -> Iterable[tuple[Any, Violation]]:
        for rank, place, index, fingerprint, at, quoted in sorted((s for shard in shards for s in shard.suspects), key=lambda suspect: suspect[0]):
            seen, said_at = min(((r, shard.said_at.get(fingerprint)) for shard in shards if (r := shard.first.get(fingerprint)) is not None), default=(None, None))
            # A message the session never had, carried by an earlier request: of another
            # session, since this one had none of it. Unless, where sessions are told apart
            # by their history alone, it stands where the request that said it put it, after
            # the same message, with nothing of this session's after it: that request's
            # conversation going on (two conversations that went alike so far, as runs of
            # one scripted task do, are not told apart by their history).
            if seen is not None and seen < rank and not (at and at == said_at):
                origin = next(session for shard in shards if (session := shard.session_at(seen)) is not None)
                yield place, Violation(
                    f"message {place.label(index)} was first sent by session {origin}, and this session never had it",
                    key=origin, message_index=index, pointer=f"/messages/{index}",
                    evidence={"first_seen_in_session": origin, "excerpt": quoted},
                )


class LeakShard:
    """What one process keeps of the requests it read: which fingerprints each session
    had (hashes of session and fingerprint); the rank of the first request that said
    each fingerprint (as its newest input or its reply), and the session of every request
    that said any (ranks ascending); and the suspects: messages a session carried before
    it had them, leaks if another session's earlier request said them. Fingerprints and ranks are kept as
    64-bit ints in compact maps, 16 bytes an entry, since they span the whole log. A
    shard sent to the parent leaves the sessions' fingerprints behind: judging needs only
    the rest."""

    __slots__ = ("own", "first", "said_at", "ranks", "sessions", "suspects")

    def __init__(self) -> None:
        self.own = CompactIntMap()  # hash((session, fingerprint)) -> 0; the hash is this process's, never sent
        self.first = CompactIntMap()  # fingerprint -> rank
        self.said_at = CompactIntMap()  # fingerprint -> where the first request that said it put it (sessions without a key)
        self.ranks = array("q")
        self.sessions: list[str] = []
        self.suspects: list[tuple[int, Any, int, int, Quoted]] = []

    def carried_by(self, rank: int, session: str) -> None:
        at = len(self.ranks)
        if at and self.ranks[-1] > rank:  # held sessions are read in line order, batch inputs among the rest
            at = bisect_left(self.ranks, rank)
        self.ranks.insert(at, rank)
        self.sessions.insert(at, session)

    def session_at(self, rank: int) -> str | None:
        """The session of the request at this rank, if this shard read it."""
        at = bisect_left(self.ranks, rank)
        return self.sessions[at] if at < len(self.ranks) and self.ranks[at] == rank else None

    def __getstate__(self) -> tuple:
        return self.first, self.said_at, self.ranks, self.sessions, self.suspects

    def __setstate__(self, state: tuple) -> None:
        self.own = CompactIntMap()
        self.first, self.said_at, self.ranks, self.sessions, self.suspects = state


@dataclass(slots=True)
class TurnFacts:
    session: str
    turn: int
    # (message index, fingerprint, the message if it is judged, whether the session said it:
    # its newest input, its unlogged reply, where it stands: _place_in)
    sent: list[tuple[int, int, dict[str, Any] | None, bool, int]]
    returned: int | None  # fingerprint of the logged response
    returned_at: int  # where the next request puts it


def _place_in(identities: list[tuple]) -> Any:
    """Where a message stands in a request: its index and the message before it, as a
    nonzero int the same in every process (0: no place kept)."""
    return lambda index: hash64(index, list(identities[index - 1]) if index else None) or 1


def _no_place(index: int) -> int:
    return 0
