from __future__ import annotations

from typing import Any, Iterable

from ctxlint.chat import assistant_calls, call_function, call_stands, parsed_arguments, resume_at_last_calls, short_hash
from ctxlint.ingest.schema import compiled, describe, json_pointer, readable_exactly
from ctxlint.request_terms import declared_tools
from ctxlint.rules.base import Rule, Violation


VERDICT_CACHE_SIZE = 20_000


def _fits(check: Any, value: Any) -> bool:
    try:
        return check(value)
    except RecursionError:
        return False  # too deep to read quickly: jsonschema decides


class ToolArgumentsSchemaViolation(Rule):
    """
    ## What it does
    Validates each tool call's arguments against the JSON Schema the same request
    declares for that tool (`tools[].function.parameters`) and flags a call that does
    not satisfy it, naming the failing path and keyword. Calls whose arguments are not
    a JSON object are CTX012's; tools whose schema is itself invalid are not judged.
    Nor is a call its tool answered with an error (an Anthropic `is_error` result, or a
    result that reports an error or a failed validation): the app refused the broken call
    and the model sees why, which is how frameworks that validate arguments (pydantic-ai,
    LangChain) ask for a corrected call.

    ## Why is this bad?
    A call that breaks its own tool's schema was either rewritten by the app, replayed
    from another tool version, or executed from a hallucinated shape. The history then
    teaches the model that the broken shape works.

    ## Example
    Declared `{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`,
    called with `{"town": "Paris"}`.

    Use instead: send back the call the model made, with the tool's current schema.
    """

    code = "CTX013"
    name = "tool-arguments-schema-violation"
    severity = "error"
    remediation = "Send back tool calls exactly as the model made them, and declare the schema the tool actually takes."

    def check(self, ctx) -> Iterable[Violation]:
        declared = declared_tools(ctx.request)
        if not declared:
            return
        for index, position, call in assistant_calls(ctx.messages, resume_at_last_calls(ctx.messages, ctx.unchanged(self))):
            name, arguments = call_function(call)
            schema = declared.get(name, {}).get("parameters")
            value, problem = parsed_arguments(arguments)
            if not isinstance(schema, dict) or value is None or problem:
                continue
            error = self._first_error(schema, value)
            if error is not None and call_stands(ctx.messages, index, call.get("id")):
                path, keyword, what = error
                yield Violation(
                    f"arguments of tool call {call.get('id')!r} ({name}) break its schema at {path}: {what}",
                    key=(call.get("id"), name, path, keyword), message_index=index, tool_call_id=call.get("id"),
                    pointer=f"/messages/{index}/tool_calls/{position}/function/arguments",
                    evidence={"path": path, "keyword": keyword},
                )

    def __init__(self) -> None:
        # Every request re-sends the history's calls and the same tools: judge each once.
        self._quick: dict[str, Any] = {}  # schema digest -> compiled quick check, or None
        self._validators: dict[str, Any] = {}  # schema digest -> jsonschema validator (None: a broken schema)
        self._verdicts: dict[tuple[str, str], tuple[str, str, str] | None] = {}

    def _first_error(self, schema: dict, value: dict) -> tuple[str, str, str] | None:
        """(JSON pointer, schema keyword, what is wrong) of the first violation, or None."""
        schema_key = short_hash(schema)
        key = (schema_key, short_hash(value))
        if key not in self._verdicts:
            if len(self._verdicts) > VERDICT_CACHE_SIZE:
                self._verdicts.clear()
            if schema_key not in self._quick:
                self._quick[schema_key] = compiled(schema, {}) if readable_exactly(schema) else None
            quick = self._quick[schema_key]
            # Most arguments fit: a quick yes settles them; jsonschema judges and describes the rest.
            self._verdicts[key] = None if quick is not None and _fits(quick, value) else self._validate(self._validator(schema_key, schema), value)
        return self._verdicts[key]

    def _validator(self, schema_key: str, schema: dict) -> Any:
        if schema_key not in self._validators:
            self._validators[schema_key] = self._compile(schema)
        return self._validators[schema_key]

    @staticmethod
    def _compile(schema: dict) -> Any:
        """A validator for a declared parameters schema, or None when the schema itself is broken."""
        import jsonschema  # only arguments the quick check cannot pass get here

        try:
            validator_class = jsonschema.validators.validator_for(schema)
            validator_class.check_schema(schema)
            return validator_class(schema)
        except jsonschema.exceptions.SchemaError:
            return None

    @staticmethod
    def _validate(validator: Any, value: dict) -> tuple[str, str, str] | None:
        if validator is None:
            return None
        import jsonschema
        import referencing.exceptions

        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        except referencing.exceptions.Unresolvable:
            return None
        if error is None:
            return None
        return json_pointer(error.absolute_path) or "/", str(error.validator), describe(error)
