"""Reading chat-completions messages the many ways real traffic spells them."""

from __future__ import annotations

import difflib
import hashlib
import re
from functools import lru_cache
from typing import Any, Iterator

import orjson

from ctxlint.caching import IdentityCache

# Reasoning travels under these names: reasoning_content (Zhipu, DeepSeek, Kimi, Qwen),
# reasoning (OpenRouter, Groq, Cerebras, vLLM-style hosts), reasoning_details
# (OpenRouter's structured form, which preserves the reasoning when passed back) and
# thinking_blocks (LiteLLM's carrier of Anthropic's signed thinking blocks).
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details", "thinking_blocks")
# Or inline: a <think> block opening the content (MiniMax-M2's OpenAI-compatible API, hosts
# that serve a thinking model without a reasoning parser).
INLINE_THINKING = "<think> block in content"
# Or on the tool calls: Gemini's OpenAI-compatible API returns each call's thought signature
# as tool_calls[i].extra_content.google.thought_signature, to be sent back with the call.
THOUGHT_SIGNATURES = "thought_signature of its tool calls"

EDIT_SIMILARITY = 0.6  # how alike two texts must be to count as one text, edited
EDITED_MESSAGE_KEPT = 8  # characters a user's message must hold for words added to it to read as an edit

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)

# Han, kana and hangul: scripts whose every character says about as much as a word
CJK_CHARACTER = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
CJK_RUN = re.compile(CJK_CHARACTER.pattern + "+")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return ""


def str_or_none(value: Any) -> str | None:
    """A logged value where a string belongs: itself, or None when it is anything else."""
    return value if isinstance(value, str) else None


def object_member(obj: dict[str, Any], name: str) -> dict[str, Any]:
    """A member that should be an object, or an empty one: a log entry is read as far as it is well formed."""
    found = obj.get(name)
    return found if isinstance(found, dict) else {}


def similar(first: str, second: str) -> bool:
    """Whether one text reads as an edit of the other (a refreshed system prompt, a user
    message corrected and resent)."""
    return difflib.SequenceMatcher(None, first[:2000], second[:2000], autojunk=False).ratio() >= EDIT_SIMILARITY


def edited_message(old: str, new: str) -> bool:
    """Whether a user's message resent as `new` reads as their edit of `old`: a text much
    alike, or the old one kept whole with words added before or after it (a short
    question with a sentence added is no longer much alike, but is the same message
    edited). The old text must say enough to be told from a new message that opens
    alike ("ok", "继续")."""
    kept = old.strip()
    return similar(old, new) or (len(kept) >= EDITED_MESSAGE_KEPT and kept in new)


# Text in blocks of its own tags (`<environment_context>…</environment_context>`): what an
# agent puts around or beside the user's words (its environment, the project's instructions)
_TAGGED_BLOCK = re.compile(r"<([A-Za-z][\w.-]*)(?:\s[^<>]*)?>.*?</\1>\s*", re.DOTALL)
_TAGGED_BLOCKS = re.compile(f"(?:{_TAGGED_BLOCK.pattern})+", re.DOTALL)


def tagged_blocks_only(text: str) -> bool:
    """Whether a text is nothing but blocks in tags of their own."""
    return _TAGGED_BLOCKS.fullmatch(text.strip()) is not None


# The heading a retrieval app puts over the material it sends as a message of its own
# before the user's words ("Context:", "Relevant documents:", "参考资料："): what the
# question is to be answered from, not a turn of the conversation
_MATERIAL = (r"(?:context|documents?|docs|sources?|information|knowledge(?:\s+base)?|passages?|(?:search\s+)?results|excerpts?"
             r"|materials?|snippets?|articles?|facts|references?)")
_CONTEXT_HEADING = re.compile(
    r"\s*(?:#{1,6}\s*|\*\*)?(?:"
    r"(?:context|documents|docs|sources|passages|search\s+results|excerpts|snippets|knowledge\s+base|references)"
    rf"|(?:the\s+)?(?:retrieved|relevant|reference|background|supporting|provided|additional)\s+{_MATERIAL}"
    rf"|(?:here\s+(?:is|are)|use|using|based\s+on|given)\s+(?:the\s+)?(?:\w+\s+)?{_MATERIAL}\b[^\n:：]*"
    rf"|[^\n:：]*\bthe\s+following\s+(?:\w+\s+)?{_MATERIAL}\b[^\n:：]*"
    r"|参考资料|参考信息|参考文档|上下文|背景信息|背景资料|已知信息|检索结果|相关文档|相关资料|知识库"
    r")\s*(?:\*\*)?\s*[:：]\s*\S", re.IGNORECASE)


def context_heading(text: str) -> bool:
    """Whether a text opens with a heading that names it the material a question is to be
    answered from (retrieved documents, search results), with that material after it."""
    return _CONTEXT_HEADING.match(text) is not None


def tagged_block_names(text: str) -> tuple[str, ...]:
    """The tags of a text that is nothing but blocks in tags of their own, one block after
    another, in order; () for any other text."""
    stripped = text.strip()
    names, position = [], 0
    while position < len(stripped):
        block = _TAGGED_BLOCK.match(stripped, position)
        if block is None:
            return ()
        names.append(block.group(1))
        position = block.end()
    return tuple(names)


def different_participants(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Two messages of one role from two named participants (chat-completions' `name`:
    a group chat's users, a multi-agent run's agents)."""
    names = first.get("name"), second.get("name")
    return all(isinstance(name, str) and name for name in names) and names[0] != names[1]


def role_of(message: Any) -> str | None:
    # Called for every message by most rules: exact type checks (parsed JSON has no subclasses).
    role = message.get("role") if type(message) is dict else None
    return role if type(role) is str else None


def tool_calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        return [call for call in calls if isinstance(call, dict)]
    return []


def first_tool_message(messages: list[Any]) -> int | None:
    """The index of the first message that makes tool calls or carries a tool's result, if any."""
    return next((index for index, message in enumerate(messages)
                 if role_of(message) == "tool" or (role_of(message) == "assistant" and tool_calls_of(message))), None)


def tool_call_ids(message: dict[str, Any]) -> list[str]:
    return [call["id"] for call in tool_calls_of(message) if isinstance(call.get("id"), str)]


def says_nothing(message: dict[str, Any]) -> bool:
    """A reply with nothing to keep: no text and no tool calls (filtered by the provider,
    finish_reason content_filter, or empty). Some providers refuse it sent back (Anthropic:
    text blocks must be non-empty), so an app leaves it out."""
    if any(message.get(member) for member in SAID_MEMBERS):
        return False  # a legacy function call, a refusal, spoken audio: something to keep
    content = message.get("content")
    if isinstance(content, list) and not all(isinstance(part, dict) and part.get("type") in SILENT_PARTS for part in content):
        return False  # an image, audio, a tool use: something to keep
    return not text_of(content).strip() and not tool_calls_of(message)


def no_reply(response: Any) -> bool:
    """A logged response that brought no reply to keep: the provider refused the request (an
    error), filtered it (finish_reason content_filter, no message), or the reply said nothing."""
    if response.failed:
        return True
    if response.message is None:
        return response.finish_reason == "content_filter"
    return says_nothing(response.message)


SAID_MEMBERS = ("function_call", "refusal", "audio")  # members of a reply that say something besides its content
SILENT_PARTS = ("text", "output_text", "thinking", "redacted_thinking", "reasoning")  # parts that say only their text
CACHE_CONTROL = "cache_control"  # an Anthropic block's prompt-cache breakpoint: apps move it to the newest message every turn


def without_cache_control(value: Any) -> Any:
    """A block (a content part, a tool) without its prompt-cache breakpoint, which is not
    part of what it says; any other value as it is."""
    return {name: member for name, member in value.items() if name != CACHE_CONTROL} if isinstance(value, dict) else value


COMPACTION = "compaction"  # a normalized assistant message's field: the provider's summary of what came before it
# A normalized assistant message's field, true where it holds blocks of tools the provider
# runs itself (server_tool_use, mcp_tool_use, their *_tool_result): a turn the provider may
# pause (Anthropic's pause_turn) for the app to send back as it is, to go on.
SERVER_TOOL_BLOCKS = "server_tool_blocks"
# A normalized assistant message's field, where it has such blocks: the results of calls a
# provider ran itself (Anthropic's advisor_tool_result, web_search_tool_result, …) whose
# call (server_tool_use, mcp_tool_use) the assistant's turn does not hold before them.
UNCALLED_SERVER_RESULTS = "server_results_without_their_call"
# A normalized message's field, where the body's message holds content its API may refuse as
# blank: [{"api", "shape", "block"}], shape empty_message (no content, no parts),
# empty_text_block (a text block with no text, at `block`) or whitespace_text (text blocks,
# or a string, of whitespace alone); which API refuses which is profile data (CTX029).
BLANK_CONTENT = "blank_content"
# A normalized assistant message's field, where the Responses API turn it stands for holds
# reasoning items sent with their `id` that the item their reply followed them with does not
# follow in the input: [{"id", "item", "where", "next_item"}]: its id, its input index, what
# comes after it ("is the last input item", "is followed by a user message", …) and that
# item's index (CTX041).
UNPAIRED_REASONING = "reasoning_without_its_following_item"
# A normalized message's field, where the Responses API items it stands for hold an `id` an
# earlier input item of the request holds too: [{"id", "item", "first"}]: the id, the input
# index of the item that repeats it and of the first that holds it (CTX042).
DUPLICATE_ITEM_IDS = "item_ids_sent_twice"
# the notes ingest makes on Responses API input items the API may refuse (CTX041, CTX042)
INPUT_ITEM_NOTES = (UNPAIRED_REASONING, DUPLICATE_ITEM_IDS)
# A normalized assistant message's field, where the Responses API turn it stands for holds
# assistant message items sent with their `id` (msg_…): the ids, which link each to the
# reasoning item its reply returned before it (CTX004).
MESSAGE_ITEM_IDS = "message_item_ids"


def provider_compaction(messages: list[dict[str, Any]]) -> int | None:
    """Where the request carries a history the provider compacted (Anthropic's compaction
    block, a Responses API compaction item), if it does: what came before it is in the
    provider's summary, and the app may leave it out."""
    return next((index for index, message in enumerate(messages) if type(message) is dict and COMPACTION in message), None)


def last_assistant_before(messages: list[dict[str, Any]], end: int) -> int | None:
    """Index of the nearest assistant message before `end`: whose calls are open there."""
    return next((index for index in range(end - 1, -1, -1) if role_of(messages[index]) == "assistant"), None)


def last_user_index(messages: list[dict[str, Any]]) -> int:
    """Index of the request's last user message, or -1: the messages after it are the
    tool loop still going."""
    for index in range(len(messages) - 1, -1, -1):
        if role_of(messages[index]) == "user":
            return index
    return -1


def last_user_turn_index(messages: list[dict[str, Any]]) -> int:
    """Index of the request's last user message that opens a user turn, or -1: user messages
    next to tool results (beside them in one body message, or right after them) are part of
    the results' turn where the API merges consecutive user messages, as Anthropic's does."""
    index = len(messages) - 1
    while index >= 0:
        if role_of(messages[index]) != "user":
            index -= 1
            continue
        start = index
        while start > 0 and role_of(messages[start - 1]) in ("user", "tool"):
            start -= 1
        if all(role_of(message) == "user" for message in messages[start:index + 1]):
            return index
        index = start - 1
    return -1


def assistant_calls(messages: list[dict[str, Any]], start: int = 0) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(message index, position in its tool_calls, call) for every call in the history from start."""
    for index in range(start, len(messages)):
        message = messages[index]
        if role_of(message) == "assistant":
            for position, call in enumerate(tool_calls_of(message)):
                yield index, position, call


# How a tool result says the call was refused: a framework that validates arguments answers
# a broken call with the validation error and asks for a retry (pydantic-ai's "1 validation
# error for … Fix the errors and try again", LangChain's "Error: … Please fix your mistakes")
REFUSAL = re.compile(r"\b(?:errors?|invalid|validation|exception|failed)\b", re.IGNORECASE)
REFUSAL_READ = 500  # characters of a result read for it


def resume_at_last_calls(messages: list[dict], shared: int) -> int:
    """Where judging resumes: after the messages the previous request sent too, or at the
    last assistant turn among them when the previous request left some of its calls
    unanswered (a call's verdict reads its result, which may come in this request)."""
    index = shared
    while index > 0 and role_of(messages[index - 1]) == "tool":
        index -= 1
    if index > 0 and role_of(messages[index - 1]) == "assistant":
        answered = {message.get("tool_call_id") for message in messages[index:shared]}
        if any(call.get("id") not in answered for call in tool_calls_of(messages[index - 1])):
            return index - 1
    return shared


def call_stands(messages: list[dict], index: int, call_id: Any) -> bool:
    """Whether call `call_id` of assistant message `index` stands in the history as made:
    the app did not refuse it (its result reports no error), and it is not still open at
    the end of the request (then its verdict waits for the next, which carries the result)."""
    return not _awaits_result(messages, index, call_id) and not _answered_with_error(messages, index, call_id)


def _awaits_result(messages: list[dict], index: int, call_id: Any) -> bool:
    """Whether call `call_id` of assistant message `index` is still open at the end of the
    request: nothing but tool messages follows it, none of them its result."""
    following = messages[index + 1:]
    return all(role_of(message) == "tool" for message in following) and not any(
        message.get("tool_call_id") == call_id for message in following)


def _answered_with_error(messages: list[dict], index: int, call_id: Any) -> bool:
    """Whether the tool message answering call `call_id` of assistant message `index` (before
    the next assistant message) reports an error: flagged `is_error`, or says so."""
    for message in messages[index + 1:]:
        role = role_of(message)
        if role == "assistant":
            return False
        if role == "tool" and message.get("tool_call_id") == call_id:
            return message.get("is_error") is True or REFUSAL.search(text_of(message.get("content"))[:REFUSAL_READ]) is not None
    return False


def hand_back_call(name: Any) -> bool:
    """Whether a tool call's name is a multi-agent framework's hand-back to its supervisor
    (`transfer_back_to_…`, as LangGraph's supervisor writes and answers it: no agent's tools
    declare it)."""
    return isinstance(name, str) and name.startswith("transfer_back_to_")


def call_function(call: dict[str, Any]) -> tuple[str | None, Any]:
    """(name, arguments) of one tool call; either may be None."""
    function = call.get("function")
    if not isinstance(function, dict):
        return None, None
    name = function.get("name")
    return (name if isinstance(name, str) else None), function.get("arguments")


def reasoning_of(message: dict[str, Any]) -> tuple[str | None, Any]:
    """(field, value) of the first reasoning field the message carries, or (None, None).

    A present key counts even when empty: providers check that the field is passed back,
    and an empty string is what a turn that did not think carries.
    """
    for name in REASONING_FIELDS:
        if name in message and message[name] is not None:
            return name, message[name]
    inline = inline_thinking(message)
    if inline is not None:
        return INLINE_THINKING, inline
    signatures = call_signatures(message)
    return (THOUGHT_SIGNATURES, signatures) if signatures else (None, None)


def call_signatures(message: dict[str, Any]) -> list[Any] | None:
    """The thought signatures a message's tool calls carry (Gemini's OpenAI-compatible API),
    in call order, or None when none does."""
    signatures = []
    for call in tool_calls_of(message):
        extra = call.get("extra_content")
        google = extra.get("google") if isinstance(extra, dict) else None
        if isinstance(google, dict) and google.get("thought_signature") is not None:
            signatures.append(google["thought_signature"])
    return signatures or None


def reasoning_value(message: dict[str, Any], field: str) -> Any:
    """The value a message carries under a reasoning field (REASONING_FIELDS) or as the
    thought signatures of its tool calls (THOUGHT_SIGNATURES)."""
    return call_signatures(message) if field == THOUGHT_SIGNATURES else message.get(field)


def inline_thinking(message: dict[str, Any]) -> str | None:
    """The <think>…</think> block a message's content opens with, if it does."""
    text = text_of(message.get("content"))
    if "<think>" not in text:
        return None
    found = _THINK_BLOCK.match(text.lstrip())
    return found.group() if found else None


def returned_reasoning(message: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(field, value) of each reasoning a message carries that is not empty."""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if value not in (None, "", []):
            yield name, value
    inline = inline_thinking(message)
    if inline is not None:
        yield INLINE_THINKING, inline
    signatures = call_signatures(message)
    if signatures:
        yield THOUGHT_SIGNATURES, signatures


# What a reasoning item carries that the provider checks when it comes back: a signature
# over its text (Claude's thinking blocks), the encrypted reasoning itself (a redacted
# block, OpenRouter's reasoning.encrypted, a Responses reasoning item's encrypted_content).
SEALED_DETAIL_KEYS = ("signature", "data", "encrypted_content")


def sealed(field: str, value: Any) -> bool:
    """Whether a reasoning value is one the provider verifies (SEALED_DETAIL_KEYS, or
    Gemini's thought signatures): a readable copy beside it does not stand in for it."""
    if field == THOUGHT_SIGNATURES:
        return True
    return isinstance(value, list) and any(map(_sealed_item, value))


def _sealed_item(item: Any) -> bool:
    return isinstance(item, dict) and any(item.get(key) for key in SEALED_DETAIL_KEYS)


def merged_details(details: list[Any]) -> list[Any]:
    """reasoning_details with the fragments a stream sends of one item (same `index`, in a
    row) joined into that item, as the reply that was not streamed carries it: texts
    concatenated, a signature or data taken where one is given."""
    merged: list[Any] = []
    for item in details:
        last = merged[-1] if merged else None
        if (isinstance(item, dict) and isinstance(last, dict) and item.get("index") is not None
                and item.get("index") == last.get("index") and item.get("type") == last.get("type")):
            for name, value in item.items():
                if isinstance(value, str) and isinstance(last.get(name), str) and name in ("text", "summary"):
                    last[name] += value
                elif value not in (None, "") or name not in last:
                    last[name] = value
        else:
            merged.append(dict(item) if isinstance(item, dict) else item)
    return merged


def load_bearing_details(details: list[Any]) -> list[Any]:
    """The reasoning_details items that must come back unchanged, less their `index` (their
    place in the list) and their members set to null (pydantic-ai sends `"id": null` back
    where the reply had no id). When some items are sealed (SEALED_DETAIL_KEYS), those are
    what the provider reads back: an unsigned text or summary beside them is the readable
    copy, and a client may leave it out (OpenRouter returns Gemini's reasoning as a text
    item plus an encrypted one; the encrypted one is what Gemini needs). A Responses API
    reasoning item that carries its encrypted_content is read from it, not looked up by its
    `id`, which SDKs leave out under `store: false` (Azure refuses it there)."""
    items = [{name: value for name, value in item.items() if name != "index" and value is not None
              and not (name == "id" and item.get("type") == "reasoning" and item.get("encrypted_content"))}
             if isinstance(item, dict) else item for item in merged_details(details)]
    return [item for item in items if _sealed_item(item)] or items


def as_sent(value: Any) -> str:
    """A setting's value as the request's JSON spells it (`false`, `\"disabled\"`)."""
    return orjson.dumps(value).decode()


def canonical_json(value: Any) -> str:
    """A value as text that does not depend on the order its objects' keys were written in:
    a string is itself, anything else its JSON with keys sorted."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # not JSON data (a key that is not a string, nested past orjson's depth)
        return repr(value)


def key_text(value: Any) -> str:
    """A value as a finding's key spells it: `repr` of a scalar, the canonical JSON of an
    object or array (whose key order is the writer's, not part of what it says)."""
    return canonical_json(value) if isinstance(value, (dict, list)) else repr(value)


def reasoning_text(value: Any) -> str:
    """Comparable text of a reasoning value (reasoning_details is a list of parts, compared
    by the parts that must come back: load_bearing_details)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and any(isinstance(item, dict) and "type" in item for item in value):
        value = load_bearing_details(value)
    return canonical_json(value)


class ReasoningSeen(tuple):
    """(digest, length) of a reasoning value: what is kept of it to tell whether it came
    back unchanged, without keeping the text."""

    __slots__ = ()

    @classmethod
    def of(cls, value: Any) -> "ReasoningSeen":
        text = reasoning_text(value)
        return cls((short_hash(text), len(text)))

    @property
    def length(self) -> int:
        return self[1]


def _digest(parts: tuple[Any, ...]) -> "hashlib.blake2b":
    digest = hashlib.blake2b(digest_size=8)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass") if isinstance(part, str) else orjson.dumps(part, option=orjson.OPT_SORT_KEYS))
        digest.update(b"\x00")
    return digest


def short_hash(*parts: Any) -> str:
    return _digest(parts).hexdigest()


def hash64(*parts: Any) -> int:
    """short_hash as a signed 64-bit int: 8 bytes in an array, not a 16-character string."""
    return int.from_bytes(_digest(parts).digest(), "little", signed=True)


def comparable_text(text: str) -> str:
    """Text with inline <think> blocks and whitespace differences removed, for identity."""
    if "<think>" in text:
        text = _THINK_BLOCK.sub("", text)
    return " ".join(text.split())  # split() breaks at exactly what \s matches, and faster


_IDENTITIES = IdentityCache()


# A message that only greets: it says nothing a conversation must keep (CTX008)
_GREETING = re.compile(
    r"(?:hi|hello|hey|hiya|howdy|greetings|yo|good (?:morning|afternoon|evening|day)|bonjour|salut|hola|hallo|ciao"
    r"|ol[aá]|oi|привет|здравствуйте|你好|您好|嗨|哈[喽啰]|こんにちは|こんばんは|おはよう(?:ございます)?|안녕(?:하세요)?)"
    r"(?: (?:there|all|everyone|again))?")
_NOT_A_WORD = re.compile(r"[^\w\s]+")


def greeting_only(text: str) -> bool:
    """Whether a message's text is a greeting and nothing else ("Hi!", "hello there", "你好")."""
    folded = " ".join(_NOT_A_WORD.sub(" ", text[:64].lower()).split())
    return _GREETING.fullmatch(folded) is not None


# A message whose first words say it is a summary of the conversation so far: what an app
# puts in place of the history it cut, in its own words (CTX003). A known agent's line is
# profile data (profiles.client_summary); this is the wording anyone's summary opens with.
_SUMMARY_ANNOUNCEMENT = re.compile(
    r"\W*(?:(?:here is|here's|below is|this is|the following is) )?(?:an? |the )?(?:brief |short |concise |running )?"
    r"(?:summary|recap) of (?:the |our |this |your )?(?:previous |prior |earlier |past )?"
    r"(?:conversation|chat|discussion|dialog(?:ue)?|session|exchange|messages)\b"
    r"|\W*(?:previous |prior |earlier )?(?:conversation|chat|discussion|session) (?:summary|recap)\b"
    r"|\W*(?:以下是|这是|下面是)?(?:之前|此前|先前|前面|上文|历史)?的?(?:对话|会话|聊天)(?:内容|记录)?的?(?:摘要|总结|概要)[:：]")
SUMMARY_WORDS_AT_LEAST = 12  # a summary says something: "Summary of our chat, please?" asks for one


def announces_summary(message: dict[str, Any]) -> bool:
    """Whether a message opens by saying it summarizes the conversation so far, and goes on
    to (at least SUMMARY_WORDS_AT_LEAST words, a CJK character counting as one)."""
    text = text_of(message.get("content"))
    return _announces(text[:300]) and _says_enough(text)


def _announces(head: str) -> bool:
    return _SUMMARY_ANNOUNCEMENT.match(" ".join(head.lower().split())) is not None


def _says_enough(text: str) -> bool:
    return len(text.split()) + len(CJK_CHARACTER.findall(text)) >= SUMMARY_WORDS_AT_LEAST


# A block of a prompt that holds the conversation's summary in tags of its own (memory
# layers put `<conversation_summary>…</conversation_summary>` into the system prompt)
_SUMMARY_BLOCK = re.compile(r"<((?:[\w.-]*_)?summary)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
PROMPT_READ_FOR_A_SUMMARY = 20000  # characters: a running summary sits in the prompt's text, not past a long document


def carries_summary(text: str) -> bool:
    """Whether a prompt holds a summary of the conversation so far in a section of its own
    (summary_section_at). Apps that keep a running summary put it into the system prompt,
    in place of the history it stands for."""
    return summary_section_at(text) is not None


@lru_cache(maxsize=1024)
def summary_section_at(text: str) -> int | None:
    """Where a prompt's summary of the conversation so far begins, if it holds one: a line
    that opens one (announces_summary's wording, "Summary of the conversation so far: …")
    or a block in summary tags, either saying enough to be one."""
    text = text[:PROMPT_READ_FOR_A_SUMMARY]
    block = next((block for block in _SUMMARY_BLOCK.finditer(text) if _says_enough(block.group(2))), None)
    start = 0
    for line in text.splitlines(keepends=True):
        if block is not None and start >= block.start():
            break
        if _announces(line[:300]) and _says_enough(text[start:]):
            return start
        start += len(line)
    return None if block is None else block.start()


def message_identity(message: dict[str, Any]) -> tuple:
    """message_identity_of, once per message object (histories share their messages)."""
    known = _IDENTITIES.get(message)
    return known if known is not None else _IDENTITIES.put(message, message_identity_of(message))


def message_identity_of(message: dict[str, Any]) -> tuple:
    """What identifies a turn across requests, ignoring what apps legitimately reshape.

    Assistant turns are known by their tool_call ids (or their visible text), never by
    reasoning, so that a dropped or edited reasoning_content is reported, not mistaken for
    another conversation.
    """
    role = role_of(message) or "?"
    if role == "assistant":
        ids = tool_call_ids(message)
        if ids:
            return ("assistant", "calls", tuple(ids))
        return ("assistant", short_hash(comparable_text(text_of(message.get("content")))))
    if role == "tool":
        return ("tool", str(message.get("tool_call_id")), short_hash(text_of(message.get("content"))))
    return (role, short_hash(text_of(message.get("content")) or message.get("content")))


def dotted(obj: Any, path: str) -> Any:
    """The value at a dotted path of member names (`metadata.session_id`), or None."""
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


_JSON_TYPES = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "an array"),
               (dict, "an object"), (type(None), "null"))


def json_type(value: Any) -> str:
    """How JSON names the type of a parsed value: "an array", "null"…"""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def parsed_arguments(arguments: Any) -> tuple[dict | None, str | None]:
    """(the arguments as an object, or None; what is wrong with them, or None)."""
    if isinstance(arguments, dict):
        return arguments, None  # several SDKs send an object; it is readable
    if not isinstance(arguments, str):
        return None, f"arguments is {json_type(arguments)}, not a JSON string"
    if not arguments.strip():
        return {}, None  # how several models call a tool without parameters; CTX013 checks required ones
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as error:
        return None, f"arguments is not complete JSON ({error.msg} at column {error.colno})"
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return None, "arguments is encoded twice: a JSON string that holds the JSON object, not the object"
    if not isinstance(value, dict):
        return None, f"arguments is {json_type(value)} in JSON, not an object"
    return value, None


def call_made(call: dict[str, Any]) -> tuple[str | None, str]:
    """What a tool call does: its function, and its arguments as canonical JSON (read, so
    arguments re-serialized with other spacing or key order make the same call)."""
    name, arguments = call_function(call)
    value, problem = parsed_arguments(arguments)
    if value is None or problem:
        return name, key_text(arguments)
    try:
        return name, orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson's encode error: an integer past 64 bits in an object an SDK sent
        return name, repr(value)


class Quoted(str):
    """Text quoted from a log. Renderers escape it, and --redact replaces it by a hash."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return Quoted, (str(self),)


def excerpt(text: str, limit: int = 80) -> Quoted:
    """A short single-line excerpt of log text, for evidence."""
    flat = " ".join(text[: limit * 4].split())  # fold only what can be shown
    return Quoted(flat if len(flat) <= limit else flat[: limit - 1] + "…")
