from __future__ import annotations

from ctxlint.rules.base import Rule


class InvalidRecord(Rule):
    """
    ## What it does
    Reports a log line ctxlint could not read as a request: not JSON (cut off, invalid
    UTF-8, NUL bytes), not an object, not a known record shape (with the closest shape it
    resembles), or a request body that breaks the chat-completions schema (the message
    names the JSON path). The rest of the file is still checked. A line JSON parsers
    refuse only for a number (one past a double's range, or the `NaN` and `Infinity`
    Python's `json.dumps` writes) is reported and still read and checked. In an
    application's text log (a `.log` file, or one whose records follow a logger's prefix),
    a line of the application's own text and an object of no record shape are counted
    as skipped, not reported; a record cut short there is.

    ## Why is this bad?
    A line that cannot be read is a request nobody checked. In a log that should be
    complete (a CI run, a production capture) it also means the logger itself is
    broken: truncated writes, interleaved processes, or a different API's bodies mixed in.

    ## Example
    ```
    {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]
    ```

    Use instead: one complete JSON object per line:
    ```
    {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}
    ```
    """

    code = "CTX900"
    name = "invalid-record"
    severity = "error"
    scope = "record"
    remediation = "Write one complete JSON object per line in a shape ctxlint reads (see `ctxlint rule CTX900`)."
