"""Model profiles: provider facts as data, read through one lookup."""

from ctxlint.profiles.lookup import Profile, ProfileBook, passback_required, sealed_only, tool_loop_start

__all__ = ["Profile", "ProfileBook", "passback_required", "sealed_only", "tool_loop_start"]
