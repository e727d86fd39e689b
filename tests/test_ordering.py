"""Requests are checked in the time order their log gives them, else in input order."""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone

from ctxlint.ingest.record import Record
from ctxlint.sessions.ordering import in_time_order
from helpers import code_lines, json_report, run_cli, write_records

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


def newest_first_export(sessions: int) -> list[dict]:
    """A dashboard's export (Helicone's), newest first: `sessions` trips of three requests,
    each trip's requests `sessions` lines apart; trip 5 lost the model's offer at its
    second request."""
    records = []
    for turn, history in enumerate(HISTORIES):
        for trip in range(sessions):
            sent = [SYSTEM, ASK, BOOK] if (trip, turn) == (5, 1) else history
            records.append({"request_created_at": datetime.fromtimestamp(1_772_000_000 + turn * sessions + trip, timezone.utc).isoformat(),
                            "request_body": {"model": "gpt-4o", "messages": sent},
                            "request_properties": {"Helicone-Session-Id": f"trip-{trip}"}})
    return records[::-1]


def test_a_log_written_newest_first_is_read_from_its_last_line_up(tmp_path):
    """Past the reorder window: each session's requests are further apart than 512 lines
    allow, and read in line order every session would run backwards."""
    records = newest_first_export(600)
    log = write_records(tmp_path / "export.jsonl", records)
    report = json_report(log)
    line_of = {(turn, trip): 1800 - (turn * 600 + trip) for turn in range(3) for trip in range(600)}
    trip_5 = next(session for session in report["sessions"] if session["id"] == "trip-5")
    assert [turn["line"] for turn in trip_5["turns"]] == [line_of[0, 5], line_of[1, 5], line_of[2, 5]]
    assert [(f["code"], f["line"], f["session"], f["turn"]) for f in report["findings"]] == [("CTX003", line_of[1, 5], "trip-5", 2)]
    assert report["read_backwards"] == [log]
    assert "written newest first" in run_cli("check", log).stdout


def test_a_compressed_or_piped_newest_first_log_is_read_from_its_end_too(tmp_path):
    import gzip
    records = newest_first_export(600)
    text = "".join(json.dumps(r) + "\n" for r in records)
    packed = tmp_path / "export.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    expected = [("CTX003", 1800 - 605)]
    assert code_lines(json_report(str(packed))) == expected
    assert code_lines(json_report("-", input=text)) == expected
    single = run_cli("check", write_records(tmp_path / "export.jsonl", records), "--format", "json", "--jobs", "1")
    double = run_cli("check", str(tmp_path / "export.jsonl"), "--format", "json", "--jobs", "2")
    assert single.stdout == double.stdout


def test_the_pages_of_a_newest_first_export_are_read_oldest_page_first(tmp_path):
    """Pages given in the order they were exported (page 1 the newest): each is read from
    its end, and the last page first; trip 5's requests are on pages 3, 2 and 1."""
    records = newest_first_export(600)
    pages = [write_records(tmp_path / f"page-{number + 1}.jsonl", records[600 * number:600 * (number + 1)]) for number in range(3)]
    report = json_report(*pages)
    trip_5 = next(session for session in report["sessions"] if session["id"] == "trip-5")
    assert [(turn["file"], turn["line"]) for turn in trip_5["turns"]] == [(pages[2], 595), (pages[1], 595), (pages[0], 595)]
    assert [(f["code"], f["file"], f["line"]) for f in report["findings"]] == [("CTX003", pages[1], 595)]
    assert report["read_backwards"] == pages[::-1]


def test_a_newest_first_log_through_a_pipe_is_read_from_its_end(tmp_path):
    """A shell's `<(zcat export.jsonl.gz)` is a pipe, which can be read once: it is copied
    to a temporary file and read from its end, and with --jobs it is checked in one process
    (each worker reading it again found nothing)."""
    text = "".join(json.dumps(r) + "\n" for r in newest_first_export(600))
    for jobs in ("1", "2"):
        pipe = tmp_path / f"export-{jobs}"
        os.mkfifo(pipe)
        writer = threading.Thread(target=pipe.write_text, args=(text,), daemon=True)
        writer.start()
        report = json_report(str(pipe), "--jobs", jobs)
        writer.join(timeout=60)
        assert code_lines(report) == [("CTX003", 1800 - 605)] and report["summary"]["records"] == 1800


def test_a_pipe_in_a_folder_is_checked_in_one_process(tmp_path):
    """A FIFO found in a folder is read once too: each worker reading it again found nothing."""
    text = "".join(json.dumps(r) + "\n" for r in newest_first_export(600)[::-1])
    folder = tmp_path / "logs"
    folder.mkdir()
    os.mkfifo(folder / "live.jsonl")
    writer = threading.Thread(target=(folder / "live.jsonl").write_text, args=(text,), daemon=True)
    writer.start()
    report = json_report(str(folder), "--jobs", "2")
    writer.join(timeout=60)
    assert code_lines(report) == [("CTX003", 606)] and report["summary"]["records"] == 1800


def test_a_json_list_written_newest_first_is_read_from_its_end(tmp_path):
    records = newest_first_export(600)
    document = tmp_path / "export.json"
    document.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")  # element i on line i + 2
    report = json_report(str(document))
    assert code_lines(report) == [("CTX003", 1800 - 605 + 1)]
    assert report["read_backwards"] == [str(document)]


def test_a_log_written_as_it_goes_is_read_from_its_first_line(tmp_path):
    """Threads that write a few lines out of order do not make a log newest first."""
    records = newest_first_export(30)[::-1]
    records[3], records[4] = records[4], records[3]
    records[10], records[11] = records[11], records[10]
    report = json_report(write_records(tmp_path / "log.jsonl", records))
    assert report["read_backwards"] == []
    assert code_lines(report) == [("CTX003", 36)]


def test_lines_from_the_end_are_the_lines_readline_gives():
    import io
    from ctxlint.ingest.jsonl import _lines_from_the_end
    for text in (b"", b"a\n", b"a", b"a\nbb\n\nccc", b"a\r\nbb\r\n", b"\n\nx\n", b"long line " * 30 + b"\nshort\n"):
        expected = io.BytesIO(text).readlines()
        for block in (1, 2, 7, 4096):
            assert list(_lines_from_the_end(io.BytesIO(text), block))[::-1] == expected, (text, block)
