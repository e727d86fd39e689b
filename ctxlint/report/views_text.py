"""Terminal renderings of the triage views: `ctxlint show` and `ctxlint stats`."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxlint.report.redact import placeholder
from ctxlint.report.text import safe
from ctxlint.views.send_record import DROPPED, MODIFIED, SENT, SUMMARIZED, SendRecord, Status
from ctxlint.views.stats import Usage

SYMBOL = {SENT: ("=", "green"), MODIFIED: ("~", "yellow"), DROPPED: ("-", "dim"), SUMMARIZED: ("S", "cyan")}
LEGEND = "= sent verbatim · ~ sent modified · - dropped (legal) · × dropped, modified, sent without what it must carry or in a form or place the API refuses, against the rules · S replaced by a summary · blank: not yet in the session"


def _console(out: IO[str], color: bool) -> Console:
    return Console(file=out, no_color=not color, force_terminal=color, highlight=False, emoji=False, width=None if color else 220)


def _cell(status: Status | None) -> Text:
    if status is None:
        return Text("")
    if not status.legal:
        return Text("×", style="bold red")
    symbol, style = SYMBOL[status.kind]
    return Text(symbol, style=style)


def render_send_record(record: SendRecord, out: IO[str], *, color: bool, redact: bool) -> None:
    console = _console(out, color)
    session = record.session
    turns = [t.number for t in session.turns]
    console.print(Text(f"session {safe(session.id)} · {len(turns)} request{'s' if len(turns) != 1 else ''} · {len(record.entries)} distinct messages", style="bold"))
    console.print(Text(LEGEND, style="dim"))
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("#", "role", "from", "tokens", "message"):
        table.add_column(column, justify="right" if column in ("#", "tokens") else "left")
    for number in turns:
        table.add_column(str(number), justify="center")
    for entry in record.entries:
        lost = record.first_loss is not None and record.first_loss[0] == entry.row
        text = placeholder(entry.excerpt) if redact else safe(entry.excerpt)
        row = [Text(f"{entry.row}{' ◀' if lost else ''}", style="bold red" if lost else ""), entry.role, entry.origin, f"{entry.tokens:,}", text]
        table.add_row(*row, *(_cell(entry.statuses.get(n)) for n in turns))
    table.add_row("", "", "prompt tokens", "", "", *(f"{record.turn_tokens[n][0]:,}" for n in turns))
    console.print(table)
    counters = sorted({counter for _, counter in record.turn_tokens.values()})
    console.print(Text(f"per-message tokens by {record.entries[0].counter if record.entries else 'none'}; prompt tokens by {', '.join(counters)}", style="dim"))
    events = sorted(((n, entry.row, entry, status) for entry in record.entries for n, status in entry.statuses.items()
                     if (status.kind != SENT or not status.legal) and (n - 1 not in entry.statuses or entry.statuses[n - 1].kind != status.kind
                                                 or entry.statuses[n - 1].changed != status.changed
                                                 or (entry.statuses[n - 1].legal and not status.legal))), key=lambda e: e[:2])
    if events:
        console.print()
        console.print(Text("what changed", style="bold"))
    for number, _, entry, status in events:
        what = {SENT: "sent", MODIFIED: f"sent modified ({', '.join(status.changed)})", DROPPED: "dropped", SUMMARIZED: "replaced by a summary"}[status.kind]
        legality = "not legal" if not status.legal else "legal"
        line = Text(f"  turn {number}: message #{entry.row} ({entry.role}, {entry.origin}) {what} — {legality}", style="" if status.legal else "red")
        if status.why:
            line.append(f": {safe(status.why)}")
        console.print(line)
    if record.unlogged:
        console.print()
        console.print(Text("lost, and in no row: the log never held these messages", style="bold"))
    for finding in record.unlogged:
        console.print(Text(f"  turn {finding.turn}: {finding.code}: {safe(finding.message)}", style="red"))  # quotes redacted with the report
    if record.first_loss is not None:
        row, turn = record.first_loss
        # a message sent against the rules (without its reasoning, or blank) goes on being sent so
        sent = next(entry for entry in record.entries if entry.row == row).statuses[turn].kind == SENT
        console.print()
        console.print(Text(f"first loss: message #{row}, at turn {turn}; later turns {'carried it as it was' if sent else 'ran without it'}", style="bold red"))


def _usage_table(title: str, rows: list[Usage], console: Console) -> None:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("", "sessions", "requests", "turns", "p50", "p95", "max", "peak window", "resent history", "tool results"):
        table.add_column(column, justify="left" if column == "" else "right")
    for usage in rows:
        row = usage.row()
        tokens = row["prompt_tokens"]
        percent = (lambda v: f"{v:.0%}" if v is not None else "-")
        table.add_row(safe(usage.name), str(usage.sessions), str(usage.requests), str(usage.turns), f"{tokens['p50']:,}", f"{tokens['p95']:,}",
                      f"{tokens['max']:,}", percent(row["peak_window_ratio"]), percent(row["resent_share"]), percent(row["tool_result_share"]))
    console.print(table)


def render_usage(by_model: list[Usage], by_session: list[Usage], out: IO[str], *, color: bool, top: int) -> None:
    console = _console(out, color)
    _usage_table("per model (prompt tokens)", by_model, console)
    console.print()
    heaviest = sorted(by_session, key=lambda u: (-sum(u.prompt_tokens), u.name))[:top]
    more = f", the {top} heaviest of {len(by_session)}" if len(by_session) > top else ""
    _usage_table(f"per session{more}", heaviest, console)
    counters = sorted(set().union(*(u.counters for u in by_model))) if by_model else []
    console.print(Text(f"prompt tokens by {', '.join(counters) or 'none'}; resent and tool shares by ctxlint's own count of each message", style="dim"))
