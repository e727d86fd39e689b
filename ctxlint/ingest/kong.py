"""Kong AI Gateway's log entries, as its logging plugins (file-log, http-log…) write them.

Kong logs every proxied request as one JSON object: the HTTP exchange's metadata
(`request` and `response` without their bodies, `started_at`, and `upstream_uri` and
`latencies`, which tell its entries from a request log's lines), and, for a call an AI plugin proxied, an `ai` object keyed by the plugin
(`proxy` for ai-proxy) with the call's `meta` (`request_model`, `provider_name`), `usage`
(`prompt_tokens`, `prompt_token` before Kong 3.9) and, with the plugin's `log_payloads`
on, its `payload`: the request and response bodies as JSON text (Kong 3.7 and 3.8 put the
request at `ai.payload.request`). An entry with a request payload is that call; one
without is skipped, saying so, and so is an entry of no AI call.
"""

from __future__ import annotations

from typing import Any

from ctxlint.chat import object_member
from ctxlint.ingest.record import LoggedCall, http_status, json_text
from ctxlint.ingest.responses import parse_response

PROMPT_COUNTS = ("prompt_tokens", "prompt_token")


def is_entry(obj: dict[str, Any]) -> bool:
    """A Kong log entry: every one has both (an app's own log with an `ai` member is not one)."""
    return "upstream_uri" in obj and "latencies" in obj


def call(obj: dict[str, Any]) -> LoggedCall | str:
    """The call an entry logs, or why it holds none to read."""
    found = _plugin(obj)
    if found is None:
        return "Kong Gateway log entry of no AI call"
    name, plugin = found
    payload, shared = object_member(plugin, "payload"), object_member(obj["ai"], "payload")
    member, request = (f"/ai/{name}/payload/request", payload["request"]) if "request" in payload else ("/ai/payload/request", shared.get("request"))
    if request is None:
        return "Kong AI Gateway log entry without its payloads (the AI plugin's log_payloads off)"
    body = json_text(request)
    meta = object_member(plugin, "meta")
    if isinstance(body, dict) and "model" not in body and isinstance(meta.get("request_model"), str):
        body = {**body, "model": meta["request_model"]}
    usage = object_member(plugin, "usage")
    counted = next((usage[count] for count in PROMPT_COUNTS if isinstance(usage.get(count), int)), None)
    status = http_status(object_member(obj, "response").get("status"))
    started = obj.get("started_at")
    return LoggedCall(body, member, parse_response(json_text(payload.get("response")), status), counted,
                      started / 1000 if isinstance(started, (int, float)) and not isinstance(started, bool) else None)


def _plugin(obj: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The AI plugin's entry in the log's `ai` object (its name, its object), if any."""
    ai = obj.get("ai")
    if not isinstance(ai, dict):
        return None
    return next(((name, value) for name, value in ai.items() if name != "payload" and isinstance(value, dict)
                 and any(part in value for part in ("meta", "usage", "payload"))), None)
