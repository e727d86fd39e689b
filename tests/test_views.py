"""Triage views: `ctxlint show` (the send record of one session) and `ctxlint stats`."""

from __future__ import annotations

import orjson
import pytest

from conftest import FIXTURES
from helpers import run_cli, write_records

DEMO = str(FIXTURES / "demo" / "broken-agent.jsonl")


def test_show_marks_what_each_turn_kept_changed_and_lost():
    result = run_cli("show", DEMO, "--session", "trip-42")
    assert result.exit_code == 0
    text = result.stdout
    assert "turn 2: message #3 (assistant, turn 1 response) sent modified (reasoning_content) — not legal: CTX004" in text
    assert "turn 3: message #1 (system, turn 1 request) dropped — not legal: CTX008" in text
    assert "turn 3: message #5 (tool, turn 2 request) dropped — legal: trimmed" in text
    assert "dropping reasoning here is allowed by deepseek-reasoner" in text
    assert "first loss: message #3, at turn 2" in text


def test_show_json_has_per_message_per_turn_status_and_tokens():
    record = orjson.loads(run_cli("show", DEMO, "--session", "trip-42", "--format", "json").stdout)
    assert record["first_loss"] == {"message": 3, "turn": 2}
    assert [t["prompt_tokens"] for t in record["turns"]] == [412, 655, 301]
    first_user = record["messages"][1]
    assert first_user["role"] == "user" and first_user["tokens"] > 0
    assert {n: s["status"] for n, s in first_user["turns"].items()} == {"1": "sent", "2": "sent", "3": "dropped"}
    assert first_user["turns"]["3"]["legal"] is False
    system = record["messages"][0]
    assert system["turns"]["2"] == {**system["turns"]["2"], "status": "modified", "changed": ["content"], "legal": True}


def test_show_a_prefix_and_an_unknown_session():
    assert run_cli("show", DEMO, "--session", "chat").exit_code == 0
    result = run_cli("show", DEMO, "--session", "nope")
    assert result.exit_code == 2 and "no session 'nope'" in result.stderr and "trip-42" in result.stderr


def test_show_redact_prints_no_message_text():
    result = run_cli("show", DEMO, "--session", "trip-42", "--redact")
    assert "TripBot" not in result.stdout and "Rome" not in result.stdout and "<redacted" in result.stdout


def test_stats_per_model_and_session():
    document = orjson.loads(run_cli("stats", DEMO, "--format", "json").stdout)
    models = {m["name"]: m for m in document["models"]}
    assert set(models) == {"deepseek-reasoner", "glm-5.1"}
    trip = models["deepseek-reasoner"]
    assert trip["requests"] == 3 and trip["prompt_tokens"] == {"p50": 412, "p95": 655, "max": 655, "total": 1368}
    assert 0 < trip["resent_share"] < 1 and 0 < trip["tool_result_share"] < 1
    assert trip["peak_window_ratio"] == round(655 / 1_000_000, 4)
    text = run_cli("stats", DEMO).stdout
    assert "per model" in text and "deepseek-reasoner" in text and "prompt tokens by server" in text


def test_stats_count_every_request_of_a_log_written_newest_first():
    """An export lists its records newest first: each session's numbers are its own,
    whatever order its sessions are assembled and checked in."""
    log = str(FIXTURES / "readers" / "langsmith_runs_answer_dropped_from_thread_memory.jsonl")
    document = orjson.loads(run_cli("stats", log, "--format", "json").stdout)
    assert sorted((s["name"], s["requests"], s["turns"]) for s in document["sessions"]) == [("thread-7", 4, 2), ("thread-8", 2, 1)]
    assert [(m["name"], m["requests"]) for m in document["models"]] == [("gpt-4o", 6)]


def test_show_names_a_lost_reply_the_log_never_held():
    """A reply to tool results that was never logged nor sent back has no row: the record
    names the loss apart, text and JSON, and a clean session has none."""
    case = str(FIXTURES / "rules" / "CTX016" / "fail_reply_to_tool_results_not_stored.jsonl")
    session = case + ":1"
    record = orjson.loads(run_cli("show", case, "--session", session, "--format", "json").stdout)
    assert [(loss["turn"], loss["code"]) for loss in record["unlogged_losses"]] == [(3, "CTX016")]
    text = run_cli("show", case, "--session", session).stdout
    assert "lost, and in no row" in text and "turn 3: CTX016: the model's reply to the tool results that ended turn 2 is missing" in text
    assert orjson.loads(run_cli("show", DEMO, "--session", "trip-42", "--format", "json").stdout)["unlogged_losses"] == []


def test_show_tells_a_summary_from_a_trim():
    log = str(FIXTURES / "views" / "summarized-history.jsonl")
    record = orjson.loads(run_cli("show", log, "--session", "k", "--format", "json").stdout)
    statuses = {m["message"]: m["turns"].get("3", {}).get("status") for m in record["messages"]}
    assert statuses == {1: "sent", 2: "sent", 3: "summarized", 4: "summarized", 5: "summarized", 6: "sent", 7: "sent"}
    assert record["messages"][2]["turns"]["3"]["why"] == "replaced by message 2 of this request"
    assert record["first_loss"] is None
    assert run_cli("check", log).exit_code == 0  # the first turn's constraints are kept: nothing to report


def test_show_blames_the_dropped_summary_not_the_message_it_replaced():
    case = str(FIXTURES / "rules" / "CTX008" / "fail_summary_dropped_or_too_thin.jsonl")
    text = run_cli("show", case, "--session", "cut-s1").stdout
    assert "turn 3: message #2 (user, turn 1 request) replaced by a summary — legal" in text
    assert "turn 4: message #6 (system, turn 3 request) dropped — not legal: CTX008: the summary that restated" in text
    assert "first loss: message #6, at turn 4" in text
    restated = run_cli("show", str(FIXTURES / "rules" / "CTX008" / "pass_summary_restates_first_user_message.jsonl"), "--session", "s1").stdout
    assert "not legal" not in restated and "first loss" not in restated


LEFT_BEHIND = [
    ("pass_edited_user_message_branches", "e2", [
        "turn 3: message #4 (user, turn 2 request) dropped — legal: left behind: the conversation branched at message 3 "
        "(an edit resent from there, or a side request it went on without)"]),
    ("pass_side_requests_on_the_history_left_out_by_the_conversation", "chat-7", [
        "turn 3: message #4 (user, turn 2 request) dropped — legal: left behind: the conversation branched at message 3"]),
    ("pass_side_request_on_the_history_while_the_tool_loop_goes_on", "job-12", [
        "turn 3: message #5 (assistant, turn 2 response) dropped — legal: not in this side request, asked on the history as it stood",
        "turn 4: message #6 (user, turn 3 request) dropped — legal: left behind with the side request of turn 3"]),
]


@pytest.mark.parametrize("case, session, lines", LEFT_BEHIND, ids=[case for case, _, _ in LEFT_BEHIND])
def test_show_says_what_an_edit_or_a_side_request_left_behind(case, session, lines):
    text = run_cli("show", str(FIXTURES / "rules" / "CTX016" / f"{case}.jsonl"), "--session", session).stdout
    for line in lines:
        assert line in text
    assert "not legal" not in text


def test_show_marks_a_lost_text_reply_as_the_loss_check_reports():
    """The text reply CTX016 reports as lost is not legal in the send record either (it
    read "trimmed" before: a text turn carries no call id to tie the finding to it)."""
    text = run_cli("show", str(FIXTURES / "rules" / "CTX016" / "fail_text_reply_lost.jsonl"), "--session", "s1").stdout
    assert "turn 2: message #3 (assistant, turn 1 response) dropped — not legal: CTX016" in text
    assert "first loss: message #3, at turn 2" in text


def test_show_marks_a_blank_message_where_it_is_first_sent():
    """An empty reply stored as it came is sent verbatim, and the API refuses it (CTX029):
    not legal at the request that first sends it, legal nowhere after it either."""
    text = run_cli("show", str(FIXTURES / "rules" / "CTX029" / "fail_anthropic_empty_reply_stored_as_it_came.jsonl"), "--session", "q3").stdout
    assert "turn 2: message #3 (assistant, turn 1 response) sent — not legal: CTX029" in text
    assert "first loss: message #3, at turn 2; later turns carried it as it was" in text
    blank_user = run_cli("show", str(FIXTURES / "rules" / "CTX029" / "fail_anthropic_empty_user_message_refused_with_its_error.jsonl"),
                         "--session", "ue").stdout
    assert "turn 2: message #4 (user, turn 2 request) sent — not legal: CTX029" in blank_user


def test_show_agrees_with_check_on_reasoning():
    """A tool-call turn first sent without the reasoning its model requires is not legal
    where it is first sent (CTX004); a reply sent back with one of its two copies of the
    reasoning (OpenRouter's reasoning_details kept, reasoning dropped) is legal, as check
    finds nothing there."""
    text = run_cli("show", str(FIXTURES / "rules" / "CTX004" / "fail_glm5_tool_turn_without_reasoning.jsonl"), "--session", "s1").stdout
    assert "turn 1: message #3 (assistant, turn 1 request) sent — not legal: CTX004" in text and "message #4" not in text
    assert "first loss: message #3, at turn 1" in text
    kept = run_cli("show", str(FIXTURES / "rules" / "CTX015" / "pass_openrouter_details_verbatim_reasoning_dropped.jsonl"), "--session", "s1").stdout
    assert "sent modified (reasoning) — legal: its reasoning came back as reasoning_details" in kept and "not legal" not in kept


def test_show_follows_a_question_kept_unwrapped_to_where_it_is_cut():
    """A question sent wrapped in retrieved passages and kept as the user's words is the same
    message, modified, not a new one beside a summary; when keep-last-N cuts it, the row says
    CTX008."""
    case = FIXTURES / "rules" / "CTX008" / "fail_question_kept_unwrapped_then_cut_by_keep_last_n.jsonl"
    record = orjson.loads(run_cli("show", str(case), "--session", "refund-chat-7", "--format", "json").stdout)
    first_user = record["messages"][1]
    statuses = {n: (s["status"], s["legal"]) for n, s in first_user["turns"].items()}
    assert statuses == {"1": ("sent", True), "2": ("modified", True), "3": ("sent", True), "4": ("sent", True), "5": ("dropped", False)}
    assert first_user["turns"]["2"]["why"].startswith("kept as the app stores it")
    # one finding for the system prompt and the question one trim cut, on both rows
    assert first_user["turns"]["5"]["why"].startswith("CTX008: the session's first system message (turn 1, message 0) and first user message, as the app stored it at turn 2")
    assert record["messages"][0]["turns"]["5"]["why"] == first_user["turns"]["5"]["why"]
    assert len(record["messages"]) == 11  # no row of its own for the question as stored


def test_show_keeps_a_result_on_its_row_when_a_window_cuts_its_call():
    """A Gemini response whose call a keep-last-N window cut is the result the row already
    holds, sent again at the head of the window, not a new message."""
    case = FIXTURES / "rules" / "CTX008" / "fail_gemini_window_opening_at_function_results.jsonl"
    record = orjson.loads(run_cli("show", str(case), "--session", "g1", "--format", "json").stdout)
    porto = [m for m in record["messages"] if m["role"] == "tool" and "Ribeira" in m["excerpt"]]
    assert len(porto) == 1
    assert {n: s["status"] for n, s in porto[0]["turns"].items()} == {"4": "sent", "5": "sent"}
    # what the window cut is trimmed, not summarized: the assistant message after that result is the
    # reply turn 4 got (not logged), not a summary put in the history
    cut = [m for m in record["messages"] if m["turns"].get("4", {}).get("status") == "sent" and m is not porto[0]]
    assert {m["turns"]["5"]["status"] for m in cut if m["role"] not in ("system", "user") or "Porto" in m["excerpt"]} == {"dropped"}


def test_show_reads_a_window_of_calls_as_a_trim_not_a_summary():
    """No replies logged, keep-last-N: the new call turn a window opens with is no summary
    of what it cut (a summary is a text); the messages cut are trimmed, or lost against
    the rules where check reports them (the first system and user messages, CTX008)."""
    case = str(FIXTURES / "rules" / "CTX008" / "fail_keep_last_n_cut_the_prompt_with_no_replies_logged.jsonl")
    record = orjson.loads(run_cli("show", case, "--session", "qd-7", "--format", "json").stdout)
    statuses = {m["message"]: (m["turns"]["3"]["status"], m["turns"]["3"]["legal"]) for m in record["messages"] if "3" in m["turns"]}
    assert statuses == {1: ("dropped", False), 2: ("dropped", False), 3: ("dropped", True), 4: ("dropped", True), 5: ("sent", True), 6: ("sent", True)}


def test_show_blames_every_result_of_a_call_turn_stored_as_user_messages(tmp_path):
    """Two results of one call turn stored as user messages: both rows say CTX009, the
    finding about that turn's calls (the second read as replaced by a summary before)."""
    calls = {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{city}", "type": "function", "function": {"name": "weather", "arguments": f'{{"city": "{city}"}}'}} for city in ("Paris", "Rome")]}
    results = [{"role": "tool", "tool_call_id": f"call_{city}", "content": f"{city}: sunny, 2{n}C"} for n, city in enumerate(("Paris", "Rome"))]
    opening = [{"role": "system", "content": "You are a travel assistant."}, {"role": "user", "content": "Weather in Paris and Rome today?"}]
    reply = {"role": "assistant", "content": "Both sunny: Paris 20C, Rome 21C."}
    stored = [{"role": "user", "content": result["content"]} for result in results]
    records = [{"session_id": "s1", "request": {"model": "gpt-4o", "messages": messages},
                "response": {"choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]}}
               for messages, answer in [(opening, calls), (opening + [calls, *results], reply),
                                        (opening + [calls, *stored, reply, {"role": "user", "content": "Which is warmer tomorrow?"}], reply)]]
    text = run_cli("show", write_records(tmp_path / "log.jsonl", records), "--session", "s1", "--no-color").stdout
    for row in (4, 5):
        assert f"turn 3: message #{row} (tool, turn 2 request) dropped — not legal: CTX009" in text
    assert "summary" not in text.split("what changed")[1]


def test_show_puts_the_finding_about_a_dropped_turn_on_its_row():
    """A call turn left out with its result kept: one defect (CTX016, the turn missing; CTX001
    would see its result without its call), about the turn's row, not listed as a loss no
    row shows."""
    case = str(FIXTURES / "rules" / "CTX016" / "fail_anthropic_tool_use_turn_dropped.jsonl")
    text = run_cli("show", case, "--session", "a", "--no-color").stdout
    assert "turn 2: message #2 (assistant, turn 1 response) dropped — not legal: CTX016: " in text and "(also" not in text
    assert "in no row" not in text
    record = orjson.loads(run_cli("show", case, "--session", "a", "--format", "json").stdout)
    assert record["unlogged_losses"] == []


def test_an_empty_tool_calls_list_sent_back_is_marked_not_legal_where_it_is_first_sent():
    """An assistant message stored with `tool_calls: []` (CTX030): the view marks it × at the
    request that first sends it, and later turns carry it as it was."""
    text = run_cli("show", str(FIXTURES / "rules" / "CTX030" / "fail_reply_stored_with_an_empty_tool_calls_list.jsonl"), "--session", "shop").stdout
    assert "turn 2: message #3 (assistant, turn 1 response) sent — not legal: CTX030" in text
    assert "first loss: message #3, at turn 2; later turns carried it as it was" in text


def test_a_message_legal_where_first_sent_and_refused_after_a_switch_of_model_is_marked_there():
    """An image sent to a vision model (legal), then sent again in the history to DeepSeek's
    text-only API (CTX032), and another backend's call id sent to Mistral's API (CTX034, the
    call and its result): not legal at the request that moved the conversation, in the
    table and in what changed."""
    image = run_cli("show", str(FIXTURES / "rules" / "CTX032" / "fail_image_in_the_history_sent_to_a_text_only_api.jsonl"), "--session", "switch").stdout
    assert "turn 2: message #2 (user, turn 1 request) sent — not legal: CTX032" in image
    ids = run_cli("show", str(FIXTURES / "rules" / "CTX034" / "fail_tool_call_id_mistral_does_not_take.jsonl"), "--session", "switch").stdout
    assert "turn 3: message #3 (assistant, turn 1 response) sent — not legal: CTX034" in ids
    assert "turn 3: message #4 (tool, turn 2 request) sent — not legal: CTX034" in ids


def test_a_message_sent_in_a_place_the_api_refuses_is_marked_where_it_is_sent_so():
    """A prefill Claude Sonnet 4.6 refuses (CTX035) and a user message right after tool
    results to Mistral (CTX036): not legal at the request that first sends them so, where
    the finding is (later requests carrying the pair are not reported again)."""
    prefill = run_cli("show", str(FIXTURES / "rules" / "CTX035" / "fail_request_ends_with_an_assistant_message_the_model_refuses.jsonl"),
                      "--session", "json-prefill").stdout
    assert "turn 1: message #3 (assistant, turn 1 request) sent — not legal: CTX035" in prefill
    order = run_cli("show", str(FIXTURES / "rules" / "CTX036" / "fail_user_message_right_after_tool_results_to_mistral.jsonl"),
                    "--session", "cancelled").stdout
    assert "turn 1: message #5 (user, turn 1 request) sent — not legal: CTX036" in order
    assert "turn 2: message #5" not in order


@pytest.mark.parametrize(("case", "session", "row", "turn"), [
    ("fail_date_written_into_the_system_prompt_at_each_request", "s1", 0, "3"),
    ("fail_reminder_put_into_a_message_and_taken_out_at_the_next_request", "s3", 5, "4"),
])
def test_show_marks_the_edit_that_broke_a_thinking_block_not_legal(case, session, row, turn):
    """On a model that binds thinking blocks to what came before them, the system prompt
    rebuilt or a message edited is the edit CTX038 reports: not legal there, as show says."""
    record = orjson.loads(run_cli("show", str(FIXTURES / "rules" / "CTX038" / f"{case}.jsonl"), "--session", session, "--format", "json").stdout)
    status = record["messages"][row]["turns"][turn]
    assert (status["status"], status["legal"]) == ("modified", False) and "CTX038" in status["why"]
    assert record["first_loss"] == {"message": row + 1, "turn": int(turn)}
