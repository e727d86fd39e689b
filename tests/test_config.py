"""Config files: discovery, precedence, every key, and located usage errors."""

from __future__ import annotations

import jsonschema
import orjson
import pytest

from conftest import FIXTURES, ROOT
from helpers import code_lines, json_report, run_cli

DEMO = str(FIXTURES / "demo" / "broken-agent.jsonl")
NEAR = str(FIXTURES / "rules" / "CTX007" / "pass_below_threshold.jsonl")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with a nested working directory."""
    work = tmp_path / "service" / "logs"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


def test_ctxlint_toml_is_found_upward(project):
    (project / "ctxlint.toml").write_text('select = ["CTX003"]\n')
    assert code_lines(json_report(DEMO)) == [("CTX003", 5)]


def test_the_closest_config_wins_and_pyproject_needs_its_table(project):
    (project / "ctxlint.toml").write_text('select = ["CTX003"]\n')
    (project / "service" / "pyproject.toml").write_text('[tool.ctxlint]\nselect = ["CTX005"]\n')
    assert code_lines(json_report(DEMO)) == [("CTX005", 3)]
    (project / "service" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.ctxlint]: not a config
    assert code_lines(json_report(DEMO)) == [("CTX003", 5)]


def test_isolated_and_explicit_config(project):
    (project / "ctxlint.toml").write_text('select = ["CTX003"]\n')
    assert len(json_report(DEMO, "--isolated")["findings"]) == 4
    other = project / "other.toml"
    other.write_text('select = ["CTX004"]\n')
    assert code_lines(json_report(DEMO, "--config", str(other))) == [("CTX004", 2)]


def test_command_line_select_replaces_and_ignore_adds(project):
    (project / "ctxlint.toml").write_text('select = ["CTX003", "CTX004"]\nignore = ["CTX004"]\nextend-select = ["CTX005"]\n')
    assert code_lines(json_report(DEMO)) == [("CTX003", 5), ("CTX005", 3)]
    assert code_lines(json_report(DEMO, "--select", "CTX008")) == [("CTX008", 4)]
    assert code_lines(json_report(DEMO, "--ignore", "CTX005")) == [("CTX003", 5)]


def test_severity_override_and_fail_on(project):
    (project / "ctxlint.toml").write_text('fail-on = "warning"\n[severity]\nCTX0 = "warning"\nconsecutive-user-messages = "info"\n')
    report = json_report(DEMO)
    severities = {f["code"]: f["severity"] for f in report["findings"]}
    assert severities == {"CTX003": "info", "CTX004": "warning", "CTX005": "warning", "CTX008": "warning"}
    assert run_cli("check", DEMO).exit_code == 1  # warnings fail under fail-on = "warning"
    (project / "ctxlint.toml").write_text('[severity]\nALL = "info"\n')
    assert run_cli("check", DEMO).exit_code == 0


def test_rule_options(project):
    (project / "ctxlint.toml").write_text('extend-select = ["CTX007"]\n')
    assert code_lines(json_report(NEAR)) == []
    (project / "ctxlint.toml").write_text('extend-select = ["CTX007"]\n[rules.context-window-near-limit]\nratio = 0.75\n')
    assert code_lines(json_report(NEAR)) == [("CTX007", 1)]


def test_restated_share_sets_how_much_a_summary_must_keep(project):
    summaries = str(FIXTURES / "rules" / "CTX008" / "pass_summary_restates_first_user_message.jsonl")
    assert code_lines(json_report(summaries)) == []
    # session s1's summary keeps 7 of the 8 content words of the first user message ("find" is gone)
    (project / "ctxlint.toml").write_text('[rules.CTX008]\nrestated_share = 1.0\n')
    assert ("CTX008", 3) in code_lines(json_report(summaries))


def test_model_overrides(project):
    (project / "ctxlint.toml").write_text('[models."gpt-4o"]\ncontext-window = 50000\n')
    assert ("CTX006", 1) in code_lines(json_report(NEAR))
    (project / "ctxlint.toml").write_text('[models."my-endpoint"]\nlike = "glm-5.3"\n')
    line = {"session_id": "a", "request": {"model": "my-endpoint", "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "hi"}]}}
    log = project / "custom.jsonl"
    log.write_bytes(orjson.dumps(line) + b"\n")
    assert code_lines(json_report(str(log))) == [("CTX005", 1)]


def test_per_file_ignores_need_a_reason_and_are_counted(project):
    (project / "service" / "logs" / "demo.jsonl").write_bytes((FIXTURES / "demo" / "broken-agent.jsonl").read_bytes())
    (project / "ctxlint.toml").write_text('[per-file-ignores]\n"service/**/demo.jsonl" = { codes = ["CTX008", "CTX003"], reason = "legacy trimming, ticket 12" }\n')
    report = json_report("demo.jsonl")
    assert code_lines(report) == [("CTX004", 2), ("CTX005", 3)]
    assert report["suppressed"] == {"per-file-ignores": 2}
    (project / "ctxlint.toml").write_text('[per-file-ignores]\n"*.jsonl" = { codes = ["CTX008"] }\n')
    result = run_cli("check", "demo.jsonl")
    assert result.exit_code == 2 and "'reason' is a required property" in result.stderr and "ctxlint.toml" in result.stderr


@pytest.mark.parametrize(("text", "said"), [
    ('selekt = ["CTX001"]\n', "unknown key 'selekt'"),
    ('select = ["CTX999"]\n', "unknown rule selector 'CTX999'"),
    ('[rules.CTX007]\nratoi = 0.9\n', "unknown option 'ratoi' at rules.CTX007"),
    ('[rules.CTX007]\nratio = "high"\n', "rules.CTX007.ratio must be float"),
    ('[rules.nope]\nratio = 0.9\n', "[rules.nope] names no rule"),
    ('[models."m"]\nwindow = 5\n', "unknown key 'window' at ctxlint.toml models.m"),
    ('fail-on = "fatal"\n', "fail-on"),
    ('select = [\n', "not valid TOML"),
    ('session-key = "metadata..user"\n', "session-key: 'metadata..user' is not a dotted path of the session id"),
])
def test_bad_config_is_a_usage_error_naming_file_and_key(project, text, said):
    (project / "ctxlint.toml").write_text(text)
    result = run_cli("check", DEMO)
    assert result.exit_code == 2
    assert said in result.stderr and str(project / "ctxlint.toml") in result.stderr
    assert "Traceback" not in result.output


def test_config_schema_is_printed_and_valid():
    result = run_cli("config", "--schema")
    schema = orjson.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for key in schema["properties"]:
        assert f"`{key}`" in readme, f"README does not document config key {key}"


def test_config_command_shows_the_settings_in_effect(project):
    (project / "ctxlint.toml").write_text('select = ["CTX003"]\n[models."m"]\nlike = "glm-5.3"\n')
    settings = orjson.loads(run_cli("config").stdout)
    assert settings["source"] == str((project / "ctxlint.toml").resolve()) or settings["source"].endswith("ctxlint.toml")
    assert settings["select"] == ["CTX003"] and settings["models"] == {"m": {"like": "glm-5.3"}}


def test_a_broken_pyproject_that_configures_ctxlint_is_an_error_one_that_does_not_is_ignored(project):
    (project / "pyproject.toml").write_text('[tool.ctxlint]\nselect = ["CTX003"\n')
    result = run_cli("check", DEMO)
    assert result.exit_code == 2 and "not valid TOML" in result.stderr and "pyproject.toml" in result.stderr
    (project / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert run_cli("check", DEMO).exit_code == 1


def test_a_busy_provider_is_info_unless_the_user_sets_the_rules_severity(project):
    """CTX022 reports a 429 or 5xx at info (the request was not at fault), so a CI gate
    passes; a severity the user configures for the rule applies to every class."""
    busy = str(FIXTURES / "rules" / "CTX022" / "fail_rate_limit_and_server_errors_as_info.jsonl")
    report = json_report(busy)
    assert {(f["severity"], f["evidence"]["class"]) for f in report["findings"]} == {("info", "rate limit"), ("info", "server error")}
    assert run_cli("check", busy).exit_code == 0
    refused = str(FIXTURES / "rules" / "CTX022" / "fail_auth_and_bad_parameter.jsonl")
    assert {f["severity"] for f in json_report(refused)["findings"]} == {"error"}
    (project / "ctxlint.toml").write_text('[severity]\nprovider-error = "warning"\n')
    assert {f["severity"] for f in json_report(busy)["findings"]} == {"warning"}
    assert run_cli("check", busy, "--fail-on", "warning").exit_code == 1


def test_config_command_spells_out_the_default_selection(project):
    """The settings `ctxlint config` prints select what runs: every rule but the opt-in ones."""
    settings = orjson.loads(run_cli("config").stdout)
    assert "CTX001" in settings["select"] and not {"CTX007", "CTX019", "CTX020", "CTX026"} & set(settings["select"])
    (project / "ctxlint.toml").write_text(f"select = {orjson.dumps(settings['select']).decode()}\n")
    near = str(FIXTURES / "rules" / "CTX006" / "fail_offline_count_just_over_window_may_not_fit.jsonl")
    assert code_lines(json_report(near)) == [("CTX006", 1)]
