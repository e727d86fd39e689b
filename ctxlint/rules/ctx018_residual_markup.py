from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import role_of, text_of
from ctxlint.rules.base import Rule, Violation
from ctxlint.sessions.model import STEERING_ROLES

SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w.:\-]{0,40}\|>")
TOOL_MARKUP = re.compile(r"</?(?:tool_call|tool_calls|function_call|function_calls|tool_use|invoke)\b[^>]*>|\[TOOL_CALLS\]|<｜tool▁[a-z▁]+｜>")


# Markdown code (fenced blocks, inline spans) quotes markup instead of carrying it: a model
# explaining a chat template writes `<|im_start|>` there.
CODE = re.compile(r"(`{3,}|~{3,}).*?(?:\1|\Z)|`[^`\n]+`", re.DOTALL)


def _outside_code(content: str) -> str:
    """The content with its Markdown code blanked out, offsets kept."""
    if "`" not in content and "~~~" not in content:
        return content
    return CODE.sub(lambda m: " " * len(m.group()), content)


def _tag_name(token: str) -> str:
    return re.sub(r"[</>\[\]]|\s.*", "", token)


class ResidualMarkup(Rule):
    """
    ## What it does
    Flags assistant content that carries model markup left over from stream
    concatenation or a chat template: `<|…|>` special tokens always; tool-call markup
    (`<tool_call>`, `<function_call>`, `[TOOL_CALLS]`, DeepSeek's `<｜tool▁calls▁begin｜>`)
    when the request uses native tool calling (declares `tools`). A request without
    `tools`, or whose system prompt itself defines that markup, is prompt-engineered
    tool calling: the markup is its protocol, not residue. Markup quoted in Markdown code
    (a fenced block or an inline span) is not residue either.

    ## Why is this bad?
    The app parsed the raw stream badly and stored template text as if the model had
    said it. Replayed, it teaches the model to print its own control tokens, which
    then leak to users or break the next parse.

    ## Example
    ```json
    {"role": "assistant", "content": "Let me check.<tool_call>{\\"name\\": \\"weather\\"}</tool_call><|im_end|>"}
    ```

    Use instead: store the parsed message (content and tool_calls), not the raw stream text.
    """

    code = "CTX018"
    name = "residual-markup"
    severity = "error"
    recurs = True
    recurs_on = ("assistant",)
    remediation = "Store the parsed assistant message (content, tool_calls), never raw stream or template text."

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        native_tools = bool(ctx.request.get("tools"))
        system_text = None
        start = ctx.unchanged(self)
        if any(role_of(m) in STEERING_ROLES for m in messages[start:]):
            start = 0  # a new system prompt may now declare a tag it did not before
        for index in range(start, len(messages)):
            message = messages[index]
            if role_of(message) != "assistant":
                continue
            content = _outside_code(text_of(message.get("content")))
            found = SPECIAL_TOKEN.search(content)
            if found is None and native_tools and TOOL_MARKUP.search(content):
                if system_text is None:
                    system_text = "\n".join(text_of(m.get("content")) for m in messages if role_of(m) in STEERING_ROLES)
                found = next((m for m in TOOL_MARKUP.finditer(content) if _tag_name(m.group()) not in system_text), None)
            if found is not None:
                yield Violation(
                    f"assistant message {ctx.label(index)} carries model markup {found.group()!r}",
                    key=(ctx.turn.identities[index], found.group()), message_index=index, pointer=f"/messages/{index}/content",
                    evidence={"markup": found.group(), "offset": found.start()},
                )
