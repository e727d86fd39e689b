from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import refused_empty
from ctxlint.rules.base import Rule, Violation


class EmptyToolsList(Rule):
    """
    ## What it does
    Flags a chat-completions request whose `tools` is an empty list, sent to a model
    whose maker's API refuses that: OpenAI's models and the models of DeepSeek's API
    (`deepseek-chat`, `deepseek-reasoner`, DeepSeek V4; the model profiles' data names
    them, with its sources). The request must name the model as that API does (no `org/`
    prefix or `:tag`: other hosts serve it under such names, and many take the empty
    list; DeepSeek's open models other hosts serve as `deepseek-v3…` are not judged, nor
    is `gpt-oss`). A request whose successful reply is logged is left alone, and so is
    one whose session got a successful reply from the same model to the same empty list
    (every request since sending it too): the host that answered took it. Reported once
    per session, where it starts.

    ## Why is this bad?
    The API answers 400 ("Invalid 'tools': empty array. Expected an array with minimum
    length 1, but got an empty array instead.") before the model sees anything. It
    happens when an app builds `tools` from a list of enabled tools and the user turned
    them all off: every request of the session fails while no tool is on, though the same
    request without the member is legal.

    ## Example
    ```json
    {"model": "deepseek-chat", "tools": [], "messages": [{"role": "user", "content": "Hello"}]}
    ```

    Use instead: leave `tools` out when the request offers none:
    ```json
    {"model": "deepseek-chat", "messages": [{"role": "user", "content": "Hello"}]}
    ```
    """

    code = "CTX031"
    name = "empty-tools-list"
    severity = "error"
    remediation = "Leave `tools` (and `tool_choice`) out of a request that offers no tool, rather than sending an empty list."

    def check(self, ctx) -> Iterable[Violation]:
        if ctx.request.get("tools") != []:
            return
        if ctx.host_took(("tools", "[]")):
            return  # the host answered the same list before
        refusal = refused_empty(ctx.turn.record, "tools")
        if refusal is not None:
            yield Violation(
                f"`tools` is an empty list: {refusal['by']} refuses it ({refusal['error']!r}) for {ctx.turn.record.model}",
                key="tools", pointer="/tools",
                evidence={"model": ctx.turn.record.model, "provider_error": refusal["error"], "sources": refusal["sources"]},
            )
