from __future__ import annotations

from typing import Any

from ctxlint.chat import DUPLICATE_ITEM_IDS
from ctxlint.rules.base import Violation
from ctxlint.rules.noted_items import NotedInputItems


class DuplicateItemId(NotedInputItems):
    """
    ## What it does
    Flags a Responses API request whose input holds two items with the same `id`: two
    reasoning items, two messages, two calls, or items of different kinds (an id the app
    made up for an item that had none, such as `msg_4`, colliding with one a reply
    returned). Judged for OpenAI's models named as OpenAI names them (no gateway `org/`
    prefix), with `store` on or off (Codex's backend, which stores nothing, refuses it
    too), where the log records the request's settings and no successful reply to it is
    logged; a session whose host answered such a request before is left alone (every
    request since sending one too). Where the two items are calls with the same
    `call_id` as well, CTX011 reports them. Reported once per session, where it starts.

    ## Why is this bad?
    The API answers 400 ("Duplicate item found with id msg_4. Remove duplicate items from
    your input and try again.") and the conversation stops there, at every later request
    too, since the history keeps both items. It happens when an app makes up ids for
    items that came without one (`msg_0`, `msg_1`, … by position, which replies use as
    well), replays another provider's turn as several items under one id, or appends a
    reply's items to a history that already holds them (a resumed session).

    ## Example
    ```json
    {"model": "gpt-5.5", "input": [
      {"role": "user", "content": "Rename the module."},
      {"type": "message", "id": "msg_4", "role": "assistant", "content": [{"type": "output_text", "text": "Renamed."}]},
      {"role": "user", "content": "Now update the imports."},
      {"type": "message", "id": "msg_4", "role": "assistant", "content": [{"type": "output_text", "text": "Updated 12 files."}]},
      {"role": "user", "content": "Run the tests."}]}
    ```

    Use instead: send each item with the id its reply gave it, once; an item that had no
    id goes without one (the API needs none).
    """

    code = "CTX042"
    name = "duplicate-item-id"
    severity = "error"
    note = DUPLICATE_ITEM_IDS
    remediation = ("Send each input item once, with the id its reply gave it; leave the id out of an item that came without "
                   "one rather than making one up.")

    def violation(self, ctx, index: int, noted: dict[str, Any], refusal: dict[str, Any]) -> Violation:
        return self.refused(
            f"input item {noted['item']} has id {noted['id']!r}, which input item {noted['first']} has too",
            index, f"/input/{noted['item']}/id", refusal=refusal, explained_by=("CTX011",),
            evidence={"item_id": noted["id"], "first_item": f"/input/{noted['first']}"},
        )
