"""Every rule case under fixtures/rules/: exactly the expected (code, line) findings, nothing else."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import code_lines, expected_of, json_report

CASES = sorted((FIXTURES / "rules").glob("*/*.jsonl"))


def test_every_rule_has_failing_and_passing_cases():
    from ctxlint.rules import RULES

    for code in RULES:
        names = [c.stem for c in CASES if c.parent.name == code]
        assert any(n.startswith("fail_") for n in names), f"{code} has no failing case"
        assert any(n.startswith("pass_") for n in names), f"{code} has no passing case"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_case(case):
    report = json_report(str(case), "--extend-select", case.parent.name)  # an opt-in rule's cases select it
    assert code_lines(report) == expected_of(case)
    if case.stem.startswith("fail_"):
        assert any(code == case.parent.name for code, _ in expected_of(case))


@pytest.mark.parametrize(("case", "seen_as"), [
    ("CTX016/fail_text_reply_lost", [("CTX003", 2)]),  # the two user messages the lost reply stood between
    ("CTX016/fail_anthropic_tool_use_turn_dropped", [("CTX001", 2)]),  # the result left without its call
    ("CTX016/fail_empty_tool_call_turn_filtered", [("CTX001", 2)]),  # the call turn kept empty, its result kept
    ("CTX016/fail_gemini_function_call_turn_dropped", [("CTX001", 2)]),  # results named by function alone
    ("CTX016/fail_reply_dropped_after_a_question_kept_unwrapped_without_a_key", [("CTX003", 5)]),
])
def test_a_defect_two_rules_see_is_reported_by_the_rule_of_its_cause_and_by_the_other_without_it(case, seen_as):
    """One defect, one finding: CTX016 (the turn lost) where it sees the loss; the rule that
    sees its symptom reports it when CTX016 is not selected."""
    path = str(FIXTURES / "rules" / f"{case}.jsonl")
    assert [code for code, _ in code_lines(json_report(path))] == ["CTX016"]
    assert code_lines(json_report(path, "--ignore", "CTX016")) == seen_as


def test_a_reply_cut_with_the_whole_history_is_the_first_messages_lost_and_the_reply_lost_without_ctx008():
    """The history not sent (the prompt and the newest message alone): CTX008's first messages
    lost; the reply cut with them is that defect, and CTX016's where CTX008 is not selected."""
    path = str(FIXTURES / "rules" / "CTX008" / "fail_no_prompt_same_model_without_history.jsonl")
    assert code_lines(json_report(path)) == [("CTX008", 2)]
    assert code_lines(json_report(path, "--ignore", "CTX008")) == [("CTX016", 2)]


def test_a_stored_history_defect_at_several_messages_of_one_request_is_one_finding_that_names_them():
    """Two stored replies without the reasoning the model needs back, two calls of one turn left
    unanswered: one instance of the app's way of storing history, one finding naming the others."""
    stored = json_report(str(FIXTURES / "rules" / "CTX004" / "fail_glm_preserved_thinking_stored_without_reasoning.jsonl"))["findings"]
    assert [(f["message_index"], f["evidence"]["also_at"]) for f in stored] == [(2, [{"message_index": 4, "pointer": "/messages/4"}])]
    assert stored[0]["message"].endswith("(the same at message 4)")
    calls = json_report(str(FIXTURES / "rules" / "CTX009" / "fail_one_of_parallel_results_sent_as_a_user_message.jsonl"))["findings"]
    unanswered = [f for f in calls if f["code"] == "CTX002"]
    assert [(f["tool_call_id"], f["evidence"]["also_at"]) for f in unanswered] == [
        ("call_r", [{"message_index": 2, "tool_call_id": "call_o", "pointer": "/messages/2/tool_calls/2"}])]


def test_a_function_call_turn_gemini_refuses_after_a_model_turn_is_ctx036s_and_ctx024s_without_it():
    """Two model turns in a row, the second making calls: the Gemini API refuses it (CTX036);
    CTX024's warning about the two assistant messages where CTX036 is not selected. A
    history that opens with a call turn, no other rule sees."""
    path = str(FIXTURES / "rules" / "CTX036" / "fail_gemini_function_call_turn_right_after_a_model_turn.jsonl")
    assert code_lines(json_report(path)) == [("CTX036", 1), ("CTX036", 3)]
    assert code_lines(json_report(path, "--ignore", "CTX036")) == [("CTX024", 1)]  # which explains the 400 then


def test_a_temperature_claude_refuses_with_thinking_on_or_off_is_ctx037s_and_ctx005s_without_it():
    """Claude Opus 4.8 with adaptive thinking and temperature 0: one defect, the setting the
    model refuses in any case (CTX037); CTX005's thinking conflict where CTX037 is not selected."""
    path = str(FIXTURES / "rules" / "CTX037" / "fail_claude_opus_4_7_and_newer_sent_a_temperature.jsonl")
    assert ("CTX005", 2) not in code_lines(json_report(path))
    assert code_lines(json_report(path, "--ignore", "CTX037")) == [("CTX005", 2)]


@pytest.mark.parametrize(("case", "line", "error_class"), [
    # the history's calls sent without tools
    ("CTX039/fail_agent_last_step_at_its_step_limit_sent_without_tools", 3, "tool definitions"),
    # a chain to a reply made with store false
    ("CTX040/fail_chained_to_a_reply_made_with_store_false", 2, "unstored reference"),
    # a reasoning item sent by its id before a message without one
    ("CTX041/fail_assistant_text_stored_without_its_message_id", 2, "thinking/reasoning"),
    # a message item sent by its id without the reasoning item before it
    ("CTX004/fail_responses_message_item_without_its_reasoning", 2, "thinking/reasoning"),
    # one reply's text and function call stored as two Gemini model turns
    ("CTX036/fail_gemini_function_call_turn_right_after_a_model_turn", 1, "message order"),
    # two input items under one id
    ("CTX042/fail_two_input_items_under_one_id", 1, "item id"),
    # a system message in the conversation right before the user's next message
    ("CTX036/fail_system_message_in_the_conversation_not_before_the_assistant_turn", 1, "message order"),
    # a fifth prompt-cache marker, kept from an earlier turn
    ("CTX043/fail_marker_added_to_each_new_user_message", 3, "cache breakpoints"),
    # MCP tool names with a dot and a slash
    ("CTX044/fail_tool_names_openai_refuses", 1, "tool name"),
    # an MCP server of 130 tools connected mid-session
    ("CTX045/fail_tools_and_calls_past_what_openai_takes", 2, "tool count"),
    # a full-page capture taller than 8000 pixels
    ("CTX046/fail_full_page_captures", 1, "image"),
    # a Responses API call_id of 67 characters
    ("CTX034/fail_responses_call_id_past_64_characters", 1, "call id"),
    # max_tokens kept at 32000 when the session fell back to gpt-4o
    ("CTX047/fail_output_limit_above_what_the_model_writes", 2, "output limit"),
    # an MCP tool's array without items
    ("CTX048/fail_array_without_items", 2, "tool schema"),
    # an agent's stop sequences kept when the session moved to gpt-5-mini
    ("CTX037/fail_stop_sequences_sent_to_a_reasoning_model", 2, "setting"),
    # a turn of parallel calls answered one content per response, for Vertex AI
    ("CTX049/fail_parallel_responses_split_for_vertex", 2, "message order"),
])
def test_a_logged_400_of_a_defect_a_rule_names_is_that_rules_and_ctx022s_without_it(case, line, error_class):
    """The request's 400 is logged: one defect, the rule's; CTX022 reports the error,
    classified, when that rule is not selected."""
    path = str(FIXTURES / "rules" / f"{case}.jsonl")
    assert ("CTX022", line) not in code_lines(json_report(path))
    errors = [f for f in json_report(path, "--select", "CTX022")["findings"] if f["line"] == line]
    assert [f["evidence"]["class"] for f in errors] == [error_class]
