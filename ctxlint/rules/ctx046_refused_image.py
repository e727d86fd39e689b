from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import image_refusal_sent, past_image_limit, refused_images
from ctxlint.rules.base import Rule, Violation


class RefusedImage(Rule):
    """
    ## What it does
    Flags an image a Messages API request to a Claude model sends (in a user turn or in a
    tool result) that the API refuses: base64 data longer than 10,485,760 characters
    (5,242,880 in a body for Bedrock or Vertex AI, as its `anthropic_version` says); a
    side longer than 8000 pixels; or, in a request that carries more than 20 images, a
    side longer than 2000 pixels. The size is read from the image's header (PNG, JPEG,
    GIF, WebP). The model profiles' data says what the API refuses, with its sources.
    Judged where the request names the model without a gateway's `org/` prefix, the log
    records its settings and no successful reply to it is logged; a session whose host
    answered such a request before is left alone (every request since sending one too).
    An image is reported once, at the request that first sends it; an image too large for
    a request of many images, once per session, at the request that first carries more
    than 20.

    ## Why is this bad?
    The API answers 400 ("image exceeds 10 MB maximum: 11174516 bytes > 10485760 bytes",
    "At least one of the image dimensions exceed max allowed size: 8000 pixels", "... for
    many-image requests: 2000 pixels") before the model sees anything. The image stays in
    the history, so every later request fails the same way and the session is over until
    the image is taken out. A full-page screenshot is taller than 8000 pixels; an agent
    that takes a screenshot at every step keeps them all, and the request that carries
    the 21st fails for any of them larger than 2000 pixels, turns after it was sent.

    ## Example
    ```json
    {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Check the landing page."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo... (a 1440x9600 full-page capture)"}}]}]}
    ```

    Use instead: scale images down before sending them (1568 pixels on the long side is
    what the model sees anyway), split a full-page capture into screens, and drop or
    shrink the screenshots of earlier steps as the history grows:
    ```json
    {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": [
      {"role": "user", "content": [{"type": "text", "text": "Check the landing page."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo... (1440x900, the first screen)"}}]}]}
    ```
    """

    code = "CTX046"
    name = "refused-image"
    severity = "error"
    remediation = ("Scale images down before sending them (within 2000 pixels a side once a request may carry more than 20; "
                   "1568 is what the model sees), keep their base64 data within the API's limit, split full-page captures, "
                   "and drop or shrink the screenshots of earlier steps as the history grows.")

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        images = record.source_map.images if record.source_map is not None else ()
        if not images:
            return
        label, refusals = record.source_map.pointer, refused_images(record)
        for entry in refusals:
            if ctx.host_took(image_refusal_sent(entry)):
                continue  # the host answered the same before
            limit, most = entry["limit"], entry["most"]
            # an image the previous request sent was judged there, alone; the count of many is the request's
            found = past_image_limit(entry, images, judged_from=ctx.unchanged(self))
            if limit == "side_in_many":  # the first image refused for this alone (one refused in any request is that one's defect)
                alone = [other for other in refusals if other["limit"] == "side"]
                found = [image for image in found if not any(past_image_limit(other, (image,)) for other in alone)][:1]
            for image in found:
                at = label(image.pointer)
                if limit == "encoded_size":
                    says = f"the image at {at} is {image.encoded:,} characters of base64, more than the {most:,} {entry['by']} takes"
                elif limit == "side":
                    says = f"the image at {at} is {image.size[0]}x{image.size[1]} pixels, more than the {most} a side the API takes"
                else:
                    says = (f"the request carries {len(images)} images, more than {entry['images_over']}, and the image at {at} is "
                            f"{image.size[0]}x{image.size[1]} pixels: in such a request the API takes {most} a side at most (the "
                            "images the history keeps from earlier turns and tool results count)")
                yield Violation(
                    f"{says}; it stays in the history, failing every later request: {entry['by']} answers {entry['status']} ({entry['error']!r})",
                    key=(*image_refusal_sent(entry), None if limit == "side_in_many" else image.digest),
                    message_index=image.message_index, pointer=image.pointer,
                    evidence={"limit": limit, "most": most, "encoded_characters": image.encoded, "pixels": list(image.size) if image.size else None,
                              "images": len(images), "model": record.model, "provider_error": entry["error"], "sources": entry["sources"]},
                )
