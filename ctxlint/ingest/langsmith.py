"""LangSmith runs, as the requests their model calls sent.

A LangSmith export (runs as its API returns them: `client.list_runs`, one per line or a
JSON list, a trace with its `child_runs`) holds runs of every kind; a model call is a run
whose `run_type` is `llm`. LangChain's tracer records the messages the model got under
`inputs.messages` (a batch: a list per prompt, of which a chat model call has one), each
serialized the LangChain way (`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
"kwargs": {...}}`) or as a plain message (`{"type": "ai", ...}`), and the reply as
`outputs.generations[0][0].message`; the model, its bound tools and its settings are the
run's `extra.invocation_params`. A run traced around an SDK call (`wrap_openai`,
`@traceable(run_type="llm")`) keeps the call's body as `inputs` and the provider's reply
as `outputs`, and is read as that body. Runs of other kinds (chains, tools, retrievers)
and model runs recorded as prompt text are counted as skipped.

A run's own `session_id` is its tracing project, not a conversation: the session is the
thread the run's metadata names (`thread_id`, `session_id`, `conversation_id`, as
LangSmith groups threads), else it is inferred. The messages are LangChain's record of
what it sent, read as ingest.langchain reads them.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ctxlint.chat import dotted, object_member, str_or_none
from ctxlint.ingest import anthropic, langchain
from ctxlint.ingest.intern import INTERNER
from ctxlint.ingest.record import InputProblem, ReadBody, Record, Response, Skipped, iso_seconds
from ctxlint.ingest.responses import parse_response
from ctxlint.ingest.source_map import BodyProblem, SourceMap, member_pointers

NAME = "LangSmith run"
# Members a LangSmith run has beside `run_type` and `inputs` (any one tells it from an app's record)
RUN_MEMBERS = ("trace_id", "dotted_order", "parent_run_id", "child_runs", "extra", "serialized")
RUN_TYPES = ("llm", "chain", "tool", "retriever", "embedding", "prompt", "parser")  # LangSmith's, in either case
THREAD_KEYS = ("thread_id", "session_id", "conversation_id")  # in the run's metadata, as LangSmith groups threads
MODEL_PARAMS = ("model", "model_name", "model_id", "azure_deployment", "deployment_name")
NOT_SETTINGS = ("tools", "functions", "messages", "stream", *MODEL_PARAMS)  # invocation params that are not request settings
STATUS_IN_ERROR = re.compile(r"Error code: (\d{3})")  # how the OpenAI and Anthropic SDKs' errors name the HTTP status
# The errors of the providers' SDKs and LiteLLM's: the provider's answer, not the app's own failure
PROVIDER_ERROR = re.compile(r"Error code: \d{3}|\b\w*(?:APIError|APIStatusError|RateLimitError|BadRequestError|InternalServerError|"
                            r"AuthenticationError|PermissionDeniedError|NotFoundError|UnprocessableEntityError|OverloadedError|"
                            r"ServiceUnavailableError|ContextWindowExceededError|APIConnectionError|APITimeoutError)\b")


def holds_runs(obj: Any) -> bool:
    """Whether a parsed line is a LangSmith run (with its child runs, if exported as a tree)."""
    return isinstance(obj, dict) and isinstance(obj.get("run_type"), str) and obj["run_type"].lower() in RUN_TYPES \
        and "inputs" in obj and any(name in obj for name in RUN_MEMBERS)


def session_key(run: dict[str, Any], key_path: str | None) -> str | None:
    """The conversation a run belongs to: what `key_path` names in it, else the thread its
    metadata names; never the run's own `session_id` (its project)."""
    if key_path:
        value = dotted(run, key_path)
    else:  # the API's own thread_id (derived from the metadata), else the metadata's
        metadata = _metadata(run)
        value = run.get("thread_id") or next((metadata[key] for key in THREAD_KEYS if metadata.get(key) not in (None, "")), None)
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


def items(obj: dict[str, Any], file: str, line: int, key_path: str | None, read_body: ReadBody) -> list[Record | InputProblem | Skipped]:
    """A record per model-call run on the line (the run and its child runs), a skip per
    other run. `read_body` reads a traced SDK call's body (shapes.body_record)."""
    key = session_key(obj, key_path)
    return [_item(run, pointer, file, line, session_key(run, key_path) or key, read_body) for pointer, run in _runs(obj, "")]


def _runs(run: dict[str, Any], pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield pointer, run
    children = run.get("child_runs")
    for index, child in enumerate(children if isinstance(children, list) else ()):
        if isinstance(child, dict):
            yield from _runs(child, f"{pointer}/child_runs/{index}")


def _item(run: dict[str, Any], pointer: str, file: str, line: int, key: str | None, read_body: ReadBody) -> Record | InputProblem | Skipped:
    if str(run.get("run_type")).lower() != "llm":  # the v2 API spells the types in capitals
        return Skipped(file, line, f"LangSmith {str(run.get('run_type')).lower()} run (no model call)")
    inputs = run.get("inputs")
    timestamp = iso_seconds(run["start_time"]) if isinstance(run.get("start_time"), str) else None
    if isinstance(inputs, dict) and _is_body(inputs):  # an SDK call's body, traced as it was sent
        body = inputs if inputs.get("model") is not None else {**inputs, "model": _model(run)}
        return read_body(body, file, line, "bare", f"{pointer}/inputs", session_key=key, timestamp=timestamp,
                         response=_error(run) or parse_response(run.get("outputs")))
    batch = inputs.get("messages") if isinstance(inputs, dict) else None
    if not isinstance(batch, list):
        return Skipped(file, line, "LangSmith model run recorded without its messages (a prompt as text)")
    try:
        request, source_map, recorded = _request(run, batch, pointer)
    except BodyProblem as problem:
        return InputProblem(file, line, f"{NAME}: {problem}", problem.pointer)
    INTERNER.intern(request["messages"])
    return Record(file=file, line=line, shape="langsmith", request=request, response=_error(run) or _reply(run.get("outputs")),
                  session_key=key, timestamp=timestamp, source_map=source_map, reasoning_recorded=recorded)


def _is_body(inputs: dict[str, Any]) -> bool:
    """`inputs` holds a provider's request body (chat messages with roles, Responses API
    input items, Gemini contents), not LangChain's messages."""
    messages = inputs.get("messages")
    if isinstance(messages, list) and messages:
        return all(isinstance(message, dict) and "role" in message for message in messages) and not langchain.spelled_by_langchain(messages)
    return isinstance(inputs.get("contents"), list) or (isinstance(inputs.get("input"), (list, str)) and "model" in inputs)


def _request(run: dict[str, Any], batch: list[Any], pointer: str) -> tuple[dict[str, Any], SourceMap, bool]:
    """The chat request a LangChain model run (at `pointer`) stands for, the map back into
    the run, and whether the run shows the reasoning that was sent."""
    at = f"{pointer}/inputs/messages"
    if batch and all(isinstance(prompt, list) for prompt in batch):  # a batch of prompts: a chat call has one
        batch, at = batch[0], f"{at}/0"
    messages, origins = langchain.chat_messages(batch, at)
    request: dict[str, Any] = {"model": _model(run), "messages": messages}
    settings: dict[str, str] = {}
    params = _params(run)
    for name, value in params.items():  # the settings the integration sent with the messages
        if name in NOT_SETTINGS or name.startswith("_"):
            continue
        sent, base = (value, f"{pointer}/extra/invocation_params/extra_body") if name == "extra_body" and isinstance(value, dict) \
            else ({name: value}, f"{pointer}/extra/invocation_params")
        request.update(sent)
        settings.update({inner: base + inner for inner in member_pointers(sent)})
    if isinstance(params.get("tools"), list):
        request["tools"] = [anthropic.chat_tool(tool) if isinstance(tool, dict) and "input_schema" in tool else tool for tool in params["tools"]]
    return request, SourceMap(origins, {}, settings, reasoning=None), \
        langchain.reasoning_recorded(_metadata(run).get("ls_provider"), messages)


def _reply(outputs: Any) -> Response | None:
    """The reply a model run recorded: its first generation's message."""
    generations = outputs.get("generations") if isinstance(outputs, dict) else None
    first = generations[0] if isinstance(generations, list) and generations else None
    first = first[0] if isinstance(first, list) and first else first
    if not isinstance(first, dict):
        return None
    return langchain.parse_reply(first.get("message"), object_member(first, "generation_info"), object_member(outputs, "llm_output"))


def _error(run: dict[str, Any]) -> Response | None:
    """A model run the provider refused, as the run's error tells it (an SDK's API error);
    a run the app gave up on (cancelled, its own exception) got no answer, and has none."""
    error = run.get("error")
    if not isinstance(error, str) or PROVIDER_ERROR.search(error) is None:
        return None
    status = STATUS_IN_ERROR.search(error)
    return Response(error={"message": error.strip().splitlines()[0], "type": None, "code": None},
                    status=int(status.group(1)) if status else None)


def _params(run: dict[str, Any]) -> dict[str, Any]:
    extra = run.get("extra")
    params = extra.get("invocation_params") if isinstance(extra, dict) else None
    return params if isinstance(params, dict) else {}


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    extra = run.get("extra")
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _model(run: dict[str, Any]) -> str | None:
    params = _params(run)
    return next((params[name] for name in MODEL_PARAMS if isinstance(params.get(name), str)), None) or str_or_none(
        _metadata(run).get("ls_model_name"))
