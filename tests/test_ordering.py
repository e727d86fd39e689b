"""Requests are checked in the time order their log gives them, else in input order."""

from __future__ import annotations

from ctxlint.ingest.record import Record
from ctxlint.sessions.ordering import in_time_order
from helpers import json_report, run_cli, write_records

SYSTEM = {"role": "system", "content": "You are a travel assistant. Never book red-eye flights."}
ASK = {"role": "user", "content": "Find me a flight from Paris to Rome on Friday."}
OFFER = {"role": "assistant", "content": "AF123 at 9:00 for 150 EUR."}
BOOK = {"role": "user", "content": "Book it, please, and a hotel near Termini."}
BOOKED = {"role": "assistant", "content": "Booked AF123 and Hotel Roma."}
THANKS = {"role": "user", "content": "Thanks, that is all for today."}
HISTORIES = [[SYSTEM, ASK], [SYSTEM, ASK, OFFER, BOOK], [SYSTEM, ASK, OFFER, BOOK, BOOKED, THANKS]]


def envelope(history: list, ts, key: str | None = "trip") -> dict:
    record = {"ts": ts, "request": {"model": "gpt-4o", "messages": history}}
    return {**record, "session_id": key} if key else record


def turn_lines(report: dict) -> list[list[int]]:
    return [[turn["line"] for turn in session["turns"]] for session in report["sessions"]]


def test_a_session_logged_out_of_order_is_checked_in_time_order(tmp_path):
    times = ["2026-12-04T10:00:00Z", "2026-12-04T10:01:00Z", "2026-12-04T10:02:00Z"]
    log = write_records(tmp_path / "log.jsonl", [envelope(HISTORIES[i], times[i]) for i in (2, 0, 1)])
    report = json_report(log)
    assert turn_lines(report) == [[2, 3, 1]]
    assert report["findings"] == []  # in line order, the first request would have "lost" its whole history


def test_keyless_requests_out_of_order_chain_in_time_order(tmp_path):
    log = write_records(tmp_path / "log.jsonl", [envelope(HISTORIES[i], 1_764_842_400 + 60 * i, key=None) for i in (1, 2, 0)])
    report = json_report(log)
    assert turn_lines(report) == [[3, 1, 2]]
    assert report["findings"] == []


def test_a_defect_is_reported_at_its_own_line_when_the_log_is_out_of_order(tmp_path):
    lost_reply = [SYSTEM, ASK, BOOK]  # the offer the model made is missing: two user messages in a row
    records = [envelope(lost_reply, "2026-12-04T10:01:00+00:00"), envelope(HISTORIES[0], "2026-12-04T11:00:00+01:00")]
    report = json_report(write_records(tmp_path / "log.jsonl", records))
    assert turn_lines(report) == [[2, 1]]  # 11:00+01:00 is 10:00 UTC
    assert [(f["code"], f["line"], f["turn"]) for f in report["findings"]] == [("CTX003", 1, 2)]


def test_equal_times_keep_input_order_and_a_record_without_time_keeps_its_place(tmp_path):
    same = "2026-12-04 10:00:00"  # no zone: read as UTC
    records = [envelope(HISTORIES[0], same), envelope(HISTORIES[1], same), envelope(HISTORIES[2], None)]
    assert turn_lines(json_report(write_records(tmp_path / "log.jsonl", records))) == [[1, 2, 3]]


def test_jobs_order_by_time_as_one_process_does(tmp_path):
    records = []
    for key in ("a", "b", "c"):
        records += [envelope(HISTORIES[i], f"2026-12-04T10:0{i}:00Z", key) for i in (2, 1, 0)]
    log = write_records(tmp_path / "log.jsonl", records)
    single = run_cli("check", log, "--format", "json", "--jobs", "1")
    double = run_cli("check", log, "--format", "json", "--jobs", "2")
    assert single.stdout == double.stdout
    assert [len(session) for session in turn_lines(json_report(log))] == [3, 3, 3]


def record(line: int, timestamp: float | None) -> Record:
    return Record(file="log.jsonl", line=line, shape="envelope", request={"messages": []}, seq=line, timestamp=timestamp)


def test_a_record_moves_ahead_of_at_most_a_window_of_earlier_records():
    records = [record(1, 30.0), record(2, 20.0), record(3, 10.0)]
    assert [r.line for r in in_time_order(records, window=1)] == [2, 3, 1]  # 3 cannot pass 2, gone already
    assert [r.line for r in in_time_order(records, window=2)] == [3, 2, 1]


def test_records_one_line_holds_at_one_time_keep_their_order():
    """An OTel export line holds several spans, each a record of that line; at the same
    time they keep the order they were read in (they were compared as records: a crash)."""
    spans = [record(7, 10.0), record(7, 10.0), record(7, 10.0)]
    for position, span in enumerate(spans):
        span.request["messages"] = [{"role": "user", "content": f"span {position}"}]
    assert [r.messages for r in in_time_order(spans)] == [r.messages for r in spans]


def test_a_bare_bodys_time_and_key_are_not_request_settings():
    from ctxlint.engine import settings_digest
    body = {"model": "gpt-4o", "messages": [], "temperature": 0.2}
    assert settings_digest({**body, "ts": 1, "session_id": "a"}) == settings_digest({**body, "ts": 2, "session_id": "a"}) == settings_digest(body)
    assert settings_digest({**body, "temperature": 0.3}) != settings_digest(body)


def test_a_number_too_small_to_be_a_time_is_not_one(tmp_path):
    """A logger's `time` may be the request's latency: such records keep input order."""
    records = [envelope(HISTORIES[i], latency) for i, latency in ((0, 2.5), (1, 0.4), (2, 1.1))]
    report = json_report(write_records(tmp_path / "log.jsonl", [{**r, "time": r.pop("ts")} for r in records]))
    assert turn_lines(report) == [[1, 2, 3]] and report["findings"] == []
