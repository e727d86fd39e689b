from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import refusals_for_body, refused_tool_schemas, tool_schema_sent
from ctxlint.rules.base import Rule, Violation


class RefusedToolSchema(Rule):
    """
    ## What it does
    Flags a function tool whose parameters schema the model's API refuses: an array
    (`"type": "array"`, or a type list that holds it) declared without `items`, in the
    schema's properties, its arrays' items or its `anyOf` / `oneOf` / `allOf` branches, sent
    to OpenAI's models (chat completions) or, in a Gemini API body, in a declaration's
    `parameters` (its OpenAPI subset; `parametersJsonSchema` takes such an array). The model
    profiles' data says which API refuses what, with its sources. Judged where the request
    names the model as its maker's API does (no gateway `org/` prefix, no `:tag` in a
    chat-completions body) and no successful reply to it is logged; a tool a host took in a
    request it answered earlier in the session is left alone (every request since sending it
    too). Each tool is reported once per session, at the request that first declares it so.

    ## Why is this bad?
    The API answers 400 ("Invalid schema for function 'create_canvas': In
    context=('properties', 'blocks'), array schema missing items.", Gemini's
    "parameters.properties[cookies].items: missing field.") before the model sees anything,
    and every request that declares the tool fails the same way: one MCP server's loose
    schema takes down every conversation that connects it. JSON Schema itself takes an array
    without `items` (any elements), so the server's own validator, and other providers, let
    it through.

    ## Example
    ```json
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "Read a.py and b.py."}],
     "tools": [{"type": "function", "function": {"name": "read_multiple_files",
       "parameters": {"type": "object", "properties": {"paths": {"type": "array"}}, "required": ["paths"]}}}]}
    ```

    Use instead: say what the array holds:
    ```json
    {"model": "gpt-4o", "messages": [{"role": "user", "content": "Read a.py and b.py."}],
     "tools": [{"type": "function", "function": {"name": "read_multiple_files",
       "parameters": {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}, "required": ["paths"]}}}]}
    ```
    """

    code = "CTX048"
    name = "refused-tool-schema"
    severity = "error"
    remediation = "Declare what each array of a tool's parameters holds (`items`), fixing the MCP server's or the app's schema, or filling it in before sending."

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        entry = next(iter(refusals_for_body(record, "tool_schemas")), None)
        if entry is None:
            return
        body_tools = record.source_map is not None and record.source_map.api is not None
        for name, index, where in refused_tool_schemas(entry, record):
            if ctx.host_took(tool_schema_sent(name)):
                continue  # the host answered the same tool before
            yield Violation(
                f"tool {name!r} declares an array without `items` ({', '.join(where)}): {entry['by']} answers {entry['status']} "
                f"({entry['error']!r})",
                # another API's body is pointed at by the function's name, which its map puts back where the body declares it
                key=tool_schema_sent(name), pointer=f"/tools/{index}/function/{'name' if body_tools else 'parameters'}",
                evidence={"function": name, "arrays_without_items": where, "model": record.model, "provider_error": entry["error"],
                          "sources": entry["sources"]},
            )
