"""Model names as real traffic spells them resolve to the profile (and window) of the model."""

from __future__ import annotations

import orjson
import pytest

from conftest import FIXTURES
from ctxlint.profiles.lookup import ProfileBook
from helpers import json_report, write_records


@pytest.mark.parametrize("name, profile, window", [
    ("zai-org/GLM-4.6:cerebras", "glm-4.6", None),  # its window is models.dev data, which moves
    ("z-ai/glm-4.6", "glm-4.6", None),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1", 131_072),
    ("gpt-4o-2024-08-06", "gpt-4o", 128_000),
    ("azure/gpt-4o", "gpt-4o", 128_000),
    ("ft:gpt-4o-mini-2024-07-18:acme::9abc", "gpt-4o", 128_000),  # an OpenAI fine-tune has its base model's window
    ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-without-thinking", 200_000),
    ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude", 200_000),  # a Bedrock cross-region profile
    ("claude-haiku-4-5@20251001", "claude", 200_000),  # Vertex AI's versioned name
    ("claude-sonnet-4-6", "claude-4.6", 1_000_000),  # the 4.6 models and all newer serve 1M tokens, not 200K
    ("anthropic/claude-opus-4.7", "claude-adaptive-only", 1_000_000),
    ("global.anthropic.claude-opus-4-7", "claude-adaptive-only", 1_000_000),
    ("claude-sonnet-5", "claude-adaptive", 1_000_000),
    ("claude-fable-5-1", "claude-always-thinking", 1_000_000),
    ("claude-sonnet-4-5-20250929", "claude", 200_000),
    ("gpt-4-0613", "gpt-4", 8_192),  # OpenAI's older chat models never think; their windows are models.dev's
    ("gpt-3.5-turbo", "gpt-4", 16_385),
    ("gpt-5.5-2026-04-23", "gpt-5", 1_050_000),  # the GPT-5 family's windows differ by model
    ("gpt-5-mini", "gpt-5", 400_000),
    ("Doubao-pro-32k", "doubao", 32_768),
    ("moonshot-v1-128k", "moonshot-v1", 131_072),
    # Volcengine Ark dashes the version before its YYMMDD date
    ("glm-4-7-251222", "glm-4.7", 204_800),
    ("kimi-k2-5-260127", "kimi-k2-thinking", 262_144),  # Kimi K2.5, not K2: its reasoning must come back
    ("deepseek-v3-2-251201", "deepseek-chat", None),
    ("doubao-seed-1-6-thinking-250715", "doubao-seed-1.6-thinking", 256_000),
    ("kimi-k2-250711", "kimi-k2", 262_144),
    ("qwen3-235b-a22b-250101", "qwen3", None),  # 3-235 is no version
    ("accounts/fireworks/models/kimi-k2p5", "kimi-k2-thinking", 262_144),  # Fireworks spells the dot as p
    ("fireworks_ai/accounts/fireworks/models/glm-4p6", "glm-4.6", 204_800),
    ("zai-org/GLM-4.5-Air-FP8", "glm-4.5", 131_072),  # a quantized checkpoint of GLM-4.5-Air
    ("us.deepseek.r1-v1:0", "deepseek-r1", 131_072),  # Bedrock names DeepSeek's models without "deepseek-"
    ("openai:gpt-4o", "gpt-4o", 128_000),  # Pydantic AI names a model after its provider
    ("google-gla:gemini-2.5-pro", "gemini-2.5-pro", None),
    ("groq:moonshotai/kimi-k2-instruct", "kimi-k2", 262_144),
])
def test_names_resolve_to_their_model(name, profile, window):
    found = ProfileBook().lookup(name)
    assert found.id == profile and found.context_window == (window or found.context_window) and found.context_window


def test_a_window_from_models_dev_is_the_makers_else_the_largest_a_host_serves():
    """A host that serves a model with a smaller window has its own limit, not the
    model's: reading it would flag prompts the model's maker serves."""
    book = ProfileBook()
    assert book.lookup("glm-4.6").window_source == "models.dev (zai)"
    hosted = book.lookup("openrouter/deepseek/deepseek-chat-v3.1")
    assert hosted.context_window >= 128_000 and hosted.window_source.startswith("models.dev")  # a 32K host is listed too


def test_unknown_names_stay_unknown():
    for name in ("ep-20250101123456-abcde", "my-company-bot", ""):
        assert not ProfileBook().lookup(name).known


def test_an_offline_count_of_cjk_text_is_as_far_off_as_the_models_tokenizer_is_frugal(tmp_path):
    """10,550 Chinese characters against an 8K window, no usage logged: cl100k_base counts
    11,198 tokens. Qwen documents a token a Han character, so the count stands (over the
    window, an error); DeepSeek documents 0.6, so the prompt may fit (a warning); English
    text keeps the counter's 15%."""
    from ctxlint.tokens.counter import TokenCount

    chinese = [{"role": "user", "content": "请整理会议纪要中的行动项。" * 10}]
    count = TokenCount(100, "tiktoken:cl100k_base (approximation)")
    assert count.counting_error_of(chinese, 1.0) == count.counting_error == 0.15
    assert round(count.counting_error_of(chinese, 0.6), 2) == 0.8
    assert round(count.counting_error_of(chinese, None), 2) == 0.8  # undocumented: as frugal as the most frugal known
    assert count.counting_error_of([{"role": "user", "content": "Summarize the meeting notes."}], None) == 0.15
    assert TokenCount(100, "server").counting_error_of(chinese, 0.6) == 0.0
    case = FIXTURES / "rules" / "CTX006" / "fail_chinese_prompt_over_the_window_by_cl100k_only_may_not_fit.jsonl"
    line = orjson.loads(case.read_bytes().splitlines()[0])
    for model, severity in (("qwen-turbo", "error"), ("deepseek-chat", "warning")):
        line["request"]["model"] = model
        log = write_records(tmp_path / f"{model}.jsonl", [line])
        assert [(f["code"], f["severity"]) for f in json_report(log, "--context-window", "8192")["findings"]] == [("CTX006", severity)]


def test_a_body_past_the_window_is_flagged_though_its_logged_usage_counts_less(tmp_path):
    """A reply's usage that counts far fewer tokens than its request's body holds is not that
    body's, or a gateway cut the prompt to fit (OpenRouter's middle-out): the body is past
    the window all the same. A body the offline count cannot show past the window (with the
    counter's 15%: cl100k_base stands in for Mistral's tokenizer) keeps the server's count."""
    def record(words: int, usage: int) -> dict:
        return {"session_id": f"s{words}-{usage}", "request": {"model": "mistral-large-latest", "messages": [
                    {"role": "user", "content": "Summarize these notes: " + "the quarterly plan moves two launches " * (words // 6)}]},
                "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Two launches move."},
                                          "finish_reason": "stop"}], "usage": {"prompt_tokens": usage, "completion_tokens": 5}}}
    log = write_records(tmp_path / "usage.jsonl", [record(12_000, 900), record(12_000, 12_100), record(8_500, 900), record(5_000, 900)])
    findings = json_report(log, "--context-window", "8192")["findings"]
    assert [(f["code"], f["line"], f["evidence"]["counter"]) for f in findings] == [
        ("CTX006", 1, "tiktoken:cl100k_base (approximation)"), ("CTX006", 2, "server")]
    assert "though the logged usage counts 900" in findings[0]["message"] and findings[0]["evidence"]["server_prompt_tokens"] == 900


def test_every_fact_names_a_source_and_every_family_it_matches_is_listed():
    """The profile data's facts each cite sources its `sources` table holds, and a `match`
    given by name is a family of model_families: a typo would silently match nothing."""
    from importlib import resources

    table = orjson.loads(resources.files("ctxlint.profiles").joinpath("models.json").read_bytes())
    cited, families = [], []

    def walk(value):
        if isinstance(value, dict):
            cited.extend(value.get("sources", []) if isinstance(value.get("sources"), list) else [])
            if isinstance(value.get("match"), str):
                families.append(value["match"])
            for member in value.values():
                walk(member)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({name: part for name, part in table.items() if name != "sources"})
    assert cited and set(cited) <= set(table["sources"])
    assert families and set(families) <= set(table["model_families"])
