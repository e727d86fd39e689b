"""Structural validation of request bodies against the packaged chat-completions schema."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

import orjson

from ctxlint.caching import IdentityCache
from ctxlint.chat import json_type
from ctxlint.ingest.record import InputProblem

if TYPE_CHECKING:
    import jsonschema


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return orjson.loads(resources.files("ctxlint.ingest").joinpath("chat_request.schema.json").read_bytes())


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema  # only a body that breaks the schema needs it, to say how

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
SUPPORTED_KEYWORDS = {"type", "required", "properties", "items", "minItems", "enum", "anyOf", "$ref", "title", "description", "$schema", "$id", "$defs"}  # what conforms() reads; tests hold the schema to it


def conforms(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """A yes/no reading of a schema, for the keywords in SUPPORTED_KEYWORDS, without
    jsonschema's bookkeeping (which costs ~100 µs a message). Problems are still described
    by jsonschema."""
    return compiled(schema, defs)(value)


ANNOTATIONS = {"title", "description", "$schema", "$id", "$comment", "default", "examples", "format", "deprecated", "readOnly", "writeOnly"}


def readable_exactly(schema: Any) -> bool:
    """Whether conforms() saying yes means jsonschema says yes for this (local) schema: only
    keywords conforms reads, where it is as strict as jsonschema or stricter."""
    if not isinstance(schema, dict):
        return False
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword == "type":
            kinds = value if isinstance(value, list) else [value]
            if not all(isinstance(kind, str) and kind in _TYPE_CHECKS for kind in kinds):
                return False
        elif keyword == "enum":  # strings only: `in` would take true for 1
            if not isinstance(value, list) or not all(isinstance(option, str) for option in value):
                return False
        elif keyword == "required":
            if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
                return False
        elif keyword == "properties":
            if not isinstance(value, dict) or not all(readable_exactly(sub) for sub in value.values()):
                return False
        elif keyword == "minItems":
            if not isinstance(value, int) or isinstance(value, bool):
                return False
        elif keyword == "items" or keyword == "anyOf":
            subs = [value] if keyword == "items" else value
            if not isinstance(subs, list) or not all(readable_exactly(sub) for sub in subs):
                return False
        else:
            return False
    return True


_COMPILED: dict[int, tuple[dict, Callable[[Any], bool]]] = {}


def compiled(schema: dict[str, Any], defs: dict[str, Any]) -> Callable[[Any], bool]:
    """The schema as one check function, built once per schema object."""
    known = _COMPILED.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    refs: dict[str, Callable[[Any], bool]] = {}
    check = _compile(schema, defs, refs)
    _COMPILED[id(schema)] = (schema, check)
    return check


def _compile(schema: dict[str, Any], defs: dict[str, Any], refs: dict[str, Callable[[Any], bool]]) -> Callable[[Any], bool]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in refs:
            refs[name] = lambda value: target(value)  # filled in below; refs may recurse
            target = _compile(defs[name], defs, refs)
            refs[name] = target
        return refs[name]
    checks: list[Callable[[Any], bool]] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"] if isinstance(schema["type"], list) else [schema["type"]]))
    if "enum" in schema:
        options = schema["enum"]
        checks.append(lambda value: value in options)
    if "anyOf" in schema:
        alternatives = [_compile(option, defs, refs) for option in schema["anyOf"]]
        checks.append(lambda value: any(alternative(value) for alternative in alternatives))
    required = tuple(schema.get("required", ()))
    properties = {key: _compile(sub, defs, refs) for key, sub in schema.get("properties", {}).items()}
    if required or properties:
        def object_fits(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for key in required:
                if key not in value:
                    return False
            # A message names a few of the many properties a schema may list: walk the fewer.
            if len(value) < len(properties):
                for key, member in value.items():
                    check = properties.get(key)
                    if check is not None and not check(member):
                        return False
            else:
                for key, check in properties.items():
                    if key in value and not check(value[key]):
                        return False
            return True
        checks.append(object_fits)
    if "minItems" in schema:
        least = schema["minItems"]
        checks.append(lambda value: not isinstance(value, list) or len(value) >= least)
    if "items" in schema:
        item = _compile(schema["items"], defs, refs)

        def items_fit(value: Any) -> bool:
            if isinstance(value, list):
                for element in value:
                    if not item(element):
                        return False
            return True
        checks.append(items_fit)
    if not checks:
        return lambda value: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


# Parsed JSON holds these exact types; a value of another type (a subclass, from the
# Python API) is judged by isinstance, as the schema's type names say.
_EXACT_TYPES = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
                "boolean": (bool,), "null": (type(None),)}


def _type_check(kinds: list[str]) -> Callable[[Any], bool]:
    exact = frozenset(kind for name in kinds for kind in _EXACT_TYPES[name])
    checks = tuple(_TYPE_CHECKS[name] for name in kinds)
    return lambda value: type(value) in exact or any(check(value) for check in checks)


class _ValidCache:
    """Request parts already found valid: a history re-sent N times is checked once. Messages
    are shared objects (ingest.intern), known by identity; the rest by a digest."""

    def __init__(self, size: int = 16_000) -> None:
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


def fits(body: Any, known: int = 0) -> bool:
    """Whether the body fits the schema, checking each distinct message once per run (and
    none of the first `known`, which are an earlier valid record's own objects)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    schema = _schema()
    message = schema["$defs"]["message"]
    return len(body["messages"]) >= schema["properties"]["messages"].get("minItems", 0) \
        and _VALID.valid_part({**body, "messages": []}, _without_messages()) \
        and all(_VALID.valid_message(m, message) for m in body["messages"][known:])


@lru_cache(maxsize=1)
def _without_messages() -> dict[str, Any]:
    """The schema less what it says of `messages` (fits checks how many there are, and each one)."""
    schema = _schema()
    return {**schema, "properties": {name: sub for name, sub in schema["properties"].items() if name != "messages"}}


def json_pointer(path: Any) -> str:
    return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in path) if path else ""


def schema_problem(body: dict[str, Any], file: str, line: int, pointer_base: str = "", known: int = 0,
                   sent: Callable[[str], str] | None = None) -> InputProblem | None:
    """The CTX900 problem for a request body that breaks the schema, or None when it fits;
    `sent` puts a pointer into the body back where the body that was sent has it."""
    problems = request_problems(body, known)
    if not problems:
        return None
    pointer, what = problems[0]
    pointer = sent(pointer) if sent is not None else pointer
    what = what if len(what) <= 160 else what[:159] + "…"
    more = f" (and {len(problems) - 1} more schema problems)" if len(problems) > 1 else ""
    return InputProblem(file, line, f"request breaks the chat-completions schema at {pointer_base + pointer or '/'}: {what}{more}", pointer_base + pointer)


def request_problems(body: dict[str, Any], known: int = 0) -> list[tuple[str, str]]:
    """(JSON pointer, what is wrong) for each schema violation, the deepest first per branch."""
    if fits(body, known):
        return []
    from jsonschema.exceptions import best_match

    problems = []
    for error in sorted(_validator().iter_errors(body), key=lambda e: list(map(str, e.absolute_path))):
        best = best_match([error])
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
        if all(isinstance(option, dict) and set(option) == {"required"} for option in expected):
            wanted = " or ".join(repr(key) for option in expected for key in option["required"])
            return f"needs {wanted} (schema keyword '{keyword}')"
        return f"is {json_type(error.instance)}, which matches none of the allowed forms (schema keyword '{keyword}')"
    if keyword == "minItems":
        return f"is an empty array, expected at least {expected} item{'s' * (expected != 1)} (schema keyword 'minItems')" if not error.instance \
            else f"has {len(error.instance)} items, expected at least {expected} (schema keyword 'minItems')"
    if keyword in ("required", "additionalProperties", "dependentRequired"):
        return f"{error.message} (schema keyword '{keyword}')"
    return f"does not satisfy '{keyword}': {str(expected)[:80]} (schema keyword '{keyword}')"
