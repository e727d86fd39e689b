"""Prompt token counts, each with the name of the counter that produced it."""

from ctxlint.tokens.counter import TokenCount, TokenCounter

__all__ = ["TokenCount", "TokenCounter"]
