"""Model profiles: provider facts as data, read through one lookup."""

from ctxlint.profiles.lookup import Profile, ProfileBook

__all__ = ["Profile", "ProfileBook"]
