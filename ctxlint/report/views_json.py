"""JSON rendering of the send record (`ctxlint show --format json`)."""

from __future__ import annotations

import orjson

from ctxlint.report.redact import placeholder
from ctxlint.views.send_record import SendRecord


def render_send_record_json(record: SendRecord, *, redact: bool) -> str:
    document = {
        "session": record.session.id,
        "turns": [{"turn": n, "prompt_tokens": tokens, "counter": counter} for n, (tokens, counter) in sorted(record.turn_tokens.items())],
        "first_loss": {"message": record.first_loss[0], "turn": record.first_loss[1]} if record.first_loss else None,
        "unlogged_losses": [{"turn": f.turn, "code": f.code, "message": f.message} for f in record.unlogged],  # quotes redacted with the report
        "messages": [
            {
                "message": entry.row, "role": entry.role, "from": entry.origin, "tokens": entry.tokens, "counter": entry.counter,
                "excerpt": placeholder(entry.excerpt) if redact else entry.excerpt, "tool_call_ids": list(entry.tool_call_ids),
                "turns": {str(n): {"status": s.kind, "index": s.index, "changed": list(s.changed), "legal": s.legal, "why": s.why}
                          for n, s in sorted(entry.statuses.items())},
            }
            for entry in record.entries
        ],
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
