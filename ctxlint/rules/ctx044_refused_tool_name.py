from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import refusals_for_body, refused_function_names, tool_name_sent
from ctxlint.request_terms import function_names
from ctxlint.rules.base import Rule, Violation


class RefusedToolName(Rule):
    """
    ## What it does
    Flags a function name the model's API refuses, in the tools a request declares or in a
    tool call of its history: for OpenAI's models (chat completions), a name of other
    characters than letters, digits, `_` and `-`, or longer than 64 characters, in the tools
    and in the history's calls alike; for DeepSeek's, the same in the tools, and a name the
    tools declare twice; for Moonshot's (Kimi), a tool name that does not start with a
    letter or holds such characters; in a Responses API body, such characters in a function
    tool's name; in a Messages API body to Claude, a tool name of such characters or longer
    than 128 characters, or declared twice, and a call in the history named with more than
    200; for Gemini (its own body or its OpenAI-compatible endpoint), a declaration whose
    name does not start with a letter or `_`, holds other characters than letters, digits,
    `_`, `.`, `:` and `-`, is longer than 64, or is declared twice. OpenAI's API takes two
    tools under one name, so that is not judged there. The model profiles' data says which
    API refuses what, with its sources. Judged where the request names the model as its
    maker's API does (no gateway `org/` prefix; a chat-completions body with no `:tag`), the
    log records its settings and no successful reply to it is logged; a name a host took in
    a request it answered earlier in the session is left alone (every request since sending
    it too). Each name is reported once per session, where it starts: at its declaration, or
    at the call whose history first carries it.

    ## Why is this bad?
    The API answers 400 ("Invalid 'tools[0].function.name': string does not match pattern.
    Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", "string too long.
    Expected a string with maximum length 64", "tools.16.custom.name: String should match
    pattern '^[a-zA-Z0-9_-]{1,128}$'", "tools: Tool names must be unique.") before the model
    sees anything, so no request of the session gets through. It happens when an app
    declares MCP tools under names built from the server's (`github.create_issue`,
    `server/tool`, `mcp__server__a_long_tool_name`), from an OpenAPI path
    (`GET_/users/{id}`) or from a title with spaces, or connects two MCP servers that both
    have a tool of one name, and when a conversation moves to a provider whose limit is
    stricter than the last one's: the history's calls keep the old names.

    ## Example
    ```json
    {"model": "gpt-4.1", "tools": [{"type": "function", "function": {"name": "github.create_issue",
      "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}}],
     "messages": [{"role": "user", "content": "File a bug for the crash."}]}
    ```

    Use instead: name each function with letters, digits, `_` and `-` alone, 64 characters
    at most, and map the names back to the tools when the calls come:
    ```json
    {"model": "gpt-4.1", "tools": [{"type": "function", "function": {"name": "github__create_issue",
      "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}}],
     "messages": [{"role": "user", "content": "File a bug for the crash."}]}
    ```
    """

    code = "CTX044"
    name = "refused-tool-name"
    severity = "error"
    remediation = ("Declare each function under a name the API takes (letters, digits, _ and -, within its length; map MCP or "
                   "OpenAPI names to such names and back), and send the history's calls under the names the tools have now.")

    def check(self, ctx) -> Iterable[Violation]:
        refusals = refusals_for_body(ctx.turn.record, "tool_names")
        if not refusals:
            return
        verdicts = refused_function_names(refusals, ctx.request)
        if not verdicts:
            return
        record, declared = ctx.turn.record, set()
        # the calls the previous request sent were judged there
        for function in function_names(ctx.request, calls_from=ctx.unchanged(self)):
            verdict = verdicts.get((function.sent_in, function.name))
            first_declaration = function.sent_in == "tools" and function.name not in declared
            declared.add(function.name)
            if verdict is None or (verdict[1] == "duplicate" and first_declaration):
                continue
            if ctx.host_took(tool_name_sent(function.name)):
                continue  # the host answered the same name before
            entry, why = verdict
            said = {"pattern": f"breaks the form a function name must take ({entry.get('takes')})",
                    "length": f"is {len(function.name)} characters long, more than the {entry.get('most')} it takes",
                    "duplicate": "is declared a second time, and names must be unique"}[why]
            where = (f"tool {function.name!r}" if function.sent_in == "tools"
                     else f"the call {function.call_id!r} of message {ctx.label(function.message_index)}, named {function.name!r},")
            error = entry[{"pattern": "error", "length": "too_long_error", "duplicate": "unique_error"}[why]]
            yield Violation(
                f"{where} {said}: {entry['by']} answers {entry['status']} ({error!r})",
                key=tool_name_sent(function.name), message_index=function.message_index, tool_call_id=function.call_id,
                pointer=function.pointer,
                evidence={"function": function.name, "sent_in": function.sent_in, "refused": why, "pattern": entry.get("pattern"),
                          "most": entry.get("most"), "model": record.model, "provider_error": error, "sources": entry["sources"]},
            )
