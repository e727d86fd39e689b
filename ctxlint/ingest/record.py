"""The one normalized shape every reader produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import orjson


def iso_seconds(text: str) -> float | None:
    """An ISO 8601 time as epoch seconds, as Record.timestamp holds it (one without a zone
    read as UTC); None when the text is no such time."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def json_text(value: Any) -> Any:
    """A value a log kept as the text of JSON (a body an export or a gateway wrote as a
    string), read as the JSON it holds; anything else, and text that is no JSON, as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def http_status(value: Any) -> int | None:
    """An HTTP status code, or None for anything else a logger put there."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599 else None


@dataclass(slots=True)
class Response:
    """What the provider answered to one request, when the log holds it."""

    message: dict[str, Any] | None = None  # the assistant message of choice 0
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: dict[str, Any] | None = None  # {"message", "type", "code"} of an API error
    status: int | None = None
    model: str | None = None
    # the provider's id of this reply (chatcmpl-…, msg_…, resp_…): one id on two records is
    # one exchange logged twice, not the request sent again
    id: str | None = None
    # what the API changed of the request's input before the model saw it, as the reply
    # lists it (Anthropic's input_transformations: thinking blocks dropped, or let through,
    # that failed a binding check); None where the reply does not say
    input_transformations: tuple[dict[str, Any], ...] | None = None

    @property
    def failed(self) -> bool:
        """The provider refused the request: an error body or an HTTP error status."""
        return self.error is not None or (self.status is not None and self.status >= 400)

    @property
    def error_text(self) -> str:
        """The error's message, type and code as one string, for classifying it."""
        return " ".join(str((self.error or {}).get(key) or "") for key in ("message", "type", "code")).strip()


@dataclass(slots=True)
class LoggedCall:
    """A call a gateway's or a cloud's log entry records (ingest.bedrock_logs, ingest.kong):
    the body sent, where it is in the entry, what came back, the prompt's size as the log
    counted it, and when the call was made."""

    body: Any
    pointer: str
    response: Response | None
    prompt_tokens: int | None = None
    timestamp: float | None = None


@dataclass(slots=True)
class Record:
    """One chat-completions request as the app sent it."""

    file: str
    line: int
    shape: str  # envelope, bare, batch, bedrock, cassette, snapshot, trajectory, otel, langsmith
    request: dict[str, Any]
    response: Response | None = None
    session_key: str | None = None
    custom_id: str | None = None
    seq: int = 0  # position in the whole input, across files: "first seen" means lowest seq
    scope: str = ""  # the unit sessions are inferred within: a file, or a snapshot run folder
    extra: dict[str, Any] = field(default_factory=dict)
    # a source_map.SourceMap when the body was normalized from another API, or from SDK call
    # arguments (extra_body merged in)
    source_map: Any = None
    timestamp: float | None = None  # when the log says the request was made (epoch seconds), if it does
    # False when the log does not record the reasoning a request sent back (a tracer's span
    # that keeps only text and calls): the rules that judge reasoning cannot judge it
    reasoning_recorded: bool = True
    # False when the log does not record the request's settings (a tracer's span or event
    # that keeps the messages alone): a thinking switch it does not show is unknown, not off
    settings_recorded: bool = True
    # the stored response a Responses API request goes on from (previous_response_id): it
    # sent only its new input until ingest.stored_responses puts the history back
    continues: str | None = None
    # a Responses API request whose reply the provider stores (`store` not false): a later
    # request may go on from that reply
    reply_stored: bool = False
    # (file, line) of the request whose reply this one goes on from, where that request was
    # sent with `store: false`: the provider did not store the reply (CTX040)
    unstored_reply_at: tuple[str, int] | None = None
    # the host the request was sent to, where the log names its URL (an HTTP logger's
    # exchange, a cassette, an envelope's `url`): some rules hold on one host of an API only
    host: str | None = None

    @property
    def answered(self) -> bool:
        """Whether a successful reply to the request is logged: a host took it as sent."""
        return self.response is not None and not self.response.failed

    def label(self, index: int) -> str:
        """How findings name message `index`: as the body that was sent numbers it."""
        return str(index) if self.source_map is None else self.source_map.label(index)

    def field_label(self, name: str) -> str:
        """How findings name a message field: as the body that was sent calls it."""
        return name if self.source_map is None else self.source_map.field(name)

    @property
    def model(self) -> str | None:
        model = self.request.get("model")
        return model if isinstance(model, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.request["messages"]


@dataclass(slots=True, frozen=True)
class InputProblem:
    """A line or file that could not be read as a request; reported as CTX900."""

    file: str
    line: int
    message: str
    pointer: str | None = None


@dataclass(slots=True, frozen=True)
class Skipped:
    """An interaction that is readable but not chat-completions traffic; counted by reason."""

    file: str
    line: int
    reason: str


TOO_DEEP = "nested deeper than ctxlint reads (its objects and arrays go more than 250 levels down)"


def nested_too_deep(error: BaseException) -> bool:
    """Whether an error is Python's or orjson's limit on nesting, met by a record nested
    past what can be hashed or walked (orjson.loads reads 1024 levels, dumps 254)."""
    return isinstance(error, RecursionError) or (isinstance(error, TypeError) and str(error) == "Recursion limit reached")


def too_deep(error: BaseException, file: str, line: int) -> InputProblem:
    """The located problem (CTX900) of a record nested past what can be hashed or walked;
    any other error is a bug, and is raised again."""
    if not nested_too_deep(error):
        raise error
    return InputProblem(file, line, TOO_DEEP)


# How a reader of a format that wraps request bodies (a tracer's run or span) has the body
# read as a logged body is (shapes.body_record: body, file, line, shape, pointer, **fields)
ReadBody = Callable[..., "Record | InputProblem | Skipped"]
