"""The streaming check (records let go as they are checked, each request judged from where
it differs from the previous one) reports exactly what a full check of held records does."""

from __future__ import annotations

import copy
import sys

import orjson
import pytest

from conftest import REAL_LOGS, ROOT, needs_real_logs
from ctxlint.api import CheckOptions, build_report, run_check
from ctxlint.engine import HOT_SESSIONS
from ctxlint.ingest import read_inputs
from ctxlint.report.json_format import report_dict

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402

FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.is_file() and p.suffix in (".jsonl", ".yaml", ".json"))


def streamed(paths: list[str]) -> dict:
    return report_dict(run_check(paths, CheckOptions()))


def judged_whole(paths: list[str]) -> dict:
    """Every request judged from its first message: no message object is shared between
    requests, so no rule can resume where the previous request left off."""
    ingested = read_inputs(paths)
    for record in ingested.records:
        record.request["messages"] = copy.deepcopy(record.request["messages"])
    return report_dict(build_report(ingested, CheckOptions()))


def assert_same(paths: list[str]) -> None:
    stream, whole = streamed(paths), judged_whole(paths)
    assert stream["findings"] == whole["findings"]
    assert stream["coverage"] == whole["coverage"]
    assert stream["sessions"] == whole["sessions"]
    assert stream["summary"] == whole["summary"]


@pytest.fixture(scope="module")
def generated_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("stream") / "generated.jsonl"
    generate(3 * 1024 * 1024, log, seed=3, concurrent=60)
    return str(log)


def test_generated_log_streamed_equals_judged_whole(generated_log):
    assert_same([generated_log])
    assert any(f["code"] in ("CTX001", "CTX003", "CTX004", "CTX016") for f in streamed([generated_log])["findings"])


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_fixture_streamed_equals_judged_whole(fixture):
    assert_same([str(fixture)])


def _real_log_folders() -> list:
    """The real logs' folders, `more/` by its own folders: each a test that a worker can take."""
    if not REAL_LOGS.is_dir():
        return [REAL_LOGS]  # skipped
    folders = sorted(p for p in REAL_LOGS.iterdir() if p.is_dir())
    return [inner for folder in folders for inner in (sorted(p for p in folder.iterdir() if p.is_dir()) if folder.name == "more" else [folder])]


@needs_real_logs
@pytest.mark.parametrize("folder", _real_log_folders(), ids=lambda p: p.name)
def test_real_logs_streamed_equal_judged_whole(folder):
    assert_same([str(folder)])


def test_held_and_streamed_reports_are_byte_identical(generated_log):
    held = run_check([generated_log], CheckOptions(hold=True))
    assert orjson.dumps(report_dict(held)) == orjson.dumps(streamed([generated_log]))
    assert held.conversations and not run_check([generated_log], CheckOptions()).conversations


def test_idle_sessions_slimmed_still_report_the_same(generated_log, monkeypatch):
    """With one session held whole, every interleaved session is judged against a slimmed
    previous request (identities, response facts) and from its first message."""
    import ctxlint.engine

    whole = judged_whole([generated_log])
    monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", 1)
    stream = streamed([generated_log])
    assert stream["findings"] == whole["findings"]
    assert stream["coverage"] == whole["coverage"]


def test_a_question_kept_unwrapped_is_told_from_a_slimmed_previous_request(tmp_path, monkeypatch):
    """Sessions of an app that keeps each wrapped question unwrapped in its history, interleaved
    past the sessions kept awake: the previous request is slimmed, and still tells the question
    kept unwrapped from a first message cut (it keeps the text of its last user message)."""
    import ctxlint.engine

    case = ROOT / "fixtures" / "rules" / "CTX008" / "fail_question_kept_unwrapped_then_cut_by_keep_last_n.jsonl"
    script = [orjson.loads(line) for line in case.read_bytes().splitlines()]
    keys = [f"chat-{n}" for n in range(3)]
    log = tmp_path / "interleaved.jsonl"
    log.write_bytes(b"".join(orjson.dumps({**record, "session_id": key}) + b"\n" for record in script for key in keys))
    monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", 1)
    stream = streamed([str(log)])
    assert sorted((f["code"], f["session"], f["line"]) for f in stream["findings"]) == [
        ("CTX008", key, 4 * len(keys) + 1 + n) for n, key in enumerate(keys)]
    assert stream["findings"] == judged_whole([str(log)])["findings"]


KEYED_CASES = [case for case in sorted((ROOT / "fixtures" / "rules").glob("*/*.jsonl"))
               if all(b'"session_id"' in line for line in case.read_bytes().splitlines() if line.strip())]


def test_keyed_cases_judged_against_slimmed_requests_report_what_awake_ones_do(tmp_path, monkeypatch):
    """Every keyed rule case, two copies under other keys interleaved line by line, judged with
    one session awake (each request against a slimmed previous one, woken from the spill):
    the same findings as with every session awake. Summaries, edits, handoffs and messages
    stored in another form are told apart from what a slimmed request keeps."""
    import ctxlint.engine

    assert len(KEYED_CASES) > 50
    for case in KEYED_CASES:
        records = [orjson.loads(line) for line in case.read_bytes().splitlines() if line.strip()]
        log = tmp_path / f"{case.parent.name}-{case.stem}.jsonl"
        log.write_bytes(b"".join(orjson.dumps({**record, "session_id": f"{copy}-{record['session_id']}"}) + b"\n"
                                 for record in records for copy in ("x", "y")))
        monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", HOT_SESSIONS)
        awake = streamed([str(log)])["findings"]
        monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", 1)
        assert streamed([str(log)])["findings"] == awake, case.name


def test_sessions_spilled_to_the_temp_file_report_the_same(generated_log, monkeypatch):
    """Every idle session and every closed session's summary through the temporary file:
    the report is the same to the byte."""
    import ctxlint.engine
    import ctxlint.spill

    in_memory = orjson.dumps(streamed([generated_log]))
    monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", 1)
    monkeypatch.setattr(ctxlint.spill, "SPILL_BUDGET", 0)
    assert orjson.dumps(streamed([generated_log])) == in_memory


@pytest.mark.parametrize("folder", sorted({fixture.parent for fixture in FIXTURES}), ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_fixtures_with_two_workers_equal_one_process(folder):
    """Each folder's fixtures in one run (two workers fork once per run, not per file)."""
    files = [str(fixture) for fixture in FIXTURES if fixture.parent == folder]
    one = report_dict(run_check(files, CheckOptions()))
    two = report_dict(run_check(files, CheckOptions(jobs=2)))
    assert orjson.dumps(two) == orjson.dumps(one)


@needs_real_logs
def test_real_logs_with_three_workers_equal_one_process():
    one = report_dict(run_check([str(REAL_LOGS)], CheckOptions()))
    three = report_dict(run_check([str(REAL_LOGS)], CheckOptions(jobs=3)))
    assert orjson.dumps(three) == orjson.dumps(one)
    assert one["summary"]["records"] > 100 and one["findings"]


def test_cross_session_leak_is_judged_once_across_workers(tmp_path):
    """Two sessions in different workers: the leak is found by the process that judges the
    log rule on both sessions' facts, and the session-level findings are not doubled."""
    secret = "my passport number is X1234567, please book the 9am flight to Lima"
    lines = []
    for key in ("alpha", "beta", "gamma", "delta"):
        history = [{"role": "user", "content": f"{key}: plan a trip for the team offsite in spring"}]
        if key != "alpha":
            history.append({"role": "assistant", "content": "Sure, where to?"})
            history.append({"role": "user", "content": secret})
        lines.append({"session_id": key, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": secret}] if key == "alpha" else history[:1]}})
        lines.append({"session_id": key, "request": {"model": "gpt-4o", "messages": history + [{"role": "assistant", "content": "On it."}, {"role": "user", "content": "thanks"}]}})
    # Look-alike: "early" carries a message before any other session has sent it, and
    # "late" sends it afterwards as its own input: the earlier carrier is where it was
    # first seen, so neither is a leak, whichever workers they are in.
    note = "the venue on the river closes at ten, so book the dinner for seven sharp"
    opener = {"role": "user", "content": "early: what should the team eat after the offsite?"}
    lines.append({"session_id": "early", "request": {"model": "gpt-4o", "messages": [opener]}})
    lines.append({"session_id": "early", "request": {"model": "gpt-4o", "messages": [
        opener, {"role": "user", "content": note}, {"role": "assistant", "content": "Noted."}, {"role": "user", "content": "and lunch?"}]}})
    lines.append({"session_id": "late", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": note}]}})
    lines.append({"session_id": "late", "request": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": note}, {"role": "assistant", "content": "Booked."}, {"role": "user", "content": "thanks"}]}})
    log = tmp_path / "leak.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    one = report_dict(run_check([str(log)], CheckOptions()))
    two = report_dict(run_check([str(log)], CheckOptions(jobs=2)))
    leaks = [(f["session"], f["line"], f["evidence"]["first_seen_in_session"]) for f in one["findings"] if f["code"] == "CTX023"]
    assert leaks == [("beta", 4, "alpha"), ("gamma", 6, "alpha"), ("delta", 8, "alpha")]
    assert orjson.dumps(two) == orjson.dumps(one)


def test_a_leak_shard_finds_the_session_of_a_rank_read_out_of_order():
    """Held sessions are read in line order, and an OpenAI Batch input ranks after every
    other record: the shard still finds which session carried a message first."""
    from ctxlint.rules.ctx023_cross_session_leak import LeakShard

    shard = LeakShard()
    for rank, session in ((1, "a"), (1 << 62 | 2, "batch"), (3, "b"), (5, "c")):
        shard.carried_by(rank, session)
    assert [shard.session_at(rank) for rank in (1, 3, 5, 1 << 62 | 2, 4)] == ["a", "b", "c", "batch", None]


def test_memory_holds_the_open_sessions_not_all_sessions_seen(tmp_path, monkeypatch):
    """3,000 sessions one after another: at no point are more than the sessions kept awake
    alive as objects, and no closed session's summary is held unpacked."""
    import gc

    import ctxlint.engine
    from ctxlint.engine import Engine, SessionCheck, SessionSummary

    log = tmp_path / "many.jsonl"
    with log.open("wb") as out:
        for n in range(3000):
            out.write(orjson.dumps({"session_id": f"s{n}", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"q{n}"}]}}) + b"\n")
    monkeypatch.setattr(ctxlint.engine, "HOT_SESSIONS", 4)
    alive: list[tuple[int, int]] = []
    check_turn = Engine.check_turn

    def counting(self, session, record, *rest):
        if record.line % 1000 == 0:
            objects = gc.get_objects()
            alive.append((sum(type(o) is SessionCheck for o in objects), sum(type(o) is SessionSummary for o in objects)))
        return check_turn(self, session, record, *rest)

    monkeypatch.setattr(Engine, "check_turn", counting)
    report = run_check([str(log)], CheckOptions())
    # The 4 awake, the one being checked, and the one last put to sleep (still a local).
    assert len(alive) == 3 and all(checks <= 6 and summaries <= 6 for checks, summaries in alive), alive
    gc.collect()
    assert sum(type(o) is SessionSummary for o in gc.get_objects()) == 0  # shelved until read
    assert len(report.sessions) == 3000 and report.sessions[2999].id == "s2999"
    assert [s.id for s in report.sessions][:3] == ["s0", "s1", "s2"]
