"""Model profiles: provider facts as data, read through one lookup."""

from ctxlint.profiles.lookup import Profile, ProfileBook, makers_api_unanswered, passback_required, refused_empty, sealed_only, tool_loop_start

__all__ = ["Profile", "ProfileBook", "makers_api_unanswered", "passback_required", "refused_empty", "sealed_only", "tool_loop_start"]
