"""Property tests: arbitrary JSON and arbitrary conversations never crash ctxlint, every line is
accounted for, and the JSON report is byte-identical for the same input in any key order."""

from __future__ import annotations

import io

import orjson
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctxlint.api import CheckOptions, run_check
from ctxlint.ingest.jsonl import is_utf16_text
from ctxlint.report.json_format import report_dict, write_json

PROPERTY_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=25)

ids = st.sampled_from(["c1", "c2", "c3", "", None])
texts = st.none() | st.text(max_size=40) | st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "input_audio", "other"]), "text": st.text(max_size=20)}), max_size=3)
tool_calls = st.lists(st.fixed_dictionaries({
    "id": ids, "type": st.just("function"),
    "function": st.fixed_dictionaries({"name": st.sampled_from(["search", "book", None]), "arguments": st.none() | st.text(max_size=20) | st.just('{"q": 1}') | st.dictionaries(st.text(max_size=4), scalars, max_size=2)}),
}), max_size=3)
messages = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "critic", None])},
    optional={"content": texts, "tool_calls": tool_calls | json_values, "tool_call_id": ids, "reasoning_content": st.none() | st.text(max_size=20), "name": st.text(max_size=5)},
), max_size=8)
responses = st.none() | st.fixed_dictionaries({"choices": st.lists(st.fixed_dictionaries({"message": st.fixed_dictionaries({"role": st.just("assistant")}, optional={"content": texts, "tool_calls": tool_calls, "reasoning_content": st.text(max_size=10)}),
                                                                                     "finish_reason": st.sampled_from(["stop", "length", "tool_calls", None])}), max_size=1)},
                                               optional={"usage": st.fixed_dictionaries({"prompt_tokens": st.integers(min_value=0, max_value=2_000_000)}), "error": json_values})
models = st.sampled_from(["gpt-4o", "deepseek-reasoner", "glm-5.1", "kimi-k2-thinking", "doubao-seed-1-6-32k", "mystery-model", None])


@st.composite
def sessions(draw):
    """A conversation that grows turn by turn (as real agents send it), with arbitrary edits."""
    history = draw(messages)
    session = draw(st.sampled_from(["s1", "s2", None]))
    model = draw(models)
    records = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        record = {"request": {"model": model, "messages": list(history)}, "response": draw(responses)}
        if session:
            record["session_id"] = session
        if draw(st.booleans()):
            record["request"]["thinking"] = {"type": draw(st.sampled_from(["enabled", "disabled", "auto"]))}
        records.append(record)
        history = history + draw(messages) if draw(st.booleans()) else draw(messages)
    return records


def reorder(value, flip: bool):
    """The same JSON value with every object's keys in reverse (or original) order."""
    if isinstance(value, dict):
        items = list(value.items())
        return {k: reorder(v, flip) for k, v in (reversed(items) if flip else items)}
    if isinstance(value, list):
        return [reorder(v, flip) for v in value]
    return value


def lint_lines(tmp_path, lines: list[bytes]) -> tuple[str, dict]:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    report = run_check([str(log)], CheckOptions())
    out = io.StringIO()
    write_json(report, out)
    rendered = out.getvalue()
    assert rendered == orjson.dumps(report_dict(report), option=orjson.OPT_INDENT_2).decode() + "\n"  # written piecewise, the same bytes
    return rendered, orjson.loads(rendered)


def assert_accounted(document: dict, lines: list[bytes]) -> None:
    non_blank = {n for n, line in enumerate(lines, 1) if (line.removeprefix(b"\xef\xbb\xbf") if n == 1 else line).strip()}
    if non_blank and lines[min(non_blank) - 1].removeprefix(b"\xef\xbb\xbf").strip() in (b"{", b"["):
        # JSON spread over lines, read as the document it is: accounted by value, at the line each starts on
        summary = document["summary"]
        assert summary["records"] + summary["errors"] + sum(summary["skipped"].values()) >= 1, summary
        return
    as_records = {t["line"] for s in document["sessions"] for t in s["turns"]}
    as_problems = {f["line"] for f in document["findings"] if f["code"] == "CTX900"}
    missing = non_blank - as_records - as_problems
    if document["io_errors"]:
        # reading stopped (gzip magic, then garbage): the error names the file and where; or
        # the file's first bytes are a packing ctxlint does not unpack (zstd, zip): it names that
        assert all("read stopped" in error or "ctxlint reads plain, gzip, bzip2 and xz files: unpack it first" in error
                   for error in document["io_errors"])
        return
    assert len(missing) == sum(document["summary"]["skipped"].values()), (missing, document["summary"])
    assert document["summary"]["records"] == len(as_records)


def check_properties(tmp_path, values: list) -> None:
    lines = [orjson.dumps(v) for v in values]
    first, document = lint_lines(tmp_path, lines)
    assert_accounted(document, lines)
    again, _ = lint_lines(tmp_path, lines)
    assert first == again
    flipped, _ = lint_lines(tmp_path, [orjson.dumps(reorder(v, True)) for v in values])
    assert flipped == first


@PROPERTY_SETTINGS
@given(values=st.lists(json_values | st.fixed_dictionaries({"request": json_values}) | st.fixed_dictionaries({"messages": messages}), max_size=6))
def test_arbitrary_json_lines(tmp_path, values):
    check_properties(tmp_path, values)


@PROPERTY_SETTINGS
@given(conversation=sessions(), other=sessions())
def test_arbitrary_conversations(tmp_path, conversation, other):
    check_properties(tmp_path, conversation + other)


@PROPERTY_SETTINGS
@given(raw=st.lists(st.binary(max_size=60), max_size=6))
def test_arbitrary_bytes(tmp_path, raw):
    lines = [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in raw]
    assume(not is_utf16_text(b"\n".join(lines)[:4]))  # UTF-16 text is recoded: its lines are not the bytes' lines
    _, document = lint_lines(tmp_path, lines)
    assert_accounted(document, lines)


def _keywords(schema) -> set[str]:
    found = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            children = value.values() if key in ("properties", "$defs") else [value]
            for child in children:
                found |= _keywords(child) if isinstance(child, (dict, list)) else set()
    elif isinstance(schema, list):
        for item in schema:
            found |= _keywords(item)
    return found


def test_the_fast_schema_reader_knows_every_keyword_the_schema_uses():
    from ctxlint.ingest.schema import SUPPORTED_KEYWORDS, _schema

    assert _keywords(_schema()) <= SUPPORTED_KEYWORDS


@PROPERTY_SETTINGS
@given(body=st.fixed_dictionaries({"messages": messages | json_values}, optional={"model": json_values, "tools": json_values, "stream": json_values, "thinking": json_values}))
def test_the_fast_schema_reader_agrees_with_jsonschema(body):
    from ctxlint.ingest.schema import _schema, _validator, conforms

    assert conforms(body, _schema(), _schema()["$defs"]) == _validator().is_valid(body)


_NAMES = st.sampled_from(["a", "b", "c"])
_TYPES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])
# Schemas of the keywords the quick reader knows, as tools declare their parameters.
tool_schemas = st.recursive(
    st.fixed_dictionaries({}, optional={"type": _TYPES | st.lists(_TYPES, min_size=1, max_size=3), "enum": st.lists(st.text(max_size=2), min_size=1, max_size=3)}),
    lambda inner: st.fixed_dictionaries({}, optional={
        "type": _TYPES, "properties": st.dictionaries(_NAMES, inner, max_size=3), "required": st.lists(_NAMES, max_size=2, unique=True),
        "items": inner, "anyOf": st.lists(inner, min_size=1, max_size=2)}),
    max_leaves=8)
argument_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=2),
                               lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_NAMES, inner, max_size=3), max_leaves=10)


@PROPERTY_SETTINGS
@given(schema=tool_schemas, value=argument_values)
def test_the_quick_reader_agrees_with_jsonschema_on_tool_schemas(schema, value):
    import jsonschema

    from ctxlint.ingest.schema import compiled, readable_exactly

    if readable_exactly(schema) and compiled(schema, {})(value):  # CTX013 takes a quick yes as jsonschema's
        assert jsonschema.Draft202012Validator(schema).is_valid(value)


def test_identity_text_folds_exactly_the_whitespace_a_regex_would():
    import re

    from ctxlint.chat import comparable_text, excerpt

    spaces = [chr(point) for point in range(0x110000) if re.fullmatch(r"\s", chr(point)) or chr(point).isspace()]
    for space in spaces:
        assert comparable_text(f"{space}a{space}{space}<think>x{space}</think>b{space}") == "a b"
        assert excerpt(f"a{space}{space}b") == "a b"
    assert comparable_text("a\u200bb") == "a\u200bb"  # a zero-width space is not whitespace to either


# Bodies of the other APIs ctxlint normalizes (Anthropic Messages, OpenAI Responses, Gemini),
# their parts drawn from their own vocabularies and from arbitrary JSON.
_parts = st.lists(json_values | st.fixed_dictionaries({}, optional={
    "text": st.text(max_size=10) | json_values, "thought": st.booleans(), "thoughtSignature": st.text(max_size=5) | json_values,
    "functionCall": st.fixed_dictionaries({"name": st.sampled_from(["search", None]), "args": json_values}, optional={"id": ids}),
    "functionResponse": st.fixed_dictionaries({"name": st.sampled_from(["search", "other"]), "response": json_values}, optional={"id": ids})}), max_size=4)
gemini_bodies = st.fixed_dictionaries({"contents": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "model", None]), "parts": _parts | json_values}), max_size=4)},
                                      optional={"systemInstruction": json_values | st.fixed_dictionaries({"parts": _parts}), "tools": json_values, "model": st.sampled_from(["gemini-3-pro", "gemini-2.5-flash"])})
_items = st.lists(json_values | st.fixed_dictionaries({"type": st.sampled_from(["message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "web_search_call", "item_reference"])}, optional={
    "role": st.sampled_from(["user", "assistant", "developer", None]), "content": texts | json_values, "call_id": ids, "id": ids,
    "name": st.sampled_from(["search", None]), "arguments": st.text(max_size=10) | json_values, "output": json_values, "encrypted_content": st.text(max_size=5)}), max_size=5)
responses_bodies = st.fixed_dictionaries({"input": _items | st.text(max_size=10) | json_values}, optional={
    "instructions": st.text(max_size=10) | json_values, "model": st.sampled_from(["gpt-5", "o3"]), "tools": json_values, "previous_response_id": st.none() | st.text(max_size=4)})
_blocks = st.lists(json_values | st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image"])}, optional={
    "text": st.text(max_size=10), "id": ids, "tool_use_id": ids, "name": st.sampled_from(["search", None]), "input": json_values,
    "content": texts | json_values, "thinking": st.text(max_size=10), "signature": st.text(max_size=5)}), max_size=4)
anthropic_bodies = st.fixed_dictionaries({"system": st.text(max_size=10) | json_values, "messages": st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", None])}, optional={"content": st.text(max_size=10) | _blocks | json_values}), max_size=4)},
    optional={"model": st.sampled_from(["claude-sonnet-4-5", "claude-opus-4"]), "thinking": json_values, "max_tokens": json_values})


@PROPERTY_SETTINGS
@given(bodies=st.lists(st.tuples(gemini_bodies | responses_bodies | anthropic_bodies, responses | json_values, st.sampled_from(["s1", "s2", None])), max_size=5))
def test_arbitrary_bodies_of_other_apis(tmp_path, bodies):
    check_properties(tmp_path, [{"request": body, "response": reply, **({"session_id": key} if key else {})} for body, reply, key in bodies])


def _written_with_lines(value, pointer: str, lines: dict[str, int], out: list[str], indent: str) -> None:
    """`value` as indented JSON appended to `out` (a list of lines, the last one open), each
    value's pointer recorded with the line it starts on: the reference pointer_lines must match."""
    lines[pointer] = len(out)
    if isinstance(value, (dict, list)) and value:
        members = value.items() if isinstance(value, dict) else enumerate(value)
        out[-1] += "{" if isinstance(value, dict) else "["
        for position, (name, member) in enumerate(members):
            out.append(indent + "  " + (orjson.dumps(name).decode() + ": " if isinstance(value, dict) else ""))
            escaped = str(name).replace("~", "~0").replace("/", "~1")
            _written_with_lines(member, f"{pointer}/{escaped}", lines, out, indent + "  ")
            if position < len(value) - 1:
                out[-1] += ","
        out.append(indent + ("}" if isinstance(value, dict) else "]"))
    else:
        out[-1] += orjson.dumps(value).decode()


@PROPERTY_SETTINGS
@given(document=json_values)
def test_pointer_lines_finds_the_line_every_value_starts_on(document):
    """In a pretty-printed document, the line of every value, found by its JSON pointer (keys
    with slashes, tildes, quotes and escapes, numbers, empty containers), is where it was written."""
    from ctxlint.ingest.pointer_lines import pointer_lines

    expected: dict[str, int] = {}
    out = [""]
    _written_with_lines(document, "", expected, out, "")
    text = "\n".join(out)
    assert orjson.loads(text) == orjson.loads(orjson.dumps(document))
    assert pointer_lines(text, set(expected)) == expected
