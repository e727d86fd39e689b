"""Turn the paths a user gave into the list of inputs to read, each with its reader."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from ctxlint.ingest.text_logs import logs_requests

LOOP_DIR = re.compile(r"^loop-(\d+)$")
# Matched on a name without its compression suffix: ingest.jsonl.open_binary reads gzip,
# bzip2 and xz, and names the others (zstd, lz4) in an error, not a flood of CTX900.
COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".lz4")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
LOG_SUFFIXES = (".log",)  # other logs take these names too: read only when they hold JSON
JSON_SUFFIXES = (".json", ".har", ".traj")  # a HAR file is a JSON document, and so is a SWE-agent trajectory
YAML_SUFFIXES = (".yaml", ".yml")
# What log rotation appends to a log's name: logrotate and Python's RotatingFileHandler
# number the older files (app.jsonl.1, app.jsonl.2.gz, the higher the older); logrotate's
# dateext and Python's TimedRotatingFileHandler date them (app.jsonl-20261204,
# app.log.2026-12-04_10). `live` is the name the log is written under.
ROTATED = re.compile(r"(?P<live>.+\.(?:jsonl|ndjson|log))"
                     r"(?:\.(?P<number>\d{1,4})|[.-](?P<date>\d{4}-?\d{2}-?\d{2}(?:[_T-]?\d{2}(?:[-:]?\d{2}){0,2})?))(?:\.(?:gz|bz2|xz|zst|lz4))?",
                     re.IGNORECASE)


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
    """The reader of a file by its name (a rotated log's by the name it is written under),
    None for a name that is no request log's. A .jsonl that opens as JSON spread over
    lines is a JSON document; a .log (a name other logs take too) is read only when it
    opens as JSON, or when its first lines log requests after a text prefix (a time, a
    level: an application's own log)."""
    live = _uncompressed(live_name(path).lower())
    if live.endswith(JSONL_SUFFIXES + LOG_SUFFIXES):
        opening = _first_line(path)
        if live.endswith(LOG_SUFFIXES) and (opening is None or opening[:1] not in (b"{", b"[")) and not _logs_requests_as_text(path):
            return None
        return _reader_by_opening(opening)
    if live.endswith(YAML_SUFFIXES):
        return "cassette"
    if live.endswith(JSON_SUFFIXES):
        return "json"
    return None


def live_name(path: str) -> str:
    """The name a log file is written under: a rotated file's without what rotation added."""
    name = os.path.basename(path)
    rotated = ROTATED.fullmatch(name)
    return rotated["live"] if rotated is not None else name


@lru_cache(maxsize=4096)  # asked for every record of a keyless log: its files are few
def live_path(path: str) -> str:
    """The path a log file is written under: a rotated file's log, which goes on in it."""
    return os.path.join(os.path.dirname(path), live_name(path))


def named_as_lines(path: str) -> bool:
    """Whether the file's name (a rotated log's live name) says it holds JSON Lines."""
    return _uncompressed(live_name(path).lower()).endswith(JSONL_SUFFIXES + LOG_SUFFIXES)


def named_as_text_log(path: str) -> bool:
    """Whether the file's name (a rotated log's live name) is an application's log's: its
    lines of text are the application's own (ingest.text_logs), not broken records."""
    return _uncompressed(live_name(path).lower()).endswith(LOG_SUFFIXES)


def _uncompressed(name: str) -> str:
    return next((name[:-len(suffix)] for suffix in COMPRESSED if name.endswith(suffix)), name)


def _first_line(path: str) -> bytes | None:
    """The file's first line that is not blank, stripped (of its first 4 KB), or None when
    it has none or cannot be read here (the reader reports what keeps it from being read).
    A bracket alone there is JSON spread over many lines (jq's output without -c, an array
    an agent framework writes as .jsonl), which the JSON document reader reads."""
    from ctxlint.ingest.jsonl import READ_ERRORS, open_binary  # the opener that also decompresses

    if not os.path.isfile(path):
        return None  # a pipe is read once, by its reader
    try:
        with open_binary(path) as stream:
            for _ in range(64):  # past a few blank lines, not through a file of them
                line = stream.readline(4096)
                if line.strip():
                    return line.removeprefix(b"\xef\xbb\xbf").strip()
                if not line:
                    return None  # the end of the file
    except (*READ_ERRORS, ValueError):
        pass
    return None


def _logs_requests_as_text(path: str) -> bool:
    """Whether a text log's first lines hold a request after its logger's prefix (text_logs.logs_requests)."""
    from ctxlint.ingest.jsonl import READ_ERRORS, head_lines, open_binary

    try:
        with open_binary(path) as stream:
            head = head_lines(stream)
    except (*READ_ERRORS, ValueError):
        return False
    return logs_requests(head)


def _reader_by_opening(opening: bytes | None) -> str:
    """A JSON document's reader for a file whose first line is a bracket alone (JSON spread
    over lines), else JSON Lines."""
    return "json" if opening in (b"{", b"[") else "jsonl"


def oldest_first(sources: list[Source]) -> list[Source]:
    """The sources with each rotated log's files in the order they were written: its
    numbered files from the highest number, then its dated ones by date, then the live
    file. The other sources keep their places, and a log's files take the places its
    files had (a folder's name order, or a shell glob's, puts the live file first)."""
    families: dict[str, list[int]] = {}
    for position, source in enumerate(sources):
        families.setdefault(live_path(source.path), []).append(position)
    ordered = list(sources)
    for places in families.values():
        if len(places) > 1:
            members = sorted((sources[place] for place in places), key=lambda source: rotation_age(source.path))
            for place, member in zip(places, members):
                ordered[place] = member
    return ordered


def rotation_age(path: str) -> tuple[int, int | str]:
    """Where a file comes in its rotated log, oldest first."""
    rotated = ROTATED.fullmatch(os.path.basename(path))
    if rotated is None:
        return 2, 0  # the live file: written last
    if rotated["number"] is not None:
        return 0, -int(rotated["number"])
    return 1, re.sub(r"\D", "", rotated["date"])


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
            if forced_format == "snapshot":
                errors.append("-: a snapshot run is a folder (of loop-N folders), which stdin cannot hold; give the folder")
            else:
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
                errors.append(f"{path}: no request logs found in this directory (looked for *.jsonl, *.ndjson, *.json, compressed or not, "
                              "rotated or not, *.log that hold JSON, *.yaml cassettes, *.har recordings and loop-N snapshot folders)")
            sources.extend(found)
            continue
        if not os.path.exists(path):
            broken = os.path.islink(path)
            errors.append(f"{path}: " + ("a symbolic link to nothing (its target is missing, or the link leads back to itself)" if broken else "no such file or directory"))
            continue
        sources.append(Source(path, forced_format or format_of_file(path) or _reader_by_opening(_first_line(path))))  # a name no reader claims: by how it opens
    return oldest_first(_once_each(sources)), errors


def _once_each(sources: list[Source]) -> list[Source]:
    """The sources less a file given again (named twice, or named and in a folder given,
    or through a link): read twice, its requests would read as sent twice."""
    seen: set[str] = set()
    kept = []
    for source in sources:
        where = source.path if source.path == "-" else os.path.realpath(source.path)
        if where not in seen:
            seen.add(where)
            kept.append(source)
    return kept
