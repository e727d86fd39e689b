"""Structural validation of request bodies against the packaged chat-completions schema."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema
import orjson

from ctxlint.chat import json_type
from ctxlint.ingest.record import InputProblem


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return orjson.loads(resources.files("ctxlint.ingest").joinpath("chat_request.schema.json").read_bytes())


@lru_cache(maxsize=2)
def _validator(definition: str | None = None) -> jsonschema.protocols.Validator:
    """The whole request schema, or one of its $defs (with the others in reach)."""
    schema = _schema()
    if definition is not None:
        schema = {"$schema": schema["$schema"], "$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


class _ValidCache:
    """Digests of request parts already found valid: a history re-sent N times is checked once."""

    def __init__(self, size: int = 200_000) -> None:
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._size = size

    def valid(self, part: Any, definition: str | None) -> bool:
        digest = hashlib.blake2b(orjson.dumps(part), digest_size=16).digest()
        if digest in self._seen:
            self._seen.move_to_end(digest)
            return True
        if not _validator(definition).is_valid(part):
            return False
        self._seen[digest] = None
        if len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True


_VALID = _ValidCache()


def fits(body: Any) -> bool:
    """Whether the body fits the schema, checking each distinct message once per run."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return False
    skeleton = {**body, "messages": []}
    return _VALID.valid(skeleton, None) and all(_VALID.valid(m, "message") for m in body["messages"])


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
