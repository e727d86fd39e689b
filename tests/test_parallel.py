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
