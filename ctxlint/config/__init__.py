"""Configuration: [tool.ctxlint] in pyproject.toml or a ctxlint.toml, found upward from the
working directory (the closest wins), validated by the packaged JSON Schema. TOML is data:
nothing in a config file is ever run."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from ctxlint.rules import RULES
from ctxlint.selection import UnknownSelector, default_codes, resolve_per_code, validate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAMES = ("ctxlint.toml", "pyproject.toml")  # in one folder, ctxlint.toml wins


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class PerFileIgnore:
    pattern: str
    codes: tuple[str, ...]
    reason: str


@dataclass(slots=True)
class Config:
    source: Path | None = None  # the file the settings came from, None for defaults
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    fail_on_unchecked: bool = False
    severities: dict[str, str] = field(default_factory=dict)  # code -> severity
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> options
    session_key: str | None = None
    context_window: int | None = None
    model: str | None = None  # the model of requests that name none
    model_windows: dict[str, int] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    per_file_ignores: list[PerFileIgnore] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.source.parent if self.source else Path.cwd()


@lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    return orjson.loads(resources.files("ctxlint.config").joinpath("schema.json").read_bytes())


def discover(start: Path | None = None) -> Path | None:
    """The closest ctxlint.toml, or pyproject.toml with a [tool.ctxlint] table, at or above start."""
    folder = (start or Path.cwd()).resolve()
    for directory in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate)):
                return candidate
    return None


def _has_tool_table(pyproject: Path) -> bool:
    """Whether this pyproject.toml configures ctxlint; a broken one that does is an error."""
    try:
        if "[tool.ctxlint" not in pyproject.read_text(encoding="utf-8", errors="replace"):
            return False
    except OSError:
        return False
    return "ctxlint" in _read_toml(pyproject).get("tool", {})


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def load(path: Path) -> Config:
    data = _read_toml(path)
    table_name = "ctxlint.toml"
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("ctxlint", {})
        table_name = "[tool.ctxlint]"
    return from_table(data, path, table_name)


def from_table(data: dict[str, Any], path: Path, table_name: str) -> Config:
    _check_schema(data, path, table_name)
    where = f" in {path}"
    try:
        for key in ("select", "extend-select", "ignore"):
            validate(data.get(key, []), f"{where} ({key})")
        severities = resolve_per_code(data.get("severity", {}), f"{where} (severity)")
        options = {}
        for selector, values in data.get("rules", {}).items():
            code = _one_rule(selector, path)
            options[code] = _rule_options(code, values, path)
        ignores = []
        for pattern, entry in data.get("per-file-ignores", {}).items():
            validate(entry["codes"], f"{where} (per-file-ignores {pattern!r})")
            ignores.append(PerFileIgnore(pattern, tuple(entry["codes"]), entry["reason"]))
    except UnknownSelector as error:
        raise ConfigError(str(error)) from None
    models = data.get("models", {})
    return Config(
        source=path,
        select=data.get("select"),
        extend_select=data.get("extend-select", []),
        ignore=data.get("ignore", []),
        fail_on=data.get("fail-on"),
        fail_on_unchecked=data.get("fail-on-unchecked", False),
        severities=severities,
        rule_options=options,
        session_key=data.get("session-key"),
        context_window=data.get("context-window"),
        model=data.get("model"),
        model_windows={name: m["context-window"] for name, m in models.items() if "context-window" in m},
        aliases={name: m["like"] for name, m in models.items() if "like" in m},
        per_file_ignores=ignores,
    )


def _check_schema(data: dict[str, Any], path: Path, table_name: str) -> None:
    import jsonschema  # only a config file needs it

    validator = jsonschema.Draft202012Validator(config_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return
    key = ".".join(map(str, error.absolute_path))
    at = f"{table_name} {key}" if key else table_name
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        hint = f"; known keys: {', '.join(known)}" if known else ""
        raise ConfigError(f"{path}: unknown key {', '.join(map(repr, unknown))} at {at}{hint}")
    if error.validator == "pattern" and "description" in error.schema:  # what the pattern means, not the pattern
        raise ConfigError(f"{path}: {at}: {error.instance!r} is not a {error.schema['description'][0].lower()}{error.schema['description'][1:].rstrip('.')}")
    raise ConfigError(f"{path}: {at}: {error.message}")


def _one_rule(selector: str, path: Path) -> str:
    upper = selector.upper()
    if upper in RULES:
        return upper
    code = next((c for c, rule in RULES.items() if rule.name == selector.lower()), None)
    if code is None:
        raise ConfigError(f"{path}: [rules.{selector}] names no rule; use a code (CTX007) or a rule name")
    return code


def _rule_options(code: str, values: dict[str, Any], path: Path) -> dict[str, Any]:
    rule = RULES[code]
    for name, value in values.items():
        if name not in rule.options:
            known = ", ".join(rule.options) or "none"
            raise ConfigError(f"{path}: unknown option {name!r} at rules.{code}; {code} options: {known}")
        default = rule.options[name]
        expected = (int, float) if isinstance(default, float) else type(default)
        if isinstance(value, bool) != isinstance(default, bool) or not isinstance(value, expected):
            raise ConfigError(f"{path}: rules.{code}.{name} must be {type(default).__name__} like the default {default!r}, got {value!r}")
    return dict(values)


def resolve(config_path: str | None, isolated: bool) -> Config:
    """The settings of this run: --config, else discovered, else defaults."""
    if isolated:
        return Config()
    if config_path is not None:
        path = Path(config_path)
        if not path.is_file():
            raise ConfigError(f"{config_path}: no such config file")
        return load(path)
    found = discover()
    return load(found) if found is not None else Config()


def config_settings(config: Config) -> dict[str, Any]:
    """The settings as config keys, for `ctxlint config`."""
    return {
        "select": config.select or default_codes(), "extend-select": config.extend_select, "ignore": config.ignore,
        "fail-on": config.fail_on or "error", "fail-on-unchecked": config.fail_on_unchecked,
        "severity": config.severities, "rules": config.rule_options, "session-key": config.session_key,
        "context-window": config.context_window, "model": config.model,
        "models": {name: {**({"context-window": config.model_windows[name]} if name in config.model_windows else {}),
                          **({"like": config.aliases[name]} if name in config.aliases else {})}
                   for name in sorted({*config.model_windows, *config.aliases})},
        "per-file-ignores": {e.pattern: {"codes": list(e.codes), "reason": e.reason} for e in config.per_file_ignores},
    }
