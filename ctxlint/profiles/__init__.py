"""Model profiles: provider facts as data, read through one lookup."""

from ctxlint.profiles.lookup import Profile, ProfileBook, accepted_parts, call_id_format, input_noted, makers_api_unanswered, passback_required, refused_empty, refused_orders, refused_prefill, refused_settings, refused_input_item, refused_unstored, refused_without_tools, responses_body, refuses_every_prefill, sealed_only, settings_sent, TOOLS_UNDECLARED, tool_loop_start, unique_call_ids

__all__ = ["Profile", "ProfileBook", "accepted_parts", "call_id_format", "input_noted", "makers_api_unanswered", "passback_required", "refused_empty", "refused_orders", "refused_prefill", "refused_settings", "refused_input_item", "refused_unstored", "refused_without_tools", "responses_body", "refuses_every_prefill", "sealed_only", "settings_sent", "TOOLS_UNDECLARED", "tool_loop_start", "unique_call_ids"]
