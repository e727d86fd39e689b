"""The line where a value starts in a JSON text, found by its JSON pointer: findings in a
pretty-printed document (a trajectory dump) point at the line of the message they are about."""

from __future__ import annotations

import json
import re

from ctxlint.ingest.schema import json_pointer

# A JSON string (it holds no raw newline), a number, true, false or null, a structural
# character, or a newline.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null|[\[\]{},:\n]')


def pointer_lines(text: str, wanted: set[str]) -> dict[str, int]:
    """{pointer: line} for each wanted pointer found in the text."""
    found: dict[str, int] = {}
    line = 1
    # one frame per open container: [its pointer, is it an array, next element's index or the
    # member's key, whether the next string is a key]
    frames: list[list] = []
    for token in _TOKENS.finditer(text):
        first = token.group()[0]
        if first == "\n":
            line += 1
            continue
        frame = frames[-1] if frames else None
        if first not in "]},:":
            if frame is not None and not frame[1] and frame[3] and first == '"':
                raw = token.group()[1:-1]
                frame[2] = json.loads(token.group()) if "\\" in raw else raw
                frame[3] = False
                continue
            pointer = "" if frame is None else frame[0] + json_pointer((frame[2],))
            if pointer in wanted:
                found[pointer] = line
                if len(found) == len(wanted):
                    return found
            if first in "[{":
                frames.append([pointer, first == "[", 0, first == "{"])
        elif first in "]}":
            if frames:
                frames.pop()
        elif first == "," and frame is not None:
            if frame[1]:
                frame[2] += 1
            else:
                frame[3] = True
    return found
