"""Session inference without session keys: interleaved conversations, defects that must not split."""

from __future__ import annotations

from ctxlint.ingest.record import Record, Response
from ctxlint.sessions import build_sessions


def rec(line, messages, response=None, key=None):
    return Record(file="log.jsonl", line=line, shape="bare", request={"model": "gpt-4o", "messages": messages},
                  response=Response(message=response) if response else None, session_key=key, scope="log.jsonl")


S = {"role": "system", "content": "You help."}


def U(t):
    return {"role": "user", "content": t}


def A(t, **kw):
    return {"role": "assistant", "content": t, **kw}


def call(i):
    return {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def grouping(records):
    return [[t.record.line for t in s.turns] for s in build_sessions(records)]


def test_interleaved_sessions_are_separated():
    records = [
        rec(1, [S, U("alpha question")]),
        rec(2, [S, U("beta question")]),
        rec(3, [S, U("alpha question"), A("alpha answer"), U("alpha follow-up")]),
        rec(4, [S, U("beta question"), A("beta answer"), U("beta follow-up")]),
        rec(5, [S, U("alpha question"), A("alpha answer"), U("alpha follow-up"), A("a2"), U("alpha third")]),
    ]
    assert grouping(records) == [[1, 3, 5], [2, 4]]


def test_same_opening_in_two_conversations_does_not_merge_them_later():
    records = [
        rec(1, [S, U("hi")], A("hello one")),
        rec(2, [S, U("hi"), A("hello one"), U("book a flight")]),
        rec(3, [S, U("hi")], A("hello two")),
        rec(4, [S, U("hi"), A("hello two"), U("find a hotel")]),
    ]
    assert grouping(records) == [[1, 2], [3, 4]]


def test_defects_do_not_split_a_session():
    assistant_with_reasoning = A(None, tool_calls=[call("c1")], reasoning_content="plan")
    records = [
        rec(1, [S, U("task")], assistant_with_reasoning),
        # reasoning dropped, system prompt rewritten
        rec(2, [{"role": "system", "content": "You help. Time 10:02"}, U("task"), A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "r1"}], A("done?")),
        # the assistant text turn dropped while the user's next message is kept
        rec(3, [S, U("task"), A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "r1"}, U("next")]),
        # keep-last-2 trimming
        rec(4, [{"role": "tool", "tool_call_id": "c1", "content": "r1"}, U("next"), A("ok"), U("last")]),
    ]
    assert grouping(records) == [[1, 2, 3, 4]]


def test_retry_joins_the_session():
    records = [rec(1, [S, U("task")], A(None, tool_calls=[call("c9")])), rec(2, [S, U("task")])]
    assert grouping(records) == [[1, 2]]


def test_session_keys_group_across_files_in_input_order():
    a = rec(1, [S, U("x")], key="k")
    b = rec(2, [S, U("x"), A("y"), U("z")], key="k")
    b.file = "other.jsonl"  # requests are taken in input order: a stream cannot be reordered
    sessions = build_sessions([a, b])
    assert [[t.record.line for t in s.turns] for s in sessions] == [[1, 2]]
    assert sessions[0].id == "k"
