from __future__ import annotations

from typing import Iterable

from ctxlint.chat import first_tool_message, role_of
from ctxlint.profiles import TOOLS_UNDECLARED, refused_without_tools
from ctxlint.rules.base import Rule, Violation


class ToolHistoryWithoutTools(Rule):
    """
    ## What it does
    Flags a request whose messages carry tool calls or tool results but that declares no
    tools, sent to an API that refuses that: the Anthropic Messages API for Claude models
    (`tool_use` and `tool_result` blocks with no `tools`, directly or through Bedrock's or
    Vertex AI's Anthropic bodies) and Bedrock's Converse API for any model (`toolUse` and
    `toolResult` blocks with no `toolConfig`). The model profiles' data names each API,
    with its sources. Chat-completions bodies are not judged: OpenAI's API takes such a
    request, and gateways that take it for Claude differ (LiteLLM adds a placeholder tool).
    Nor are a provider's server tools (web search, code execution): their blocks are no
    calls the app answers. A request is judged only where an earlier request of its
    session declared tools: a log may leave `tools` out of what it records, and one that
    showed them shows them gone. A request that sends `tools` as an empty list, a log that does not
    record the request's settings (a tracer's span that keeps the messages alone), a model
    named with a gateway's `org/` prefix, and a request whose successful reply is logged
    are left alone, and so is a session whose host answered such a request before (every
    request since sending none too). Reported once per session, where it starts.

    ## Why is this bad?
    The API answers 400 ("Requests which include `tool_use` or `tool_result` blocks must
    define tools."; Converse: "The toolConfig field must be defined when using toolUse and
    toolResult content blocks.") and the model sees nothing. It happens at the steps where
    an app means the model to stop calling tools and leaves them out: the last step of an
    agent at its iteration limit, a summary or compaction request over the history, a
    follow-up question generated from the conversation. Every such step fails, in every
    session that ran a tool.

    ## Example
    ```json
    {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
      {"role": "user", "content": "What is the weather in Paris?"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Paris"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C"},
                                   {"type": "text", "text": "Summarize the conversation."}]}]}
    ```

    Use instead: keep the tools the history calls declared, and stop further calls with
    `"tool_choice": {"type": "none"}`; or send the earlier calls and results as text.
    """

    code = "CTX039"
    name = "tool-history-without-tools"
    severity = "error"
    remediation = ("Keep declaring the tools the history calls (with tool_choice none where the model must not call one), "
                   "or send the earlier calls and results as text.")

    def check(self, ctx) -> Iterable[Violation]:
        if "tools" in ctx.request:
            ctx.session.tools_declared = ctx.session.tools_declared or bool(ctx.request["tools"])
            return
        if not ctx.session.tools_declared:
            return  # the log may leave tools out of what it records: only a session that showed them shows them gone
        refusal = refused_without_tools(ctx.turn.record)
        if refusal is None:
            return
        if ctx.host_took(TOOLS_UNDECLARED):
            return  # the host answered the same before
        first = first_tool_message(ctx.messages)
        if first is None:
            return
        carries = "carries a tool result" if role_of(ctx.messages[first]) == "tool" else "makes tool calls"
        yield Violation(
            f"message {ctx.label(first)} {carries}, but the request declares no `{refusal['member']}`: "
            f"{refusal['by']} refuses that for {ctx.turn.record.model} ({refusal['error']!r})",
            key=(refusal["member"],), message_index=first, pointer=f"/messages/{first}",
            evidence={"model": ctx.turn.record.model, "first_tool_message": ctx.label(first),
                      "provider_error": refusal["error"], "sources": refusal["sources"]},
        )
