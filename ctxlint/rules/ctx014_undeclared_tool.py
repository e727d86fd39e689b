from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ctxlint.chat import assistant_calls, call_function, call_stands, hand_back_call, resume_at_last_calls, similar
from ctxlint.rules.base import Rule, Violation
from ctxlint.request_terms import declared_tool_names, forces_a_tool_call
from ctxlint.sessions.grouping import agent_prompt


@dataclass(slots=True, frozen=True)
class ToolsOffered:
    """What a session's requests have offered the model: the agent that declared the
    latest tools (its prompt), those tools, and the tools earlier agents declared."""

    agent: str | None
    current: frozenset[str]
    handed_over: frozenset[str] = frozenset()

    def next(self, agent: str | None, declared: frozenset[str]) -> "ToolsOffered":
        same = agent == self.agent or (agent is not None and self.agent is not None and similar(agent, self.agent))
        return ToolsOffered(agent, declared, self.handed_over if same else self.handed_over | self.current)


class UndeclaredTool(Rule):
    """
    ## What it does
    Flags a tool call in the history that names a function the request's `tools` does
    not declare. A request that declares no tools at all is not judged: its tool list
    was simply not logged, or the conversation ended its tool phase. A provider's own
    tools declared by type (`{"type": "web_search", ...}` on GLM, `retrieval`) count
    under that name. A call to a tool an earlier agent of the session declared is not
    flagged: agents hand a conversation over with its calls (the OpenAI Agents SDK keeps
    the `transfer_to_…` call in the next agent's history, whose tools do not declare it);
    another agent is another system prompt, not a rewrite of the same one. Nor is a
    request that forces a call of the tools it offers (`tool_choice` required, any or a
    named tool): frameworks offer only their output tool at the last step to get a
    structured answer, with the calls of the run's other tools in the history (a log that
    does not record the request's settings, a tracer's span or event, is not judged: the
    `tool_choice` it does not show may force one). Nor is a
    call its tool answered with an error (an Anthropic `is_error` result, or a result
    that reports an error): the app refused a name the model made up, and the model
    sees that the tool does not exist (pydantic-ai answers "Unknown tool name"). Nor is a
    worker handing the conversation back (`transfer_back_to_…`): LangGraph's supervisor
    writes and answers that call, and no agent's tools declare it.

    ## Why is this bad?
    The app changed the tool list mid-session (a tool removed or renamed while its calls
    stay in the history), pasted a sub-agent's calls into the main agent's history, or
    stored a name the model made up. The model sees itself calling a tool it cannot
    call, and either calls it again (an error) or stops trusting the tool list.

    ## Example
    `tools` declares `search_flights`; the history holds a call to `book_hotel`.

    Use instead: keep every tool the history calls declared for the whole session, or
    summarize calls to retired tools and another agent's calls as text.
    """

    code = "CTX014"
    name = "undeclared-tool"
    severity = "error"
    needs = ("settings",)  # a tool_choice the log does not show may force the one tool a step offers
    remediation = "Declare every tool the history calls in the request's tools, or summarize retired and other agents' calls as text."

    def check(self, ctx) -> Iterable[Violation]:
        declared = declared_tool_names(ctx.request)
        if not declared or forces_a_tool_call(ctx.request):
            return
        agent, offered = agent_prompt(ctx.messages), ctx.session.tools_offered
        offered = offered.next(agent, frozenset(declared)) if offered else ToolsOffered(agent, frozenset(declared))
        ctx.session.tools_offered = offered
        known = declared | offered.handed_over
        for index, position, call in assistant_calls(ctx.messages, resume_at_last_calls(ctx.messages, ctx.unchanged(self))):
            name, _ = call_function(call)
            if name is not None and name not in known and not hand_back_call(name) and call_stands(ctx.messages, index, call.get("id")):
                yield Violation(
                    f"tool call {call.get('id')!r} names {name!r}, which this request's tools do not declare",
                    key=(call.get("id"), name), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}/tool_calls/{position}/function/name",
                    evidence={"declared": sorted(declared)[:20]},
                )
