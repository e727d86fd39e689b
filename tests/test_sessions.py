"""Session inference without session keys: interleaved conversations, defects that must not split."""

from __future__ import annotations

import random

import orjson
import pytest

from conftest import FIXTURES
from ctxlint.engine import HOT_SESSIONS
from ctxlint.ingest import read_inputs
from ctxlint.ingest.record import Record, Response
from ctxlint.sessions import build_sessions
from ctxlint.sessions.grouping import SHARED_ANCHOR, task_header
from helpers import code_lines, expected_of, json_report, write_records


def rec(line, messages, response=None, key=None):
    return Record(file="log.jsonl", line=line, shape="bare", request={"model": "gpt-4o", "messages": messages},
                  response=Response(message=response) if response else None, session_key=key, scope="log.jsonl")


S = {"role": "system", "content": "You help."}


def U(t):
    return {"role": "user", "content": t}


def A(t, **kw):
    return {"role": "assistant", "content": t, **kw}


def call(i):
    return {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def grouping(records):
    return [[t.record.line for t in s.turns] for s in build_sessions(records)]


def test_interleaved_sessions_are_separated():
    records = [
        rec(1, [S, U("alpha question")]),
        rec(2, [S, U("beta question")]),
        rec(3, [S, U("alpha question"), A("alpha answer"), U("alpha follow-up")]),
        rec(4, [S, U("beta question"), A("beta answer"), U("beta follow-up")]),
        rec(5, [S, U("alpha question"), A("alpha answer"), U("alpha follow-up"), A("a2"), U("alpha third")]),
    ]
    assert grouping(records) == [[1, 3, 5], [2, 4]]


def test_same_opening_in_two_conversations_does_not_merge_them_later():
    records = [
        rec(1, [S, U("hi")], A("hello one")),
        rec(2, [S, U("hi"), A("hello one"), U("book a flight")]),
        rec(3, [S, U("hi")], A("hello two")),
        rec(4, [S, U("hi"), A("hello two"), U("find a hotel")]),
    ]
    assert grouping(records) == [[1, 2], [3, 4]]


def test_a_request_goes_on_from_the_conversation_whose_calls_its_results_answer():
    """Two conversations open alike; one stores its tool-call turn as its text alone and
    keeps the result: the result's call id names the conversation it goes on from (not the
    latest one that opened alike), and the other goes on untouched."""
    records = read_inputs([str(FIXTURES / "rules" / "CTX001" / "fail_tool_turn_stored_as_text_in_one_of_two_conversations_that_open_alike_without_a_key.jsonl")]).records
    assert [[turn.record.line for turn in session.turns] for session in build_sessions(records)] == [[1, 3], [2, 4]]


def test_a_request_carrying_a_whole_conversation_goes_on_from_it_not_from_one_sharing_templated_turns():
    """Without replies, two conversations open alike and later send the same templated turn
    (an app's canned text and follow-up). The request that carries one conversation whole
    (its opening and its call turn, left unanswered) goes on from it, not from the other,
    whose tool exchange it does not carry though it ends on the same two texts."""
    T, F = A("Day 2: museums in the morning."), U("Make the hotel cheaper.")
    records = [
        rec(1, [S, U("plan a trip to Qingdao")]),
        rec(2, [S, U("plan a trip to Qingdao"), A(None, tool_calls=[call("a1")])]),
        rec(3, [S, U("plan a trip to Qingdao"), A(None, tool_calls=[call("a1")]), {"role": "tool", "tool_call_id": "a1", "content": "sunny"}, T, F]),
        rec(4, [S, U("plan a trip to Qingdao")]),
        rec(5, [S, U("plan a trip to Qingdao"), A(None, tool_calls=[call("b1")])]),
        rec(6, [S, U("plan a trip to Qingdao"), A(None, tool_calls=[call("b1")]), T, F]),
    ]
    assert grouping(records) == [[1, 2, 3], [4, 5, 6]]


def test_among_conversations_that_open_alike_a_request_goes_on_from_its_models():
    """The same prompt and question sent to two models, each reply stored re-worded (the
    app keeps the text of a structured answer), so no request carries a reply as logged:
    the request that goes on tells the two apart by its model (the latest was taken)."""
    def sent(line, model, messages, reply):
        return Record(file="log.jsonl", line=line, shape="bare", request={"model": model, "messages": messages},
                      response=Response(message=A(reply)), scope="log.jsonl")

    records = [sent(1, "kimi-k2-thinking", [S, U("plan a trip to Qingdao")], '{"plan": "three days from Friday"}'),
               sent(2, "glm-4.6", [S, U("plan a trip to Qingdao")], '{"plan": "two days, hotels first"}'),
               sent(3, "kimi-k2-thinking", [S, U("plan a trip to Qingdao"), A("three days from Friday"), U("yes, two people")], "ok"),
               sent(4, "glm-4.6", [S, U("plan a trip to Qingdao"), A("two days, hotels first"), U("book the hotels")], "ok")]
    assert [[turn.record.line for turn in session.turns] for session in build_sessions(records)] == [[1, 3], [2, 4]]


def test_an_opening_another_model_sends_again_opens_a_conversation_of_its_own():
    """The same prompt and question, later sent to another model: one message in common is
    no tie to a conversation that went on past it (its results lost there), which goes on."""
    call = A("", tool_calls=[{"id": "call_h1", "type": "function", "function": {"name": "search", "arguments": "{}"}}])

    def sent(line, model, messages, reply):
        return Record(file="log.jsonl", line=line, shape="bare", request={"model": model, "messages": messages},
                      response=Response(message=reply), scope="log.jsonl")

    records = [sent(1, "gpt-4.1", [S, U("plan Hangzhou")], call),
               sent(2, "gpt-4.1", [S, U("plan Hangzhou"), call], A("Day 1: West Lake.")),
               sent(3, "doubao-seed-1-6-250615", [S, U("plan Hangzhou")], A("Which dates?")),
               sent(4, "gpt-4.1", [S, U("plan Hangzhou"), call, A("Day 1: West Lake."), U("and day 2?")], A("Day 2: Xixi."))]
    assert [[turn.record.line for turn in session.turns] for session in build_sessions(records)] == [[1, 2, 4], [3]]


def test_a_request_goes_on_from_the_conversation_whose_call_turn_it_carries_not_one_sharing_its_texts():
    """Templated texts many conversations share ("OK, day 2: ...", "continue") agree with
    another conversation as much as the request's own history does; the call turn it
    carries (ids one conversation alone has) and the reply after it decide."""
    call = A("", tool_calls=[{"id": "call_own", "type": "function", "function": {"name": "search", "arguments": "{}"}}])
    other = A("", tool_calls=[{"id": "call_other", "type": "function", "function": {"name": "search", "arguments": "{}"}}])
    result = {"role": "tool", "tool_call_id": "call_other", "content": "3 hotels"}
    day2, go_on = A("OK, day 2: the old town."), U("continue")
    records = [rec(1, [S, U("plan Xiamen")], other),
               rec(2, [S, U("plan Xiamen"), other, result], day2),
               rec(3, [S, U("plan Xiamen"), other, result, day2, go_on], A("Day 3: the island.")),
               rec(4, [S, U("plan Xiamen")], call),
               rec(5, [S, U("plan Xiamen"), call], day2),  # its result lost (CTX002)
               rec(6, [S, U("plan Xiamen"), call, day2, go_on], A("Day 3: the beach."))]
    assert grouping(records) == [[1, 2, 3], [4, 5, 6]]


def test_an_opening_sent_alone_after_its_conversation_went_past_it_opens_another():
    """The same first question again, once the conversation that asked it has gone on: another
    conversation that opens alike (a first question many users ask), whose own next request
    goes on from it."""
    call = A("", tool_calls=[{"id": "call_a", "type": "function", "function": {"name": "search", "arguments": "{}"}}])
    records = [rec(1, [S, U("plan Xi'an")], call),
               rec(2, [S, U("plan Xi'an"), call], A("Day 1: the city wall.")),
               rec(3, [S, U("plan Xi'an")], A("Which dates?")),
               rec(4, [S, U("plan Xi'an"), A("Which dates?"), U("next Friday")])]
    assert grouping(records) == [[1, 2], [3, 4]]


def test_under_a_key_an_agent_of_another_prompt_opening_with_its_greeting_is_its_own_conversation():
    """A conversation that opens with an assistant message is a history cut at its head only
    where it sends no prompt or its thread's: a sub-agent of another prompt, under the main
    agent's key, whose conversation opens with its own greeting, is another part."""
    records = [rec(1, [S, U("plan a trip to Rome")], A("Which dates?"), key="k"),
               rec(2, [{"role": "system", "content": "You are the booking agent."}, A("Hello, I book hotels."), U("Rome, 3 nights")], key="k"),
               rec(3, [A("Which dates?"), U("next Friday")], key="k")]  # the main conversation, its head cut
    assert [(s.id, [t.record.line for t in s.turns]) for s in build_sessions(records)] == [("k", [1, 3]), ("k#2", [2])]


def test_defects_do_not_split_a_session():
    assistant_with_reasoning = A(None, tool_calls=[call("c1")], reasoning_content="plan")
    records = [
        rec(1, [S, U("task")], assistant_with_reasoning),
        # reasoning dropped, system prompt rewritten
        rec(2, [{"role": "system", "content": "You help. Time 10:02"}, U("task"), A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "r1"}], A("done?")),
        # the assistant text turn dropped while the user's next message is kept
        rec(3, [S, U("task"), A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "r1"}, U("next")]),
        # keep-last-2 trimming
        rec(4, [{"role": "tool", "tool_call_id": "c1", "content": "r1"}, U("next"), A("ok"), U("last")]),
    ]
    assert grouping(records) == [[1, 2, 3, 4]]


def test_retry_joins_the_session():
    """A request sent again after an error (no reply logged), or sent again later in the
    conversation, is the same conversation's."""
    failed = Record(file="log.jsonl", line=1, shape="bare", request={"model": "gpt-4o", "messages": [S, U("task")]},
                    response=Response(error={"message": "Rate limit reached"}, status=429), scope="log.jsonl")
    assert grouping([failed, rec(2, [S, U("task")], A(None, tool_calls=[call("c9")]))]) == [[1, 2]]
    going = [S, U("task"), A(None, tool_calls=[call("c9")]), {"role": "tool", "tool_call_id": "c9", "content": "r"}]
    assert grouping([rec(1, [S, U("task")], A(None, tool_calls=[call("c9")])), rec(2, going, A("done")), rec(3, going)]) == [[1, 2, 3]]


def test_an_opening_many_runs_send_is_no_tie_of_its_own():
    """Bare requests (no replies logged) of runs that open alike: a run whose reply was a
    text is a conversation of its own, not another run's whose tool exchange it stored as
    text; an opening sent alone once still ties a turn stored as text (CTX016's defect)."""
    opening = [S, U("Plan the trip to Lisbon.")]

    def exchange(n):
        return [A(None, tool_calls=[call(f"c{n}")]), {"role": "tool", "tool_call_id": f"c{n}", "content": f"r{n}"}]
    text_turn = rec(5, [*opening, A("Here is a plan."), U("Cheaper, please.")])
    records = [rec(1, opening), rec(2, opening), rec(3, opening + exchange(1)), rec(4, opening + exchange(2)), text_turn]
    assert grouping(records) == [[1, 2, 3], [4], [5]]
    alone = [rec(1, opening), rec(4, opening + exchange(2)), text_turn]
    assert grouping(alone) == [[1, 4, 5]]


def test_a_trim_that_keeps_the_opening_exchange_goes_on_from_its_own_conversation():
    """A history trimmed to its opening exchange and its last turns (a legal trim) goes on
    from the conversation whose newest question it carries, not from another run that
    opened alike and has sent only that opening."""
    first = [S, U("Book the cheapest trip to Lisbon."), A("Sure: dates and budget?")]
    records = [rec(1, first[:2]), rec(2, [*first, U("Friday to Sunday, hotels first.")]),
               rec(3, [*first, U("Friday to Sunday, hotels first."), A("Three hotels."), U("Which museums are near them?")]),
               rec(4, first[:2]),
               rec(5, [*first, U("Which museums are near them?"), A("The tile museum."), U("Book the closest hotel.")])]
    assert grouping(records) == [[1, 2, 3, 5], [4]]
    replied = [rec(1, first[:2], first[2]), rec(2, [*first, U("Friday to Sunday, hotels first.")], A("Three hotels.")),
               rec(3, first[:2], first[2]),
               rec(4, [*first, U("Friday to Sunday, hotels first."), A("Three hotels."), U("Which museums are near them?")], A("The tile museum.")),
               rec(5, [*first, U("Which museums are near them?"), A("The tile museum."), U("Book the closest hotel.")])]
    assert grouping(replied) == [[1, 2, 4, 5], [3]]


def test_a_trim_that_cut_the_newest_question_with_the_middle_goes_on_from_its_conversation(tmp_path):
    """No replies logged: a trim that keeps the opening and the newest messages cut the last
    question sent (the anchor) with the middle, so the request carries nothing the last one
    ended on. Its opening, one conversation's own, ties it; a session-wide defect (an effort
    GLM-5 refuses) is then reported once. Not where two conversations opened alike, nor where
    the opening was sent alone twice (runs of one script), nor where another conversation
    opened with the same examples and question."""
    task = U("Plan a trip to Oslo, budget 500 EUR, two nights near the station.")
    other = [S, U("Book a table for four in Bergen on Friday night.")]

    def loop(n):
        return [A(None, tool_calls=[call(f"c{n}")], reasoning_content=f"Search {n}."), {"role": "tool", "tool_call_id": f"c{n}", "content": f"found {n}"}]
    long_ago = [S, task, A("Which dates?"), U("The first weekend of May."), *loop(1), A("Two hotels."), U("Cancel that: I go by train now.")]
    trimmed = [S, task, *loop(2)]
    records = [rec(1, [S, task]), rec(2, other), rec(3, long_ago), rec(4, [*other, A("Which restaurant?"), U("Any with fish.")]), rec(5, trimmed),
               rec(6, [*trimmed, *loop(3)])]
    assert grouping(records) == [[1, 3, 5, 6], [2, 4]]
    twice = [rec(1, [S, task]), rec(2, [S, task]), rec(3, long_ago), rec(4, trimmed)]
    assert grouping(twice) == [[1, 2, 3], [4]]
    shown = [U("Example: plan a day in Paris."), A("The Louvre, then the Seine.")]
    alike = [rec(1, [S, *shown, task]), rec(2, [S, *shown, task, A("When?"), U("In June.")]), rec(3, [S, *shown, task]),
             rec(4, [S, *shown, *long_ago[1:]]), rec(5, [S, *shown, *trimmed[1:]])]
    assert grouping(alike) == [[1, 2], [3, 4], [5]]
    assert grouping(alike[:2] + alike[4:]) == [[1, 2, 5]]
    lines = [{**record.request, "model": "glm-5.1", "reasoning_effort": "medium"} for record in records]
    report = json_report(write_records(tmp_path / "trim.jsonl", lines))
    assert code_lines(report) == [("CTX005", 1), ("CTX005", 2)]


def test_a_request_that_opens_as_one_run_did_goes_on_from_it_not_from_a_run_that_shared_its_next_turn():
    """Two runs of one task (tau-bench's trials, no replies logged) open with other words,
    then get the same reply and answer it alike. The second run's next request carries
    its own opening whole, then those shared messages: it goes on from its own run, not
    from the other, whose opening it would have replaced ("Hi!" replaces nothing either)."""
    shared = [A("I can help with that. Could you give me your user ID?"), U("Sure! My user ID is chen_lee_6825.")]
    first, second = U("Hi there! I need to make a few changes to my upcoming trip."), U("Hi! I have a flight reservation from Boston.")
    records = [rec(1, [S, first]), rec(2, [S, first, *shared]), rec(3, [S, second]), rec(4, [S, second, *shared])]
    assert grouping(records) == [[1, 2], [3, 4]]
    greeting = [rec(1, [S, first]), rec(2, [S, first, *shared]), rec(3, [S, U("Hi!")]), rec(4, [S, U("Hi!"), *shared])]
    assert grouping(greeting) == [[1, 2], [3, 4]]


def test_a_trim_that_cut_the_anchor_goes_on_from_the_run_whose_logged_reply_it_carries():
    """Two runs of one script open alike and get the same first reply. The first goes on;
    a trim keeps its opening and its newest step, cutting its anchor. The request carries
    the reply the first run's last request got, right after the opening: it goes on from
    that run, not from the second, which has sent the opening alone. A request that
    carries no run's reply after that opening stays with the one it goes on from."""
    opening = U("Bonjour! I'd like to cancel all of my upcoming flights, please.")
    hello = A("I can help with that. Could you give me your user ID?")
    asked = [opening, hello, U("Bien sûr, my user ID is amelia_davis_8890.")]
    lookup = A(None, tool_calls=[call("c1")])
    records = [rec(1, [S, opening], hello), rec(2, [S, *asked], lookup), rec(3, [S, opening], hello),
               rec(4, [S, opening, lookup, {"role": "tool", "tool_call_id": "c1", "content": "reservations: 8C8K3P"}], A("Which one?")),
               rec(5, [S, opening, hello, U("My ID is mia_li_3668.")], A("Thank you, Mia."))]
    assert grouping(records) == [[1, 2, 4], [3, 5]]


def test_a_request_that_rewrote_a_result_in_place_goes_on_from_its_conversation(tmp_path):
    """Without a key, two conversations open alike. One calls two tools in parallel; its
    next request sends one result again as a user message, then the reply it got: the
    result it ended on is gone, so nothing it ended on ties the request, while the other
    conversation's opening does. It goes on from the one whose reply it carries right
    after its history, rewritten in one place, and CTX009 reports the result there; so
    does one that sends both results as user messages."""
    opening = [S, U("Compare the weather in Rome and Oslo today.")]
    calls = A(None, tool_calls=[call("call_rome"), call("call_oslo")])
    rome, oslo = ({"role": "tool", "tool_call_id": f"call_{city}", "content": f'{{"city": "{city}", "temp_c": {t}}}'} for city, t in (("rome", 24), ("oslo", 9)))
    told = A("Rome is sunny at 24°C; Oslo is rainy at 9°C.")
    sent = [*opening, calls, rome, oslo]
    rewritten = [*opening, calls, rome, U(oslo["content"]), told, U("Which one is better for a walk?")]
    records = [rec(1, opening, calls), rec(2, opening, A("Both are cities in Europe.")), rec(3, sent, told), rec(4, rewritten, A("Rome."))]
    assert grouping(records) == [[1, 3, 4], [2]]
    lines = [{**record.request, "response": {"choices": [{"message": record.response.message, "finish_reason": "stop"}]}} for record in records]
    assert code_lines(json_report(write_records(tmp_path / "rewritten.jsonl", lines))) == [("CTX009", 4)]
    both = [*opening, calls, U(rome["content"]), U(oslo["content"]), told, U("Which one is better for a walk?")]
    assert grouping([*records[:3], rec(4, both, A("Rome."))]) == [[1, 3, 4], [2]]  # results as user messages: one rewrite


def test_a_request_that_trimmed_its_history_and_rewrote_a_result_goes_on_from_its_conversation(tmp_path):
    """Without a key, two conversations open alike. One goes on for three turns; its next
    request keeps the opening and the newest turn (a keep-last-N trim) and sends the result
    it ended on under another call id, then the reply it got. Neither the message it ended
    on nor a history in place ties it; the reply it carries after what it kept, in order,
    does. It goes on from that conversation, where CTX001 reports the result, and nothing
    else: not two user messages in a session of its own."""
    opening = [S, U("Plan three days in Lisbon in May; budget 900 EUR, no early flights.")]
    day_one, trams = A("Day 1: Alfama and the castle, then fado at night."), A("Trams 28 and 12 are the scenic ones.")
    asked, booking = U("Which trams should we take?"), U("Book the hostel in Bairro Alto for three nights.")
    calls = A(None, tool_calls=[call("call_book")])
    booked = {"role": "tool", "tool_call_id": "call_book", "content": '{"booking": "BA-2291", "nights": 3}'}
    told = A("Booked: hostel BA-2291 in Bairro Alto, three nights.")
    story = [*opening, day_one, asked, trams, booking]
    rewritten = [*opening, booking, calls, {**booked, "tool_call_id": "call_hostel"}, told, U("Thanks! And a fado bar near it?")]
    records = [rec(1, opening, day_one), rec(2, opening, A("Lisbon in May is warm; what do you enjoy?")),
               rec(3, [*opening, day_one, asked], trams), rec(4, story, calls), rec(5, [*story, calls, booked], told),
               rec(6, rewritten, A("Try Tasca do Chico, five minutes away."))]
    assert grouping(records) == [[1, 3, 4, 5, 6], [2]]
    lines = [{**record.request, "response": {"choices": [{"message": record.response.message, "finish_reason": "stop"}]}} for record in records]
    assert code_lines(json_report(write_records(tmp_path / "trimmed.jsonl", lines))) == [("CTX001", 6)]


def test_a_turn_stored_as_its_text_is_not_tied_to_an_agent_of_another_prompt_by_a_question_both_asked(tmp_path):
    """Without a key, two agents of one model (other system prompts) are asked the same
    question, then the same follow-up. One answers it with a tool call, and its next
    request keeps the turn's final text alone. That request carries the follow-up the other
    conversation ended on, but a trim that starts there would not send another prompt: it
    goes on from its own conversation, where the turn stored as text is CTX016's."""
    planner, concierge = ({"role": "system", "content": text} for text in ("You plan trips.", "You are a hotel concierge."))
    question, follow = U("I arrive in Lisbon on Friday at 9pm with two children."), U("What should we do on Saturday morning?")
    first_a, first_b = A("Noted: Lisbon, Friday 9pm, two children."), A("Welcome! Shall I book a family room?")
    lookup = A(None, tool_calls=[call("call_events")])
    result = {"role": "tool", "tool_call_id": "call_events", "content": "Oceanarium opens at 10am; tram 28 runs from 7am."}
    told = A("Take tram 28 to the Oceanarium, which opens at 10am.")
    asked = [planner, question, first_a, follow]
    records = [rec(1, [planner, question], first_a), rec(2, [concierge, question], first_b), rec(3, asked, lookup),
               rec(4, [concierge, question, first_b, follow], A("The kids' club opens at 9am.")), rec(5, [*asked, lookup, result], told),
               rec(6, [*asked, told, U("And on Sunday?")], A("The zoo."))]
    assert grouping(records) == [[1, 3, 5, 6], [2, 4]]
    lines = [{**record.request, "response": {"choices": [{"message": record.response.message, "finish_reason": "stop"}]}} for record in records]
    assert code_lines(json_report(write_records(tmp_path / "text.jsonl", lines))) == [("CTX016", 6)]


def test_a_gemini_call_made_again_goes_on_after_a_trim_cut_the_first_one(tmp_path):
    """Gemini names no call: ctxlint numbers the same call made again in a conversation
    (`get_weather:…#1`). Without a key, a trim that keeps the opening and the newest turn
    cuts the first such call, and the one kept is numbered anew; it is still the call the
    conversation's last request got as its reply, and the request goes on from it."""
    def call(city):
        return {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": city}}}]}

    def result(city, text):
        return {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": text}}}]}

    def said(text, role="user"):
        return {"role": role, "parts": [{"text": text}]}

    def line(contents, reply):
        return {"request": {"model": "gemini-2.5-flash", "contents": contents},
                "response": {"candidates": [{"content": reply, "finishReason": "STOP"}]}}
    opening, again = said("What is the weather in Rome today?"), said("It is late now: check Rome once more, please.")
    told = said("22°C and sunny in Rome.", "model")
    history = [opening, call("Rome"), result("Rome", "22C, sunny"), told, again]
    lines = [line([opening], call("Rome")), line(history[:3], told), line(history, call("Rome")),
             line([opening, again, call("Rome"), result("Rome", "19C, clear")], said("19°C and clear now.", "model"))]
    report = json_report(write_records(tmp_path / "gemini.jsonl", lines))
    assert [[turn["line"] for turn in session["turns"]] for session in report["sessions"]] == [[1, 2, 3, 4]]
    assert report["findings"] == []


def test_a_trimmed_request_goes_on_from_the_run_it_opens_as_not_one_that_made_the_same_call():
    """Two runs of one task open with other words, then make the same call, with the same
    id and result (recorded gpt-4o traffic does). The second run's request, trimmed to its
    opening and that newest step, goes on from the second run: the first never had its
    opening, and would have had its own replaced by it."""
    lookup = [A(None, tool_calls=[call("call_4T5zndIlDe4bKuURD2Snz7v8")]),
              {"role": "tool", "tool_call_id": "call_4T5zndIlDe4bKuURD2Snz7v8", "content": '{"reservation_id": "FQ8APE"}'}]
    first = [S, U("I want to modify a flight booking I made for a trip to Chicago."), A("Which reservation?"), U("I don't remember its ID.")]
    second = [S, U("I need to change the passenger on my upcoming flight."), A("Which reservation?"), U("It is FQ8APE.")]
    records = [rec(1, first[:2]), rec(2, second[:2]), rec(3, first), rec(4, second), rec(5, [*first, *lookup]), rec(6, [*second[:2], *lookup])]
    assert grouping(records) == [[1, 3, 5], [2, 4, 6]]


def test_conversations_past_the_many_that_ended_alike_go_on_where_the_message_before_agrees(tmp_path):
    """Without a key, more conversations than SHARED_ANCHOR end on one message ("Thanks!"):
    each goes on from its own, found by the message before it (over an assistant turn the
    request left out: a trim from the middle that keeps the first question), not weighed
    against every conversation that ended alike (the time that saves is
    `bench/load.py`'s to show). Nothing is reported: no leak, no cut opening."""
    many = SHARED_ANCHOR + 16
    ask = [U(f"Where is order {n}? It was due on Monday.") for n in range(many)]
    told = [A(f"Order {n} ships tomorrow.") for n in range(many)]
    records = [rec(n + 1, [S, ask[n], told[n], U("Thanks!")]) for n in range(many)]
    records += [rec(many + n + 1, [S, ask[n], told[n], U("Thanks!"), A("You're welcome!"), U(f"Can order {n} go to my office?")])
                for n in range(1, many)]
    records.append(rec(2 * many + 1, [S, ask[0], U("Thanks!"), A("You're welcome!"), U("Can order 0 go to my office?")]))
    assert grouping(records) == [[1, 2 * many + 1]] + [[n + 1, many + n + 1] for n in range(1, many)]
    lines = [record.request for record in records]
    report = json_report(write_records(tmp_path / "thanks.jsonl", lines))
    assert report["summary"]["sessions"] == many and code_lines(report) == []


def test_a_history_kept_from_the_last_reply_on_goes_on_from_its_conversation(tmp_path):
    """Keep-last-2 cuts a history right after its newest question: the request opens with
    the reply that question got, or with the results of its calls. It goes on from the
    conversation that got that reply, and the lost prompt and first question are reported
    there; a reply two runs got alike, or an "OK", ties nothing (each run's trim is then a
    new session)."""
    prompt = {"role": "system", "content": "You are TripBot. Budget 500 EUR, vegan meals only."}
    asked = ["Plan a Lisbon trip for me.", "March 3 to 7, two people.", "Now the flights from Paris."]
    replies = ["Sure! Which dates?", "Hotel Alfama booked for March 3-7.", "Flight AF1024 booked, 189 EUR each."]
    history, lines = [prompt], []
    for text, reply in zip(asked, replies):
        history = history + [U(text)]
        lines.append({"request": {"model": "gpt-4o", "messages": history}, "response": {"choices": [{"message": A(reply)}]}})
        history = history + [A(reply)]
    lines.append({"request": {"model": "gpt-4o", "messages": [A(replies[-1]), U("Restaurants near the hotel?")]}})
    report = json_report(write_records(tmp_path / "trim.jsonl", lines))
    assert code_lines(report) == [("CTX008", 4)]
    assert {f["session"] for f in report["findings"]} == {f"{tmp_path / 'trim.jsonl'}:1"}

    calls = A(None, tool_calls=[call("c7"), call("c8")])
    tools = [{"request": {"model": "gpt-4o", "messages": [prompt, U("Compare two hotels in Porto for me.")]},
              "response": {"choices": [{"message": calls}]}},
             {"request": {"model": "gpt-4o", "messages": [{"role": "tool", "tool_call_id": "c8", "content": "Hotel B: 90 EUR"},
                                                          {"role": "tool", "tool_call_id": "c7", "content": "Hotel A: 80 EUR"}]}}]
    kept = json_report(write_records(tmp_path / "results.jsonl", tools))
    assert code_lines(kept) == [("CTX001", 2), ("CTX008", 2)]
    assert {f["session"] for f in kept["findings"]} == {f"{tmp_path / 'results.jsonl'}:1"}
    keyed = json_report(write_records(tmp_path / "keyed.jsonl", [{"session_id": "k", **line} for line in tools]))
    assert [(f["code"], f["line"], f["session"]) for f in keyed["findings"]] == [("CTX001", 2, "k"), ("CTX008", 2, "k")]

    alike = [{"request": {"model": "gpt-4o", "messages": [U(f"Run {n}: book a room in Porto.")]},
              "response": {"choices": [{"message": A("Done, room booked for you.")}]}} for n in (1, 2)]
    cut = [{"request": {"model": "gpt-4o", "messages": [A(text), U("What is the address of the place?")]}}
           for text in ("Done, room booked for you.", "OK")]
    assert code_lines(json_report(write_records(tmp_path / "alike.jsonl", alike + cut))) == []


def test_a_classifier_called_before_each_turn_under_the_key_is_not_the_conversation(tmp_path):
    """An agent that gets each user message alone first (a router, an intent classifier)
    under the conversation's key: the conversation is the main agent's requests, whole,
    and the classifier's calls are calls beside it, not history lost or leaked."""
    prompt = {"role": "system", "content": "You are TripBot, a travel agent. Budget 600 EUR."}
    classify = {"role": "system", "content": "Classify the user's message as book, ask or cancel. Answer with one word."}
    asked = ["I want to fly from Paris to Rome next Friday.", "Actually make it Saturday morning please.",
             "And book a hotel near the Colosseum for two nights."]
    lines, history = [], [prompt]
    for n, text in enumerate(asked):
        lines.append({"session_id": "t1", "request": {"model": "gpt-4o-mini", "messages": [classify, U(text)]},
                      "response": {"choices": [{"message": A("book"), "finish_reason": "stop"}]}})
        history = history + [U(text)]
        reply = A(f"Done step {n}: option {n} found.")
        lines.append({"session_id": "t1", "request": {"model": "gpt-4o", "messages": list(history)},
                      "response": {"choices": [{"message": reply, "finish_reason": "stop"}]}})
        history = history + [reply]
    report = json_report(write_records(tmp_path / "routed.jsonl", lines))
    assert report["findings"] == []
    assert [t["line"] for t in next(s for s in report["sessions"] if len(s["turns"]) == 3)["turns"]] == [2, 4, 6]


def test_an_answered_opening_sent_again_opens_another_conversation():
    """Without session keys, the same opening answered and then sent again is another
    conversation that opens alike (a test run's scenario, a first question many users
    ask); each goes on from its own reply, whichever was answered last."""
    replies = [A(None, tool_calls=[call(f"c{n}")]) for n in range(3)]
    records = [rec(1 + n, [S, U("task")], replies[n]) for n in range(3)]
    records += [rec(4 + n, [S, U("task"), replies[n], {"role": "tool", "tool_call_id": f"c{n}", "content": "r"}], A("done")) for n in (2, 0, 1)]
    assert [record.line for record in records] == [1, 2, 3, 6, 4, 5]  # the last answered goes on first
    assert grouping(records) == [[1, 4], [2, 5], [3, 6]]
    texts = [A(f"Booked option {n}: the {'early late midday'.split()[n]} train.") for n in range(3)]
    records = [rec(1 + n, [S, U("task")], texts[n]) for n in range(3)]
    records += [rec(4 + n, [S, U("task"), texts[n], U("And a hotel near the station.")], A("done")) for n in (2, 0, 1)]
    assert grouping(records) == [[1, 4], [2, 5], [3, 6]]


def test_session_keys_group_across_files_in_input_order():
    a = rec(1, [S, U("x")], key="k")
    b = rec(2, [S, U("x"), A("y"), U("z")], key="k")
    b.file = "other.jsonl"  # requests are taken in input order: a stream cannot be reordered
    sessions = build_sessions([a, b])
    assert [[t.record.line for t in s.turns] for s in sessions] == [[1, 2]]
    assert sessions[0].id == "k"


@pytest.mark.parametrize("where", ["beside", "in the request"])
def test_a_session_named_beside_a_trace_per_call_groups_by_the_session(tmp_path, where):
    """A tracer that gives each call a trace of its own and names the session in the
    metadata, the line's or the request body's (as apps that trace through LiteLLM pass
    it): the session is the key, so the reply lost between the two calls is found."""
    records = [orjson.loads(line) for line in (FIXTURES / "rules" / "CTX016" / "fail_text_reply_lost.jsonl").read_bytes().splitlines()]
    for number, record in enumerate(records):
        record["trace_id"] = f"trace-{number}"
        (record if where == "beside" else record["request"])["metadata"] = {"session_id": record.pop("session_id")}
    report = json_report(write_records(tmp_path / "traced.jsonl", records))
    assert [(session["id"], session["requests"]) for session in report["sessions"]] == [("s1", 2)]
    assert code_lines(report) == [("CTX016", 2)]


@pytest.mark.parametrize("name", ["sessionId", "session", "chat_id", "session.id", "metadata.thread_id", "metadata.conversation_id"])
def test_other_session_key_names_group_sessions(tmp_path, name):
    """`sessionId` (and the other keys in camelCase, as JavaScript loggers write them), a
    plain `session` or a session object's `id`, Open WebUI's `chat_id`, and a thread or
    conversation named in the metadata name the session: two conversations asking alike
    stay apart, in one process and with --jobs."""
    def line(key, messages, reply=None):
        outer, _, inner = name.rpartition(".")
        record = {**({outer: {inner: key}} if outer else {name: key}), "request": {"model": "gpt-4o", "messages": messages}}
        if reply:
            record["response"] = {"id": f"{key}{len(messages)}", "choices": [{"message": A(reply), "finish_reason": "stop"}]}
        return orjson.dumps(record) + b"\n"

    ask, day = U("Book a flight to Rome."), U("Friday.")
    log = tmp_path / "log.jsonl"
    log.write_bytes(line("s1", [ask], "Which day?") + line("s2", [ask], "Which day?")
                    + line("s1", [ask, day]) + line("s2", [ask, A("Which day?"), day]))
    assert code_lines(json_report(str(log))) == [("CTX016", 3)]
    assert code_lines(json_report(str(log), "--jobs", "2")) == [("CTX016", 3)]
    assert sorted(s["id"] for s in json_report(str(log))["sessions"]) == ["s1", "s2"]


def test_a_key_reused_in_a_later_file_for_a_new_conversation_is_a_new_session(tmp_path):
    """Test runs that name their sessions alike: the second file's conversation starts over
    (same opening prompt, none of the first run's newest message or reply), so it is k#2 and
    nothing is reported about the first run's history being gone. In one file, the same
    shape is an app that sent no history, and is reported."""

    def line(messages, reply):
        return orjson.dumps({"session_id": "k", "request": {"model": "gpt-4o", "messages": messages},
                             "response": {"choices": [{"message": A(reply), "finish_reason": "stop"}]}}) + b"\n"

    opening = [S, U("Plan a day in Rome, budget 100 EUR.")]
    run = line(opening, "Colosseum, then Trastevere.") + line(opening + [A("Colosseum, then Trastevere."), U("And lunch?")], "Pizza.")
    first, second = tmp_path / "run1.jsonl", tmp_path / "run2.jsonl"
    first.write_bytes(run)
    second.write_bytes(run)
    report = json_report(str(first), str(second))
    assert code_lines(report) == []
    assert [s["id"] for s in report["sessions"]] == ["k", "k#2"]
    sessions = build_sessions(read_inputs([str(first), str(second)]).records)
    assert [s.id for s in sessions] == ["k", "k#2"]  # show and stats group alike
    rotated = tmp_path / "run1.jsonl.1"
    rotated.write_bytes(line(opening + [A("Colosseum, then Trastevere."), U("And lunch?"), A("Pizza."), U("Dinner?")], "Carbonara."))
    assert [s["id"] for s in json_report(str(first), str(rotated))["sessions"]] == ["k"]  # a rotated log goes on
    alone = tmp_path / "one.jsonl"  # in one file: the app sent the system prompt and the newest message only
    alone.write_bytes(run + line([S, U("Book the Colosseum tour.")], "Which day?"))
    assert code_lines(json_report(str(alone))) == [("CTX008", 3)]  # the reply lost with the history: one defect


def test_other_agents_conversations_under_one_key_are_parts_of_it_in_check_show_and_stats():
    """A sub-agent and a summarizer logged under the main agent's session id: each has its
    own system prompt and goes on from nothing the main conversation sent, so each is a
    part of the key (k#2, k#3), and the main conversation resumes as k."""

    case = str(FIXTURES / "rules" / "CTX016" / "pass_subagent_and_summarizer_calls_under_the_session_key.jsonl")
    report = json_report(case)
    assert [(s["id"], s["requests"]) for s in report["sessions"]] == [("trip-7", 3), ("trip-7#2", 2), ("trip-7#3", 1)]
    sessions = build_sessions(read_inputs([case]).records)
    assert [(s.id, [t.record.line for t in s.turns]) for s in sessions] == [("trip-7", [1, 5, 6]), ("trip-7#2", [2, 3]), ("trip-7#3", [4])]


def test_conversations_of_many_keys_interleaved_past_the_awake_sessions_group_as_show_does(tmp_path):
    """More keys than stay awake (their sessions sleep in the spill, threads and all), each
    with a sub-agent and a summarizer beside the main conversation, interleaved: the stream
    groups them as show and stats do, finds nothing, and --jobs 2 says the same."""



    case = FIXTURES / "rules" / "CTX016" / "pass_subagent_and_summarizer_calls_under_the_session_key.jsonl"
    script = [orjson.loads(line) for line in case.read_bytes().splitlines()]
    pending = {key: [{**record, "session_id": f"trip-{key}"} for record in script] for key in range(HOT_SESSIONS + 50)}
    shuffle = random.Random(7)
    lines = []
    while pending:
        key = shuffle.choice(sorted(pending))
        lines.append(orjson.dumps(pending[key].pop(0)))
        if not pending[key]:
            del pending[key]
    log = tmp_path / "many.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    report = json_report(str(log))
    assert report["findings"] == []
    built = sorted((s.id, len(s.turns)) for s in build_sessions(read_inputs([str(log)]).records))
    assert sorted((s["id"], s["requests"]) for s in report["sessions"]) == built
    assert len(built) == 3 * (HOT_SESSIONS + 50)
    assert json_report(str(log), "--jobs", "2") == report


def test_a_last_message_edited_and_resent_without_a_key_stays_in_its_session():
    """A chat UI's edit-and-resend: the history up to the user's newest message, that message
    changed; the conversation goes on from the edited one."""
    opening = [S, U("Plan a weekend in Rome for two.")]
    asked = opening + [A("Which dates?"), U("The first weekend of May")]
    edited = opening + [A("Which dates?"), U("The second weekend of May")]
    records = [rec(1, opening), rec(2, asked), rec(3, edited), rec(4, edited + [A("Booked."), U("Thanks!")])]
    assert grouping(records) == [[1, 2, 3, 4]]


SIDE_REQUEST_CASES = [FIXTURES / "rules" / "CTX016" / f"{name}.jsonl" for name in (
    "pass_side_requests_on_the_history_left_out_by_the_conversation",
    "fail_question_asked_after_the_history_each_turn_made_alike_reported_once",
    "pass_side_request_on_the_history_while_the_tool_loop_goes_on",
    "fail_tool_turn_dropped_beside_a_side_request")]


@pytest.mark.parametrize("case", SIDE_REQUEST_CASES, ids=[case.stem for case in SIDE_REQUEST_CASES])
def test_side_requests_on_the_history_without_a_key_read_as_under_it(tmp_path, case):
    """Requests that ask something after the history, which the conversation's next request
    asks no more: one conversation without its key too, with the same findings (none where
    they were made for other purposes; the first only where they were made alike)."""
    records = [orjson.loads(line) for line in case.read_bytes().splitlines()]
    for record in records:
        del record["session_id"]
    report = json_report(write_records(tmp_path / "side.jsonl", records))
    assert [session["requests"] for session in report["sessions"]] == [len(records)]
    assert code_lines(report) == expected_of(case)


def test_side_requests_of_sessions_put_to_sleep_are_told_as_awake(tmp_path):
    """Past the sessions kept awake, a session's previous request is kept slimmed: its
    model and purpose stay, so a side request (a response format of its own: even
    sessions) is still told from an exchange lost by a request made alike (odd ones)."""
    records, lost = [], []
    for step in range(3):
        for number in range(HOT_SESSIONS + 10):
            opening = [S, U(f"Plan a trip to city number {number}.")]
            reply = A(f"Day 1 in city {number}: the old town.")
            messages = [opening, opening + [reply, U("List follow-up questions as JSON.")], opening + [reply, U("And day 2?")]][step]
            record = {"session_id": f"s{number}", "request": {"model": "gpt-4o", "messages": messages},
                      "response": {"choices": [{"index": 0, "message": reply if step == 0 else A(f"Answer {step} for {number}."), "finish_reason": "stop"}]}}
            if step == 1 and number % 2 == 0:
                record["request"]["response_format"] = {"type": "json_object"}
            records.append(record)
            if step == 2 and number % 2:
                lost.append(("CTX016", len(records)))
    report = json_report(write_records(tmp_path / "many.jsonl", records))
    assert report["summary"]["sessions"] == HOT_SESSIONS + 10
    assert code_lines(report) == lost


def test_an_exchange_lost_in_place_of_the_last_question_says_how_a_side_request_would_read():
    [finding] = json_report(str(SIDE_REQUEST_CASES[1]))["findings"]
    assert "as is the message turn 2 asked (message 3 asks another in its place" in finding["message"]
    assert "made with a response format, tools or a model of its own" in finding["message"]


def test_side_requests_on_the_history_without_a_key_or_replies_stay_in_their_conversation(tmp_path):
    records = [orjson.loads(line) for line in SIDE_REQUEST_CASES[0].read_bytes().splitlines()]
    for record in records:
        del record["session_id"], record["response"]
    report = json_report(write_records(tmp_path / "side.jsonl", records))
    assert [session["requests"] for session in report["sessions"]] == [7]
    assert code_lines(report) == []


def test_an_exchange_lost_without_a_key_is_found_in_its_conversation():
    """Another question asked in place of the last one, right after a reply the
    conversation got, by a request made alike: that conversation lost the exchange (it
    read as another conversation after the same scaffold, and went unreported)."""
    opening = [S, U("Find me a flight from Paris to Rome on Friday, budget 200 EUR.")]
    first = A("AF123 leaves at 9:00.")
    asked = opening + [first, U("Is there a later one?")]
    records = [rec(1, opening, first), rec(2, asked, A("AZ55 at 18:00.")), rec(3, opening + [first, U("Book the cheaper one.")])]
    assert grouping(records) == [[1, 2, 3]]


def rec_of(line, messages, model):
    record = rec(line, messages)
    record.request["model"] = model
    return record


def test_the_same_opening_sent_by_another_agent_is_another_conversation():
    """Without a key, a first message many conversations send alike ties a request only to a
    conversation of its own agent: not to one with another prompt on another model."""
    opening = U("Plan a trip to Rome, budget 500 EUR, two nights near Termini station.")
    travel = {"role": "system", "content": "You are a travel agent. Never book red-eye flights."}
    records = [rec_of(1, [travel, opening], "gpt-4o"), rec_of(2, [opening], "glm-4.6"),
               rec_of(3, [opening, A("Which dates?"), U("The first weekend of May, please")], "glm-4.6")]
    assert grouping(records) == [[1], [2, 3]]


def test_an_opening_sent_twice_ties_no_request_that_lost_a_tool_exchange():
    """Two runs of one script open alike: the second's first request reads as a resend of the
    first's. The first run goes into a tool loop; the second run's next request (a reply, then
    a new message) is not read as the first run having stored its turn as text."""
    opening = [S, U("Plan a trip to Rome, budget 500 EUR, two nights near Termini station.")]
    loop = opening + [A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "AZ311"}]
    records = [rec(1, opening), rec(2, opening), rec(3, loop), rec(4, opening + [A("Which dates?"), U("The first weekend of May")])]
    assert grouping(records) == [[1, 2, 3], [4]]


def test_conversations_opening_with_the_same_few_shot_examples_stay_apart():
    """An app that opens every conversation with the same few-shot exchange: a new
    conversation's first request is the last one's messages up to its final user message,
    then another question. That is not an edit of that question (an edit reads as another
    text of it), so each conversation is its own session."""
    shots = [S, U("Example: how many vacation days do I get?"), A("Example answer: 25 days a year, see policy 4.2.")]
    first, second = shots + [U("Can I work from home on Fridays?")], shots + [U("What is the parental leave policy?")]
    answered = first + [A("Yes, up to three days a week.")]
    records = [rec(1, first), rec(2, second), rec(3, answered + [U("And is equipment paid?")]),
               rec(4, second + [A("Sixteen weeks."), U("Can I also work remotely?")]),
               rec(5, answered + [U("And is my equipment paid?")])]  # an edit: another text of the question
    assert grouping(records) == [[1, 3, 5], [2, 4]]


def _scaffolded_traffic(with_responses: bool) -> list[dict]:
    """Four keyless support conversations that open with the same few-shot example and ask
    alike ("Where is my order …?"), interleaved turn by turn: an order looked up, answered, a
    follow-up. C drops the tool-call turn, D its reasoning, B the answer to the results."""
    tools = [{"type": "function", "function": {"name": "lookup_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]
    opening = [{"role": "system", "content": "You are ACME's order assistant. Use lookup_order for order questions."},
               U("Example: where is order Z-0000?"), A("Example: order Z-0000 shipped on May 2 and arrives May 5.")]

    def body(messages, reply):
        record = {"model": "deepseek-reasoner", "messages": messages, "tools": tools}
        if with_responses:
            record["response"] = {"choices": [{"index": 0, "message": reply, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}]}
        return record

    def conversation(order, dropped=None):
        calls = [{"id": f"call_{order}", "type": "function", "function": {"name": "lookup_order", "arguments": f'{{"order_id": "{order}"}}'}}]
        call = A("", reasoning_content=f"Look up {order}.", tool_calls=calls)
        result = {"role": "tool", "tool_call_id": f"call_{order}", "content": '{"status": "in transit", "eta": "Thursday"}'}
        answer = A(f"Order {order} arrives Thursday.", reasoning_content="It arrives Thursday.")
        asked = opening + [U(f"Where is my order {order}? I need it before Friday.")]
        yield body(asked, call)
        stored = {key: value for key, value in call.items() if not (dropped == "reasoning" and key == "reasoning_content")}
        looked_up = asked + ([] if dropped == "call" else [stored]) + [result]
        yield body(looked_up, answer)
        yield body(looked_up + ([] if dropped == "answer" else [A(answer["content"])]) + [U(f"Please send {order} to my office.")], A("Done."))

    conversations = [conversation("A-1001"), conversation("B-2002", "answer"), conversation("C-3003", "call"), conversation("D-4004", "reasoning")]
    return [next(turns) for _ in range(3) for turns in conversations]


def test_scaffolded_conversations_asking_alike_are_apart_and_their_defects_found_once(tmp_path):
    """Without a key, a conversation's first question asked again in other words after the
    same few-shot opening is another conversation, not an edit: each is its own session,
    and each defect is found where it starts, at its own turn."""
    for with_responses, expected in ((True, [("CTX004", 8, 2), ("CTX016", 7, 2), ("CTX016", 10, 3)]),
                                     (False, [("CTX001", 7, 2), ("CTX004", 8, 2), ("CTX016", 10, 3)])):
        report = json_report(write_records(tmp_path / f"scaffold-{with_responses}.jsonl", _scaffolded_traffic(with_responses)))
        assert sorted((f["code"], f["line"], f["turn"]) for f in report["findings"]) == expected
        assert sorted(s["requests"] for s in report["sessions"]) == [3, 3, 3, 3]


def wrapped(question):
    """A question as a RAG app sends it: in retrieved passages, under its instructions."""
    return U(f"Retrieved passages:\n[doc 7] Refunds are accepted within 30 days.\n\nAnswer from the passages only.\nQuestion: {question}")


def test_a_question_sent_wrapped_and_kept_unwrapped_goes_on_in_its_conversation():
    """Without a key, an app that sends each new question wrapped (retrieved passages) and keeps
    the user's words in the history: each request goes on from the last by the reply it got,
    which follows the question kept unwrapped; with no reply logged, by the history before
    that question, once it holds more than the conversation's first request sent."""
    q1, q2, q3 = "How long do I have to return a jacket?", "Does that include sale items?", "Who pays the return shipping?"
    a1, a2 = A("You have 30 days to return it."), A("Yes, sale items are included.")
    other = [S, U("Where is my parcel ZX-9931? It was due on Monday.")]
    requests = [[S, wrapped(q1)], other, [S, U(q1), a1, wrapped(q2)], [S, U(q1), a1, U(q2), a2, wrapped(q3)]]
    replies = [a1, A("It left the depot this morning."), a2, A("We do, with the prepaid label.")]
    logged = [rec(n, messages, reply) for n, (messages, reply) in enumerate(zip(requests, replies), 1)]
    assert grouping(logged) == [[1, 3, 4], [2]]
    # no replies logged: the first request cannot be told apart (it has no history to repeat)
    assert grouping([rec(n, messages) for n, messages in enumerate(requests, 1)]) == [[1], [2], [3, 4]]


def test_a_question_kept_in_another_form_ties_no_conversation_of_a_shared_opening():
    """The tie by a question kept in another form needs what one conversation alone has: its
    reply (calls, or a text of some length) that no other conversation got, or a history past
    what its first request sent. Two conversations that got the same reply, and conversations
    that open with the same few-shot exchange, are not tied by it."""
    reply = A("The office is open from 9 to 5 on weekdays.")
    asked = [rec(1, [S, wrapped("When is the office open?")], reply), rec(2, [S, wrapped("office hours?")], reply),
             rec(3, [S, U("When is the office open?"), reply, wrapped("And on Saturdays?")])]
    assert grouping(asked) == [[1], [2], [3]]
    shots = [S, U("Example: how many vacation days do I get?"), A("Example answer: 25 days a year, see policy 4.2.")]
    # no reply logged: each conversation's first request sent the same examples before its
    # question, so the history before a question kept unwrapped is no one conversation's
    scaffolded = [rec(1, shots + [wrapped("Can I work from home on Fridays?")]), rec(2, shots + [wrapped("What is the parental leave policy?")]),
                  rec(3, shots + [U("What is the parental leave policy?"), A("Sixteen weeks."), wrapped("Can I also work remotely?")])]
    assert grouping(scaffolded) == [[1], [2], [3]]


def _booking_call(call_id, arguments):
    return A(None, tool_calls=[{"id": call_id, "type": "function", "function": {"name": "book_reservation", "arguments": arguments}}])


def test_a_call_id_the_model_returns_again_in_the_next_turn_keeps_the_conversation_together():
    """Recorded gpt-4o traffic (tau-bench's airline trajectories) returns a call id again in
    the next turn of the same conversation: the request after it holds two results of that
    id, and goes on from the first, not from the later one found by the id alone."""
    asked = [S, U("I'd like to book the same flights as my reservation for my friend."), A("Sure. What is your friend's name?"),
             U("Ivan Smith. Please pay with my certificate.")]
    priced, booked = _booking_call("call_I5bN", '{"flights": ["HAT097"], "amount": 299}'), _booking_call("call_I5bN", '{"flights": ["HAT097"], "amount": 375}')
    refused = {"role": "tool", "tool_call_id": "call_I5bN", "content": "Error: payment amount does not add up, total price is 375"}
    done = {"role": "tool", "tool_call_id": "call_I5bN", "content": '{"reservation_id": "HATHAT", "status": "booked"}'}
    records = [rec(1, asked[:2], asked[2]), rec(2, asked, priced), rec(3, asked + [priced, refused], booked),
               rec(4, asked + [priced, refused, booked, done], A("Booked: HATHAT."))]
    assert grouping(records) == [[1, 2, 3, 4]]


def test_a_call_id_another_conversation_used_ties_no_request_to_it(tmp_path):
    """The same recorded traffic reuses call ids across conversations. A request whose tool
    result answers a call id another conversation's last request ended on, with another
    text, is not that conversation cut by keep-last-N (no CTX008 for a first message "cut")."""
    change = [S, U("I'd like to change my outgoing flight to a nonstop one, reservation HXDUBJ."), _booking_call("call_Y2oi", '{"reservation_id": "HXDUBJ"}'),
              {"role": "tool", "tool_call_id": "call_Y2oi", "content": '{"reservation_id": "HXDUBJ", "cabin": "economy", "status": "changed"}'}]
    downgrade = [S, U("Please downgrade all my reservations from business to economy."),
                 A("The total savings come to $23,553. Updating the first reservation now.", tool_calls=[{"id": "call_Y2oi", "type": "function", "function": {"name": "book_reservation", "arguments": '{"reservation_id": "JG7FMM"}'}}]),
                 {"role": "tool", "tool_call_id": "call_Y2oi", "content": '{"reservation_id": "JG7FMM", "cabin": "economy", "status": "changed"}'},
                 _booking_call("call_aKut", '{"reservation_id": "2FBBAH"}'),
                 {"role": "tool", "tool_call_id": "call_aKut", "content": '{"reservation_id": "2FBBAH", "cabin": "economy", "status": "changed"}'}]
    assert grouping([rec(1, change, A("Your flight is changed.")), rec(2, downgrade)]) == [[1], [2]]
    log = write_records(tmp_path / "log.jsonl", [{"request": {"model": "gpt-4o", "messages": messages}} for messages in (change, downgrade)])
    assert code_lines(json_report(log)) == []


def test_a_summarized_request_is_not_tied_by_a_last_question_two_conversations_ended_on():
    """A request that replaced its history by a summary keeps its newest question: it goes
    on from the conversation that ended on it. When two conversations ended on the same
    question ("Yes, please proceed with the cancellation."), which one was summarized
    cannot be told, and neither is taken."""
    proceed = U("Yes, please proceed with the cancellation.")
    first = [S, U("Hi, I need to cancel reservation 60RX9E, my trip was called off."), A("Reservation 60RX9E is a basic economy trip from EWR. Shall I cancel it?"), proceed]
    second = [S, U("Hi, I'd like to cancel my flight IFOYYZ because my plans changed."), A("Reservation IFOYYZ was booked within 24 hours, so it can be cancelled. Go ahead?"), proceed]
    summary = {"role": "system", "content": "Summary so far: the user asked to cancel reservation 60RX9E; the agent checked it can be cancelled."}
    summarized = [S, summary, proceed, A(None, tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": '{"reservation_id": "60RX9E", "status": "cancelled"}'}]
    assert grouping([rec(1, first[:2]), rec(2, second[:2]), rec(3, first), rec(4, second), rec(5, summarized)]) == [[1, 3], [2, 4], [5]]
    assert grouping([rec(1, first[:2]), rec(3, first), rec(5, summarized)]) == [[1, 3, 5]]


def test_an_empty_tool_result_is_no_agreement_between_conversations():
    """Call ids drawn from a small pool (recorded gpt-4o traffic) and a `think` tool that
    returns nothing: two conversations whose last exchange is that call and its empty
    result agree on nothing by it."""
    think = A(None, tool_calls=[call("call_think_7")])
    empty = {"role": "tool", "tool_call_id": "call_think_7", "content": ""}
    asked = [S, U("I would like to proceed with the booking, but could you use my gift card?")]
    other = [S, U("Please change my flight to the morning one on May 14."), A("Flight HAT139 leaves at 8am. Change to it?"), U("Yes, change it."), think, empty]
    summary = {"role": "system", "content": "Summary so far: the user wants to book a round trip from JFK and pay by gift card."}
    going_on = [S, summary, asked[1], think, empty]
    assert grouping([rec(1, asked), rec(2, other), rec(3, going_on)]) == [[1, 3], [2]]


def test_a_turn_whose_tool_results_were_stored_otherwise_goes_on_in_its_conversation():
    """Without a key, an app that sends its tool loop right and stores the loop's results as
    user messages, or leaves them out (CTX009, CTX002 report it): the next request repeats
    the history up to the question, then carries the reply the loop ended with, and goes on
    in that conversation; another conversation that asked the same and got another reply
    does not take it."""
    asked = [S, U("Where is my order 5521? It was due on Monday.")]
    lookup, looked_up = A(None, tool_calls=[call("call_Qm2x")]), A(None, tool_calls=[call("call_Zr8p")])
    result = {"role": "tool", "tool_call_id": "call_Qm2x", "content": '{"status": "in transit", "eta": "Thursday"}'}
    missing = {"role": "tool", "tool_call_id": "call_Zr8p", "content": '{"error": "no such order"}'}
    answer = A("Order 5521 is in transit and should arrive on Thursday.")
    other = A("I can't find an order 5521 under your account; could you check the number?")
    for stored in ([lookup, U(result["content"])], [lookup]):
        records = [rec(1, asked, lookup), rec(2, asked, looked_up), rec(3, asked + [lookup, result], answer), rec(4, asked + [looked_up, missing], other),
                   rec(5, asked + stored + [answer, U("Can I change the delivery address?")])]
        assert grouping(records) == [[1, 3, 5], [2, 4]]


def test_without_replies_a_turn_whose_tool_results_were_stored_otherwise_goes_on_in_its_conversation():
    """No key and no replies logged: the request after a tool loop repeats the question, the
    loop's calls, then their results as user messages (or none), the model's reply and the
    user's next message: the same conversation, where CTX009 (or CTX002) reports the results."""
    asked = [S, U("Where is my order 5521? It was due on Monday.")]
    lookup = A(None, tool_calls=[call("call_Qm2x")])
    result = {"role": "tool", "tool_call_id": "call_Qm2x", "content": '{"status": "in transit", "eta": "Thursday"}'}
    other = [S, U("Please cancel my order 7730, I ordered the wrong size.")]
    for stored in ([lookup, U(result["content"])], [lookup]):
        records = [rec(1, asked), rec(2, other), rec(3, asked + [lookup, result]),
                   rec(4, asked + stored + [A("Order 5521 is in transit and should arrive on Thursday."), U("Can I change the delivery address?")])]
        assert grouping(records) == [[1, 3, 4], [2]]


@pytest.mark.parametrize("text, header", [
    ("Summarize the following article in one sentence:\n\nThe council met.", "Summarize the following article in one sentence"),
    ("Classify the topic of this article: The council met on Monday.", "Classify the topic of this article"),
    ("I need help planning a trip.\nI have 500 EUR.", "I need help planning a trip."),
    ("Hi,\nhow are you?", None),  # a greeting line is too short to be an instruction
    ("Summarize:\nThe council met.", None),
    ("What is the capital of France?", None),  # one line, no colon: a question, not an instruction over input
    ("Please summarize the article below:\n  ", None),  # nothing follows the instruction
])
def test_task_header_is_the_instruction_a_templated_message_opens_with(text, header):
    assert task_header(text) == header


def test_a_request_goes_on_from_the_keys_recent_conversations_or_the_one_whose_reply_it_carries(tmp_path):
    """A map over 40 articles under one trace id opens 40 conversations, none reported. A
    follow-up carrying the newest one's reply goes on from it, and so does one carrying the
    first one's, though 39 others were used since: routing looks among the key's
    ROUTED_PARTS most recently used conversations and those whose last reply the request
    carries, so a key with thousands of conversations costs no more."""
    system = {"role": "system", "content": "You are a careful news editor."}
    def task(number):
        return [system, {"role": "user", "content": f"Summarize the following article in one sentence:\n\nArticle {number} is about item {number}."}]
    def line(messages, reply):
        return orjson.dumps({"trace_id": "run", "request": {"model": "gpt-4o-mini", "messages": messages},
                             "response": {"id": "r", "choices": [{"message": A(reply), "finish_reason": "stop"}]}})
    lines = [line(task(number), f"Summary {number}.") for number in range(1, 41)]
    for number in (40, 1):
        lines.append(line(task(number) + [A(f"Summary {number}."), U(f"Shorter, please, for article {number}.")], "Short."))
    log = tmp_path / "map.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    for args in ((), ("--jobs", "2")):
        report = json_report(str(log), *args)
        sessions = {session["id"]: session["requests"] for session in report["sessions"]}
        assert len(sessions) == 40 and sessions["run#40"] == 2 and sessions["run"] == 2
        assert code_lines(report) == []


def test_a_task_given_again_under_one_key_is_a_new_run_once_the_first_went_on(tmp_path):
    """Under one session key, a sub-agent is given the same task three times. Each run
    sends what the first run's first request sent, alone, after the run before it went on
    past it: a new run (key, key#2, key#3), each run's call and result its own. A request
    sent again before its run went on is a retry of it, in the same session."""
    system = {"role": "system", "content": "You are the Researcher. Search the web and report in three bullets."}
    task = U("Find the carrier's damage claim rules")
    def line(messages, reply):
        return orjson.dumps({"session_id": "order-5521", "request": {"model": "gpt-4.1", "messages": messages},
                             "response": {"choices": [{"message": reply, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}]}})
    lines = [line([system, task], A("Retrying."))]  # answered, then sent again before the run went on: a retry
    for run in (1, 2, 3):
        search = A(None, tool_calls=[call(f"call_search_{run}")])
        found = {"role": "tool", "tool_call_id": f"call_search_{run}", "content": "Claims must be filed within 7 days."}
        lines += [line([system, task], search), line([system, task, search, found], A(f"- File within 7 days (run {run})"))]
    log = tmp_path / "runs.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    report = json_report(str(log))
    assert {session["id"]: session["requests"] for session in report["sessions"]} == {"order-5521": 3, "order-5521#2": 2, "order-5521#3": 2}
    assert code_lines(report) == []
