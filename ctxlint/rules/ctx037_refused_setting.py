from __future__ import annotations

from typing import Iterable

from ctxlint.chat import as_sent, dotted
from ctxlint.profiles import refused_settings
from ctxlint.rules.base import Rule, Violation


class RefusedSetting(Rule):
    """
    ## What it does
    Flags a request setting the model's API refuses, in a chat-completions request:
    `max_tokens` sent to OpenAI's reasoning models (o1, o3, o4-mini, GPT-5 and its versions,
    which take `max_completion_tokens`), and a `temperature` other than 1 sent to o1, o3,
    o4-mini and the first GPT-5 models (GPT-5.1 and newer take one with `reasoning_effort`
    `none`, their default, so they are not judged), and `reasoning_effort` sent to OpenAI's
    models without reasoning (GPT-4o, GPT-4.1, GPT-4, GPT-3.5; a `null` value is not sent),
    stop sequences (`stop`, a string or a list; `null` or an empty list sends none) sent to
    o3, o4-mini, GPT-5, GPT-5 mini and GPT-5 nano (o3-mini takes them; GPT-5.1 and newer
    take them at their default `reasoning_effort` `none`, so they are not judged), and
    `tool_choice` (other than `none`) or `parallel_tool_calls` sent to OpenAI's models in a
    request without `tools` (an agent's last step, its tools taken away, with the settings
    of the steps before). The model profiles' data names the models, with its sources. The
    request must name the model as that API does (no `org/` prefix or `:tag`: gateways such
    as OpenRouter and LiteLLM translate or drop such settings). Also flagged, in a request
    of any API's shape that names the model without a gateway's `org/` prefix: a
    `temperature` other than 1 sent to Claude Opus 4.7 and newer (Opus 4.8, Fable 5.x,
    Sonnet 5.5, Haiku 5.5), which refuse it with thinking on or off, through Anthropic's API
    and the clouds alike (`inferenceConfig.temperature` in a Bedrock Converse body). A
    request whose successful reply is logged is left alone, and so is one whose session got
    a successful reply from the same model to the same setting (every request since sending
    it too): the host that answered took it. Reported once per session, where it starts.
    Thinking switches and the settings a model refuses while thinking is on are CTX005's.

    ## Why is this bad?
    The API answers 400 ("Unsupported parameter: 'max_tokens' is not supported with this
    model. Use 'max_completion_tokens' instead.", "Unsupported value: 'temperature' does not
    support 0.2 with this model") before the model sees anything, and every request of the
    session fails the same way ("Unsupported parameter: 'reasoning_effort' is not supported
    with this model." for GPT-4o; "`temperature` is deprecated for this model." for Claude
    Opus 4.7). It happens when an app moves from GPT-4o to a reasoning model, or from Claude
    Opus 4.6 to a newer Claude, and keeps the settings it wrote for the old one (an agent
    that stops the model at "Observation:" sends `stop` at every step: "Unsupported
    parameter: 'stop' is not supported with this model."); or when an agent takes the tools
    away for its last step, to get an answer in text, and keeps `tool_choice` ("Invalid
    value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."):
    the run fails at its very end.

    ## Example
    ```json
    {"model": "gpt-5-mini", "max_tokens": 1024, "temperature": 0.2, "messages": [{"role": "user", "content": "Summarize the ticket."}]}
    ```

    Use instead:
    ```json
    {"model": "gpt-5-mini", "max_completion_tokens": 1024, "messages": [{"role": "user", "content": "Summarize the ticket."}]}
    ```
    """

    code = "CTX037"
    name = "refused-setting"
    severity = "error"
    remediation = ("Send the setting the model takes in its place (max_completion_tokens for max_tokens), or leave the refused setting out"
                   " (reasoning_effort for a model without reasoning).")

    def check(self, ctx) -> Iterable[Violation]:
        for entry, refusal in refused_settings(ctx.turn.record):
            sent = dotted(ctx.request, refusal.path)
            if not refusal.refuses(sent, ctx.request):
                continue
            if ctx.host_took(refusal.sent_as(sent)):
                continue  # the host answered the same setting before
            unless = f" in a request without {refusal.without}" if refusal.without else ""
            yield Violation(
                f"{refusal.path} = {as_sent(sent)}: {entry['by']} refuses it{unless} for {ctx.turn.record.model} "
                f"({entry['error']!r}); {refusal.advice()}",
                key=refusal.sent_as(sent), pointer="/" + refusal.path.replace(".", "/"),
                evidence={"setting": refusal.path, "value": sent, "model": ctx.turn.record.model, "provider_error": entry["error"],
                          "sources": entry["sources"]},
            )
