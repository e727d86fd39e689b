"""What a request asks of the model besides its messages: the tools it offers, the tool
it forces, the form of the reply."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

from ctxlint.chat import canonical_json, dotted
from ctxlint.ingest.record import Record


def declared_tools(request: dict) -> dict[str, dict]:
    """Function name -> its declaration, from `tools` (and legacy `functions`)."""
    declared = {function["name"]: function for _, function in _declared(request)}
    functions = request.get("functions")
    for function in functions if isinstance(functions, list) else ():  # not in the schema: anything may stand there
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            declared[function["name"]] = function
    return declared


def tool_name(tool: Any) -> str | None:
    """The name a tool's calls carry: a function's name, or the type of a tool that is no
    function (the provider runs it, and its calls carry the type as the name); else None."""
    if not isinstance(tool, dict):
        return None
    function = tool.get("function")
    if isinstance(function, dict):
        return function["name"] if isinstance(function.get("name"), str) else None
    kind = tool.get("type")
    return kind if isinstance(kind, str) and kind != "function" else None


def declared_tool_names(request: dict) -> set[str]:
    """The names a request's tool calls may carry (tool_name of each tool), and the names
    of legacy `functions`."""
    tools = request.get("tools")
    return set(declared_tools(request)) | {name for tool in (tools if isinstance(tools, list) else ()) if (name := tool_name(tool)) is not None}


class FunctionName(NamedTuple):
    """A function's name as a request sends it: in the tools it declares ("tools") or in
    a tool call of its history ("calls")."""

    sent_in: str
    name: str
    pointer: str  # normalized (SourceMap.pointer puts it back in the body's terms)
    message_index: int | None = None
    call_id: str | None = None


def function_names(request: dict, calls_from: int = 0) -> Iterator[FunctionName]:
    """The names of the functions a request declares, then those its history's tool calls
    carry, from message `calls_from` on."""
    for index, function in _declared(request):
        yield FunctionName("tools", function["name"], f"/tools/{index}/function/name")
    for index, position, name, call_id in _called(request, calls_from):
        yield FunctionName("calls", name, f"/messages/{index}/tool_calls/{position}/function/name", index, call_id)


def declared_function_names(request: dict) -> list[str]:
    """The names of the functions a request's tools declare, in order, repeats kept."""
    return [function["name"] for _, function in _declared(request)]


def called_function_names(request: dict) -> set[str]:
    """The names the tool calls of a request's history carry."""
    return {name for _, _, name, _ in _called(request, 0)}


def _declared(request: dict) -> Iterator[tuple[int, dict]]:
    """(index in `tools`, declaration) of each function tool a request declares under a name."""
    tools = request.get("tools")
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            yield index, function


def _called(request: dict, calls_from: int) -> Iterator[tuple[int, int, str, Any]]:
    """(message index, index in its tool_calls, name, id) of each named tool call of a
    request's history, from message `calls_from` on."""
    messages = request.get("messages") or []
    for index in range(calls_from, len(messages)):
        calls = messages[index].get("tool_calls") if type(messages[index]) is dict else None
        for position, call in enumerate(calls if isinstance(calls, list) else ()):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                yield index, position, function["name"], call.get("id")


def declared_functions(request: dict) -> list[tuple[int, dict]]:
    """(index in `tools`, declaration) of each function tool a request declares under a name."""
    return list(_declared(request))


def schema_parameters(schema: Any) -> tuple[int, int]:
    """(optional, union) parameters of a tool's schema: the properties their object's
    `required` does not list, and those whose `type` is a list of more than one or that
    hold `anyOf`, through nested objects' properties and array items."""
    optional = union = 0
    pending = [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        properties, required = node.get("properties"), node.get("required")
        if isinstance(properties, dict):
            listed = {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()
            for name, value in properties.items():
                optional += name not in listed
                if isinstance(value, dict):
                    kinds = value.get("type")
                    union += (isinstance(kinds, list) and len(kinds) > 1) or isinstance(value.get("anyOf"), list)
                    pending.append(value)
        pending.append(node.get("items"))
    return optional, union


def arrays_without_items(schema: Any) -> list[str]:
    """Where a tool's schema declares an array (`type` "array", or a list that holds it) with
    no `items` (nor `prefixItems`), as dotted paths from the schema's root, through its
    objects' properties, array items and anyOf / oneOf / allOf branches."""
    found, pending = [], [(schema, "")]
    while pending:
        node, path = pending.pop()
        if not isinstance(node, dict):
            continue
        kinds = node.get("type")
        if (kinds == "array" or (isinstance(kinds, list) and "array" in kinds)) and "items" not in node and "prefixItems" not in node:
            found.append(path or "(the root)")
        properties = node.get("properties")
        for name, value in properties.items() if isinstance(properties, dict) else ():
            pending.append((value, f"{path}.properties.{name}" if path else f"properties.{name}"))
        pending.append((node.get("items"), f"{path}.items" if path else "items"))
        for branch in ("anyOf", "oneOf", "allOf"):
            for position, value in enumerate(node.get(branch) if isinstance(node.get(branch), list) else ()):
                pending.append((value, f"{path}.{branch}.{position}" if path else f"{branch}.{position}"))
    return sorted(found)


FORCING_CHOICES = ("required", "any", "function", "tool", "allowed_tools", "custom")


def forces_a_tool_call(request: dict) -> bool:
    """Whether the request makes the model call one of the tools it offers (`tool_choice`
    required, any or a named tool; Gemini's function-calling mode ANY): a step that narrows
    the tools to get a structured answer, not a tool list the session lost."""
    choice = request.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, dict) else choice
    if kind in FORCING_CHOICES:
        return True
    mode = dotted(request, "toolConfig.functionCallingConfig.mode") or dotted(request, "tool_config.function_calling_config.mode")
    return isinstance(mode, str) and mode.upper() == "ANY"


# Where a request says what form the reply takes, in the APIs ctxlint reads: the tool it
# forces (chat completions, Anthropic, Gemini and Converse tool configs), a response format
# or schema (chat completions, the Responses API's text.format, Anthropic's output format,
# Gemini's generation config).
REPLY_FORM = ("tool_choice", "function_call", "toolConfig", "tool_config", "response_format", "text.format",
              "output_format", "output_config.format", "generationConfig.responseMimeType", "generationConfig.responseSchema",
              "generationConfig.responseJsonSchema", "generation_config.response_mime_type", "generation_config.response_schema",
              "generation_config.response_json_schema")
_REPLY_FORM_MEMBERS = tuple((path, path.split(".")[0]) for path in REPLY_FORM)  # each path, and the member it starts at
# The members that say what a call is for, beside its messages (kept when a request is slimmed)
PURPOSE_MEMBERS = ("tools", "functions", *dict.fromkeys(member for _, member in _REPLY_FORM_MEMBERS))


def purpose(request: dict) -> tuple[Any, ...]:
    """What a request asks the model for besides answering its messages: the tools it
    offers, the tool it forces, the form of the reply. Two requests with the same messages
    and another purpose are two calls (an app's router or classifier that gets a structured
    answer beside its agent), not one sent again."""
    form = ((path, dotted(request, path)) for path, member in _REPLY_FORM_MEMBERS if member in request)
    return frozenset(declared_tool_names(request)), tuple((path, canonical_json(value)) for path, value in form if value is not None)


def call_kind(record: Record) -> tuple[Any, ...] | None:
    """The model a logged request was made to and its purpose, or None when the log does
    not record its settings (a tracer's span that keeps the messages alone)."""
    return (record.model, *purpose(record.request)) if record.settings_recorded else None


def other_kinds(first: tuple[Any, ...] | None, second: tuple[Any, ...] | None) -> bool:
    """Whether two call_kind values tell two kinds of call apart (one unknown tells nothing)."""
    return None not in (first, second) and first != second
