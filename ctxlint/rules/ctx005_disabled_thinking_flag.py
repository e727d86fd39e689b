from __future__ import annotations

from typing import Iterable

from ctxlint.chat import as_sent, dotted, key_text, reasoning_of, role_of, tool_calls_of
from ctxlint.profiles import makers_api_unanswered, refused_setting_paths, refuses_every_prefill
from ctxlint.profiles.lookup import tool_loop_start
from ctxlint.rules.base import Rule, Violation


class DisabledThinkingFlag(Rule):
    """
    ## What it does
    Flags a thinking setting the model rejects, such as `thinking: {"type": "disabled"}`
    sent to GLM-5.x or to Volcengine's thinking-only doubao-seed-1.6-thinking (thinking is
    always on there; the hybrid doubao-seed-1.6 and GLM-4.x take the switch), or to Claude
    Fable 5.x and Opus 5.5 (adaptive thinking, always on), Claude Sonnet 5.5 (whose lowest
    setting is `between_tools`; Haiku 5.5 takes `disabled`) or Moonshot's kimi-k2.7-code
    (the hybrid Kimi K2.5 to K2.7 take it); `enable_thinking: false` sent to a thinking-only
    Qwen3 model (`qwen3-…-thinking-2507`, `qwen3-next-80b-a3b-thinking`; the hybrid Qwen3
    models take it); the manual `thinking: {"type": "enabled", "budget_tokens": …}` sent to
    Claude Opus 4.7 and newer and to Haiku 5.5, which take adaptive thinking only (Opus 4.6,
    Haiku 4.5 and older still take it), any thinking (`enabled` or `adaptive`) sent to the
    Claude models before Claude 3.7 Sonnet (3.5 Sonnet and Haiku, the Claude 3 models,
    Claude 2), which have none, a thinking budget of 0 sent to Gemini 2.5 Pro (which cannot
    turn thinking off), and a `reasoning_effort` value outside the values the model's
    profile accepts (GLM-5.x takes `low`, `high`, `max`; o3 does not take `none`). For
    OpenAI's models the effort is also read from `reasoning.effort` (the Responses API's,
    which OpenRouter passes on to them as sent, while it translates it for other vendors'
    models). Also flagged: the settings Claude refuses while a request turns thinking on
    (`thinking.type` `enabled` or `adaptive`): a `temperature` other than 1 (on the models
    that refuse one with thinking on or off, Claude Opus 4.7 and newer, CTX037 reports it),
    `top_p` under 0.95, `top_k`, a `tool_choice` that forces a tool (`any`, a named tool,
    chat-completions' `required` through a gateway), a `budget_tokens` under 1,024, or a
    request that ends with an assistant prefill of text (Claude wants the final assistant
    message to open with a thinking block), or manual extended thinking (`thinking.type`
    `enabled`, under which the model thinks at the start of every turn) switched on inside a
    tool-use turn that began without it: the assistant message that opens the turn the
    request's tool results answer has no thinking block (the API keeps one thinking
    configuration per turn; where that message's thinking was dropped, CTX004 reports it);
    and, with thinking off, a final assistant message that carries thinking blocks (off by
    the switch, or by the model's default where the log records the request's settings: a
    tracer's span or event does not); and a forced tool call (`tool_choice` `required` or a
    named function) sent to Kimi K2.5 or K2.6 on Moonshot's API (the model named as it names
    it) while the model thinks, which it does by default where the request sends no
    `thinking`.

    ## Why is this bad?
    Apps keep sending the switch they wrote for an older model after they move to a
    newer one, or turn thinking on beside sampling settings written for a model that
    did not think. The provider answers HTTP 400 ("`temperature` may only be set to 1
    when thinking is enabled"), or silently ignores the flag so the app's cost and
    latency assumptions are wrong. Either way the request does not do what the code says.

    ## Example
    ```json
    {"model": "glm-5.1", "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "hi"}]}
    ```

    Use instead: drop the switch, or pick an accepted effort:
    ```json
    {"model": "glm-5.1", "reasoning_effort": "low", "messages": [{"role": "user", "content": "hi"}]}
    ```
    """

    code = "CTX005"
    name = "disabled-thinking-flag"
    severity = "error"
    needs = ("thinking_profile",)
    remediation = ("Remove thinking settings the model does not accept; use one of its reasoning_effort values; "
                   "with thinking on, leave out the sampling settings, forced tool choice and assistant prefill the model refuses.")

    def check(self, ctx) -> Iterable[Violation]:
        profile = ctx.profile
        for path, value in profile.rejects:
            sent = dotted(ctx.request, path)
            if sent == value:
                yield Violation(
                    f"{profile.id} rejects {path} = {as_sent(value)} (model {ctx.turn.record.model})",
                    key=(path, key_text(value)), pointer="/" + path.replace(".", "/"),
                    evidence={"setting": path, "value": value, "profile": profile.id, "sources": list(profile.sources)},
                )
        for path in profile.effort_settings if profile.reasoning_effort is not None else ():
            effort = dotted(ctx.request, path)
            if effort is not None and effort not in profile.reasoning_effort:
                yield Violation(
                    f"{path} {as_sent(effort)} is not accepted by {profile.id}; accepted: {', '.join(profile.reasoning_effort)}",
                    key=(path, key_text(effort)), pointer="/" + path.replace(".", "/"),
                    evidence={"setting": path, "value": effort, "accepted": list(profile.reasoning_effort), "profile": profile.id},
                )
        switched_on, by_default = dotted(ctx.request, "thinking.type"), False
        if switched_on is None and "thinking" not in ctx.request and profile.default_thinking_type and ctx.turn.record.settings_recorded:
            switched_on, by_default = profile.default_thinking_type, True  # the model thinks unless told not to
        judged = not profile.conflicts_on_makers_api or makers_api_unanswered(ctx.turn.record)
        if switched_on is not None and switched_on in profile.thinking_types and judged:
            # what the model refuses with thinking on or off is CTX037's (Claude Opus 4.7 and newer: temperature)
            refused = refused_setting_paths(ctx.turn.record)
            for conflict in profile.thinking_conflicts:
                sent = dotted(ctx.request, conflict.path)
                if conflict.refuses(sent, ctx.request):
                    yield Violation(
                        f"{profile.id} rejects {conflict.path} = {as_sent(sent)} while thinking is on "
                        f"({'by default: the request sends no thinking' if by_default else f'thinking.type {as_sent(switched_on)}'}); "
                        f"{conflict.advice()}",
                        key=(conflict.path, key_text(sent)), pointer="/" + conflict.path.replace(".", "/"),
                        evidence={"setting": conflict.path, "value": sent, "thinking": switched_on, "profile": profile.id,
                                  "sources": list(profile.conflict_sources)},
                        explained_by=("CTX037",) if conflict.path in refused else (),
                    )
        for against in (_final_assistant_against_the_switch(ctx, switched_on), _tool_turn_against_the_switch(ctx, switched_on)):
            if against is not None:
                yield against


def _tool_turn_against_the_switch(ctx, switched_on: str | None) -> Violation | None:
    """The assistant message that opens the turn still going (after the user's last turn, up
    to the tool results the request ends with), when it opens with no thinking block while
    the request switches on a thinking the model starts every turn with: the turn began with
    thinking off, or another model made it, and the API keeps one thinking configuration per
    turn. Where that message's reasoning was dropped, CTX004 reports it."""
    profile, messages = ctx.profile, ctx.messages
    if switched_on not in profile.tool_turn_opens_with_thinking or not ctx.turn.record.reasoning_recorded or not messages \
            or role_of(messages[-1]) == "assistant":
        return None
    start = tool_loop_start(profile, messages)
    opener = next((index for index in range(start + 1, len(messages)) if role_of(messages[index]) == "assistant"), None) if start >= 0 else None
    if opener is None or not tool_calls_of(messages[opener]) or reasoning_of(messages[opener])[0] is not None:
        return None
    previous = ctx.previous
    if ctx.known_reasoning(opener) is not None and previous is not None and dotted(previous.record.request, "thinking.type") == switched_on:
        return None  # sent before while thinking was on already (a history trimmed to start there): a block it lost is CTX004's
    return Violation(
        f"{profile.id} rejects a request that turns thinking on (thinking.type {as_sent(switched_on)}) inside a tool-use turn that began "
        f"without it: assistant message {ctx.label(opener)}, which opens the turn the tool results answer, has no thinking block; "
        "switch thinking on only once the turn has ended, or leave it off for this request",
        key=("tool turn", ctx.turn.identities[opener]), message_index=opener, pointer=f"/messages/{opener}", explained_by=("CTX004",),
        evidence={"thinking": switched_on, "profile": profile.id, "sources": list(profile.conflict_sources)})


# how a gateway turns a model's thinking on besides `thinking` (OpenRouter's `reasoning`)
OTHER_THINKING_SWITCHES = ("reasoning", "reasoning_effort")


def _final_assistant_against_the_switch(ctx, switched_on: str | None) -> Violation | None:
    """The assistant message a request ends with (a prefill the reply is to go on from),
    when its thinking does not follow the request's switch: no thinking block to open with
    while thinking is on, a thinking block while it is off."""
    profile, last = ctx.profile, len(ctx.messages) - 1
    message = ctx.messages[last] if last > 0 else None
    if not profile.final_assistant_follows_thinking or message is None or role_of(message) != "assistant" or tool_calls_of(message):
        return None
    if refuses_every_prefill(ctx.turn.record):
        return None  # with thinking or without, the prefill is refused: CTX035 reports it
    thinks = reasoning_of(message)[0] is not None
    if switched_on in profile.thinking_types:
        if thinks:
            return None
        said = f"opening with no thinking block while thinking is on (thinking.type {as_sent(switched_on)}); drop the prefill, or turn thinking off"
    elif switched_on == "disabled" or (switched_on is None and profile.thinking_mode == "toggle" and not profile.thinking_default
                                       and ctx.turn.record.settings_recorded
                                       and not any(setting in ctx.request for setting in OTHER_THINKING_SWITCHES)):
        if not thinks:
            return None
        said = "that carries thinking blocks while thinking is off; leave them out of it, or turn thinking on"
    else:
        return None
    return Violation(f"{profile.id} rejects a request that ends with an assistant message (a prefill) {said} for this request",
                     key="prefill", message_index=last, pointer=f"/messages/{last}",
                     evidence={"thinking": switched_on, "profile": profile.id, "sources": list(profile.conflict_sources)})


