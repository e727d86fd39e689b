"""Structural validation of request bodies against the packaged chat-completions schema."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema
import orjson


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = orjson.loads(resources.files("ctxlint.ingest").joinpath("chat_request.schema.json").read_bytes())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def json_pointer(path: Any) -> str:
    return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in path) if path else ""


def request_problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON pointer, what is wrong) for each schema violation, the deepest first per branch."""
    problems = []
    for error in sorted(_validator().iter_errors(body), key=lambda e: list(map(str, e.absolute_path))):
        best = jsonschema.exceptions.best_match([error])
        pointer = json_pointer(best.absolute_path)
        problems.append((pointer, f"{best.message} (schema keyword '{best.validator}')"))
    return problems
