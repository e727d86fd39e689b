from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Iterable

from ctxlint.chat import CJK_RUN, excerpt, greeting_only, message_identity, role_of, text_of
from ctxlint.profiles.lookup import compaction_at
from ctxlint.request_terms import declared_tool_names
from ctxlint.rules.base import Rule, Violation
from ctxlint.sessions.model import STEERING_ROLES, opening_kind, prompts_opening

# What agents legitimately rewrite inside an unchanged prompt: clocks, dates and ids in any
# message; in the system prompt also counters ("step 3 of 10", "4 tools loaded").
_CLOCKS_AND_IDS = (
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}/\d{1,2}/\d{2,4},?"
    r"|\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_VOLATILE = {"user": re.compile(_CLOCKS_AND_IDS), "system": re.compile(_CLOCKS_AND_IDS + r"|\d+(?:[.,]\d+)*")}
_SPACE = re.compile(r"\s+")
# A summary restates a constraint in other words but keeps its content words: numbers,
# names, nouns. Han, kana and hangul are read as character pairs, other scripts as words.
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]{3,}")
_FUNCTION_WORDS = frozenset(
    "the and for with from that this these those you your yours are was were been being have has had "
    "will would shall should can could may might must into onto over about than then them they their "
    "there here what which who whom whose when where why how all any some such only also just very "
    "please want wants need needs like our ours its it's him her his she".split()
)


@lru_cache(maxsize=4096)
def constraint_lines(text: str, kind: str) -> frozenset[str]:
    """The message's lines with volatile values masked (as a system prompt's or a user
    message's, by `kind`) and whitespace folded."""
    volatile = _VOLATILE[kind]
    lines = set()
    for line in text.splitlines():
        folded = _SPACE.sub(" ", volatile.sub("#", line)).strip()
        if folded:
            lines.add(folded)
    return frozenset(lines)


@lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """The words that carry a text's content (lowercased, function words left out)."""
    text = text.lower()
    words = {word for word in _WORD.findall(CJK_RUN.sub(" ", text)) if word not in _FUNCTION_WORDS}
    for run in CJK_RUN.findall(text):
        words.update(run[i:i + 2] for i in range(max(len(run) - 1, 1)))
    return frozenset(words)


# A message put where a request cut its history is a summary of it when it restates half
# the content words of what was cut (its user messages and the reply it left out), up to
# this many: a long history is summarized, not copied
SUMMARY_WORDS = 10


def restates_cut_history(ctx, index: int) -> bool:
    """Whether message `index`, which the request put where it cut the previous request's
    history, restates what it cut (a summary that folds the history in)."""
    previous, transition = ctx.previous, ctx.transition
    if previous is None or transition is None or not previous.record.messages:
        return False
    texts = [text_of(previous.record.messages[i].get("content")) for i in transition.left_out(previous.identities)
             if role_of(previous.record.messages[i]) in ("user", "assistant")]
    reply = previous.response_message
    if reply is not None and transition.response_position is None:
        texts.append(text_of(reply.get("content")))
    summary = text_of(ctx.messages[index].get("content"))
    # a few words that happen to repeat the cut ones are a message, not a summary of them
    return len(content_words(summary)) >= SUMMARY_WORDS // 2 and restates(summary, texts)


def restates(summary: str, texts: list[str]) -> bool:
    """Whether a summary keeps half the content words of the texts it stands for (or
    SUMMARY_WORDS of them, for a long history)."""
    cut = content_words("\n".join(texts))
    return bool(cut) and len(cut & content_words(summary)) >= min(SUMMARY_WORDS, (len(cut) + 1) // 2)


def _lost_lines(ctx, key: str, kept: tuple) -> tuple[frozenset[str], frozenset[str]]:
    """(lost, wanted): the lines of what the session must keep (its first system or user
    message, or what took its place) that this request no longer sends, of all its lines."""
    index, original = kept[:2]
    if index < len(ctx.messages) and ctx.messages[index] is original:
        return frozenset(), frozenset()  # still sent where it was: the common case, decided without reading
    # what must be kept is a system prompt, a user message or a summary that restated one
    # (sent in any role); a system prompt sent as developer, or back, is kept
    roles = STEERING_ROLES if opening_kind(role_of(original)) == "system" else (role_of(original),)
    original_text = text_of(original.get("content"))
    sent = [text_of(m.get("content")) for m in ctx.messages if role_of(m) in roles]
    if original_text in sent:
        return frozenset(), frozenset()  # sent verbatim: the common case, decided without masking
    wanted = constraint_lines(original_text, key)
    present: set[str] = set()
    for text in sent:
        present |= constraint_lines(text, key)
    return wanted - present, wanted


def _examples_swapped(ctx) -> bool:
    """The session's first request sent an exchange before its own question (examples), and
    this request puts another exchange (a user message and an assistant message, both new)
    where it cut the first, while the question is still sent: few-shot examples picked
    anew for each request, not a history cut."""
    question = ctx.session.opening.get("question")
    if question is None or ctx.transition is None:
        return False
    put = set(ctx.transition.put_in(ctx.messages))
    if not any(index + 1 in put and role_of(ctx.messages[index]) == "user" and role_of(ctx.messages[index + 1]) == "assistant" for index in put):
        return False
    return not _lost_lines(ctx, "user", question)[0]


def _opening_line(text: str) -> str | None:
    """A prompt's first line, masked as constraint_lines masks it: what it opens with."""
    return next((folded for line in text.splitlines() if (folded := _SPACE.sub(" ", _VOLATILE["system"].sub("#", line)).strip())), None)


def _rewritten(ctx, original_text: str) -> bool:
    """The prompt is still sent, rewritten: a system message of this request opens with
    the line the original opened with (its instructions) and says something the original
    did not in place of what went, as apps refresh a retrieved context, a memory or a
    state section every turn. A prompt that only lost lines was cut, not rewritten."""
    opening = _opening_line(original_text)
    if opening is None:
        return False
    had = constraint_lines(original_text, "system")
    for message in ctx.messages:
        text = text_of(message.get("content"))
        if role_of(message) in STEERING_ROLES and _opening_line(text) == opening and constraint_lines(text, "system") - had:
            return True
    return False


def _handed_over(ctx, original_text: str) -> bool:
    """The system prompt was replaced, not trimmed away: this request carries every message
    of the conversation the previous one had, and either another system prompt (one that
    says something the first did not: not the first cut short) or, with none, other tools
    (another agent's configuration, as frameworks hand a run over)."""
    previous = ctx.previous
    if ctx.transition.left_out(previous.identities):
        return False  # the history was trimmed too
    prompts = [text_of(ctx.messages[index].get("content")) for index in range(prompts_opening(ctx.messages))]
    if prompts:
        first = constraint_lines(original_text, "system")
        return any(constraint_lines(prompt, "system") - first for prompt in prompts)
    return declared_tool_names(previous.record.request) != declared_tool_names(ctx.request)


class LostFirstTurnConstraint(Rule):
    """
    ## What it does
    Flags a request that no longer carries what the session's first system message (or
    `developer` message, the system prompt of OpenAI's newer models) or first user message
    said, when both were present in the session's first request. Both cut by one request
    are one defect, one finding; so is the first user message cut while the system prompt a
    request before it cut stays cut (a keep-last-N window sliding past them one at a time).
    The replies cut with the whole history (the newest message sent alone) are this defect
    too, not CTX016's.
    A message counts as kept when every line of it is still there, in a message of the
    same role, after masking what agents legitimately refresh every turn (times, dates,
    counters, ids): a `Current time: …` line rewritten each turn is not a loss, and
    neither is a prompt that only grew. A first user message that only greets ("Hi!",
    "你好") holds no constraint: the first one after it that says something is kept
    instead, from the request that sends it (a sliding window that keeps the system prompt
    and drops the greeting loses nothing).

    A message counts as restated when the request that stops sending it puts a summary in
    its place (a message inserted into the history, not new input) that keeps most of the
    content words of what was cut (default 60%, option `restated_share`): numbers, names,
    nouns; Chinese, Japanese and Korean text by character pairs. From then on that summary
    is what the session must keep sending. A summary that keeps too little ("the user
    wants a flight") is flagged like the cut itself. An edit is not a cut either: when the
    user corrects the first message and resends it (the request is the history up to that
    message, then its new text), the corrected message is what must be kept from then on.
    Nor is a handoff: a request that carries the whole conversation the previous one had,
    with another system prompt in place of the first one, or with none and other tools
    (another agent took the run over); nor examples swapped: when the session's first
    request sent an exchange before its own question (few-shot examples) and a later
    request puts another exchange in its place (examples picked anew for each request)
    while still sending that question, the question is what must be kept from then on
    (a history resumed in the first request whose oldest exchange is later replaced by a
    question-and-answer pair, still sending the question after it, reads the same); nor
    a question the app sent wrapped and keeps as the user's words (retrieved passages
    around the newest message, an `<environment_details>` block): the form it keeps is
    what must be kept. Nor a prompt rewritten: a system message that still
    opens with the line the first one opened with and carries new lines in place of the
    ones that went (apps refresh a retrieved context, a memory or a state section every
    turn, trimmed history or not). The prompt that took over, or the rewritten one, is
    then what must be kept; a prompt cut short, with nothing new, is a loss. Once the
    provider compacts the conversation (Anthropic's `compaction` block, a Responses API
    `compaction` item), or an agent that compacts it itself (Claude Code, Codex CLI,
    LangChain's SummarizationMiddleware, Aider, Gemini CLI: a summary message that opens
    with the agent's continuation line, listed in the model profiles), that summary stands for the
    messages that came before, and the app may leave them out; the system prompt is not compacted, and must still be sent. A system
    prompt cut short while the whole conversation is carried is a loss too: another
    agent taking the run over sends a prompt that says something new.

    ## Why is this bad?
    The first system and user messages hold the user's constraints: the persona, the
    budget, "never book red-eye flights". Keep-last-N trimming and sliding windows cut
    them first, because they are oldest. The model then forgets the constraint at
    exactly this turn, and no error is raised anywhere.

    ## Example
    Turn 1 sends `[system: "Answer in French.", user: "Plan a trip, budget 500€"]`; turn 9
    sends only the last six messages.

    Use instead: trim from the middle; always keep the first system message and the first
    user message, or replace them with a summary that restates their constraints
    (`"Summary: trip to Rome in May, budget 500€, answer in French."`).
    """

    code = "CTX008"
    name = "lost-first-turn-constraint"
    severity = "error"
    needs = ("chain",)
    scope = "session"
    options = {"restated_share": 0.6}
    remediation = "Trim history from the middle: always resend the first system message and the first user message, or a summary that restates them."

    def check(self, ctx) -> Iterable[Violation]:
        lost = list(self._losses(ctx))
        if len(lost) > 1:  # one trim cut both: one defect
            first, *others = lost
            plain = all(loss.message.endswith(" is no longer sent") for loss in lost)
            parts = [loss.message.removesuffix(" is no longer sent").removeprefix("the session's ") if plain else loss.message for loss in others]
            message = (f"{first.message.removesuffix(' is no longer sent')} and {' and '.join(parts)} are no longer sent" if plain
                       else "; ".join([first.message, *parts]))
            lost = [replace(first, message=message, covers=tuple(loss.key for loss in others),
                            evidence={**first.evidence, "also_lost": [loss.evidence for loss in others]})]
        yield from lost

    def _losses(self, ctx) -> Iterable[Violation]:
        """Each first message (system, user) this request no longer carries."""
        if ctx.turn.number == 1:
            return
        self._after_greeting(ctx)
        for key in ("system", "user"):
            kept = ctx.session.opening.get(key)
            if kept is None:
                continue
            lost, wanted = _lost_lines(ctx, key, kept)
            if lost and key == "user" and _examples_swapped(ctx):
                # the session opened with examples, and this request puts others in their place:
                # its own first question, still sent, is what it must keep from now on
                kept = ctx.session.opening["user"] = ctx.session.opening.pop("question")
                lost, wanted = _lost_lines(ctx, key, kept)
            if not lost:
                continue
            index, original, since, label, index_label = kept
            original_text = text_of(original.get("content"))
            if key == "user" and compaction_at(ctx.messages) is not None:
                del ctx.session.opening[key]
                continue  # the provider compacted the conversation: its summary stands for what came before
            subject = f"the session's first {role_of(original)} message"
            if key == "system" and (_handed_over(ctx, original_text) or _rewritten(ctx, original_text)):
                self._take_over(ctx)
                continue  # another agent's prompt, or none, over the same conversation (a handoff), or the prompt rewritten
            transition = ctx.transition
            replaced = None
            if transition.edited_at is not None and message_identity(original) == ctx.previous.identities[transition.edited_at]:
                replaced = transition.edited_at, "as edited"  # the user corrected it
            elif transition.stored is not None and message_identity(original) == ctx.previous.identities[transition.stored[0]]:
                replaced = transition.stored[1], "as the app stored it"  # sent wrapped, kept as the user's words
            if replaced is not None:
                at, how = replaced
                label = f"{subject}, {how} at turn {ctx.turn.number} (message {ctx.label(at)})"
                ctx.session.opening[key] = (at, ctx.messages[at], ctx.turn.number, label, ctx.label(at))
                continue  # what the session must keep now
            what = label or f"{subject} (turn 1, message {index_label})"
            cut_words = content_words("\n".join(sorted(lost)))
            summary, restated = self._best_summary(ctx, cut_words)
            if summary is not None and restated >= ctx.option(self, "restated_share") * len(cut_words):
                label = f"the summary that restated {subject} (turn {ctx.turn.number}, message {ctx.label(summary)})"
                ctx.session.opening[key] = (summary, ctx.messages[summary], ctx.turn.number, label, ctx.label(summary))
                continue
            if not restated:
                summary = None  # what the request put in says none of it: no summary of it
            evidence = {"first_request_line": ctx.session.first_line, "lost_line": excerpt(sorted(lost)[0], 80)}
            evidence.update({"first_turn_index": index} if since == 1 else {"since_turn": since, "since_index": index})
            if summary is None:
                message = f"{what} is no longer sent" if len(lost) == len(wanted) else f"{what} lost {len(lost)} of its {len(wanted)} lines"
            else:
                message = f"{what} is cut, and the summary put in its place (message {ctx.label(summary)}) restates {restated} of its {len(cut_words)} content words"
                evidence["summary_index"] = summary
            yield Violation(message, key=key, message_index=summary, pointer=None if summary is None else f"/messages/{summary}", evidence=evidence)

    @staticmethod
    def _after_greeting(ctx) -> None:
        """A session that opened with a greeting alone keeps, from the request that first
        sends one, the first user message that says something, while the greeting still
        stands before it (a history trimmed before the user said anything lost nothing)."""
        waiting = ctx.session.greeting
        if waiting is None or "user" in ctx.session.opening:
            return
        index, identity = waiting
        if index >= len(ctx.turn.identities) or ctx.turn.identities[index] != identity:
            ctx.session.greeting = None
            return
        for later in range(index + 1, len(ctx.messages)):
            message = ctx.messages[later]
            if role_of(message) == "user" and not greeting_only(text_of(message.get("content"))):
                label = f"the session's first user message after its greeting (turn {ctx.turn.number}, message {ctx.label(later)})"
                ctx.session.opening["user"] = (later, message, ctx.turn.number, label, ctx.label(later))
                ctx.session.greeting = None
                return

    @staticmethod
    def _take_over(ctx) -> None:
        """From a handoff on, the prompt the session must keep is the one that took over."""
        if not prompts_opening(ctx.messages):
            del ctx.session.opening["system"]
            return
        index = 0
        label = f"the system message that took over at turn {ctx.turn.number} (message {ctx.label(index)})"
        ctx.session.opening["system"] = (index, ctx.messages[index], ctx.turn.number, label, ctx.label(index))

    @staticmethod
    def _best_summary(ctx, cut_words: frozenset[str]) -> tuple[int | None, int]:
        """Of the messages this request put into its history (Transition.put_in), the one
        that restates most of the cut words."""
        transition = ctx.transition
        if transition is None or not cut_words:
            return None, 0
        best, best_count = None, -1
        for index in transition.put_in(ctx.messages):
            count = len(cut_words & content_words(text_of(ctx.messages[index].get("content"))))
            if count > best_count:
                best, best_count = index, count
        return best, max(best_count, 0)
