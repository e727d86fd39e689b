from __future__ import annotations

from typing import Iterable

from ctxlint.rules.base import Rule, Violation


class ContextWindowNearLimit(Rule):
    """
    ## What it does
    Warns once per session at the first request whose prompt reaches a share of the
    model's context window (default 80%, option `ratio`) and stays within it (a count
    past the window is CTX006's). 80% leaves room for a few more turns of typical agent
    growth (a tool result or two) and for counting error when the tokens are an offline
    approximation. Opt-in (select it: `--extend-select CTX007`): a prompt within its
    window is legal, and the report's window column shows how much of it each request
    used.

    ## Why is this bad?
    A session that is at 80% of its window has a few turns left before it fails or is
    silently truncated. This is the turn to start trimming, not the turn after the
    provider refuses.

    ## Example
    A 128K model whose prompt has reached 105,000 tokens.

    Use instead: compact history (summaries of old tool output) before it gets there.
    """

    code = "CTX007"
    name = "context-window-near-limit"
    severity = "warning"
    opt_in = True
    needs = ("window", "tokens")
    options = {"ratio": 0.8}
    remediation = "Start compacting history now: the next turns will run out of context window."

    def check(self, ctx) -> Iterable[Violation]:
        window = ctx.profile.context_window
        tokens = ctx.tokens
        ratio = ctx.option(self, "ratio")
        if window * ratio <= tokens.tokens <= window:
            yield Violation(
                f"prompt is {tokens.tokens:,} tokens ({tokens.counter}), {tokens.tokens / window:.0%} of the {window:,}-token window of {ctx.turn.record.model or ctx.profile.name}",
                key="near-limit",
                evidence={"prompt_tokens": tokens.tokens, "counter": tokens.counter, "window": window, "threshold": ratio},
            )
