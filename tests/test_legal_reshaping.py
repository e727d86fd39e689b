"""Every rule case, reshaped the ways real apps legally reshape what they send, gives the same
findings at the same lines: text as a list of text parts, the null members an SDK's
`model_dump()` writes into an assistant message, a tool result's `name`, and the results of
parallel calls sent back in another order (the API pairs them by call id). A rule that reads
the shape of a message instead of its meaning fails here."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from conftest import FIXTURES
from helpers import code_lines, json_report, write_records

CASES = sorted((FIXTURES / "rules").glob("*/*.jsonl"))


def _messages(record: dict) -> list:
    request = record.get("request", record)
    messages = request.get("messages") if isinstance(request, dict) else None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _text_as_parts(record: dict) -> None:
    for message in _messages(record):
        if isinstance(message.get("content"), str) and message["content"] and message.get("role") in ("system", "user", "assistant", "tool"):
            message["content"] = [{"type": "text", "text": message["content"]}]


def _sdk_members(record: dict) -> None:
    for message in _messages(record):
        if message.get("role") == "assistant":
            for member, value in (("refusal", None), ("annotations", []), ("audio", None), ("function_call", None)):
                message.setdefault(member, value)
            calls = message.get("tool_calls")
            for index, call in enumerate(calls if isinstance(calls, list) else []):
                if isinstance(call, dict):
                    call.setdefault("index", index)


def _result_names(record: dict) -> None:
    names = {}
    for message in _messages(record):
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[call.get("id")] = call["function"].get("name")
        if message.get("role") == "tool" and isinstance(names.get(message.get("tool_call_id")), str):
            message["name"] = names[message["tool_call_id"]]


def _results_reordered(record: dict) -> None:
    messages = _messages(record)
    request = record.get("request", record)
    if not messages or len(messages) != len(request["messages"]):
        return  # no chat messages, or some that are no objects
    start = 0
    while start < len(messages):
        end = start
        while end < len(messages) and messages[end].get("role") == "tool":
            end += 1
        if end > start:
            messages[start:end] = sorted(messages[start:end], key=lambda m: hashlib.md5(str(m.get("tool_call_id")).encode()).hexdigest())
        start = end + 1
    request["messages"] = messages


RESHAPINGS = {"text_as_parts": _text_as_parts, "sdk_members": _sdk_members, "result_names": _result_names,
              "results_reordered": _results_reordered}


def _records(case) -> list | None:
    try:
        records = [orjson.loads(line) for line in case.read_bytes().splitlines() if line.strip()]
    except orjson.JSONDecodeError:
        return None  # a case about unreadable lines
    return records if all(isinstance(record, dict) for record in records) else None


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_legal_reshaping_changes_no_finding(case, tmp_path):
    records = _records(case)
    if records is None or not any(_messages(record) for record in records):
        pytest.skip("no chat messages to reshape")
    expected = code_lines(json_report(str(case)))
    for name, reshape in RESHAPINGS.items():
        reshaped = orjson.loads(orjson.dumps(records))
        for record in reshaped:
            reshape(record)
        if reshaped == records:
            continue
        path = write_records(tmp_path / f"{name}.jsonl", reshaped)
        assert code_lines(json_report(path)) == expected, name
