"""The terminal report: per session, a per-turn table with the turn where it went wrong."""

from __future__ import annotations

import re
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxlint.report import Report
from ctxlint.rules.base import Finding

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: object) -> str:
    """Log text made inert for a terminal: control characters and ANSI escapes shown, not run."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", str(text))


def _window(window: int | None, ratio: float | None) -> str:
    if window is None:
        return "unknown"
    return f"{window:,} ({ratio:.1%})" if ratio is not None else f"{window:,}"


def finding_line(finding: Finding) -> Text:
    location = f"{finding.file}:{finding.line}"
    where = f" turn {finding.turn}" if finding.turn is not None else ""
    target = ""
    if finding.tool_call_id:
        target = f" [{finding.tool_call_id}]"
    elif finding.message_index is not None:
        target = f" [message {finding.message_index}]"
    line = Text()
    line.append(safe(location), style="bold")
    line.append(where)
    line.append(f" {finding.code}", style=SEVERITY_STYLE[finding.severity])
    line.append(f" {finding.severity}", style=SEVERITY_STYLE[finding.severity])
    line.append(f" {finding.name}:{safe(target)} {safe(finding.message)}")
    return line


def render_text(report: Report, out: IO[str], *, color: bool, verbose: bool = False, quiet: bool = False) -> None:
    console = Console(file=out, no_color=not color, force_terminal=color, highlight=False, emoji=False,
                      width=None if color else 200, soft_wrap=not color)
    if quiet:
        for finding in report.findings:
            console.print(finding_line(finding))
        return
    for session in report.sessions:
        findings = report.session_findings(session)
        wrong_at = report.first_error_turn(session)
        turns = session.turns
        model = next((t.model for t in turns if t.model), None)
        header = Text()
        header.append(f"session {safe(session.id)}", style="bold")
        header.append(f" · {safe(model or 'unknown model')} · {len(turns)} request{'s' if len(turns) != 1 else ''}")
        if wrong_at is not None:
            header.append(f" · went wrong at turn {wrong_at}", style="bold red")
        elif not findings:
            header.append(" · clean", style="green")
        if not findings and not verbose:
            console.print(header)
            continue
        console.print(header)
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for column in ("turn", "line", "msgs", "prompt tokens", "counter", "window (used)", "finish", "findings"):
            table.add_column(column, justify="right" if column in ("turn", "line", "msgs", "prompt tokens") else "left")
        by_turn: dict[int, list[Finding]] = {}
        for finding in findings:
            by_turn.setdefault(finding.turn or 0, []).append(finding)
        shown = _shown_turns(turns, set(by_turn) | {wrong_at}, verbose)
        for position, metrics in enumerate(turns):
            if position not in shown:
                if position - 1 in shown:  # the first turn of a folded stretch stands for all of it
                    end = min((later for later in shown if later > position), default=len(turns))
                    span = f"{end - position} turns without findings ({metrics.number}–{turns[end - 1].number}; -v shows them)"
                    table.add_row("⋮", "", "", "", "", "", "", Text(span, style="dim"))
                continue
            codes = Text()
            for finding in by_turn.get(metrics.number, []):
                codes.append(finding.code + " ", style=SEVERITY_STYLE[finding.severity])
            marker = " ◀" if metrics.number == wrong_at else ""
            finish = metrics.finish_reason or (f"HTTP {metrics.status}" if metrics.status and metrics.status >= 400 else "-")
            table.add_row(
                f"{metrics.number}{marker}", str(metrics.line), str(metrics.messages), f"{metrics.tokens:,}",
                metrics.counter, _window(metrics.window, metrics.ratio), safe(finish), codes,
            )
        console.print(table)
        for finding in findings:
            console.print(Text("  ").append(finding_line(finding)))
            console.print(Text(f"      fix: {finding.remediation}", style="dim"))
        console.print()
    unreadable = report.record_findings()
    if unreadable:
        console.print(Text("unreadable input", style="bold"))
        for finding in unreadable:
            console.print(Text("  ").append(finding_line(finding)))
        console.print()
    _summary(report, console)


# around a turn with findings, the turns shown on either side; a longer clean stretch folds into one row
CONTEXT_TURNS = 2
SHORTEST_FOLD = 3  # a stretch of fewer clean turns is shown: its fold row would save nothing


def _shown_turns(turns: list, marked: set, verbose: bool) -> set[int]:
    """Positions of the turns the table shows: all with --verbose; else the first, the last,
    and those within CONTEXT_TURNS of a turn with findings, and any clean stretch too
    short to fold."""
    if verbose:
        return set(range(len(turns)))
    shown = {0, len(turns) - 1}
    for position, metrics in enumerate(turns):
        if metrics.number in marked:
            shown.update(range(max(0, position - CONTEXT_TURNS), min(len(turns), position + CONTEXT_TURNS + 1)))
    position = 0
    while position < len(turns):
        end = position
        while end < len(turns) and end not in shown:
            end += 1
        if end - position < SHORTEST_FOLD:
            shown.update(range(position, end))
        position = end + 1
    return shown


def _summary(report: Report, console: Console) -> None:
    counts = report.counts()
    summary = Text()
    summary.append(f"{report.records} request{'s' if report.records != 1 else ''} in {report.files} file{'s' if report.files != 1 else ''}, {len(report.sessions)} session{'s' if len(report.sessions) != 1 else ''}: ")
    summary.append(f"{counts['errors']} error{'s' if counts['errors'] != 1 else ''}", style="bold red" if counts["errors"] else "green")
    summary.append(f", {counts['warnings']} warning{'s' if counts['warnings'] != 1 else ''}, {counts['infos']} info")
    console.print(summary)
    counters = report.counters_used()
    if counters:
        console.print("prompt tokens counted by: " + ", ".join(f"{name} ({n} request{'s' if n != 1 else ''})" for name, n in counters.items()))
    if report.read_backwards:
        console.print(Text(f"written newest first (its times fall line by line), so read from its last line up: {', '.join(map(safe, report.read_backwards))}"))
    if report.skipped:
        console.print("skipped (not linted): " + ", ".join(f"{safe(reason)}: {n}" for reason, n in report.skipped.items()))
    gaps = report.unchecked()
    if gaps:
        console.print("could not check: " + "; ".join(f"{code} {sum(r.values())} request{'s' if sum(r.values()) != 1 else ''} ({', '.join(r)})" for code, r in gaps.items()))
        if any(reason.startswith("unknown model") for reasons in gaps.values() for reason in reasons):
            console.print("  name the model: --model NAME for requests that name none, --model-alias NAME=KNOWN for a name ctxlint does not know")
    if report.suppressed:
        console.print("not shown: " + ", ".join(f"{n} by {how}" for how, n in report.suppressed.items()))
    if report.baseline_stale:
        console.print(Text(f"baseline entries that no longer occur ({len(report.baseline_stale)}):", style="bold"))
        for entry in report.baseline_stale:
            console.print(Text(safe(f"  {entry.get('file')}:{entry.get('line')} {entry.get('code')} {entry.get('message', '')} [{entry['fingerprint']}]")))


def render_statistics(report: Report, out: IO[str]) -> None:
    for code, name, severity, count in report.statistics():
        out.write(f"{count:>6}  {code}  {severity:<7}  {name}\n")
