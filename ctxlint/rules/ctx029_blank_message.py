from __future__ import annotations

from typing import Iterable

from ctxlint.chat import message_identity, role_of
from ctxlint.profiles.lookup import makers_api_unanswered, refused_as_blank
from ctxlint.rules.base import Rule, Violation

# what a finding says each blank shape is
SHAPES = {
    "empty_message": "has no content",
    "empty_text_block": "holds a text block with no text",
    "whitespace_text": "says nothing but whitespace",
    "null_content": "has content null",
}


class BlankMessage(Rule):
    """
    ## What it does
    Flags a message of the history whose content the API refuses as blank, where the
    model profiles' data says it does: in an Anthropic Messages body (sent to Anthropic,
    Bedrock's InvokeModel or Vertex AI), a message with empty content (`""` or `[]`), a
    text block whose text is `""`, or a message whose text is whitespace alone (the
    top-level `system` prompt too); in a Bedrock Converse body, a text block with no
    text; in a Gemini body, a content with no parts; in a chat-completions body sent to
    a model of Moonshot's (Kimi, moonshot-v1), an assistant message with no content, no
    tool calls and no reasoning, unless the request's successful reply is logged, or an
    earlier request of the session sent it to the same model and got one, every request
    since sending it too (other hosts serve Kimi, and may take it). In a
    chat-completions body sent to OpenAI's models (named as its API names them: no
    `org/` prefix or `:tag`), a message whose content is `null`: a user, system or tool
    message (a tool that returned nothing), or an assistant message without tool calls;
    unless answered as above. The last message of a Messages body, or of one sent to
    Moonshot, when it is the assistant's with empty content (a prefill), is left alone:
    the APIs allow it. An empty tool result is not judged (Converse takes one,
    measured), nor are other models' chat-completions bodies; OpenAI and DeepSeek take
    an assistant message whose content is `""`. Reported once, at the request that first
    carries the message. Where the blank message is a reply whose tool calls were lost
    (CTX001, CTX016 report that at the same request), this rule stays quiet.

    ## Why is this bad?
    The API answers the request with a 400 ("all messages must have non-empty content
    except for the optional final assistant message", "text content blocks must contain
    non-whitespace text", "contents.parts must not be empty"), and since the app stores
    the message in its history and sends it back every turn, every later request fails
    the same way: the session is stuck. It usually starts with an empty reply (a model
    that answered nothing, or only thinking the app did not keep) stored as it came, or
    with text trimmed to nothing before storing.

    ## Example
    ```json
    {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
      {"role": "user", "content": "Summarize the report."},
      {"role": "assistant", "content": ""},
      {"role": "user", "content": "Hello?"}]}
    ```

    Use instead: leave an empty reply out of the history (or store what it did say: its
    tool calls, its thinking blocks), drop text blocks that are empty or whitespace alone
    before sending, and leave out a system prompt that says nothing.
    """

    code = "CTX029"
    name = "blank-message"
    severity = "error"
    recurs = True
    recurs_on = ("assistant", "user")
    remediation = ("Leave empty replies out of the history (or keep what they did carry: tool calls, thinking blocks), "
                   "drop empty or whitespace-only text blocks before sending, and send no system prompt rather than a blank one.")

    def check(self, ctx) -> Iterable[Violation]:
        messages = ctx.messages
        last = len(messages) - 1
        answered = ctx.turn.record.answered
        profile_id = ctx.profile.id if ctx.profile.known else None
        # the previous request's last message is judged again: a prefill it was exempt as is history now
        for index in range(max(ctx.unchanged(self) - 1, 0), len(messages)):
            message = messages[index]
            for blank, refused in refused_as_blank(message, profile_id):
                if refused["except_final_assistant"] and index == last and role_of(message) == "assistant":
                    continue
                if refused.get("unless_answered") and (answered or index < ctx.taken_before):
                    continue  # served by a host that took it, here or before (ctx.taken_before)
                if refused.get("makers_api") and not makers_api_unanswered(ctx.turn.record):
                    continue  # a body not as sent to the maker's API, or a model named as other hosts serve it
                block = blank.get("block")
                before = message_identity(messages[index - 1]) if index else None
                label = ctx.label(index)
                yield Violation(
                    f"{f'{role_of(message)} message {label}' if label.isdigit() else f'`{label}`'} {SHAPES[blank['shape']]}"
                    f"{f' (block {block})' if block is not None else ''}: {refused.get('by', blank['api'])} refuses any request that carries it "
                    f"({refused['error']!r}), so every later request of the session fails too",
                    key=(blank["shape"], block, message_identity(message), before), message_index=index,
                    pointer=f"/messages/{index}" + (f"/content/{block}" if block is not None else "/content"),
                    evidence={"api": blank["api"], "shape": blank["shape"], "provider_error": refused["error"],
                              **({"block": block} if block is not None else {})},
                    explained_by=("CTX001", "CTX016"),
                )
