"""Command line: ctxlint check / rules / rule."""

from __future__ import annotations

import signal
import sys
from typing import List, Optional

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from ctxlint import __version__
from ctxlint.api import CheckOptions, run_check
from ctxlint.docs import rule_markdown
from ctxlint.offline import forbid_network
from ctxlint.report.json_format import render_json
from ctxlint.report.text import render_text
from ctxlint.rules import RULES
from ctxlint.rules.base import SEVERITIES
from ctxlint.selection import UnknownSelector

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Lint captured LLM request logs for context-assembly defects.")
FORMATS = ("text", "json")


def _split(values: Optional[List[str]]) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _usage_error(message: str) -> None:
    typer.echo(f"ctxlint: error: {message}", err=True)
    raise typer.Exit(2)


@app.command()
def check(
    paths: List[str] = typer.Argument(..., help="Log files, directories, globs, or - for stdin."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rules to run: codes, names, prefixes or ALL (comma-separated)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rules to skip."),
    output_format: str = typer.Option("text", "--format", help="Output format: text or json."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 when a finding is at or above this severity: error, warning, info."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print findings only."),
    no_color: bool = typer.Option(False, "--no-color", help="No colors in text output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the per-turn table of clean sessions too."),
    session_key: Optional[str] = typer.Option(None, "--session-key", help="Dotted path of the session id in each record."),
    input_format: Optional[str] = typer.Option(None, "--input-format", help="Force a reader: jsonl, cassette, snapshot, trajectory."),
    context_window: Optional[int] = typer.Option(None, "--context-window", min=1, help="Context window in tokens for every request."),
    model_alias: Optional[List[str]] = typer.Option(None, "--model-alias", help="NAME=KNOWN: read model NAME as the known model KNOWN."),
) -> None:
    """Check request logs and report, per session and turn, where context handling went wrong."""
    if output_format not in FORMATS:
        _usage_error(f"unknown --format {output_format!r}; choose one of {', '.join(FORMATS)}")
    if fail_on not in SEVERITIES:
        _usage_error(f"unknown --fail-on {fail_on!r}; choose one of {', '.join(SEVERITIES)}")
    if input_format not in (None, "jsonl", "cassette", "snapshot", "trajectory"):
        _usage_error(f"unknown --input-format {input_format!r}; choose jsonl, cassette, snapshot or trajectory")
    aliases = {}
    for alias in _split(model_alias):
        name, sep, known = alias.partition("=")
        if not sep or not name or not known:
            _usage_error(f"--model-alias takes NAME=KNOWN, got {alias!r}")
        aliases[name] = known
    options = CheckOptions(
        select=_split(select), ignore=_split(ignore), session_key=session_key, input_format=input_format,
        context_window=context_window, aliases=aliases,
    )
    try:
        report = run_check(paths, options)
    except UnknownSelector as error:
        _usage_error(str(error))
    out = sys.stdout
    if output_format == "json":
        out.write(render_json(report))
    else:
        render_text(report, out, color=not no_color and out.isatty(), verbose=verbose, quiet=quiet)
    out.flush()
    for error in report.io_errors:
        typer.echo(f"ctxlint: error: {error}", err=True)
    if report.io_errors:
        raise typer.Exit(2)
    raise typer.Exit(1 if report.fails(fail_on) else 0)


@app.command("rules")
def list_rules() -> None:
    """List every rule with its code, name, default severity and summary."""
    table = Table(show_edge=False, box=None, header_style="bold")
    for column in ("code", "name", "severity", "what it flags"):
        table.add_column(column)
    for code, rule in RULES.items():
        table.add_row(code, rule.name, rule.severity, rule.summary())
    Console(highlight=False).print(table)


@app.command("rule")
def show_rule(code: str = typer.Argument(..., help="A rule code (CTX001) or name.")) -> None:
    """Show one rule's documentation."""
    rule = RULES.get(code.upper()) or next((r for r in RULES.values() if r.name == code.lower()), None)
    if rule is None:
        _usage_error(f"unknown rule {code!r}; `ctxlint rules` lists them")
    console = Console(highlight=False)
    if console.is_terminal:
        console.print(Markdown(rule_markdown(rule)))
    else:
        sys.stdout.write(rule_markdown(rule))


@app.command("version")
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    forbid_network()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL) if hasattr(signal, "SIGPIPE") else None
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("ctxlint: interrupted\n")
        sys.exit(130)
    except Exception as error:  # the promise is no traceback: say what broke, in one line
        sys.stderr.write(f"ctxlint: internal error: {type(error).__name__}: {error} (please report it with the input line that caused it)\n")
        sys.exit(2)
