from __future__ import annotations

from typing import Any, Iterable

from ctxlint.profiles import past_tool_limits, refusals_for_body, tool_count_sent
from ctxlint.rules.base import Rule, Violation


class RefusedToolCount(Rule):
    """
    ## What it does
    Flags a request that sends more tools, tool calls or strict parameters than the model's
    API takes: for OpenAI's models (chat completions), more than 128 entries in `tools`, or
    more than 128 tool calls in one assistant message of the history; in a Gemini API body,
    more than 512 function declarations in one tool; in a Messages API body to Claude, more
    than 20 tools marked `strict: true`, or strict tools whose schemas hold more than 24
    optional parameters (a property its object's `required` does not list) or more than 16
    parameters of a union type (a `type` list, or `anyOf`) together, counted through nested
    objects' properties and array items (tools not marked strict do not count). A request
    that marks tools `defer_loading` (a gateway's tool search, which sends the model those
    it finds) is not judged by its count of tools. The model profiles' data says what each
    API takes, with its sources. Judged where the request names the model as its maker's API
    does (no gateway `org/` prefix), the log records its settings and no successful reply to
    it is logged; a session whose host answered such a request before is left alone (every
    request since sending one too). Each kind is reported once per session, where it starts;
    a message's calls, at the request whose history first carries them.

    ## Why is this bad?
    The API answers 400 ("Invalid 'tools': array too long. Expected an array with maximum
    length 128, but got an array with length 129 instead.", "At most 512 function
    declarations can be specified.", "Too many strict tools (21). The maximum number of
    strict tools supported is 20.", "Schemas contains too many optional parameters (25)")
    before the model sees anything, and every later request that keeps the tools fails
    the same way. It happens when an app connects one more MCP server and its tools push
    the list past the limit, appends its tools to the list again at every call, marks
    every tool strict by default (as several agent frameworks do), or moves a
    conversation to a model whose API takes fewer.

    ## Example
    ```json
    {"model": "claude-sonnet-4-6", "max_tokens": 1024,
     "tools": [{"name": "crm_find_contact", "strict": true, "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"], "additionalProperties": false}},
               "... 20 more tools, each marked strict ..."],
     "messages": [{"role": "user", "content": "Who is jane@example.com?"}]}
    ```

    Use instead: mark strict only the tools whose arguments must match their schema (20
    at most), and send the rest without `strict`:
    ```json
    {"model": "claude-sonnet-4-6", "max_tokens": 1024,
     "tools": [{"name": "crm_find_contact", "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}},
               "... 20 more tools, none marked strict ..."],
     "messages": [{"role": "user", "content": "Who is jane@example.com?"}]}
    ```
    """

    code = "CTX045"
    name = "refused-tool-count"
    severity = "error"
    remediation = ("Send the model no more tools than its API takes (only those the step needs, or the rest behind tool search), "
                   "no more calls in one message than it takes, and mark strict only the tools that need it, within the "
                   "API's count of strict tools and of their optional and union parameters.")

    def check(self, ctx) -> Iterable[Violation]:
        refusals = refusals_for_body(ctx.turn.record, "tool_counts")
        if not refusals:
            return
        record = ctx.turn.record
        for entry in refusals:
            if ctx.host_took(tool_count_sent(entry)):
                continue  # the host answered the same before
            # the calls of the messages the previous request sent were judged there
            excesses = past_tool_limits(entry, record, calls_from=ctx.unchanged(self))
            for position, excess in enumerate(excesses):
                says, evidence = _said(entry, excess, ctx)
                yield Violation(
                    f"{says}: {entry['by']} answers {entry['status']} ({entry['error']!r})",
                    key=(*tool_count_sent(entry), excess.tool_call_id or excess.message_index or position),
                    message_index=excess.message_index, tool_call_id=excess.tool_call_id, pointer=excess.pointer,
                    evidence={"counts": entry["counts"], "count": excess.count, "most": entry["most"], **evidence, "model": record.model,
                              "provider_error": entry["error"], "sources": entry["sources"]},
                )


def _said(entry: dict[str, Any], excess, ctx) -> tuple[str, dict[str, Any]]:
    """What the finding says of an excess, and its evidence beyond the counts."""
    count, most, counts = excess.count, entry["most"], entry["counts"]
    over = f"{count - most} more than the {most} it takes"
    if counts == "tools":
        return f"the request declares {count} tools, {over}", {}
    if counts == "calls_in_message":
        return f"message {ctx.label(excess.message_index)} makes {count} tool calls, {over}", {}
    if counts == "function_declarations":
        tool = ctx.turn.record.source_map.pointer(excess.pointer).rsplit("/", 2)[0]
        return f"{tool} declares {count} functions, {over}", {"tool": tool}
    if counts == "strict_tools":
        return f"the request marks {count} tools `strict: true`, {over}", {}
    kind = "optional parameters (properties their object's `required` does not list)" if counts == "strict_optional_parameters" \
        else "parameters of a union type (a `type` list, or `anyOf`)"
    heaviest = sorted(excess.shares, key=lambda share: -share[1])[:3]
    held = ", ".join(f"{name!r}: {number}" for name, number in heaviest)
    return (f"the schemas of the request's strict tools hold {count} {kind}, {over} (held by {held}); tools not marked strict "
            "do not count"), {"held_by": dict(excess.shares)}
