from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import output_limit_sent, past_output_limit, refusals_for_body, refused_setting_paths
from ctxlint.rules.base import Rule, Violation


class RefusedOutputLimit(Rule):
    """
    ## What it does
    Flags an output token limit above the most the model can write, where its API refuses
    one: `max_tokens` or `max_completion_tokens` in a chat-completions request to OpenAI's
    models (16,384 for gpt-4o, 32,768 for gpt-4.1, 100,000 for the o-series), and
    `max_tokens` in a Messages API request to Claude (128,000 for Claude Opus 4.6 and
    newer). The most each model writes is its entry in the model profiles' data (a limit
    known only from models.dev is not judged: it may lag its maker's), and which APIs refuse
    more is the profiles' `output_limits`, with their sources. A line of a Message Batches
    file is not judged for Claude: a batch sent with the `output-300k` beta header takes up
    to 300,000 from Claude Opus 4.6 and newer, and its lines do not show the header. Judged
    where the request names the model as its maker's API does (no gateway `org/` prefix),
    the log records its settings and no successful reply to it is logged; a session whose
    host answered such a request before is left alone (every request since sending one too).
    Reported once per session and model, where it starts.

    ## Why is this bad?
    The API answers 400 ("max_tokens is too large: 32000. This model supports at most
    16384 completion tokens, whereas you provided 32000.", "max_tokens: 200000 > 128000,
    which is the maximum allowed number of output tokens for claude-opus-4-8") before the
    model sees anything, and so does every later request with the same setting. It
    happens when a client sends the default it has for another model, or when a session
    falls back to a smaller model mid-conversation and keeps the limit it set for the
    first: the conversation stops at the turn it switched.

    ## Example
    ```json
    {"model": "gpt-4o", "max_tokens": 32000, "messages": [{"role": "user", "content": "Summarize the attached report."}]}
    ```

    Use instead: set the limit per model, within what it can write:
    ```json
    {"model": "gpt-4o", "max_tokens": 16384, "messages": [{"role": "user", "content": "Summarize the attached report."}]}
    ```
    """

    code = "CTX047"
    name = "refused-output-limit"
    severity = "error"
    remediation = "Set max_tokens (max_completion_tokens) per model, within the most the model can write, and again when a session moves to another model."

    def check(self, ctx) -> Iterable[Violation]:
        refusals = refusals_for_body(ctx.turn.record, "output_limits")
        if not refusals:
            return
        profile, record = ctx.profile, ctx.turn.record
        for entry in refusals:
            for path, value, most in past_output_limit(entry, record, profile):
                if ctx.host_took(output_limit_sent(path)):
                    continue  # the host answered the same before
                yield Violation(
                    f"{path} is {value:,}, more than the {most:,} output tokens {record.model} can write: {entry['by']} answers "
                    f"{entry['status']} ({entry['error']!r})",
                    # a setting the model refuses whatever its value is CTX037's (max_tokens to OpenAI's reasoning models)
                    key=(*output_limit_sent(path), profile.id), pointer=f"/{path}",
                    explained_by=("CTX037",) if path in refused_setting_paths(record) else (),
                    evidence={"setting": path, "value": value, "max_output": most, "profile": profile.id, "model": record.model,
                              "provider_error": entry["error"], "sources": [*entry["sources"], *profile.sources]},
                )
