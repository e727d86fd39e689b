"""--jobs N checks sessions in worker processes; the report is byte-identical to one process."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from conftest import ROOT
from helpers import run_cli

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402


PLANTED: list = []
# Models whose reasoning must come back on tool-call turns (ctxlint's profiles): dropping it
# elsewhere, or on other models, is legal, so the generator's drop is no defect there.
PASSBACK_ON_TOOL_TURNS = {"deepseek-reasoner", "glm-4.6", "kimi-k2-thinking"}


@pytest.fixture(scope="module")
def generated_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("bench") / "small.jsonl"
    generate(3 * 1024 * 1024, log, seed=3, concurrent=60)
    return str(log)


@pytest.fixture(scope="module")
def defect_heavy_log(tmp_path_factory):
    """A generated log where most sessions get a defect, with the lines where each shows."""
    log = tmp_path_factory.mktemp("bench") / "defects.jsonl"
    generate(3 * 1024 * 1024, log, seed=5, concurrent=40, planted=PLANTED, defect_rate=0.6)
    return str(log)


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_jobs_give_byte_identical_reports(generated_log, fmt):
    single = run_cli("check", generated_log, "--format", fmt, "--jobs", "1")
    double = run_cli("check", generated_log, "--format", fmt, "--jobs", "2")
    assert single.exit_code == double.exit_code == 1  # the generator plants defects
    assert single.stdout == double.stdout


def test_generated_log_has_findings_exactly_where_defects_were_planted(defect_heavy_log):
    report = orjson.loads(run_cli("check", defect_heavy_log, "--format", "json").stdout)
    defects = {line: kind for line, _, model, kind, tool_turn in PLANTED
               if kind != "drop_reasoning" or (model in PASSBACK_ON_TOOL_TURNS and tool_turn)}
    assert len(defects) >= 10 and set(defects.values()) == {"orphan_result", "drop_assistant", "two_users", "drop_reasoning"}
    found: dict[int, set] = {}
    for finding in report["findings"]:
        found.setdefault(finding["line"], set()).add(finding["code"])
    assert set(found) == set(defects)  # every planted defect, and nothing on legal lines
    expected_codes = {"drop_reasoning": {"CTX004"}, "two_users": {"CTX003"}, "orphan_result": {"CTX001"},
                      "drop_assistant": {"CTX016", "CTX001", "CTX003"}}
    for line, kind in defects.items():
        assert found[line] & expected_codes[kind], (line, kind, found[line])


def _same_report_in_two_workers(paths: list[str], **options) -> dict:
    from ctxlint.api import CheckOptions, run_check
    from ctxlint.report.json_format import report_dict

    one = report_dict(run_check(paths, CheckOptions(**options)))
    two = report_dict(run_check(paths, CheckOptions(jobs=2, **options)))
    assert orjson.dumps(two) == orjson.dumps(one)
    return one


def test_batch_lines_are_joined_and_checked_once(tmp_path):
    """Batch input lines are joined to their outputs in every worker and checked by the
    worker that owns their (inferred) session; an output line with no input is reported once."""
    readers = ROOT / "fixtures" / "readers"
    batch_input = tmp_path / "batch_input.jsonl"
    batch_input.write_bytes((readers / "batch_input.jsonl").read_bytes())
    batch_output = tmp_path / "batch_output.jsonl"
    batch_output.write_bytes((readers / "batch_output.jsonl").read_bytes() + b'{"id": "batch_req_9", "custom_id": "nobody", "response": {"status_code": 200, "body": {}}}\n')
    for paths, codes in (([str(batch_input)], ["CTX001"]), ([str(batch_input), str(batch_output)], ["CTX016"])):
        one = _same_report_in_two_workers(paths)
        assert one["summary"]["records"] == 2 and one["sessions"]
        assert [f["code"] for f in one["findings"]] == codes  # CTX016 (the call turn lost, its result kept) needs the logged response
    assert one["summary"]["skipped"] == {"batch output line whose input line was not given": 1}


def _line(session: str | None, turn: int, lead: str = "") -> str:
    messages = [{"role": "user", "content": f"plan a trip {session} {n}"} for n in range(turn)]
    body = {"model": "gpt-4o", "messages": messages}
    if session is None:
        return orjson.dumps(body).decode()
    return "{" + lead + '"session_id":"' + session + '","request":' + orjson.dumps(body).decode() + "}"


def _count_single_runs(monkeypatch) -> list:
    import ctxlint.api

    runs: list = []
    stream_report = ctxlint.api.stream_report
    monkeypatch.setattr(ctxlint.api, "stream_report", lambda *args: runs.append(args) or stream_report(*args))
    return runs


def test_sessions_with_and_without_keys_and_bad_lines_in_two_workers(tmp_path, monkeypatch):
    """Keyed sessions are spread over the workers, keyless ones inferred in one; a line
    that is not JSON but shows its key is reported once, by its session's owner."""
    single_runs = _count_single_runs(monkeypatch)
    lines = []
    for turn in range(1, 4):
        lines += [_line(f"s{n}", turn) for n in range(6)] + [_line(None, turn)]
    lines.insert(5, '{"session_id":"s2","request": {"messages": [')  # consecutive user messages follow, and a broken line
    lines.insert(9, '{"trace_id": 7, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}}')  # key only a parse reads
    lines.insert(12, "not json")
    log = tmp_path / "mixed.jsonl"
    log.write_text("\n".join(lines) + "\n")
    from ctxlint.ingest import infers_everywhere

    assert not infers_everywhere([str(log)], None, None, 2)  # worker 0 takes the keyless lines
    one = _same_report_in_two_workers([str(log)])
    assert sorted((f["code"], f["line"]) for f in one["findings"] if f["code"] == "CTX900") == [("CTX900", 6), ("CTX900", 13)]
    assert one["summary"]["records"] == 21 + 1
    assert len(single_runs) == 1  # the two workers did not fall back to one process


def test_lines_whose_key_only_a_parse_reads_are_reported_by_their_sessions_owner(tmp_path, monkeypatch):
    """A line shared out by the key its parse finds (a dotted --session-key) that holds no
    request, a skip or a problem, is counted once, by the worker that owns its session."""
    single_runs = _count_single_runs(monkeypatch)
    lines = []
    for n in range(6):
        key = {"metadata": {"conversation": f"c{n}"}}
        lines.append(orjson.dumps({**key, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"trip {n}"}]}}).decode())
        lines.append(orjson.dumps({**key, "model": "text-embedding-3-small", "messages": [{"role": "user", "content": "x"}],
                                   "call_type": "embedding"}).decode())  # skipped: LiteLLM's embedding call
        lines.append(orjson.dumps({**key, "request": {"model": "gpt-4o", "messages": "hi"}}).decode())  # a problem
    log = tmp_path / "dotted.jsonl"
    log.write_text("\n".join(lines) + "\n")
    one = _same_report_in_two_workers([str(log)], session_key="metadata.conversation")
    assert one["summary"]["records"] == 6 and one["summary"]["skipped"] == {"not chat-completions: LiteLLM embedding call": 6}
    assert [f["line"] for f in one["findings"] if f["code"] == "CTX900"] == [3, 6, 9, 12, 15, 18]
    assert len(single_runs) == 1


@pytest.mark.parametrize("line", [
    _line("a", 1)[:-1] + ',"session\\u005fid":"b"}',  # the bytes show a, the parse (last key wins) finds b
    '{"session\\u005fid":"s0","request":' + orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}).decode() + "}",  # no key in the bytes
    orjson.dumps({"session_id": "s0", "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": "far " * 1200}]},
                  "custom_id": "c-1", "method": "POST", "url": "/v1/chat/completions"}).decode(),  # a batch line, custom_id past the bytes read
])
def test_a_key_the_bytes_hide_falls_back_to_one_process(tmp_path, monkeypatch, line):
    log = tmp_path / "escaped.jsonl"
    log.write_text("\n".join([_line(f"s{n}", 1) for n in range(4)] + [line]) + "\n")
    in_one_process = _count_single_runs(monkeypatch)
    one = _same_report_in_two_workers([str(log)])
    assert len(in_one_process) == 2  # the single run, and the fallback of the two-worker run
    assert one["summary"]["records"] == 5


def test_sessions_are_shared_by_lines_given_so_far():
    from ctxlint.ingest import Share
    from ctxlint.ingest.jsonl import SKIP

    shares = [Share(0, 2), Share(1, 2)]
    keyless = orjson.dumps({"messages": [{"role": "user", "content": "hi"}]})
    words = [[share.route(line) for share in shares] for line in (keyless, keyless, _line("a", 1).encode(), _line("b", 1).encode(), _line("a", 2).encode())]
    # worker 0 has the keyless lines, so a goes to 1; then b to 1 as well (0 still has more)
    assert words == [["", SKIP], ["", SKIP], [SKIP, "a"], [SKIP, "b"], [SKIP, "a"]]


@pytest.mark.parametrize(("line", "key"), [
    (b'{"session_id":"s-1","request":{}}', "s-1"),
    (b'{"session_id" : "s-1","request":{}}', "s-1"),
    (b'{"timestamp":"2026","model":{"a":[1,"}"]},"session_id":"s-1"}', "s-1"),  # after other members
    (b'{"request":{"metadata":{"session_id":"inner"}},"session_id":"outer"}', None),  # first seen nested
    (b'{"session_id":"s\\"1","request":{}}', None),  # an escape in the value
    (b'{"session_id":42,"request":{}}', None),  # not a string: the parse decides
    (b'{"session_id":"","conversation_id":"c"}', None),  # empty: the next name would decide
    (b'{"conversation_id":"c-1","messages":[]}', "c-1"),
    (b'{"messages":[{"role":"user","content":"session_id"}]}', None),  # the name as a value: the parse decides
    (b'{"messages":[{"role":"user","content":"say \\"session_id\\": 1"}]}', ""),  # inside a text its quotes are escaped
    (b'{"metadata":{"session_id":"m"},"messages":[]}', None),  # a dotted path
    (b'{"custom_id":"x","session_id":"s","body":{}}', None),  # may be a batch line
    (b'{"messages":[]}', ""),
])
def test_session_key_read_off_the_bytes(line, key):
    from ctxlint.ingest.shapes import session_key_in_bytes

    assert session_key_in_bytes(line, None) == key


def test_a_log_mostly_without_keys_is_inferred_in_every_worker(tmp_path, monkeypatch):
    """When most lines name no key, every worker infers the keyless sessions and checks
    its part of them, rather than worker 0 checking nearly all of the log."""
    from ctxlint.ingest import Share, infers_everywhere, keyless_fraction

    lines = []
    for turn in range(1, 4):
        lines += [orjson.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": f"trip {n} step {k}"} for k in range(turn)]}).decode() for n in range(8)]
        lines.append(_line("s0", turn))
    lines.insert(10, lines[9])  # a request sent twice: consecutive user messages are not the defect here
    monkeypatch.chdir(tmp_path)  # session ids name the file: the same ids, the same shares, on every run
    log = Path("keyless.jsonl")
    log.write_text("\n".join(lines) + "\n")
    assert keyless_fraction([str(log)], None, None) == 25 / 28
    assert infers_everywhere([str(log)], None, None, 2)
    single_runs = _count_single_runs(monkeypatch)
    one = _same_report_in_two_workers([str(log)])
    assert len(single_runs) == 1 and one["summary"]["records"] == 28
    assert len(one["sessions"]) == 9
    inferred = [s["id"] for s in one["sessions"] if s["id"] != "s0"]
    checked = [sum(Share(index, 2, infer_everywhere=True).checks((name, False)) for name in inferred) for index in (0, 1)]
    assert sum(checked) == 8 and min(checked) > 0  # both workers check some of the keyless sessions
