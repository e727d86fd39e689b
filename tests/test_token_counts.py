"""Which tokenizer counts a prompt: the model's own encoding when a hash-checked copy of it is
on disk (tiktoken's cache, or the o200k_base file bpe-openai ships), else cl100k_base standing
in, named an approximation."""

from __future__ import annotations

import gzip
import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT
from ctxlint.tokens import offline_encodings
from ctxlint.tokens.counter import TokenCounter
from ctxlint.tokens.offline_encodings import EncodingUnavailable, offline_encoding
from helpers import json_report, write_records

has_o200k = pytest.mark.skipif(importlib.util.find_spec("bpe_openai") is None,
                               reason="bpe-openai (the exact-tokens extra, in the test extra) is not installed")


@pytest.fixture
def no_cached_encodings(tmp_path, monkeypatch):
    """An empty tiktoken cache, and encodings built anew for the test and after it."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    offline_encoding.cache_clear()
    yield
    offline_encoding.cache_clear()


def fake_package(tmp_path, monkeypatch, data: bytes) -> None:
    """A package on sys.path that ships `data` as its gzipped o200k_base file."""
    package = tmp_path / "site" / "vocab_shipper"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('only its files are read')\n")
    (package / "data" / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(data))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(offline_encodings, "BUNDLED_ENCODING_FILES",
                        {"o200k_base.tiktoken": ("vocab_shipper", "data/o200k_base.tiktoken.gz")})


@has_o200k
def test_openais_newer_models_are_counted_by_their_own_encoding(no_cached_encodings):
    counter = TokenCounter()
    for model, encoding in (("gpt-4o", "o200k_base"), ("gpt-5-mini", "o200k_base"), ("o3", "o200k_base"),
                            ("openai/gpt-oss-120b", "o200k_harmony"),
                            # the model's name as hosts and frameworks spell it, read as the profiles read it
                            ("openai/gpt-4o:free", "o200k_base"), ("azure/gpt-4o", "o200k_base"), ("openai:gpt-4o", "o200k_base"),
                            ("ft:gpt-4o-mini-2024-07-18:acme::9abc", "o200k_base"), ("us.openai.gpt-oss-120b-1:0", "o200k_harmony")):
        assert counter.counter_name(model) == f"tiktoken:{encoding}"
    assert offline_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    assert counter.count_text("我们明天早上出发", "gpt-4o").exact
    # other makers' models still get cl100k_base standing in, and say so
    assert counter.counter_name("deepseek-chat") == "tiktoken:cl100k_base (approximation)"


@has_o200k
def test_an_exact_count_past_the_window_is_an_error_and_one_under_it_is_clean(tmp_path, no_cached_encodings):
    """A prompt 1.5% past the window: cl100k_base standing in could only warn that it may not
    fit (it can be 15% off); the model's own count needs no margin. One 0.4% under it is clean."""
    def record(session: str, words: int) -> dict:
        return {"session_id": session, "request": {"model": "gpt-4o", "messages": [
            {"role": "user", "content": "Summarize: " + "alpha " * words}]}}

    text = "Summarize: " + "alpha " * 8_300
    own = len(offline_encoding("o200k_base").encode_ordinary(text))
    log = write_records(tmp_path / "window.jsonl", [record("over", 8_300), record("under", 8_150)])
    report = json_report(log, "--context-window", "8192")
    assert [(f["code"], f["line"], f["severity"]) for f in report["findings"]] == [("CTX006", 1, "error")]
    assert report["findings"][0]["evidence"]["counter"] == "tiktoken:o200k_base"
    assert report["summary"]["token_counters"] == {"tiktoken:o200k_base": 2}
    assert report["sessions"][0]["turns"][0]["prompt_tokens"] == own + 3 + 3  # the message's framing, the reply's


@has_o200k
def test_tools_are_counted_by_each_models_own_encoding(tmp_path, no_cached_encodings):
    """The same tool definitions sent to two models with two tokenizers are counted twice, once
    by each: a session's numbers do not depend on which other sessions share its log (nor so
    on how `--jobs` splits them)."""
    tools = [{"type": "function", "function": {"name": "lookup", "description": "查找航班 " * 40,
                                                "parameters": {"type": "object", "properties": {}}}}]

    def record(session: str, model: str) -> dict:
        return {"session_id": session, "request": {"model": model, "tools": tools,
                                                   "messages": [{"role": "user", "content": "Find a flight."}]}}

    alone = json_report(write_records(tmp_path / "alone.jsonl", [record("b", "glm-4.6")]))
    mixed = json_report(write_records(tmp_path / "mixed.jsonl", [record("a", "gpt-4o"), record("b", "glm-4.6")]))
    tokens = {session["id"]: session["turns"][0]["prompt_tokens"] for session in mixed["sessions"]}
    assert tokens["b"] == alone["sessions"][0]["turns"][0]["prompt_tokens"] != tokens["a"]


def test_a_shipped_copy_that_is_not_openais_file_is_not_used(tmp_path, monkeypatch, no_cached_encodings):
    """A copy whose hash is not the one tiktoken expects (altered, or another vocabulary) is
    refused, and the count falls back to cl100k_base, named an approximation."""
    fake_package(tmp_path, monkeypatch, b"aGVsbG8= 0\nd29ybGQ= 1\n")
    with pytest.raises(EncodingUnavailable, match="the copy of o200k_base.tiktoken in vocab_shipper does not match its hash"):
        offline_encoding("o200k_base")
    assert TokenCounter().counter_name("gpt-4o") == "tiktoken:cl100k_base (approximation)"


def test_without_a_copy_on_disk_the_count_is_an_approximation(tmp_path, monkeypatch, no_cached_encodings):
    monkeypatch.setattr(offline_encodings, "BUNDLED_ENCODING_FILES",
                        {"o200k_base.tiktoken": ("no_such_package_here", "data/o200k_base.tiktoken.gz")})
    with pytest.raises(EncodingUnavailable, match="is not on disk"):
        offline_encoding("o200k_base")
    assert TokenCounter().counter_name("gpt-4o") == "tiktoken:cl100k_base (approximation)"


@has_o200k
def test_the_shipped_copy_is_read_without_loading_its_package():
    """bpe-openai's native tokenizer is never imported: ctxlint reads its data file alone."""
    probe = ("import sys\nfrom ctxlint.tokens.counter import TokenCounter\n"
             "name = TokenCounter().counter_name('gpt-4o')\n"
             "print(name, 'bpe_openai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": "", "TIKTOKEN_CACHE_DIR": "", "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["tiktoken:o200k_base", "False"], result.stderr
