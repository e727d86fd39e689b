"""Command line: ctxlint check / rules / rule."""

from __future__ import annotations

import contextlib
import os
import signal
import gc
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator, List, NoReturn, Optional

import orjson

import typer
from rich.console import Console
from rich.table import Table

from ctxlint import __version__
from ctxlint.api import CheckOptions, find_session, log_usage_of, run_check, session_send_record
from ctxlint.config import Config, ConfigError, config_schema, config_settings
from ctxlint.config import resolve as resolve_config
from ctxlint.docs import rule_markdown
from ctxlint.offline import forbid_network
from ctxlint.progress import progress_for
from ctxlint.report import Report
from ctxlint.report.json_format import render_statistics_json, write_json
from ctxlint.report.junit import render_junit
from ctxlint.report.lines import render_concise, render_github, render_jsonl
from ctxlint.report.markdown import render_markdown
from ctxlint.report.sarif import render_sarif
from ctxlint.report.text import render_statistics, render_text
from ctxlint.report.views_json import render_send_record_json
from ctxlint.report.views_text import render_send_record, render_usage
from ctxlint.rules import RULES
from ctxlint.rules.base import SEVERITIES
from ctxlint.selection import UnknownSelector, selected_codes
from ctxlint.suppression import baseline
from ctxlint.suppression.baseline import BaselineError
from ctxlint.tokens.counter import PLAUSIBLE_TOKENS

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Lint captured LLM request logs for context-assembly defects.")
RENDERERS: dict[str, Callable[[Report, "RenderSettings"], str | None]] = {}
INPUT_FORMATS = ("jsonl", "json", "cassette", "snapshot")


@dataclass(frozen=True, slots=True)
class RenderSettings:
    out: IO[str]
    color: bool
    verbose: bool
    quiet: bool
    fail_on: str


def _text(report: Report, settings: RenderSettings) -> None:
    render_text(report, settings.out, color=settings.color, verbose=settings.verbose, quiet=settings.quiet)


RENDERERS.update({
    "text": _text,
    "concise": lambda report, settings: render_concise(report),
    "json": lambda report, settings: write_json(report, settings.out),
    "jsonl": lambda report, settings: render_jsonl(report),
    "sarif": lambda report, settings: render_sarif(report),
    "github": lambda report, settings: render_github(report),
    "junit": lambda report, settings: render_junit(report, settings.fail_on),
    "markdown": lambda report, settings: render_markdown(report),
})


def _split(values: Optional[List[str]]) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _usage_error(message: str) -> NoReturn:
    typer.echo(f"ctxlint: error: {message}", err=True)
    raise typer.Exit(2)


def _choice(value: str | None, option: str, choices: tuple[str, ...] | list[str]) -> None:
    if value is not None and value not in choices:
        _usage_error(f"unknown {option} {value!r}; choose one of {', '.join(choices)}")


def _aliases(values: Optional[List[str]]) -> dict[str, str]:
    aliases = {}
    for alias in _split(values):
        name, sep, known = alias.partition("=")
        if not sep or not name or not known:
            _usage_error(f"--model-alias takes NAME=KNOWN, got {alias!r}")
        aliases[name] = known
    return aliases


def _session_key(value: Optional[str]) -> Optional[str]:
    """A --session-key as given, once it is a dotted path of names (session_id, metadata.user)."""
    if value is not None and not all(value.split(".")):
        _usage_error(f"--session-key takes a dotted path of names, such as session_id or metadata.user_id; got {value!r}")
    return value


def _config(config_path: Optional[str], isolated: bool) -> Config:
    try:
        return resolve_config(config_path, isolated)
    except ConfigError as error:
        _usage_error(str(error))


@contextlib.contextmanager
def _destination(output: Optional[str]) -> Iterator[IO[str]]:
    """stdout, or the --output file: written whole or not at all, through a temporary file
    beside it that replaces it at the end (a report of a million requests is never held).
    What is not a regular file (/dev/stdout, a pipe) is written as it is, never replaced;
    through a symbolic link, the file it leads to is."""
    if output is None:
        yield sys.stdout
        return
    if os.path.exists(output) and not os.path.isfile(output):
        try:
            with open(output, "w", encoding="utf-8") as out:
                yield out
        except OSError as error:
            _usage_error(f"{output}: cannot write output: {error.strerror or error}")
        return
    target = Path(os.path.realpath(output))
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        with open(handle, "w", encoding="utf-8") as out:
            yield out
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a file the user wrote, not mkstemp's 0600
        os.replace(temporary, target)
    except OSError as error:
        _usage_error(f"{output}: cannot write output: {error.strerror or error}")
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


ConfigOption = typer.Option(None, "--config", help="Read settings from this file (ctxlint.toml or pyproject.toml).")
IsolatedOption = typer.Option(False, "--isolated", help="Ignore every config file.")
SessionKeyOption = typer.Option(None, "--session-key", help="Dotted path of the session id in each record.")
ModelOption = typer.Option(None, "--model", help="The model of requests that name none (a trajectory dump, a bare message list).")
ViewFormatOption = typer.Option("text", "--format", help="text or json.")
NoColorOption = typer.Option(False, "--no-color", help="No colors.")
InputFormatOption = typer.Option(None, "--input-format", help="Force a reader: jsonl, json (one JSON document: a list of records or of agent trajectories, a JSON cassette, a HAR or nock recording), cassette (YAML), snapshot.")


@app.command()
def check(
    paths: List[str] = typer.Argument(..., help="Log files, directories, globs, or - for stdin."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rules to run: codes, names, prefixes or ALL (comma-separated); replaces the config's select."),
    extend_select: Optional[List[str]] = typer.Option(None, "--extend-select", help="Rules to run on top of select."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rules to skip (added to the config's ignore)."),
    output_format: str = typer.Option("text", "--format", help=f"Output format: {', '.join(RENDERERS)}."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", help="Exit 1 when a finding is at or above this severity: error (default), warning, info."),
    fail_on_unchecked: bool = typer.Option(False, "--fail-on-unchecked", help="Exit 1 when a selected rule could not judge some request."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings (I/O and usage errors still exit 2)."),
    statistics: bool = typer.Option(False, "--statistics", help="Print the number of findings per rule instead of the findings."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print findings only; no progress bar."),
    no_color: bool = typer.Option(False, "--no-color", help="No colors in text output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every turn: the per-turn tables of clean sessions too, and the turns without findings folded away in long ones."),
    redact: bool = typer.Option(False, "--redact", help="No message content in any output: only roles, lengths, token counts and short hashes."),
    baseline_path: Optional[str] = typer.Option(None, "--baseline", help="Report only findings not recorded in this baseline file."),
    write_baseline: Optional[str] = typer.Option(None, "--write-baseline", help="Record today's findings in this baseline file and exit 0."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=0, help="Check sessions in N processes (0: one per core). Same findings as one."),
    config_path: Optional[str] = ConfigOption,
    isolated: bool = IsolatedOption,
    session_key: Optional[str] = SessionKeyOption,
    input_format: Optional[str] = InputFormatOption,
    context_window: Optional[int] = typer.Option(None, "--context-window", min=1, max=PLAUSIBLE_TOKENS - 1, help="Context window in tokens for every request."),
    model_alias: Optional[List[str]] = typer.Option(None, "--model-alias", help="NAME=KNOWN: read model NAME as the known model KNOWN."),
    model: Optional[str] = ModelOption,
) -> None:
    """Check request logs and report, per session and turn, where context handling went wrong."""
    _choice(output_format, "--format", list(RENDERERS))
    _choice(fail_on, "--fail-on", SEVERITIES)
    _choice(input_format, "--input-format", INPUT_FORMATS)
    config = _config(config_path, isolated)
    options = CheckOptions.from_config(config, input_format=input_format, redact=redact, jobs=jobs or os.cpu_count() or 1)
    if _split(select):  # a command-line select starts the selection over, as in ruff
        options.select, options.extend_select = _split(select), []
    options.extend_select += _split(extend_select)
    options.ignore += _split(ignore)
    options.session_key = _session_key(session_key) or options.session_key
    options.context_window = context_window or options.context_window
    options.aliases.update(_aliases(model_alias))
    options.model = model or options.model
    fail_on = fail_on or config.fail_on or "error"
    fail_on_unchecked = fail_on_unchecked or config.fail_on_unchecked
    previous_baseline = None
    try:
        if baseline_path is not None:
            previous_baseline = baseline.read(baseline_path)
        elif write_baseline is not None and Path(write_baseline).is_file():
            previous_baseline = baseline.read(write_baseline)
        if write_baseline is None:  # a baseline being written records every finding, old ones too
            options.baseline = previous_baseline
        selected_codes(options.select or None, options.ignore, options.extend_select)
    except (BaselineError, UnknownSelector) as error:
        _usage_error(str(error))
    machine = output_format != "text" or output is not None
    report = run_check(paths, options, progress_for(not quiet and not machine))
    if write_baseline is not None:
        try:
            Path(write_baseline).write_bytes(baseline.document(report.findings, previous_baseline))
        except OSError as error:
            _usage_error(f"{write_baseline}: cannot write baseline: {error.strerror or error}")
        typer.echo(f"ctxlint: wrote {len(report.findings)} finding{'s' if len(report.findings) != 1 else ''} to {write_baseline}", err=True)
    with _destination(output) as out:
        if statistics:
            if output_format in ("json", "jsonl"):
                out.write(render_statistics_json(report))
            else:
                render_statistics(report, out)
        else:
            color = not no_color and output is None and out.isatty()
            rendered = RENDERERS[output_format](report, RenderSettings(out, color, verbose, quiet, fail_on))
            if rendered is not None:
                out.write(rendered)
        out.flush()
    for error in report.io_errors:
        typer.echo(f"ctxlint: error: {error}", err=True)
    if report.io_errors:
        raise typer.Exit(2)
    if report.records == 0 and not quiet:  # a gate over the wrong files passes on nothing: say so
        typer.echo("ctxlint: warning: no request found to lint (the summary counts what was skipped, and why)", err=True)
    if exit_zero or write_baseline is not None:
        raise typer.Exit(0)
    failed = report.fails(fail_on) or (fail_on_unchecked and bool(report.unchecked()))
    raise typer.Exit(1 if failed else 0)


@app.command("config")
def show_config(
    schema: bool = typer.Option(False, "--schema", help="Print the JSON Schema that config files are validated against."),
    config_path: Optional[str] = ConfigOption,
    isolated: bool = IsolatedOption,
) -> None:
    """Print the settings in effect (and the file they came from), or the config schema."""
    if schema:
        sys.stdout.write(orjson.dumps(config_schema(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    config = _config(config_path, isolated)
    settings = {"source": str(config.source) if config.source else None, **config_settings(config)}
    sys.stdout.write(orjson.dumps(settings, option=orjson.OPT_INDENT_2).decode() + "\n")


def _options(config_path: Optional[str], isolated: bool, session_key: Optional[str], input_format: Optional[str], **extra) -> CheckOptions:
    _choice(input_format, "--input-format", INPUT_FORMATS)
    options = CheckOptions.from_config(_config(config_path, isolated), input_format=input_format, **extra)
    options.session_key = _session_key(session_key) or options.session_key
    return options


def _checked(paths: list[str], options: CheckOptions) -> Report:
    options.hold = True
    report = run_check(paths, options, progress_for(sys.stdout.isatty()))
    for error in report.io_errors:
        typer.echo(f"ctxlint: error: {error}", err=True)
    return report


@app.command("show")
def show(
    paths: List[str] = typer.Argument(..., help="The log file(s) holding the session."),
    session_id: str = typer.Option(..., "--session", "-s", help="The session id (as the report prints it; a unique prefix will do)."),
    output_format: str = ViewFormatOption,
    redact: bool = typer.Option(False, "--redact", help="Show lengths and hashes instead of message text."),
    no_color: bool = NoColorOption,
    config_path: Optional[str] = ConfigOption,
    isolated: bool = IsolatedOption,
    session_key: Optional[str] = SessionKeyOption,
    input_format: Optional[str] = InputFormatOption,
) -> None:
    """Print the send record of one session: what every request kept, changed, dropped or summarized."""
    _choice(output_format, "--format", ("text", "json"))
    options = _options(config_path, isolated, session_key, input_format, redact=redact)
    report = _checked(paths, options)
    session = find_session(report, session_id)
    if session is None:
        known = ", ".join(s.id for s in report.sessions[:10]) or "none"
        _usage_error(f"no session {session_id!r} in the input (sessions: {known}{', …' if len(report.sessions) > 10 else ''})")
    record = session_send_record(report, session, options)
    if output_format == "json":
        sys.stdout.write(render_send_record_json(record, redact=redact))
    else:
        render_send_record(record, sys.stdout, color=not no_color and sys.stdout.isatty(), redact=redact)
    raise typer.Exit(2 if report.io_errors else 0)


@app.command("stats")
def stats(
    paths: List[str] = typer.Argument(..., help="Log files, directories, globs, or - for stdin."),
    output_format: str = ViewFormatOption,
    top: int = typer.Option(20, "--top", min=1, help="How many of the heaviest sessions to list in text output."),
    no_color: bool = NoColorOption,
    config_path: Optional[str] = ConfigOption,
    isolated: bool = IsolatedOption,
    session_key: Optional[str] = SessionKeyOption,
    input_format: Optional[str] = InputFormatOption,
) -> None:
    """The cost picture of a log: per model and per session, prompt tokens and where they go."""
    _choice(output_format, "--format", ("text", "json"))
    options = _options(config_path, isolated, session_key, input_format, select=["CTX006"])
    report = _checked(paths, options)
    by_model, by_session = log_usage_of(report)
    if output_format == "json":
        document = {"models": [u.row() for u in by_model], "sessions": [u.row() for u in by_session]}
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render_usage(by_model, by_session, sys.stdout, color=not no_color and sys.stdout.isatty(), top=top)
    raise typer.Exit(2 if report.io_errors else 0)


@app.command("rules")
def list_rules() -> None:
    """List every rule with its code, name, default severity and summary."""
    table = Table(show_edge=False, box=None, header_style="bold")
    for column in ("code", "name", "severity", "what it flags"):
        table.add_column(column)
    for code, rule in RULES.items():
        table.add_row(code, rule.name, rule.listed_severity(), rule.summary())
    Console(highlight=False).print(table)


@app.command("rule")
def show_rule(code: str = typer.Argument(..., help="A rule code (CTX001) or name.")) -> None:
    """Show one rule's documentation."""
    rule = RULES.get(code.upper()) or next((r for r in RULES.values() if r.name == code.lower()), None)
    if rule is None:
        _usage_error(f"unknown rule {code!r}; `ctxlint rules` lists them")
    console = Console(highlight=False)
    if console.is_terminal:
        from rich.markdown import Markdown  # markdown-it is a slow import that only this command needs

        console.print(Markdown(rule_markdown(rule)))
    else:
        sys.stdout.write(rule_markdown(rule))


@app.command("version")
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def options(
    show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
) -> None:
    """Lint captured LLM request logs for context-assembly defects."""


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: say so in one line and stop with 130, whatever was running (no traceback)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os.write(2, b"ctxlint: interrupted\n")
    os._exit(130)


def main() -> None:
    forbid_network()
    # A run allocates millions of small acyclic objects (parsed JSON): collect cycles rarely.
    gc.freeze()
    gc.set_threshold(200_000, 50, 50)
    signal.signal(signal.SIGINT, _interrupted)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL) if hasattr(signal, "SIGPIPE") else None
    for stream in (sys.stdout, sys.stderr):
        # a terminal or pipe whose encoding cannot show a character (an ASCII locale, a
        # Windows code page) shows it escaped rather than stopping the report
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("ctxlint: interrupted\n")
        sys.exit(130)
    except Exception as error:  # the promise is no traceback: say what broke, in one line
        sys.stderr.write(f"ctxlint: internal error: {type(error).__name__}: {error} (please report it with the input line that caused it)\n")
        sys.exit(2)
