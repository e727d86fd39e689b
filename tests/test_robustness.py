"""Any input, no crash, nothing lost: odd JSON, wrong shapes, odd files, signals, big inputs."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
import time

import orjson
import pytest

from conftest import FIXTURES, ROOT
from helpers import json_report, run_cli

from ctxlint.ingest.text_logs import OTHER_OBJECT, TEXT_LINE

DEMO = FIXTURES / "demo" / "broken-agent.jsonl"
TWO_USERS = orjson.dumps({"session_id": "z", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}})


def located(tmp_path, data: bytes, name: str = "log.jsonl") -> list[tuple[str, int, str]]:
    log = tmp_path / name
    log.write_bytes(data)
    return [(f["code"], f["line"], f["message"]) for f in json_report(str(log))["findings"]]


def record(messages, **request) -> bytes:
    return orjson.dumps({"session_id": "s", "request": {"model": "gpt-4o", "messages": messages, **request}})


# --- odd JSON ---------------------------------------------------------------------------

def test_not_json_blank_lines_and_crlf(tmp_path):
    found = located(tmp_path, b"hello\r\n\r\n   \n" + TWO_USERS + b"\r\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 4)]
    assert found[0][2].startswith("not JSON:")


def test_ten_thousand_levels_of_nesting(tmp_path):
    deep = b'{"session_id": "a", "request": {"model": "gpt-4o", "metadata": ' + b"[" * 10_000 + b"]" * 10_000 + b', "messages": []}}'
    found = located(tmp_path, deep + b"\n" + TWO_USERS + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 2)]
    assert "nested deeper than 1024 levels" in found[0][2]


def test_numbers_that_overflow_are_read_and_reported(tmp_path):
    big_int = record([{"role": "user", "content": "hi"}]).replace(b'"model"', b'"seed": 123456789012345678901234567890123, "model"')
    infinite = TWO_USERS.replace(b'"model"', b'"temperature": 1e400, "seed": 98765432109876543210987654321, "model"')
    found = located(tmp_path, big_int + b"\n" + infinite + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 2), ("CTX003", 2)]
    assert "overflows a double; read as infinity" in found[0][2]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_pythons_non_finite_floats_are_read_and_reported(tmp_path, constant):
    # json.dumps({"latency": float("nan")}) writes NaN: the line is read, not lost
    line = TWO_USERS.replace(b'"model"', b'"latency_ms": ' + constant + b', "model"')
    found = located(tmp_path, line + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 1)]
    assert found[0][2].startswith(constant.decode() + " at column ")
    assert "read as Python reads it" in found[0][2]


def test_a_word_nan_is_still_not_json(tmp_path):
    found = located(tmp_path, TWO_USERS.replace(b'"model"', b'"x": Nan, "model"') + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1)]
    assert found[0][2].startswith("not JSON:")


# --- records an application's text log writes after a prefix ---------------------------

ANSWERED = orjson.dumps({"session_id": "t", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]},
                         "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}})
REPLY_DROPPED = orjson.dumps({"session_id": "t", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}})


@pytest.mark.parametrize("prefix", [
    b"2026-01-02 10:00:01,123 INFO app.llm: request ",  # Python's logging
    b"2026-01-02T10:00:01.123456789Z stdout F ",  # a container runtime's (CRI) log
    b"Jan  2 10:00:01 host app[311]: ",  # syslog
    b"level=info msg=\"llm call\" payload=",  # logfmt
    b"[INFO] ",
])
def test_records_after_a_log_prefix_are_read_and_its_text_lines_skipped(tmp_path, prefix):
    log = tmp_path / "app.log"
    log.write_bytes(b"2026-01-02 10:00:00,001 INFO app.server: listening on :8080\n" + prefix + ANSWERED + b"\n"
                    + b"Traceback (most recent call last):\n  File \"app.py\", line 3\n" + prefix + REPLY_DROPPED + b" in 312 ms\n")
    report = json_report(str(log))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX016", 5)]
    assert report["summary"]["records"] == 2
    assert report["summary"]["skipped"] == {TEXT_LINE: 3}


def test_the_openai_sdks_debug_log_is_read_from_the_dicts_it_prints(tmp_path):
    # logging.basicConfig(level=logging.DEBUG): the SDK prints each request's options, its body in json_data
    def options(messages: list) -> bytes:
        return b"DEBUG:openai._base_client:Request options: " + repr(
            {"method": "post", "url": "/chat/completions", "files": None, "idempotency_key": "stainless-python-retry-1",
             "json_data": {"messages": messages, "model": "gpt-4o", "stream": False}}).encode()
    first = [{"role": "system", "content": "You're terse."}, {"role": "user", "content": "List the last 10 presidents"}]
    log = tmp_path / "debug.log"
    log.write_bytes(b"\n".join([
        b"DEBUG:httpx:load_ssl_context verify=True cert=None trust_env=True http2=False",
        options(first),
        b'DEBUG:openai._base_client:HTTP Response: POST https://api.openai.com/v1/chat/completions "200 OK" Headers({\'date\': \'Mon\'})',
        b"INFO:root:config {'retries': 3, 'debug': True}",
        options([*first, {"role": "user", "content": "Only the democrats"}]),
    ]) + b"\n")
    report = json_report(str(log))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX003", 5)]
    assert report["summary"]["records"] == 2
    assert report["summary"]["skipped"] == {TEXT_LINE: 2, OTHER_OBJECT: 1}


def test_a_printed_dict_keeps_what_json_has_no_form_for_as_its_text_and_runs_nothing(tmp_path):
    # the Anthropic SDK's options hold a timeout object when one is set; nothing printed is ever run
    options = (b"DEBUG:anthropic._base_client:Request options: {'method': 'post', 'url': '/v1/messages', "
               b"'timeout': Timeout(connect=5.0, read=600), 'extra': __import__('os').remove('/nonexistent'), 'files': None, "
               b"'json_data': {'max_tokens': 1024, 'messages': [{'role': 'user', 'content': 'x'}, {'role': 'user', 'content': 'y'}], "
               b"'model': 'claude-sonnet-4-5', 'stop_sequences': {'END'}}}")
    found = located(tmp_path, options + b"\n", "debug.log")
    assert [(c, n) for c, n, _ in found] == [("CTX003", 1)]


@pytest.mark.parametrize("printed", [b"{**defaults, 'messages': []}", b"{'messages': [" + b"[" * 300 + b"]" * 300 + b"]}"])
def test_what_is_no_dict_python_printed_is_not_read_as_one(tmp_path, printed):
    found = located(tmp_path, b"INFO request " + printed + b"\n", "app.log")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1)]


def test_a_log_named_so_skips_its_lines_of_text_before_its_first_request(tmp_path):
    startup = b"".join(b"2026-01-02 10:00:00 INFO loading plugin %d\n" % n for n in range(100))
    found = located(tmp_path, startup + b"2026-01-02 10:00:01 INFO request " + TWO_USERS + b"\n", "app.log")
    assert [(c, n) for c, n, _ in found] == [("CTX003", 101)]


def test_a_record_cut_short_in_a_log_named_so_is_still_reported(tmp_path):
    found = located(tmp_path, ANSWERED + b"\n" + ANSWERED[:12] + b"\n" + b"INFO done\n", "requests.log")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 2)]


def test_a_record_a_logger_printed_over_lines_is_read_at_its_first_line(tmp_path):
    # logger.info("request %s", json.dumps(record, indent=2)), and the same with the JSON from a line of its own
    log = tmp_path / "app.log"
    log.write_bytes(b"2026-01-02 10:00:00 INFO app: starting\n"
                    + b"2026-01-02 10:00:01 INFO app.llm: request " + orjson.dumps(orjson.loads(ANSWERED), option=orjson.OPT_INDENT_2) + b"\n"
                    + b"2026-01-02 10:00:02 INFO app.llm: request:\n" + orjson.dumps(orjson.loads(REPLY_DROPPED), option=orjson.OPT_INDENT_2) + b"\n"
                    + b"2026-01-02 10:00:03 INFO app: done\n")
    first_of_second = log.read_bytes().split(b"\n").index(b"2026-01-02 10:00:02 INFO app.llm: request:") + 2
    for jobs in ("1", "2"):
        report = json_report(str(log), "--jobs", jobs)
        assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX016", first_of_second)]
        assert report["summary"]["records"] == 2 and report["summary"]["skipped"] == {TEXT_LINE: 3}


def test_an_object_nothing_closes_leaves_the_lines_after_it_as_they_were(tmp_path):
    found = located(tmp_path, b"2026-01-02 10:00:01 INFO request {\n" + TWO_USERS + b"\n  \"indented\": 1\n", "app.log")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 2)]


def test_a_cut_off_record_in_a_text_log_is_still_reported(tmp_path):
    found = located(tmp_path, b"2026-01-02 10:00:01 INFO request " + ANSWERED + b"\n2026-01-02 10:00:02 INFO request " + REPLY_DROPPED[:40] + b"\n", "app.log")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 2)]
    assert found[0][2] == "not JSON: unexpected end of data at column 41 (of the JSON after the log prefix, from column 34)"


@pytest.mark.parametrize("line", [
    b"hello",  # a line of text in JSON Lines, no record after a prefix anywhere
    b'"}}' + TWO_USERS,  # a record glued to the end of another: writes interleaved
    b'"messages": ' + TWO_USERS + b",",  # a member of JSON spread over lines
])
def test_text_that_is_no_log_prefix_is_still_not_json(tmp_path, line):
    found = located(tmp_path, line + b"\n" + TWO_USERS + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 2)]


def test_a_folder_reads_the_text_logs_that_log_requests(tmp_path):
    (tmp_path / "app.log").write_bytes(b"2026-01-02 10:00:00 INFO starting\n2026-01-02 10:00:01 INFO request " + TWO_USERS + b"\n")
    (tmp_path / "server.log").write_bytes(b'2026-01-02 10:00:00 INFO starting\n2026-01-02 10:00:01 INFO config {"debug": true}\n')
    report = json_report(str(tmp_path))
    assert [(f["file"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in report["findings"]] == [("app.log", "CTX003", 2)]
    assert report["summary"]["files"] == 1


@pytest.mark.parametrize("line", [record([]), orjson.dumps({"model": "gpt-4o", "messages": []})])
def test_a_request_with_no_messages_breaks_the_schema(tmp_path, line):
    # every chat API refuses it: OpenAI's "Invalid 'messages': empty array", Anthropic's "at least one message is required"
    found = located(tmp_path, line + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1)]
    assert found[0][2].endswith("/messages: is an empty array, expected at least 1 item (schema keyword 'minItems')")


def test_duplicate_keys_are_reported_and_the_last_is_read(tmp_path):
    line = b'{"session_id": "d", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "a"}], "messages": [{"role": "user", "content": "b"}, {"role": "user", "content": "c"}]}}'
    found = located(tmp_path, line + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 1)]
    assert "duplicate key 'messages' in the object at /request" in found[0][2]


def test_a_word_messages_inside_content_is_not_a_duplicate(tmp_path):
    line = record([{"role": "user", "content": 'print "messages" twice: "messages"'}], metadata={"messages": 2})
    assert located(tmp_path, line + b"\n") == []


@pytest.mark.parametrize(("line", "said"), [
    (b"[1, 2]", "record is an array, not an object"),
    (b"42", "record is a number, not an object"),
    (b'"text"', "record is a string, not an object"),
    (b"null", "record is null, not an object"),
])
def test_top_level_array_or_scalar(tmp_path, line, said):
    assert located(tmp_path, line + b"\n" + TWO_USERS + b"\n") == [("CTX900", 1, said), ("CTX003", 2, "messages 0 and 1 are both user messages")]


def test_a_100_mb_line_is_read(tmp_path):
    dump = "row 17, Paris, 18.5 C, ok; " * (100 * 1024 * 1024 // 27)
    line = record([{"role": "user", "content": "dump the table"},
                   {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "dump", "arguments": "{}"}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": dump}])
    assert len(line) > 100 * 1024 * 1024
    found = located(tmp_path, line + b"\n" + TWO_USERS + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX006", 1), ("CTX003", 2)]


# --- wrong shapes -----------------------------------------------------------------------

@pytest.mark.parametrize(("messages", "pointer", "said"), [
    ({"role": "user"}, "/request/messages", "is an object, expected array"),
    ([{"content": "no role"}], "/request/messages/0", "'role' is a required property"),
    ([{"role": "critic", "content": "x"}], "/request/messages/0/role", "is not one of system, developer, user, assistant, tool, function"),
    ([{"role": "assistant", "content": "x", "tool_calls": {"id": "c"}}], "/request/messages/0/tool_calls", "is an object, expected array"),
])
def test_wrong_shapes_get_a_pointer_and_a_plain_message(tmp_path, messages, pointer, said):
    found = located(tmp_path, record(messages) + b"\n" + TWO_USERS + b"\n")
    assert [(c, n) for c, n, _ in found] == [("CTX900", 1), ("CTX003", 2)]
    assert f"at {pointer}: {said}" in found[0][2]


def test_content_parts_are_read_not_rejected(tmp_path):
    parts = [{"type": "text", "text": "What is in this picture"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
             {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}]
    line = record([{"role": "user", "content": parts}, {"role": "user", "content": [{"type": "text", "text": "and this?"}]}])
    found = located(tmp_path, line + b"\n")
    assert found == [("CTX003", 1, "messages 0 and 1 are both user messages")]


def test_arguments_as_an_object_is_a_warning(tmp_path):
    messages = [{"role": "user", "content": "weather?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": {"city": "Paris"}}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "18"}]
    log = tmp_path / "log.jsonl"
    log.write_bytes(record(messages) + b"\n")
    findings = json_report(str(log))["findings"]
    assert [(f["code"], f["severity"], f["tool_call_id"]) for f in findings] == [("CTX027", "warning", "c1")]
    assert run_cli("check", str(log)).exit_code == 0


def _null_variants() -> list[bytes]:
    """A full record with, in turn, every value replaced by null."""
    full = {"session_id": "n", "timestamp": "2026-01-01T00:00:00Z", "request": {
        "model": "deepseek-reasoner", "thinking": {"type": "enabled"}, "tools": [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]},
                     {"role": "assistant", "content": "", "reasoning_content": "r", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "t"}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 10}}}
    variants = []

    def walk(value, path):
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            return
        for key, child in items:
            variants.append(path + [key])
            walk(child, path + [key])

    walk(full, [])
    lines = []
    for path in variants:
        copy = orjson.loads(orjson.dumps(full))
        target = copy
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = None
        lines.append(orjson.dumps(copy))
    return lines


def test_null_everywhere_never_crashes_and_every_line_is_accounted_for(tmp_path):
    lines = _null_variants()
    log = tmp_path / "nulls.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    report = json_report(str(log))
    seen = {t["line"] for s in report["sessions"] for t in s["turns"]} | {f["line"] for f in report["findings"] if f["code"] == "CTX900"}
    assert seen == set(range(1, len(lines) + 1))


# --- files ------------------------------------------------------------------------------

def test_directory_without_logs_and_missing_path(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    result = run_cli("check", str(tmp_path), str(DEMO))
    assert result.exit_code == 2 and "no request logs found in this directory" in result.stderr
    assert "trip-42" in result.stdout  # the other input is still checked


def test_unreadable_file(tmp_path, monkeypatch):
    log = tmp_path / "secret.jsonl"
    log.write_bytes(TWO_USERS + b"\n")
    if os.geteuid() == 0:  # root reads anything: make the open fail as it would for a user
        import ctxlint.ingest.jsonl as jsonl

        real_open = open

        def refuse(path, *args, **kwargs):
            if str(path) == str(log):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(jsonl, "open", refuse, raising=False)
    else:
        log.chmod(0)
    result = run_cli("check", str(log), str(DEMO))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"ctxlint: error: {log}: cannot open: Permission denied"]
    assert "trip-42" in result.stdout


def test_gz_that_is_not_gzip_and_truncated_gzip(tmp_path):
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_bytes(TWO_USERS + b"\n")  # named .gz, is not: read as what it is
    assert [(c, n) for c, n, _ in located(tmp_path, TWO_USERS + b"\n", "plain.jsonl.gz")] == [("CTX003", 1)]
    whole = gzip.compress(TWO_USERS + b"\n" + TWO_USERS.replace(b'"z"', b'"w"') + b"\n" * 5000)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) - 12])
    result = run_cli("check", "--format", "json", str(cut))
    assert result.exit_code == 2 and "read stopped after line" in result.stderr
    assert len(orjson.loads(result.stdout)["findings"]) == 2  # both records were read before the cut


def test_empty_file_and_stdin_that_closes_at_once(tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert run_cli("check", str(tmp_path / "empty.jsonl")).exit_code == 0
    assert run_cli("check", "-", input=b"").exit_code == 0


def _ctxlint(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from ctxlint.cli import main; main()", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_whose_writer_stops_early(tmp_path):
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    process = _ctxlint("check", "--format", "json", str(fifo))
    with open(fifo, "wb") as writer:
        writer.write(TWO_USERS + b"\n" + TWO_USERS[:20])  # the writer dies mid-line
    out, err = process.communicate(timeout=60)
    findings = orjson.loads(out)["findings"]
    assert [(f["code"], f["line"]) for f in findings] == [("CTX003", 1), ("CTX900", 2)]
    assert "cut off" in findings[1]["message"] and b"Traceback" not in err


# --- signals ----------------------------------------------------------------------------

def test_ctrl_c_exits_130_without_a_traceback():
    process = _ctxlint("check", "-", stdin=subprocess.PIPE)
    process.stdin.write(TWO_USERS + b"\n")
    process.stdin.flush()
    time.sleep(2.0)  # let it start and block on stdin
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err.decode().strip() == "ctxlint: interrupted"


def test_sigpipe_exits_quietly(tmp_path):
    log = tmp_path / "many.jsonl"
    log.write_bytes(b"".join(TWO_USERS.replace(b'"z"', f'"s{i}"'.encode()) + b"\n" for i in range(3000)))
    pipeline = subprocess.run(f"{sys.executable} -c 'from ctxlint.cli import main; main()' check -q {log} | head -1",
                              shell=True, cwd=ROOT, capture_output=True, timeout=120)
    assert pipeline.stdout.count(b"\n") == 1
    assert pipeline.stderr == b""


def test_a_terminal_that_cannot_show_a_character_gets_it_escaped():
    """An ASCII locale (or a Windows code page) cannot encode the report's marks (·, ◀): the
    report still prints, with those characters escaped, and exits as it would."""
    result = subprocess.run([sys.executable, "-c", "from ctxlint.cli import main; main()", "check", "--no-color", str(DEMO)],
                            cwd=ROOT, capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1 and result.stderr == b""
    assert b"session trip-42 \\xb7 deepseek-reasoner" in result.stdout and b"2 \\u25c0" in result.stdout


# --- no network, no writes, nothing outside the inputs ----------------------------------

AUDITED_RUN = textwrap.dedent("""
    import atexit, os, sys
    events = []
    cache = os.environ["TIKTOKEN_CACHE_DIR"]
    def audit(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "urllib.Request", "http.client.connect"):
            events.append(event)
        elif event == "open" and isinstance(args[0], str):
            path, mode = args[0], str(args[1] or "r")
            if path.startswith(cache) and any(m in mode for m in "wax+"):
                events.append("write " + path)
            if "decoy" in path:
                events.append("read " + path)
    sys.addaudithook(audit)
    atexit.register(lambda: open(os.environ["AUDIT_OUT"], "w").write("\\n".join(events)))
    from ctxlint.cli import main
    main()
""")


def test_whole_cli_run_makes_no_connection_writes_no_cache_reads_nothing_else(tmp_path):
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    (tmp_path / "decoy.jsonl").write_bytes(TWO_USERS + b"\n")
    audit_out = tmp_path / "audit.txt"
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "AUDIT_OUT": str(audit_out), "PYTHONHASHSEED": "0"}
    logs = [str(DEMO), str(FIXTURES / "readers")]
    result = subprocess.run([sys.executable, "-c", AUDITED_RUN, "check", "--format", "sarif", *logs],
                            cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert audit_out.read_text() == ""
    assert list(cache.iterdir()) == []


def test_output_does_not_depend_on_the_hash_seed():
    outputs = set()
    for seed in ("1", "2"):
        result = subprocess.run([sys.executable, "-c", "from ctxlint.cli import main; main()", "check", "--format", "json", str(DEMO), str(FIXTURES / "rules")],
                                cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, timeout=120)
        outputs.add(result.stdout)
    assert len(outputs) == 1


@pytest.mark.parametrize(("line", "hint"), [
    ({"model": "gpt-4o", "input": "hi"}, "it looks like an embeddings body, or a Responses API body with neither `instructions` nor input items"),
    ({"contents": {"role": "user", "parts": [{"text": "hi"}]}}, "it looks like a Gemini generateContent body whose `contents` is not a list"),
    ({"foo": 1}, 'expected an envelope {"request": {...}}, a bare request {"messages": [...]}'),
])
def test_unknown_shapes_name_the_closest_known_one(tmp_path, line, hint):
    found = located(tmp_path, orjson.dumps(line) + b"\n")
    assert found == [("CTX900", 1, f"not a known record shape: {hint}" + found[0][2].split(hint, 1)[1])]


def test_anthropic_messages_bodies_are_normalized_and_linted(tmp_path):
    anthropic = [
        {"model": "claude-sonnet-4", "max_tokens": 100, "system": "be brief", "messages": [{"role": "user", "content": "hi"}]},
        {"session_id": "a", "request": {"model": "claude-sonnet-4", "tools": [{"name": "w", "input_schema": {"type": "object"}}], "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "w", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18"}]}]}},
    ]
    log = tmp_path / "anthropic.jsonl"
    log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in anthropic) + TWO_USERS + b"\n")
    report = json_report(str(log))
    assert report["summary"]["skipped"] == {}
    assert report["summary"]["records"] == 3
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX003", 3)]


def test_a_tool_call_without_function_or_custom_says_what_it_needs(tmp_path):
    line = orjson.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": [{"id": "x", "type": "function"}]}]}})
    assert located(tmp_path, line + b"\n") == [
        ("CTX900", 1, "request breaks the chat-completions schema at /request/messages/0/tool_calls/0: needs 'function' or 'custom' (schema keyword 'anyOf')")]


def test_records_nested_past_what_can_be_hashed_are_located_and_the_log_goes_on(tmp_path):
    """orjson reads 1024 levels but writes 254, and Python recursion stops near 1000: a
    record nested that deep (in a tool schema, a call's input, a message's content) is a
    CTX900 at its line, in check, show, stats and --jobs alike, and the rest is linted."""
    deep_object, deep_list = "1", '"x"'
    for _ in range(600):
        deep_object, deep_list = '{"a":' + deep_object + "}", "[" + deep_list + "]"
    schema = '{"type":"string"}'
    for _ in range(500):
        schema = '{"type":"object","properties":{"a":' + schema + "}}"
    two_users = '{"session_id":"s","request":{"model":"gpt-4o","messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}}'
    lines = [
        '{"session_id":"s","request":{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":' + schema + "}}]}}",
        two_users,
        '{"session_id":"a","request":{"model":"claude-sonnet-4-5","max_tokens":5,"system":"s","messages":[{"role":"user","content":"x"},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":' + deep_object + '}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}]}}',
        '{"model":"gemini-2.5-flash","request":{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":' + schema.replace('"object"', '"OBJECT"') + "}]}]}}",
        '{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"keyless"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",'
        '"function":{"name":"f","arguments":' + deep_object + '}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}}',
    ]
    log = tmp_path / "deep.jsonl"
    log.write_text("\n".join(lines) + "\n")
    report = json_report(str(log))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX900", 1), ("CTX003", 2), ("CTX900", 3), ("CTX900", 4), ("CTX900", 5)]
    assert all("nested deeper than ctxlint reads" in f["message"] for f in report["findings"] if f["code"] == "CTX900")
    assert report["summary"]["records"] == 1 and [s["id"] for s in report["sessions"]] == ["s"]
    assert json_report(str(log), "--jobs", "2") == report
    for command in (["show", str(log), "--session", "s"], ["stats", str(log)]):
        result = run_cli(*command)
        assert result.exit_code == 0 and "internal error" not in result.output


def test_a_too_deep_record_met_while_routing_its_key_is_reported_by_the_worker_that_owns_it(tmp_path):
    """A keyed Gemini record whose content is too deep to hash fails while its key's
    conversations are routed; under --jobs only the session's owner reads it, and reports it."""
    deep = '"x"'
    for _ in range(600):
        deep = "[" + deep + "]"
    lines = []
    for key in range(6):
        opening = '{"role":"user","parts":[{"text":"hi %d"}]}' % key
        lines.append('{"session_id":"k%d","model":"gemini-2.5-flash","request":{"contents":[%s]}}' % (key, opening))
        lines.append('{"session_id":"k%d","model":"gemini-2.5-flash","request":{"contents":[%s,{"role":"model","parts":[{"text":"yo"}]},'
                     '{"role":"user","parts":[{"inlineData":%s}]}]}}' % (key, opening, deep))
    log = tmp_path / "deep_keys.jsonl"
    log.write_text("\n".join(lines) + "\n")
    report = json_report(str(log))
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("CTX900", line) for line in range(2, 13, 2)]
    assert report["summary"]["records"] == 6
    assert json_report(str(log), "--jobs", "2") == report
