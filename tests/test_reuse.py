"""The shared-prefix decoder reads every line exactly as a full parse would, whatever the
serializer, and reuses history only from lines that became records."""

from __future__ import annotations

import json

import orjson
import pytest

from ctxlint.api import CheckOptions, run_check
from ctxlint.ingest.reuse import SharedPrefixDecoder
from ctxlint.report.json_format import report_dict

SYSTEM = {"role": "system", "content": "You plan trips. Budget: 300 €, no red-eye flights."}
USER = {"role": "user", "content": "Lima in May, 东京 in June?"}
CALL = {"role": "assistant", "content": "", "reasoning_content": "search first", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"Lima\"}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "{\"price\": 280, \"ok\": true, \"ratio\": 1.0}"}


def session_lines(dumps) -> list[bytes]:
    histories = [[SYSTEM, USER], [SYSTEM, USER, CALL, RESULT], [SYSTEM, USER, CALL, RESULT, {"role": "user", "content": "and June?"}]]
    return [dumps({"session_id": "s", "request": {"model": "deepseek-chat", "messages": history}}) for history in histories]


SERIALIZERS = {
    "orjson": orjson.dumps,
    "json default": lambda value: json.dumps(value).encode(),
    "json compact utf-8": lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(),
    "json indent-free spaces utf-8": lambda value: json.dumps(value, ensure_ascii=False).encode(),
}


@pytest.mark.parametrize("name", SERIALIZERS)
def test_reused_lines_parse_as_a_full_parse_would(name):
    decoder = SharedPrefixDecoder()
    lines = session_lines(SERIALIZERS[name])
    parsed = [decoder.loads(line) for line in lines]
    assert parsed == [orjson.loads(line) for line in lines]
    assert decoder.reused == 4  # the third line took the second line's four messages
    third, second = parsed[2]["request"]["messages"], parsed[1]["request"]["messages"]
    assert all(a is b for a, b in zip(third, second))  # one object per message, shared


def test_an_edited_history_is_parsed_whole():
    decoder = SharedPrefixDecoder()
    first, second = session_lines(orjson.dumps)[:2]
    decoder.loads(first)
    edited = second.replace(b"Budget: 300", b"Budget: 900")
    assert decoder.loads(edited) == orjson.loads(edited) and decoder.reused == 0


def test_a_messages_key_elsewhere_in_the_line_is_not_mistaken_for_the_request():
    decoder = SharedPrefixDecoder()
    messages = [SYSTEM, USER]
    decoder.loads(orjson.dumps({"session_id": "s", "request": {"messages": messages}}))
    decoy = orjson.dumps({"session_id": "s", "meta": {"messages": messages + [USER]}, "request": {"messages": [USER]}})
    assert decoder.loads(decoy) == orjson.loads(decoy)


def test_a_broken_line_after_a_reused_prefix_reports_the_full_parse_error():
    decoder = SharedPrefixDecoder()
    first, second = session_lines(orjson.dumps)[:2]
    decoder.loads(first)
    broken = second[:-3] + b"]]}"
    with pytest.raises(orjson.JSONDecodeError) as reused:
        decoder.loads(broken)
    with pytest.raises(orjson.JSONDecodeError) as full:
        orjson.loads(broken)
    assert (reused.value.msg, reused.value.pos) == (full.value.msg, full.value.pos)


def test_messages_of_a_rejected_line_are_checked_again_when_reused(tmp_path):
    bad = {"role": "user", "content": 42}  # content must be text or parts: the line is CTX900
    lines = [{"session_id": "s", "request": {"model": "gpt-4o", "messages": [SYSTEM, bad]}},
             {"session_id": "s", "request": {"model": "gpt-4o", "messages": [SYSTEM, bad, {"role": "assistant", "content": "ok"}]}}]
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    report = report_dict(run_check([str(log)], CheckOptions()))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX900", 1), ("CTX900", 2)]
