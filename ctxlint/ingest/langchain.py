"""LangChain's messages, as tracers record them, in chat-completions terms.

Tracers of LangChain apps (LangSmith, Langfuse's callback handler) record the messages a
chat model got as LangChain keeps them, not as the integration sent them: serialized
(`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`), as
`messages_to_dict` writes them (`{"type": "ai", "data": {...}}`), as plain dicts with
LangChain's `type` (`human`, `ai`, `tool`…) or as its role, or with a `role` but LangChain's
tool calls (`{"name", "args", "id"}`) and `additional_kwargs`. Tool calls are read as the
JSON arguments the provider got (LangChain sends back the calls it could not parse as
they came); reasoning kept as content blocks (Anthropic's thinking blocks, LangChain's
`reasoning` block) is the turn's reasoning, as the integration sends it. Reasoning an
integration keeps in `additional_kwargs` may not have gone out (langchain-openai leaves
DeepSeek's `reasoning_content` out of what it sends): it is read of a reply alone, what the
model returned, and a record whose messages show no reasoning the way it is sent does not
record the reasoning that went out.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import object_member, str_or_none, text_of
from ctxlint.ingest import anthropic
from ctxlint.ingest.record import Response
from ctxlint.ingest.source_map import BodyProblem, Origin, SourceMap, assistant_turn

NAME = "LangChain"
# LangChain's message types (its serialized class names, and the `type` of a plain message) as roles
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "function", "developer": "developer",
         "user": "user", "assistant": "assistant"}
CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
           "FunctionMessage": "function", "ChatMessage": "chat"}
REASONING_BLOCKS = ("thinking", "redacted_thinking", "reasoning")  # Anthropic's blocks, LangChain's standard block
CONTENT_CARRIES_REASONING = ("anthropic",)  # providers (LangChain's ls_provider) whose integration sends reasoning as content blocks


def spelled_by_langchain(messages: list[Any]) -> bool:
    """Whether a recorded message list is LangChain's: a message serialized, typed or with
    tool calls the LangChain way."""
    return any(isinstance(message, dict) and ("lc" in message or (_typed(message) and "role" not in message)
                                              or langchain_calls(message) or _role_spelled_by_langchain(message)) for message in messages)


def _typed(message: dict[str, Any]) -> bool:
    """A message typed as LangChain types them (`human`, `ai`…)."""
    return isinstance(message.get("type"), str) and message["type"] in ROLES


def _role_spelled_by_langchain(message: dict[str, Any]) -> bool:
    """A message whose role is LangChain's type (`human`, `ai`), which no provider takes."""
    return message.get("role") in ("human", "ai")


def langchain_calls(message: dict[str, Any]) -> bool:
    """Whether a message's tool calls are LangChain's (`name`, `args`), not a provider's."""
    calls = message.get("tool_calls")
    return isinstance(calls, list) and any(isinstance(call, dict) and "args" in call for call in calls)


def is_body(body: dict[str, Any], known: int = 0) -> bool:
    """A request body whose messages (after the first `known`, which an earlier
    chat-completions record had) are LangChain's, as an app of it may log them."""
    messages = body.get("messages")
    return isinstance(messages, list) and spelled_by_langchain(messages[known:])


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], SourceMap]:
    """The chat-completions body LangChain's messages stand for, and the map back into it."""
    messages, origins = chat_messages(body["messages"], "/messages")
    return {**body, "messages": messages}, SourceMap(origins, reasoning=None)


def reasoning_sent(messages: list[dict[str, Any]]) -> bool:
    """Whether the messages show the reasoning that went out (no provider named: only
    where they carry some as the integration sends it)."""
    return reasoning_recorded(None, messages)


def chat_messages(recorded: list[Any], pointer: str) -> tuple[list[dict[str, Any]], tuple[Origin, ...]]:
    """A recorded message list (at JSON pointer `pointer`) as chat messages, and where each came from."""
    messages, origins = [], []
    for index, raw in enumerate(recorded):
        message, calls = chat_message(raw, f"{pointer}/{index}")
        messages.append(message)
        origins.append(Origin(index, f"{pointer}/{index}", calls, content="/kwargs/content" if isinstance(raw, dict) and "lc" in raw else "/content"))
    return messages, tuple(origins)


def is_reply(body: dict[str, Any]) -> bool:
    """A reply logged as LangChain's AIMessage (its fields with `type` "ai", as
    messages_to_dict writes it, or serialized)."""
    try:
        kind, _, _ = message_fields(body, "")
    except BodyProblem:
        return False
    return kind in ("ai", "AIMessageChunk")


def parse_reply(raw: Any, info: dict[str, Any] | None = None, output: dict[str, Any] | None = None) -> Response | None:
    """An AIMessage as the reply it records: its message, why it ended and its usage (the
    generation's info and the run's llm_output, where a tracer kept them beside it)."""
    try:
        message, _ = chat_message(raw, "", reply=True)
        _, fields, _ = message_fields(raw, "")
    except BodyProblem:
        return None
    metadata, info, output = object_member(fields, "response_metadata"), info or {}, output or {}
    reason = info.get("finish_reason") or metadata.get("finish_reason") or metadata.get("stop_reason")
    usage = _usage(fields.get("usage_metadata")) or output.get("token_usage")
    model = metadata.get("model_name") or metadata.get("model") or output.get("model_name")
    return Response(message=message, finish_reason=anthropic.FINISH_REASONS.get(reason, reason) if isinstance(reason, str) else None,
                    usage=usage if isinstance(usage, dict) else None, model=str_or_none(model), id=str_or_none(fields.get("id")))


def _usage(counts: Any) -> dict[str, Any] | None:
    """LangChain's usage_metadata in chat-completions terms (its input_tokens count the
    cached tokens too, as the prompt's size does)."""
    if not isinstance(counts, dict) or not isinstance(counts.get("input_tokens"), int):
        return None
    return {"prompt_tokens": counts["input_tokens"], "completion_tokens": counts.get("output_tokens")}


def reasoning_recorded(provider: Any, messages: list[dict[str, Any]]) -> bool:
    """Whether a record shows the reasoning that went out: the provider's integration sends
    it as content blocks, or the messages carry some so."""
    return provider in CONTENT_CARRIES_REASONING or any("reasoning_details" in message for message in messages)


def chat_message(raw: Any, pointer: str, reply: bool = False) -> tuple[dict[str, Any], tuple[str, ...]]:
    """One LangChain message as a chat message, and the pointers of its tool calls. The
    reasoning an integration keeps in `additional_kwargs` is read of a `reply` alone."""
    kind, fields, at = message_fields(raw, pointer)
    role = fields.get("role") if kind in ("chat", None) else ROLES.get(kind)
    role = ROLES.get(role, role) if isinstance(role, str) else None
    if role is None:
        raise BodyProblem(f"{pointer} is a message of no role ctxlint knows ({kind or 'no type'})", pointer)
    if role == "assistant":
        message, calls = _assistant(fields, at, reply)
    else:
        content = fields.get("content")
        message, calls = {"role": role, "content": content if isinstance(content, (str, list)) or content is None else text_of(content)}, ()
    if role == "tool":
        message["tool_call_id"] = str_or_none(fields.get("tool_call_id"))
        if fields.get("status") == "error":
            message["is_error"] = True
    if isinstance(fields.get("name"), str):
        message["name"] = fields["name"]
    return message, calls


def message_fields(raw: Any, pointer: str) -> tuple[str | None, dict[str, Any], str]:
    """A message's type, its fields and their pointer: serialized the LangChain way (the
    class name last in `id`, the fields as `kwargs`) or plain."""
    if not isinstance(raw, dict):
        raise BodyProblem(f"{pointer} is not a message", pointer)
    if "lc" in raw and isinstance(raw.get("kwargs"), dict):
        names = raw.get("id")
        name = names[-1] if isinstance(names, list) and names and isinstance(names[-1], str) else ""
        return CLASSES.get(name.removesuffix("Chunk"), name), raw["kwargs"], f"{pointer}/kwargs"
    if isinstance(raw.get("data"), dict) and isinstance(raw.get("type"), str):  # messages_to_dict: {"type", "data": {…}}
        return raw["type"], raw["data"], f"{pointer}/data"
    return str_or_none(raw.get("type")), raw, pointer


def _assistant(fields: dict[str, Any], at: str, reply: bool) -> tuple[dict[str, Any], tuple[str, ...]]:
    """An AIMessage: its text, its reasoning (content blocks; in a reply, also what the
    integration kept in additional_kwargs), its tool calls (parsed, or as the provider
    returned them)."""
    content = fields.get("content")
    extra = object_member(fields, "additional_kwargs")
    blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    texts = [content] if isinstance(content, str) else [block["text"] for block in blocks
                                                        if block.get("type") == "text" and isinstance(block.get("text"), str)]
    reasoning = [block for block in blocks if block.get("type") in REASONING_BLOCKS]
    calls, pointers = [], []
    for member in ("tool_calls", "invalid_tool_calls"):  # LangChain sends back the calls it could not parse as they came
        for index, call in enumerate(fields.get(member) if isinstance(fields.get(member), list) else ()):
            if isinstance(call, dict):
                calls.append(_call(call))
                pointers.append(f"{at}/{member}/{index}")
    if not calls and isinstance(extra.get("tool_calls"), list):  # LangChain before parsed tool calls kept the provider's
        for index, call in enumerate(extra["tool_calls"]):
            if isinstance(call, dict):
                calls.append(call)
                pointers.append(f"{at}/additional_kwargs/tool_calls/{index}")
    message = assistant_turn([text for text in texts if text], reasoning, calls)
    if message["content"] is None and not calls and isinstance(content, str):
        message["content"] = content  # an empty text goes out as one (the integrations send null only beside calls)
    if reply and isinstance(extra.get("reasoning_content"), str):
        message["reasoning_content"] = extra["reasoning_content"]
    return message, tuple(pointers)


def _call(call: dict[str, Any]) -> dict[str, Any]:
    """A LangChain tool call (`name`, `args`, `id`) as chat-completions spells it: its
    parsed arguments as the JSON text the provider got, an unparsed one's as they came;
    a call already spelled so, as it is."""
    if isinstance(call.get("function"), dict):
        return call
    args = call.get("args")
    arguments = args if isinstance(args, str) else anthropic.arguments_json(args if args is not None else {})
    return {"id": str_or_none(call.get("id")), "type": "function", "function": {"name": str_or_none(call.get("name")), "arguments": arguments}}
