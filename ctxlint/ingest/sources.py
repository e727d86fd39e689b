"""Turn the paths a user gave into the list of inputs to read, each with its reader."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

LOOP_DIR = re.compile(r"^loop-(\d+)$")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".log.gz")
JSON_SUFFIXES = (".json", ".json.gz")
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(slots=True, frozen=True)
class Source:
    path: str  # as the user spelled it (or joined under the directory they gave)
    format: str  # jsonl, json, cassette, snapshot


def is_snapshot_run(path: str) -> bool:
    """A run folder: it holds loop-N folders with llm-request.jsonl in them."""
    try:
        return any(LOOP_DIR.match(name) and os.path.isfile(os.path.join(path, name, "llm-request.jsonl")) for name in os.listdir(path))
    except OSError:
        return False


def format_of_file(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith(JSONL_SUFFIXES):
        return "json" if _opens_a_document(path) else "jsonl"
    if lower.endswith(YAML_SUFFIXES):
        return "cassette"
    if lower.endswith(JSON_SUFFIXES):
        return "json"
    return None


def _opens_a_document(path: str) -> bool:
    """Whether a file named as JSON Lines opens with a bracket alone on its first line: JSON
    spread over many lines (jq's output without -c, an array an agent framework writes
    as .jsonl), which the JSON document reader reads."""
    from ctxlint.ingest.jsonl import open_binary  # the opener that also reads gzip

    if not os.path.isfile(path):
        return False  # a pipe is read once, by its reader
    try:
        with open_binary(path) as stream:
            for _ in range(64):  # past a few blank lines, not through a file of them
                line = stream.readline(4096)
                if not line.strip():
                    if not line:
                        return False  # the end of the file
                    continue
                return line.removeprefix(b"\xef\xbb\xbf").strip() in (b"{", b"[")
    except (OSError, EOFError, ValueError):
        pass  # the reader reports what keeps the file from being read
    return False


def _walk(directory: str) -> list[Source]:
    found: list[Source] = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        if is_snapshot_run(root):
            found.append(Source(root, "snapshot"))  # its files are its reader's to read (or count as skipped)
            dirs[:] = [d for d in dirs if not LOOP_DIR.match(d)]
            continue
        for name in sorted(files):
            path = os.path.join(root, name)
            fmt = format_of_file(path)  # the path, not the name: a .jsonl is opened to see how it starts
            if fmt is None:
                continue
            found.append(Source(path, fmt))
    return found


def expand(paths: list[str], forced_format: str | None = None) -> tuple[list[Source], list[str]]:
    """(sources, errors): every path resolved, or one error line naming it."""
    sources: list[Source] = []
    errors: list[str] = []
    for path in paths:
        if path == "-":
            sources.append(Source("-", forced_format or "jsonl"))
            continue
        if not os.path.exists(path) and any(ch in path for ch in "*?["):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                errors.append(f"{path}: the pattern matches no file")
            for match in matches:
                found, more_errors = expand([match], forced_format)
                sources.extend(found)
                errors.extend(more_errors)
            continue
        if os.path.isdir(path):
            if forced_format == "snapshot" or (forced_format is None and is_snapshot_run(path)):
                sources.append(Source(path, "snapshot"))
                continue
            found = _walk(path)
            if forced_format:
                found = [Source(s.path, forced_format) if s.format != "snapshot" else s for s in found]
            if not found:
                errors.append(f"{path}: no request logs found in this directory (looked for *.jsonl, *.ndjson, *.json, gzipped or not, *.yaml cassettes and loop-N snapshot folders)")
            sources.extend(found)
            continue
        if not os.path.exists(path):
            errors.append(f"{path}: no such file or directory")
            continue
        sources.append(Source(path, forced_format or format_of_file(path) or "jsonl"))
    return sources, errors
