from __future__ import annotations

from typing import Iterable

from ctxlint.chat import role_of, short_hash, text_of
from ctxlint.rules.base import Rule, Violation


class OversizedToolResult(Rule):
    """
    ## What it does
    Warns about a tool result that is both over a size (default 8,192 tokens, option
    `max_tokens`) and over a share of its request's prompt (default 50%, option
    `max_share`). Both must hold: a big result in a big, healthy prompt is fine, and so
    is a small result that happens to dominate a short prompt. Opt-in (select it:
    `--extend-select CTX020`): a large result is legal, and often what the task needs.

    ## Why is this bad?
    Raw JSON, debug fields, HTML and search dumps drown the conversation: the model's
    attention goes to the dump, the user's instructions are diluted, and the window
    fills a few turns later.

    ## Example
    A `search` tool returning 40,000 tokens of raw HTML into a 60,000-token prompt.

    Use instead: return only the fields the model needs, or summarize before sending.
    """

    code = "CTX020"
    name = "oversized-tool-result"
    severity = "warning"
    opt_in = True
    needs = ("tokens",)
    options = {"max_tokens": 8192, "max_share": 0.5}
    remediation = "Trim tool output to what the model needs (fields, top results) before sending it back."

    def check(self, ctx) -> Iterable[Violation]:
        limit, share = ctx.option(self, "max_tokens"), ctx.option(self, "max_share")
        prompt = ctx.tokens.tokens
        messages = ctx.messages
        # A shared result's share of the prompt only falls while the prompt grows.
        start = ctx.unchanged(self) if prompt >= (ctx.previous_tokens or 0) else 0
        for index in range(start, len(messages)):
            message = messages[index]
            if role_of(message) != "tool":
                continue
            text = text_of(message.get("content"))
            if len(text.encode("utf-8")) < limit:  # a token covers at least one byte; a CJK character can be 3 tokens
                continue
            size = ctx.engine.counter.count_message_text(message, ctx.turn.record.model)
            if size.tokens > limit and prompt and size.tokens / prompt > share:
                yield Violation(
                    f"tool result {index} is {size.tokens:,} tokens ({size.counter}), {size.tokens / prompt:.0%} of the prompt",
                    key=(message.get("tool_call_id"), short_hash(text)), message_index=index,
                    tool_call_id=message.get("tool_call_id"), pointer=f"/messages/{index}/content",
                    evidence={"tokens": size.tokens, "counter": size.counter, "prompt_tokens": prompt},
                )
