"""What a finding says: the change it asks for, where the log alone cannot show it."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import json_report

RULE_CASES = FIXTURES / "rules"


def test_a_result_whose_call_has_no_id_either_says_the_call_needs_one():
    report = json_report(str(RULE_CASES / "CTX010" / "fail_call_and_result_both_without_id.jsonl"))
    [finding] = report["findings"]
    assert finding["message"] == ("tool message 2 has no tool_call_id, nor has the call of assistant message 1 it answers: "
                                  "give each call an id (one of the app's own where the reply gave none) and its result the same")


def test_a_result_without_id_after_a_call_with_one_says_only_that():
    report = json_report(str(RULE_CASES / "CTX010" / "fail_tool_message_without_id.jsonl"))
    assert all(finding["message"].endswith("has no tool_call_id") for finding in report["findings"] if finding["code"] == "CTX010")


def test_modified_reasoning_names_the_reply_of_the_turn_that_reused_a_call_id():
    report = json_report(str(RULE_CASES / "CTX015" / "fail_reasoning_edited_on_a_turn_reusing_a_call_id.jsonl"))
    [finding] = report["findings"]
    assert finding["message"].endswith("changed from what the model returned (turn 2 response)")
    assert finding["evidence"]["seen_in"] == "turn 2 response"
