from __future__ import annotations

import re
from typing import Iterable

from ctxlint.chat import excerpt
from ctxlint.rules.base import Rule, Violation
from ctxlint.rules.ctx006_context_window_exceeded import CONTEXT_LENGTH_ERROR

# (class, pattern over the error text); the first match names the class.
ERROR_CLASSES = (
    ("context length", CONTEXT_LENGTH_ERROR),
    # the model's output broke a constraint the request set (a required tool call, valid JSON):
    # Groq's tool_use_failed, which quotes the failed generation
    ("model output", re.compile(r"tool_use_failed|failed_generation|did not call a tool|failed to call a function"
                                r"|(?:could not|failed to) parse (?:the )?(?:tool|function) call", re.IGNORECASE)),
    # a message or block the API refuses as blank (Anthropic, Bedrock Converse, Gemini, Moonshot, Mistral, vLLM)
    ("blank content", re.compile(r"non-empty content|must be non-empty|non-whitespace text|ContentBlock object at \S+ is blank"
                                 r"|parts must not be empty|empty text parameter|at least one parts? field"
                                 r"|with role '\w+' must not be empty|must have either content or tool_calls"
                                 r"|Invalid assistant message: role='assistant' content=None|expected a string, got null", re.IGNORECASE)),
    # a list the API refuses sent empty (OpenAI's and DeepSeek's `tools: []`, `tool_calls: []`)
    ("empty list", re.compile(r"empty array|an array with minimum length 1", re.IGNORECASE)),
    # a content part the API does not take (DeepSeek's text-only API refusing an image)
    ("content type", re.compile(r"unknown variant `?(?:image_url|input_audio|file|video_url)|untagged enum ChatCompletionRequestContent"
                                r"|image input is not supported|does not support (?:image|vision)", re.IGNORECASE)),
    # a tool call id the API does not take: not unique in the request (Anthropic), not in its form (Mistral, OpenAI's length, the Responses API's)
    ("call id", re.compile(r"ids must be unique|tool call id was .* but must be|tool_calls\[\d+\]\.id'?: string too long"
                           r"|call_id[`']?: string too long", re.IGNORECASE)),
    # two input items under one id (the Responses API)
    ("item id", re.compile(r"duplicate item found with id", re.IGNORECASE)),
    # a request ending with an assistant message the model refuses (Claude 4.6 and newer; whitespace after a prefill; Mistral's without `prefix`)
    ("prefill", re.compile(r"assistant message prefill|prefilling assistant messages|must end with a user message"
                           r"|final assistant content cannot end with trailing whitespace|final block in an assistant message cannot be"
                           r"|expected last role", re.IGNORECASE)),
    # a request setting the model's API refuses (OpenAI's reasoning models: max_tokens, temperature)
    ("setting", re.compile(r"unsupported parameter|unsupported value|is not supported with this model|only the default \(1\) value"
                           r"|is only allowed when 'tools' are specified", re.IGNORECASE)),
    # an output token limit above what the model can write (OpenAI's, Anthropic's)
    ("output limit", re.compile(r"max_(?:completion_)?tokens is too large|maximum allowed number of output tokens"
                                r"|Invalid 'max_(?:completion_)?tokens': integer above maximum value", re.IGNORECASE)),
    # tool calls in the history of a request that declares no tools (Anthropic, Bedrock Converse)
    ("tool definitions", re.compile(r"must define tools|toolConfig field must be defined", re.IGNORECASE)),
    # a request that refers the provider to a reply or item it did not keep (the Responses API's
    # previous_response_id, an item sent by its id alone, under store false)
    ("unstored reference", re.compile(r"previous_response_not_found|previous response with id .* not found"
                                      r"|items are not persisted when `?store`? is set to false", re.IGNORECASE)),
    # a function name the API refuses (its characters, its length)
    ("tool name", re.compile(r"function\.name'?: string (?:does not match pattern|too long)|tools\.\d+\.custom\.name"
                             r"|tools\[\d+\]\.name'?: string does not match pattern|tool_use\.name: String should have at most"
                             r"|Invalid function name|function name is invalid|tool names must be unique"
                             r"|Duplicate function declaration", re.IGNORECASE)),
    # a function's parameters schema the API refuses (OpenAI's and Gemini's: an array without items)
    ("tool schema", re.compile(r"Invalid schema for function|array schema missing items|\.items: missing field", re.IGNORECASE)),
    # more tools, calls or strict parameters than the API takes
    ("tool count", re.compile(r"Invalid '(?:tools|messages\[\d+\]\.tool_calls)': array too long|function declarations can be specified"
                              r"|too many strict tools|too many optional parameters|too many parameters with union types", re.IGNORECASE)),
    # an image the API refuses (Anthropic's: too large, a side too long)
    ("image", re.compile(r"image exceeds \d+ MB maximum|image dimensions exceed max allowed size", re.IGNORECASE)),
    # prompt-cache breakpoints the API refuses (Anthropic's: more than four, a 1-hour one after a 5-minute one)
    ("cache breakpoints", re.compile(r"blocks with cache_control may be provided|cache_control block must not come after", re.IGNORECASE)),
    ("thinking/reasoning", re.compile(r"reasoning|thinking|thought|思考", re.IGNORECASE)),
    ("message order", re.compile(r"tool_call_id|tool_calls|tool_use|tool_result|tool output|function_call|function call turn|function response|must be followed|"
                                 r"preceding|role|alternat|consecutive|successive|interleave|order", re.IGNORECASE)),
    ("rate limit", re.compile(r"rate.?limit|too many requests|quota|throttl|限流", re.IGNORECASE)),
    ("auth", re.compile(r"api.?key|unauthori|forbidden|authentication|permission|invalid token", re.IGNORECASE)),
    ("server error", re.compile(r"overloaded|internal server error|server_error|server had an error|service unavailable|bad gateway"
                                r"|temporarily unavailable|timed out|time-?out|upstream connect|at capacity|服务繁忙|系统繁忙", re.IGNORECASE)),
)
STATUS_CLASSES = {401: "auth", 403: "auth", 429: "rate limit"}
# the provider's load or the model's sampling, not the request's fault: worth knowing in
# triage (a run of them explains a slow or failed session), not failing a gate
TRANSIENT = ("rate limit", "server error", "model output")
TRANSIENT_SEVERITY = "info"
# the rules whose finding at the same request is the defect an error of a class names
EXPLAINED_BY = {
    "context length": ("CTX006",),
    "thinking/reasoning": ("CTX004", "CTX005", "CTX015", "CTX038", "CTX041"),
    "blank content": ("CTX029",),
    "empty list": ("CTX030", "CTX031"),
    "content type": ("CTX032",),
    "call id": ("CTX011", "CTX033", "CTX034"),
    "item id": ("CTX042",),
    "cache breakpoints": ("CTX043",),
    "tool name": ("CTX044",),
    "tool count": ("CTX045",),
    "tool schema": ("CTX048",),
    "image": ("CTX046",),
    "output limit": ("CTX047",),
    "prefill": ("CTX035",),
    "setting": ("CTX005", "CTX037"),
    "tool definitions": ("CTX039",),
    "unstored reference": ("CTX040",),
    "message order": ("CTX001", "CTX002", "CTX003", "CTX009", "CTX010", "CTX011", "CTX012", "CTX024", "CTX027", "CTX028", "CTX036", "CTX049"),
}


def classify(status: int | None, text: str) -> str:
    for name, pattern in ERROR_CLASSES:
        if pattern.search(text):
            return name
    if status in STATUS_CLASSES:
        return STATUS_CLASSES[status]
    if status is not None and status >= 500:
        return "server error"
    return "other"


class ProviderError(Rule):
    """
    ## What it does
    Reports a logged response that is an API error, classified as message order,
    thinking/reasoning, blank content, empty list, content type, call id, item id, cache
    breakpoints, tool name, tool schema, tool count, image, output limit, prefill, setting,
    tool definitions, unstored reference, model output, auth, rate limit, server error or
    other, quoting the provider's message. Rate-limit and server errors (HTTP 429, 5xx,
    "overloaded", a timeout) and model-output errors (the model did not make the tool call
    the request required, or wrote a call that does not parse: Groq's `tool_use_failed`) are
    reported as info, not error: they say nothing wrong about the request, and retrying them
    is the right handling (the retry itself is legal for every rule), but a run of them
    explains a slow or failed session. Any other error the session got before, word for
    word, is reported once, where it started: the request resent, or the same defect sent
    again. An error about a defect another rule reports at the same request is reported
    once, by that rule (a thinking or reasoning error by CTX004, CTX005, CTX015, CTX038 or
    CTX041; a message order error by the tool-call and turn-order rules; a blank-content
    error by CTX029; an empty-list error by CTX030 or CTX031; a content-type error by
    CTX032; a call-id error by CTX011, CTX033 or CTX034; an item-id error by CTX042; a
    cache-breakpoints error by CTX043; a tool-name error by CTX044; a tool-count error by
    CTX045; an image error by CTX046; an output-limit error by CTX047; a prefill error by
    CTX035; a setting error by CTX005 or CTX037; a tool-definitions error by CTX039; an
    unstored-reference error by CTX040; a context-length error by CTX006, with the token
    count; an error that says no more than its code, such as Bedrock's
    `ValidationException`, by any of them), unless that rule is not selected.

    ## Why is this bad?
    An error response is the provider telling you what was wrong with the request. In a
    log it is easy to miss between successful calls; the classification points at the
    rule family to look at (message order → CTX001/CTX002/CTX003, thinking → CTX004/CTX005).

    ## Example
    ```json
    {"status": 400, "response": {"error": {"message": "Missing reasoning_content field in the assistant message at message index 2", "type": "invalid_request_error"}}}
    ```

    Use instead: fix the request the error names; only rate-limit and server errors are
    worth retrying.
    """

    code = "CTX022"
    name = "provider-error"
    severity = "error"
    remediation = ("Fix what the provider's error names in the request (resent unchanged, it fails again); "
                   "only a rate-limit or server error is worth retrying as is, after a wait.")

    def check(self, ctx) -> Iterable[Violation]:
        response = ctx.turn.record.response
        if response is None or not response.failed:
            return
        error = response.error or {}
        text = response.error_text
        kind = classify(response.status, text)
        quoted = excerpt(str(error.get("message") or text or f"HTTP {response.status}"), 200)
        yield Violation(
            f"the provider answered with an error ({kind}{f', HTTP {response.status}' if response.status else ''}): {quoted}",
            # a transient error counts at every request it hit; another, once per session
            key=("error", ctx.turn.number) if kind in TRANSIENT else ("error", kind, quoted), evidence={"class": kind, "status": response.status, "provider_message": quoted},
            severity=TRANSIENT_SEVERITY if kind in TRANSIENT else None, explained_by=_explained_by(kind, error),
        )


# every rule whose defect an API refuses: what an error that names no cause may be about
ANY_REFUSAL = tuple(sorted({code for codes in EXPLAINED_BY.values() for code in codes}))


def _explained_by(kind: str, error: dict) -> tuple[str, ...]:
    """The rules whose finding at the same request explains an error of this class; for an
    error that says no more than its code (Bedrock's `ValidationException`), any of them."""
    if kind == "other" and str(error.get("message") or "") in ("", str(error.get("code") or "")):
        return ANY_REFUSAL
    return EXPLAINED_BY.get(kind, ())
