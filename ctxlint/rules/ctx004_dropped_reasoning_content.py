from __future__ import annotations

from typing import Iterable

from ctxlint.chat import reasoning_of, reasoning_value, returned_reasoning, role_of, tool_call_ids
from ctxlint.profiles import makers_api_unanswered, sealed_only
from ctxlint.rules.base import Rule, Violation


# A profile whose only pass-back rule is the Responses item link judges a call only against
# the reasoning the model is known to have returned: a turn may have had none (effort none).
LINKED_ONLY = frozenset({"item_linked"})


class DroppedReasoningContent(Rule):
    """
    ## What it does
    Flags an assistant message that comes back without the reasoning the model returned
    for it (`reasoning_content`, `reasoning`, `reasoning_details` or LiteLLM's
    `thinking_blocks`, or the `<think>` block its content opened with), where the
    model's profile says that reasoning must be passed back. What the model returned is
    known from the logged response or from an earlier request's copy of the message.
    Without either, a tool-call turn of a model that is thinking in this request and
    requires pass-back is flagged when it carries no reasoning at all. Whether a request
    is thinking comes from its switch (`thinking`, `enable_thinking`, a chat
    template's), else from its logged reply (one that carries reasoning was thought:
    hosts switch thinking on by default where the maker's API does not) or from the
    reply to an earlier request of the session sent with the same settings, else from the
    profile, where the log records the request's settings (a tracer's span or event that
    keeps the messages alone leaves a switch it does not show unknown: only reasoning
    the reply showed is asked for back). One copy of a reply's reasoning coming back is
    enough, unless the reply carried a sealed one (signed thinking blocks, an encrypted
    item, thought signatures): the provider verifies that one, so a readable copy alone
    (`reasoning_content`, a `reasoning` string) is flagged. So is a tool-call turn whose
    reasoning the reply carried in the field the maker's API reads and checks
    (DeepSeek's and Moonshot's `reasoning_content`) and that comes back under another
    (OpenRouter's `reasoning`, a `<think>` block), where the request names the model as
    that API does (no `org/` prefix or `:tag`) and no successful reply to it is logged
    (nor to an earlier request of the session that sent the turn so, every request since
    sending it too).

    When pass-back is required comes from the packaged model profiles: DeepSeek's thinking
    models, Kimi K2 thinking, MiniMax-M2 and GLM-5.3 require it on turns that made tool
    calls; GLM 4.5 to 5.2 on the tool-call turns of the loop still going (its chat template
    shows reasoning only after the last user message), and on every turn when
    `thinking.clear_thinking` is false (preserved thinking); Claude with extended thinking
    on the tool-call turns of the tool loop still going (no user turn after them: text
    sent beside the tool results or right after them is part of their turn, which the API
    merges), where reasoning is the `thinking` blocks; OpenAI reasoning
    models (GPT-5, o-series) on Responses API function calls sent back with their item id
    (`fc_…`), where reasoning is the `reasoning` items that came before them in the
    response (a call sent without its item id is not linked to any; with `store: false`
    nothing is linked, and only reasoning the reply carried encrypted can come back), and
    on assistant messages sent back with their item id (`msg_…`) by a request that does
    not send `store: false` and whose successful reply is not logged; Gemini 3 on the
    function calls of the current turn, where reasoning is the thought signatures (on the
    calls' `extra_content.google.thought_signature` through its OpenAI-compatible API). Turns
    without tool calls of DeepSeek reasoner histories are not judged: the API ignores
    reasoning there, so dropping it is legal, and so is dropping a GLM, Claude or Gemini 3
    turn's reasoning once the user has spoken again (the template or API strips or skips it).
    DeepSeek's and Moonshot's APIs check the field itself on every tool-call turn of a
    request that thinks: a turn whose reply carried no reasoning (another model made it,
    or this one with thinking off) is flagged when it comes back without the field, which
    it may carry empty.

    ## Why is this bad?
    Interleaved thinking models plan a tool loop in their reasoning. An app that stores
    only `content` and `tool_calls` hands the model its own actions without the plan
    behind them, and it "forgets" why it called the tool. DeepSeek answers HTTP 400
    ("Missing reasoning_content field in the assistant message at message index N");
    Anthropic answers 400 ("Expected `thinking` or `redacted_thinking`, but found
    `tool_use`"); OpenAI answers 400 ("Item 'fc_…' of type 'function_call' was provided
    without its required 'reasoning' item"; for a message, "Item 'msg_…' of type 'message'
    was provided without its required preceding item of type 'reasoning'"); Gemini 3 answers 400 ("Function call is
    missing a thought_signature in functionCall parts"); Zhipu says thinking blocks should
    be returned with the tool results.

    ## Example
    ```json
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}
    ```

    Use instead: pass back what the response carried, unchanged:
    ```json
    {"role": "assistant", "content": null, "reasoning_content": "The user wants the weather, so…", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}
    ```
    """

    code = "CTX004"
    name = "dropped-reasoning-content"
    severity = "error"
    recurs = True
    recurs_on = ("calls",)
    needs = ("thinking_profile", "reasoning")
    remediation = "Store the assistant message whole, as the reply carried it (reasoning_content / reasoning / reasoning_details, thinking blocks, reasoning items, thought signatures), and send it back unchanged."

    def check(self, ctx) -> Iterable[Violation]:
        if ctx.thinking is False or not ctx.profile.passback:
            return
        messages = ctx.messages
        for index in range(ctx.unchanged(self), len(messages)):
            message = messages[index]
            if role_of(message) != "assistant" or not ctx.passback_required(index):
                continue
            identity = ctx.turn.identities[index]
            ids = tool_call_ids(message)
            call_id = ids[0] if ids else None
            if reasoning_of(message)[0] is not None:
                # reasoning sent back, but not as the provider reads or verifies it
                unread = self._under_another_field(ctx, index, identity, call_id) or self._readable_copy_only(ctx, index, identity, call_id)
                if unread is not None:
                    yield unread
                continue
            known = ctx.known_reasoning(index)
            if known is not None:
                returned = [name for name in known if not name.startswith("_")]
                if not returned:
                    if ctx.thinking and ids and ctx.profile.reasoning_field_checked:
                        yield self._field_missing(ctx, index, identity, call_id, known["_origin"])
                    continue  # seen before without reasoning: the model did not think there
                if sealed_only(ctx.profile, ctx.request) and not known.get("_sealed"):
                    continue  # nothing stored to link to, and no encrypted copy that could come back
                yield Violation(
                    f"assistant message {ctx.label(index)} comes back without the {ctx.turn.record.field_label(returned[0])} the model returned for it ({known['_origin']})",
                    key=identity, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
                    evidence={"returned_field": returned[0], "seen_in": known["_origin"], "model": ctx.turn.record.model},
                )
            elif ctx.thinking and message.get("tool_calls") and not ctx.profile.passback <= LINKED_ONLY:
                yield Violation(
                    f"tool-call turn at message {ctx.label(index)} carries no {ctx.turn.record.field_label('reasoning_content')}, which {ctx.profile.id} requires on tool-call turns while thinking",
                    key=identity, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
                    evidence={"profile": ctx.profile.id, "sources": list(ctx.profile.sources), "model": ctx.turn.record.model},
                )

    @staticmethod
    def _field_missing(ctx, index: int, identity: tuple, call_id: str | None, origin: str) -> Violation:
        """A tool-call turn whose reply carried no reasoning (another model made it, or this
        one with thinking off), sent without the field to a model whose API checks it on
        every tool-call turn while thinking."""
        field = ctx.turn.record.field_label("reasoning_content")
        return Violation(
            f"tool-call turn at message {ctx.label(index)} carries no {field}, as where it was first seen ({origin}): made by another "
            f"model or with thinking off, it must still carry the field, which {ctx.profile.id} checks on every tool-call turn while "
            f"thinking (send it empty, or turn thinking off)",
            key=identity, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
            evidence={"seen_in": origin, "profile": ctx.profile.id, "sources": list(ctx.profile.sources), "model": ctx.turn.record.model},
        )

    @staticmethod
    def _under_another_field(ctx, index: int, identity: tuple, call_id: str | None) -> Violation | None:
        """A tool-call turn sent while thinking with its reasoning under a field the maker's
        own API does not read (OpenRouter's `reasoning`, a `<think>` block), where that API
        checks its own field on every tool-call turn (DeepSeek's and Moonshot's
        `reasoning_content`) and the reply carried it in that field: the app renamed it. The
        request names the model as that API does (no org/ prefix, which other hosts use, and
        they may read other fields), and no successful reply to it is logged, nor to an
        earlier request of the session that sent it so (a host that took it read the field)."""
        message, record, field = ctx.messages[index], ctx.turn.record, ctx.profile.reasoning_field
        if field is None or field in message or not ctx.thinking or not call_id:
            return None
        known = ctx.known_reasoning(index)
        if not known or field not in known:
            return None  # the host's replies carry it under another name (a self-hosted server's `reasoning`)
        if not makers_api_unanswered(record) or index < ctx.taken_before:
            return None  # another host's name, another API's body, or a host that answered it (here or before)
        carried = record.field_label(reasoning_of(message)[0])
        return Violation(
            f"tool-call turn at message {ctx.label(index)} carries its reasoning as `{carried}`: the maker's API for {ctx.profile.id} "
            f"reads only `{field}`, and refuses a thinking request whose tool-call turn lacks it (\"Missing {field} field\")",
            key=identity, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
            evidence={"sent_as": carried, "expected_field": field, "profile": ctx.profile.id, "sources": list(ctx.profile.sources),
                      "model": record.model},
        )

    @staticmethod
    def _readable_copy_only(ctx, index: int, identity: tuple, call_id: str | None) -> Violation | None:
        """A turn sent back with a readable copy of its reasoning (reasoning_content, a
        reasoning string) but none of the sealed ones the reply carried (signed thinking
        blocks, encrypted items, thought signatures): the provider verifies those, and the
        readable copy cannot stand in for them."""
        known = ctx.known_reasoning(index)
        wanted = known.get("_sealed") if known else None
        if not wanted:
            return None
        message = ctx.messages[index]
        if any(reasoning_value(message, name) not in (None, "", []) for name in wanted):
            return None
        kept = [name for name, _ in returned_reasoning(message)]
        label = ctx.turn.record.field_label
        return Violation(
            f"assistant message {ctx.label(index)} comes back with {', '.join(map(label, kept)) or 'an empty reasoning field'} but without "
            f"the {label(wanted[0])} the model returned for it ({known['_origin']}), which the provider verifies",
            key=identity, message_index=index, tool_call_id=call_id, pointer=f"/messages/{index}",
            evidence={"returned_field": wanted[0], "kept_fields": kept, "seen_in": known["_origin"], "model": ctx.turn.record.model},
        )

