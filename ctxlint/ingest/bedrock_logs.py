"""Amazon Bedrock's model invocation logs, as the requests they record.

With invocation logging on, Bedrock writes one record per call to CloudWatch Logs or, as
JSON lines, to S3: `schemaType: "ModelInvocationLog"`, the `operation` (Converse,
ConverseStream, InvokeModel, InvokeModelWithResponseStream), the `modelId` (the URL's, so
not in the body), the body sent as `input.inputBodyJson` (a Converse request, or the
model's own body for InvokeModel: Anthropic's Messages body, an OpenAI chat body), the
reply as `output.outputBodyJson` (a stream's assembled, or its chunks), the prompt's size
(`input.inputTokenCount`, cached tokens apart), an `errorCode` for a failed call, and the
Converse request's `requestMetadata`, where apps tag a call with its session. A body over
100 KB goes to S3 (`inputBodyS3Path`), and with text logging off none is kept: such a
record holds no request to read, and is skipped saying so.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import object_member, str_or_none
from ctxlint.ingest import gemini, openai_responses
from ctxlint.ingest.record import LoggedCall, Response, iso_seconds, json_text
from ctxlint.ingest.responses import parse_response

SCHEMA_TYPE = "ModelInvocationLog"
BODY_POINTER = "/input/inputBodyJson"
METADATA = "requestMetadata"
# Bedrock's errors (the Converse and InvokeModel references) and the HTTP status of each
ERROR_STATUSES = {"ValidationException": 400, "ServiceQuotaExceededException": 400, "AccessDeniedException": 403,
                  "ResourceNotFoundException": 404, "ModelTimeoutException": 408, "ModelErrorException": 424,
                  "ModelStreamErrorException": 424, "ThrottlingException": 429, "ModelNotReadyException": 429,
                  "InternalServerException": 500, "ServiceUnavailableException": 503}
CACHED_INPUT_COUNTS = ("cacheReadInputTokenCount", "cacheWriteInputTokenCount")


def is_invocation_log(obj: dict[str, Any]) -> bool:
    """A Bedrock invocation log record (an export that dropped `schemaType` still names the
    model beside an `input` that holds the body, or says where it went)."""
    if obj.get("schemaType") == SCHEMA_TYPE:
        return True
    logged = obj.get("input")
    return isinstance(obj.get("modelId"), str) and isinstance(logged, dict) and (
        "inputBodyJson" in logged or "inputBodyS3Path" in logged)


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """The call's request metadata: the key-value pairs an app tagged it with."""
    found = obj.get(METADATA)
    return found if isinstance(found, dict) else {}


def invocation(obj: dict[str, Any]) -> LoggedCall | str:
    """The request a record logs, or why it holds none to read."""
    logged, output = object_member(obj, "input"), object_member(obj, "output")
    call = f"Bedrock {str_or_none(obj.get('operation')) or 'model'} call"
    error = str_or_none(obj.get("errorCode"))
    body = json_text(logged.get("inputBodyJson"))
    # the reasons name no path, model or id: skips are counted by reason
    if body is None:
        if "inputBodyS3Path" in logged:
            return f"{call} whose request body went to S3 (inputBodyS3Path), not into the log"
        if error is not None:
            return f"failed {call} ({error}) logged without its request body"
        return f"{call} logged without its request body (the logging configuration delivers no text)"
    if not isinstance(body, dict):
        return LoggedCall(body, BODY_POINTER, None)  # a body that is no object: reading it says what is wrong with it
    if not _chat_body(body):
        return f"{call} with no messages list (a {_kind(body)} body)"
    if "model" not in body and isinstance(obj.get("modelId"), str):
        body = {**body, "model": obj["modelId"]}
    counted = logged.get("inputTokenCount")
    cached = sum(logged[name] for name in CACHED_INPUT_COUNTS if isinstance(logged.get(name), int))
    when = obj.get("timestamp")
    return LoggedCall(body, BODY_POINTER, _reply(output, error), counted + cached if isinstance(counted, int) else None,
                      iso_seconds(when) if isinstance(when, str) else None)


def _chat_body(body: dict[str, Any]) -> bool:
    return isinstance(body.get("messages"), list) or openai_responses.is_responses_body(body) or gemini.is_gemini_body(body)


def _kind(body: dict[str, Any]) -> str:
    if "inputText" in body or "texts" in body:
        return "text or embedding input"
    if "prompt" in body:
        return "completion prompt"
    if "taskType" in body or "text_prompts" in body:
        return "image generation"
    if "chat_history" in body or "message" in body:
        return "Cohere chat"
    return "model-specific"


def _reply(output: dict[str, Any], error: str | None) -> Response | None:
    """What came back: the error of a failed call, else the logged reply."""
    if error is not None:
        return Response(error={"code": error, "message": error}, status=ERROR_STATUSES.get(error))
    return parse_response(output.get("outputBodyJson"))
