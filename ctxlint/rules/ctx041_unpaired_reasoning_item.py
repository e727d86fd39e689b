from __future__ import annotations

from typing import Any

from ctxlint.chat import UNPAIRED_REASONING
from ctxlint.rules.base import Violation
from ctxlint.rules.noted_items import NotedInputItems


class UnpairedReasoningItem(NotedInputItems):
    """
    ## What it does
    Flags a Responses API request that sends a reasoning item with its `id` and does not
    follow it with the item its reply followed it with: the reasoning item is the last
    input item, or what comes right after it is a user, system or developer message, a
    tool output, or an assistant message sent without its `id` (an easy input message
    `{"role": "assistant", "content": …}`, or a message item whose id the app dropped). A
    call or another reasoning item after it is not judged, nor is a reasoning item sent
    without an id (stateless replay with its `encrypted_content`). Judged for OpenAI's
    models named as OpenAI names them (no gateway `org/` prefix), where the log records
    the request's settings, the request does not send `store: false` (nothing is looked
    up by id then) and no successful reply to it is logged; a session whose host answered
    such a request before is left alone (every request since sending one too). Reported
    once per session, where it starts.

    ## Why is this bad?
    The API answers 400 ("Item 'rs_…' of type 'reasoning' was provided without its
    required following item.") and the conversation stops there. It happens when an app
    keeps a turn's reasoning items and drops, reorders or rebuilds what came after them:
    it stores the assistant's text as a plain message without its `msg_…` id, prunes the
    tool calls of a turn but not its reasoning, or keeps the reasoning of a reply cut off
    before it said anything.

    ## Example
    ```json
    {"model": "gpt-5", "input": [
      {"role": "user", "content": "What is 2+2?"},
      {"type": "reasoning", "id": "rs_0678e31d", "summary": []},
      {"role": "assistant", "content": "2+2 is 4."},
      {"role": "user", "content": "And 3+3?"}]}
    ```

    Use instead: send the assistant message as the reply returned it, with its id
    (`{"type": "message", "id": "msg_0678e31e", "role": "assistant", "content": […]}`);
    or send the turn with neither ids nor the reasoning item, or chain the turn with
    `previous_response_id`.
    """

    code = "CTX041"
    name = "unpaired-reasoning-item"
    severity = "error"
    note = UNPAIRED_REASONING
    remediation = ("Send each reasoning item followed by the item its reply returned right after it, with that item's id "
                   "(msg_…, fc_…); or leave the reasoning item out along with the ids, or chain with previous_response_id.")

    def violation(self, ctx, index: int, noted: dict[str, Any], refusal: dict[str, Any]) -> Violation:
        return self.refused(
            f"reasoning item {noted['id']!r} (input item {noted['item']}) {noted['where']}, and the API takes a reasoning item "
            f"sent with its id only right before the item its reply returned after it, sent with its own id",
            index, f"/input/{noted['item']}", refusal=refusal,
            evidence={"item_id": noted["id"], "where": noted["where"],
                      "next_item": None if noted["next_item"] is None else f"/input/{noted['next_item']}"},
        )
