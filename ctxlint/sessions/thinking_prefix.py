"""What a request shows of the prefix each thinking block it sends back is bound to, on
models that bind them (Claude's preserved thinking): the system prompt, the set of tools and
every message before the block, as digests, and where each block stands. Two consecutive
requests of a session compared say where an app edited what came before a block (CTX038).

A digest reads what the API compares, not how a log spells it: text as the message says it
(a string or text blocks alike), tool calls by id, name and arguments as parsed, and no
`cache_control` (an app moves its cache breakpoints at every request). Thinking blocks are
left out: they are not part of the prefix, and each is bound by the one before it instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxlint.chat import (COMPACTION, SEALED_DETAIL_KEYS, SILENT_PARTS, comparable_text, merged_details, parsed_arguments, role_of,
                          short_hash, text_of, tool_calls_of, without_cache_control)
from ctxlint.ingest.record import Record
from ctxlint.request_terms import tool_name
from ctxlint.sessions.model import STEERING_ROLES, prompts_opening

# where a normalized assistant message keeps signed thinking: blocks kept whole (Anthropic,
# Bedrock Converse), OpenRouter's items, LiteLLM's thinking_blocks
SEALED_REASONING_FIELDS = ("reasoning_details", "thinking_blocks")


@dataclass(frozen=True, slots=True)
class ThinkingPrefix:
    """What one request shows of its thinking blocks' prefixes."""

    model: str
    system: str  # digest of the system prompt the request opens with
    tools: tuple[tuple[str, str], ...]  # (name, digest) of each tool, sorted: the set of tools
    # digest of each message; None for a message outside every prefix (the opening system
    # prompt, counted in `system`, and a system message the conversation went on with: one an
    # API may scope to a turn)
    messages: tuple[str | None, ...]
    compactions: tuple[int, ...]  # messages that carry the server's compaction of what came before
    blocks: tuple[tuple[str, int], ...]  # (digest of its signature, message index) of each thinking block, in order
    produced: tuple[str, ...] | None  # signature digests of the blocks its logged reply carried; None: no reply logged

    def prefix(self, end: int) -> tuple[tuple[int, str], ...]:
        """(index, digest) of the messages before message `end` that are in its prefix: from
        the latest compaction up to it (the API checks from there; a compaction block opens
        the message it is in), else from the start."""
        start = max((index for index in self.compactions if index <= end), default=0)
        return tuple((index, digest) for index, digest in enumerate(self.messages[start:end], start) if digest is not None)

    def opening(self) -> str | None:
        """The digest of the conversation's first message (after the system prompt)."""
        return next((digest for digest in self.messages if digest is not None), None)

    def compacted_before(self, end: int) -> bool:
        """Whether a compaction block stands before message `end`'s thinking (in it or before it)."""
        return any(index <= end for index in self.compactions)


def thinking_prefix(record: Record, previous: ThinkingPrefix | None = None, shared: int = 0,
                    system_lines_apart: tuple[str, ...] = ()) -> ThinkingPrefix:
    """The request's ThinkingPrefix. The digests of its first `shared` messages (the
    previous request's own message objects) are the previous request's; the system prompt's
    lines that open with one of `system_lines_apart` are not part of it."""
    messages = record.messages
    opening = prompts_opening(messages)
    kept = shared if previous is not None else 0
    digests: list[str | None] = list(previous.messages[:kept]) if kept else []
    blocks = [(seal, index) for seal, index in previous.blocks if index < kept] if kept else []
    compactions = [index for index in previous.compactions if index < kept] if kept else []
    for index in range(len(digests), len(messages)):
        message = messages[index]
        if index < opening or role_of(message) in STEERING_ROLES:
            digests.append(None)
            continue
        digests.append(message_digest(message))
        if COMPACTION in message:
            compactions.append(index)
        blocks.extend((seal, index) for seal in block_seals(message))
    response = record.response
    produced = None
    if response is not None:
        produced = tuple(block_seals(response.message)) if response.message is not None and not response.failed else ()
    tools = record.request.get("tools")
    return ThinkingPrefix(
        model=record.model or "",
        system=short_hash([_prompt_text(message, system_lines_apart) for message in messages[:opening]]),
        tools=tuple(sorted((tool_name(tool) or "?", short_hash(without_cache_control(tool))) for tool in tools)) if isinstance(tools, list) else (),
        messages=tuple(digests), compactions=tuple(compactions), blocks=tuple(blocks), produced=produced)


def _prompt_text(message: Any, lines_apart: tuple[str, ...]) -> str | None:
    """A system message's text as the prefix check reads it: without the lines the API reads apart."""
    if type(message) is not dict:
        return None
    text = text_of(message.get("content"))
    if lines_apart and any(opening in text for opening in lines_apart):
        text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(lines_apart))
    return comparable_text(text)


def block_seals(message: dict[str, Any]) -> list[str]:
    """Digests of the signatures (or a redacted block's data) of a message's thinking blocks, in order."""
    seals = []
    for name in SEALED_REASONING_FIELDS:
        items = message.get(name)
        if isinstance(items, list):
            for item in merged_details(items):
                seal = next((item[key] for key in SEALED_DETAIL_KEYS if isinstance(item, dict) and isinstance(item.get(key), str) and item[key]), None)
                if seal is not None:
                    seals.append(short_hash(seal))
    return seals


def message_digest(message: Any) -> str:
    """What the prefix check reads of one message, as a digest (see the module's docs)."""
    if type(message) is not dict:
        return short_hash(message)
    content = message.get("content")
    parts = [without_cache_control(part) for part in content if isinstance(part, dict) and part.get("type") not in SILENT_PARTS] \
        if isinstance(content, list) else []
    calls = [(call.get("id"), (call.get("function") or {}).get("name") if isinstance(call.get("function"), dict) else None,
              _arguments(call)) for call in tool_calls_of(message)]
    return short_hash([role_of(message), comparable_text(text_of(content)), parts, message.get("tool_call_id"), calls])


def _arguments(call: dict[str, Any]) -> Any:
    function = call.get("function")
    arguments = function.get("arguments") if isinstance(function, dict) else None
    parsed, _ = parsed_arguments(arguments)
    return parsed if parsed is not None else arguments
