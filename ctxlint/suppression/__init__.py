"""Findings the user chose not to see: per-file ignores from config, and a baseline file."""
