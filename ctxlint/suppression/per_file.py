"""Per-file ignores: glob (relative to the config file's folder) -> rule selectors, with a reason."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ctxlint.config import PerFileIgnore
from ctxlint.rules import Finding
from ctxlint.selection import selected_codes


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: ** spans folders, * and ? stay within one."""
    parts, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts) + r"\Z")


def _relative(file: str, root: Path) -> str:
    path = Path(file)
    try:
        return (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def matches(entry: PerFileIgnore, file: str, root: Path) -> bool:
    regex = glob_regex(entry.pattern.removeprefix("./"))
    relative = _relative(file, root)
    return bool(regex.match(relative) or ("/" not in entry.pattern and regex.match(Path(file).name)))


def apply(findings: list[Finding], entries: list[PerFileIgnore], root: Path) -> tuple[list[Finding], int]:
    """(the findings kept, how many the entries ignored)."""
    if not entries:
        return findings, 0
    codes = [(entry, set(selected_codes(list(entry.codes), []))) for entry in entries]
    kept = [f for f in findings if not any(f.code in chosen and matches(entry, f.file, root) for entry, chosen in codes)]
    return kept, len(findings) - len(kept)
