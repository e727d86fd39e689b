"""Simulated agent traffic: interleaved sessions of several providers (chat-completions,
Anthropic Messages, OpenAI Responses, Gemini generateContent, Ollama's /api/chat;
DeepSeek, GLM, Kimi, MiniMax, Doubao, Qwen, OpenAI, Claude, Gemini), each
either legal throughout or carrying one defect of the mission planted at a known turn,
with the findings that defect must produce where it starts.

Legal variations that only look suspicious are mixed in at random: a clock line refreshed
in the system prompt; parallel tool results answered out of order; history trimmed from
the middle that keeps the first system and user messages, or folded into a summary user
message (LangChain's summarization middleware); reasoning dropped where the provider
ignores it (text turns; tool-call turns of models no profile asks it back from; Claude's
closed tool loops, and GLM's); a request retried after a 429, or sent again for another reply
(regenerate) and the conversation going on from that one; thinking disabled where the model
allows it; title calls and sub-agents under the main session's key; sessions with and
without a key, under the several names a key goes by; replies logged as SSE streams, or
on lines of their own a little after their requests (tied by request_id); calls logged as
LiteLLM's logging payload (settings under model_parameters, failures as error_str); a user
speaking right after a tool run, before the model saw its results, where the API takes that
order; `max_tokens` and a temperature sent to a model that takes them; an MCP server's 130
tools connected mid-session to a model whose API takes them (a part of them, to OpenAI's); a
Claude app's own two tools marked strict; a browser tool's screenshots, scaled down, kept
step after step for Claude; Kimi K2.6 sent `tool_choice: "auto"` while it thinks; an MCP
filesystem tool whose array says what it holds.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from dataclasses import dataclass, field

TOOLS = [
    {"type": "function", "function": {"name": "search_flights", "description": "Search flights",
                                      "parameters": {"type": "object", "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
                                                     "required": ["origin", "destination"]}}},
    {"type": "function", "function": {"name": "weather", "description": "Weather for a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]
# a tool an MCP server adds under its own dotted name: the Gemini API takes it, OpenAI's refuses it
MCP_TOOL = {"type": "function", "function": {"name": "maps.find_place", "description": "Find a place on the map",
                                             "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
# a CRM's MCP server: more tools than OpenAI's API takes in one request beside the app's own
CRM_SERVER = [{"type": "function", "function": {"name": f"crm_action_{number:03d}", "description": "A CRM action",
                                                 "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}}
              for number in range(130)]
# an MCP filesystem tool whose array says what it holds (legal), and the same as its server declares it: OpenAI's API refuses that
READ_FILES = {"type": "function", "function": {"name": "read_multiple_files", "description": "Read several files",
                                               "parameters": {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}, "required": ["paths"]}}}
LOOSE_READ_FILES = {"type": "function", "function": {**READ_FILES["function"], "parameters": {"type": "object", "properties": {"paths": {"type": "array"}}, "required": ["paths"]}}}
CITIES = ["Rome", "Paris", "Lisbon", "Oslo", "Kyoto", "Lima", "Cairo", "Perth"]
WORDS = "the flight leaves early and the hotel near the station has rooms under the budget for two nights".split()
CJK = "我们明天早上出发预算五百欧元请不要订红眼航班酒店靠近车站"


@dataclass(frozen=True)
class Style:
    """How one provider's model thinks and what an app must send back of it."""

    model: str
    # where the reply carries its reasoning: a chat field, "inline" (a <think> block opening
    # the content), "thinking" (Anthropic thinking blocks), or None
    reasoning: str | None
    passback_on_tool_turns: bool  # the profile requires that reasoning back on (open) tool-call turns
    settings: dict = field(default_factory=dict)  # what every request sets besides messages and tools (thinking…)
    api: str = "chat"  # or "anthropic": the chat-shaped history is written as Messages API bodies
    prompt_role: str = "system"  # OpenAI's newer models take their system prompt as a developer message
    short_call_ids: bool = False  # Mistral's API takes a call id of 9 letters or digits alone
    system_notes: bool = False  # the model takes a system message right after a user message, before its own turn


STYLES = [
    Style("deepseek-reasoner", "reasoning_content", True),
    Style("glm-4.6", "reasoning_content", True, {"thinking": {"type": "enabled"}}),
    Style("glm-4.6", None, False, {"thinking": {"type": "disabled"}}),  # GLM-4.6 may have thinking off
    Style("glm-5.1", "reasoning_content", True, {"reasoning_effort": "high"}),  # an effort GLM-5 takes
    Style("kimi-k2-thinking", "reasoning_content", True),
    Style("kimi-k2.6", "reasoning_content", True),  # thinks unless told not to; sends tool_choice auto
    Style("MiniMax-M2", "inline", True),
    # thinking models whose reasoning no profile asks back: dropping it even on tool-call turns is legal
    Style("doubao-seed-1-6-250615", "reasoning_content", False, {"thinking": {"type": "enabled"}}),
    Style("qwen3-235b-a22b", "reasoning_content", False, {"enable_thinking": True}),
    # settings the reasoning models refuse, and tool settings OpenAI's API takes only beside tools
    Style("gpt-4o", None, False, {"max_tokens": 1024, "temperature": 0.3, "tool_choice": "auto", "parallel_tool_calls": True, "stop": ["\nObservation:"]}),
    Style("mistral-large-latest", None, False, short_call_ids=True),
    Style("gpt-5", None, False, {"reasoning_effort": "low"}, prompt_role="developer"),
    Style("claude-sonnet-4-5", "thinking", True, {"thinking": {"type": "enabled", "budget_tokens": 2048}}, api="anthropic"),
    Style("claude-sonnet-4-6", "thinking", True, {"thinking": {"type": "adaptive"}}, api="anthropic"),  # takes no prefill
    # takes system messages in the conversation: the app puts a note right after the user's message
    Style("claude-opus-4-8", "thinking", True, {"thinking": {"type": "adaptive"}}, api="anthropic", system_notes=True),
    # reasoning items before the function calls they led to, sent back with the calls' item ids
    Style("gpt-5", "reasoning_item", True, {"store": False, "include": ["reasoning.encrypted_content"]}, api="responses"),
    # the same, stored by the provider: items go back by their ids, each message right after its reasoning item
    Style("gpt-5.2", "reasoning_item", True, {"reasoning": {"effort": "medium"}}, api="responses"),
    # thought signatures on the first function call of a turn; calls without ids, paired by name
    Style("gemini-3-pro-preview", "signature", True, api="gemini"),
    # Ollama's /api/chat: calls without ids and with object arguments, results naming their tool
    Style("qwen3:8b", "reasoning_content", False, {"think": True, "options": {"temperature": 0.2}}, api="ollama"),
]
GLM5 = Style("glm-5.1", "reasoning_content", True)
GPT5_MINI = Style("gpt-5-mini", None, False, {"reasoning_effort": "low"}, prompt_role="developer")
# what a defect of rejected settings sends on every request (reported once, at the first), to which model
REJECTED = {"thinking_disabled": {"thinking": {"type": "disabled"}}, "unaccepted_effort": {"reasoning_effort": "medium"},
            "refused_setting": {"max_tokens": 1024}, "output_limit_over": {"max_tokens": 32000},  # (a client's default for another model)
            "stop_sequences_kept": {"stop": ["\nObservation:"]}}  # (an agent's, written for gpt-4o)
GPT4O = next(style for style in STYLES if style.model == "gpt-4o")
KIMI26 = next(style for style in STYLES if style.model == "kimi-k2.6")
REJECTED_BY = {"refused_setting": GPT5_MINI, "output_limit_over": GPT4O, "stop_sequences_kept": GPT5_MINI}
# the API refuses these requests outright: the app logs the error and gives up
REFUSED = {"refused_setting": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
           "lost_user_message": "This model does not support assistant message prefill. The conversation must end with a user message.",
           "user_after_tool": "Unexpected role 'user' after role 'tool'",
           "tools_left_out": "Requests which include `tool_use` or `tool_result` blocks must define tools.",
           "message_id_dropped": "Item 'rs_…' of type 'reasoning' was provided without its required following item.",
           "message_reasoning_dropped": "Item 'msg_…' of type 'message' was provided without its required preceding item of type 'reasoning'.",
           "system_before_user": "messages.N: role 'system' must precede an 'assistant' message or end the array",
           "reply_items_twice": "Duplicate item found with id rs_…. Remove duplicate items from your input and try again.",
           "dotted_tool_name": "Invalid 'tools[2].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
           "tools_declared_twice": "tools: Tool names must be unique.",
           "tool_choice_without_tools": "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
           "crm_server_connected": "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 132 instead.",
           "every_tool_strict": "Too many strict tools (132). The maximum number of strict tools supported is 20. Try reducing the number of tools marked as strict.",
           "full_page_capture": "messages.N.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
           "output_limit_over": "max_tokens is too large: 32000. This model supports at most 16384 completion tokens, whereas you provided 32000.",
           "forced_tool_kimi": "tool_choice specified is incompatible with thinking enabled",
           "loose_array_schema": "Invalid schema for function 'read_multiple_files': In context=('properties', 'paths'), array schema missing items.",
           "stop_sequences_kept": "Unsupported parameter: 'stop' is not supported with this model.",
           "split_responses": "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."}
# refused once a request of the conversation marks a fifth block for the prompt cache
CACHE_MARKERS_REFUSED = "A maximum of 4 blocks with cache_control may be provided. Found 5."
# refused once a request carries a 21st image while one of them is larger than 2000 pixels a side
MANY_IMAGES_REFUSED = "messages.N.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
# what a browser tool's result carries for Claude: four screens, as taken (Retina) or scaled down
SCREENS, SCALED_SCREENS = [(2560, 1600)] * 4, [(1568, 980)] * 4

GEMINI_ARRAY_REFUSED = "* GenerateContentRequest.tools[0].function_declarations[2].parameters.properties[paths].items: missing field."
# where a Gemini app's requests go: the Gemini API's own endpoint takes a turn's responses spread
# over several contents, Vertex AI refuses them
STUDIO_URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:generateContent"
VERTEX_URL = "https://us-central1-aiplatform.googleapis.com/v1/projects/trips/locations/us-central1/publishers/google/models/gemini-3-pro-preview:generateContent"
GEMINI_CALL_TURN = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
SUMMARY_OPENING = "Here is a summary of the conversation to date:\n\n"
CLEARED = '{"result": "[cleared to save context]"}'
SCRIPTED_OPENING = "Plan a trip to Rome, budget 500 EUR, two nights near Termini station."
# made when a reply is stored: those made on a tool-call turn, and the others
CALL_TURN_DEFECTS = ("drop_tool_turn", "drop_reasoning", "tool_result_as_user", "unanswered_call", "edited_reasoning", "arguments_as_object",
                     "duplicate_result", "user_after_tool", "full_page_capture", "split_responses")
# made when a text reply of a stored Responses conversation is stored
MESSAGE_ITEM_DEFECTS = ("message_id_dropped", "message_reasoning_dropped", "reply_items_twice")
STORED_DEFECTS = CALL_TURN_DEFECTS + MESSAGE_ITEM_DEFECTS + ("two_users", "markup_residue", "truncated_reply_reused", "text_only_history",
                                                            "system_before_user")
# the app marks each user message for the prompt cache and never takes a marker off: refused once a fifth appears
DEFECTS = STORED_DEFECTS + ("thinking_disabled", "unaccepted_effort", "refused_setting", "trim_cut", "overflow", "sliding_window", "lost_user_message",
                            "tools_left_out", "cache_markers_kept", "dotted_tool_name", "tools_declared_twice",
                            "tool_choice_without_tools", "crm_server_connected", "every_tool_strict", "screenshots_kept", "output_limit_over",
                            "forced_tool_kimi", "loose_array_schema", "stop_sequences_kept")
MISTRAL = next(style for style in STYLES if style.model.startswith("mistral"))
CLAUDE_NO_PREFILL = next(style for style in STYLES if style.model == "claude-sonnet-4-6")
STORED_RESPONSES = next(style for style in STYLES if style.model == "gpt-5.2")
SYSTEM_NOTES = next(style for style in STYLES if style.system_notes)


@dataclass
class Planted:
    """Where a session's defect shows first, and the findings it must produce there (or a
    notice: an info finding that legal traffic earns, a rate-limited request)."""

    session: str
    defect: str
    line: int = 0
    codes: tuple[str, ...] = ()


@dataclass
class Conversation:
    rng: random.Random
    id: str
    style: Style
    keyed: bool  # an envelope with session_id and the logged response; else a bare body
    defect: str | None
    turns: int
    defect_turn: int
    clock: bool  # the system prompt carries a clock line refreshed every request
    trim_middle: bool  # long histories are trimmed from the middle, first system and user kept
    summarize: bool = False  # long histories are folded into a summary user message (LangChain's middleware)
    streamed: bool = False  # replies are logged as the SSE stream that carried them
    key_name: str = "session_id"  # the envelope field that names the session
    # the app sends a system prompt; without one the history still keeps its place (index
    # 0), unsent, so that index 1 is always the first user message
    prompted: bool = True
    # the results of tool calls made before the user's newest message are cleared to a
    # placeholder in the stored history (a client-side compaction, as coding agents do)
    clears_results: bool = False
    # the conversation opens as a scripted test run does: the same system prompt and first
    # message as every other scripted conversation of the log
    scripted: bool = False
    history: list = field(default_factory=list)
    turn: int = 0
    calls: int = 0
    window_start: int | None = None  # after a keep-last-N cut: where the sent tail starts
    keep_last: int | None = None  # a sliding keep-last-N window, from the defect turn on
    cut_inside_tool_exchange: bool = False  # the window has opened with tool results (CTX001, once)
    window_lost: set = field(default_factory=set)  # which of the first system and user message it has cut
    sent: int = 0  # how much of the history the last request held
    call_names: dict = field(default_factory=dict)  # call id -> function: Gemini answers a call by its name
    titled: bool = False  # a title call was made under the session's key
    # the logger writes each request line before sending it and the reply on a line of its own
    # when it comes (a line or two later, other sessions' lines between), tied by request_id
    reply_apart: bool = False
    # the calls are logged as LiteLLM's logging payload: the messages and the reply at the top
    # level, every other request setting (tools, thinking…) under model_parameters
    litellm: bool = False
    # the user speaks right after a tool run, before the model saw its results (a cancelled
    # command): legal where the API takes that order (not Mistral's)
    interrupts: bool = False
    # a Gemini app's driver sends each tool result as a content of its own (legal on the Gemini
    # API's own endpoint), and the endpoint its requests go to, as the log names it (None: not named)
    splits_results: bool = False
    url: str | None = None

    def __post_init__(self) -> None:
        opening = SCRIPTED_OPENING if self.scripted else f"Plan a trip to {self.rng.choice(CITIES)}, budget 500 EUR. {self.text(8)}"
        self.history = [{"role": self.style.prompt_role, "content": self.system_prompt()}, {"role": "user", "content": opening}]

    def text(self, words: int) -> str:
        if self.rng.random() < 0.25:
            return "".join(self.rng.choice(CJK) for _ in range(words * 2))
        return " ".join(self.rng.choice(WORDS) for _ in range(words))

    def system_prompt(self) -> str:
        agent = "a travel agent" if self.scripted else f"the travel agent of {self.id}"
        prompt = f"You are {agent}. Never book red-eye flights.\nAnswer in the user's language."
        return prompt + (f"\nCurrent time: 2026-12-04T{8 + self.turn // 60:02d}:{self.turn % 60:02d}:00Z" if self.clock else "")

    @property
    def done(self) -> bool:
        return self.turn >= self.turns

    def sent_messages(self) -> list:
        if self.clears_results:
            last_user = max(i for i, m in enumerate(self.history) if m["role"] == "user")
            # (a result's screenshots cleared with it)
            self.history[:last_user] = [{**{k: v for k, v in m.items() if k != "images"}, "content": CLEARED} if m["role"] == "tool" else m
                                        for m in self.history[:last_user]]
        sent = self._window()
        return sent if self.prompted or not sent or sent[0] is not self.history[0] else sent[1:]

    def _window(self) -> list:
        if self.clock:
            self.history[0] = {"role": self.style.prompt_role, "content": self.system_prompt()}
        if self.keep_last is not None:
            return self.history[-self.keep_last:]
        if self.window_start is not None:  # keep-last-N: the first system and user message are gone
            return self.history[self.window_start:]
        if self.summarize and len(self.history) > 14:  # the state itself is rewritten: later requests carry the summary
            # it keeps the last six messages or more (what the last request ended with among them), never a
            # tool result without its call
            tail = max(i for i in range(2, len(self.history) - 5) if self.history[i]["role"] != "tool")
            restated = self.history[1]["content"].removeprefix(SUMMARY_OPENING)
            self.history[1:tail] = [{"role": "user", "content": f"{SUMMARY_OPENING}{restated} {self.text(6)}"}]
        if self.trim_middle and len(self.history) > 14:
            tail = next((i for i in range(len(self.history) - 8, len(self.history)) if self.history[i]["role"] == "assistant"), None)
            if tail is not None:
                return self.history[:2] + self.history[tail:]
        return list(self.history)

    def request(self) -> dict:
        mcp = self.style.api == "gemini" or (self.defect == "dotted_tool_name" and self.turn >= self.defect_turn)
        tools = TOOLS + [MCP_TOOL] if mcp else TOOLS
        # a tool server reconnected: its tools appended again (OpenAI's API takes that; the Messages API does not)
        if (self.style.model == "gpt-4o" and int(self.id[1:]) % 3 == 0) or (self.defect == "tools_declared_twice" and self.turn >= self.defect_turn):
            tools = tools + TOOLS
        # the CRM's MCP server connected mid-session: past what OpenAI's API takes (a defect there, or where
        # the app marks every tool strict for Claude); legal for the other APIs, and for OpenAI's with a part of it
        flooded = self.defect in ("crm_server_connected", "every_tool_strict") and self.turn >= self.defect_turn
        if flooded or (int(self.id[1:]) % 5 == 2 and self.turn >= 2):
            tools = tools + (CRM_SERVER if flooded or not self.style.model.startswith("gpt-") else CRM_SERVER[:120])
        if self.defect == "loose_array_schema" and self.turn >= self.defect_turn:  # the filesystem server connected mid-session
            tools = tools + [LOOSE_READ_FILES]
        elif int(self.id[1:]) % 7 == 3 and self.style.api == "chat":
            tools = tools + [READ_FILES]
        if self.defect == "every_tool_strict" and self.turn >= self.defect_turn:
            tools = [strict(tool) for tool in tools]
        elif self.style.api == "anthropic" and int(self.id[1:]) % 5 == 3:  # legal: its own two tools strict
            tools = [strict(tool) for tool in tools[:2]] + tools[2:]
        body = {"model": self.style.model, "messages": self.sent_messages(), "tools": tools}
        body.update(self.style.settings)
        body.update(REJECTED.get(self.defect, {}))
        if self.style.model == "kimi-k2.6":  # a step that must call the search forces it, while the model thinks by default
            forced = self.defect == "forced_tool_kimi" and self.turn == self.defect_turn
            body["tool_choice"] = {"type": "function", "function": {"name": "search_flights"}} if forced else "auto"
        return body

    def reply(self, force_calls: bool | None, least_calls: int = 1) -> dict:
        calls = force_calls if force_calls is not None else (self.turn < self.turns - 1 and self.rng.random() < 0.55)
        message: dict = {"role": "assistant", "content": "" if calls else self.text(self.rng.randint(6, 20))}
        if calls:
            message["tool_calls"] = []
            for _ in range(self.rng.randint(least_calls, 3)):
                self.calls += 1
                name = self.rng.choice(TOOLS)["function"]["name"]
                # never the same call twice in a session: three times running is a loop (CTX026), and
                # Gemini's calls, named by their arguments, renumber when history between two alike is cut
                city = CITIES[self.calls % len(CITIES)]
                arguments = {"city": city, "day": self.calls} if name == "weather" else {"origin": "Paris", "destination": city, "day": self.calls}
                call_id = f"{self.id}c{self.calls:04d}" if self.style.short_call_ids else f"call_{self.id}_{self.calls}"
                self.call_names[call_id] = name
                message["tool_calls"].append({"id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": json.dumps(arguments)}})
        thought = f"The user wants {self.text(5)}."
        if self.style.reasoning == "inline":
            message["content"] = f"<think>\n{thought}\n</think>\n\n{message['content']}"
        elif self.style.reasoning == "thinking":
            message["thinking"] = {"type": "thinking", "thinking": thought, "signature": f"sig-{self.id}-{self.turn}"}
        elif self.style.reasoning == "signature":
            message["signature"] = f"CiQB{self.id}{self.turn}"
        elif self.style.reasoning == "reasoning_item":
            message["reasoning_item"] = {"id": f"rs_{self.id}_{self.turn}", "type": "reasoning", "summary": []}
            if self.style.settings.get("store") is False:  # nothing kept: the item comes back with what it carried
                message["reasoning_item"]["encrypted_content"] = f"gAAAA-{self.id}-{self.turn}"
        elif self.style.reasoning is not None:
            message[self.style.reasoning] = thought
        return message

    def stored(self, reply: dict, planted: str | None) -> list:
        """What the app appends to its history after this reply (and its tool results)."""
        kept = dict(reply)
        calls = reply.get("tool_calls") or []
        if self.style.reasoning not in (None, "inline") and (not calls or not self.style.passback_on_tool_turns) \
                and planted not in MESSAGE_ITEM_DEFECTS and self.rng.random() < 0.5:
            # legal: no provider here wants reasoning back on a text turn (a Responses message then goes without its id)
            kept.pop(self.style.reasoning)
        # (not where the user's next message will be lost: the loop it closed reads as open then, and
        # its thinking as owed, a second finding for the one defect)
        if (self.style.reasoning in ("thinking", "signature") or self.style.model.startswith("glm-")) and not calls \
                and self.defect != "lost_user_message" and self.rng.random() < 0.5:
            # legal: once the user speaks, closed tool loops may lose Claude's thinking, Gemini's
            # signatures, GLM's reasoning_content (its chat template shows it only after the last user message)
            # (copies: the requests already written hold these messages as they were sent)
            self.history[:] = [{k: v for k, v in m.items() if k != self.style.reasoning} for m in self.history]
        if planted == "drop_reasoning":
            if self.style.reasoning == "inline":
                kept["content"] = reply["content"].split("</think>", 1)[1].strip()
            else:
                kept.pop(self.style.reasoning)
        if planted == "message_id_dropped":  # the text stored as a plain message, its reasoning item kept
            kept["message_id_dropped"] = True
        if planted == "message_reasoning_dropped":  # the message item kept with its id, its reasoning item not
            kept["message_id"] = "msg_" + kept.pop("reasoning_item")["id"].removeprefix("rs_")
        if planted == "edited_reasoning":  # stored shortened
            if self.style.reasoning == "thinking":
                kept["thinking"] = {**reply["thinking"], "thinking": reply["thinking"]["thinking"][:-3]}
            else:
                kept[self.style.reasoning] = reply[self.style.reasoning][:-3]
        if planted == "arguments_as_object":
            kept["tool_calls"] = [{**call, "function": {**call["function"], "arguments": json.loads(call["function"]["arguments"])}} for call in calls]
        if planted == "markup_residue":  # the raw stream's end-of-turn token stored with the text
            kept["content"] = reply["content"] + "<|im_end|>"
        if planted == "text_only_history":  # the app keeps the turn's final text, not its tool calls and results
            turn_start = max(i for i, m in enumerate(self.history) if m["role"] == "user") + 1
            if turn_start < len(self.history) and self.history[turn_start]["role"] == "system":
                turn_start += 1  # the note that came with the user's message is part of it
            del self.history[turn_start:]
        added = [] if planted == "drop_tool_turn" else [kept, kept] if planted == "reply_items_twice" else [kept]
        results = [{"role": "tool", "tool_call_id": call["id"], "content": f'{{"result": "{self.text(6)}"}}'} for call in calls]
        if self.style.api == "anthropic" and (self.defect == "screenshots_kept" or int(self.id[1:]) % 5 == 4):
            # a browser tool's screens: the app keeps them all, as taken (refused once there are more than 20), or scaled down (legal)
            results = [{**result, "images": SCREENS if self.defect == "screenshots_kept" else SCALED_SCREENS} for result in results]
        if planted == "full_page_capture":  # a capture of the whole page, taller than the API takes
            results[0] = {**results[0], "images": [(1440, 9000)]}
        self.rng.shuffle(results)  # parallel results may come back in any order
        if planted == "tool_result_as_user":
            results = [{"role": "user", "content": result["content"]} for result in results[:1]]
        if planted == "unanswered_call":
            results = results[1:]
        if planted == "duplicate_result":
            results.append(dict(results[0]))
        added += results
        if calls and (planted == "user_after_tool" or (planted is None and self.interrupts and self.rng.random() < 0.3)):
            added.append({"role": "user", "content": "Cancel that. " + self.text(5)})
        if not calls:
            note = {"role": "system", "content": f"The user's budget left: {self.rng.randint(50, 500)} EUR."}
            if planted == "system_before_user":  # the note put before the user's message, right after the reply
                added.append(note)
            added.append({"role": "user", "content": self.text(self.rng.randint(4, 12))})
            if planted == "two_users":
                added.append({"role": "user", "content": "Also: " + self.text(5)})
            # legal: right after the user's message, the note ends this request and comes before the reply in the next
            if self.style.system_notes and planted is None and self.keep_last is None and self.window_start is None and self.rng.random() < 0.4:
                added.append(note)
        return added


class Simulator:
    """Writes interleaved sessions as log records and remembers where each defect shows."""

    def __init__(self, seed: int, sessions: int = 24, defect_rate: float = 0.6) -> None:
        self.rng = random.Random(seed)
        self.records: list[dict] = []
        self.planted: list[Planted] = []
        self.notices: list[Planted] = []
        self.conversations = [self._conversation(n, defect_rate) for n in range(sessions)]
        # which sessions log their replies apart, and when those come, from a stream of its own:
        # the traffic is the same as without them, line numbers aside
        self.apart = random.Random(seed ^ 0x5EED)
        for c in self.conversations:
            c.reply_apart = c.keyed and self.apart.random() < 0.25
            c.litellm = c.keyed and not c.reply_apart and c.style.api == "chat" and self.apart.random() < 0.25
        self.replies_due: list[tuple[Conversation, dict]] = []
        self.first_line: int | None = None
        self.open = list(self.conversations)
        self.retries = self.side_calls = self.regenerations = self.edits = 0

    def _conversation(self, number: int, defect_rate: float) -> Conversation:
        rng = self.rng
        defect = rng.choice(DEFECTS) if rng.random() < defect_rate else None
        style = REJECTED_BY.get(defect, GLM5) if defect in REJECTED else {"user_after_tool": MISTRAL, "lost_user_message": CLAUDE_NO_PREFILL}.get(
            defect) or rng.choice(STYLES)
        if defect == "drop_reasoning" and not style.passback_on_tool_turns:
            style = rng.choice([s for s in STYLES if s.passback_on_tool_turns])
        if defect == "edited_reasoning":  # judged where the profile asks the reasoning back, compared field to field
            style = rng.choice([s for s in STYLES if s.passback_on_tool_turns and s.reasoning in ("reasoning_content", "thinking")])
        if defect in ("tools_left_out", "cache_markers_kept", "tools_declared_twice", "every_tool_strict", "screenshots_kept",
                      "full_page_capture"):  # what the Messages API refuses
            style = rng.choice([s for s in STYLES if s.api == "anthropic"])
        if defect in MESSAGE_ITEM_DEFECTS:  # the Responses API pairs items by their ids where it stores them
            style = STORED_RESPONSES
        if defect == "system_before_user":  # the Messages API places system messages in the conversation
            style = SYSTEM_NOTES
        if defect == "forced_tool_kimi":
            style = KIMI26
        if defect == "tool_choice_without_tools":  # the agent's settings for OpenAI's API, tools taken away
            style = next(s for s in STYLES if "tool_choice" in s.settings)
        if defect in ("dotted_tool_name", "crm_server_connected", "loose_array_schema"):  # the MCP server connected mid-session, to an OpenAI model
            style = rng.choice([s for s in STYLES if s.api == "chat" and s.model.startswith("gpt-")])
        if defect == "loose_array_schema" and number % 3 == 1:  # or to Gemini, whose declaration parameters refuse it too
            style = next(s for s in STYLES if s.api == "gemini")
        if defect == "split_responses":  # a Gemini app whose requests move to Vertex AI
            style = next(s for s in STYLES if s.api == "gemini")
        if defect in ("arguments_as_object", "markup_residue"):  # chat-completions spellings
            style = rng.choice([s for s in STYLES if s.api == "chat"])
        if defect == "duplicate_result" and style.api == "ollama":  # results pair by order there: a second is unpaired (CTX001)
            style = rng.choice([s for s in STYLES if s.api != "ollama"])
        # what only the logged reply shows (its reasoning, that it ran out of tokens, an error) needs one; so
        # does a Responses call sent without its reasoning item (a turn at effort none had none to send)
        # (and a turn of adaptive thinking may have had none to send)
        # (and only a logged URL names the host that refuses a Gemini turn's responses spread over contents)
        keyed = defect in ("overflow", "edited_reasoning", "truncated_reply_reused", "message_reasoning_dropped", "split_responses") or rng.random() < 0.7 or (
            defect in ("drop_reasoning", "loose_array_schema") and (style.api in ("responses", "gemini")  # a bare Gemini body names no model
                                            or style.settings.get("thinking", {}).get("type") == "adaptive"))
        turns = rng.randint(3, 12)
        shortening = rng.choice(("trim_middle", "summarize", None, None)) if defect not in ("trim_cut", "sliding_window", "text_only_history") else None
        prompted = rng.random() < 0.8
        defect_turn = rng.randint(2, turns)
        clock = prompted and rng.random() < 0.3
        # without a key, openings sent alike by many conversations tie nothing (a known limit)
        scripted = keyed and rng.random() < 0.15
        # Without a key, cleared results are found again by their call id only where the rest of the
        # history agrees: not across a trimmed or summarized history (a known limit). Gemini pairs
        # responses without ids by name and content: cleared to one placeholder, a response left
        # without its call (a planted defect) reads as a call's second answer.
        clears_results = rng.random() < 0.2 and style.api != "gemini" and (
            keyed or (shortening is None and defect not in ("trim_cut", "sliding_window")))
        streamed = rng.random() < 0.3
        key_name = rng.choice(("session_id", "session_id", "conversation_id", "thread_id", "metadata.session_id"))
        interrupts = style.api == "chat" and not style.short_call_ids and rng.random() < 0.25
        # a Gemini app that sends each tool result as a content of its own, to the Gemini API's own endpoint
        # (legal there; Vertex AI, where the defect's session moves, refuses it), or its results merged, to Vertex AI
        splits_results = style.api == "gemini" and (defect == "split_responses" or number % 4 == 2)
        url = (STUDIO_URL if splits_results else VERTEX_URL if number % 4 == 3 else None) if style.api == "gemini" else None
        return Conversation(rng, f"s{number:03d}", style, keyed, defect, turns, defect_turn, clock=clock, scripted=scripted,
                            prompted=prompted, clears_results=clears_results, trim_middle=shortening == "trim_middle",
                            summarize=shortening == "summarize", streamed=streamed, key_name=key_name, interrupts=interrupts,
                            splits_results=splits_results, url=url)

    def run(self) -> "Simulator":
        while self.open:
            conversation = self.rng.choice(self.open)
            self._step(conversation)
            if conversation.done:
                self.open.remove(conversation)
        self.records += [reply for _, reply in self.replies_due]
        return self

    def _step(self, c: Conversation) -> None:
        c.turn += 1
        defect_now = c.defect if c.turn == c.defect_turn else None
        if defect_now == "sliding_window":
            # The window keeps what ties it to the request before: that request's reply (its
            # key's conversation goes on from it) or, without a key or a logged reply, its
            # newest message; N of 6 or more keeps them as it slides (a turn adds at most 4
            # messages). A window that keeps neither shares nothing with the log so far: no
            # reader could tell it from a new conversation.
            c.keep_last = max(self.rng.randint(6, 10), len(c.history) - c.sent + (0 if c.keyed else 1))
            if len(c.history) - 1 <= c.keep_last:
                c.keep_last, defect_now = None, None
                c.defect_turn += 1
                c.turns = max(c.turns, c.defect_turn)
        if defect_now == "trim_cut":
            # keep-last-N from here on, N of at least 3, the tail starting at a user message
            starts = [i for i in range(2, len(c.history) - 2) if c.history[i]["role"] == "user"]
            if not starts:  # too little history to cut yet: cut a turn later
                c.defect_turn += 1
                c.turns = max(c.turns, c.defect_turn)
                defect_now = None
            else:
                c.window_start = starts[-1]
        if defect_now == "lost_user_message" and c.history[-1]["role"] != "user":
            c.defect_turn += 1  # the message lost must be the user's newest, after a reply in text: a turn later
            c.turns = max(c.turns, c.defect_turn)
            defect_now = None
        if c.defect == "text_only_history" and c.turn + 1 == c.defect_turn and c.history[-1]["role"] != "tool":
            c.defect_turn += 1  # the turn to store as text only must close a tool loop: a turn later
            c.turns = max(c.turns, c.defect_turn)
        request = c.request()
        if defect_now == "tools_left_out":  # the agent's last step, sent without tools to stop further calls
            if any(m.get("tool_calls") for m in request["messages"]):
                del request["tools"]
            else:  # no call to send without tools yet: a turn later, after a reply that calls tools
                c.defect_turn += 1
                c.turns = max(c.turns, c.defect_turn)
                defect_now = None
        if defect_now == "tool_choice_without_tools":  # a last step to get an answer in text: tools gone, tool settings kept
            del request["tools"]
        if defect_now == "lost_user_message":  # the app sends the history without the user's newest message
            request["messages"] = request["messages"][:-1]
        c.sent = len(c.history)
        # a defect planted while storing this reply shows in the next request
        store_defect = c.defect if c.turn + 1 == c.defect_turn and c.defect in STORED_DEFECTS else None
        needs_calls = store_defect in CALL_TURN_DEFECTS or (c.defect == "tools_left_out" and c.turn + 1 == c.defect_turn)
        reply = c.reply(True if needs_calls else (None if store_defect is None else False),
                        least_calls=2 if store_defect in ("unanswered_call", "duplicate_result", "split_responses") else 1)
        cut_off = store_defect == "truncated_reply_reused"  # the reply ran out of tokens, stored as if complete
        if store_defect is not None:
            c.turns = max(c.turns, c.turn + 1)
        if c.keyed and c.style.api == "chat" and c.turn > 1 and self.rng.random() < 0.15:
            self._side_call(c)  # legal: another agent's call under the session's key
        self.first_line = None  # the line of this turn's first request, once written
        # the API refuses this request outright (no reply to regenerate, no message to edit)
        refused = defect_now in REFUSED or (c.turn == 1 and c.defect in REJECTED and c.defect in REFUSED)
        cache_refused = c.defect == "cache_markers_kept" and cache_markers(anthropic_body(request, every_user_message_marked=True)) > 4
        images_refused = c.defect == "screenshots_kept" and images_sent(request) > 20
        # the Gemini API takes a function call turn only after a user or function response turn
        window_refused = c.keep_last is not None and _gemini_window_opens_with_calls(c, request)
        refused = refused or window_refused or cache_refused or images_refused
        if c.keyed and self.rng.random() < 0.08:  # a 429 first, then the same request again: legal
            self.retries += 1
            line = self._write(c, request, {"error": {"message": "Rate limit reached, retry later", "type": "rate_limit_error"}}, status=429)
            self.notices.append(Planted(c.id, "rate_limited", line, ("CTX022",)))
        # regenerated: the first reply is let go, legal (without a key, an opening sent twice reads as
        # two conversations that open alike: the weaker ties, a turn stored as text, are not made then)
        elif defect_now != "overflow" and not refused and (c.keyed or c.turn > 1) and self.rng.random() < 0.05:
            self.regenerations += 1
            self._write(c, request, self._completion(c, c.reply(False), len(request["messages"])))
        elif defect_now is None and not refused and c.history[-1]["role"] == "user" and (c.keyed or c.turn > 1) and self.rng.random() < 0.05:
            # the user edits the message just sent and sends it again: the chat branches there, legal
            # (without a key, a first message edited reads as a new conversation: there is no history to tie)
            self.edits += 1
            self._write(c, request, self._completion(c, c.reply(False), len(request["messages"])))
            c.history[-1] = {"role": "user", "content": c.history[-1]["content"] + (" 吗" if c.history[-1]["content"][-1] > "~" else ", please")}
            request = c.request()
            c.sent = len(c.history)
        if defect_now == "overflow":
            error = {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 132000 tokens.",
                     "type": "invalid_request_error", "code": "context_length_exceeded"}
            self._plant(c, self._write(c, request, {"error": error}, status=400))
            c.turns = c.turn  # the app gives up
            return
        if refused:
            error = (GEMINI_CALL_TURN if window_refused else CACHE_MARKERS_REFUSED if cache_refused else MANY_IMAGES_REFUSED if images_refused
                     else GEMINI_ARRAY_REFUSED if c.defect == "loose_array_schema" and c.style.api == "gemini" else REFUSED[c.defect])
            self._write(c, request, {"error": {"message": error, "type": "invalid_request_error"}}, status=400)
            if window_refused:
                self._window_lost(c, request)
            else:
                self._plant(c, self.first_line)
            c.turns = c.turn  # the app gives up
            return
        self._write(c, request, self._completion(c, reply, len(request["messages"]), cut_off))
        if (c.turn == 1) if c.defect in REJECTED else defect_now not in (None, "sliding_window", "cache_markers_kept", "screenshots_kept"):
            self._plant(c, self.first_line)
        if c.keep_last is not None:  # what the window has lost by now, reported where it starts
            self._window_lost(c, request)
        c.history += c.stored(reply, store_defect)

    def _window_lost(self, c: Conversation, request: dict) -> None:
        opening = (0, 1) if c.prompted else (1,)
        # the first messages it cuts, at once or one at a time as it slides: one defect
        codes = ("CTX008",) if not c.window_lost and any(len(c.history) - i > c.keep_last for i in opening) else ()
        c.window_lost.update(i for i in opening if len(c.history) - i > c.keep_last)
        if not c.cut_inside_tool_exchange and request["messages"][0]["role"] == "tool":
            c.cut_inside_tool_exchange = True  # results without their call at the window's head: one defect
            codes += ("CTX001",)
        if _gemini_window_opens_with_calls(c, request) and c.keyed:  # a bare Gemini body names no model to judge it for
            codes += ("CTX036",)
        if codes:
            self.planted.append(Planted(c.id, "sliding_window", self.first_line, codes))

    @staticmethod
    def _completion(c: Conversation, reply: dict, sent: int, cut_off: bool = False) -> dict:
        finish = "length" if cut_off else "tool_calls" if reply.get("tool_calls") else "stop"
        return {"object": "chat.completion", "model": c.style.model, "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
                "usage": {"prompt_tokens": 200 + 40 * sent, "completion_tokens": 40}}

    def _side_call(self, c: Conversation) -> None:
        """A title call without a system prompt (to a smaller model; or, when the conversation
        has no prompt either, to its own model with the chat quoted), or a sub-agent with its
        own prompt and a tool loop, logged under the main conversation's key."""
        def reply(message: dict) -> dict:
            return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]}
        self.side_calls += 1
        if not c.titled and self.rng.random() < 0.5:
            # once: a second standalone call of the same model, without a prompt, reads as that
            # conversation sending its next message without its history (a defect ctxlint reports)
            c.titled = True
            question = {"role": "user", "content": f"Write a five-word title for this conversation: {c.history[1]['content']}"}
            model = "gpt-4o-mini" if c.prompted else c.style.model
            self._write(c, {"model": model, "messages": [question]}, reply({"role": "assistant", "content": "Rome trip on a budget"}))
            return
        prompt = {"role": "system", "content": "You are a flight-search sub-agent. Answer with the cheapest morning flight as JSON."}
        task = {"role": "user", "content": f"Flights from Paris to {self.rng.choice(CITIES)} on May {self.rng.randint(1, 28)}, before noon."}
        call = {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{c.id}_side{self.side_calls}", "type": "function",
                "function": {"name": "search_flights", "arguments": '{"origin": "Paris", "destination": "Rome"}'}}]}
        result = {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": '{"flights": ["AF1104 07:10"]}'}
        self._write(c, {"model": "gpt-4o", "messages": [prompt, task], "tools": TOOLS}, reply(call))
        self._write(c, {"model": "gpt-4o", "messages": [prompt, task, call, result], "tools": TOOLS}, reply({"role": "assistant", "content": '{"flight": "AF1104"}'}))

    def _write(self, c: Conversation, request: dict, response: dict, status: int = 200) -> int:
        if c.style.api == "anthropic":
            request = anthropic_body(request, every_user_message_marked=c.defect == "cache_markers_kept")
            response = anthropic_response(response, c.style.model)
        elif c.style.api == "responses":
            request, response = responses_body(request), responses_reply(response, c.style.model)
        elif c.style.api == "gemini":
            request, response = gemini_body(request, c.call_names, c.splits_results), gemini_reply(response, c.style.model, c.call_names)
        elif c.style.api == "ollama":
            request, response = ollama_body(request, c.call_names), ollama_reply(response, c.style.model, c.call_names)
        elif c.streamed and "choices" in response and not c.litellm:  # LiteLLM logs the reply it assembled
            response = sse_stream(response)
        self._replies_come(c)
        if c.litellm:
            self.records.append(litellm_payload(c.id, len(self.records), request, response, status))
            self.first_line = self.first_line or len(self.records)
            return len(self.records)
        if c.keyed:  # the envelope names the session its own way
            record = {"ts": f"2026-12-04T10:{len(self.records) // 60 % 60:02d}:{len(self.records) % 60:02d}Z"}
            record.update({"metadata": {"session_id": c.id}} if c.key_name == "metadata.session_id" else {c.key_name: c.id})
            model = {"model": c.style.model} if c.style.api == "gemini" else {}  # its body names none: the URL does
            url = VERTEX_URL if c.defect == "split_responses" and c.turn >= c.defect_turn else c.url
            if url is not None:
                model["url"] = url
            if c.reply_apart:
                request_id = f"req-{len(self.records) + 1}"
                self.records.append({**record, **model, "request_id": request_id, "request": request})
                reply = {"request_id": request_id, "response": response, "status": status}
                self.replies_due.append((c, {**record, **reply} if self.apart.random() < 0.5 else reply))
            else:
                self.records.append({**record, **model, "request": request, "response": response, "status": status})
        else:
            self.records.append(request)
        self.first_line = self.first_line or len(self.records)
        return len(self.records)

    def _replies_come(self, c: Conversation) -> None:
        """Before a request of `c`: its last reply has come; others' each may have."""
        due = [(owner, reply) for owner, reply in self.replies_due if owner is c or self.apart.random() < 0.5]
        self.records += [reply for _, reply in due]
        self.replies_due = [entry for entry in self.replies_due if entry not in due]

    def expected(self) -> list[Planted]:
        """Every finding the log must produce: the planted defects and the notices."""
        return self.planted + self.notices

    def _plant(self, c: Conversation, line: int) -> None:
        codes = {
            "drop_tool_turn": ("CTX016",) if c.keyed else ("CTX001",),
            "drop_reasoning": ("CTX004",),
            "tool_result_as_user": ("CTX009",),
            "two_users": ("CTX003",),
            "thinking_disabled": ("CTX005",),
            "unaccepted_effort": ("CTX005",),
            "trim_cut": ("CTX008",),
            "overflow": ("CTX006",),
            "unanswered_call": ("CTX002",),
            "edited_reasoning": ("CTX015",),
            "arguments_as_object": ("CTX027",),
            "duplicate_result": ("CTX028",),
            "user_after_tool": ("CTX036",),
            "refused_setting": ("CTX037",),
            "lost_user_message": ("CTX035",),
            "tools_left_out": ("CTX039",),
            "system_before_user": ("CTX036",),
            "message_id_dropped": ("CTX041",),
            "message_reasoning_dropped": ("CTX004",),
            "reply_items_twice": ("CTX042",),  # a resumed session appends the reply's items again
            "cache_markers_kept": ("CTX043",),  # where the fifth marker appears
            "dotted_tool_name": ("CTX044",),
            "tools_declared_twice": ("CTX044", "CTX044"),  # each name declared again
            "tool_choice_without_tools": ("CTX037", "CTX037"),  # tool_choice and parallel_tool_calls
            "crm_server_connected": ("CTX045",),
            "every_tool_strict": ("CTX045",),
            "full_page_capture": ("CTX046",),
            "screenshots_kept": ("CTX046",),  # where the 21st image is sent
            "output_limit_over": ("CTX047",),
            "forced_tool_kimi": ("CTX005",),
            "loose_array_schema": ("CTX048",),
            "stop_sequences_kept": ("CTX037",),
            "split_responses": ("CTX049",),  # where the session moves to Vertex AI, the split turn in its history
            "markup_residue": ("CTX018",),
            "truncated_reply_reused": ("CTX021",),
            "text_only_history": ("CTX016",),
        }[c.defect]
        self.planted.append(Planted(c.id, c.defect, line, codes))


def strict(tool: dict) -> dict:
    """A function tool marked strict: its arguments sampled to match its schema."""
    return {**tool, "function": {**tool["function"], "strict": True}}


def _gemini_window_opens_with_calls(c: Conversation, request: dict) -> bool:
    """Whether a Gemini conversation's window opens with a function call turn."""
    opening = next((m for m in request["messages"] if m["role"] != "system"), None)
    return c.style.api == "gemini" and opening is not None and bool(opening.get("tool_calls"))


def ollama_body(request: dict, names: dict) -> dict:
    """A chat-shaped request as the /api/chat body that says the same."""
    return {**{k: v for k, v in request.items() if k != "messages"}, "messages": [ollama_message(m, names) for m in request["messages"]], "stream": False}


def ollama_message(message: dict, names: dict) -> dict:
    if message["role"] == "tool":
        named = names.get(message["tool_call_id"])
        return {"role": "tool", "content": message["content"], **({"tool_name": named} if named else {})}
    if message["role"] != "assistant":
        return message
    converted = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("reasoning_content"):
        converted["thinking"] = message["reasoning_content"]
    if message.get("tool_calls"):
        converted["tool_calls"] = [{"function": {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}}
                                   for call in message["tool_calls"]]
    return converted


def ollama_reply(response: dict, model: str, names: dict) -> dict:
    if "error" in response:
        return {"error": response["error"]["message"]}
    reply = response["choices"][0]
    return {"model": model, "created_at": "2026-12-04T10:00:00Z", "message": ollama_message(reply["message"], names), "done": True,
            "done_reason": "length" if reply["finish_reason"] == "length" else "stop", "prompt_eval_count": response["usage"]["prompt_tokens"], "eval_count": 40}


def litellm_payload(session: str, number: int, request: dict, response: dict, status: int) -> dict:
    """A call as LiteLLM's StandardLoggingPayload logs it (trace_id names the session)."""
    payload = {"id": f"litellm-{number}", "trace_id": session, "call_type": "acompletion", "model": request["model"],
               "messages": request["messages"], "model_parameters": {k: v for k, v in request.items() if k not in ("model", "messages")}}
    if "error" in response:
        return {**payload, "status": "failure", "response": None, "error_str": response["error"]["message"],
                "error_information": {"error_code": str(status), "error_class": response["error"].get("type")}}
    return {**payload, "status": "success", "response": response}


def anthropic_body(request: dict, every_user_message_marked: bool = False) -> dict:
    """A chat-shaped request as the Messages API body that says the same, marked for the
    prompt cache as apps do: the tools, the system prompt and the newest block (moved
    there at every request); with `every_user_message_marked`, every user message too (a
    marker added to each and never taken off)."""
    messages = request["messages"]
    body = {"model": request["model"], "max_tokens": 4096, "thinking": request["thinking"]}
    if "tools" in request:
        body["tools"] = [{"name": t["function"]["name"], "description": t["function"]["description"], "input_schema": t["function"]["parameters"],
                          **({"strict": True} if t["function"].get("strict") else {})} for t in request["tools"]]
        body["tools"][-1]["cache_control"] = CACHE_MARKER
    if messages and messages[0]["role"] == "system":
        body["system"], messages = [{"type": "text", "text": messages[0]["content"], "cache_control": CACHE_MARKER}], messages[1:]
    body["messages"] = []
    for message in map(anthropic_message, messages):
        if every_user_message_marked and message["role"] == "user" and message["content"][0]["type"] == "text":
            message["content"][-1]["cache_control"] = CACHE_MARKER
        previous = body["messages"][-1] if body["messages"] else None
        if previous is not None and message["content"][0]["type"] == "tool_result" and previous["content"][-1]["type"] == "tool_result":
            previous["content"] += message["content"]  # parallel results travel in one user message
        else:
            body["messages"].append(message)
    newest = body["messages"][-1]["content"] if body["messages"] else []
    if newest and newest[-1]["type"] != "thinking":  # (a copy: the history holds the blocks of the replies it stored)
        newest[-1] = {**newest[-1], "cache_control": CACHE_MARKER}
    return body


CACHE_MARKER = {"type": "ephemeral"}


def cache_markers(body: dict) -> int:
    """How many blocks of a Messages API body carry a prompt-cache marker."""
    blocks = body.get("tools", []) + body.get("system", []) + [block for message in body["messages"] for block in message["content"]]
    return sum("cache_control" in block for block in blocks)


def images_sent(request: dict) -> int:
    """How many images a chat-shaped request's tool results carry."""
    return sum(len(message.get("images", ())) for message in request["messages"])


def png_header(width: int, height: int) -> str:
    """A PNG's signature and header, in base64: what says its size."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + struct.pack(">I", zlib.crc32(b"IHDR" + header))).decode()


def anthropic_message(message: dict) -> dict:
    if message["role"] == "system":  # in the conversation (Claude Opus 4.8 and newer)
        return {"role": "system", "content": [{"type": "text", "text": message["content"]}]}
    if message["role"] == "tool":
        content = message["content"]
        if message.get("images"):
            content = [{"type": "text", "text": content}] + [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_header(*size)}}
                                                             for size in message["images"]]
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": content}]}
    if message["role"] == "user":
        return {"role": "user", "content": [{"type": "text", "text": message["content"]}]}
    blocks = [message["thinking"]] if "thinking" in message else []
    blocks += [{"type": "text", "text": message["content"]}] if message["content"] else []
    blocks += [{"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": json.loads(call["function"]["arguments"])}
               for call in message.get("tool_calls", ())]
    return {"role": "assistant", "content": blocks}


STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def anthropic_response(response: dict, model: str) -> dict:
    if "error" in response:
        error = response["error"]
        message = "prompt is too long: 204000 tokens > 200000 maximum" if error.get("code") == "context_length_exceeded" else error["message"]
        return {"type": "error", "error": {"type": error["type"], "message": message}}
    reply = response["choices"][0]["message"]
    return {"id": f"msg_{reply.get('tool_calls', [{}])[0].get('id', 'text')}", "type": "message", "role": "assistant", "model": model,
            "content": anthropic_message(reply)["content"], "stop_reason": STOP_REASONS[response["choices"][0]["finish_reason"]],
            "usage": {"input_tokens": response["usage"]["prompt_tokens"], "output_tokens": 40}}


def sse_stream(response: dict) -> str:
    """A chat.completion as the server-sent events of its stream: reasoning and content in
    pieces, tool calls by index with their arguments split, usage in the last chunk."""
    message, finish = response["choices"][0]["message"], response["choices"][0]["finish_reason"]
    deltas: list[dict] = [{"role": "assistant"}]
    for name in ("reasoning_content", "content"):
        text = message.get(name) or ""
        deltas += [{name: text[i:i + 7]} for i in range(0, len(text), 7)]
    for index, call in enumerate(message.get("tool_calls", ())):
        arguments = call["function"]["arguments"]
        deltas.append({"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}]})
        deltas += [{"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + 5]}}]} for i in range(0, len(arguments), 5)]
    chunks = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": response.get("usage")})
    return "".join(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def responses_body(request: dict) -> dict:
    """A chat-shaped request as the Responses API body that says the same (stateless: the
    whole history as input items, reasoning items encrypted)."""
    messages = request["messages"]
    body = {name: value for name, value in request.items() if name not in ("messages", "tools")}
    body["tools"] = [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
                      "parameters": t["function"]["parameters"]} for t in request["tools"]]
    if messages and messages[0]["role"] == "system":
        body["instructions"], messages = messages[0]["content"], messages[1:]
    body["input"] = [item for message in messages for item in response_items(message)]
    return body


def response_items(message: dict) -> list[dict]:
    if message["role"] == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]}]
    if message["role"] == "user":
        return [{"role": "user", "content": message["content"]}]
    items = [message["reasoning_item"]] if "reasoning_item" in message else []
    if message["content"]:
        item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": message["content"]}]}
        # the message item's id, where it comes back right after the reasoning item its reply returned before it
        item_id = message.get("message_id") or ("msg_" + items[0]["id"].removeprefix("rs_") if items and "message_id_dropped" not in message else None)
        items.append({"id": item_id, **item} if item_id else item)
    items += [{"type": "function_call", "id": "fc_" + call["id"].removeprefix("call_"), "call_id": call["id"], "name": call["function"]["name"],
               "arguments": call["function"]["arguments"], "status": "completed"} for call in message.get("tool_calls", ())]
    return items


def responses_reply(response: dict, model: str) -> dict:
    if "error" in response:
        error = response["error"]
        return {"error": {"message": error["message"], "type": error["type"], "code": error.get("code")}}
    reply = response["choices"][0]["message"]
    finish = response["choices"][0]["finish_reason"]
    return {"object": "response", "model": model, "status": "incomplete" if finish == "length" else "completed",
            **({"incomplete_details": {"reason": "max_output_tokens"}} if finish == "length" else {}),
            "output": response_items(reply), "usage": {"input_tokens": response["usage"]["prompt_tokens"], "output_tokens": 40}}


def gemini_body(request: dict, names: dict, splits_results: bool = False) -> dict:
    """A chat-shaped request as the generateContent body that says the same (with
    `splits_results`, each tool result a content of its own)."""
    messages = request["messages"]
    body: dict = {"tools": [{"functionDeclarations": [{"name": t["function"]["name"], "description": t["function"]["description"],
                                                      "parameters": t["function"]["parameters"]} for t in request["tools"]]}]}
    if messages and messages[0]["role"] == "system":
        body["systemInstruction"], messages = {"parts": [{"text": messages[0]["content"]}]}, messages[1:]
    body["contents"] = []
    for message in messages:
        content = gemini_content(message, names)
        previous = body["contents"][-1] if body["contents"] else None
        if previous is not None and message["role"] == "tool" and "functionResponse" in previous["parts"][-1] and not splits_results:
            previous["parts"] += content["parts"]  # parallel results travel in one user content
        else:
            body["contents"].append(content)
    return body


def gemini_content(message: dict, names: dict) -> dict:
    if message["role"] == "tool":
        name = names[message["tool_call_id"]]
        return {"role": "user", "parts": [{"functionResponse": {"name": name, "response": json.loads(message["content"])}}]}
    if message["role"] == "user":
        return {"role": "user", "parts": [{"text": message["content"]}]}
    parts = [{"text": message["content"]}] if message["content"] else []
    for number, call in enumerate(message.get("tool_calls", ())):
        part = {"functionCall": {"name": call["function"]["name"], "args": json.loads(call["function"]["arguments"])}}
        if number == 0 and "signature" in message:
            part["thoughtSignature"] = message["signature"]
        parts.append(part)
    if not message.get("tool_calls") and "signature" in message and parts:
        parts[0]["thoughtSignature"] = message["signature"]
    return {"role": "model", "parts": parts}


def gemini_reply(response: dict, model: str, names: dict) -> dict:
    if "error" in response:
        error = response["error"]
        message = ("The input token count (1100000) exceeds the maximum number of tokens allowed (1048576)."
                   if error.get("code") == "context_length_exceeded" else error["message"])
        return {"error": {"code": 400 if error["type"] == "invalid_request_error" else 429, "message": message,
                          "status": "INVALID_ARGUMENT" if error["type"] == "invalid_request_error" else "RESOURCE_EXHAUSTED"}}
    reply = response["choices"][0]
    return {"candidates": [{"content": gemini_content(reply["message"], names), "finishReason": {"length": "MAX_TOKENS"}.get(reply["finish_reason"], "STOP")}],
            "usageMetadata": {"promptTokenCount": response["usage"]["prompt_tokens"], "candidatesTokenCount": 40}, "modelVersion": model}
