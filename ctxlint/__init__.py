"""ctxlint: lint captured LLM request logs for context-assembly defects.

Library use (the CLI is built on the same calls)::

    from ctxlint import lint, records_from_line
    with open("log.jsonl", "rb") as log:
        records = [r for n, line in enumerate(log, 1) for r in records_from_line(line, "log.jsonl", n)]
    findings = lint(records)
"""

__version__ = "0.1.0"

from ctxlint.api import CheckOptions, lint, records_from_line, run_check  # noqa: E402

__all__ = ["CheckOptions", "lint", "records_from_line", "run_check", "__version__"]
