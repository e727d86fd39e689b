from __future__ import annotations

from typing import Iterable

from ctxlint.chat import message_identity, role_of
from ctxlint.profiles import accepted_parts
from ctxlint.rules.base import Rule, Violation


class UnsupportedContentPart(Rule):
    """
    ## What it does
    Flags a content part of a type the model's API does not take, in a message of a
    chat-completions request: an `image_url`, `input_audio` or `file` part sent to
    DeepSeek's API, which takes text alone (`deepseek-chat`, `deepseek-reasoner`,
    DeepSeek V4; the model profiles' data names the part types each API takes, with its
    sources). The request must name the model as that API does (no `org/` prefix or
    `:tag`: other hosts serve it under such names, some with vision). A request whose
    successful reply is logged is left alone, and so is a message an earlier request of
    the session sent to the same model and got a successful reply to (every request
    since sending it too): the host that answered took it. Each message is reported
    once, at the request that first carries it.

    ## Why is this bad?
    The API answers 400 ("Failed to deserialize the JSON body into the target type:
    messages[137]: unknown variant `image_url`, expected `text`"), and since the image
    stays in the history, every later request of the session fails the same way. It
    happens when a conversation that began with a vision model moves to a text-only one,
    or an agent keeps a screenshot its tool took, and the app sends the history as it was.

    ## Example
    ```json
    {"model": "deepseek-chat", "messages": [
      {"role": "user", "content": [{"type": "text", "text": "What does this chart show?"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR…"}}]}]}
    ```

    Use instead: send the model text it can read (the image described, or its extracted
    text), and leave image parts out of the history sent to a text-only model.
    """

    code = "CTX032"
    name = "unsupported-content-part"
    severity = "error"
    remediation = ("Leave content parts the model's API does not take out of the request and its history "
                   "(describe an image in text), or send them to a model that takes them.")

    def check(self, ctx) -> Iterable[Violation]:
        accepted = accepted_parts(ctx.turn.record)
        if accepted is None:
            return
        messages = ctx.messages
        # every message, those reported before too: the error each later request gets is theirs
        # (CTX022); not those a host took before (ctx.taken_before)
        for index in range(ctx.taken_before, len(messages)):
            content = messages[index].get("content")
            for position, part in enumerate(content if isinstance(content, list) else ()):
                kind = part.get("type") if isinstance(part, dict) else None
                if isinstance(kind, str) and kind not in accepted["accepts"]:
                    yield Violation(
                        f"{role_of(messages[index])} message {ctx.label(index)} holds a part of type `{kind}`: {accepted['by']} takes "
                        f"{', '.join(f'`{name}`' for name in accepted['accepts'])} parts alone ({accepted['error']!r}), so every "
                        f"request that carries it fails",
                        key=(message_identity(messages[index]), position), message_index=index,
                        pointer=f"/messages/{index}/content/{position}",
                        evidence={"part_type": kind, "accepted": accepted["accepts"], "model": ctx.turn.record.model,
                                  "provider_error": accepted["error"], "sources": accepted["sources"]},
                    )
                    break  # one finding a message: the first part the API cannot read
