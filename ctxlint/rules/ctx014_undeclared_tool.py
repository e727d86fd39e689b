from __future__ import annotations

from typing import Iterable

from ctxlint.chat import assistant_calls, call_function
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx013_tool_arguments_schema_violation import declared_tools


class UndeclaredTool(Rule):
    """
    ## What it does
    Flags a tool call in the history that names a function the request's `tools` does
    not declare, and no earlier request of the session declared either. A request that
    declares no tools at all is not judged: its tool list was simply not logged, or the
    conversation ended its tool phase. A provider's own tools declared by type
    (`{"type": "web_search", ...}` on GLM, `retrieval`) count under that name. A call to
    a tool an earlier request declared is history made while the tool was there: agents
    hand a conversation over with its calls (the OpenAI Agents SDK keeps the
    `transfer_to_…` call in the next agent's history, whose tools do not declare it), and
    phases of a run retire tools.

    ## Why is this bad?
    The history holds a call to a tool this session never offered the model: a
    sub-agent's or another session's calls pasted into the history, a tool renamed
    without its calls, or a name the model made up that the app stored anyway. The model sees itself calling a tool
    it cannot call, and either calls it again (an error) or stops trusting the tool list.

    ## Example
    `tools` declares `search_flights`; the history holds a call to `book_hotel`.

    Use instead: keep in the history only calls to tools the session offered the model;
    summarize another agent's calls as text, and rewrite a renamed tool's calls.
    """

    code = "CTX014"
    name = "undeclared-tool"
    severity = "error"
    remediation = "Keep only calls to tools the session offered in the history; summarize another agent's calls as text."

    def check(self, ctx) -> Iterable[Violation]:
        declared = declared_tool_names(ctx.request)
        if not declared:
            return
        known = ctx.session.tools_declared | declared
        ctx.session.tools_declared = known
        for index, position, call in assistant_calls(ctx.messages, ctx.unchanged(self)):
            name, _ = call_function(call)
            if name is not None and name not in known:
                yield Violation(
                    f"tool call {call.get('id')!r} names {name!r}, which neither this request's tools nor an earlier request's declare",
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
