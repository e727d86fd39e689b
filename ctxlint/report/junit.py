"""JUnit XML: one testcase per session; a session fails with its findings at or above fail-on."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ctxlint.report import Report
from ctxlint.report.text import safe
from ctxlint.rules.base import Finding, severity_rank


def _finding_text(finding: Finding) -> str:
    turn = f" turn {finding.turn}" if finding.turn is not None else ""
    return safe(f"{finding.file}:{finding.line}{turn} {finding.code} {finding.severity} {finding.name}: {finding.message}\n    fix: {finding.remediation}")


def _case(suite: ET.Element, name: str, classname: str, findings: list[Finding], fail_on: str) -> bool:
    case = ET.SubElement(suite, "testcase", name=safe(name), classname=safe(classname))
    failing = [f for f in findings if severity_rank(f.severity) >= severity_rank(fail_on)]
    if failing:
        codes = sorted({f.code for f in failing})
        failure = ET.SubElement(case, "failure", message=f"{len(failing)} finding{'s' if len(failing) != 1 else ''}: {', '.join(codes)}", type=codes[0])
        failure.text = "\n".join(_finding_text(f) for f in failing)
    below = [f for f in findings if f not in failing]
    if below:
        ET.SubElement(case, "system-out").text = "\n".join(_finding_text(f) for f in below)
    return bool(failing)


def render_junit(report: Report, fail_on: str = "error") -> str:
    root = ET.Element("testsuites", name="ctxlint")
    suite = ET.SubElement(root, "testsuite", name="ctxlint")
    cases = failures = 0
    for session in report.sessions:
        cases += 1
        failures += _case(suite, f"session {session.id}", session.file, report.session_findings(session), fail_on)
    by_file: dict[str, list[Finding]] = {}
    for finding in report.record_findings():
        by_file.setdefault(finding.file, []).append(finding)
    for file, findings in by_file.items():
        cases += 1
        failures += _case(suite, "records that could not be read", file, findings, fail_on)
    for error in report.io_errors:
        cases += 1
        failures += 1
        ET.SubElement(ET.SubElement(suite, "testcase", name="read input", classname="ctxlint"), "error", message=safe(error))
    for element in (root, suite):
        element.set("tests", str(cases))
        element.set("failures", str(failures))
        element.set("errors", "0")
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
