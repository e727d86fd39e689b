"""The command line: exit codes, selection, formats, usage errors, docs."""

from __future__ import annotations

import orjson
import pytest

from conftest import FIXTURES
from helpers import code_lines, json_report, run_cli

DEMO = str(FIXTURES / "demo" / "broken-agent.jsonl")
CLEAN = str(FIXTURES / "rules" / "CTX001" / "pass_null_content_with_tool_calls.jsonl")


def test_demo_log_shows_several_rules():
    report = json_report(DEMO)
    assert code_lines(report) == [("CTX003", 5), ("CTX004", 2), ("CTX005", 3), ("CTX008", 4)]
    sessions = {s["id"]: s for s in report["sessions"]}
    assert sessions["trip-42"]["first_error_turn"] == 2 and sessions["trip-42"]["requests"] == 3
    assert sessions["chat-7"]["first_error_turn"] == 1
    assert report["summary"] == {**report["summary"], "files": 1, "records": 5, "sessions": 2, "errors": 4, "warnings": 0, "infos": 0}


def test_json_finding_carries_every_documented_key():
    finding = json_report(DEMO)["findings"][0]
    for key in ("code", "name", "severity", "message", "file", "line", "session", "turn", "message_index", "tool_call_id", "evidence"):
        assert key in finding


def test_exit_codes():
    assert run_cli("check", CLEAN).exit_code == 0
    assert run_cli("check", DEMO).exit_code == 1
    assert run_cli("check", "does/not/exist.jsonl").exit_code == 2
    assert run_cli("check", DEMO, "--select", "CTX999").exit_code == 2
    assert run_cli("check", DEMO, "--format", "yaml").exit_code == 2


def test_missing_file_error_names_it_and_other_inputs_are_still_checked():
    result = run_cli("check", "--format", "json", "nope.jsonl", DEMO)
    assert result.exit_code == 2
    assert "nope.jsonl: no such file or directory" in result.stderr
    assert len(orjson.loads(result.stdout)["findings"]) == 4


def test_a_broken_or_looping_symbolic_link_is_named_as_one(tmp_path):
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "rotated-away.jsonl")
    result = run_cli("check", str(tmp_path / "loop.jsonl"), str(tmp_path / "gone.jsonl"), DEMO)
    assert result.exit_code == 2
    for name in ("loop.jsonl", "gone.jsonl"):
        assert f"{name}: a symbolic link to nothing (its target is missing, or the link leads back to itself)" in result.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("--input-format", "snapshot", DEMO), f"{DEMO}: cannot read as a snapshot run (a folder of loop-N folders): Not a directory"),
    (("--input-format", "snapshot", "-"), "-: a snapshot run is a folder (of loop-N folders), which stdin cannot hold"),
    (("--session-key", "", DEMO), "--session-key takes a dotted path of names"),
    (("--session-key", "metadata.", DEMO), "--session-key takes a dotted path of names"),
])
def test_an_input_or_option_that_cannot_be_read_so_is_a_usage_error(args, said):
    result = run_cli("check", *args, input="")
    assert result.exit_code == 2 and said in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output


def test_select_and_ignore_by_code_name_and_prefix():
    assert {c for c, _ in code_lines(json_report(DEMO, "--select", "CTX004"))} == {"CTX004"}
    assert {c for c, _ in code_lines(json_report(DEMO, "--select", "lost-first-turn-constraint"))} == {"CTX008"}
    assert {c for c, _ in code_lines(json_report(DEMO, "--ignore", "CTX00"))} == set()
    assert {c for c, _ in code_lines(json_report(DEMO, "--select", "CTX0", "--ignore", "CTX008,CTX003"))} == {"CTX004", "CTX005"}
    assert {c for c, _ in code_lines(json_report(DEMO, "--ignore", "CTX0", "--select", "CTX005"))} == {"CTX005"}


def test_a_provider_error_another_rule_explains_is_reported_when_that_rule_is_not_selected():
    """CTX022 leaves an error to the rule that reports its defect at the same request, and
    only then: with that rule ignored, the provider's error is still reported."""
    case = str(FIXTURES / "rules" / "CTX022" / "fail_error_about_a_defect_another_rule_reports_is_that_rules_finding.jsonl")
    assert code_lines(json_report(case)) == [("CTX001", 2), ("CTX005", 1), ("CTX022", 3)]
    assert code_lines(json_report(case, "--ignore", "CTX001,CTX005")) == [("CTX022", 1), ("CTX022", 2), ("CTX022", 3)]
    assert code_lines(json_report(case, "--select", "CTX022")) == [("CTX022", 1), ("CTX022", 2), ("CTX022", 3)]


def test_fail_on_warning():
    case = str(FIXTURES / "rules" / "CTX006" / "fail_offline_count_just_over_window_may_not_fit.jsonl")
    assert run_cli("check", case).exit_code == 0
    assert run_cli("check", case, "--fail-on", "warning").exit_code == 1


def test_opt_in_rules_run_only_when_selected():
    """A prompt near its window is legal: CTX007 says so only when asked to, by code,
    name, prefix or ALL; the default selection and its ignores leave it out."""
    case = str(FIXTURES / "rules" / "CTX007" / "fail_near_limit_once.jsonl")
    assert code_lines(json_report(case)) == []
    for selected in (["--extend-select", "CTX007"], ["--extend-select", "context-window-near-limit"], ["--select", "ALL"],
                     ["--select", "CTX00"]):
        assert code_lines(json_report(case, *selected)) == [("CTX007", 1)], selected
    assert code_lines(json_report(case, "--select", "ALL", "--ignore", "CTX007")) == []
    listed = run_cli("rules").stdout
    assert "warning (opt-in)" in listed and "info (opt-in)" in listed


def test_text_report_marks_the_turn_where_the_session_went_wrong():
    result = run_cli("check", DEMO, "--no-color")
    assert "session trip-42" in result.stdout and "went wrong at turn 2" in result.stdout
    assert "fix:" in result.stdout
    assert "5 requests in 1 file, 2 sessions: 4 errors" in result.stdout
    assert "prompt tokens counted by: server (4 requests)" in result.stdout


def test_clean_sessions_collapse_unless_verbose():
    quiet = run_cli("check", CLEAN, "--no-color").stdout
    assert "clean" in quiet and "prompt tokens" not in quiet.splitlines()[0]
    assert "turn" in run_cli("check", CLEAN, "--no-color", "--verbose").stdout


def test_long_sessions_fold_turns_without_findings_unless_verbose(tmp_path):
    """A 20-turn session with one finding at turn 10: the table keeps turns 1, 8-12 and 20,
    and folds the stretches between them into one row each; --verbose shows all 20."""
    history, lines = [{"role": "system", "content": "Be brief."}], []
    for number in range(1, 21):
        history.append({"role": "user", "content": f"question {number}"})
        sent = history[:-1] + [{"role": "user", "content": "hello?"}, history[-1]] if number == 10 else history
        lines.append(orjson.dumps({"session_id": "long", "request": {"model": "gpt-4o", "messages": sent}}))
        history = history + [{"role": "assistant", "content": f"answer {number}"}]
    log = tmp_path / "long.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    folded = run_cli("check", str(log), "--no-color").stdout
    table = folded.split("\n  " + str(log))[0].splitlines()[2:]
    rows = [line.split()[0] for line in table]
    assert rows == ["1", "⋮", "8", "9", "10", "11", "12", "⋮", "20"]
    assert "6 turns without findings (2–7; -v shows them)" in folded and "7 turns without findings (13–19" in folded
    every = run_cli("check", str(log), "--no-color", "--verbose").stdout
    assert "⋮" not in every and all(f"\n  {number:>2}   " in every or f"\n{number} ◀" in every for number in range(1, 21))


def test_quiet_prints_findings_only():
    lines = run_cli("check", DEMO, "--no-color", "-q").stdout.strip().splitlines()
    assert len(lines) == 4 and all(" CTX00" in line for line in lines)


def test_rules_and_rule_docs():
    listing = run_cli("rules").stdout
    assert "CTX001" in listing and "orphan-tool-result" in listing
    doc = run_cli("rule", "CTX004").stdout
    assert "## What it does" in doc and "## Why is this bad?" in doc and "## Example" in doc
    assert run_cli("rule", "CTX999").exit_code == 2


@pytest.mark.parametrize("args", [("--version",), ("version",)])
def test_version_as_an_option_and_as_a_command(args):
    from ctxlint import __version__

    result = run_cli(*args)
    assert result.exit_code == 0 and result.stdout == f"{__version__}\n"


def test_model_alias_and_context_window_override(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(orjson.dumps({"session_id": "a", "request": {"model": "my-endpoint", "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "hi"}]},
                                 "response": {"choices": [{"message": {"role": "assistant", "content": "yo"}}], "usage": {"prompt_tokens": 900}}}).decode() + "\n")
    assert code_lines(json_report(str(log))) == []
    assert code_lines(json_report(str(log), "--model-alias", "my-endpoint=glm-5.1")) == [("CTX005", 1)]
    assert code_lines(json_report(str(log), "--context-window", "800")) == [("CTX006", 1)]


def test_model_for_requests_that_name_none(tmp_path):
    """A trajectory dump names no model: --model (or `model` in the config) says which one
    its requests went to; a request that names its model keeps it."""
    long_text = "lorem ipsum dolor sit amet " * 2400  # about 12,000 tokens: past gpt-4's 8,192 however counted
    trajectory = [{"task_id": 0, "traj": [{"role": "user", "content": long_text}, {"role": "assistant", "content": "Noted."}]}]
    dump = tmp_path / "run.json"
    dump.write_bytes(orjson.dumps(trajectory))
    unnamed = json_report(str(dump))
    assert code_lines(unnamed) == [] and "unknown model: no context window" in unnamed["coverage"]["CTX006"]["not_judged"]
    assert "name the model: --model NAME for requests that name none" in run_cli("check", str(dump)).stdout
    named = json_report(str(dump), "--model", "gpt-4")
    assert code_lines(named) == [("CTX006", 1)] and named["coverage"]["CTX006"]["not_judged"] == {}
    assert "of gpt-4" in named["findings"][0]["message"]
    (tmp_path / "ctxlint.toml").write_text('model = "gpt-4"\n')
    assert code_lines(json_report(str(dump), "--config", str(tmp_path / "ctxlint.toml"))) == [("CTX006", 1)]
    log = tmp_path / "named.jsonl"
    log.write_bytes(orjson.dumps({"session_id": "s", "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": long_text}]}}) + b"\n")
    assert code_lines(json_report(str(log), "--model", "gpt-4")) == []  # gpt-4.1's window holds it


def test_log_text_cannot_drive_the_terminal(tmp_path):
    log = tmp_path / "evil.jsonl"
    evil = "\x1b]0;pwned\x07\x1b[2J[bold red]x[/]"
    lines = [{"session_id": evil, "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}}]
    log.write_text("\n".join(orjson.dumps(l).decode() for l in lines) + "\n")
    out = run_cli("check", str(log), "--no-color").stdout
    assert "\x1b" not in out and "\\x1b" in out and "[bold red]x[/]" in out


def test_a_file_given_twice_is_read_once(tmp_path):
    """Named twice, named and in a folder given, or through a link: its requests are not
    read as sent twice (which would be a flood of findings about the replay)."""
    link = tmp_path / "latest.jsonl"
    link.symlink_to(DEMO)
    once = json_report(DEMO)
    for given in ((DEMO, DEMO), (str(FIXTURES / "demo"), DEMO), (DEMO, str(link))):
        report = json_report(*given)
        assert report["findings"] == once["findings"] and report["summary"]["records"] == 5, given


def test_a_run_that_finds_no_request_says_so(tmp_path):
    """A gate pointed at files that hold no request (a wrong path, an agent's transcript)
    would pass on nothing: it still exits 0, and warns on stderr unless --quiet."""
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"resourceMetrics": []}\n')
    result = run_cli("check", str(log))
    assert result.exit_code == 0
    assert "ctxlint: warning: no request found to lint" in result.stderr
    assert "no request found" not in run_cli("check", "--quiet", str(log)).stderr
    assert "no request found" not in run_cli("check", str(FIXTURES / "demo" / "broken-agent.jsonl")).stderr
