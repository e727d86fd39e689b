from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import excerpt
from ctxlint.rules.base import Rule, Violation
from ctxlint.tokens.counter import TokenCount

# Phrases providers use when a prompt does not fit (OpenAI, DeepSeek, Zhipu, Moonshot, vLLM,
# Anthropic; Zhipu's "Prompt exceeds max length", DashScope's "Range of input length should be
# [1, N]", Volcengine Ark's "Total tokens of image and text exceed max message tokens"), or
# does not leave room for the reply asked for (Anthropic's "input length and `max_tokens`
# exceed context limit", Hugging Face TGI's "`inputs` tokens + `max_new_tokens` must be <= N").
CONTEXT_LENGTH_ERROR = re.compile(
    r"context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input (?:length )?is too long|"
    r"exceeds? (?:your |the )?context limit|tokens\W*\+\W*max_new_tokens|"
    r"reduce the length|exceeds? the (?:model's )?(?:max|maximum)|token limit|"
    r"(?:prompt|input|messages?) (?:length )?exceeds? (?:the )?max(?:imum)? length|range of input length|"
    r"exceeds? (?:the )?max(?:imum)? (?:message|input|prompt|context) tokens|"
    r"上下文长度|超出.*(?:长度|上下文)|超过.*(?:最大长度|上下文)|(?:prompt|输入|提示词?)\s*超长",
    re.IGNORECASE,
)

REPLY_ROOM = re.compile(r"max_(?:new_)?tokens|output tokens", re.IGNORECASE)  # what the error says did not fit with the prompt


def context_length_error(ctx) -> str | None:
    """The provider's message when the logged response is a context-length error."""
    response = ctx.turn.record.response
    if response is None or response.error is None:
        return None
    said = response.error_text
    if not CONTEXT_LENGTH_ERROR.search(said):
        return None
    return str(response.error.get("message") or response.error.get("code") or said).strip()


def _answered(ctx) -> bool:
    """The model replied to this request (a reply logged, not an error): its prompt fit."""
    response = ctx.turn.record.response
    return response is not None and not response.failed and response.message is not None


def _served(ctx, count: TokenCount | None = None) -> bool:
    """The provider counted this prompt and answered it, and the model has a larger window
    behind an opt-in header (Anthropic's 1M-token beta) that the prompt (`count`, else the
    provider's count) fits: it was on."""
    larger = ctx.profile.opt_in_window
    return larger is not None and ctx.tokens.counter == "server" and (count or ctx.tokens).tokens <= larger and _answered(ctx)


class ContextWindowExceeded(Rule):
    """
    ## What it does
    Flags a request whose prompt tokens exceed the model's context window, or whose
    logged response is the provider's context-length error. Prompt tokens are the
    server's `usage.prompt_tokens` when logged, else counted offline (the report names
    the counter); the window comes from the model profile, models.dev data, or
    `--context-window`. A body the server counted within the window is counted offline
    too when its text is long enough to pass it: past the window that way, the logged usage
    is not the body's, or a gateway cut the prompt to fit (OpenRouter's middle-out), and
    the body is flagged. An offline count must pass the window by more than its counter
    can be off (15% for cl100k_base standing in for another tokenizer, 30% for the
    character estimate; on Chinese, Japanese and Korean text as much more as the model's
    tokenizer is frugal there: its profile's tokens per character where the maker
    documents them, 0.6 otherwise, against about 1.08 for cl100k_base); an offline count
    past the window by less than that is reported as a warning, the prompt may not fit,
    unless the model's reply is logged (it did fit). A
    model with a larger window behind an opt-in header (Claude's 1M-token beta) is not
    flagged for a prompt the provider counted, answered, and that fits the larger window.

    ## Why is this bad?
    Past the window the provider refuses the request, or (behind some gateways) cuts
    the oldest messages silently, which is exactly where the user's constraints were.
    The session fails at this turn however good the model is.

    ## Example
    A session of a 128K model whose history has grown to 131,000 prompt tokens.

    Use instead: summarize or trim old tool output before the window is reached,
    keeping the system prompt and the first user message.
    """

    code = "CTX006"
    name = "context-window-exceeded"
    severity = "error"
    needs = ("tokens",)
    remediation = ("Trim or summarize old history (keep the system prompt and first user message) before the prompt reaches the window;"
                   " where the provider counts the reply's max_tokens in, leave room for it.")

    def cannot_judge(self, ctx) -> str | None:
        if ctx.profile.context_window is None and context_length_error(ctx) is None:
            return "unknown model: no context window"
        return None

    def check(self, ctx) -> Iterable[Violation]:
        provider_said = context_length_error(ctx)
        window = ctx.profile.context_window
        tokens = ctx.tokens
        model = ctx.turn.record.model or ctx.profile.name
        if window is not None and ctx.past_window(window) and not _served(ctx):
            yield Violation(
                f"prompt is {tokens.tokens:,} tokens ({tokens.counter}), over the {window:,}-token window of {model}",
                key="exceeded",
                evidence={"prompt_tokens": tokens.tokens, "counter": tokens.counter, "counting_error": round(ctx.counting_error, 3),
                          "window": window, "window_source": ctx.profile.window_source},
            )
        elif window is not None and (counted := ctx.counted_past_window(window)) is not None and not _served(ctx, counted):
            yield Violation(
                f"prompt is {counted.tokens:,} tokens ({counted.counter}), over the {window:,}-token window of {model}, though the"
                f" logged usage counts {tokens.tokens:,}: that usage is not this body's, or a gateway cut the prompt to fit",
                key="exceeded",
                evidence={"prompt_tokens": counted.tokens, "counter": counted.counter, "server_prompt_tokens": tokens.tokens,
                          "window": window, "window_source": ctx.profile.window_source},
            )
        elif window is not None and tokens.tokens > window and not _answered(ctx):
            yield Violation(
                f"prompt is {tokens.tokens:,} tokens ({tokens.counter}), over the {window:,}-token window of {model}, by a count that"
                f" can be off by {ctx.counting_error:.0%} for this prompt: it may not fit",
                key="may not fit", severity="warning",
                evidence={"prompt_tokens": tokens.tokens, "counter": tokens.counter, "counting_error": round(ctx.counting_error, 3),
                          "window": window, "window_source": ctx.profile.window_source},
            )
        elif provider_said:
            quoted = excerpt(provider_said, 200)
            refused = "the prompt with room for the reply it asks (max_tokens)" if REPLY_ROOM.search(provider_said) else "the prompt"
            yield Violation(
                f"the provider refused {refused} as too long: {quoted}",
                key="exceeded",
                evidence={"provider_message": quoted, "prompt_tokens": tokens.tokens, "counter": tokens.counter},
            )
