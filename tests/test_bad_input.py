"""Bad lines get a located CTX900 message and the rest of the file is still checked."""

from __future__ import annotations

import gzip

import orjson
import pytest

from conftest import FIXTURES
from helpers import code_lines, json_report, run_cli

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


def test_a_pretty_printed_document_in_a_jsonl_file_is_read_as_the_document_it_is(tmp_path):
    """A JSON array spread over lines, named .jsonl, is read as its .json twin is; from
    stdin, with no file to look into first, line 1 says the input is one JSON document
    and how to read it."""
    export = FIXTURES / "readers" / "request_log_as_json_list.json"
    log = tmp_path / "export.jsonl"
    log.write_text(export.read_text(encoding="utf-8"), encoding="utf-8")
    assert code_lines(json_report(str(log))) == code_lines(json_report(str(export)))
    first = next(f for f in json_report("-", input=export.read_bytes())["findings"] if f["line"] == 1)
    assert first["code"] == "CTX900" and "pass --input-format json" in first["message"]


def test_a_json_document_with_a_bom_and_an_element_nested_past_the_scanner_is_read(tmp_path):
    """A .json export written with a byte order mark, one element nested 1,010 levels (orjson
    reads it, Python's json scanner does not): no traceback, the deep element is a located
    problem, and the elements around it are read."""
    good = orjson.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}, {"role": "user", "content": "again"}]})
    deep = b'{"model": "gpt-4o", "messages": [], "x": ' + b"[" * 1010 + b"]" * 1010 + b"}"
    log = tmp_path / "export.json"
    log.write_bytes(b"\xef\xbb\xbf[\n" + good + b",\n" + deep + b"\n]\n")
    report = json_report(str(log))
    assert code_lines(report) == [("CTX003", 2), ("CTX900", 3)]


def test_a_utf16_log_as_windows_powershell_writes_it_is_read(tmp_path):
    """PowerShell's `>` writes UTF-16 with a byte order mark: the log is read as the text
    it holds, not as lines of NUL bytes."""
    demo = FIXTURES / "demo" / "broken-agent.jsonl"
    log = tmp_path / "from-powershell.jsonl"
    log.write_bytes(demo.read_text(encoding="utf-8").encode("utf-16"))
    assert code_lines(json_report(str(log))) == code_lines(json_report(str(demo)))


def test_records_encoded_twice_are_read_in_one_process_and_in_several(tmp_path):
    """A logger that writes json.dumps of the record's JSON text: each line is a JSON string
    holding the record. It is read as the record, with --jobs too (the key a worker reads
    off the escaped bytes disagrees with the parse, and the run falls back to one process)."""
    demo = FIXTURES / "demo" / "broken-agent.jsonl"
    log = tmp_path / "double.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line.decode()) + b"\n" for line in demo.read_bytes().splitlines()))
    single = json_report(str(log))
    assert code_lines(single) == code_lines(json_report(str(demo)))
    assert json_report(str(log), "--jobs", "2") == single


def test_elements_after_one_nested_past_the_scanner_are_read_once(tmp_path):
    """Past an element nested deeper than json's scanner goes, the rest of the list is read
    at the last line known, each element once, the deep ones as located problems."""
    good = orjson.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}, {"role": "user", "content": "again"}]})
    deep = b'{"model": "gpt-4o", "messages": [], "x": ' + b"[" * 1010 + b"]" * 1010 + b"}"
    log = tmp_path / "export.json"
    log.write_bytes(b"[\n" + deep + b",\n" + good + b",\n" + deep + b",\n" + good + b"\n]\n")
    report = json_report(str(log))
    assert report["summary"]["records"] + sum(1 for f in report["findings"] if f["code"] == "CTX900") == 4


def test_a_gzipped_document_cut_short_is_a_located_read_error(tmp_path):
    """A .json.gz or a gzipped cassette whose gzip stream ends early: exit 2 and the file
    named, as for a JSONL log; not a traceback nor a bare 'Aborted'."""
    document = gzip.compress((FIXTURES / "readers" / "request_log_as_json_list.json").read_bytes())
    cassette = gzip.compress((FIXTURES / "readers" / "pydantic_typed_body_tool_turn_dropped.yaml").read_bytes())
    for name, data in (("export.json.gz", document), ("run.yaml", cassette)):
        path = tmp_path / name
        path.write_bytes(data[:len(data) // 2])
        result = run_cli("check", str(path))
        assert result.exit_code == 2 and f"{path}: read stopped before its end" in result.output


def test_numbers_no_count_or_window_can_be_are_read_past(tmp_path):
    """Found by fuzzing, each a crash before: a usage count past 64 bits (orjson reads up to
    2**64 - 1), a model name with a -Nk suffix of 20 digits. The count is not the server's
    (the prompt is counted offline), the suffix is not a window."""
    huge_usage = {"session_id": "a", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                  "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "yo"}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 2**64 - 1, "completion_tokens": 2}}}
    huge_suffix = {"session_id": "b", "request": {"model": "moonshot-v1-99999999999999999999k", "messages": [{"role": "user", "content": "hi"}]}}
    log = tmp_path / "log.jsonl"
    log.write_bytes(orjson.dumps(huge_usage) + b"\n" + orjson.dumps(huge_suffix) + b"\n")
    result = run_cli("check", str(log), "--format", "json")
    assert result.exit_code == 0, result.output
    turns = [turn for session in orjson.loads(result.stdout)["sessions"] for turn in session["turns"]]
    assert [turn["counter"].startswith("tiktoken") for turn in turns] == [True, True]
    assert [turn["window"] for turn in turns] == [128000, None]


def test_a_context_window_no_model_has_is_a_usage_error(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(GOOD + b"\n")
    result = run_cli("check", str(log), "--context-window", str(10**23))
    assert result.exit_code == 2 and "--context-window" in result.output
    (tmp_path / "ctxlint.toml").write_text(f'[models."gpt-4o"]\ncontext-window = {10**23}\n', encoding="utf-8")
    result = run_cli("check", str(log), "--config", str(tmp_path / "ctxlint.toml"))
    assert result.exit_code == 2 and "greater than the maximum" in result.output


def test_broken_ollama_calls_are_located_problems(tmp_path):
    """Found by fuzzing the Ollama reader, each a crash before: a `tool_calls` that is not a
    list, a call that is not an object, in the request or in its reply."""
    def line(calls, reply_calls):
        return orjson.dumps({"session_id": "o", "request": {"model": "qwen3:8b", "options": {}, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": calls}]},
            "response": {"message": {"role": "assistant", "content": "", "tool_calls": reply_calls}, "done": True}})
    log = tmp_path / "log.jsonl"
    log.write_bytes(line(True, ["x"]) + b"\n" + line(["x"], 7) + b"\n")
    result = run_cli("check", str(log), "--format", "json")
    assert result.exit_code == 1, result.output
    assert code_lines(orjson.loads(result.stdout)) == [("CTX900", 1), ("CTX900", 2)]


def test_a_binary_file_is_not_called_a_cut_off_line(tmp_path):
    """Binary bytes with no newline are no record cut short: the problem says what they
    hold. A record cut in the middle of a character is still a cut-off line."""
    assert "NUL byte at column 5 (a binary file?)" in findings(tmp_path, b"\x7fELF\x00\x01\x02garbage")[0][2]
    cut = '{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "你好'.encode()[:-1]
    assert "the line is cut off" in findings(tmp_path, cut)[0][2]


def test_the_library_given_parsed_objects_rather_than_read_records_says_what_it_takes():
    """lint() takes what records_from_line reads (each with its file and line); a log line's
    object parsed by the caller is refused with the call to make, not read without a place."""
    from ctxlint import lint

    with pytest.raises(TypeError, match=r"not dict: read each log line with records_from_line\(line, file, line_number\)"):
        lint([{"session_id": "s", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}])
