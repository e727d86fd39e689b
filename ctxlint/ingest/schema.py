"""Structural validation of request bodies against the packaged chat-completions schema."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema
import orjson

from ctxlint.caching import IdentityCache
from ctxlint.chat import json_type
from ctxlint.ingest.record import InputProblem


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return orjson.loads(resources.files("ctxlint.ingest").joinpath("chat_request.schema.json").read_bytes())


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = _schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


_TYPE_CHECKS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
SUPPORTED_KEYWORDS = {"type", "required", "properties", "items", "enum", "anyOf", "$ref", "title", "description", "$schema", "$id", "$defs"}  # what conforms() reads; tests hold the schema to it


def conforms(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """A yes/no reading of the packaged schema, for the keywords it uses, without jsonschema's
    bookkeeping (which costs ~100 µs a message). Problems are still described by jsonschema."""
    if "$ref" in schema:
        return conforms(value, defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPE_CHECKS[kind](value) for kind in kinds):
            return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "anyOf" in schema and not any(conforms(value, option, defs) for option in schema["anyOf"]):
        return False
    if isinstance(value, dict):
        if any(key not in value for key in schema.get("required", ())):
            return False
        for key, subschema in schema.get("properties", {}).items():
            if key in value and not conforms(value[key], subschema, defs):
                return False
    if isinstance(value, list) and "items" in schema:
        return all(conforms(item, schema["items"], defs) for item in value)
    return True


class _ValidCache:
    """Request parts already found valid: a history re-sent N times is checked once. Messages
    are shared objects (ingest.intern), known by identity; the rest by a digest."""

    def __init__(self, size: int = 200_000) -> None:
        self._digests: OrderedDict[bytes, None] = OrderedDict()
        self._messages = IdentityCache(size)
        self._size = size

    def valid_message(self, message: Any, schema: dict[str, Any]) -> bool:
        if self._messages.get(message):
            return True
        return self._conforms(message, schema) and self._messages.put(message, True)

    def valid_part(self, part: Any, schema: dict[str, Any]) -> bool:
        digest = hashlib.blake2b(orjson.dumps(part), digest_size=16).digest()
        if digest in self._digests:
            self._digests.move_to_end(digest)
            return True
        if not self._conforms(part, schema):
            return False
        self._digests[digest] = None
        if len(self._digests) > self._size:
            self._digests.popitem(last=False)
        return True

    @staticmethod
    def _conforms(part: Any, schema: dict[str, Any]) -> bool:
        try:
            return conforms(part, schema, _schema()["$defs"])
        except RecursionError:
            return False


_VALID = _ValidCache()


def fits(body: Any) -> bool:
    """Whether the body fits the schema, checking each distinct message once per run."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    schema = _schema()
    message = schema["$defs"]["message"]
    return _VALID.valid_part({**body, "messages": []}, schema) and all(_VALID.valid_message(m, message) for m in body["messages"])


def json_pointer(path: Any) -> str:
    return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in path) if path else ""


def schema_problem(body: dict[str, Any], file: str, line: int, pointer_base: str = "") -> InputProblem | None:
    """The CTX900 problem for a request body that breaks the schema, or None when it fits."""
    problems = request_problems(body)
    if not problems:
        return None
    pointer, what = problems[0]
    what = what if len(what) <= 160 else what[:159] + "…"
    more = f" (and {len(problems) - 1} more schema problems)" if len(problems) > 1 else ""
    return InputProblem(file, line, f"request breaks the chat-completions schema at {pointer_base + pointer or '/'}: {what}{more}", pointer_base + pointer)


def request_problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON pointer, what is wrong) for each schema violation, the deepest first per branch."""
    if fits(body):
        return []
    problems = []
    for error in sorted(_validator().iter_errors(body), key=lambda e: list(map(str, e.absolute_path))):
        best = jsonschema.exceptions.best_match([error])
        pointer = json_pointer(best.absolute_path)
        problems.append((pointer, describe(best)))
    return problems


def describe(error: jsonschema.ValidationError) -> str:
    """What is wrong, without quoting the log's values: messages may hold private text."""
    keyword, expected = error.validator, error.validator_value
    if keyword == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"is {json_type(error.instance)}, expected {wanted} (schema keyword 'type')"
    if keyword == "enum":
        return f"is not one of {', '.join(map(str, expected))} (schema keyword 'enum')"
    if keyword in ("anyOf", "oneOf"):
        return f"is {json_type(error.instance)}, which matches none of the allowed forms (schema keyword '{keyword}')"
    if keyword in ("required", "additionalProperties", "dependentRequired"):
        return f"{error.message} (schema keyword '{keyword}')"
    return f"does not satisfy '{keyword}': {str(expected)[:80]} (schema keyword '{keyword}')"
