"""Every output format on the demo log: parsed back, validated, matched line by line."""

from __future__ import annotations

import os
import re
import stat
import threading
import xml.etree.ElementTree as ET

import jsonschema
import orjson

from conftest import FIXTURES, SHARED, needs_sarif_schema
from helpers import run_cli

DEMO = str(FIXTURES / "demo" / "broken-agent.jsonl")
DEMO_FINDINGS = [("CTX004", 2), ("CTX005", 3), ("CTX008", 4), ("CTX003", 5)]


def output(*args: str) -> str:
    result = run_cli("check", DEMO, *args)
    assert result.exit_code == 1, result.output
    return result.stdout


def test_concise_is_one_line_per_finding():
    lines = output("--format", "concise").splitlines()
    assert [tuple(re.match(r".*:(\d+): (CTX\d+) ", line).group(2, 1)) for line in lines] == [(c, str(n)) for c, n in DEMO_FINDINGS]
    assert lines[0].startswith(f"{DEMO}:2: CTX004 assistant message 2 comes back without the reasoning_content")


def test_jsonl_is_one_finding_object_per_line():
    findings = [orjson.loads(line) for line in output("--format", "jsonl").splitlines()]
    assert [(f["code"], f["line"]) for f in findings] == DEMO_FINDINGS
    assert all(f["remediation"] and f["fingerprint"] for f in findings)


@needs_sarif_schema
def test_sarif_validates_against_the_2_1_0_schema():
    document = orjson.loads(output("--format", "sarif"))
    schema = orjson.loads((SHARED / "schemas" / "sarif-2.1.0.json").read_bytes())
    jsonschema.validate(document, schema, cls=jsonschema.validators.validator_for(schema))
    run = document["runs"][0]
    results = run["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == DEMO_FINDINGS
    first = results[0]
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "session/trip-42/turn/2"
    assert first["partialFingerprints"]["ctxlint/v1"]
    rule = run["tool"]["driver"]["rules"][first["ruleIndex"]]
    assert rule["id"] == "CTX004" and rule["help"]["text"] and "## Why is this bad?" in rule["help"]["markdown"]
    assert "Fix:" in first["message"]["text"]
    assert run["properties"]["coverage"]["CTX004"]["judged"] == 5


def test_github_workflow_commands():
    lines = output("--format", "github").splitlines()
    pattern = re.compile(r"^::error file=(?P<file>[^,]+),line=(?P<line>\d+),title=ctxlint (?P<code>CTX\d+)::(?P<text>.+)$")
    matches = [pattern.match(line) for line in lines]
    assert all(matches), lines
    assert [(m["code"], int(m["line"])) for m in matches] == DEMO_FINDINGS
    assert "Fix: " in matches[0]["text"]


def test_github_escapes_percent_and_property_separators(tmp_path):
    bad = {"session_id": "s", "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "a"}]},
           "response": {"error": {"message": "100% broken\nsecond line"}}, "status": 400}
    log = tmp_path / "a,b:c.jsonl"
    log.write_bytes(orjson.dumps(bad) + b"\n")
    result = run_cli("check", "--format", "github", str(log))
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("::error file=")
    assert "a%2Cb%3Ac.jsonl,line=1,title=ctxlint CTX022::" in result.stdout
    assert "100%25 broken second line" in result.stdout


def test_junit_has_a_testcase_per_session_and_fails_the_broken_ones():
    root = ET.fromstring(output("--format", "junit"))
    cases = root.findall("./testsuite/testcase")
    assert sorted(c.get("name") for c in cases) == ["session chat-7", "session trip-42"]
    failures = {c.get("name"): c.find("failure") for c in cases}
    assert failures["session trip-42"].get("message") == "2 findings: CTX004, CTX008"
    assert "CTX008" in failures["session trip-42"].text and root.get("failures") == "2" and root.get("tests") == "2"


def test_junit_passes_a_session_whose_findings_are_below_fail_on():
    result = run_cli("check", DEMO, "--format", "junit", "--select", "CTX003", "--fail-on", "error")
    root = ET.fromstring(result.stdout)
    assert root.get("failures") == "1"
    result = run_cli("check", CLEAN_LOG, "--format", "junit")
    assert ET.fromstring(result.stdout).get("failures") == "0" and result.exit_code == 0


CLEAN_LOG = str(FIXTURES / "rules" / "CTX001" / "pass_null_content_with_tool_calls.jsonl")


def test_markdown_summary_table():
    text = output("--format", "markdown")
    assert text.startswith("## ctxlint\n\n**4 errors, 0 warnings, 0 info**")
    assert "| CTX008 | lost-first-turn-constraint | error | 1 |" in text
    assert text.count("\n| `") == 4


def test_output_file_and_statistics(tmp_path):
    target = tmp_path / "report.sarif"
    result = run_cli("check", DEMO, "--format", "sarif", "--output", str(target))
    assert result.exit_code == 1 and result.stdout == "" and orjson.loads(target.read_bytes())["version"] == "2.1.0"
    stats = run_cli("check", DEMO, "--statistics").stdout.splitlines()
    assert [line.split()[:2] for line in stats] == [["1", "CTX003"], ["1", "CTX004"], ["1", "CTX005"], ["1", "CTX008"]]
    rows = orjson.loads(run_cli("check", DEMO, "--statistics", "--format", "json").stdout)
    assert rows[-1] == {"code": "CTX008", "name": "lost-first-turn-constraint", "severity": "error", "count": 1}


def test_output_file_replaces_the_old_one_whole_with_the_usual_mode(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old report")
    old_mask = os.umask(0o022)
    try:
        result = run_cli("check", DEMO, "--format", "json", "--output", str(target))
    finally:
        os.umask(old_mask)
    assert result.exit_code == 1 and orjson.loads(target.read_bytes())["version"] == 1
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no partial file left


def test_output_to_a_pipe_is_written_into_it_and_the_pipe_stays(tmp_path):
    """A named pipe (like /dev/stdout or /dev/null, not a regular file) is written as it is:
    never replaced by a file, which as root would replace a device."""
    pipe = tmp_path / "report.pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("check", DEMO, "--format", "json", "--output", str(pipe))
    reader.join(timeout=10)
    assert result.exit_code == 1 and stat.S_ISFIFO(pipe.stat().st_mode)
    assert len(orjson.loads(received[0])["findings"]) == 4


def test_output_through_a_symbolic_link_replaces_the_file_it_leads_to(tmp_path):
    (tmp_path / "reports").mkdir()
    real = tmp_path / "reports" / "latest.json"
    real.write_text("old report")
    link = tmp_path / "report.json"
    link.symlink_to(real)
    assert run_cli("check", DEMO, "--format", "json", "--output", str(link)).exit_code == 1
    assert link.is_symlink() and orjson.loads(real.read_bytes())["version"] == 1


def test_output_to_an_unwritable_place_is_exit_2(tmp_path):
    result = run_cli("check", DEMO, "--output", str(tmp_path / "missing" / "dir" / "out.txt"))
    assert result.exit_code == 2 and "cannot write output" in result.stderr


def test_exit_zero_and_quiet():
    assert run_cli("check", DEMO, "--exit-zero").exit_code == 0
    quiet = run_cli("check", DEMO, "-q")
    assert quiet.exit_code == 1 and len(quiet.stdout.splitlines()) == 4


def test_coverage_is_stated_and_fail_on_unchecked(tmp_path):
    log = tmp_path / "unknown.jsonl"
    turn = {"session_id": "s", "request": {"model": "in-house-llm-v3", "messages": [{"role": "user", "content": "hi"}]}}
    log.write_bytes(orjson.dumps(turn) + b"\n" + orjson.dumps({**turn, "request": {**turn["request"], "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "ok"}]}}) + b"\n")
    UNKNOWN_MODEL = str(log)
    result = run_cli("check", UNKNOWN_MODEL, "--format", "json")
    coverage = orjson.loads(result.stdout)["coverage"]
    assert coverage["CTX006"]["not_judged"] == {"unknown model: no context window": 2}
    assert result.exit_code == 0
    assert run_cli("check", UNKNOWN_MODEL, "--fail-on-unchecked").exit_code == 1
    assert run_cli("check", UNKNOWN_MODEL, "--fail-on-unchecked", "--select", "CTX001,CTX003").exit_code == 0
    assert coverage["CTX016"]["not_judged"] == {"no response logged for the previous request": 1}
    text = run_cli("check", UNKNOWN_MODEL).stdout
    assert "could not check: CTX004 2 requests (unknown model: no thinking profile)" in text


def test_every_machine_format_carries_the_remediation():
    for fmt in ("json", "jsonl", "sarif", "github", "junit", "markdown", "text"):
        assert "Store the assistant message whole" in output("--format", fmt), fmt


def test_no_progress_bar_when_stderr_is_not_a_terminal():
    result = run_cli("check", DEMO)
    assert result.stderr == ""


def test_progress_bar_only_for_a_terminal_outside_ci(monkeypatch, capsys):
    import sys

    from ctxlint.progress import LARGE_INPUT_BYTES, BarProgress, NoProgress, progress_for

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert isinstance(progress_for(True), BarProgress)
    assert type(progress_for(False)) is NoProgress
    monkeypatch.setenv("CI", "true")
    assert type(progress_for(True)) is NoProgress
    bar = BarProgress()
    bar.reading(LARGE_INPUT_BYTES // 2)  # small input: no bar at all
    assert bar._bar is None
    bar.reading(LARGE_INPUT_BYTES * 2)
    bar.advance(LARGE_INPUT_BYTES)
    bar.checking(3)
    bar.checked()
    bar.close()
    assert bar._bar is None


def test_pre_commit_hook_runs_ctxlint_on_jsonl():
    import re as regex

    import yaml

    from conftest import ROOT

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "ctxlint")
    assert hook["entry"].startswith("ctxlint check") and hook["language"] == "python"
    assert regex.search(hook["files"], "logs/run.jsonl") and not regex.search(hook["files"], "README.md")
