"""Markdown: a summary fit for a pull-request comment or a CI job summary."""

from __future__ import annotations

from ctxlint.report import Report
from ctxlint.report.lines import where
from ctxlint.report.text import safe

MAX_ROWS = 50


def cell(text: object) -> str:
    """Log text inert in a Markdown table: no pipes, newlines, HTML or code spans."""
    return (safe(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
            .replace("`", "\\`").replace("\n", " "))


def render_markdown(report: Report) -> str:
    counts = report.counts()
    lines = ["## ctxlint", ""]
    lines.append(f"**{counts['errors']} errors, {counts['warnings']} warnings, {counts['infos']} info** in "
                 f"{report.records} requests, {len(report.sessions)} sessions, {report.files} files.")
    lines.append("")
    statistics = report.statistics()
    if statistics:
        lines += ["| rule | name | severity | findings |", "|---|---|---|---:|"]
        lines += [f"| {code} | {name} | {severity} | {n} |" for code, name, severity, n in statistics]
        lines.append("")
        lines += ["| location | where | rule | message | fix |", "|---|---|---|---|---|"]
        for f in report.findings[:MAX_ROWS]:
            lines.append(f"| `{cell(f.file)}:{f.line}` | {cell(where(f))} | {f.code} | {cell(f.message)} | {cell(f.remediation)} |")
        if len(report.findings) > MAX_ROWS:
            lines.append(f"\n… and {len(report.findings) - MAX_ROWS} more findings (see the SARIF or JSON output).")
        lines.append("")
    unchecked = report.unchecked()
    if unchecked:
        lines += ["<details><summary>Could not check</summary>", "", "| rule | requests | why |", "|---|---:|---|"]
        lines += [f"| {code} | {sum(r.values())} | {cell(', '.join(r))} |" for code, r in unchecked.items()]
        lines += ["", "</details>", ""]
    if report.read_backwards:
        lines.append("Written newest first, so read from the last line up: " + ", ".join(f"`{cell(path)}`" for path in report.read_backwards) + ".")
        lines.append("")
    if report.suppressed:
        lines.append("Not shown: " + ", ".join(f"{n} by {how}" for how, n in report.suppressed.items()) + ".")
        lines.append("")
    for error in report.io_errors:
        lines.append(f"- read error: {cell(error)}")
    return "\n".join(lines).rstrip("\n") + "\n"
