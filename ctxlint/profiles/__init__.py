"""Model profiles: provider facts as data, read through one lookup."""

from ctxlint.profiles.lookup import Profile, ProfileBook, passback_required, sealed_only

__all__ = ["Profile", "ProfileBook", "passback_required", "sealed_only"]
