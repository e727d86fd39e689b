"""Baselines: write, then report only new findings; entries survive appended and shifted lines."""

from __future__ import annotations

import orjson

from conftest import FIXTURES
from helpers import json_report, run_cli

DEMO = FIXTURES / "demo" / "broken-agent.jsonl"
NEW_DEFECT = FIXTURES / "rules" / "CTX003" / "fail_reply_lost_between_users.jsonl"


def test_round_trip_with_appended_and_shifted_records(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_bytes(DEMO.read_bytes())
    baseline = tmp_path / "ctxlint-baseline.json"
    written = run_cli("check", str(log), "--write-baseline", str(baseline))
    assert written.exit_code == 0 and "wrote 4 findings" in written.stderr
    entries = orjson.loads(baseline.read_bytes())["findings"]
    assert [e["code"] for e in entries] == ["CTX004", "CTX005", "CTX008", "CTX003"]

    clean = run_cli("check", str(log), "--baseline", str(baseline), "--format", "json")
    assert clean.exit_code == 0 and orjson.loads(clean.stdout)["findings"] == []
    assert orjson.loads(clean.stdout)["suppressed"] == {"baseline": 4}

    # blank lines in front shift every line number; a new session's defect is appended
    log.write_bytes(b"\n\n" + DEMO.read_bytes() + NEW_DEFECT.read_bytes().replace(b'"session_id": "s1"', b'"session_id": "new-one"'))
    result = run_cli("check", str(log), "--baseline", str(baseline), "--format", "json")
    report = orjson.loads(result.stdout)
    assert result.exit_code == 1
    assert [(f["code"], f["session"]) for f in report["findings"]] == [("CTX003", "new-one")]
    assert report["baseline_stale"] == []


def test_fixed_findings_are_listed_as_stale_and_reasons_are_kept(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_bytes(DEMO.read_bytes())
    baseline = tmp_path / "b.json"
    run_cli("check", str(log), "--write-baseline", str(baseline))
    document = orjson.loads(baseline.read_bytes())
    document["findings"][0]["reason"] = "DeepSeek fix ships in 2.4"
    baseline.write_bytes(orjson.dumps(document))
    # drop the chat-7 session (lines 3 and 5): its two findings no longer occur
    lines = DEMO.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(line for line in lines if b'"chat-7"' not in line))
    report = orjson.loads(run_cli("check", str(log), "--baseline", str(baseline), "--format", "json").stdout)
    assert report["findings"] == []
    assert sorted(e["code"] for e in report["baseline_stale"]) == ["CTX003", "CTX005"]
    text = run_cli("check", str(log), "--baseline", str(baseline)).stdout
    assert "baseline entries that no longer occur (2):" in text
    run_cli("check", str(log), "--write-baseline", str(baseline))
    rewritten = orjson.loads(baseline.read_bytes())["findings"]
    assert rewritten[0]["reason"] == "DeepSeek fix ships in 2.4" and len(rewritten) == 2


def test_a_bad_baseline_is_a_usage_error(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("[1, 2]")
    result = run_cli("check", str(DEMO), "--baseline", str(bad))
    assert result.exit_code == 2 and "not a ctxlint baseline" in result.stderr
    result = run_cli("check", str(DEMO), "--baseline", str(tmp_path / "absent.json"))
    assert result.exit_code == 2 and "cannot read baseline" in result.stderr


def test_fingerprints_do_not_depend_on_line_numbers(tmp_path):
    log = tmp_path / "shifted.jsonl"
    log.write_bytes(b"\n" * 7 + DEMO.read_bytes())
    before = [f["fingerprint"] for f in json_report(str(DEMO))["findings"]]
    after = [f["fingerprint"] for f in json_report(str(log))["findings"]]
    assert before == after and len(set(before)) == 4


def test_rewriting_a_baseline_keeps_the_old_findings(tmp_path):
    baseline = tmp_path / "b.json"
    run_cli("check", str(DEMO), "--write-baseline", str(baseline))
    result = run_cli("check", str(DEMO), "--baseline", str(baseline), "--write-baseline", str(baseline))
    assert result.exit_code == 0 and len(orjson.loads(baseline.read_bytes())["findings"]) == 4


def test_a_turns_content_hash_is_the_same_hashed_whole_or_on_from_the_previous_turn():
    """Fingerprints hash the turn's message identities; hashing on from the previous
    turn's digest must give what hashing them whole gives, or baselines would not match."""
    from ctxlint.chat import short_hash
    from ctxlint.ingest.record import Record
    from ctxlint.sessions.model import make_turn

    def whole(turn):
        return short_hash([list(map(str, identity)) for identity in turn.identities])

    opening = [{"role": "system", "content": "Ünïcode 系统"}, {"role": "user", "content": "book a flight"}]
    first = make_turn(1, Record("log.jsonl", 1, "bare", {"messages": opening}))
    assert first.content_hash() == whole(first)
    reply = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book", "arguments": "{}"}}]}
    second = make_turn(2, Record("log.jsonl", 2, "bare", {"messages": [*opening, reply, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}), first)
    assert second._digest_base is not None  # hashed on from the first turn's digest
    assert second.content_hash() == whole(second)
    trimmed = make_turn(3, Record("log.jsonl", 3, "bare", {"messages": [opening[1]]}), second)
    assert trimmed._digest_base is None and trimmed.content_hash() == whole(trimmed)
    empty = make_turn(1, Record("log.jsonl", 4, "bare", {"messages": []}))
    assert empty.content_hash() == whole(empty) == short_hash([])
