"""--jobs N checks sessions in worker processes; the report is byte-identical to one process."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT
from helpers import run_cli

sys.path.insert(0, str(ROOT / "bench"))
from generate import generate  # noqa: E402


@pytest.fixture(scope="module")
def generated_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("bench") / "small.jsonl"
    generate(3 * 1024 * 1024, log, seed=3, concurrent=60)
    return str(log)


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_jobs_give_byte_identical_reports(generated_log, fmt):
    single = run_cli("check", generated_log, "--format", fmt, "--jobs", "1")
    double = run_cli("check", generated_log, "--format", fmt, "--jobs", "2")
    assert single.exit_code == double.exit_code == 1  # the generator plants defects
    assert single.stdout == double.stdout


def test_generated_log_carries_its_planted_defects(generated_log):
    import orjson

    report = orjson.loads(run_cli("check", generated_log, "--format", "json").stdout)
    codes = {f["code"] for f in report["findings"]}
    assert codes & {"CTX001", "CTX003", "CTX004", "CTX016"}
    assert not any(f["code"] == "CTX900" for f in report["findings"])


@pytest.mark.parametrize("owner", [0, 1])
def test_batch_lines_are_checked_whichever_worker_owns_their_session(tmp_path, owner):
    """Batch input lines are joined to their outputs in every worker and checked by the
    worker that owns their (inferred) session, whichever that is; an output line with no
    input is reported once."""
    import orjson

    from ctxlint.api import CheckOptions, run_check
    from ctxlint.ingest import Share
    from ctxlint.report.json_format import report_dict

    readers = ROOT / "fixtures" / "readers"
    for attempt in range(64):  # a file name whose inferred session falls to the wanted worker
        folder = tmp_path / f"run{attempt}"
        folder.mkdir()
        batch_input = folder / "batch_input.jsonl"
        batch_input.write_bytes((readers / "batch_input.jsonl").read_bytes())
        if Share(owner, 2).checks((run_check([str(batch_input)]).sessions[0].id, False)):
            break
    batch_output = folder / "batch_output.jsonl"
    batch_output.write_bytes((readers / "batch_output.jsonl").read_bytes() + b'{"id": "batch_req_9", "custom_id": "nobody", "response": {"status_code": 200, "body": {}}}\n')
    for paths in ([str(batch_input)], [str(batch_input), str(batch_output)]):
        one = report_dict(run_check(paths, CheckOptions()))
        two = report_dict(run_check(paths, CheckOptions(jobs=2)))
        assert one["summary"]["records"] == 2 and one["sessions"]
        assert orjson.dumps(two) == orjson.dumps(one)
    assert one["summary"]["skipped"] == {"batch output line whose input line was not given": 1}
