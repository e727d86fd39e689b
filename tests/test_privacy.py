"""--redact: planted secrets never reach any output format, whatever rule quotes the log."""

from __future__ import annotations

import orjson
import pytest

from helpers import run_cli

SECRET = "sk-live-7Q2ZSECRET"


def _planted_log(tmp_path):
    """Defects whose findings would quote content: every place a secret can sit."""
    s = SECRET
    records = [
        # CTX003 quotes both user messages; CTX025 quotes repair text
        {"session_id": "a", "request": {"model": "gpt-4o", "messages": [
            {"role": "system", "content": f"Never reveal {s}. Always answer in French."},
            {"role": "user", "content": f"my key is {s}"}, {"role": "user", "content": f"again {s}"}]}},
        # CTX022 quotes the provider's error message
        {"session_id": "b", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
         "response": {"error": {"message": f"invalid token {s} in message order"}}, "status": 400},
        # CTX006 quotes a context-length error
        {"session_id": "c", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]},
         "response": {"error": {"message": f"maximum context length exceeded near {s}", "code": "context_length_exceeded"}}, "status": 400},
        # CTX008 quotes the lost first-turn line (session a continues without its system prompt)
        {"session_id": "a", "request": {"model": "gpt-4o", "messages": [
            {"role": "user", "content": f"my key is {s}"}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]}},
        # CTX013 would quote the argument value in a schema error; CTX012 parse errors
        {"session_id": "d", "request": {"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "pay", "parameters": {"type": "object", "properties": {"amount": {"type": "integer"}}}}}],
                                       "messages": [{"role": "user", "content": "pay"},
                                                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "pay", "arguments": orjson.dumps({"amount": s}).decode()}}]},
                                                    {"role": "tool", "tool_call_id": "c1", "content": f"receipt {s} " * 3000},
                                                    {"role": "user", "content": "thanks"}]}},
        # CTX016 quotes the dropped assistant reply
        {"session_id": "e", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "q1"}]},
         "response": {"choices": [{"message": {"role": "assistant", "content": f"the answer is {s}"}, "finish_reason": "stop"}]}},
        {"session_id": "e", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "q1"}, {"role": "user", "content": "q2"}]}},
        # CTX900: a schema break whose bad value is a secret
        {"session_id": "f", "request": {"model": "gpt-4o", "messages": [{"role": s, "content": "x"}]}},
    ]
    log = tmp_path / "secret.jsonl"
    log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) + f'{{"broken": "{s}'.encode() + b"\n")
    return str(log)


def test_without_redact_the_planted_log_does_quote_the_secret(tmp_path):
    """The check below means something only if findings would otherwise quote the secret."""
    result = run_cli("check", _planted_log(tmp_path), "--format", "json", "--select", "ALL")
    assert SECRET in result.stdout
    codes = {f["code"] for f in orjson.loads(result.stdout)["findings"]}
    assert {"CTX003", "CTX006", "CTX008", "CTX013", "CTX016", "CTX020", "CTX022", "CTX900"} <= codes


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "jsonl", "sarif", "github", "junit", "markdown"])
def test_redact_keeps_every_format_free_of_content(tmp_path, fmt):
    result = run_cli("check", _planted_log(tmp_path), "--redact", "--format", fmt, "--verbose", "--select", "ALL")
    assert result.exit_code == 1
    assert SECRET not in result.stdout and SECRET not in result.stderr
    assert "7Q2Z" not in result.stdout


def test_redact_also_covers_statistics_baselines_and_views(tmp_path):
    log = _planted_log(tmp_path)
    baseline = tmp_path / "b.json"
    run_cli("check", log, "--redact", "--write-baseline", str(baseline))
    assert SECRET not in baseline.read_text()
    for args in (("check", log, "--redact", "--statistics"), ("show", log, "--session", "a", "--redact"),
                 ("show", log, "--session", "d", "--redact", "--format", "json"), ("stats", log),
                 ("check", log, "--redact", "--baseline", str(baseline), "--format", "json")):
        result = run_cli(*args)
        assert SECRET not in result.stdout + result.stderr, args


def test_without_redact_excerpts_are_short_and_never_a_whole_tool_output(tmp_path):
    result = run_cli("check", _planted_log(tmp_path), "--format", "json", "--select", "ALL")
    for finding in orjson.loads(result.stdout)["findings"]:
        assert len(orjson.dumps(finding["evidence"])) < 1200
        assert finding["message"].count("receipt") <= 1
