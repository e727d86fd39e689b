from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_function
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx013_tool_arguments_schema_violation import declared_tools


class UndeclaredTool(Rule):
    """
    ## What it does
    Flags a tool call in the history that names a function the request's `tools` does
    not declare. A request that declares no tools at all is not judged: its tool list
    was simply not logged, or the conversation ended its tool phase. A provider's own
    tools declared by type (`{"type": "web_search", ...}` on GLM, `retrieval`) count
    under that name.

    ## Why is this bad?
    The app changed the tool list mid-session (a tool removed, renamed, or a sub-agent's
    calls pasted into the main agent's history). The model sees itself calling a tool
    it cannot call, and either calls it again (an error) or stops trusting the tool list.

    ## Example
    `tools` declares `search_flights`; the history holds a call to `book_hotel`.

    Use instead: keep every tool the history calls declared for the whole session, or
    summarize calls to retired tools as text.
    """

    code = "CTX014"
    name = "undeclared-tool"
    severity = "error"
    remediation = "Declare every tool the history calls in the request's tools, or rewrite retired calls as text."

    def check(self, ctx) -> Iterable[Violation]:
        declared = declared_tool_names(ctx.request)
        if not declared:
            return
        for index, position, call in assistant_calls(ctx.messages, ctx.unchanged(self)):
            name, _ = call_function(call)
            if name is not None and name not in declared:
                yield Violation(
                    f"tool call {call.get('id')!r} names {name!r}, which this request's tools do not declare",
                    key=(call.get("id"), name), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}/tool_calls/{position}/function/name",
                    evidence={"declared": sorted(declared)[:20]},
                )


def declared_tool_names(request: dict) -> set[str]:
    """The names a request's tool calls may carry: its functions', and the types of the
    tools that are not functions (the provider runs them, and their calls carry the type
    as the name)."""
    return set(declared_tools(request)) | {
        tool["type"] for tool in request.get("tools") or [] if isinstance(tool, dict)
        and isinstance(tool.get("type"), str) and tool["type"] != "function" and not isinstance(tool.get("function"), dict)}
