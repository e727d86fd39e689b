"""Interleaved simulated sessions with the mission's defects planted at known turns beside
legal traffic that only looks suspicious: ctxlint reports exactly the planted defects,
each where it starts, and nothing on the legal lines."""

from __future__ import annotations

import gzip
import random
from collections import Counter

import orjson
import pytest

from conftest import FIXTURES
from helpers import json_report, run_cli, write_records
from simulated_traffic import DEFECTS, STYLES, Simulator

from ctxlint.ingest.text_logs import TEXT_LINE

SEEDS = range(16)


@pytest.mark.parametrize("seed", SEEDS)
def test_findings_are_exactly_the_planted_defects(tmp_path, seed):
    simulation = Simulator(seed).run()
    report = json_report(write_records(tmp_path / f"sim-{seed}.jsonl", simulation.records))
    # counted, not only matched: a defect is one finding, not one per rule or message that sees it
    found = Counter((f["code"], f["line"]) for f in report["findings"])
    planted = {(code, p.line): p for p in simulation.expected() for code in p.codes}
    expected = Counter((code, p.line) for p in simulation.expected() for code in p.codes)
    missed = sorted(f"{code} at line {line} ({planted[code, line].defect} in {planted[code, line].session})"
                    for code, line in expected - found)
    extra = sorted(f"{f['code']} at line {f['line']} ({f['session']}): {f['message']}" for f in report["findings"]
                   if (f["code"], f["line"]) in found - expected)
    assert not missed and not extra, {"missed": missed, "extra": extra}


def test_the_simulation_plants_every_defect_beside_every_legal_look_alike():
    simulations = [Simulator(seed).run() for seed in SEEDS]
    conversations = [c for s in simulations for c in s.conversations]
    assert {p.defect for s in simulations for p in s.planted} == set(DEFECTS)
    assert all(any(c.defect is None for c in s.conversations) for s in simulations)  # every seed has legal sessions
    assert {STYLES.index(c.style) for c in conversations if c.defect is None} == set(range(len(STYLES)))
    assert all(any(getattr(c, variation) for c in conversations if c.defect is None) for variation in ("clock", "trim_middle", "summarize", "keyed", "clears_results", "reply_apart", "litellm", "interrupts"))
    assert any(c.reply_apart for c in conversations if c.defect is not None) and any(c.litellm for c in conversations if c.defect is not None)
    assert any(not c.keyed for c in conversations if c.defect is None)
    assert any(not c.prompted and c.titled for c in conversations if c.defect is None)  # a title call on the chat's own model
    assert all(sum(getattr(s, kind) for s in simulations) > 0 for kind in ("retries", "regenerations", "side_calls", "edits"))


def test_jobs_give_the_same_report_on_simulated_traffic(tmp_path):
    """Keyed and keyless sessions, side calls under a key (key#2), several key names: two
    workers split them and write the report one process writes."""
    log = write_records(tmp_path / "sim.jsonl", Simulator(3, sessions=80).run().records)
    single, double = (run_cli("check", log, "--format", "json", "--jobs", jobs) for jobs in ("1", "2"))
    assert single.exit_code == double.exit_code == 1 and single.stdout == double.stdout


def test_keyed_sessions_read_across_a_rotated_log(tmp_path):
    """The same traffic rotated into two files, the older one gzipped: a keyed session goes on
    across them, and its defects are found once, where they start, in the file they are in.
    (Keyless sessions are inferred within one file, so only keyed ones are compared.)"""
    simulation = Simulator(5).run()
    half = len(simulation.records) // 2
    older = tmp_path / "app.log.1.jsonl.gz"
    older.write_bytes(gzip.compress(b"".join(orjson.dumps(record) + b"\n" for record in simulation.records[:half])))
    newer = write_records(tmp_path / "app.log.jsonl", simulation.records[half:])
    report = json_report(str(older), newer)
    keyed = {c.id for c in simulation.conversations if c.keyed}

    def place(line: int) -> tuple[str, int]:
        return (str(older), line) if line <= half else (newer, line - half)

    found = Counter((f["code"], f["file"], f["line"]) for f in report["findings"] if f["session"].split("#")[0] in keyed)
    assert found == Counter((code, *place(p.line)) for p in simulation.expected() if p.session in keyed for code in p.codes)


ROTATIONS = {
    "numbered": ("app.jsonl.2.gz", "app.jsonl.1", "app.jsonl"),  # logrotate, Python's RotatingFileHandler
    "dated": ("app.log-20261203.gz", "app.log-20261204", "app.log"),  # logrotate's dateext
    "timed": ("app.ndjson.2026-12-04_09", "app.ndjson.2026-12-04_10", "app.ndjson"),  # TimedRotatingFileHandler
}


@pytest.mark.parametrize("naming", ROTATIONS)
def test_a_rotated_log_is_one_log_read_oldest_first(tmp_path, naming):
    """Traffic rotated into three files, the oldest gzipped. Given as a folder (whose name
    order puts the live file first) or as a shell glob expands it, the files are read
    oldest first, and keyed and keyless sessions go on across them: exactly the planted
    defects are found, once each, in the file and at the line where they start."""
    simulation = Simulator(11).run()
    third = len(simulation.records) // 3
    parts = [simulation.records[:third], simulation.records[third:2 * third], simulation.records[2 * third:]]
    folder = tmp_path / "logs"
    folder.mkdir()
    paths = [folder / name for name in ROTATIONS[naming]]
    for path, records in zip(paths, parts):
        data = b"".join(orjson.dumps(record) + b"\n" for record in records)
        path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)

    def place(line: int) -> tuple[str, int]:
        part = min((line - 1) // third, 2)
        return str(paths[part]), line - part * third

    expected = Counter((code, *place(p.line)) for p in simulation.expected() for code in p.codes)
    by_folder = json_report(str(folder))
    assert Counter((f["code"], f["file"], f["line"]) for f in by_folder["findings"]) == expected
    whole = json_report(write_records(tmp_path / "whole.jsonl", simulation.records))
    assert {key: by_folder["summary"][key] for key in ("records", "sessions")} == {key: whole["summary"][key] for key in ("records", "sessions")}
    as_globbed = json_report(*sorted(map(str, paths)))  # the live file first, as a shell lists them
    assert as_globbed["findings"] == by_folder["findings"] and as_globbed["sessions"] == by_folder["sessions"]
    assert json_report(str(folder), "--jobs", "2") == by_folder


def test_a_folder_reads_the_logs_named_log_that_hold_json_and_no_others(tmp_path):
    """A .log in a folder may be any program's log: it is read when it holds JSON (rotated
    or not), left alone when it does not; named on the command line, it is read, and its
    lines of text are counted as skipped, not reported one by one."""
    demo = (FIXTURES / "demo" / "broken-agent.jsonl").read_bytes()
    (tmp_path / "requests.log").write_bytes(demo)
    (tmp_path / "requests.log.1").write_bytes(demo)
    (tmp_path / "nginx.log").write_text("127.0.0.1 - - [04/Dec/2026:10:00:00 +0000] \"POST /v1/chat/completions\" 200\n")
    report = json_report(str(tmp_path))
    assert {f["file"] for f in report["findings"]} == {str(tmp_path / "requests.log"), str(tmp_path / "requests.log.1")}
    named = json_report(str(tmp_path / "nginx.log"))
    assert named["findings"] == [] and named["summary"]["skipped"] == {TEXT_LINE: 1}


@pytest.mark.parametrize("seed", (2, 7))
def test_a_log_written_out_of_order_is_read_in_time_order(tmp_path, seed):
    """Every record stamped with the time it was made, then written a few lines out of
    order (as threads sharing a log write it): the findings are those of the log in
    order, each at the line its record moved to."""
    simulation = Simulator(seed).run()
    stamped = [{**record, "ts": 1_764_842_400 + index} for index, record in enumerate(simulation.records)]
    shuffler = random.Random(seed)
    order = list(range(len(stamped)))
    for start in range(0, len(order), 8):
        block = order[start:start + 8]
        shuffler.shuffle(block)
        order[start:start + 8] = block
    moved_to = {original + 1: line for line, original in enumerate(order, 1)}
    report = json_report(write_records(tmp_path / "shuffled.jsonl", [stamped[index] for index in order]))
    assert {(f["code"], f["line"]) for f in report["findings"]} == {(code, moved_to[p.line]) for p in simulation.expected() for code in p.codes}


def test_a_log_exported_as_one_json_array_gives_the_same_findings(tmp_path):
    """The same traffic as one JSON array, an element per line after the opening bracket:
    every planted defect is found at the line its element starts on."""
    simulation = Simulator(4).run()
    export = tmp_path / "export.json"
    export.write_bytes(b"[\n" + b",\n".join(orjson.dumps(record) for record in simulation.records) + b"\n]\n")
    report = json_report(str(export))
    assert {(f["code"], f["line"]) for f in report["findings"]} == {(code, p.line + 1) for p in simulation.expected() for code in p.codes}
