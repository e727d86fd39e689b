"""SARIF 2.1.0: one run, the rules' metadata and help, physical (file, line) and logical
(session, turn) locations, and coverage in the run's properties."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import orjson

from ctxlint import __version__
from ctxlint.docs import rule_markdown
from ctxlint.report import Report
from ctxlint.rules import RULES
from ctxlint.rules.base import Finding, docs_sections

LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES_URI = "https://github.com/ctxlint/ctxlint/blob/main/rules/"


def artifact_uri(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix(), safe="/._-~")


def _rule_descriptor(code: str) -> dict:
    rule = RULES[code]
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": docs_sections(rule)["What it does"]},
        "help": {"text": rule.remediation, "markdown": rule_markdown(rule)},
        "helpUri": f"{RULES_URI}{code}.md",
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": [rule.scope]},
    }


def _result(finding: Finding, rule_index: dict[str, int]) -> dict:
    logical = []
    if finding.session is not None:
        turn = f"/turn/{finding.turn}" if finding.turn is not None else ""
        logical.append({"name": f"turn {finding.turn}" if finding.turn is not None else f"session {finding.session}",
                        "fullyQualifiedName": f"session/{finding.session}{turn}", "kind": "object"})
    location = {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(finding.file)}, "region": {"startLine": finding.line}}}
    if logical:
        location["logicalLocations"] = logical
    properties = {key: getattr(finding, key) for key in ("session", "turn", "message_index", "tool_call_id", "pointer", "evidence", "remediation")}
    return {
        "ruleId": finding.code,
        "ruleIndex": rule_index[finding.code],
        "level": LEVEL[finding.severity],
        "message": {"text": f"{finding.message}. Fix: {finding.remediation}"},
        "locations": [location],
        "partialFingerprints": {"ctxlint/v1": finding.fingerprint},
        "properties": {k: v for k, v in properties.items() if v not in (None, {}, "")},
    }


def render_sarif(report: Report) -> str:
    codes = list(RULES)
    rule_index = {code: index for index, code in enumerate(codes)}
    run = {
        "tool": {"driver": {"name": "ctxlint", "version": __version__, "informationUri": "https://github.com/ctxlint/ctxlint",
                            "rules": [_rule_descriptor(code) for code in codes]}},
        "invocations": [{
            "executionSuccessful": not report.io_errors,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": error}} for error in report.io_errors]
            + [{"level": "note", "message": {"text": f"{path}: written newest first, so read from its last line up"}} for path in report.read_backwards],
        }],
        "results": [_result(f, rule_index) for f in report.findings],
        "properties": {"summary": report.summary(), "coverage": report.coverage, "token_counters": report.counters_used(),
                       "skipped": report.skipped, "suppressed": report.suppressed, "redacted": report.redacted},
    }
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
