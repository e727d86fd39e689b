"""Bad lines get a located CTX900 message and the rest of the file is still checked."""

from __future__ import annotations

import orjson

from helpers import json_report

GOOD = orjson.dumps({"session_id": "a", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}})


def findings(tmp_path, data: bytes):
    log = tmp_path / "log.jsonl"
    log.write_bytes(data)
    return [(f["code"], f["line"], f["message"]) for f in json_report(str(log))["findings"]]


def test_bom_first_line_is_read(tmp_path):
    assert [(c, l) for c, l, _ in findings(tmp_path, b"\xef\xbb\xbf" + GOOD + b"\n")] == [("CTX003", 1)]


def test_invalid_utf8_nul_and_cut_off_last_line(tmp_path):
    data = b'{"request": "\xff\xfe"}\n' + b'{"a": 1}\x00\n' + GOOD + b"\n" + GOOD[:30]
    found = findings(tmp_path, data)
    assert [(c, l) for c, l, _ in found] == [("CTX900", 1), ("CTX900", 2), ("CTX003", 3), ("CTX900", 4)]
    messages = [m for _, _, m in found]
    assert "invalid UTF-8" in messages[0]
    assert "NUL byte" in messages[1]
    assert "cut off" in messages[3]


def test_empty_file_is_clean(tmp_path):
    assert findings(tmp_path, b"") == []
