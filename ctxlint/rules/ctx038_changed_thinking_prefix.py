from __future__ import annotations

import re
from typing import Any, Iterable

from ctxlint.chat import dotted, excerpt
from ctxlint.ingest.record import Record
from ctxlint.rules.base import Rule, Violation
from ctxlint.sessions.thinking_prefix import ThinkingPrefix

# The API's refusal of a block whose prefix changed; the message index it names is the body's.
BOUND_ELSEWHERE = re.compile(r"messages\.(\d+)\.content\.\d+: Invalid `signature` in `thinking` block\. The block is bound to a different conversation")
BODY_MESSAGE = re.compile(r"messages\.(\d+)")
# input_transformations entries about a thinking block that failed a binding check: dropped,
# or (where the check is not enforced) shown to the model all the same
LISTED_BLOCKS = ("thinking_dropped", "thinking_mismatch_allowed")
LET_THROUGH = "thinking_mismatch_allowed"
PREFIX_REASON = "prefix"  # the prefix check's reasons (prefix_binding_mismatch), not the model check's
MISMATCH_SETTING = "thinking.block_binding.prefix_mismatch_behavior"


class ChangedThinkingPrefix(Rule):
    """
    ## What it does
    Flags a request to a model that binds thinking blocks to what came before them (Claude
    Fable 5.1 and newer, Mythos 5.1 and newer, Opus 5.5, Sonnet 5.5, Haiku 5.5: the profile
    data's `thinking_binding`) that sends back a thinking block after changing what came
    before it since the block was produced: the system prompt, the set of tools, or a
    message before the block (one edited, left out or put in), or a thinking block between
    two others left out. The request is compared with the one before it in the session,
    whose reply produced the block or which sent it back already; a reply logged is read for
    the blocks it produced. Not read as a change: what the API does not compare
    (`cache_control` breakpoints, thinking blocks left out from the start of the history,
    the history before a compaction block, the billing header line Claude Code opens
    `system` with, new at every request: the profile data's `system_lines_apart`), what
    may be spelled otherwise in a log than on the wire (text as a string or as text blocks,
    whitespace, tool call arguments as written, the order of the tools), and system
    messages sent after the conversation started (an API may scope one to a turn: their
    edits are left unjudged). A logged reply that says what the API did is believed: an
    `input_transformations` list with no such block spares the request, and a block the API
    reports it dropped or refused (`thinking_dropped` for `prefix_binding_mismatch`, or the
    400 "bound to a different conversation") is reported when ctxlint saw no change. Where
    the API let the block through (`thinking_mismatch_allowed`, on an account the check is
    not enforced for), the finding is a warning. Each kind of change is reported once per
    session, where it starts: a system prompt rebuilt at every request is one finding.

    ## Why is this bad?
    On these models a thinking block is valid only under the exact prefix it was produced
    under; after a change, that block and every later one fail the check. The API then
    refuses the request (HTTP 400, the default for accounts created from 2026-08-31 and for
    any request that sets `prefix_mismatch_behavior` to `"error"`), or with
    `"drop_block"` drops the blocks, and the model goes on without the reasoning it did on
    the turns before: it "forgets" its plan. Typical causes are a date or a mode flag in
    the system prompt, tools added when an MCP server connects, history trimmed or
    summarized on the client, and a reminder put into an earlier message and taken out.

    ## Example
    Turn 1 sends `"system": "You are a helpful assistant."` to `claude-fable-5-1`; turn 2
    sends the reply back with its thinking block and
    `"system": "You are a helpful assistant. Today is 2026-09-01."`.

    Use instead: keep `system` and `tools` as first sent for the whole conversation and only
    append: new instructions or the date go into a new message at the end (a `system`
    message there, on models that take one), tools are added the way the API offers
    mid-conversation; to shorten the history, leave out thinking blocks from its start or let
    the API compact it.
    """

    code = "CTX038"
    name = "changed-thinking-prefix"
    severity = "error"
    scope = "session"
    needs = ("chain", "reasoning")
    remediation = ("Keep everything before a thinking block as it was sent when the block was produced: system and tools built "
                   "once per conversation, updates appended as new messages, no earlier message edited, trimmed or reordered.")

    def check(self, ctx) -> Iterable[Violation]:
        now: ThinkingPrefix | None = ctx.thinking_prefix
        if now is None or not now.blocks or ctx.side_request:
            return
        record = ctx.turn.record
        flagged = flagged_by_api(record)
        if flagged == ():
            return  # the API checked the blocks it was sent, and none failed
        before: ThinkingPrefix | None = ctx.session.thinking_prefix
        change = first_change(before, now, ctx.label) if before is not None and before.model == now.model else None
        let_through = bool(flagged) and all(said.startswith(LET_THROUGH) for _, said in flagged)
        if change is not None:
            kind, index, detail, edited = change
            evidence: dict[str, Any] = {"changed": kind, "model": now.model, "blocks_after": sum(at >= index for _, at in now.blocks)}
            if edited is not None:  # the body's own index, as a finding's message index is
                evidence["edited_message"] = record.source_map.index_of(edited) if record.source_map is not None else edited
        else:
            index = next((at for at, _ in flagged or () if at is not None and _new_block_at(before, now, at)), None)
            if index is None:
                return
            kind, detail, evidence = "api", "the API reports that what came before it changed", {"changed": None, "model": now.model}
        if flagged:
            evidence["reported_by_api"] = [said for _, said in flagged]
        behaviour = dotted(ctx.request, MISMATCH_SETTING)
        if behaviour is not None:
            evidence["prefix_mismatch_behavior"] = behaviour
        yield Violation(
            f"assistant message {ctx.label(index)} sends back a thinking block after {detail}: {now.model} binds thinking blocks to "
            f"the system prompt, tools and messages before them, so {_outcome(flagged, behaviour)}",
            key=(kind,), message_index=index, pointer=f"/messages/{index}", evidence=evidence,
            severity="warning" if let_through else None,
        )


def first_change(before: ThinkingPrefix, now: ThinkingPrefix, label) -> tuple[str, int, str, int | None] | None:
    """What changed between the request before and this one for the first block of this
    request whose prefix differs from the one it had there (or was produced under, by that
    request's reply), or whose chain of earlier blocks lost a block in its middle: (the kind
    of change, which is the finding's key: each is one way an app builds its requests; the
    message of that block; what to say; the message edited or put in, where one was); else None."""
    place = {seal: index for seal, index in before.blocks}
    order = list(dict.fromkeys([*(seal for seal, _ in before.blocks), *(before.produced or ())]))
    rank = {seal: position for position, seal in enumerate(order)}
    end = len(before.messages)
    # with no reply logged, a new block right after what the request before sent is its
    # reply, where both requests open the same conversation (not another agent's under the key)
    replied_here = before.produced is None and before.opening() == now.opening()
    previous_rank = None
    for seal, index in now.blocks:
        if seal in place:
            then = place[seal]
        elif seal in (before.produced or ()) or (replied_here and index == end):
            then = end  # the reply to the request before: its prefix is all that request sent
        else:
            previous_rank = None  # a block whose origin the log does not show
            continue
        difference = _difference(before, then, now, index, label)
        if difference is not None:
            return difference[0], index, difference[1], difference[2]
        position = rank.get(seal, len(order))
        if previous_rank is not None and position != previous_rank + 1:
            return "chain", index, "a thinking block that stood before it was left out of the middle of the history", None
        previous_rank = position
    return None


def _difference(before: ThinkingPrefix, then: int, now: ThinkingPrefix, index: int, label) -> tuple[str, str, int | None] | None:
    """What differs between a block's prefix in the request before (up to message `then`)
    and in this one (up to message `index`), as (kind, what to say, the message edited or
    put in, where one was); else None."""
    if before.system != now.system:
        return "system", "the system prompt changed since it was produced", None
    if before.tools != now.tools:
        return "tools", f"the tools changed since it was produced ({_tools_change(before.tools, now.tools)})", None
    old, new = before.prefix(then), now.prefix(index)
    old_digests, new_digests = [digest for _, digest in old], [digest for _, digest in new]
    if old_digests == new_digests:
        return None
    if len(new_digests) < len(old_digests) and new_digests == old_digests[len(old_digests) - len(new_digests):]:
        if now.compacted_before(index):
            return None  # the server's compaction stands for the history left out before it
        return "history", f"{len(old_digests) - len(new_digests)} message(s) before it were cut from the start of the history", None
    if len(new_digests) < len(old_digests):
        return "history", f"{len(old_digests) - len(new_digests)} message(s) before it were left out of the history", None
    first = next((k for k, (a, b) in enumerate(zip(old_digests, new_digests)) if a != b), len(old_digests))
    at = new[first][0] if first < len(new) else index
    if len(new_digests) > len(old_digests) and new_digests[first + 1:] == old_digests[first:]:
        return "history", f"message {label(at)} was put in before it", at
    return "history", f"message {label(at)} before it was changed", at


def _tools_change(before: tuple[tuple[str, str], ...], now: tuple[tuple[str, str], ...]) -> str:
    """The tools added, left out and changed, by name."""
    old, new = dict(before), dict(now)
    said = [f"{verb} {', '.join(sorted(names))}" for verb, names in (
        ("added", new.keys() - old.keys()), ("left out", old.keys() - new.keys()),
        ("changed", {name for name in old.keys() & new.keys() if old[name] != new[name]})) if names]
    return "; ".join(said) or "reordered"


def flagged_by_api(record: Record) -> tuple[tuple[int | None, str], ...] | None:
    """(message index, what the API said) of each thinking block the logged reply says
    failed the prefix check: the 400 refusal, or the reply's input_transformations; () where
    the reply lists what it changed and that is none of them; None where it does not say."""
    response = record.response
    if response is None:
        return None
    if response.failed:
        refused = BOUND_ELSEWHERE.search(response.error_text)
        return ((_normalized_index(record, int(refused.group(1))), f"HTTP 400: {excerpt(refused.group(0), 160)}"),) if refused else None
    if response.input_transformations is None:
        return None
    flagged = []
    for change in response.input_transformations:
        reason = str(change.get("reason") or "")
        if change.get("type") in LISTED_BLOCKS and reason.startswith(PREFIX_REASON):
            body_message = BODY_MESSAGE.match(str(change.get("path") or ""))
            at = _normalized_index(record, int(body_message.group(1))) if body_message else None
            flagged.append((at, f"{change['type']} at {change.get('path')} ({reason})"))
    return tuple(flagged)


def _normalized_index(record: Record, body_index: int) -> int | None:
    """The normalized message that is the body's message `body_index`."""
    if record.source_map is None:
        return body_index
    return next((index for index, origin in enumerate(record.source_map.origins) if origin.index == body_index), None)


def _new_block_at(before: ThinkingPrefix | None, now: ThinkingPrefix, index: int) -> bool:
    """Whether message `index` sends a thinking block the request before did not send: one
    the API flags that was sent before was flagged (or passed) there already."""
    sent_before = {seal for seal, _ in before.blocks} if before is not None else set()
    return any(at == index and seal not in sent_before for seal, at in now.blocks)


def _outcome(flagged: tuple[tuple[int | None, str], ...] | None, behaviour: Any) -> str:
    """What the API does with the block, as the reply says or the request's setting implies."""
    if flagged:
        said = "; ".join(dict.fromkeys(said for _, said in flagged))
        if all(said.startswith(LET_THROUGH) for _, said in flagged):
            return f"it fails the check: the API let it through on this account ({said}) and refuses it where the check is enforced"
        if said.startswith("HTTP"):
            return f"the API refused the request ({said})"
        return f"the API dropped it ({said}): the model went on without that reasoning"
    if behaviour == "drop_block":
        return "the API drops it and every later thinking block (prefix_mismatch_behavior drop_block): the model loses that reasoning"
    return ("the API refuses the request with HTTP 400 (by default for accounts created from 2026-08-31), or, with "
            "prefix_mismatch_behavior drop_block, drops the block and every later one")
